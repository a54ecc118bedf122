"""phew link and the most-bound particles (docs/merger-trees.md), against the independent
re-implementations of link_reference.py and physics_reference.py: four steps of haloes built so
that one merges into another and comes out again two steps later, one vanishes for a step and
one is renamed every step; each step's catalogue written by the tool (--groups, --hdf5). Checks:
every structure's MostBound tracers are its particles of lowest energy (the reference's), every
row and column of the tree equals the reference, the known answers (the orphans and the
structures found again), and the same bytes on several ranks."""
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import link_reference as lref  # noqa: E402
import physics_reference as ref  # noqa: E402

BOX = 100.0
MOST_BOUND = 40
# per halo: size, spread; per step: its label (-1: not a structure) and centre
HALOES = {"A": (300, 0.6), "B": (120, 0.4), "C": (90, 0.4), "D": (100, 0.5)}
STEPS = [
    {"A": (0, (30, 50, 50)), "B": (1, (60, 50, 50)), "C": (2, (50, 20, 80)), "D": (3, (80, 80, 20))},
    {"A": (1, (32, 50, 50)), "B": (1, (33.2, 50, 50)), "C": (-1, (50, 21, 80)), "D": (0, (80, 80, 21))},
    {"A": (0, (34, 50, 50)), "B": (0, (35.2, 50.3, 50)), "C": (2, (50, 22, 80)), "D": (1, (80, 80, 22))},
    {"A": (0, (36, 50, 50)), "B": (3, (46, 50, 50)), "C": (1, (50, 23, 80)), "D": (2, (80, 80, 23))},
]


def make_steps(work):
    """The input files of each step and the particles, the same ids in every step."""
    rng = np.random.default_rng(11)
    offsets, velocities, halo_of = [], [], []
    for name, (n, spread) in HALOES.items():
        offsets.append(rng.normal(scale=spread, size=(n, 3)))
        v = rng.normal(scale=2.0, size=(n, 3))
        v[:3] *= 60.0  # a few fast particles that no halo holds
        velocities.append(v)
        halo_of += [name] * n
    offsets, velocities, halo_of = np.concatenate(offsets), np.concatenate(velocities), np.array(halo_of)
    n = len(halo_of)
    masses = 1.0 + 0.5 * (np.arange(n) % 3)  # phew link counts particles; the physics weighs them
    ids = rng.permutation(n).astype(np.int64) * 7 + 3
    steps = []
    for s, layout in enumerate(STEPS):
        pos = np.empty((n, 3))
        label = np.empty(n, dtype=np.int64)
        for name, (lab, centre) in layout.items():
            k = halo_of == name
            pos[k] = np.mod(offsets[k] + np.array(centre, dtype=float), BOX)
            label[k] = lab
        n_structures = max(lab for lab, _ in layout.values()) + 1
        d = os.path.join(work, f"step{s}")
        os.makedirs(d, exist_ok=True)
        files = {"--points": pos, "--velocities": velocities, "--ids": ids, "--groups": label, "--masses": masses}
        for option, array in files.items():
            array.astype("<i8" if array.dtype == np.int64 else "<f8").tofile(os.path.join(d, option[2:] + ".raw"))
        with open(os.path.join(d, "parents.csv"), "w") as f:
            f.write("Id,ParentId\n" + "".join(f"{k},-1\n" for k in range(n_structures)))
        steps.append(dict(pos=pos, label=label, n_structures=n_structures, dir=d))
    return steps, velocities, ids, masses


def step_argv(step, catalogue, prefix):
    d = step["dir"]
    return ["--points", os.path.join(d, "points.raw"), "--velocities", os.path.join(d, "velocities.raw"),
            "--ids", os.path.join(d, "ids.raw"), "--groups", os.path.join(d, "groups.raw"),
            "--masses", os.path.join(d, "masses.raw"),
            "--parents", os.path.join(d, "parents.csv"), "--type", "float64", "--box", "100", "100", "100",
            "--periodic", "--gravitational-constant", "1", "--direct-max", "100000", "--most-bound",
            str(MOST_BOUND), "--hdf5", catalogue, "--output", prefix]


