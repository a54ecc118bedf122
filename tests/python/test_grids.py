"""phew.find_clumps on numpy arrays: the CLI's answers, every dtype and layout, bad input as
exceptions, threads, the GIL, Ctrl-C and the progress callback, no leak."""
import _thread
import threading
import time

import numpy as np
import pytest

import phew
from conftest import lognormal, read_csv


@pytest.mark.parametrize("dtype, periodic", [(np.float32, True), (np.float64, False)])
def test_the_same_labels_and_catalogues_as_the_cli(tmp_path, cli, dtype, periodic):
    rho = lognormal((24, 20, 28), 12, dtype=dtype)
    spacing, origin = (0.5, 0.25, 2.0), (-3.0, 1.0, 7.0)
    r = phew.find_clumps(rho, spacing=spacing, origin=origin, periodic=periodic, threshold=1.5, relevance=1.5,
                         saddle=3.0, threads=2)
    assert len(r.clumps) > 5 and len(r.haloes) < len(r.clumps)
    assert r.stats["n_threads"] == 2
    # the CLI reads x fastest: the array's last axis is its x, and its axes come reversed
    path, prefix = tmp_path / "rho.raw", tmp_path / "out"
    rho.tofile(path)
    cli("--input", path, "--dims", 28, 20, 24, "--type", "float32" if dtype == np.float32 else "float64",
        "--threshold", 1.5, "--relevance", 1.5, "--saddle", 3.0, "--spacing", *spacing[::-1], "--origin",
        *origin[::-1], *(["--periodic"] if periodic else []), "--output", prefix, "--threads", 1)
    for name, got in (("patch", r.peak_patch_id), ("clump", r.clump_id), ("halo", r.halo_id)):
        want = np.fromfile("%s-%s.raw" % (prefix, name), np.int64).reshape(rho.shape)
        assert np.array_equal(got, want), name
    swapped = {"PeakX": "PeakZ", "PeakZ": "PeakX", "CenterOfMassX": "CenterOfMassZ", "CenterOfMassZ": "CenterOfMassX"}
    for kind, table in (("clumps", r.clumps), ("haloes", r.haloes), ("dendrogram", r.dendrogram)):
        header, columns, n_rows = read_csv("%s-%s.csv" % (prefix, kind))
        assert list(table.dtype.names) == header
        assert n_rows == len(table)
        for name in header:
            assert np.array_equal(table[swapped.get(name, name)].astype(np.float64), columns[name]), (kind, name)


def test_axis_k_is_coordinate_k():
    rho = np.ones((9, 7, 5))
    rho[6, 2, 1] = 50.0
    r = phew.find_clumps(rho, spacing=(1.0, 2.0, 4.0), origin=(10.0, 20.0, 30.0), threshold=2.0)
    (c,) = r.clumps
    assert np.unravel_index(c["PeakId"], rho.shape) == (6, 2, 1)
    assert (c["PeakX"], c["PeakY"], c["PeakZ"]) == (16.5, 25.0, 36.0)
    assert r.clump_id[6, 2, 1] == 0 and (r.clump_id >= 0).sum() == 1


def test_more_dtypes():
    base = np.zeros((10, 9, 8))
    base[2, 3, 4], base[7, 5, 2], base[5, 5, 5] = 5.0, 3.0, 1.0
    want = phew.find_clumps(base, threshold=0.5, relevance=1.0)
    for variant in (base.astype(np.float16), base.astype(np.uint16), base.astype(">f4")):
        got = phew.find_clumps(variant, threshold=0.5, relevance=1.0)
        assert np.array_equal(got.clump_id, want.clump_id) and len(got.clumps) == 3
    flags = phew.find_clumps(base > 2.0, threshold=0.5, relevance=1.0)  # bools: 0 and 1
    assert len(flags.clumps) == 2 and np.array_equal(flags.clump_id >= 0, base > 2.0)


