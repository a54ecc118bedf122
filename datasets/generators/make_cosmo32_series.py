"""A time series of particles for the merger tree: the dark-matter particles of the shared RAMSES
run ../shared/data/ramses/cosmo32_dm (32^3 particles, periodic 25 Mpc box), outputs 2 and 3
(a = 0.681 and 1.035; output 1 holds the initial conditions, without haloes), as VTK XML PolyData
files that ParaView opens as one series (datasets/cosmo32_series/cosmo32_0.vtp, cosmo32_1.vtp):

- Points: the positions in Mpc (float32, comoving, periodic box [0, 25)^3);
- point data ParticleIDs (int32, RAMSES's ids: the same particle at both steps);
- field data TimeValue (the scale factor: ParaView's time for the file), and the metadata the
  plugin's snapshot readers write (BoxOrigin, BoxSize, Periodic, Cosmological, ScaleFactor, Code,
  LengthUnit), so that Friends-of-Friends takes the periodic box as on the RAMSES output itself.

Inline binary data (Debian's ParaView cannot read appended data), zlib-compressed. Run with pvpython
(it needs ParaView's VTK) from the repository, after building the Python package:

    PYTHONPATH=build/python pvpython datasets/generators/make_cosmo32_series.py \
        [--input ../shared/data/ramses/cosmo32_dm] [--output datasets/cosmo32_series]
"""
import argparse
import os

import numpy as np
import phew
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonCore import vtkIntArray, vtkPoints, vtkStringArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

OUTPUTS = (2, 3)


def scale_factor(path):
    with open(os.path.join(path, "info_%s.txt" % path[-5:])) as info:
        for line in info:
            if line.split("=")[0].strip() == "aexp":
                return float(line.split("=")[1])
    raise ValueError("no aexp in %s" % path)


def write(path, positions, ids, time, box):
    poly = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_support.numpy_to_vtk(positions.astype(np.float32), deep=True))
    poly.SetPoints(points)
    verts = vtkCellArray()  # one vertex per particle, so that ParaView draws them
    for i in range(len(ids)):
        verts.InsertNextCell(1, [i])
    poly.SetVerts(verts)
    array = numpy_support.numpy_to_vtk(ids.astype(np.int32), deep=True)
    array.SetName("ParticleIDs")
    poly.GetPointData().AddArray(array)
    fields = poly.GetFieldData()
    for name, value in (("TimeValue", [time]), ("BoxOrigin", [0.0, 0.0, 0.0]), ("BoxSize", [box] * 3),
                        ("Cosmological", [1.0]), ("ScaleFactor", [time])):
        field = numpy_support.numpy_to_vtk(np.array([value], dtype=np.float64), deep=True)
        field.SetName(name)
        fields.AddArray(field)
    periodic = vtkIntArray()
    periodic.SetName("Periodic")
    periodic.SetNumberOfComponents(3)
    periodic.InsertNextTypedTuple((1, 1, 1))
    fields.AddArray(periodic)
    for name, value in (("Code", "RAMSES"), ("LengthUnit", "Mpc")):
        text = vtkStringArray()
        text.SetName(name)
        text.InsertNextValue(value)
        fields.AddArray(text)
    writer = vtkXMLPolyDataWriter()
    writer.SetFileName(path)
    writer.SetInputData(poly)
    writer.SetDataModeToBinary()
    writer.SetCompressorTypeToZLib()
    if not writer.Write():
        raise RuntimeError("could not write " + path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", default=os.path.join(here, "..", "..", "..", "shared", "data", "ramses", "cosmo32_dm"))
    parser.add_argument("--output", default=os.path.join(here, "..", "cosmo32_series"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    for k, number in enumerate(OUTPUTS):
        path = os.path.join(args.input, "output_%05d" % number)
        snapshot = phew.read_snapshot(path, units="astro")
        order = np.argsort(snapshot.ids)  # by id: the same order at both steps
        box = float(snapshot.box[0])
        positions = np.mod(np.asarray(snapshot.positions)[order], box)
        write(os.path.join(args.output, "cosmo32_%d.vtp" % k), positions, np.asarray(snapshot.ids)[order],
              scale_factor(path), box)
        print("cosmo32_%d.vtp: output %d, a = %.4f, %d particles" % (k, number, scale_factor(path), len(order)))


if __name__ == "__main__":
    main()
