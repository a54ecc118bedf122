"""Writes the project's particle sample (datasets/particles_sample-pos.raw and -vel.raw:
20000 float32 particles with velocities in the periodic unit box) as a VTK XML polydata file
with one vertex per particle and the point array 'velocity', for the GUI tests to open.

    pvpython tests/gui/make_particles.py SOURCE_DIR OUTPUT.vtp
"""
import os
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

source, output = sys.argv[1], sys.argv[2]
prefix = os.path.join(source, "datasets", "particles_sample")
position = np.fromfile(prefix + "-pos.raw", dtype="<f4").reshape(-1, 3)
velocity = np.fromfile(prefix + "-vel.raw", dtype="<f4").reshape(-1, 3)
particles = vtkPolyData()
points = vtkPoints()
points.SetData(numpy_to_vtk(position, deep=1))
particles.SetPoints(points)
vertices = vtkCellArray()
n = len(position)
vertices.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1, dtype=np.int64), deep=1),
                 numpy_to_vtkIdTypeArray(np.arange(n, dtype=np.int64), deep=1))
particles.SetVerts(vertices)
v = numpy_to_vtk(velocity, deep=1)
v.SetName("velocity")
particles.GetPointData().AddArray(v)
writer = vtkXMLPolyDataWriter()
writer.SetInputData(particles)
writer.SetFileName(output)
writer.SetDataModeToBinary()
if not writer.Write():
    sys.exit("make_particles: could not write %s" % output)
print("wrote %d particles to %s" % (n, output))
