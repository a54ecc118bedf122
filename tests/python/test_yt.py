"""phew.yt on yt's in-memory datasets (uniform grid, AMR grids, particles) against the direct
calls on the same arrays, and on the RAMSES sample loaded through yt against phew's reader."""
import os

import numpy as np
import pytest

yt = pytest.importorskip("yt")  # Debian's python3-yt, installed by the README's commands
import phew  # noqa: E402
import phew.yt  # noqa: E402
from conftest import amr_sample, clustered_particles, lognormal  # noqa: E402

yt.set_log_level(40)
RAMSES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "ramses_cosmo32",
                      "output_00003")


def test_uniform_grid_with_units():
    rho = lognormal((24, 20, 28), 61, dtype=np.float64)
    ds = yt.load_uniform_grid(dict(density=(rho, "g/cm**3")), rho.shape, length_unit="Mpc",
                              bbox=np.array([[0, 12], [0, 10], [0, 14]]), periodicity=(True, True, True))
    r = phew.yt.find_clumps(ds, ("stream", "density"), threshold=ds.quan(1.2e-3, "kg/cm**3"), saddle="auto",
                            length_unit="Mpc")
    want = phew.find_clumps(rho, spacing=0.5, periodic=True, threshold=1.2, saddle="auto")
    assert np.array_equal(r.clump_id, want.clump_id) and r.clumps.tobytes() == want.clumps.tobytes()
    columns = phew.yt.with_units(r.clumps, ds)
    assert str(columns["PeakX"].units) == "Mpc" and columns["PeakDensity"].units == ds.quan(1, "g/cm**3").units
    mass = columns["Mass"].to("Msun")
    assert np.allclose(mass.d, r.clumps["Mass"] * ds.quan(1, "g/cm**3 * Mpc**3").to("Msun").d, rtol=1e-12)


def test_amr_grids():
    blocks = amr_sample()
    grids = []
    for level, lo, d in blocks:
        dx = 1 / 32 / 2 ** level
        left = np.array(lo) * dx
        grids.append(dict(left_edge=left, right_edge=left + np.array(d.shape) * dx, level=level,
                          dimensions=np.array(d.shape), density=(d.astype(np.float64), "g/cm**3")))
    ds = yt.load_amr_grids(grids, [32, 32, 32], bbox=np.array([[0, 1]] * 3), periodicity=(True,) * 3)
    r = phew.yt.find_clumps_amr(ds, ("stream", "density"), threshold=3.0, saddle=20.0)
    want = phew.find_clumps_amr(blocks, level0_shape=(32, 32, 32), spacing=1 / 32, periodic=True, threshold=3.0,
                                saddle=20.0)
    assert (len(r.clumps), len(r.haloes)) == (7, 5)
    assert r.clumps.tobytes() == want.clumps.tobytes() and r.dendrogram.tobytes() == want.dendrogram.tobytes()
    # the labels per yt grid: the same blocks as given (matched by level and first cell)
    given = {(level, tuple(lo)): k for k, (level, lo, _) in enumerate(blocks)}
    for g, labels in zip(ds.index.grids, r.clump_id):
        k = given[(int(g.Level), tuple(int(i) for i in g.get_global_startindex()))]
        assert np.array_equal(labels, want.clump_id[k])


@pytest.mark.parametrize("finder", ["fof", "hop", "phew"])
def test_particles(finder):
    pos, masses, velocities, ids = (a.astype(np.float64) if a.dtype.kind == "f" else a
                                    for a in clustered_particles(71))
    data = {"particle_position_" + a: (pos[:, k], "Mpc") for k, a in enumerate("xyz")}
    data.update({"particle_velocity_" + a: (velocities[:, k], "km/s") for k, a in enumerate("xyz")})
    data.update(particle_mass=(masses, "Msun"), particle_index=ids)
    ds = yt.load_particles(data, length_unit="Mpc", mass_unit="Msun", bbox=np.array([[0, 10]] * 3),
                           periodicity=(True,) * 3)
    options = {"fof": {}, "hop": {"outer": 20.0}, "phew": {"threshold": 30.0}}[finder]
    r = phew.yt.particles(ds, finder, ptype="io", length_unit="Mpc", mass_unit="Msun", **options)
    direct = {"fof": phew.friends_of_friends, "hop": phew.hop, "phew": phew.find_clumps_points}[finder]
    want = direct(pos, masses=masses, velocities=velocities, ids=ids, box=10.0, periodic=True, **options)
    table = "clumps" if finder == "phew" else "groups"
    labels = "clump_id" if finder == "phew" else "group_id"
    assert np.array_equal(getattr(r, labels), getattr(want, labels))
    got, expected = getattr(r, table), getattr(want, table)
    assert len(got) > 3 and got.dtype == expected.dtype
    for name in got.dtype.names:  # yt converts through its own units: the last bits may differ
        assert np.allclose(got[name], expected[name], rtol=1e-12, atol=0, equal_nan=True), name
    assert got.meta["units"]["Mass"] == "Msun"


def test_ramses_through_yt_and_through_phew():
    ds = yt.load(RAMSES)
    pos, masses, velocities, ids, box = phew.yt.particle_arrays(ds, "DM")
    mine = phew.read_snapshot(RAMSES)
    by_yt, by_phew = np.argsort(ids), np.argsort(mine.ids)
    assert np.array_equal(ids[by_yt], mine.ids[by_phew])
    assert np.array_equal(pos[by_yt], mine.positions[by_phew].astype(np.float64))
    assert np.allclose(masses[by_yt], mine.masses[by_phew], rtol=1e-12)
    assert box["box"] == mine.box and box["periodic"] == mine.periodic
    via_yt = phew.yt.particles(ds, "fof", ptype="DM")
    direct = phew.friends_of_friends(mine.positions, masses=mine.masses, velocities=None, ids=mine.ids, box=mine.box,
                                     periodic=mine.periodic)
    assert len(direct.groups) > 10
    for name in ("NumberOfParticles", "MinParticleId"):  # the same groups whatever the order read
        assert np.array_equal(via_yt.groups[name], direct.groups[name]), name
