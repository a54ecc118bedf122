"""pvbatch test under mpiexec (ctest runs it with 1, 2 and 3 ranks): the PHEW Clump Finder on what
one of ParaView's own AMR readers produces from a simulation's file format, an AMReX plotfile
(the "HyperCLaw-V1.1" directory that Nyx, Castro or WarpX write), read with the AMReX/BoxLib
Grid Reader (proxy AMReXGridReader, class vtkAMReXGridReader).

The plotfiles hold datasets/amr_sample (its committed block list and float32 densities,
amr_sample.blocks.txt and amr_sample.raw) and are written into the work dir by
datasets/generators/amr_amrex.py (used as a module):
  - plt_f64: Float64 FABs (AMReX's default) of the float32 values, 2 data files per level;
  - plt_f32: Float32 FABs, 3 data files per level.
Each is opened with all levels (Level = the finest level index, which the reader's NumLevels
information gives) and the cell array 'density', and the filter runs with the parameters of the
amr_sample case (test_plugin_amr_cases.CASES). The reference is the same filter on
datasets/amr_sample.vthb read with XMLUniformGridAMRReader (DefaultNumberOfLevels = 0), in the
same job. Blocks of the two readers are matched by level and AMR box (not by index), and:
  - every box of the reference is held by some rank, with the same origin and spacing (exact),
    the same density values (float32 bytes, or their exact float64 widening), and vtkGhostType
    has REFINEDCELL (8) exactly on the cells covered by the next loaded level (computed from the
    block list: under several ranks VTK 9.2's XML AMR reader misses some, which is printed);
  - PeakPatchId, ClumpId and HaloId are equal cell by cell (same type, same bytes);
  - the Clumps, Dendrogram and Haloes tables are equal byte for byte (%.17g CSV), also to the
    one-process answers of phew_plugin_amr_reference (--answers-dir, amr_sample-*.csv and
    amr_sample-labels.npz) when given, and the ranks hold no extra rows.
A third run loads levels 0 to 2 only (Level = 2; the reference reads 3 levels): the filter warns,
runs on those levels, and both readers again give the same labels and tables.

The reader reports the finest loaded level's refinement ratio as 1 (the XML reader says 2); the
filter checks ratios only between the levels it uses, so this is accepted.

    mpiexec -np N pvbatch test_plugin_amrex.py --plugin PHEW.so --source-dir SRC --work-dir DIR \\
        [--answers-dir ANS] [--ranks N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from phew_plugin_testing import take_option  # noqa: E402

answers_dir = take_option("--answers-dir")
ranks_expected = take_option("--ranks")

import builtins  # noqa: E402
import glob  # noqa: E402

import numpy as np  # noqa: E402
from paraview import servermanager as sm  # noqa: E402
from paraview.simple import *  # noqa: E402,F401,F403

import phew_plugin_testing as pt  # noqa: E402
import test_plugin_amr_cases as cases  # noqa: E402

args = pt.parse_args()
sys.path.insert(0, os.path.join(args.source_dir, "datasets", "generators"))
import amr_amrex  # noqa: E402
import amr_common  # noqa: E402

LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_amrex")
n_ranks = pt.number_of_ranks()
print("ranks: %d" % n_ranks, flush=True)
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))

_, DENSITY, PROPERTIES, EXPECTED_CLUMPS = cases.CASES["amr_sample"]
SAMPLE = os.path.join(args.source_dir, cases.SAMPLE)

# AMReX writes a Float32 FAB's real descriptor as ((8, (32 8 23 0 1 9 0 127)),(4, (4 3 2 1))):
# the first number is the length of the format array (8 entries), not a byte count (see
# AMReX_FabConv.cpp, and the FAB headers yt parses); vtkAMReXGridReader misreads anything else.
AMREX_FLOAT32_DESCRIPTOR = "((8, (32 8 23 0 1 9 0 127)),(4, (4 3 2 1)))"


# ---------------------------------------------------------------------------------------------
# The plotfiles


def sample_hierarchy():
    """datasets/amr_sample as an amr_common.Hierarchy: the committed block list and float32
    densities (block after block in list order, x fastest)."""
    layout = cases.sample_layout(args.source_dir)
    raw = np.fromfile(SAMPLE.replace(".vthb", ".raw"), dtype="<f4")
    h = amr_common.Hierarchy(layout.level0_dims, layout.origin, layout.spacing, 8)
    position = 0
    for level, index, lo, dims in layout.blocks():
        while len(h.blocks) <= level:
            h.blocks.append([])
        n = dims[0] * dims[1] * dims[2]
        data = raw[position:position + n].reshape(dims[2], dims[1], dims[0])
        h.blocks[level].append(amr_common.Block(level, lo, dims, data))
        position += n
    check.check(position == raw.size, "amr_sample.raw has %d values, the block list %d cells" % (raw.size, position))
    return h


hierarchy = sample_hierarchy()
PLOTFILES = {
    "plt_f64": (np.float64, 2),
    "plt_f32": (np.float32, 3),
}
for name, (dtype, nfiles) in PLOTFILES.items():
    amr_amrex.write_plotfile(hierarchy, os.path.join(args.work_dir, name), dtype, nfiles)
with open(os.path.join(args.work_dir, "plt_f32", "Level_0", "Cell_D_00000"), "rb") as f:
    first = f.readline().decode("ascii")
check.check(first.startswith("FAB " + AMREX_FLOAT32_DESCRIPTOR), "plt_f32: the first FAB header is %r" % first)


# ---------------------------------------------------------------------------------------------
# Running the filter and collecting what every rank holds


# A Programmable Filter after the finder: every rank writes, for each block it holds, the label
# arrays, the density, vtkGhostType, the AMR box, origin and spacing to DIR/TAG-rRANK.npz (keys
# "level_index_what"). Everything happens inside a function (see test_plugin_amr_cases): on rank 0
# the script runs in this namespace, with numpy_interface's sum, max... imported (builtins.sum here).
COLLECT_SCRIPT = """
def _phew_collect_amrex(algorithm):
    import numpy
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    controller = vtkMultiProcessController.GetGlobalController()
    rank = controller.GetLocalProcessId() if controller else 0
    data = algorithm.GetInput()
    algorithm.GetOutput().ShallowCopy(data)
    found = dict()
    for level in range(data.GetNumberOfLevels()):
        for index in range(data.GetNumberOfDataSets(level)):
            block = data.GetDataSet(level, index)
            if block is None or block.GetNumberOfPoints() == 0:
                continue
            key = '%d_%d_' % (level, index)
            lo, hi = [0, 0, 0], [0, 0, 0]
            data.GetAMRBox(level, index).GetDimensions(lo, hi)
            found[key + 'box'] = numpy.array(lo + hi, dtype=numpy.int64)
            found[key + 'origin'] = numpy.array(block.GetOrigin(), dtype=numpy.float64)
            found[key + 'spacing'] = numpy.array(block.GetSpacing(), dtype=numpy.float64)
            for name in {names!r}:
                array = block.GetCellData().GetArray(name)
                if array is not None:
                    found[key + name] = numpy_support.vtk_to_numpy(array).copy()
    numpy.savez({prefix!r} + '-r%d.npz' % rank, **found)
