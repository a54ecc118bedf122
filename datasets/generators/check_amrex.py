#!/usr/bin/env pvpython
"""Check an AMReX plotfile written by amr_amrex.py against ParaView 5.11's AMReX reader.

    /usr/bin/python3 datasets/generators/amr_amrex.py build/plt_amr_sample
    pvpython datasets/generators/check_amrex.py build/plt_amr_sample [--float32]

1. parses the plotfile with amr_amrex.read_plotfile (independent numpy parser) and compares it
   with the hierarchy amr_sample.sample_hierarchy() that was written (boxes, values bit for bit);
2. opens it with ParaView's "AMReX/BoxLib Grid Reader" (proxy AMReXGridReader, reader class
   vtkAMReXGridReader), enables the cell array "density" (CellArrayStatus) and all levels
   (Level = finest level; the default 1 loads levels 0 and 1 only), and compares number of
   levels, boxes per level, spacing, origin and every density value cell by cell;
3. prints what the reader produces: array type, vtkGhostType (blanking) and what the default
   settings load.
Exit status 0 when everything matches.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amr_amrex  # noqa: E402
import amr_common  # noqa: E402
import amr_sample  # noqa: E402


def open_reader(path, level=None, arrays=("density",)):
    from paraview import simple
    r = simple.AMReXBoxLibGridReader(FileNames=[path])
    r.CellArrayStatus = list(arrays)
    if level is not None:
        r.Level = level
    r.UpdatePipeline()
    # servermanager.Fetch cannot transfer AMR; in the built-in session use the reader's output
    return r, r.GetClientSideObject().GetOutputDataObject(0)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plotfile", nargs="?",
                    default=os.path.join(here, "..", "..", "build", "plt_amr_sample"))
    ap.add_argument("--float32", action="store_true", help="the plotfile holds Float32 data")
    args = ap.parse_args(argv)
    path = os.path.abspath(args.plotfile)
    dtype = np.float32 if args.float32 else np.float64
    h = amr_sample.sample_hierarchy()
    problems = []

    # 1. independent parse
    hd, fields = amr_amrex.read_plotfile(path)
    lv = fields["density"]
    if len(lv) != h.nlevels:
        problems.append(f"parser: {len(lv)} levels")
    for l, blocks in enumerate(h.blocks):
        if l >= len(lv) or len(lv[l]) != len(blocks):
            problems.append(f"parser: level {l} box count")
            continue
        for b, (lo, dims, a) in zip(blocks, lv[l]):
            if lo != b.lo or dims != b.dims or not np.array_equal(a, b.data.astype(dtype)):
                problems.append(f"parser: level {l} box {b.lo} differs")
    print(f"1. parser: {hd['version']}, {len(lv)} levels, "
          f"{[len(x) for x in lv]} boxes, ref ratios {hd['ref_ratio']}, "
          f"{'ok' if not problems else 'PROBLEMS'}")

    # 2. ParaView's reader, all levels
    from paraview import simple
    from vtkmodules.util.numpy_support import vtk_to_numpy
    r, amr = open_reader(path, level=h.nlevels - 1)
    print(f"2. ParaView proxy AMReXGridReader (class {r.GetClientSideObject().GetReader().GetClassName()}"
          f"), NumLevels info {r.GetProperty('NumLevels').GetData()}, NumBlocks info "
          f"{r.GetProperty('NumBlocks').GetData()}, output {amr.GetClassName()}")
    if amr.GetNumberOfLevels() != h.nlevels:
        problems.append(f"reader: {amr.GetNumberOfLevels()} levels != {h.nlevels}")
    masks = amr_common.covered_masks(h)
    types, ghosts_seen, ghost_values = set(), 0, set()
    nblocks = 0
    for l, blocks in enumerate(h.blocks):
        if l >= amr.GetNumberOfLevels():
            break
        if amr.GetNumberOfDataSets(l) != len(blocks):
            problems.append(f"reader: level {l} has {amr.GetNumberOfDataSets(l)} boxes != {len(blocks)}")
            continue
        sp = [0.0] * 3
        amr.GetSpacing(l, sp)
        if not np.allclose(sp, h.spacing(l), rtol=1e-15, atol=0):
            problems.append(f"reader: level {l} spacing {sp}")
        for i, b in enumerate(blocks):
            lo, hi = [0] * 3, [0] * 3
            amr.GetAMRBox(l, i).GetDimensions(lo, hi)
            if tuple(lo) != b.lo or tuple(hi[d] - lo[d] + 1 for d in range(3)) != b.dims:
                problems.append(f"reader: level {l} box {i}: {lo} {hi} != {b.lo} {b.dims}")
            g = amr.GetDataSet(l, i)
            if g is None:
                problems.append(f"reader: level {l} box {i} missing")
                continue
            nblocks += 1
            org = [h.origin[d] + b.lo[d] * h.spacing(l)[d] for d in range(3)]
            if not np.allclose(g.GetOrigin(), org, rtol=0, atol=1e-12):
                problems.append(f"reader: level {l} box {i} origin {g.GetOrigin()} != {org}")
            a = g.GetCellData().GetArray("density")
            if a is None:
                problems.append(f"reader: level {l} box {i}: no cell array density")
                continue
            types.add(a.GetDataTypeAsString())
            if not np.array_equal(vtk_to_numpy(a), b.data.astype(dtype).ravel()):
                problems.append(f"reader: level {l} box {i}: density differs")
            gh = g.GetCellData().GetArray("vtkGhostType")
            if gh is not None:
                ghosts_seen += 1
                v = vtk_to_numpy(gh)
                ghost_values.update(np.unique(v).tolist())
                want = np.where(masks[l][i].ravel(), 8, 0)
                if not np.array_equal(v, want):
                    problems.append(f"reader: level {l} box {i}: vtkGhostType is not 8 exactly on covered cells")
    print(f"   levels {amr.GetNumberOfLevels()}, boxes read {nblocks}, density array type(s) "
          f"{sorted(types)}, vtkGhostType on {ghosts_seen} boxes, values {sorted(ghost_values)}")
    print(f"   point arrays: {amr.GetDataSet(0, 0).GetPointData().GetNumberOfArrays()}, cell arrays: "
          f"{[amr.GetDataSet(0, 0).GetCellData().GetArrayName(k) for k in range(amr.GetDataSet(0, 0).GetCellData().GetNumberOfArrays())]}")
    simple.Delete(r)

    # 3. defaults: which levels and arrays without settings
    from paraview import simple as s2
    r2 = s2.AMReXBoxLibGridReader(FileNames=[path])
    r2.UpdatePipeline()
    a2 = r2.GetClientSideObject().GetOutputDataObject(0)
    nds = [a2.GetNumberOfDataSets(l) for l in range(a2.GetNumberOfLevels())]
    nonnull = [sum(1 for i in range(a2.GetNumberOfDataSets(l)) if a2.GetDataSet(l, i) is not None)
               for l in range(a2.GetNumberOfLevels())]
    g0 = a2.GetDataSet(0, 0)
    print(f"3. defaults: Level = {r2.Level[0] if hasattr(r2.Level, '__getitem__') else r2.Level}, "
          f"CellArrayStatus = {list(r2.CellArrayStatus)}; metadata levels {a2.GetNumberOfLevels()} "
          f"boxes {nds}, loaded boxes {nonnull}, cell arrays on block 0: "
          f"{[g0.GetCellData().GetArrayName(k) for k in range(g0.GetCellData().GetNumberOfArrays())] if g0 else None}")

    if problems:
        print("CHECK FAILED:\n  " + "\n  ".join(problems[:30]))
        return 1
    print("check_amrex: OK (parser and ParaView's AMReXGridReader agree with the written data, "
          "cell by cell)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