def test_dtypes_and_layouts_give_the_float64_answer(field):
    want = phew.find_clumps(field.astype(np.float64), threshold=2.0, saddle="auto")
    scaled = np.round(field * 100).astype(np.int32)
    as_int = phew.find_clumps(scaled, threshold=200, saddle="auto")
    assert np.array_equal(as_int.clump_id, phew.find_clumps(scaled.astype(np.float64), threshold=200,
                                                              saddle="auto").clump_id)
    for variant in (field.astype(np.float64).astype(">f8"), np.asfortranarray(field.astype(np.float64)),
                    np.pad(field.astype(np.float64), 1)[1:-1, 1:-1, 1:-1]):
        got = phew.find_clumps(variant, threshold=2.0, saddle="auto")
        assert np.array_equal(got.halo_id, want.halo_id)
        assert np.array_equal(got.clumps, want.clumps)


def test_c_contiguous_floats_are_not_copied(field):
    from phew import _grids

    assert _grids._density(field) is field
    wide = field.astype(np.float64)
    assert _grids._density(wide) is wide
    assert _grids._density(field[:, :, ::2]) is not field


def test_the_same_answer_on_any_number_of_threads(field):
    one = phew.find_clumps(field, threshold=1.2, relevance=1.2, saddle="auto", periodic=True, threads=1)
    for n in (2, 3):
        other = phew.find_clumps(field, threshold=1.2, relevance=1.2, saddle="auto", periodic=True, threads=n)
        assert np.array_equal(one.peak_patch_id, other.peak_patch_id)
        assert one.clumps.tobytes() == other.clumps.tobytes()
        assert one.dendrogram.tobytes() == other.dendrogram.tobytes()


@pytest.mark.parametrize("density, kwargs, error, words", [
    (np.zeros((3, 3, 3), complex), {}, TypeError, "real numbers"),
    (np.array([["a"]]), {}, TypeError, "real numbers"),
    (np.zeros((2, 2, 2, 2)), {}, ValueError, "1-, 2- or 3-D"),
    (np.full((4, 4, 4), np.nan), {}, ValueError, "NaN"),
    (-np.ones((4, 4, 4)), {"threshold": 0.5}, ValueError, "negative"),
    (np.ones((4, 4, 4)), {"threshold": -2.0}, ValueError, "threshold"),
    (np.ones((4, 4, 4)), {"relevance": 0.5}, ValueError, "relevance"),
    (np.ones((4, 4, 4)), {"saddle": -1.0}, ValueError, "saddle"),
    (np.ones((4, 4, 4)), {"threads": -1}, ValueError, "threads"),
    (np.ones((4, 4, 4)), {"spacing": (1, 2, 3, 4)}, ValueError, "spacing"),
    (np.ones((4, 4, 4)), {"spacing": (1.0, -1.0, 1.0)}, ValueError, "spacing"),
    (np.ones((4, 4, 4)), {"threshold": "high"}, TypeError, "threshold"),
    (np.ones((4, 4, 4)), {"comm": object()}, ValueError, "mpi4py"),
    (np.ones((4, 4, 4)), {"spacing": (1.0, 1.0, np.nan)}, ValueError, "spacing along axis 2"),
    (np.ones((4, 4, 4)), {"origin": (np.inf, 0, 0)}, ValueError, "origin along axis 0"),
    (np.ones((4, 4, 4)), {"progress": 3}, TypeError, "progress"),
    (np.ones((4, 4, 4)), {"spacing": [2.0]}, ValueError, "one value or 3"),
    (np.ones((4, 4, 4)), {"periodic": (True, False)}, ValueError, "one value or 3"),
    (np.ones((4, 4)), {"spacing": (1.0, 2.0, 3.0)}, ValueError, "one value or 2"),
    (np.ones((4, 4, 4)), {"offset": (0.5, 0, 0), "global_shape": (8, 4, 4)}, ValueError, "integers"),
    (np.ones((0, 4, 4)), {}, ValueError, "no cells along axis 0"),
    (np.ma.masked_less(np.arange(27.0).reshape(3, 3, 3), 3), {}, ValueError, "masked"),
])
def test_bad_input_raises_with_the_core_message(density, kwargs, error, words):
    before = density.copy()
    with pytest.raises(error, match=words):
        phew.find_clumps(density, **kwargs)
    assert np.array_equal(before, density, equal_nan=density.dtype.kind == "f")  # the input untouched


