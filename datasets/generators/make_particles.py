#!/usr/bin/python3
"""Clustered particles for the particle path of PHEW (issue 9): NFW haloes with NFW sub-haloes
plus a uniform background, in the periodic unit box. numpy only, deterministic from a seed.

    /usr/bin/python3 datasets/generators/make_particles.py PREFIX [--n 1000000] [--seed 9]
        [--type float32|float64] [--velocities] [--masses] [--labels]
        [--background 0.4] [--halo-min 100] [--halo-max N/20] [--slope 1.9]
        [--sub-fraction 0.15] [--sub-min 50] [--max-subs 10] [--no-shuffle] [--check]

Writes, all raw little-endian, one record per particle, in the same order:
  PREFIX-pos.raw     x,y,z interleaved (float32 or float64), in [0, 1)
  PREFIX-vel.raw     vx,vy,vz interleaved, km/s          (--velocities)
  PREFIX-mass.raw    one value per particle, all 1/N      (--masses; the mean density is 1)
  PREFIX-labels.raw  int32 pairs (host, sub): host index or -1 for the background, sub index
                     (global) or -1 for a host's smooth part                      (--labels)
  PREFIX-truth.json  the parameters, counts, every halo and sub-halo (centre, radii,
                     concentration, particle count, bulk velocity, dispersion) and the SHA-256
                     of every file written
--check PREFIX regenerates in memory, with the parameters recorded in PREFIX-truth.json (other
options are ignored), and compares with the existing files byte for byte instead of writing;
exit status 1 on any difference.

Model (all sizes in box units, masses in particles):
  * a fraction --background of the N particles is uniform in the box;
  * the rest is in host haloes whose total particle counts M (sub-haloes included) follow
    dN/dM ~ M^-slope between --halo-min and --halo-max, drawn until the halo budget is used up
    (the last draw is cut to the remainder, or given to the background if below --halo-min);
  * a host of M particles has r200 with mean density 200 times the box mean,
    M = 200 N (4 pi / 3) r200^3, and concentration c = 10 (M/halo-min)^-0.1 x 10^(0.1 g),
    g ~ N(0,1), clipped to [5, 10]; its centre is uniform in the box;
  * sub-haloes: masses from the same power law between --sub-min and M/5, drawn until
    --sub-fraction of M is reached or there are --max-subs of them (none when M x
    sub-fraction < sub-min); centre at a radius drawn from the host's NFW profile restricted to
    [0.2, 0.8] r200, isotropic; profile NFW with concentration 1.5 c_host (clipped to
    [7.5, 15]), truncated at half of the sub-halo's own r200 (tidal stripping), so it is
    several times denser than the host around it;
  * particle radii by inverse-CDF sampling of the NFW enclosed mass
    mu(x) = ln(1 + x) - x / (1 + x), x = r / r_s, r_s = r200 / c, truncated at r200 (hosts)
    or at the truncation radius (subs): u ~ U(0, mu(x_max)), mu(x) = u solved by bisection;
    isotropic directions; positions wrapped periodically;
  * velocities (own random stream: positions do not depend on --velocities): host bulk
    velocity N(0, 300 km/s) per axis; host particles get bulk + N(0, sigma) with
    sigma = V200 / sqrt(2), V200 = 10 sqrt(Omega_m) H0 r200 (Omega_m 0.3, H0 = 100 h km/s/Mpc,
    r200 in Mpc/h for a box of --box-mpc 50 Mpc/h); a sub-halo's bulk velocity is its host's
    plus N(0, sigma_host), its particles get N(0, its own V200 / sqrt(2)) on top; background
    particles N(0, 300 km/s).
  * the particles are shuffled (own stream) so that no memory order favours a kd-tree build;
    --no-shuffle keeps them background first, then host by host (smooth part, then subs).

Reproducibility: numpy's PCG64 streams (default_rng / SeedSequence) are stable across numpy
versions; the transcendental functions (log, sin, cos, sqrt) are computed in float64 and the
positions rounded once to the output type, so different libm/SIMD paths would at most flip a
last-bit rounding in rare cases. --check reports any such difference.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np

OMEGA_M = 0.3
H0 = 100.0            # km/s per Mpc/h
BACKGROUND_SIGMA = 300.0
BULK_SIGMA = 300.0


def nfw_mu(x):
    return np.log1p(x) - x / (1.0 + x)


def nfw_radii(rng, n, x_max):
    """n radii x = r / r_s of an NFW profile truncated at x_max (inverse CDF, bisection)."""
    u = rng.random(n) * nfw_mu(np.float64(x_max))
    lo = np.zeros(n)
    hi = np.full(n, float(x_max))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = nfw_mu(mid) < u
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def directions(rng, n):
    cz = rng.uniform(-1.0, 1.0, n)
    phi = rng.uniform(0.0, 2.0 * math.pi, n)
    s = np.sqrt(np.maximum(0.0, 1.0 - cz * cz))
    return np.stack([s * np.cos(phi), s * np.sin(phi), cz], axis=1)


def power_law(rng, lo, hi, slope):
    """One integer mass from dN/dM ~ M^-slope on [lo, hi]."""
    a = 1.0 - slope
    u = rng.random()
    m = (lo ** a + u * (hi ** a - lo ** a)) ** (1.0 / a)
    return int(min(hi, max(lo, round(m))))


def r200_of(m, n_total):
    return (3.0 * m / (800.0 * math.pi * n_total)) ** (1.0 / 3.0)


def v200_of(r200, box_mpc):
    return 10.0 * math.sqrt(OMEGA_M) * H0 * r200 * box_mpc


def generate(args):
    n = args.n
    seeds = np.random.SeedSequence(args.seed).spawn(4)
    rng_struct, rng_pos, rng_vel, rng_shuffle = (np.random.default_rng(s) for s in seeds)
    halo_max = args.halo_max if args.halo_max else max(args.halo_min, n // 20)

    # 1. The catalogue: host masses, sub-halo masses, centres, concentrations.
    budget = n - int(round(args.background * n))
    hosts, subs = [], []
    used = 0
    while budget - used >= args.halo_min:
        m = min(power_law(rng_struct, args.halo_min, halo_max, args.slope), budget - used)
        if m < args.halo_min:
            break
        used += m
        c = 10.0 * (m / args.halo_min) ** -0.1 * 10.0 ** (0.1 * rng_struct.standard_normal())
        c = min(10.0, max(5.0, c))
        centre = rng_struct.random(3)
        r200 = r200_of(m, n)
        h = {"id": len(hosts), "centre": centre.tolist(), "r200": r200, "c": c, "n_total": m,
             "subs": []}
        sub_total = 0
        while (m * args.sub_fraction - sub_total >= args.sub_min and len(h["subs"]) < args.max_subs
               and m // 5 >= args.sub_min):
            ms = power_law(rng_struct, args.sub_min, m // 5, args.slope)
            ms = min(ms, int(m * args.sub_fraction) - sub_total)
            if ms < args.sub_min:
                break
            sub_total += ms
            x = nfw_radii(rng_struct, 1, c)[0]
            while not 0.2 <= x / c <= 0.8:
                x = nfw_radii(rng_struct, 1, c)[0]
            d = directions(rng_struct, 1)[0]
            cs = min(15.0, max(7.5, 1.5 * c))
            r200s = r200_of(ms, n)
            s = {"id": len(subs), "host": h["id"], "centre": np.mod(centre + d * x * r200 / c, 1.0).tolist(),
                 "offset": x * r200 / c, "r200_untruncated": r200s, "r_trunc": 0.5 * r200s, "c": cs, "n": ms}
            subs.append(s)
            h["subs"].append(s["id"])
        h["n_smooth"] = m - sub_total
        hosts.append(h)
    n_halo = used
    n_bg = n - n_halo

    # 2. Positions (float64), one block per component, in catalogue order.
    blocks, host_lab, sub_lab = [], [], []
    blocks.append(rng_pos.random((n_bg, 3)))
    host_lab.append(np.full(n_bg, -1, np.int32))
    sub_lab.append(np.full(n_bg, -1, np.int32))
    for h in hosts:
        k = h["n_smooth"]
        rs = h["r200"] / h["c"]
        r = nfw_radii(rng_pos, k, h["c"]) * rs
        blocks.append(np.asarray(h["centre"]) + directions(rng_pos, k) * r[:, None])
        host_lab.append(np.full(k, h["id"], np.int32))
        sub_lab.append(np.full(k, -1, np.int32))
        for sid in h["subs"]:
            s = subs[sid]
            rs = s["r200_untruncated"] / s["c"]
            r = nfw_radii(rng_pos, s["n"], s["r_trunc"] / rs) * rs
            blocks.append(np.asarray(s["centre"]) + directions(rng_pos, s["n"]) * r[:, None])
            host_lab.append(np.full(s["n"], h["id"], np.int32))
            sub_lab.append(np.full(s["n"], sid, np.int32))
    pos = np.mod(np.concatenate(blocks), 1.0)
    labels = np.stack([np.concatenate(host_lab), np.concatenate(sub_lab)], axis=1)
    assert pos.shape == (n, 3)

    # 3. Velocities (own stream), same order.
    vel = None
    if args.velocities:
        vb = [rng_vel.normal(0.0, BACKGROUND_SIGMA, (n_bg, 3))]
        for h in hosts:
            bulk = rng_vel.normal(0.0, BULK_SIGMA, 3)
            sigma = v200_of(h["r200"], args.box_mpc) / math.sqrt(2.0)
            h["bulk_velocity"] = bulk.tolist()
            h["sigma"] = sigma
            vb.append(bulk + rng_vel.normal(0.0, sigma, (h["n_smooth"], 3)))
            for sid in h["subs"]:
                s = subs[sid]
                sbulk = bulk + rng_vel.normal(0.0, sigma, 3)
                ssig = v200_of(s["r200_untruncated"], args.box_mpc) / math.sqrt(2.0)
                s["bulk_velocity"] = sbulk.tolist()
                s["sigma"] = ssig
                vb.append(sbulk + rng_vel.normal(0.0, ssig, (s["n"], 3)))
        vel = np.concatenate(vb)

    # 4. Shuffle (own stream).
    if not args.no_shuffle:
        perm = rng_shuffle.permutation(n)
        pos, labels = pos[perm], labels[perm]
        if vel is not None:
            vel = vel[perm]

    dtype = np.dtype("<f4") if args.type == "float32" else np.dtype("<f8")
    pos_out = pos.astype(dtype)
    pos_out[pos_out >= 1.0] = 0.0   # a value just below 1 can round to 1: wrap it
    files = {"pos": pos_out.tobytes()}
    if vel is not None:
        files["vel"] = vel.astype(dtype).tobytes()
    if args.masses:
        files["mass"] = np.full(n, 1.0 / n, dtype).tobytes()
    if args.labels:
        files["labels"] = labels.astype("<i4").tobytes()

    for h in hosts:
        h["n_particles_smooth"] = h.pop("n_smooth")
    truth = {
        "generator": "datasets/generators/make_particles.py",
        "parameters": {k: getattr(args, k) for k in ("n", "seed", "type", "background", "halo_min", "slope",
                                                     "sub_fraction", "sub_min", "max_subs", "box_mpc",
                                                     "velocities", "masses", "labels", "no_shuffle")},
        "box": [1.0, 1.0, 1.0], "periodic": True,
        "layout": "little-endian %s, x,y,z interleaved per particle" % args.type,
        "counts": {"particles": n, "background": n_bg, "in_haloes": n_halo, "hosts": len(hosts),
                   "subs": len(subs), "in_subs": sum(s["n"] for s in subs)},
        "hosts": hosts, "subs": subs,
        "sha256": {"%s-%s.raw" % (os.path.basename(args.prefix), k): hashlib.sha256(v).hexdigest()
                   for k, v in files.items()},
    }
    truth["parameters"]["halo_max"] = halo_max
    return files, truth


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix")
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--type", choices=["float32", "float64"], default="float32")
    ap.add_argument("--background", type=float, default=0.4)
    ap.add_argument("--halo-min", type=int, default=100)
    ap.add_argument("--halo-max", type=int, default=0, help="default N/20")
    ap.add_argument("--slope", type=float, default=1.9)
    ap.add_argument("--sub-fraction", type=float, default=0.15)
    ap.add_argument("--sub-min", type=int, default=50)
    ap.add_argument("--max-subs", type=int, default=10)
    ap.add_argument("--box-mpc", type=float, default=50.0, help="box size in Mpc/h, for velocities only")
    ap.add_argument("--velocities", action="store_true")
    ap.add_argument("--masses", action="store_true")
    ap.add_argument("--labels", action="store_true")
    ap.add_argument("--no-shuffle", action="store_true")
    ap.add_argument("--check", action="store_true", help="compare with existing files instead of writing")
    args = ap.parse_args(argv)
    if not 0.0 <= args.background < 1.0 or args.n < 1 or args.halo_min < 2 or args.sub_min < 2:
        sys.exit("make_particles: bad parameters")

    if args.check:
        try:
            with open(args.prefix + "-truth.json") as f:
                recorded = json.load(f)["parameters"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit("make_particles: --check needs %s-truth.json: %s" % (args.prefix, e))
        for k, v in recorded.items():
            setattr(args, k, v)
    files, truth = generate(args)
    c = truth["counts"]
    print("make_particles: %d particles: %d background, %d in %d hosts, %d of them in %d sub-haloes" % (
        c["particles"], c["background"], c["in_haloes"], c["hosts"], c["in_subs"], c["subs"]))
    truth_text = json.dumps(truth, indent=1) + "\n"

    if args.check:
        bad = 0
        for k, data in files.items():
            path = "%s-%s.raw" % (args.prefix, k)
            try:
                with open(path, "rb") as f:
                    old = f.read()
            except OSError as e:
                print("check: %s: %s" % (path, e))
                bad += 1
                continue
            if old == data:
                print("check: %s identical (%d bytes)" % (path, len(data)))
                continue
            bad += 1
            if len(old) != len(data):
                print("check: %s DIFFERS: %d bytes, regenerated %d" % (path, len(old), len(data)))
            else:
                a = np.frombuffer(old, np.uint8)
                b = np.frombuffer(data, np.uint8)
                print("check: %s DIFFERS in %d bytes" % (path, int(np.count_nonzero(a != b))))
        try:
            with open(args.prefix + "-truth.json") as f:
                if json.load(f) != json.loads(truth_text):
                    print("check: %s-truth.json DIFFERS" % args.prefix)
                    bad += 1
                else:
                    print("check: %s-truth.json identical" % args.prefix)
        except (OSError, ValueError) as e:
            print("check: %s-truth.json: %s" % (args.prefix, e))
            bad += 1
        sys.exit(1 if bad else 0)

    d = os.path.dirname(args.prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    for k, data in files.items():
        with open("%s-%s.raw" % (args.prefix, k), "wb") as f:
            f.write(data)
    with open(args.prefix + "-truth.json", "w") as f:
        f.write(truth_text)
    print("make_particles: wrote %s-{%s}.raw and %s-truth.json" % (args.prefix, ",".join(files), args.prefix))


if __name__ == "__main__":
    main()
