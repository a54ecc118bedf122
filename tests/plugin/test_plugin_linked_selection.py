"""Linked selection (the LinkedSelection proxy that the GUI puts on every other output port):
a selection on one output of the PHEW Clump Finder, turned into a selection of the same clumps
or haloes on another output, must extract exactly the elements an independent numpy count says.

On datasets/sample.vti with the filter's defaults:
- Clumps table rows -> Labels cells: the cells whose ClumpId is that of those rows;
- a Dendrogram table row of a structure -> Labels: every clump below it (walked here from
  the ParentId column);
- a Haloes table row -> Labels: the cells of that halo (HaloId);
- Labels cells -> Clumps table rows, Dendrogram Plot lines (LeafClumpId: the clump's own
  vertical and horizontal line, no structure) and Markers (the clump's peak);
- a cell outside every clump -> nothing.
Also a row of the Groups table of Friends-of-Friends -> its particles (GroupId, one process).
Run with one process and under mpiexec (the labels are distributed, the tables on rank 0: the
ids are gathered from every rank, so the answers are the same).
"""
import os

import numpy as np
from paraview import servermanager as sm
from paraview.simple import (AppendSelections, ExtractSelection, IDSelectionSource, LoadPlugin,
                             OutputPort, SaveData, Threshold, ThresholdSelectionSource,
                             XMLImageDataReader)
from vtkmodules.util import numpy_support
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader

import phew_plugin_testing as testing

args = testing.parse_args()
LoadPlugin(args.plugin, ns=globals())  # defines PHEWClumpFinder
check = testing.Checker("phew_plugin_linked_selection").check

reader = XMLImageDataReader(FileName=os.path.join(args.source_dir, "datasets", "sample.vti"))
finder = PHEWClumpFinder(Input=reader)  # noqa: F821 (from the plugin)
finder.Density = ["CELLS", "density"]
finder.UpdatePipeline()


def column(data, name, attribute):
    array = attribute(data).GetArray(name) if data is not None else None
    return numpy_support.vtk_to_numpy(array) if array is not None and array.GetNumberOfTuples() \
        else np.zeros(0, dtype=np.int64)


saved = [0]


def gather(proxy):
    """Every process's cells of an unstructured grid output, written and read back (a fetch
    under mpiexec loses pieces)."""
    saved[0] += 1
    path = os.path.join(args.work_dir, "cells%d.pvtu" % saved[0])
    SaveData(path, proxy=proxy, DataMode="Binary")
    reader = vtkXMLPUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput()


# The reference labels: every cell in a clump and every cell in a halo, by ParaView's own
# Threshold.
def cells_with(name):
    kept = Threshold(Input=OutputPort(finder, 0), Scalars=["CELLS", name], LowerThreshold=0,
                     UpperThreshold=2 ** 62)
    kept.UpdatePipeline()
    data = gather(kept)
    return (column(data, "ClumpId", lambda d: d.GetCellData()),
            column(data, "HaloId", lambda d: d.GetCellData()))


cell_clump, _ = cells_with("ClumpId")
_, cell_halo = cells_with("HaloId")
clumps = testing.fetch(finder, 1)
row_clump = column(clumps, "ClumpId", lambda d: d.GetRowData())
dendrogram = testing.fetch(finder, 2)
node_id = column(dendrogram, "NodeId", lambda d: d.GetRowData())
node_parent = column(dendrogram, "ParentId", lambda d: d.GetRowData())
node_clump = column(dendrogram, "ClumpId", lambda d: d.GetRowData())
haloes = testing.fetch(finder, 3)
row_halo = column(haloes, "HaloId", lambda d: d.GetRowData())
check(len(row_clump) >= 6 and len(node_id) > len(row_clump) and len(row_halo) >= 2,
      "the sample has clumps, structures and haloes (%d, %d, %d)"
      % (len(row_clump), len(node_id), len(row_halo)))

proxies = sm.ProxyManager()


def linked(source_port, selection, field, clump_array="ClumpId"):
    """The selection of `source_port` carried to another port whose ids are in `field`."""
    link = sm._getPyProxy(proxies.NewProxy("phew_selection", "LinkedSelection"))
    link.Input = OutputPort(finder, source_port)
    link.Selection = selection
    link.FieldType = field
    link.ClumpIdArrayName = clump_array
    # as the GUI hands it to a port: inside an AppendSelections
    return AppendSelections(Input=[link], SelectionNames=["s0"], Expression="s0")


def extract(target_port, selection):
    extracted = ExtractSelection(Input=OutputPort(finder, target_port), Selection=selection)
    extracted.UpdatePipeline()
    # the labels' cells are on every process; the tables and drawings on the first
    return gather(extracted) if target_port == 0 else sm.Fetch(extracted)


def rows(ids):
    return IDSelectionSource(FieldType="ROW", IDs=[v for i in ids for v in (0, int(i))])


def extracted_cells(data, name):
    values = column(data, name, lambda d: d.GetCellData())
    return np.sort(values)


# 1. Clumps rows -> labelled cells.
picked_rows = [1, len(row_clump) - 2]
wanted = set(int(row_clump[r]) for r in picked_rows)
got = extracted_cells(extract(0, linked(1, rows(picked_rows), "CELL")), "ClumpId")
expected = np.sort(cell_clump[np.isin(cell_clump, list(wanted))])
check(len(got) == len(expected) and len(got) > 0 and np.array_equal(got, expected),
      "Clumps rows %s (clumps %s) select their %d cells, got %d"
      % (picked_rows, sorted(wanted), len(expected), len(got)))

