"""phew's spherical unbinding (RAMSES's method) against RAMSES's own unbinding on the shared run
(datasets/ramses_cosmo32/output_00003, a copy of ../shared/data/ramses/cosmo32_dm/output_00003:
PHEW with unbinding on, 2 MPI tasks).

RAMSES does not write the clumps' particles before unbinding, so the grouping is rebuilt the way
RAMSES builds it: the particles' cloud-in-cell density on the finest level (128^3, periodic), in
units of the mean, PHEW with RAMSES's parameters (threshold 80, relevance 3, saddle 200, mass
threshold 10 particles), every particle labelled with the clump of the cell that holds it; then
`phew --potential spherical` with RAMSES's settings (50 log bins from its finest cell 1/128, the
saddle cut, haloes keep their particles, G = 3/(8 pi) Omega_m a in code units, the peaks as
centres). The clumps are matched to RAMSES's by their peaks (within two finest cells), and the
report says how many particles get the same bound/unbound decision and how the bound masses
compare.

    /usr/bin/python3 tests/parallel/compare_ramses_unbinding.py --cli build/bin/phew --work-dir /tmp/ramses_unbind \
        [--output datasets/ramses_cosmo32/output_00003] [--check]
"""
import argparse
import os
import subprocess
import sys

import numpy as np

N_GRID = 128


def records(path):
    data = open(path, "rb").read()
    out, offset = [], 0
    while offset < len(data):
        n = int(np.frombuffer(data, np.int32, 1, offset)[0])
        out.append(data[offset + 4:offset + 4 + n])
        offset += 8 + n
    return out


def read_particles(output):
    """Positions (box units), velocities, masses and ids in the order of the part files."""
    nout = output.rstrip("/")[-5:]
    xs, vs, ms, ids, labels = [], [], [], [], []
    cpu = 1
    while os.path.exists(f"{output}/part_{nout}.out{cpu:05d}"):
        r = records(f"{output}/part_{nout}.out{cpu:05d}")
        xs.append(np.array([np.frombuffer(r[8 + i], np.float64) for i in range(3)]).T)
        vs.append(np.array([np.frombuffer(r[11 + i], np.float64) for i in range(3)]).T)
        ms.append(np.frombuffer(r[14], np.float64))
        ids.append(np.frombuffer(r[15], np.int32).astype(np.int64))
        labels.append(np.frombuffer(records(f"{output}/unbinding_{nout}.out{cpu:05d}")[0], np.int32))
        cpu += 1
    return (np.concatenate(xs), np.concatenate(vs), np.concatenate(ms), np.concatenate(ids),
            np.concatenate(labels).astype(np.int64))


def read_clumps(output):
    """RAMSES's clump rows (index, lev, parent, ncell, peak x y z, rho-, rho+, rho_av, mass, relevance)."""
    nout = output.rstrip("/")[-5:]
    rows, cpu = [], 1
    while os.path.exists(f"{output}/clump_{nout}.txt{cpu:05d}"):
        rows += [line.split() for line in open(f"{output}/clump_{nout}.txt{cpu:05d}").read().splitlines()[1:]
                 if line.strip()]
        cpu += 1
    return np.array(rows, float).reshape(-1, 12)


def info_value(output, key):
    nout = output.rstrip("/")[-5:]
    for line in open(f"{output}/info_{nout}.txt"):
        if line.split("=")[0].strip() == key:
            return float(line.split("=")[1])
    raise KeyError(key)


