"""phew.read_snapshot: the samples of datasets/ (RAMSES, SWIFT) against h5py and the CLI."""
import os

import numpy as np
import pytest

import phew
from conftest import read_csv

DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets")
RAMSES = os.path.join(DATASETS, "ramses_cosmo32", "output_00003")
SWIFT = os.path.join(DATASETS, "swift_dm16", "snap_0003.hdf5")


def test_swift_arrays_are_the_files_arrays():
    h5py = pytest.importorskip("h5py")  # Debian's python3-h5py, installed by the README's commands
    s = phew.read_snapshot(SWIFT)
    with h5py.File(SWIFT, "r") as f:
        part = f["PartType1"]
        assert np.array_equal(s.positions, part["Coordinates"][...].astype(s.positions.dtype))
        assert np.array_equal(s.velocities, part["Velocities"][...].astype(s.velocities.dtype))
        assert np.array_equal(s.masses, part["Masses"][...].astype(s.masses.dtype))
        assert np.array_equal(s.ids, part["ParticleIDs"][...].astype(np.int64))
        assert s.box == tuple(np.broadcast_to(f["Header"].attrs["BoxSize"], 3))
    assert s.info["code"] == "SWIFT" and s.periodic == (True, True, True)
    assert s.first == 0 and s.n_total == len(s.positions) == 4096


def test_ramses_friends_of_friends_as_the_cli_finds_them(tmp_path, cli):
    s = phew.read_snapshot(RAMSES, units="astro")
    assert s.info["length_unit"] == "Mpc/h" and s.info["cosmological"] == 1
    assert s.info["omega_matter"] == pytest.approx(0.3) and s.n_total == 32768
    f = phew.friends_of_friends(s.positions, masses=s.masses, velocities=s.velocities, ids=s.ids, box=s.box,
                                periodic=s.periodic, threads=1)
    cli("--snapshot", RAMSES, "--units", "astro", "--finder", "fof", "--threads", 1, "--output", tmp_path / "r")
    assert np.array_equal(f.group_id, np.fromfile(tmp_path / "r-group.raw", np.int64))
    _, columns, n_rows = read_csv(tmp_path / "r-groups.csv")
    assert n_rows == len(f.groups) > 10
    for name in f.groups.dtype.names:  # the tool adds the physics' columns after these
        assert np.array_equal(f.groups[name].astype(np.float64), columns[name]), name


def test_other_fields_and_units():
    code = phew.read_snapshot(RAMSES, all_fields=True)
    astro = phew.read_snapshot(RAMSES, units="astro")
    assert set(code.fields) >= {"levelp", "family"} and code.fields["levelp"].shape == (32768,)
    assert np.array_equal(astro.ids, code.ids)
    assert np.allclose(astro.positions, code.positions * astro.box[0] / code.box[0], rtol=1e-12)


@pytest.mark.parametrize("path, kwargs, error, words", [
    ("/nonexistent/output_00001", {}, OSError, "cannot open"),
    (RAMSES, {"format": "fits"}, ValueError, "format"),
    (RAMSES, {"units": "cgs"}, ValueError, "units"),
    (RAMSES, {"family": "no-such-family"}, ValueError, "family"),
    (SWIFT, {"particle_type": 7}, ValueError, "PartType7|particle type"),
    (12, {}, TypeError, "path"),
])
def test_bad_reads_raise(path, kwargs, error, words):
    with pytest.raises(error, match=words):
        phew.read_snapshot(path, **kwargs)


def test_ramses_amr_as_the_cli_finds_its_clumps(tmp_path, cli):
    """The three density blobs of tests/readers written as hydro files onto the sample's real
    AMR tree: read_amr + find_clumps_amr give the tool's labels (per box) and tables."""
    import shutil
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "readers"))
    import ramses_amr_reference

    folder = tmp_path / "blobs" / "output_00003"
    shutil.copytree(RAMSES, folder)
    for entry in os.listdir(folder):
        os.chmod(folder / entry, 0o644)
    ramses_amr_reference.write_hydro(str(folder), True, ramses_amr_reference.blob_value)
    amr = phew.read_amr(folder)
    assert amr.variables == ["density"] and amr.periodic == (True, True, True)
    r = phew.find_clumps_amr(amr.blocks("density"), level0_shape=amr.level0_shape, spacing=amr.spacing,
                             origin=amr.origin, periodic=amr.periodic, threshold=5.0)
    assert len(r.clumps) == 3  # tests/readers: the three blobs
    bare = phew.read_amr(folder, variables=())  # the boxes alone
    assert bare.variables == [] and len(bare.boxes) == len(amr.boxes) and bare.boxes[0][2] == {}
    with pytest.raises(ValueError, match="no variable 'density'"):
        bare.blocks("density")
    assert phew.read_amr(folder, variables="density").variables == ["density"]
    assert phew.find_clumps(amr, threshold=5.0).clumps.tobytes() == r.clumps.tobytes()  # the snapshot's domain
    cli("--snapshot", folder, "--amr-variable", "density", "--threshold", 5.0, "--threads", 1, "--output",
        tmp_path / "c")
    with open(tmp_path / "c-boxes.csv") as f:
        f.readline()
        boxes = [tuple(int(v) for v in line.split(",")) for line in f]
    clump = np.fromfile(tmp_path / "c-clump.raw", np.int64)
    for k, labels in zip(amr.box_index, r.clump_id):
        first, count = boxes[k][7], boxes[k][8]
        assert np.array_equal(labels.transpose(2, 1, 0).reshape(-1), clump[first:first + count]), k
    header, columns, _ = read_csv(tmp_path / "c-clumps.csv")
    for name in header:  # PeakId counts the cells x fastest in the tool, z fastest here
        if name != "PeakId":
            assert np.array_equal(r.clumps[name].astype(np.float64), columns[name]), name