def read_catalogue(path, step):
    """(labels: id -> own structure, tracers: Entry list with masses in particles, as phew link
    counts them; the MostBound masses) as the file holds them."""
    import h5py
    with h5py.File(path, "r") as f:
        t = f[f.attrs["membership_table"]]
        ids = t["BoundParticleIds"][()]
        labels, count = {}, {}
        for s, off, n in zip(t["StructureId"][()], t["BoundOffset"][()], t["NumberOfBoundParticles"][()]):
            count[int(s)] = int(n)
            for i in ids[off:off + n]:
                labels[int(i)] = int(s)
        mb = t["MostBound"]
        tracers = [lref.Entry(int(s), step, 0, float(count[int(s)]), [int(i) for i in mb["ParticleIds"][o:o + c]])
                   for s, o, c in zip(mb["StructureId"][()], mb["Offset"][()], mb["Count"][()])]
        masses = dict(zip((int(s) for s in mb["StructureId"][()]), mb["Mass"][()]))
    return labels, tracers, masses


def check_tracers(check, step, velocities, ids, masses, tracers, tracer_masses, s):
    """Each structure's tracers: its own bound particles of lowest reference energy; its mass the
    reference's exclusive bound mass."""
    energies = np.full(len(ids), np.nan)
    bound, rows = ref.physics(step["pos"], velocities, masses, ids, step["label"],
                              [-1] * step["n_structures"], [BOX] * 3, [1] * 3, [0.0] * 3, ref.Units(None, 1.0),
                              BOX / len(ids) ** (1.0 / 3.0) / 50.0, energies=energies)
    index = {int(i): k for k, i in enumerate(ids)}
    bad = []
    for x in tracers:
        own = np.nonzero(bound == x.id)[0]
        want = np.sort(energies[own])[:MOST_BOUND]
        got = energies[[index[i] for i in x.tracers]]
        if len(got) != len(want) or not np.allclose(got, want, rtol=1e-9, atol=0.0):
            bad.append(x.id)
        if x.mass != len(own) or abs(tracer_masses[x.id] - masses[own].sum()) > 1e-12 * masses[own].sum():
            bad.append(f"{x.id} mass {tracer_masses[x.id]} != {masses[own].sum()} or {x.mass} != {len(own)}")
    check.check(not bad and len(tracers) == len(set(bound[bound >= 0])),
                f"step {s}: {len(tracers)} structures' MostBound tracers are their {MOST_BOUND} particles of lowest "
                f"reference energy (wrong: {bad})")


def compare_tree(check, rows, expected, what):
    bad = []
    if len(rows) != len(expected):
        bad.append(f"{len(rows)} rows, expected {len(expected)}")
    for got, want in zip(rows, expected):
        for name, value in want.items():
            g = float(got[name])
            if not lref.same(g, float(value)):
                bad.append(f"step {want['Step']} {want['ProgenitorId']}->{want['DescendantId']} {name} {g} != {value}")
    check.check(not bad, f"{what}: {len(rows)} rows, every column equal to the reference "
                         f"({len(bad)} differ{': ' + '; '.join(bad[:3]) if bad else ''})")


