"""phew.halo_properties (unbinding and halo properties) against the tool, which runs the same
physics after its finders: the bound labels and every physics column, byte for byte."""
import os

import numpy as np
import pytest

import phew
from conftest import clustered_particles, read_csv

RAMSES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "ramses_cosmo32",
                      "output_00003")


def same_physics(result, table_path, names_from_finder):
    columns = read_csv(table_path)[1]
    checked = 0
    for name in result.structures.dtype.names:
        if name == "StructureId" or name in names_from_finder:
            continue  # the finder's own columns (the tool's table starts with them)
        assert name in columns, name
        got = result.structures[name].astype(np.float64)
        assert np.array_equal(got, columns[name], equal_nan=True), name
        checked += 1
    assert checked > 30


def test_friends_of_friends_haloes_in_a_cosmological_snapshot(tmp_path, cli):
    s = phew.read_snapshot(RAMSES, units="astro")
    f = phew.friends_of_friends(s.positions, masses=s.masses, velocities=s.velocities, ids=s.ids, box=s.box,
                                periodic=s.periodic, threads=1)
    h = phew.halo_properties(s.positions, s.velocities, f, masses=s.masses, ids=s.ids, box=s.box,
                             periodic=s.periodic, cosmology=s, threads=2)
    assert h.structures.meta["cosmology"]["comoving"] == 1 and len(h.structures) == len(f.groups)
    cli("--snapshot", RAMSES, "--units", "astro", "--finder", "fof", "--threads", 1, "--output", tmp_path / "r")
    assert np.array_equal(h.bound_label, np.fromfile(tmp_path / "r-group-bound.raw", np.int64))
    same_physics(h, tmp_path / "r-groups.csv", f.groups.dtype.names)
    assert 0 < h.structures["BoundFraction"].min() <= 1


def test_phew_clumps_with_their_parents(tmp_path, cli):
    pos, masses, velocities, ids = clustered_particles(41)
    options = dict(masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True)
    r = phew.find_clumps_points(pos, threshold=10.0, relevance=1.1, saddle=12.0, **options)
    assert (r.clumps["ParentId"] >= 0).any()  # a hierarchy to unbind through
    h = phew.halo_properties(pos, velocities, r, masses=masses, ids=ids, box=10.0, periodic=True, potential="spherical")
    files = {}
    for name, values in (("pos", pos), ("mass", masses), ("vel", velocities), ("ids", ids)):
        files[name] = tmp_path / (name + ".raw")
        values.tofile(files[name])
    cli("--points", files["pos"], "--type", "float32", "--box", 10, 10, 10, "--periodic", "--masses", files["mass"],
        "--velocities", files["vel"], "--ids", files["ids"], "--threshold", 10, "--relevance", 1.1, "--saddle",
        12, "--potential", "spherical", "--threads", 1, "--output", tmp_path / "p")
    assert np.array_equal(h.bound_label, np.fromfile(tmp_path / "p-bound.raw", np.int64))
    same_physics(h, tmp_path / "p-clumps.csv", r.clumps.dtype.names)


def test_labels_made_elsewhere_and_bad_input():
    pos, masses, velocities, ids = clustered_particles(42, 800, 200)
    labels = (pos[:, 0] > 5).astype(np.int64)  # two slabs as "structures"
    h = phew.halo_properties(pos, velocities, labels, masses=masses, box=10.0, periodic=True, unbind=False)
    assert list(h.structures["NumberOfMembers"]) == [(labels == 0).sum(), (labels == 1).sum()]
    assert np.array_equal(h.bound_label, labels)  # without unbinding every member counts as bound
    with pytest.raises(ValueError, match="velocities"):
        phew.halo_properties(pos, None, labels, box=10.0)
    with pytest.raises(ValueError, match=r"labels \(one per particle\) must have shape"):
        phew.halo_properties(pos, velocities, labels[:-1], box=10.0)
    with pytest.raises(ValueError, match="potential"):
        phew.halo_properties(pos, velocities, labels, box=10.0, potential="tree")
    with pytest.raises(ValueError, match="cosmology needs"):
        phew.halo_properties(pos, velocities, labels, box=10.0, cosmology={"hubble": 0.7})
    with pytest.raises(TypeError, match="labels .* integers"):
        phew.halo_properties(pos, velocities, labels + 0.5, box=10.0)
    with pytest.raises(TypeError, match="n_most_bound"):
        phew.halo_properties(pos, velocities, labels, box=10.0, n_most_bound=2.5)
    with pytest.raises(ValueError, match="n_most_bound"):
        phew.halo_properties(pos, velocities, labels, box=10.0, n_most_bound=2 ** 70)
