"""pvbatch test (one process; a ctest fixture): the PHEW Clump Finder on AMR, and the answers
the parallel AMR test (test_plugin_amr.py) compares its runs with.

It writes the AMR files of test_plugin_amr_cases.CASES into --answers-dir, reads each back with
ParaView's XMLUniformGridAMRReader (all levels), runs the filter and saves the labels of every
block (CASE-labels.npz) and the three tables (CASE-clumps.csv, ...). Before saving, it checks the
answers on their own:
  - independent checks from the hierarchy (test_plugin_amr_cases.independent_checks): covered
    cells and cells below the threshold are -1, each clump's peak cell (found from its PeakId
    with the documented id convention) carries its PeakDensity, PeakPatchId and ClumpId and
    sits at PeakX/Y/Z (origin and shift rules), counts and masses match the labelled cells;
  - the expected number of clumps (one per blob);
  - an AMR whose single level equals an image gives that image's labels (level-0 ids are image
    ids) and the same tables, byte for byte, periodic or not;
  - the AMR Gaussian Pulse source gives one clump, peaked at the densest leaf cell;
  - the input is not modified, and the Labels output is an AMR with the input's blocks.

    pvbatch test_plugin_amr_reference.py --plugin PHEW.so --source-dir SRC --work-dir DIR --answers-dir ANS
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

answers_dir = None
if "--answers-dir" in sys.argv:
    i = sys.argv.index("--answers-dir")
    answers_dir = sys.argv[i + 1]
    del sys.argv[i:i + 2]

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support

import phew_plugin_testing as pt
import test_plugin_amr_cases as cases

args = pt.parse_args()
answers_dir = answers_dir or os.path.join(args.work_dir, "answers")
os.makedirs(answers_dir, exist_ok=True)
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_amr_reference")
cases.write_case_files(answers_dir)


def run(label, source, density, properties):
    """Runs the filter; returns (labels {(level, index): {name: [array]}}, tables) or None."""
    finder = PHEWClumpFinder(Input=source, Density=["CELLS", density])
    for key, value in properties.items():
        setattr(finder, key, value)
    errors = pt.ErrorCatcher(finder)
    collect = cases.collect_filter(ProgrammableFilter, finder, args.work_dir, label)
    collect.UpdatePipeline()
    if not check.check(not errors.messages, "%s: the filter reported: %s" % (label, errors.text())):
        Delete(collect)
        Delete(finder)
        return None
    check.check(finder.GetDataInformation().GetDataSetTypeAsString() == "vtkOverlappingAMR",
                "%s: the Labels output is a %s" % (label, finder.GetDataInformation().GetDataSetTypeAsString()))
    labels, _ = cases.read_collected(args.work_dir, label, 1)
    tables = {suffix: sm.Fetch(finder, idx=port) for port, suffix in pt.TABLE_PORTS}
    Delete(collect)
    Delete(finder)
    return labels, tables


def save_answers(label, labels, tables):
    arrays = {"%d_%d_%s" % (level, index, name): values[0]
              for (level, index), block in labels.items() for name, values in block.items()}
    np.savez(os.path.join(answers_dir, label + "-labels.npz"), **arrays)
    for suffix, table in tables.items():
        pt.write_table_csv(table, os.path.join(answers_dir, "%s-%s.csv" % (label, suffix)))


# 1. The cases of the parallel test.
for label, (filename, density, properties, expected) in cases.CASES.items():
    path = cases.case_path(filename, answers_dir, args.source_dir)
    if not os.path.exists(path):
        print("%s: skipped, %s is missing" % (label, path), flush=True)
        continue
    reader = XMLUniformGridAMRReader(FileName=[path])
    reader.DefaultNumberOfLevels = 0  # every level (the reader's default is level 0 only)
    result = run(label, reader, density, properties)
    if result is None:
        Delete(reader)
        continue
    labels, tables = result
    layout = cases.layout_of(filename, args.source_dir)
    cases.independent_checks(check, label, layout, path, density, properties["DensityThreshold"], labels, tables)
    n_clumps = tables["clumps"].GetNumberOfRows()
    print("%s: %d clumps, %d haloes, %d nodes" % (label, n_clumps, tables["haloes"].GetNumberOfRows(),
                                                   tables["dendrogram"].GetNumberOfRows()), flush=True)
    if expected is not None:
        check.check(n_clumps == expected, "%s: %d clumps, expected %d" % (label, n_clumps, expected))
    else:
        check.check(n_clumps >= 3, "%s: only %d clumps" % (label, n_clumps))
    save_answers(label, labels, tables)
    # The input keeps its arrays and gains none.
    data = reader.GetClientSideObject().GetOutputDataObject(0)
    block = data.GetDataSet(0, 0)
    check.check(block.GetCellData().GetArray("PeakPatchId") is None, "%s: the input block got labels" % label)

    # 2. An AMR with one level is an image: same ids, labels and tables as the image run.
    if filename == "image_like.vthb":
        image_reader = XMLImageDataReader(FileName=[os.path.join(answers_dir, "image_like.vti")])
        finder = PHEWClumpFinder(Input=image_reader, Density=["CELLS", density])
        for key, value in properties.items():
            setattr(finder, key, value)
        finder.UpdatePipeline()
        image = sm.Fetch(finder, idx=0)
        for name in pt.LABEL_ARRAYS:
            cube = numpy_support.vtk_to_numpy(image.GetCellData().GetArray(name)).reshape(16, 20, 24)
            differ = 0
            for level, index, lo, dims in layout.blocks():
                mine = labels[(level, index)][name][0].reshape(dims[2], dims[1], dims[0])
                theirs = cube[lo[2]:lo[2] + dims[2], lo[1]:lo[1] + dims[1], lo[0]:lo[0] + dims[0]]
                differ += int(np.count_nonzero(mine != theirs))
            check.check(differ == 0, "%s: %s differs from the image run in %d cells" % (label, name, differ))
        for port, suffix in pt.TABLE_PORTS:
            image_csv = os.path.join(args.work_dir, "%s-image-%s.csv" % (label, suffix))
            pt.write_table_csv(sm.Fetch(finder, idx=port), image_csv)
            with open(image_csv) as a, open(os.path.join(answers_dir, "%s-%s.csv" % (label, suffix))) as b:
                image_text, amr_text = a.read(), b.read()
            check.check(image_text == amr_text, "%s: the %s table differs from the image run's" % (label, suffix))
        Delete(finder)
        Delete(image_reader)
    Delete(reader)

# 3. The AMR Gaussian Pulse source (cell data 'Gaussian-Pulse'; every process makes every block).
pulse = AMRGaussianPulseSource()
result = run("pulse", pulse, "Gaussian-Pulse", dict(DensityThreshold=1e-3))
if result is not None:
    labels, tables = result
    clumps = pt.table_as_lists(tables["clumps"])
    print("pulse: %d clumps, peak density %s" % (len(clumps.get("ClumpId", [])), clumps.get("PeakDensity")), flush=True)
    check.check(len(clumps.get("ClumpId", [])) == 1, "pulse: %d clumps, expected 1" % len(clumps.get("ClumpId", [])))
    data = pulse.GetClientSideObject().GetOutputDataObject(0)
    densest = 0.0
    for level in range(data.GetNumberOfLevels()):
        for index in range(data.GetNumberOfDataSets(level)):
            block = data.GetDataSet(level, index)
            values = numpy_support.vtk_to_numpy(block.GetCellData().GetArray("Gaussian-Pulse"))
            ghost = numpy_support.vtk_to_numpy(block.GetCellData().GetArray("vtkGhostType"))
            leaf = (ghost & 8) == 0  # REFINEDCELL: covered by the next level
            densest = float(np.maximum(densest, values[leaf].max()))  # (max is numpy_interface's here)
            patch = labels[(level, index)]["PeakPatchId"][0]
            check.check(bool((patch[~leaf] == -1).all()), "pulse: covered cells of block %d/%d are labelled"
                        % (level, index))
    if clumps.get("PeakDensity"):
        check.check(clumps["PeakDensity"][0] == densest, "pulse: peak density %r, the densest leaf cell has %r"
                    % (clumps["PeakDensity"][0], densest))
    save_answers("pulse", labels, tables)

check.finish()