def test_the_progress_callback_sees_every_stage_and_can_stop(field):
    seen = []
    phew.find_clumps(field, threshold=1.2, saddle="auto", progress=lambda f, stage: seen.append((f, stage)))
    assert seen and seen[-1][0] == pytest.approx(1.0)
    assert {"watershed", "saddles"} <= {stage for _, stage in seen}
    with pytest.raises(phew.Cancelled):
        phew.find_clumps(field, threshold=1.2, progress=lambda f, stage: False)
    with pytest.raises(ZeroDivisionError):  # the callback's own error comes back
        phew.find_clumps(field, threshold=1.2, progress=lambda f, stage: 1 / 0)


def test_ctrl_c_stops_a_run():
    rho = lognormal((160, 160, 160), 13)
    fractions = []
    timer = threading.Timer(0.05, _thread.interrupt_main)  # as SIGINT: the flag Ctrl-C sets
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        phew.find_clumps(rho, threshold=1.0, saddle="auto", threads=1, progress=lambda f, stage: fractions.append(f))
        time.sleep(5)  # the call ended before the signal: it would arrive here instead
    timer.join()
    assert fractions and max(fractions) < 1.0  # stopped inside the run


def test_the_gil_is_released_while_the_core_runs():
    rho = lognormal((128, 128, 128), 14)
    phase = {"name": "free"}
    counts = {"free": 0, "call": 0}
    done = threading.Event()

    def count():  # counts in whichever phase the main thread says it is in
        while not done.is_set():
            counts[phase["name"]] += 1

    worker = threading.Thread(target=count)
    worker.start()
    try:
        time.sleep(0.3)  # the counter's own rate, the main thread asleep
        started = time.perf_counter()
        phase["name"] = "call"
        r = phew.find_clumps(rho, threshold=1.0, threads=1)
        phase["name"] = "after"
        seconds = time.perf_counter() - started
    finally:
        done.set()
        worker.join()
    assert len(r.clumps) > 10
    # held for the call, the GIL would stop the counter for its whole length (a GIL-holding
    # sleep of the same length let it count some 2% of its free rate); released, it counts at
    # a good part of its free rate on the other core
    free_rate = counts["free"] / 0.3
    assert counts["call"] > 0.3 * free_rate * seconds, (counts, seconds)


def test_a_thousand_calls_do_not_grow_the_process(field):
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def call():
        return phew.find_clumps(field, threshold=1.0, relevance=1.0, saddle="auto")

    assert len(call().clumps) > 30  # each call's catalogue and labels: some 300 KiB
    for _ in range(50):
        call()
    before = rss()
    for _ in range(1000):
        call()
    assert rss() - before < 4 * 2**20


def test_tables_carry_the_run_and_become_data_frames(field):
    r = phew.find_clumps(field, threshold=1.2, relevance=1.2, saddle="auto", spacing=0.5)
    assert r.clumps.meta["density_threshold"] == 1.2 and r.clumps.meta["spacing"] == (0.5, 0.5, 0.5)
    assert r.clumps.meta["saddle_threshold"] == pytest.approx(3.0)
    frame = r.clumps.to_pandas()
    assert list(frame.columns) == list(r.clumps.dtype.names)
    assert frame["Mass"].sum() == pytest.approx(r.clumps["Mass"].sum(), rel=1e-15)
    assert frame.attrs["mean_density"] == r.mean_density
    assert np.isclose(r.haloes["Mass"].sum(), (field[r.halo_id >= 0].astype(np.float64)).sum() * 0.125, rtol=1e-12)


def test_dendrogram_layout_places_every_node(field):
    r = phew.find_clumps(field, threshold=1.2, relevance=1.1, saddle=1.5, periodic=True)
    layout = phew.dendrogram_layout(r)
    nodes = r.dendrogram
    assert len(layout) == len(nodes) > 5 and (nodes["ParentId"] >= 0).any()
    leaves = nodes["ClumpId"] >= 0
    assert sorted(layout["x"][leaves]) == list(range(leaves.sum()))
    index = {node_id: i for i, node_id in enumerate(nodes["NodeId"])}
    assert list(layout["parent_index"]) == [index[p] if p >= 0 else -1 for p in nodes["ParentId"]]
    assert np.allclose(layout["log_bottom"], np.log10(nodes["SaddleDensity"]))
    assert np.allclose(layout["log_top"][leaves], np.log10(nodes["PeakDensity"][leaves]))
