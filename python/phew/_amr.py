"""phew.find_clumps_amr: PHEW on a block-structured AMR hierarchy (refinement ratio 2; the
core's phew_amr, docs/amr.md), each block a numpy array.

As for grids, axis k is coordinate k: a block is (level, lo, density) with lo its first cell in
its level's index space (x, y, z) and density an array indexed [x, y, z]; level0_shape is the
domain in level-0 cells, spacing the size of a level-0 cell. The core stores x fastest, so it
sees every axis reversed (as find_clumps), and its X and Z columns trade places. PeakId is
offset(level) plus the cell's flat index in C order on its level (offset: the cells of all
coarser levels, each as if it covered the domain)."""
import numpy as np

from . import _tables
from ._core import Call
from ._ffi import ffi, lib
from ._grids import ClumpResult, _bool, _clump_params, _geometry, _triple
from ._snapshots import AmrSnapshot


def find_clumps_amr(blocks, *, level0_shape=None, spacing=None, origin=None, periodic=None, threshold="auto",
                    relevance=2.0, saddle=None, mass_threshold=0.0, threads=0, comm=None, progress=None,
                    variable="density"):
    """Clumps, sub-clumps and haloes on the leaf cells of an AMR hierarchy.

    blocks may also be a phew.AmrSnapshot (read_amr): its boxes' `variable`, and its domain
    for level0_shape, spacing, origin and periodic unless they are given.

    blocks: this rank's blocks, a list of (level, lo, density): level 0 is the coarsest; lo the
        block's first cell on its level (3 integers, axis order); density a 3-D array of real
        numbers (the covered cells' values are not read). Level 0 tiles the domain; a block of
        level l > 0 lies inside level l - 1 with even lo and shape.
    With comm=, every rank passes its own blocks (any split); the hierarchy is the union.
    Returns a ClumpResult whose labels are lists: one array per block given, shaped as its
    density (-1 for covered cells).
    The other parameters are find_clumps's.
    """
    if isinstance(blocks, AmrSnapshot):
        snapshot = blocks
        blocks = snapshot.blocks(variable)
        level0_shape = snapshot.level0_shape if level0_shape is None else level0_shape
        spacing = snapshot.spacing if spacing is None else spacing
        origin = snapshot.origin if origin is None else origin
        periodic = snapshot.periodic if periodic is None else periodic
    spacing, origin = 1.0 if spacing is None else spacing, 0.0 if origin is None else origin
    periodic = False if periodic is None else periodic
    call = Call(threads, comm, progress)
    with call.agreeing():
        if level0_shape is None:
            raise ValueError("level0_shape (the domain in level-0 cells) is needed")
        mine = [_block(b, k) for k, b in enumerate(blocks)]
        level0 = _three_ints(level0_shape, "level0_shape")
        spacing, origin = _geometry(spacing, origin)
        params = {"level0_shape": level0, "spacing": spacing, "origin": origin,
                  "periodic": _triple(periodic, "periodic", _bool),
                  "threshold": threshold, "relevance": relevance, "saddle": saddle, "mass_threshold": mass_threshold}
        c_params = _clump_params(threshold, relevance, saddle, mass_threshold)
        dtype = np.float32 if mine and all(d.dtype == np.float32 for _, _, d in mine) else np.float64
    # every rank passes the same list of all blocks: the ranks' own, in rank order
    everyone = comm.allgather([(level, lo, d.shape) for level, lo, d in mine]) if comm is not None else [
        [(level, lo, d.shape) for level, lo, d in mine]]
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
        amr.level0_dims[d] = level0[2 - d]
        amr.spacing[d], amr.origin[d] = params["spacing"][2 - d], params["origin"][2 - d]
        amr.periodic[d] = params["periodic"][2 - d]
    amr.n_blocks, amr.blocks = n_blocks, c_blocks
    sizes = [d.size for _, _, d in mine]
    rho = np.concatenate([d.astype(dtype, copy=False).reshape(-1) for _, _, d in mine]) if mine else np.zeros(
        0, dtype)
    rho = np.ascontiguousarray(rho)
    c_input.density = ffi.cast("const void *", rho.ctypes.data)
    c_input.density_type = lib.PHEW_FLOAT32 if dtype == np.float32 else lib.PHEW_FLOAT64
    flat = [np.empty(max(len(rho), 1), np.int64) for _ in range(3)]
    c_labels = ffi.new("phew_labels *")
    c_labels.peak_patch_id, c_labels.clump_id, c_labels.halo_id = (
        ffi.cast("int64_t *", a.ctypes.data) for a in flat)
    result = ffi.new("phew_clump_result *")
    try:
        call.check(lib.phew_find_clumps(call.context, c_input, c_params, c_labels, result))
        cuts = np.cumsum([0] + sizes)
        labels = [[a[cuts[i]:cuts[i + 1]].reshape(mine[i][2].shape) for i in range(len(mine))] for a in flat]
        meta = dict(params, density_threshold=result.density_threshold_used,
                    saddle_threshold=result.saddle_threshold_used, mean_density=result.mean_density,
                    units="mass: density x cell volume; positions: the units of spacing and origin")
        swap = [(prefix + "X", prefix + "Z") for prefix in ("Peak", "CenterOfMass")]
        tables = tuple(_tables.read_rows(rows, n, _tables.column_dtype(columns, result.columns, row_type, swap), meta)
                       for rows, n, columns, row_type in (
                           (result.clumps, result.n_clumps, lib.phew_clump_columns, "phew_object"),
                           (result.haloes, result.n_haloes, lib.phew_halo_columns, "phew_object"),
                           (result.nodes, result.n_nodes, lib.phew_node_columns, "phew_node")))
        return ClumpResult(labels, tables, result, params)
    finally:
        lib.phew_clump_result_free(result)


def _block(block, k):
    try:
        level, lo, density = block
    except (TypeError, ValueError):
        raise TypeError("block %d must be (level, lo, density), not %r" % (k, type(block).__name__)) from None
    d = np.asarray(density)
    if d.dtype.kind not in "fiub":
        raise TypeError("block %d: the density must hold real numbers, not %s" % (k, d.dtype))
    if d.ndim != 3:
        raise ValueError("block %d: the density must be a 3-D array, not %d-D" % (k, d.ndim))
    lo = _three_ints(lo, "block %d: lo" % k)
    if isinstance(level, bool) or int(level) != level or level < 0:
        raise ValueError("block %d: the level must be an integer >= 0, not %r" % (k, level))
    return int(level), lo, np.ascontiguousarray(d, np.float32 if d.dtype == np.float32 else np.float64)


def _three_ints(value, name):
    values = np.asarray(value)
    if values.shape != (3,) or values.dtype.kind not in "iu":
        raise ValueError("%s must be 3 integers, not %r" % (name, value))
    return tuple(int(v) for v in values)
