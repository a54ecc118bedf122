"""What the Catalyst scripts of this folder share (imported by them; not a Catalyst script):
where they write, which rank this is, and the catalogues as CSV in the command-line tool's
format (scripts/demo.py's writer: the scripts run from the source tree, beside the plugin
they load)."""
import os
import sys

from paraview import servermanager

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "scripts"))
from demo import write_csv  # noqa: E402

OUTPUT = os.environ.get("PHEW_INSITU_OUTPUT", "insitu_output")


def rank():
    return servermanager.vtkProcessModule.GetProcessModule().GetPartitionId()


def write_tables(step, tables):
    """Rank 0 writes each (name, vtkTable) as OUTPUT/name_STEP.csv (the filters' tables are
    complete on rank 0 and empty on the others)."""
    if rank() != 0:
        return
    os.makedirs(OUTPUT, exist_ok=True)
    for name, table in tables:
        write_csv(table, os.path.join(OUTPUT, "%s_%06d.csv" % (name, step)))
