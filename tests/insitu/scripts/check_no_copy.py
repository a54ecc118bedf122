# script-version: 2
# Test script: the arrays Catalyst gives the pipelines must be the simulation's own memory
# (adaptor_probe passes their addresses as PROBE_ADDRESS_*); raises if one is a copy.
import os

from paraview import catalyst  # noqa: F401
from paraview.simple import *  # noqa: F401,F403

grid = TrivialProducer(registrationName="grid")
particles = TrivialProducer(registrationName="particles")


def address(array):
    """The address of an array's first value, as adaptor_probe prints it (hex, no 0x)."""
    text = array.GetVoidPointer(0)  # '_00005565a5584930_p_void'
    return "%x" % int(text.split("_")[1], 16)


def catalyst_execute(info):
    grid.UpdatePipeline(info.time)
    particles.UpdatePipeline(info.time)
    image = grid.GetClientSideObject().GetOutputDataObject(0)
    points = particles.GetClientSideObject().GetOutputDataObject(0)
    checks = [("DENSITY", image.GetCellData().GetArray("density")),
              ("POSITION", points.GetPoints().GetData()),
              ("ID", points.GetPointData().GetArray("ParticleId"))]
    for name, array in checks:
        if array is None or array.GetNumberOfTuples() == 0:
            continue  # a rank without cells or particles
        expected = os.environ["PROBE_ADDRESS_" + name]
        if address(array) != expected:
            raise RuntimeError("the %s array is a copy: at %s, the simulation's at %s" % (name, address(array), expected))
    # a mark per rank and step ($PROBE_MARKS), for the test to see that every rank checked
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    rank = vtkMultiProcessController.GetGlobalController().GetLocalProcessId()
    marks = os.environ.get("PROBE_MARKS", ".")
    open(os.path.join(marks, "checked_rank%d_step%d" % (rank, info.timestep)), "w").close()