_phew_collect_amrex(self)
"""
COLLECTED = list(pt.LABEL_ARRAYS) + [DENSITY, "vtkGhostType"]


def read_collected(tag):
    """{(level, lo..., hi...): [block dict from each holding rank]} and {box: holding ranks}."""
    prefix = os.path.join(args.work_dir, tag)
    per_rank = []
    for rank in range(n_ranks):
        path = "%s-r%d.npz" % (prefix, rank)
        blocks = {}
        if os.path.exists(path):
            with np.load(path) as data:
                for key in data.files:
                    level, index, what = key.split("_", 2)
                    blocks.setdefault((int(level), int(index)), {})[what] = data[key]
        per_rank.append(blocks)
    by_box, holders = {}, {}
    for rank, blocks in enumerate(per_rank):
        for (level, _), block in blocks.items():
            box = (level,) + tuple(int(v) for v in block["box"])
            by_box.setdefault(box, []).append(block)
            holders.setdefault(box, []).append(rank)
    return by_box, holders


def run(tag, source):
    """Runs the filter on `source`; returns (blocks by box, holders, table CSV texts, rows held
    by the ranks per table, warnings) or None after an error."""
    finder = PHEWClumpFinder(Input=source, Density=["CELLS", DENSITY])
    for key, value in PROPERTIES.items():
        setattr(finder, key, value)
    errors = pt.ErrorCatcher(finder)
    warnings = []
    finder.GetClientSideObject().AddObserver("WarningEvent", lambda caller, event: warnings.append(event))
    prefix = os.path.join(args.work_dir, tag)
    for stale in glob.glob(prefix + "-r*.npz"):
        os.remove(stale)
    collect = ProgrammableFilter(Input=finder, OutputDataSetType="Same as Input",
                                 Script=COLLECT_SCRIPT.format(names=COLLECTED, prefix=prefix))
    collect.UpdatePipeline()
    collect.GetDataInformation()  # gathered from every rank: they have all written their blocks
    ok = check.check(not errors.messages, "%s: the filter reported: %s" % (tag, errors.text()))
    kind = finder.GetDataInformation().GetDataSetTypeAsString()
    ok &= check.check(kind == "vtkOverlappingAMR", "%s: the Labels output is a %s" % (tag, kind))
    result = None
    if ok:
        by_box, holders = read_collected(tag)
        tables, rows = {}, {}
        for port, suffix in pt.TABLE_PORTS:
            path = "%s-%s.csv" % (prefix, suffix)
            pt.write_table_csv(sm.Fetch(finder, idx=port), path)
            with open(path) as f:
                tables[suffix] = f.read()
            rows[suffix] = OutputPort(finder, port).GetDataInformation().GetNumberOfRows()
        result = (by_box, holders, tables, rows, len(warnings))
    Delete(collect)
    Delete(finder)
    return result


def amrex_reader(name, level=None):
    reader = AMReXBoxLibGridReader(FileNames=[os.path.join(args.work_dir, name)])
    reader.CellArrayStatus = [DENSITY]
    reader.UpdatePipelineInformation()
    finest = int(reader.GetProperty("NumLevels").GetData())  # the finest level's index, not a count
    check.check(finest == hierarchy.nlevels - 1, "%s: the reader's NumLevels is %d, the plotfile's finest "
                "level is %d" % (name, finest, hierarchy.nlevels - 1))
    reader.Level = finest if level is None else level
    reader.UpdatePipeline()
    amr = reader.GetClientSideObject().GetOutputDataObject(0)
    ratios = [amr.GetRefinementRatio(l) for l in range(amr.GetNumberOfLevels())]
    print("%s: AMReX reader, Level %d, metadata levels %d, boxes %s, refinement ratios %s" % (
        name, reader.Level[0] if hasattr(reader.Level, "__getitem__") else reader.Level, amr.GetNumberOfLevels(),
        [amr.GetNumberOfDataSets(l) for l in range(amr.GetNumberOfLevels())], ratios), flush=True)
    return reader


def covered_masks(levels):
    """{box: flat mask of the cells covered by the next level} for the sample's levels 0 to
    levels - 1 (from the block list, not from any reader)."""
    layout = cases.sample_layout(args.source_dir)
    layout.levels = layout.levels[:levels]
    return {(level,) + tuple(lo) + tuple(lo[d] + dims[d] - 1 for d in range(3)):
            layout.covered(level, lo, dims).ravel() for level, index, lo, dims in layout.blocks()}


def missed_blanking(tag, by_box, covered):
    """Blocks whose vtkGhostType lacks REFINEDCELL (8) on a covered cell (printed only)."""
    missed = [box for box, copies in by_box.items() for block in copies
              if "vtkGhostType" in block and np.any(covered[box] & ((block["vtkGhostType"] & 8) == 0))]
    print("%s: %d block(s) lack REFINEDCELL on covered cells" % (tag, len(missed)), flush=True)


def compare(tag, got, reference, dtype, covered):
    """Blocks matched by level and box: geometry, density and labels equal the reference's;
    vtkGhostType has REFINEDCELL (8) exactly on the covered cells. Then the tables."""
    by_box, holders, tables, rows, _ = got
    ref_by_box, _, ref_tables, _, _ = reference
    check.check(set(by_box) == set(ref_by_box), "%s: boxes %d, the reference has %d (%d in common)" % (
        tag, len(by_box), len(ref_by_box), len(set(by_box) & set(ref_by_box))))
    differ = {what: 0 for what in ["origin", "spacing", DENSITY, "vtkGhostType"] + list(pt.LABEL_ARRAYS)}
    for box, ref_copies in sorted(ref_by_box.items()):
        want = ref_copies[0]
        for block in by_box.get(box, []):
            for what in ("origin", "spacing"):
                if not np.array_equal(block[what], want[what]):
                    differ[what] += 1
                    if differ[what] <= 3:
                        check.check(False, "%s: box %s: %s %s, the reference has %s" % (
                            tag, box, what, block[what].tolist(), want[what].tolist()))
            values = block.get(DENSITY)
            expected = want[DENSITY].astype(dtype)
            if values is None or values.dtype != expected.dtype or values.tobytes() != expected.tobytes():
                differ[DENSITY] += 1
            ghost = block.get("vtkGhostType")
            blanked = np.where(covered[box], 8, 0)
            if ghost is None or not np.array_equal(ghost & 8, blanked):
                differ["vtkGhostType"] += 1
            for what in pt.LABEL_ARRAYS:
                mine, theirs = block.get(what), want.get(what)
                same = (mine is not None and theirs is not None and mine.dtype == theirs.dtype and
                        mine.shape == theirs.shape and mine.tobytes() == theirs.tobytes())
                if not same:
                    differ[what] += 1
                    if differ[what] <= 3:
                        cells = (int(np.count_nonzero(mine != theirs)) if mine is not None and theirs is not None
                                 and mine.shape == theirs.shape else "all")
                        check.check(False, "%s: box %s: %s differs from the .vthb run in %s cells" % (
                            tag, box, what, cells))
    for what, count in differ.items():
        check.check(count == 0, "%s: %s differs on %d block(s)" % (tag, what, count))
    spread = {}
    for box in by_box:
        for rank in holders[box]:
            spread[rank] = spread.get(rank, 0) + 1
    print("%s: %d boxes, %d cells compared, blocks per rank %s" % (
        tag, len(by_box), builtins.sum(int(b[0]["PeakPatchId"].size) for b in by_box.values() if "PeakPatchId" in b[0]),
        [spread.get(r, 0) for r in range(n_ranks)]), flush=True)
    for suffix, text in ref_tables.items():
        check.check(tables[suffix] == text, "%s: the %s table differs from the .vthb run's" % (tag, suffix))
        check.check(rows[suffix] == text.count("\n") - 1, "%s: the ranks hold %d %s rows together, expected %d"
                    % (tag, rows[suffix], suffix, text.count("\n") - 1))


# ---------------------------------------------------------------------------------------------
# The runs (in a function: the Programmable Filter's script runs in this module's namespace on
# rank 0 and imports numpy_interface's names into it, which would replace globals such as dtype)


def main():
    # 1. The reference: datasets/amr_sample.vthb, all levels.
    vthb = XMLUniformGridAMRReader(FileName=[SAMPLE])
    vthb.DefaultNumberOfLevels = 0
    reference = run("vthb", vthb)
    Delete(vthb)
    if reference is None:
        return
    # (Under several ranks, VTK 9.2's XML AMR reader leaves covered cells unblanked where the
    # covering block is another rank's; the filter finds covered cells from the AMR boxes.)
    missed_blanking("vthb", reference[0], covered_masks(4))
    n_clumps = reference[2]["clumps"].count("\n") - 1
    print("vthb: %d clumps, %d haloes, %d dendrogram nodes" % (
        n_clumps, reference[2]["haloes"].count("\n") - 1, reference[2]["dendrogram"].count("\n") - 1), flush=True)
    check.check(n_clumps == EXPECTED_CLUMPS, "vthb: %d clumps, expected %d" % (n_clumps, EXPECTED_CLUMPS))
    check.check(len(reference[0]) == builtins.sum(len(b) for b in hierarchy.blocks),
                "vthb: %d boxes held, the sample has %d" % (len(reference[0]), builtins.sum(len(b) for b in hierarchy.blocks)))

    # The one-process answers of phew_plugin_amr_reference (same file, same parameters).
    if answers_dir and os.path.exists(os.path.join(answers_dir, "amr_sample-labels.npz")):
        for _, suffix in pt.TABLE_PORTS:
            with open(os.path.join(answers_dir, "amr_sample-%s.csv" % suffix)) as f:
                check.check(reference[2][suffix] == f.read(), "vthb: the %s table differs from the one-process answer"
                            % suffix)
        layout = cases.sample_layout(args.source_dir)
        with np.load(os.path.join(answers_dir, "amr_sample-labels.npz")) as data:
            wrong = 0
            for level, index, lo, dims in layout.blocks():
                box = (level,) + tuple(lo) + tuple(lo[d] + dims[d] - 1 for d in range(3))
                for name in pt.LABEL_ARRAYS:
                    want = data["%d_%d_%s" % (level, index, name)]
                    got = reference[0].get(box, [{}])[0].get(name)
                    wrong += int(got is None or got.dtype != want.dtype or got.tobytes() != want.tobytes())
            check.check(wrong == 0, "vthb: %d label arrays differ from the one-process answer" % wrong)
        print("vthb: compared with the one-process answers in %s" % answers_dir, flush=True)
    elif answers_dir:
        check.check(False, "no one-process answers in %s (fixture phew_plugin_amr_reference)" % answers_dir)

    # 2. The plotfiles, all levels.
    for name, (dtype, _) in PLOTFILES.items():
        reader = amrex_reader(name)
        got = run(name, reader)
        if got is not None:
            compare(name, got, reference, dtype, covered_masks(4))
            check.check(got[4] == 0, "%s: the filter warned %d time(s) with every level loaded" % (name, got[4]))
        Delete(reader)

    # 3. Levels 0 to 2 only: the reader's finest loaded level is 2 (metadata still lists level 3).
    vthb = XMLUniformGridAMRReader(FileName=[SAMPLE])
    vthb.DefaultNumberOfLevels = 3
    partial_reference = run("vthb_levels3", vthb)
    Delete(vthb)
    reader = amrex_reader("plt_f32", level=2)
    got = run("plt_f32_levels3", reader)
    Delete(reader)
    if partial_reference is not None and got is not None:
        check.check(got[4] > 0, "plt_f32_levels3: no warning that level 3 is not loaded")
        compare("plt_f32_levels3", got, partial_reference, np.float32, covered_masks(3))
        check.check(partial_reference[2]["clumps"] != reference[2]["clumps"],
                    "levels 0-2: the same clumps as with every level (the case does not test anything)")


main()
check.finish(exit_on_success=False)
