"""--amr-particles: PHEW on a RAMSES output's AMR cells, then the particles take the clump of the
leaf cell that holds them (RAMSES's rule) and are unbound in the clumps' hierarchy. On the shared
DM run (datasets/ramses_cosmo32) with hydro files written for its AMR (a gas density following
the dark matter: 1 + the DM particles within 0.01 of the cell centre), against an independent
reading of the tool's own per-cell outputs (PREFIX-boxes.csv, -clump.raw: each particle's leaf
cell found in numpy), run through --groups: the same bound labels and physics columns, bit for
bit; and the same bytes on several ranks."""
import csv
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "readers"))
import cli_runs  # noqa: E402
import ramses_amr_reference as amr_ref  # noqa: E402
from reference_readers import ramses_particles  # noqa: E402


def write_gas(folder):
    """Hydro files whose density is 1 + the DM particles within 0.01 (periodic unit box)."""
    from scipy.spatial import cKDTree
    parts, _ = ramses_particles(folder)
    tree = cKDTree(np.mod(np.stack([parts[f"position_{c}"] for c in "xyz"], axis=1), 1.0), boxsize=1.0)

    def value(variable, level, x, y, z):
        if variable != 0:
            return amr_ref.known_value(variable, level, x, y, z)
        centres = np.mod(np.stack([x, y, z], axis=1), 1.0)
        return 1.0 + np.array([len(c) for c in tree.query_ball_point(centres, 0.01)], dtype=np.float64)
    amr_ref.write_hydro(folder, True, value)
    return parts


def cell_labels(prefix, parts, levelmin):
    """Each particle's clump from the tool's per-cell files: the finest box holding its cell."""
    boxes = list(csv.DictReader(open(prefix + "-boxes.csv")))
    clump = np.fromfile(prefix + "-clump.raw", dtype="<i8")
    x = np.mod(np.stack([parts[f"position_{c}"] for c in "xyz"], axis=1), 1.0)
    label = np.full(len(x), -1, dtype=np.int64)
    done = np.zeros(len(x), dtype=bool)
    for level in sorted({int(b["Level"]) for b in boxes}, reverse=True):
        cell = np.floor(x * 2.0 ** (levelmin + level)).astype(np.int64)
        for b in (b for b in boxes if int(b["Level"]) == level):
            lo = np.array([int(b["Lo" + c]) for c in "XYZ"])
            hi = np.array([int(b["Hi" + c]) for c in "XYZ"])
            inside = ~done & np.all((cell >= lo) & (cell <= hi), axis=1)
            n = hi - lo + 1
            c = cell[inside] - lo
            label[inside] = clump[int(b["FirstCell"]) + c[:, 0] + n[0] * (c[:, 1] + n[1] * c[:, 2])]
            done |= inside
    return label


def main():
    ap = cli_runs.parser(__doc__)
    args = ap.parse_args()
    check = cli_runs.Checker("cli_amr_particles")
    runner = cli_runs.Runner(args)
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    folder = os.path.join(work, "output_00003")
    shutil.copytree(os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003"), folder)
    parts = write_gas(folder)
    base = ["--snapshot", folder, "--units", "astro", "--amr-variable", "density", "--amr-particles", "--relevance", "3"]
    prefix = os.path.join(work, "amr")
    out = runner.serial(base + ["--output", prefix])
    check.check(out.code == 0, f"--amr-particles ran ({out.summary()})")
    info = amr_ref.ramses_info(folder)
    labels = cell_labels(prefix, parts, int(info["levelmin"]))
    labels.astype("<i8").tofile(os.path.join(work, "labels.raw"))
    clumps = list(csv.DictReader(open(prefix + "-clumps.csv")))
    with open(os.path.join(work, "parents.csv"), "w") as f:
        f.write("Id,ParentId\n" + "".join(f"{r['ClumpId']},{r['ParentId']}\n" for r in clumps))
    bound = np.fromfile(prefix + "-bound.raw", dtype="<i8")
    labelled = np.count_nonzero(labels >= 0)
    kept = np.count_nonzero((bound >= 0) & (labels >= 0))
    check.check(len(clumps) >= 5 and labelled > 1000 and kept > 0.5 * labelled,
                f"{len(clumps)} clumps on the gas; {labelled} particles in clump cells, {kept} of them bound")

    given = os.path.join(work, "given")
    out = runner.serial(["--snapshot", folder, "--units", "astro", "--groups", os.path.join(work, "labels.raw"),
                         "--parents", os.path.join(work, "parents.csv"), "--output", given])
    check.check(out.code == 0, f"the same grouping through --groups ({out.summary()})")
    same = np.array_equal(np.fromfile(given + "-given-bound.raw", dtype="<i8"), bound)
    check.check(same, "the bound labels equal those of the cell labels read back in numpy, through --groups")
    physics = list(csv.DictReader(open(given + "-given-physics.csv")))
    differ = [(r["StructureId"], k) for r, c in zip(physics, clumps) for k in r if k in c and k != "ParentId" and
              r[k] != c[k]]
    check.check(len(physics) == len(clumps) and not differ,
                f"every physics column of the {len(clumps)} clumps equals the --groups run's ({differ[:3]})")

    for n in args.ranks:
        p = os.path.join(work, f"amr_np{n}")
        out = runner.mpi(n, base + ["--output", p])
        ok = out.code == 0 and all(open(prefix + s, "rb").read() == open(p + s, "rb").read()
                                   for s in ("-bound.raw", "-clumps.csv", "-clump.raw"))
        check.check(ok, f"{n} ranks: the same bound labels, clumps (with the physics) and cells ({out.summary()})")
    bad = runner.serial(["--snapshot", folder, "--amr-variable", "density", "--amr-particles", "--output", prefix])
    check.check(bad.code == 1 and "--units astro" in bad.err, f"code units without G: refused ({bad.summary()})")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