def main():
    ap = cli_runs.parser(__doc__)
    args = ap.parse_args()
    check = cli_runs.Checker("cli_link")
    runner = cli_runs.Runner(args)
    work = args.work_dir
    os.makedirs(work, exist_ok=True)
    steps, velocities, ids, masses = make_steps(work)
    catalogues, labels, tracers = [], [], []
    for s, step in enumerate(steps):
        cat = os.path.join(work, f"cat{s}.h5")
        out = runner.serial(step_argv(step, cat, os.path.join(work, f"run{s}")))
        check.check(out.code == 0, f"step {s}: the physics with --hdf5 ran ({out.summary()})")
        catalogues.append(cat)
        lab, tr, tm = read_catalogue(cat, s)
        labels.append(lab)
        tracers.append(tr)
        check_tracers(check, step, velocities, ids, masses, tr, tm, s)
    # the catalogue's tracers do not depend on the ranks either
    many = max(args.ranks)
    cat_many = os.path.join(work, "cat0_many.h5")
    out = runner.mpi(many, step_argv(steps[0], cat_many, os.path.join(work, "run0_many")))
    _, tr_many, _ = read_catalogue(cat_many, 0)
    check.check(out.code == 0 and [(x.id, x.mass, x.tracers) for x in tr_many] ==
                [(x.id, x.mass, x.tracers) for x in tracers[0]], f"step 0 on {many} ranks: the same MostBound tracers")

    expected = lref.tree(labels, tracers, 3)
    prefix = os.path.join(work, "tree")
    out = runner.serial(["link", "--output", prefix, "--hdf5", prefix + ".h5"] + catalogues)
    check.check(out.code == 0, f"phew link ran ({out.summary()})")
    with open(prefix + "-tree.csv") as f:
        rows = list(csv.DictReader(f))
    compare_tree(check, rows, expected, "phew link")

    def find(step, kind, progenitor):
        return [r for r in rows if int(r["Step"]) == step and int(r["Kind"]) == kind and
                int(r["ProgenitorId"]) == progenitor and int(r["ProgenitorStep"]) == 0]
    # the answers known by construction: B (1 at step 0) merges into A (1 at step 1) and is found
    # again as 3 at step 3; C (2) vanishes at step 1 and is found again as 2 at step 2
    b1, b2, b3 = find(1, 1, 1), find(2, 1, 1), find(3, 2, 1)
    check.check(len(b1) == 1 and int(b1[0]["HostId"]) == 1 and int(b1[0]["OrphanSteps"]) == 1,
                f"B is an orphan in A at step 1: {b1}")
    check.check(len(b2) == 1 and int(b2[0]["HostId"]) == 0 and int(b2[0]["OrphanSteps"]) == 2,
                f"B is still an orphan in A at step 2: {b2}")
    check.check(len(b3) == 1 and int(b3[0]["DescendantId"]) == 3 and int(b3[0]["OrphanSteps"]) == 2,
                f"B is found again as 3 at step 3: {b3}")
    c1, c2 = find(1, 1, 2), find(2, 2, 2)
    check.check(len(c1) == 1 and int(c1[0]["HostId"]) == -1, f"C is an orphan with no host at step 1: {c1}")
    check.check(len(c2) == 1 and int(c2[0]["DescendantId"]) == 2 and int(c2[0]["OrphanSteps"]) == 1,
                f"C is found again as 2 at step 2: {c2}")
    main_a = [r for r in rows if int(r["Step"]) == 1 and int(r["DescendantId"]) == 1 and
              int(r["MainProgenitorByTracers"]) == 1]
    check.check(len(main_a) == 1 and int(main_a[0]["ProgenitorId"]) == 0, f"A is A's main progenitor: {main_a}")

    # without orphans: no ORPHAN or REFOUND rows
    none = os.path.join(work, "tree_none")
    out = runner.serial(["link", "--max-orphan-steps", "0", "--output", none] + catalogues)
    with open(none + "-tree.csv") as f:
        rows_none = list(csv.DictReader(f))
    compare_tree(check, rows_none, lref.tree(labels, tracers, 0), "--max-orphan-steps 0")

    # orphans followed one step only: B is dropped after step 1, so B's return at step 3 is new
    one = os.path.join(work, "tree_one")
    out = runner.serial(["link", "--max-orphan-steps", "1", "--output", one] + catalogues)
    with open(one + "-tree.csv") as f:
        rows_one = list(csv.DictReader(f))
    compare_tree(check, rows_one, lref.tree(labels, tracers, 1), "--max-orphan-steps 1")
    check.check(not [r for r in rows_one if int(r["Kind"]) == 2 and int(r["ProgenitorId"]) == 1] and
                len([r for r in rows_one if int(r["Kind"]) == 2 and int(r["ProgenitorId"]) == 2]) == 1,
                "--max-orphan-steps 1: B is not found again after two steps, C (one step) is")

    # the same bytes on several ranks, the HDF5 table as the CSV
    for n in args.ranks:
        p = os.path.join(work, f"tree_np{n}")
        out = runner.mpi(n, ["link", "--output", p, "--hdf5", p + ".h5"] + catalogues)
        with open(prefix + "-tree.csv", "rb") as a, open(p + "-tree.csv", "rb") as b:
            check.check(out.code == 0 and a.read() == b.read(), f"phew link on {n} ranks: the same CSV bytes")
    import h5py
    with h5py.File(prefix + ".h5", "r") as f:
        g = f["MergerTree"]
        check.check(all(np.allclose(g[name][()], [float(r[name]) for r in rows], equal_nan=True, rtol=0, atol=0)
                        for name in rows[0]), "the HDF5 MergerTree equals the CSV, column by column")

    # bad input: a missing file, one catalogue
    bad = runner.serial(["link", "--output", os.path.join(work, "bad"), catalogues[0], os.path.join(work, "none.h5")])
    check.check(bad.code == 1 and "none.h5" in bad.err and not os.path.exists(os.path.join(work, "bad-tree.csv")),
                f"a missing catalogue: exit 1, named, no output ({bad.summary()})")
    one = runner.serial(["link", "--output", os.path.join(work, "bad"), catalogues[0]])
    check.check(one.code == 1 and "at least two" in one.err, f"one catalogue: exit 1 ({one.summary()})")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
