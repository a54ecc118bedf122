#!/usr/bin/python3
"""Check datasets/sample.vti against its design, independently of the core, and optionally
against the command-line tool.

    /usr/bin/python3 datasets/check_sample.py [--phew BUILD/bin/phew] [--no-periodic]

1. sample.vti decodes to exactly the field generate_sample.py makes (the file is up to date);
2. the numpy re-implementation of PHEW (phew_numpy.py) with the recommended parameters finds
   exactly the designed clumps (one per designed leaf, peak within one cell of its centre), the
   designed haloes and their dendrogram depths (H1 depth 3), and removes the noise peaks;
3. with --phew, runs the CLI on the same data and compares counts, every clump's peak, halo
   membership, the per-cell PeakPatchId / clump / halo labels and the dendrogram's levels with
   the numpy results.
Exits non-zero on any mismatch.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_sample as G  # noqa: E402
import phew_numpy as P  # noqa: E402
import vti_to_raw  # noqa: E402

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vti", default=os.path.join(HERE, "sample.vti"))
    ap.add_argument("--phew", help="path of the phew command-line tool")
    ap.add_argument("--no-periodic", action="store_true",
                    help="treat the box as not periodic (H3 then splits into two haloes)")
    args = ap.parse_args(argv)
    periodic = not args.no_periodic
    n = G.N

    rho = G.make_field()
    values, spacing, origin, assoc, name = vti_to_raw.read_vti(args.vti)
    check(assoc == "CellData" and name == "density" and values.dtype == np.dtype("<f4"),
          "sample.vti holds a Float32 cell array 'density'")
    check(values.shape == rho.shape and np.array_equal(values, rho),
          "sample.vti equals the generator's field bit for bit")
    check(np.allclose(spacing, [G.BOX / n] * 3) and np.allclose(origin, [0, 0, 0]),
          f"spacing {spacing}, origin {origin}")
    check(bool(np.all(np.isfinite(rho)) and rho.min() > 0), "all densities positive and finite")

    # ---- the numpy re-implementation against the design ----
    r = P.find_clumps(rho, G.THRESHOLD, G.RELEVANCE, G.SADDLE, periodic=(periodic,) * 3)
    leaves = G.leaf_cells()
    leaf_halo = {name: halo for name, halo, c, a, rc in G.LEAVES}

    def leaf_of(p):
        x, y, z = p % n, (p // n) % n, p // (n * n)
        for name, c in leaves.items():
            d = np.array([x, y, z]) - np.array(c)
            if periodic:
                d = d - n * np.round(d / n)
            if np.abs(d).max() <= 1:
                return name
        return None

    clump_leaf = {c: leaf_of(c) for c in r["clumps"]}
    check(sorted(l for l in clump_leaf.values() if l) == sorted(leaves)
          and None not in clump_leaf.values(),
          f"numpy: {len(r['clumps'])} clumps, one per designed leaf ({len(leaves)})")
    n_peaks = len(r["peaks"])
    check(n_peaks >= 5 * len(r["clumps"]),
          f"numpy: {n_peaks} peaks >> {len(r['clumps'])} clumps (noise removal levels "
          f"{r['noise_levels']}, {len(r['discarded'])} isolated noise peaks discarded)")
    # haloes: group the clumps' leaves by halo and compare with the design
    got = {}
    for c, h in r["halo_of_clump"].items():
        got.setdefault(h, set()).add(clump_leaf[c])
    designed = {}
    for name, halo in leaf_halo.items():
        designed.setdefault(halo, set()).add(name)
    if not periodic:  # d1 and d2 sit on both sides of the x boundary
        designed["H3"] = {"d1"}
        designed["H3b"] = {"d2"}
    check(sorted(map(sorted, got.values())) == sorted(map(sorted, designed.values())),
          f"numpy: {len(got)} haloes with the designed membership")
    depth_want = dict(G.HALOES)
    if not periodic:
        depth_want["H3"], depth_want["H3b"] = 0, 0
    for h, members in got.items():
        hname = next(k for k, v in designed.items() if v == members) if members in designed.values() else "?"
        check(r["halo_depth"][h] == depth_want.get(hname),
              f"numpy: halo {hname} {sorted(members)} depth {r['halo_depth'][h]} "
              f"(designed {depth_want.get(hname)})")
    check(r["depth"] == 3, f"numpy: hierarchy depth {r['depth']} (Level of the deepest node)")

    # ---- the command-line tool against the numpy results ----
    if args.phew:
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "sample.raw")
            rho.astype("<f4").tofile(raw)
            prefix = os.path.join(tmp, "out")
            cmd = [args.phew, "--input", raw, "--dims", str(n), str(n), str(n), "--type", "float32",
                   "--threshold", str(G.THRESHOLD), "--relevance", str(G.RELEVANCE),
                   "--saddle", str(G.SADDLE), "--spacing"] + [repr(s) for s in spacing] + \
                  ["--origin", "0", "0", "0", "--output", prefix, "--verbose"]
            if periodic:
                cmd.append("--periodic")
            print("running:", " ".join(cmd))
            p = subprocess.run(cmd, capture_output=True, text=True)
            print(p.stdout + p.stderr)
            check(p.returncode == 0, "phew exits with 0")
            if p.returncode != 0:
                return 1
            clumps = read_csv(prefix + "-clumps.csv")
            haloes = read_csv(prefix + "-haloes.csv")
            nodes = read_csv(prefix + "-dendrogram.csv")
            check(f"peaks {n_peaks}," in p.stdout, f"phew reports {n_peaks} peaks")
            check(len(clumps) == len(r["clumps"]), f"phew: {len(clumps)} clumps")
            check(len(haloes) == len(r["haloes"]), f"phew: {len(haloes)} haloes")
            check([int(c["PeakId"]) for c in clumps] == list(r["clumps"]),
                  "phew: clump peaks and order (decreasing peak density) agree")
            check([int(h["PeakId"]) for h in haloes] == list(r["haloes"]),
                  "phew: halo peaks and order agree")
            halo_peak = {int(h["HaloId"]): int(h["PeakId"]) for h in haloes}
            check(all(halo_peak[int(c["HaloId"])] == r["halo_of_clump"][int(c["PeakId"])]
                      for c in clumps), "phew: every clump is in the same halo")
            depth = {int(h["PeakId"]): int(h["Level"]) for h in haloes}
            check(all(depth[h] == r["halo_depth"][h] for h in r["haloes"]),
                  "phew: halo depths (Level) agree")
            max_level = max(int(x["Level"]) for x in nodes)
            check(max_level == r["depth"] == 3, f"phew: dendrogram Level reaches {max_level}")
            patch = np.fromfile(prefix + "-patch.raw", dtype="<i8").reshape(rho.shape)
            check(np.array_equal(patch, r["label"]), "phew: PeakPatchId of every cell agrees")
            cl = np.fromfile(prefix + "-clump.raw", dtype="<i8").reshape(rho.shape)
            clump_peak = np.array([int(c["PeakId"]) for c in clumps] + [-1], dtype=np.int64)
            check(np.array_equal(clump_peak[cl], r["clump_label"]),
                  "phew: ClumpId of every cell agrees")
            ha = np.fromfile(prefix + "-halo.raw", dtype="<i8").reshape(rho.shape)
            hp = np.array([halo_peak[i] for i in range(len(haloes))] + [-1], dtype=np.int64)
            g = r["halo_of_clump"]
            want = np.vectorize(lambda c: g.get(c, -1) if c >= 0 else -1, otypes=[np.int64])(
                r["clump_label"])
            check(np.array_equal(hp[ha], want), "phew: HaloId of every cell agrees")
            counts = [int(c["NumberOfCells"]) for c in clumps]
            want_counts = [int((r["clump_label"] == c).sum()) for c in r["clumps"]]
            check(counts == want_counts, "phew: clump cell counts agree")
            mass = [float(c["Mass"]) for c in clumps]
            vol = float(np.prod(spacing))
            want_mass = [float(rho[r["clump_label"] == c].astype(np.float64).sum()) * vol
                         for c in r["clumps"]]
            check(np.allclose(mass, want_mass, rtol=1e-9), "phew: clump masses agree")
            # centres of mass, periodic-aware: cell positions taken relative to the peak
            # (nearest image), then wrapped into the box
            zz, yy, xx = np.indices(rho.shape)
            cells = np.stack([xx, yy, zz], axis=-1).astype(np.float64)

            def com(mask, peak):
                pk = np.array([peak % n, (peak // n) % n, peak // (n * n)], dtype=np.float64)
                d = cells[mask] - pk
                if periodic:
                    d -= n * np.round(d / n)
                w = rho[mask].astype(np.float64)
                c = pk + (d * w[:, None]).sum(axis=0) / w.sum() + 0.5
                if periodic:
                    c %= n
                return c * np.array(spacing)
            ok = True
            for c in clumps:
                want_c = com(r["clump_label"] == int(c["PeakId"]), int(c["PeakId"]))
                got_c = [float(c["CenterOfMass" + a]) for a in "XYZ"]
                ok &= np.allclose(got_c, want_c, rtol=0, atol=1e-9)
            for h in haloes:
                want_c = com(want == int(h["PeakId"]), int(h["PeakId"]))
                got_c = [float(h["CenterOfMass" + a]) for a in "XYZ"]
                ok &= np.allclose(got_c, want_c, rtol=0, atol=1e-9)
            check(ok, "phew: clump and halo centres of mass agree (periodic-aware)")

    print("all checks passed" if not failures else f"{len(failures)} check(s) FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