# 2. A structure of the dendrogram -> every clump below it.
children = {}
for node, parent in zip(node_id, node_parent):
    children.setdefault(int(parent), []).append(int(node))
clump_of_node = {int(n): int(c) for n, c in zip(node_id, node_clump)}


def clumps_below(node):
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        if clump_of_node.get(current, -1) >= 0:
            found.add(clump_of_node[current])
        stack.extend(children.get(current, []))
    return found


structures = [r for r in range(len(node_id)) if node_clump[r] < 0 and len(clumps_below(int(node_id[r]))) >= 2]
check(len(structures) > 0, "the dendrogram has a structure of two clumps or more")
if structures:
    row = structures[0]
    below = clumps_below(int(node_id[row]))
    got = extracted_cells(extract(0, linked(2, rows([row]), "CELL")), "ClumpId")
    expected = np.sort(cell_clump[np.isin(cell_clump, list(below))])
    check(len(got) > 0 and np.array_equal(got, expected),
          "dendrogram node %d selects the cells of its clumps %s: %d expected, %d got"
          % (node_id[row], sorted(below), len(expected), len(got)))

# 3. A halo -> its cells.
halo = int(row_halo[0])
got = extracted_cells(extract(0, linked(3, rows([0]), "CELL")), "HaloId")
expected = np.sort(cell_halo[cell_halo == halo])
check(len(got) > 0 and np.array_equal(got, expected),
      "halo %d selects its %d cells, got %d" % (halo, len(expected), len(got)))

# 4. Labelled cells -> the other outputs. With one process: three cells by index, as a click
# in the GUI makes; under mpiexec (indices are per process): the clump's cells by value.
clump = int(row_clump[2])
if testing.number_of_ranks() == 1:
    image = testing.fetch(finder, 0)
    image_clump = column(image, "ClumpId", lambda d: d.GetCellData())
    cells = np.flatnonzero(image_clump == clump)[:3]
    on_labels = IDSelectionSource(FieldType="CELL", IDs=[v for c in cells for v in (0, int(c))])
    outside = int(np.flatnonzero(image_clump < 0)[0])
    nothing = IDSelectionSource(FieldType="CELL", IDs=[0, outside])
else:
    on_labels = ThresholdSelectionSource(FieldType="CELL", ArrayName="ClumpId", Thresholds=[clump, clump])
    nothing = ThresholdSelectionSource(FieldType="CELL", ArrayName="ClumpId", Thresholds=[-1, -1])
table_rows = extract(1, linked(0, on_labels, "ROW"))
got = column(table_rows, "ClumpId", lambda d: d.GetRowData())
check(list(got) == [clump], "cells of clump %d select its row of the Clumps table, got %s" % (clump, list(got)))
plot = extract(5, linked(0, on_labels, "CELL", "LeafClumpId"))
leaf = column(plot, "LeafClumpId", lambda d: d.GetCellData())
check(len(leaf) in (1, 2) and set(leaf.tolist()) == {clump},
      "they select clump %d's own lines of the Dendrogram Plot (no structure): %s" % (clump, leaf.tolist()))
markers = extract(6, linked(0, on_labels, "POINT"))
peaks = []
if markers is not None:
    iterator = markers.NewIterator()
    iterator.InitTraversal()
    while not iterator.IsDoneWithTraversal():
        block = iterator.GetCurrentDataObject()
        peaks += column(block, "ClumpId", lambda d: d.GetPointData()).tolist()
        iterator.GoToNextItem()
check(peaks == [clump], "they select clump %d's peak among the Markers, got %s" % (clump, peaks))

# 5. A cell in no clump names nothing.
got = extract(0, linked(0, nothing, "CELL"))
check(got is None or got.GetNumberOfCells() == 0,
      "a cell outside the clumps selects nothing (%s cells)" % (None if got is None else got.GetNumberOfCells()))

# 6. Friends-of-Friends (one process): a row of the Groups table selects its particles.
if testing.number_of_ranks() == 1:
    import points_cases
    from paraview.simple import ProgrammableSource

    pos, mass, vel, ids = points_cases.make_particles()
    path = points_cases.save_particles(os.path.join(args.work_dir, "particles.npz"), pos, mass, vel, ids)
    particles = points_cases.share_source(ProgrammableSource, path, "contiguous")
    fof = FriendsofFriends(Input=particles)  # noqa: F821 (from the plugin)
    fof.UpdatePipeline()
    point_group = column(testing.fetch(fof, 0), "GroupId", lambda d: d.GetPointData())
    groups = column(testing.fetch(fof, 1), "GroupId", lambda d: d.GetRowData())
    link = sm._getPyProxy(proxies.NewProxy("phew_selection", "LinkedSelection"))
    link.Input = OutputPort(fof, 1)
    link.Selection = rows([1])
    link.FieldType = "POINT"
    extracted = ExtractSelection(Input=OutputPort(fof, 0), Selection=link)
    extracted.UpdatePipeline()
    got = column(sm.Fetch(extracted), "GroupId", lambda d: d.GetPointData())
    expected = int(np.count_nonzero(point_group == groups[1])) if len(groups) > 1 else -1
    check(len(got) == expected and expected > 0 and set(got.tolist()) == {int(groups[1])},
          "Friends-of-Friends group %s selects its %d particles, got %d"
          % (groups[1] if len(groups) > 1 else None, expected, len(got)))

testing.Checker.finish(check.__self__, exit_on_success=False)