def cic_density(x, m, n):
    """Cloud-in-cell density on a periodic n^3 grid of the unit box, in units of the mean."""
    rho = np.zeros((n, n, n))
    g = x * n - 0.5
    i0 = np.floor(g).astype(np.int64)
    f = g - i0
    for dx in (0, 1):
        wx = f[:, 0] if dx else 1 - f[:, 0]
        for dy in (0, 1):
            wy = f[:, 1] if dy else 1 - f[:, 1]
            for dz in (0, 1):
                wz = f[:, 2] if dz else 1 - f[:, 2]
                np.add.at(rho, ((i0[:, 2] + dz) % n, (i0[:, 1] + dy) % n, (i0[:, 0] + dx) % n), m * wx * wy * wz)
    return rho * n ** 3 / m.sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                     "datasets", "ramses_cosmo32", "output_00003"))
    ap.add_argument("--check", action="store_true", help="exit 1 unless the agreement reaches the thresholds")
    a = ap.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    x, v, m, ids, ramses = read_particles(a.output)
    clumps = read_clumps(a.output)
    aexp, omega_m = info_value(a.output, "aexp"), info_value(a.output, "omega_m")
    G = 3.0 / (8.0 * np.float32(3.1415926).item()) * omega_m * aexp  # RAMSES's GravConst, its single pi

    # RAMSES's grouping before unbinding, rebuilt: PHEW on the CIC density, particles by their cell
    rho = cic_density(x, m, N_GRID)
    grid = os.path.join(a.work_dir, "density.f64")
    rho.astype("<f8").tofile(grid)
    prefix = os.path.join(a.work_dir, "grid")
    spacing = str(1.0 / N_GRID)
    subprocess.run([a.cli, "--input", grid, "--dims", *[str(N_GRID)] * 3, "--type", "float64", "--periodic",
                    "--spacing", spacing, spacing, spacing, "--threshold", "80", "--relevance", "3", "--saddle", "200",
                    "--mass-threshold", str(10.0 / len(m)), "--output", prefix], check=True)
    cell_clump = np.fromfile(prefix + "-clump.raw", dtype="<i8").reshape(N_GRID, N_GRID, N_GRID)
    cell = np.floor(x * N_GRID).astype(np.int64) % N_GRID
    label = cell_clump[cell[:, 2], cell[:, 1], cell[:, 0]]
    table = np.genfromtxt(prefix + "-clumps.csv", delimiter=",", names=True)
    table = np.atleast_1d(table)
    groups = os.path.join(a.work_dir, "groups.i64")
    label.astype("<i8").tofile(groups)
    parents = os.path.join(a.work_dir, "parents.csv")
    with open(parents, "w") as f:
        f.write("Id,ParentId,CenterX,CenterY,CenterZ\n")
        for row in table:
            f.write(f"{int(row['ClumpId'])},{int(row['ParentId'])},{row['PeakX']!r},{row['PeakY']!r},{row['PeakZ']!r}\n")
    physics = os.path.join(a.work_dir, "physics")
    subprocess.run([a.cli, "--snapshot", a.output, "--groups", groups, "--parents", parents, "--potential",
                    "spherical", "--gravitational-constant", repr(G), "--profile-r-min", spacing, "--keep-top-level",
                    "--output", physics], check=True)
    bound = np.fromfile(physics + "-given-bound.raw", dtype="<i8")
    rows = np.atleast_1d(np.genfromtxt(physics + "-given-physics.csv", delimiter=",", names=True))

    # match phew's clumps to RAMSES's by their peaks (nearest image, within two finest cells)
    match = {}
    peaks = np.array([[row["PeakX"], row["PeakY"], row["PeakZ"]] for row in table])
    for c in clumps:
        d = peaks - c[4:7]
        d -= np.round(d)
        r = np.sqrt((d ** 2).sum(axis=1))
        k = int(np.argmin(r))
        if r[k] < 2.0 / N_GRID:
            match[int(c[0])] = k
    print(f"RAMSES: {len(clumps)} clumps with particles listed; phew on the CIC grid: {len(table)} clumps; "
          f"matched by peak: {len(match)}")
    # decisions: a particle of a matched pair is 'bound' in RAMSES when its final id is that
    # clump, in phew when its bound label is the matched clump
    same = total = 0
    lines = []
    for rid, k in sorted(match.items()):
        mine = label == k
        in_ramses = ramses == rid
        both = mine | in_ramses
        dec_phew = bound[both] == k
        dec_ramses = ramses[both] == rid
        same += int((dec_phew == dec_ramses).sum())
        total += int(both.sum())
        lines.append((rid, k, int(in_ramses.sum()), int((bound == k).sum()), int(mine.sum())))
    print(f"particles of matched clumps with the same decision (bound to the clump or not): {same} of {total} "
          f"({100.0 * same / max(total, 1):.2f}%)")
    print("RAMSES id, phew id, RAMSES bound (exclusive), phew bound (exclusive), phew members as given")
    for line in lines:
        print("%8d %8d %8d %8d %8d" % line)
    sub = [(rid, k) for rid, k in match.items() if clumps[clumps[:, 0] == rid][0][2] != rid]
    identical = 0
    for rid, k in sub:  # the unbinding itself: the same particles kept, by id
        kept_ramses, kept_phew = set(ids[ramses == rid]), set(ids[bound == k])
        given = int((label == k).sum())
        print(f"subclump {rid} (phew {k}): {given} candidates, RAMSES keeps {len(kept_ramses)}, phew keeps "
              f"{len(kept_phew)}, the same particles: {kept_ramses == kept_phew}")
        identical += kept_ramses == kept_phew
    if a.check:
        ok = len(match) >= 0.8 * len(clumps) and same >= 0.99 * total and identical == len(sub) and len(sub) > 0
        print("check:", "passed" if ok else "FAILED")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
