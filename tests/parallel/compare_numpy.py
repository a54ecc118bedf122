"""The tool's output files against datasets/phew_numpy.py, the independent re-implementation
(the same comparisons as datasets/check_sample.py): per-cell PeakPatchId, clump and halo
membership, catalogue order, halo depths and cell counts. With the byte-for-byte comparison
with the serial run, this keeps a result that is identical on every rank count but wrong
from passing."""
import csv
import os
import sys

import numpy as np


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def compare(case, prefix, source_dir, checker, label):
    sys.path.insert(0, os.path.join(source_dir, "datasets"))
    import phew_numpy as P

    rho = case.rho
    r = P.find_clumps(rho, case.threshold, case.relevance, case.saddle, periodic=(case.periodic,) * 3)
    check = lambda ok, what: checker.check(ok, f"{label}: {what} (numpy)")  # noqa: E731
    patch = np.fromfile(prefix + "-patch.raw", dtype="<i8").reshape(rho.shape)
    check(np.array_equal(patch, r["label"]), "PeakPatchId of every cell")
    clumps = _read_csv(prefix + "-clumps.csv")
    haloes = _read_csv(prefix + "-haloes.csv")
    check([int(c["PeakId"]) for c in clumps] == list(r["clumps"]),
          f"{len(clumps)} clumps, peaks and order")
    clump_peak = np.array([int(c["PeakId"]) for c in clumps] + [-1], dtype=np.int64)
    cl = np.fromfile(prefix + "-clump.raw", dtype="<i8").reshape(rho.shape)
    check(np.array_equal(clump_peak[cl], r["clump_label"]), "ClumpId of every cell")
    check([int(c["NumberOfCells"]) for c in clumps] == [int((r["clump_label"] == p).sum()) for p in r["clumps"]],
          "clump cell counts")
    halo_peak = np.array([int(h["PeakId"]) for h in haloes] + [-1], dtype=np.int64)
    ha = np.fromfile(prefix + "-halo.raw", dtype="<i8").reshape(rho.shape)
    if case.saddle is None:  # every clump is its own halo
        check(list(halo_peak[:-1]) == list(r["clumps"]), "haloes are the clumps")
        want = r["clump_label"]
    else:
        check(list(halo_peak[:-1]) == list(r["haloes"]), f"{len(haloes)} haloes, peaks and order")
        g = r["halo_of_clump"]
        check(all(int(halo_peak[int(c["HaloId"])]) == g[int(c["PeakId"])] for c in clumps),
              "halo of every clump")
        check(all(int(h["Level"]) == r["halo_depth"][int(h["PeakId"])] for h in haloes), "halo depths (Level)")
        lookup = np.vectorize(lambda c: g.get(c, -1) if c >= 0 else -1, otypes=[np.int64])
        want = lookup(r["clump_label"])
    check(np.array_equal(halo_peak[ha], want), "HaloId of every cell")
