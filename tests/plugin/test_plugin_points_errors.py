"""pvbatch test: the PHEW Clump Finder and Particle Density fail cleanly on bad particles.

Each bad case (no points, a NaN position, fewer particles than neighbours, a periodic box that
does not hold the points, periodic axes with the box from the data bounds, points without
volume, inputs that are not point sets, missing or malformed mass, velocity, id and density
arrays, a bad neighbour count) must give an error message naming the problem, leave every
output empty, and not crash pvbatch; the filter must work again on good particles after each.

    pvbatch test_plugin_points_errors.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import (vtkCellArray, vtkImageData, vtkMultiBlockDataSet, vtkPolyData,
                                           vtkRectilinearGrid, vtkTable)

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_points_errors")

rng = np.random.default_rng(3)
N = 400
pos = np.concatenate([0.5 + 0.05 * rng.standard_normal((200, 3)), rng.random((N - 200, 3))])
pos = np.clip(pos, 0.0, 0.999)


def point_set(p, arrays=None, cell_arrays=None):
    out = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_support.numpy_to_vtk(np.ascontiguousarray(p, dtype=np.float64).reshape(-1, 3), deep=1))
    out.SetPoints(points)
    for name, values in (arrays or {}).items():
        array = numpy_support.numpy_to_vtk(np.ascontiguousarray(values), deep=1)
        array.SetName(name)
        out.GetPointData().AddArray(array)
    if cell_arrays:
        verts = vtkCellArray()
        for i in range(len(p)):
            verts.InsertNextCell(1)
            verts.InsertCellPoint(i)
        out.SetVerts(verts)
        for name, values in cell_arrays.items():
            array = numpy_support.numpy_to_vtk(np.ascontiguousarray(values), deep=1)
            array.SetName(name)
            out.GetCellData().AddArray(array)
    return out


good = point_set(pos, {"mass": 1.0 + rng.random(N), "vel": rng.standard_normal((N, 3)),
                       "ids": np.arange(N, dtype=np.int64) * 2, "fids": np.arange(N) + 0.5,
                       "rho": 1.0 + rng.random(N), "bad_rho": np.where(np.arange(N) == 17, np.nan, 1.0),
                       "negative_mass": np.where(np.arange(N) == 5, -1.0, 1.0),
                       "twins": np.arange(N, dtype=np.int64) // 2},
                 cell_arrays={"cell_mass": np.ones(N)})
producer = TrivialProducer()
producer.GetClientSideObject().SetOutput(good)


def use(data):
    producer.GetClientSideObject().SetOutput(data)
    producer.MarkModified(producer)


GOOD_PROPERTIES = dict(EstimateDensity=1, Mass=["POINTS", "None"], Velocity=["POINTS", "None"], Id=["POINTS", "None"],
                       NumberOfNeighbours=16, NumberOfDensityNeighbours=64, BoxFromDataBounds=1, PeriodicX=0,
                       PeriodicY=0, PeriodicZ=0)


def outputs_empty(label, proxy, ports):
    algorithm = proxy.GetClientSideObject()
    labelled = algorithm.GetOutputDataObject(0)
    if labelled.IsA("vtkDataSet") or labelled.IsA("vtkCompositeDataSet"):
        check.check(labelled.GetNumberOfPoints() == 0, "%s: the output has %d points" % (label, labelled.GetNumberOfPoints()))
    else:
        check.check(labelled.GetNumberOfRows() == 0, "%s: the %s output is not empty" % (label, labelled.GetClassName()))
    for port in ports:
        table = algorithm.GetOutputDataObject(port)
        check.check(table.GetNumberOfRows() == 0 and table.GetNumberOfColumns() == 0,
                    "%s: table %d is not empty (%d columns)" % (label, port, table.GetNumberOfColumns()))


def attempt(proxy, errors, properties):
    errors.clear()
    for key, value in properties.items():
        setattr(proxy, key, value)
    proxy.UpdatePipeline()
    return errors.text()


def expect_error(proxy, errors, label, words, data=None, ports=(1, 2, 3), **properties):
    use(data if data is not None else good)
    text = attempt(proxy, errors, properties)
    print("%s -> %s" % (label, text.strip().replace("\n", " | ") or "(no error)"), flush=True)
    check.check(bool(errors.messages), "%s: no error message" % label)
    for word in words:
        check.check(word.lower() in text.lower(), "%s: the message does not mention '%s': %s" % (label, word, text))
    outputs_empty(label, proxy, ports)
    # and back to good particles
    use(good)
    text = attempt(proxy, errors, GOOD_PROPERTIES if ports else {
        k: v for k, v in GOOD_PROPERTIES.items() if proxy.GetProperty(k) is not None})
    check.check(not errors.messages, "%s: the good particles fail afterwards: %s" % (label, text))
    output = proxy.GetClientSideObject().GetOutputDataObject(0)
    check.check(output.GetNumberOfPoints() == N and output.GetPointData().GetArray("Density") is not None,
                "%s: no Density on the good particles afterwards" % label)


finder = PHEWClumpFinder(Input=producer)
for key, value in GOOD_PROPERTIES.items():
    setattr(finder, key, value)
finder.DensityThreshold = 2.0
errors = pt.ErrorCatcher(finder)
attempt(finder, errors, {})
check.check(not errors.messages, "baseline: %s" % errors.text())
check.check(finder.GetClientSideObject().GetOutputDataObject(1).GetNumberOfRows() >= 1, "baseline: no clumps")


def bad(**properties):
    return dict(GOOD_PROPERTIES, **properties)


# The particles themselves.
expect_error(finder, errors, "no points", ["no points"], data=point_set(np.zeros((0, 3))))
with_nan = pos.copy()
with_nan[123, 1] = np.nan
expect_error(finder, errors, "NaN position", ["particle 123", "not finite"], data=point_set(with_nan))
expect_error(finder, errors, "too few particles", ["50 particles", "fewer than", "65"], data=point_set(pos[:50]))
expect_error(finder, errors, "too few for the graph", ["fewer than"], data=point_set(pos[:10]),
             NumberOfDensityNeighbours=4)
expect_error(finder, errors, "periodic box too small", ["outside the box"],
             **bad(BoxFromDataBounds=0, BoxOrigin=[0, 0, 0], BoxSize=[0.5, 0.5, 0.5], PeriodicX=1, PeriodicY=1,
                   PeriodicZ=1))
expect_error(finder, errors, "box too small", ["outside the box"],
             **bad(BoxFromDataBounds=0, BoxOrigin=[0.1, 0, 0], BoxSize=[1, 1, 1]))
expect_error(finder, errors, "periodic without a box", ["periodic", "Box From Data Bounds"], **bad(PeriodicY=1))
flat = pos.copy()
flat[:, 2] = 0.25
expect_error(finder, errors, "flat points", ["same z", "Box From Data Bounds"], data=point_set(flat))
expect_error(finder, errors, "zero box size", ["box"], **bad(BoxFromDataBounds=0, BoxSize=[1, 0, 1]))
expect_error(finder, errors, "no neighbours", ["neighbours", "at least 1"], **bad(NumberOfNeighbours=0))
expect_error(finder, errors, "too many neighbours", ["4096"], **bad(NumberOfDensityNeighbours=5000))

# Inputs that are not point sets.
image = vtkImageData()
image.SetDimensions(4, 4, 4)
blocks = vtkMultiBlockDataSet()
blocks.SetBlock(0, point_set(pos))
blocks.SetBlock(1, image)
expect_error(finder, errors, "a block that is an image", ["vtkMultiBlockDataSet", "flat index 2", "vtkImageData",
                                                          "not a point set"], data=blocks)
expect_error(finder, errors, "a table", ["unsupported input type vtkTable"], data=vtkTable())
grid = vtkRectilinearGrid()
grid.SetDimensions(3, 3, 3)
expect_error(finder, errors, "a rectilinear grid", ["unsupported input type vtkRectilinearGrid"], data=grid)

# Arrays.
expect_error(finder, errors, "missing mass", ["mass array 'no_mass'", "not a point array"], **bad(Mass=["POINTS", "no_mass"]))
expect_error(finder, errors, "cell masses", ["mass array 'cell_mass'", "point data"], **bad(Mass=["CELLS", "cell_mass"]))
expect_error(finder, errors, "scalar velocity", ["velocity array 'mass'", "1 components", "needs 3"],
             **bad(Velocity=["POINTS", "mass"]))
expect_error(finder, errors, "vector mass", ["mass array 'vel'", "3 components", "needs 1"], **bad(Mass=["POINTS", "vel"]))
expect_error(finder, errors, "negative mass", ["particle 5", "mass"], **bad(Mass=["POINTS", "negative_mass"]))
expect_error(finder, errors, "fractional ids", ["id array 'fids'", "whole numbers"], **bad(Id=["POINTS", "fids"]))
expect_error(finder, errors, "no density selected", ["no density array selected"],
             **bad(EstimateDensity=0, Density=["POINTS", "None"]))
expect_error(finder, errors, "missing density", ["density array 'no_rho'"], **bad(EstimateDensity=0,
                                                                                   Density=["POINTS", "no_rho"]))
expect_error(finder, errors, "NaN density", ["NaN"], **bad(EstimateDensity=0, Density=["POINTS", "bad_rho"]))
finder.Density = ["POINTS", "rho"]

# Duplicate ids (the core checks that ids are unique over all ranks).
expect_error(finder, errors, "duplicate ids", ["more than one particle", "unique"], **bad(Id=["POINTS", "twins"]))

# Periodic is for images and AMR: on particles it is ignored, with a warning.
warnings = []
from vtkmodules.vtkCommonCore import vtkCommand  # noqa: E402
tag = finder.GetClientSideObject().AddObserver(vtkCommand.WarningEvent, lambda *a: warnings.append(1))
attempt(finder, errors, dict(GOOD_PROPERTIES, Periodic=1))
check.check(not errors.messages and warnings, "Periodic on particles: errors %s, %d warnings" % (errors.text(), len(warnings)))
finder.GetClientSideObject().RemoveObserver(tag)
finder.Periodic = 0
Delete(finder)

# Particle Density.
estimator = ParticleDensity(Input=producer)
errors = pt.ErrorCatcher(estimator)
expect_error(estimator, errors, "density: no points", ["no points"], data=point_set(np.zeros((0, 3))), ports=())
expect_error(estimator, errors, "density: NaN position", ["not finite"], data=point_set(with_nan), ports=())
expect_error(estimator, errors, "density: too few particles", ["fewer than"], data=point_set(pos[:50]), ports=())
expect_error(estimator, errors, "density: an image", ["unsupported input type vtkImageData"], data=image, ports=())
expect_error(estimator, errors, "density: missing mass", ["mass array 'no_mass'"], ports=(), Mass=["POINTS", "no_mass"])
estimator.Mass = ["POINTS", "None"]
Delete(estimator)

names = sorted(good.GetPointData().GetArrayName(i) for i in range(good.GetPointData().GetNumberOfArrays()))
check.check("Density" not in names and "ClumpId" not in names, "the input's arrays changed: %s" % names)
check.finish()
