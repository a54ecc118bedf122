"""pvbatch test: one message per failure, from every filter that runs the core, and the
message names what is wrong.

Every message a run prints goes to VTK's output window (no ErrorEvent observer here, which
would keep the filter's own message off it), so the window holds the filter's message and any
the pipeline adds, such as the executive's "... returned failure for request". For the PHEW
Clump Finder, Particle Density, Friends-of-Friends and HOP Halo Finder, on particles with a NaN
position and on particles with an infinite position (the box from the data bounds), and for
the Clump Finder on an input of another type: exactly one error, which names the particle
("particle 17 has a position that is not finite"), not the box; the filter works again on good
particles afterwards, with no message.

    pvbatch test_plugin_messages.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkPoints, vtkStringOutputWindow
from vtkmodules.vtkCommonDataModel import vtkPolyData, vtkTable

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_messages")

rng = np.random.default_rng(5)
N = 300
pos = np.concatenate([0.5 + 0.05 * rng.standard_normal((150, 3)), rng.random((N - 150, 3))])
pos = np.clip(pos, 0.0, 0.999)


def point_set(p):
    out = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_support.numpy_to_vtk(np.ascontiguousarray(p, dtype=np.float64), deep=1))
    out.SetPoints(points)
    return out


with_nan = pos.copy()
with_nan[17, 1] = np.nan
with_inf = pos.copy()
with_inf[17, 2] = np.inf
with_minus_inf = pos.copy()
with_minus_inf[17, 0] = -np.inf

producer = TrivialProducer()
console = vtkOutputWindow.GetInstance()
window = vtkStringOutputWindow()


def run(proxy, data):
    """The messages of one update on `data`: (errors, their text). The string window holds
    them only during the update (a Python error afterwards must reach the console)."""
    producer.GetClientSideObject().SetOutput(data)
    producer.MarkModified(producer)
    before = len(window.GetOutput())
    vtkOutputWindow.SetInstance(window)
    try:
        proxy.UpdatePipeline()
    finally:
        vtkOutputWindow.SetInstance(console)
    text = window.GetOutput()[before:]
    return text.count("ERROR:"), text


filters = {
    "PHEW Clump Finder": lambda: PHEWClumpFinder(Input=producer, DensityThreshold=2.0),
    "Particle Density": lambda: ParticleDensity(Input=producer),
    "Friends-of-Friends": lambda: FriendsofFriends(Input=producer, MinimumMembers=5),
    "HOP Halo Finder": lambda: HOPHaloFinder(Input=producer, MinimumMembers=5),
}
for name, make in filters.items():
    proxy = make()
    for what, data in (("a NaN position", with_nan), ("an infinite position", with_inf),
                       ("a position at minus infinity", with_minus_inf)):
        n, text = run(proxy, point_set(data))
        check.check(n == 1, "%s, %s: %d error messages, not one:\n%s" % (name, what, n, text))
        check.check("particle 17 has a position that is not finite" in text,
                    "%s, %s: the message does not name the particle:\n%s" % (name, what, text))
        check.check("returned failure" not in text, "%s, %s: VTK adds its own failure:\n%s" % (name, what, text))
        n, text = run(proxy, point_set(pos))
        check.check(n == 0 and "Warning" not in text, "%s: good particles after %s: %s" % (name, what, text))
    if name == "PHEW Clump Finder":
        n, text = run(proxy, vtkTable())
        check.check(n == 1 and "unsupported input type vtkTable" in text,
                    "%s, a table: %d error messages:\n%s" % (name, n, text))
    Delete(proxy)
check.finish()
