"""phew.MergerTree against `phew link` on three steps in which two haloes merge: the same
rows (links by shared particles and by most-bound particles, orphans) from the same runs."""

import numpy as np

import phew
from conftest import clustered_particles, read_csv


def steps():
    """Three steps of the clustered particles: blob 1 falls onto blob 0, the rest drift."""
    pos, masses, velocities, ids = clustered_particles(81, 3000, 1500)
    rng = np.random.default_rng(82)
    # the blob nearest to particle 0's blob moves onto it
    centre0 = pos[0].astype(np.float64)
    d = np.linalg.norm((pos - centre0 + 5.0) % 10.0 - 5.0, axis=1)
    mover = (d > 1.0) & (d < 4.0) & (np.arange(len(pos)) < 3000)
    target = pos[mover][0].astype(np.float64)
    blob = np.linalg.norm((pos - target + 5.0) % 10.0 - 5.0, axis=1) < 0.6
    shift = ((centre0 - target + 5.0) % 10.0 - 5.0) / 2
    out = []
    for k in range(3):
        p = pos.astype(np.float64) + rng.normal(0, 0.01, pos.shape)
        p[blob] += k * shift
        out.append(((p % 10.0).astype(np.float32), masses, velocities, ids))
    return out


def test_the_tree_of_phew_link(tmp_path, cli):
    tree = phew.MergerTree(max_orphan_steps=2)
    catalogues = []
    for k, (pos, masses, velocities, ids) in enumerate(steps()):
        f = phew.friends_of_friends(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True)
        h = phew.halo_properties(pos, velocities, f, masses=masses, ids=ids, box=10.0, periodic=True,
                                 n_most_bound=20)
        links = tree.add(ids, h.bound_label, h.tracers)
        assert (links is None) == (k == 0)
        files = []
        for name, values in (("pos", pos), ("mass", masses), ("vel", velocities), ("ids", ids)):
            files.append(tmp_path / ("%s%d.raw" % (name, k)))
            values.tofile(files[-1])
        catalogues.append(tmp_path / ("step%d.hdf5" % k))
        cli("--points", files[0], "--type", "float32", "--box", 10, 10, 10, "--periodic", "--masses", files[1],
            "--velocities", files[2], "--ids", files[3], "--finder", "fof", "--most-bound", 20, "--hdf5",
            catalogues[-1], "--output", tmp_path / ("out%d" % k), "--threads", 1)
    cli("link", "--output", tmp_path / "tree", "--max-orphan-steps", 2, *catalogues)
    header, columns, n_rows = read_csv(tmp_path / "tree-tree.csv")
    mine = tree.links
    assert list(mine.dtype.names) == header
    assert len(mine) == n_rows > 10
    for name in header:
        assert np.array_equal(mine[name].astype(np.float64), columns[name], equal_nan=True), name
    assert (mine["Kind"] == 1).any(), "the merged halo should be followed as an orphan"


def test_bad_tracers_raise_and_leave_the_tree_as_it_was():
    pos, masses, velocities, ids = steps()[0]
    f = phew.friends_of_friends(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True)
    h = phew.halo_properties(pos, velocities, f, masses=masses, ids=ids, box=10.0, periodic=True, n_most_bound=5)
    tree = phew.MergerTree()
    h.tracers.ids = h.tracers.ids.astype(np.int32)
    tree.add(ids, h.bound_label, h.tracers)  # converted: int32 ids are ids
    h.tracers.ids = h.tracers.ids[:3]
    try:
        tree.add(ids, h.bound_label, h.tracers)
        raise AssertionError("no error")
    except ValueError as e:
        assert "offsets and counts" in str(e)
    assert tree.n_steps == 1
