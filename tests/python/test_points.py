"""The finders on particles from Python (find_clumps_points, friends_of_friends, hop,
particle_density) against the CLI's outputs on the same particles, and their bad input."""

import numpy as np
import pytest

import phew
from conftest import clustered_particles, read_csv


def same_table(table, path):
    header, columns, n_rows = read_csv(path)
    assert list(table.dtype.names) == header
    assert n_rows == len(table) > 0
    for name in header:
        assert np.array_equal(table[name].astype(np.float64), columns[name]), name


@pytest.fixture
def particles(tmp_path):
    pos, masses, velocities, ids = clustered_particles(31)
    files = {}
    for name, values in (("pos", pos), ("mass", masses), ("vel", velocities), ("ids", ids)):
        files[name] = tmp_path / (name + ".raw")
        values.tofile(files[name])
    common = ["--points", files["pos"], "--type", "float32", "--box", 10, 10, 10, "--periodic", "--masses",
              files["mass"], "--velocities", files["vel"], "--ids", files["ids"], "--threads", 1,
              "--no-physics"]  # the finders' catalogues alone (test_physics.py compares the physics)
    return pos, masses, velocities, ids, common, tmp_path


def test_phew_on_particles_gives_the_cli_answer(particles, cli):
    pos, masses, velocities, ids, common, tmp = particles
    r = phew.find_clumps_points(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True,
                                threshold=30.0, relevance=1.5, saddle="auto", threads=2)
    cli(*common, "--threshold", 30, "--relevance", 1.5, "--saddle", "auto", "--output", tmp / "p")
    for name, got in (("patch", r.peak_patch_id), ("clump", r.clump_id), ("halo", r.halo_id)):
        assert np.array_equal(got, np.fromfile(tmp / ("p-%s.raw" % name), np.int64)), name
    assert np.array_equal(r.density, np.fromfile(tmp / "p-density.raw", np.float64))
    for kind, table in (("clumps", r.clumps), ("haloes", r.haloes), ("dendrogram", r.dendrogram)):
        same_table(table, tmp / ("p-%s.csv" % kind))
    assert "MeanVelocityX" in r.clumps.dtype.names and "NumberOfParticles" in r.clumps.dtype.names


def test_friends_of_friends_gives_the_cli_answer(particles, cli):
    pos, masses, velocities, ids, common, tmp = particles
    f = phew.friends_of_friends(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True,
                                linking_length=0.25, min_members=15)
    cli(*common, "--finder", "fof", "--linking-length", 0.25, "--min-members", 15, "--output", tmp / "f")
    assert np.array_equal(f.group_id, np.fromfile(tmp / "f-group.raw", np.int64))
    same_table(f.groups, tmp / "f-groups.csv")
    assert f.linking_length == pytest.approx(0.25 * 10.0 / len(pos) ** (1 / 3))


def test_hop_gives_the_cli_answer(particles, cli):
    pos, masses, velocities, ids, common, tmp = particles
    h = phew.hop(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True, outer=20.0)
    cli(*common, "--finder", "hop", "--outer", 20, "--output", tmp / "h")
    assert np.array_equal(h.group_id, np.fromfile(tmp / "h-group.raw", np.int64))
    assert np.array_equal(h.density, np.fromfile(tmp / "h-density.raw", np.float64))
    same_table(h.groups, tmp / "h-groups.csv")
    assert np.array_equal(phew.particle_density(pos, masses=masses, ids=ids, box=10.0, periodic=True), h.density)


def test_particle_answers_do_not_depend_on_threads_or_the_order(particles):
    pos, masses, velocities, ids = particles[:4]
    one = phew.friends_of_friends(pos, ids=ids, box=10.0, periodic=True, threads=1)
    order = np.random.default_rng(5).permutation(len(pos))
    other = phew.friends_of_friends(pos[order], ids=ids[order], box=10.0, periodic=True, threads=3)
    assert np.array_equal(one.group_id[order], other.group_id)
    assert one.groups.tobytes() == other.groups.tobytes()


@pytest.mark.parametrize("call, kwargs, error, words", [
    (phew.find_clumps_points, {"positions": np.zeros((5, 2))}, ValueError, r"\(n, 3\)"),
    (phew.find_clumps_points, {"positions": np.zeros((5, 3), complex)}, TypeError, "real numbers"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "masses": np.ones(4)}, ValueError, "masses"),
    (phew.friends_of_friends, {"positions": np.zeros((0, 3)), "box": 1.0}, ValueError, "no particles"),
    (phew.friends_of_friends, {"positions": np.full((5, 3), 2.0), "box": 1.0}, ValueError, "box"),
    (phew.hop, {"positions": np.ones((5, 3)), "periodic": True}, ValueError, "box"),
    (phew.hop, {"positions": np.ones((5, 3)), "box": 10.0, "hop_neighbours": 0}, ValueError, "hop_neighbours"),
    (phew.particle_density, {"positions": np.full((5, 3), np.nan), "box": 10.0}, ValueError, "finite|NaN"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "box": [10.0]}, ValueError, "box must be one value"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "box": "10"}, TypeError, "box along axis 0"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "linking_length": "0.2"}, TypeError, "linking_length"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "absolute": "no"}, TypeError, "absolute"),
    (phew.friends_of_friends, {"positions": np.ones((5, 3)), "ids": np.arange(5) + 0.7}, TypeError, "ids"),
    (phew.hop, {"positions": np.ones((5, 3)), "outer": "a"}, TypeError, "outer"),
])
def test_bad_particles_raise(call, kwargs, error, words):
    with pytest.raises(error, match=words):
        call(**kwargs)
