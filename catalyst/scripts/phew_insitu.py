"""What the Catalyst scripts of this folder share (imported by them; not a Catalyst script):
where they write, which rank this is, the catalogues as CSV in the command-line tool's format
(scripts/demo.py's writer: the scripts run from the source tree, beside the plugin they load),
and the merger trees' links per step and as one table."""
import os
import sys

from paraview import servermanager

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "scripts"))
from demo import write_csv  # noqa: E402
from halo_palette import halo_colours  # noqa: E402,F401 (the scripts' colours, for clumps.py)

OUTPUT = os.environ.get("PHEW_INSITU_OUTPUT", "insitu_output")


def rank():
    return servermanager.vtkProcessModule.GetProcessModule().GetPartitionId()


def ranks():
    return servermanager.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()


def update(proxy, time):
    """Runs a proxy's filter for this call and returns the filter. It updates the filter itself,
    not its proxy: a proxy's UpdatePipeline also gathers the ranges of every output array over
    the ranks (ParaView's data information), which the catalogues do not need and which took
    longer than the clump finding. Every update asks for this rank's piece of as many as there
    are ranks, so that filters downstream of another (a merger tree after a finder) ask it for
    what it already has: with the default request each of them made the finder run again."""
    algorithm = proxy.GetClientSideObject()
    algorithm.UpdateTimeStep(time, rank(), ranks())
    return algorithm


def write_tables(step, tables):
    """Rank 0 writes each (name, vtkTable) as OUTPUT/name_STEP.csv (the filters' tables are
    complete on rank 0 and empty on the others)."""
    if rank() != 0:
        return
    os.makedirs(OUTPUT, exist_ok=True)
    for name, table in tables:
        write_csv(table, os.path.join(OUTPUT, "%s_%06d.csv" % (name, step)))


_trees = {}  # tree name -> [header, rows...] of every step so far (rank 0)


def write_links(name, step, table):
    """Rank 0: the PHEW Merger Tree's links of this step as OUTPUT/name_links_STEP.csv, with the
    simulation's step as the first column, TimeStep; kept for write_trees."""
    if rank() != 0 or table.GetNumberOfColumns() == 0:  # (no columns: the tree failed at this step)
        return
    os.makedirs(OUTPUT, exist_ok=True)
    path = os.path.join(OUTPUT, "%s_links_%06d.csv" % (name, step))
    write_csv(table, path)
    with open(path) as f:
        header, *rows = f.read().splitlines()
    lines = ["TimeStep," + header] + ["%d,%s" % (step, row) for row in rows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    _trees.setdefault(name, lines[:1]).extend(lines[1:])


def write_trees():
    """Rank 0: each tree's links of every step as one table, OUTPUT/name_tree.csv."""
    for name, lines in _trees.items():
        with open(os.path.join(OUTPUT, "%s_tree.csv" % name), "w") as f:
            f.write("\n".join(lines) + "\n")
