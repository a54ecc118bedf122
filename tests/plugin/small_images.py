"""The small and flat images of test_plugin_small_images.py, shared with the script that
writes them and the tool's answers once (small_images_answers.py, a ctest fixture).

Shapes: flat on one or two axes (every combination: 1x64x64, 64x1x64, 64x64x1, 1x1x200,
1x200x1, 200x1x1), tiny (3x3x1, 2x2x2, 1x2x3, 5x1x1, 2x1x1 ...) and seeded random small
shapes, so that on 2-4 ranks some pieces are empty, some are one point thick, and point pieces
share planes on a flat axis. Each shape comes as point data, as cell data one cell thick, and
(when it has an axis of 1) as cell data on a flat extent (2D or 1D cells); periodic and not;
float32 and float64; with and without exact ties; with and without saddle merging; on a
non-zero extent start, origin and spacing. Some images also run with ghost cells on the input.
"""
import os

import numpy as np

import phew_plugin_testing as pt

SHAPES = [(64, 64, 1), (1, 64, 64), (64, 1, 64), (200, 1, 1), (1, 1, 200), (1, 200, 1), (3, 3, 1),
          (2, 2, 2), (1, 2, 3), (5, 1, 1), (2, 1, 1), (1, 3, 1), (2, 3, 1), (7, 2, 1)]
_shape_rng = np.random.default_rng(2024)
while len(SHAPES) < 20:
    _shape = tuple(int(n) for n in _shape_rng.choice([1, 1, 2, 3, 4, 5, 6, 9], size=3))
    if np.prod(_shape) >= 2 and _shape not in SHAPES:
        SHAPES.append(_shape)

# Point data (an axis of 1 point is flat); cell data with an axis of 1 cell one cell thick
# (2 points); cell data with such an axis flat (1 point).
STYLES = ("points", "cells", "flatcells")
# Shapes that also run with ghost cells on the input: flagged by vtkGhostCellsGenerator
# ("ghosts", periodic), or from the reader when a consumer asks for a ghost level ("asked").
GHOST_SHAPES = [(64, 64, 1), (200, 1, 1), (1, 2, 3), (2, 2, 2)]


class Case:
    def __init__(self, number, shape, style, periodic, source="reader", base=None):
        self.shape, self.style, self.periodic, self.source = shape, style, periodic, source
        self.base = base  # the case whose image and answer this one reuses
        self.association = "POINTS" if style == "points" else "CELLS"
        self.seed = 1000 + number
        self.dtype = np.float32 if number % 2 else np.float64
        self.ties = number % 3 == 0  # values on a coarse grid: plateaus and exact ties
        self.threshold, self.relevance = 0.3, 1.5
        self.saddle = 0.6 if number % 4 < 2 else None
        self.image_label = "%s_%dx%dx%d_%s" % (style, shape[0], shape[1], shape[2], "periodic" if periodic else "open")
        self.label = self.image_label + ("" if source == "reader" else "_" + source)

    def path(self, directory):
        return os.path.join(directory, self.image_label + ".vti")

    def prefix(self, directory):
        return os.path.join(directory, self.image_label)

    def values(self, directory):
        """The density the tool read (x fastest), shape (nz, ny, nx)."""
        raw = np.fromfile(self.prefix(directory) + "-density.raw", dtype=np.dtype(self.dtype).newbyteorder("<"))
        return raw.astype(self.dtype).reshape(self.shape[::-1])


def build_cases():
    cases = []
    for shape in SHAPES:
        for style in STYLES:
            if style == "flatcells" and 1 not in shape:
                continue  # the same image as "cells"
            for periodic in (False, True):
                cases.append(Case(len(cases), shape, style, periodic))
    for base in list(cases):
        if base.shape in GHOST_SHAPES and base.style != "flatcells":
            source = "ghosts" if base.periodic else "asked"
            cases.append(Case(base.seed - 1000, base.shape, base.style, base.periodic, source=source, base=base))
    return cases


def write_image_and_start_tool(case, directory, cli):
    """Writes the case's image (.vti) and starts the tool on the same values; returns the
    handle of pt.finish_cli."""
    rng = np.random.default_rng(case.seed)
    nx, ny, nz = case.shape
    values = rng.random((nz, ny, nx))
    if case.ties:
        values = np.round(values * 5.0) / 5.0
    values = values.astype(case.dtype)
    start = tuple(int(s) for s in rng.integers(-3, 4, size=3))
    spacing = tuple(float(s) for s in rng.uniform(0.5, 2.0, size=3))
    origin = tuple(float(s) for s in rng.uniform(-5.0, 5.0, size=3))
    image = pt.make_image(values, case.association, origin=origin, spacing=spacing, start=start)
    if case.style == "flatcells":
        extent = list(image.GetExtent())
        for d in range(3):
            if case.shape[d] == 1:
                extent[2 * d + 1] = extent[2 * d]  # 1 cell along d -> a flat axis
        image.SetExtent(extent)
        if image.GetNumberOfCells() != values.size:
            raise RuntimeError("%s: the flat image has %d cells, not %d" % (case.label, image.GetNumberOfCells(),
                                                                           values.size))
    pt.write_vti(case.path(directory), image)
    # The corner of PHEW cell 0, computed as the filter does (a point is the centre of its cell).
    shift = 0.5 if case.association == "POINTS" else 0.0
    corner = [origin[d] + start[d] * spacing[d] - shift * spacing[d] for d in range(3)]
    return pt.start_cli(cli, values, case.prefix(directory), case.threshold, relevance=case.relevance,
                        saddle=case.saddle, periodic=case.periodic, spacing=spacing, origin=corner)
