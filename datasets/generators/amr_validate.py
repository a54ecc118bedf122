#!/usr/bin/env pvpython
"""Load an AMR dataset with ParaView (all levels) and check it against the rules of phew_amr:
refinement ratio 2, level 0 tiles the domain, no overlap within a level, nesting with even lo
and dims, density as a cell array; also compares vtkGhostType with the covered cells.

    pvpython datasets/generators/amr_validate.py datasets/amr_sample.vthb
    pvpython datasets/generators/amr_validate.py build/plt_amr_sample --array density
    pvpython datasets/generators/amr_validate.py --gaussian-pulse      # AMRGaussianPulseSource()

Prints levels, blocks, cells and leaf cells per level, the block list with --blocks, and the
largest level difference between touching leaf cells (small hierarchies only).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amr_common  # noqa: E402


def load(path, array):
    from paraview import simple
    if path is None:
        src = simple.AMRGaussianPulseSource()
        array = array or "Gaussian-Pulse"
    elif os.path.isdir(path):
        src = simple.AMReXBoxLibGridReader(FileNames=[os.path.abspath(path)])
        src.CellArrayStatus = [array or "density"]
        src.Level = 100                      # "Level" = finest level to load (default 1)
    else:
        src = simple.XMLUniformGridAMRReader(FileName=[os.path.abspath(path)])
        src.DefaultNumberOfLevels = 0        # 0 = all levels (default 1 = level 0 only)
    src.UpdatePipeline()
    return src.GetClientSideObject().GetOutputDataObject(0), array or "density"


def main(argv=None):
    from vtkmodules.util.numpy_support import vtk_to_numpy
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", help=".vthb file or AMReX plotfile directory")
    ap.add_argument("--array", help="cell array (default density; Gaussian-Pulse for the source)")
    ap.add_argument("--gaussian-pulse", action="store_true")
    ap.add_argument("--blocks", action="store_true", help="print the block list")
    args = ap.parse_args(argv)
    if not args.path and not args.gaussian_pulse:
        ap.error("give a path or --gaussian-pulse")
    amr, array = load(None if args.gaussian_pulse else args.path, args.array)
    h = amr_common.hierarchy_from_vtk(amr, array)
    ok = True
    print(f"{amr.GetClassName()}: {amr.GetNumberOfLevels()} levels, refinement ratios {h.ratios} "
          f"(the last level's ratio is not meaningful), level-0 cells {h.level0_dims}, origin "
          f"{h.origin}, level-0 spacing {h.spacing0}")
    if any(r != 2 for r in h.ratios[:-1]):
        print("FAIL: refinement ratio is not 2 on every level")
        ok = False
    missing = [(b.level, i) for lb in h.blocks for i, b in enumerate(lb) if b.data is None]
    if missing:
        print(f"FAIL: {len(missing)} blocks without a loaded cell array {array!r}")
        ok = False
    try:
        amr_common.check_rules(h)
        print("rules: OK (level 0 tiles the domain, no overlap, nested and aligned: even lo and dims)")
    except AssertionError as e:
        print(f"rules: FAIL: {e}")
        ok = False
    if not missing:
        counts = amr_common.describe(h, out=sys.stdout if args.blocks else open(os.devnull, "w"))
        masks = amr_common.covered_masks(h)
        bad = 0
        for level, lb in enumerate(h.blocks):
            for i, b in enumerate(lb):
                g = amr.GetDataSet(level, i)
                gh = g.GetCellData().GetArray("vtkGhostType")
                v = vtk_to_numpy(gh) if gh is not None else np.zeros(b.ncells, np.uint8)
                if not np.array_equal((v & 8) != 0, masks[level][i].ravel()):
                    bad += 1
        for level, lb in enumerate(h.blocks):
            a = h.blocks[level][0].data
            print(f"level {level}: {len(lb)} blocks, {sum(b.ncells for b in lb)} cells, "
                  f"{counts[level]} leaf cells, array {array} {a.dtype}")
        print(f"total leaf cells {sum(counts)}; vtkGhostType REFINEDCELL (8) exactly on covered "
              f"cells: {'yes' if not bad else f'NO ({bad} blocks differ)'}; largest level jump "
              f"between touching leaves: {amr_common.report_level_jumps(h)}")
        ok = ok and not bad
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
