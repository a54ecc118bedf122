"""phew.find_clumps_amr: PHEW on a block-structured AMR hierarchy (refinement ratio 2; the
core's phew_amr, docs/amr.md), each block a numpy array.

As for grids, axis k is coordinate k: a block is (level, lo, density) with lo its first cell in
its level's index space (x, y, z) and density an array indexed [x, y, z]; level0_shape is the
domain in level-0 cells, spacing the size of a level-0 cell. The core stores x fastest, so it
sees every axis reversed (as find_clumps), and its X and Z columns trade places. PeakId is
offset(level) plus the cell's flat index in C order on its level (offset: the cells of all
coarser levels, each as if it covered the domain)."""
import numpy as np

from . import _args, _clumps
from ._core import Call
from ._ffi import ffi, lib
from ._snapshots import AmrSnapshot


def find_clumps_amr(blocks, *, level0_shape=None, spacing=None, origin=None, periodic=None, threshold="auto",
                    relevance=2.0, saddle=None, mass_threshold=0.0, threads=0, comm=None, progress=None,
                    variable="density"):
    """Clumps, sub-clumps and haloes on the leaf cells of an AMR hierarchy.

    blocks: this rank's blocks, a list of (level, lo, density): level 0 is the coarsest; lo the
        block's first cell on its level (3 integers, axis order); density a 3-D array of real
        numbers (the covered cells' values are not read). Level 0 tiles the domain; a block of
        level l > 0 lies inside level l - 1 with even lo and shape. Or a phew.AmrSnapshot
        (read_amr): its boxes' `variable`, and its domain for level0_shape, spacing, origin and
        periodic unless they are given.
    With comm=, every rank passes its own blocks (any split, none at all too); the hierarchy is
    the union. Returns a ClumpResult whose labels are lists: one array per block given, shaped
    as its density (-1 for covered cells). The other parameters are find_clumps's.
    """
    if isinstance(blocks, AmrSnapshot):
        snapshot, blocks = blocks, blocks.blocks(variable)
        level0_shape = snapshot.level0_shape if level0_shape is None else level0_shape
        spacing = snapshot.spacing if spacing is None else spacing
        origin = snapshot.origin if origin is None else origin
        periodic = snapshot.periodic if periodic is None else periodic
    call = Call(threads, comm, progress)
    with call.agreeing():
        if level0_shape is None:
            raise ValueError("level0_shape (the domain in level-0 cells) is needed")
        level0 = _three_ints(level0_shape, "level0_shape", 1)
        mine = [_block(b, k) for k, b in enumerate(blocks)]
        spacing, origin = _args.geometry(1.0 if spacing is None else spacing, 0.0 if origin is None else origin)
        params = {"level0_shape": level0, "spacing": spacing, "origin": origin,
                  "periodic": _args.per_axis(False if periodic is None else periodic, "periodic", _args.boolean),
                  "threshold": threshold, "relevance": relevance, "saddle": saddle, "mass_threshold": mass_threshold}
        c_params = _args.clump_params(threshold, relevance, saddle, mass_threshold)
    # every rank passes the same list of all blocks: the ranks' own, in rank order
    shapes = [(level, lo, d.shape) for level, lo, d in mine]
    everyone = comm.allgather(shapes) if comm is not None else [shapes]
    c_input, c_blocks = _amr_input(everyone, params)
    dtype = np.float32 if mine and all(d.dtype == np.float32 for _, _, d in mine) else np.float64
    rho = np.ascontiguousarray(np.concatenate([d.astype(dtype, copy=False).reshape(-1) for _, _, d in mine])
                               if mine else np.zeros(0, dtype))
    c_input.density = ffi.cast("const void *", rho.ctypes.data)
    c_input.density_type = lib.PHEW_FLOAT32 if dtype == np.float32 else lib.PHEW_FLOAT64
    cuts = np.cumsum([0] + [d.size for _, _, d in mine])

    def per_block(flat):
        return [flat[cuts[i]:cuts[i + 1]].reshape(mine[i][2].shape) for i in range(len(mine))]

    result = _clumps.run(call, c_input, c_params, len(rho), params, per_block, _clumps.AXES_REVERSED)
    del c_blocks  # the core's block list lived until here
    return result


def _amr_input(everyone, params):
    """The core's phew_input over the list of every rank's blocks (axes reversed); the block
    array is returned too, to be kept alive for the call."""
    n_blocks = sum(len(r) for r in everyone)
    c_blocks = ffi.new("phew_amr_block[]", max(n_blocks, 1))
    k = 0
    for rank, theirs in enumerate(everyone):
        for level, lo, shape in theirs:
            c_blocks[k].level, c_blocks[k].owner = level, rank
            for d in range(3):  # the core's axis d is the array's axis 2 - d
                c_blocks[k].lo[d], c_blocks[k].dims[d] = lo[2 - d], shape[2 - d]
            k += 1
    c_input = ffi.new("phew_input *")
    c_input.mesh = lib.PHEW_MESH_AMR
    amr = c_input.amr
    for d in range(3):
        amr.level0_dims[d] = params["level0_shape"][2 - d]
        amr.spacing[d], amr.origin[d] = params["spacing"][2 - d], params["origin"][2 - d]
        amr.periodic[d] = params["periodic"][2 - d]
    amr.n_blocks, amr.blocks = n_blocks, c_blocks
    return c_input, c_blocks


def _block(block, k):
    """(level, lo, density) checked: messages name the array's axes (the core's would name
    its own, reversed)."""
    try:
        level, lo, density = block
    except (TypeError, ValueError):
        raise TypeError("block %d must be (level, lo, density), not %s" % (k, type(block).__name__)) from None
    d = np.asarray(density)
    if d.dtype.kind not in "fiub":
        raise TypeError("block %d: the density must hold real numbers, not %s" % (k, d.dtype))
    if d.ndim != 3 or 0 in d.shape:
        raise ValueError("block %d: the density must be a 3-D array with cells, not of shape %s" % (k, d.shape))
    level = _args.integer(level, "block %d: the level" % k, 0, 53)
    lo = _three_ints(lo, "block %d: lo" % k)
    for axis in range(3):
        if level > 0 and (lo[axis] % 2 or d.shape[axis] % 2):
            raise ValueError("block %d of level %d: lo and shape must be even along axis %d (aligned to the "
                             "cells of level %d), not %d and %d" % (k, level, axis, level - 1, lo[axis], d.shape[axis]))
    return level, lo, np.ascontiguousarray(d, np.float32 if d.dtype == np.float32 else np.float64)


def _three_ints(value, name, lo=-(2 ** 62)):
    values = np.asarray(value)
    if values.shape != (3,) or values.dtype.kind not in "iu":
        raise ValueError("%s must be 3 integers, not %r" % (name, value))
    if (values < lo).any() or (values >= 2 ** 62).any():
        raise ValueError("%s must lie in [%d, 2^62), not %r" % (name, lo, value))
    return tuple(int(v) for v in values)
