"""What the clump finder returns (ClumpResult), and the call every input kind shares: the
label arrays, phew_find_clumps, the catalogue read into tables, the result freed."""
import numpy as np

from . import _tables
from ._ffi import ffi, lib

# The core's x is the array's last axis on grids and AMR: its X and Z columns trade places.
AXES_REVERSED = [(prefix + "X", prefix + "Z") for prefix in ("Peak", "CenterOfMass")]


class ClumpResult:
    """What find_clumps (and find_clumps_amr, find_clumps_points) returns.

    peak_patch_id, clump_id, halo_id: int64 labels shaped as the input (-1: none; AMR: a list,
    one array per block; particles: one per particle, and .density, the density used).
    clumps, haloes, dendrogram: Tables (numpy structured arrays with .meta, .to_pandas()),
    the columns of the CLI's -clumps.csv, -haloes.csv and -dendrogram.csv.
    density_threshold, saddle_threshold (NaN without merging), mean_density: as used.
    stats: the core's phew_stats as a dict. params: the call's parameters.
    """

    def __init__(self, labels, tables, result, params):
        self.peak_patch_id, self.clump_id, self.halo_id = labels
        self.clumps, self.haloes, self.dendrogram = tables
        self.density_threshold = result.density_threshold_used
        self.saddle_threshold = result.saddle_threshold_used
        self.mean_density = result.mean_density
        self.stats = _tables.struct_dict(result.stats)
        self.params = params
        # the core's node rows as they were, for phew.dendrogram_layout
        self.nodes_raw = bytes(ffi.buffer(result.nodes, result.n_nodes * ffi.sizeof("phew_node"))) \
            if result.n_nodes > 0 else b""

    def __repr__(self):
        return "<phew.ClumpResult: %d clumps, %d haloes, %d dendrogram nodes>" % (
            len(self.clumps), len(self.haloes), len(self.dendrogram))


def run(call, c_input, c_params, n_labels, params, shape_labels, swap=(), density=None, units=None):
    """phew_find_clumps into three fresh int64 label arrays of n_labels entries (shaped after
    the call by shape_labels), optionally the particles' densities; the catalogue as Tables."""
    labels = [np.empty(max(n_labels, 1), np.int64) for _ in range(3)]
    c_labels = ffi.new("phew_labels *")
    c_labels.peak_patch_id, c_labels.clump_id, c_labels.halo_id = (
        ffi.cast("int64_t *", a.ctypes.data) for a in labels)
    if density is not None:
        c_labels.density = ffi.cast("double *", density.ctypes.data)
    result = ffi.new("phew_clump_result *")
    try:
        call.check(lib.phew_find_clumps(call.context, c_input, c_params, c_labels, result))
        meta = dict(params, density_threshold=result.density_threshold_used,
                    saddle_threshold=result.saddle_threshold_used, mean_density=result.mean_density)
        if units:
            meta["units"] = units
        tables = tuple(_tables.read_rows(rows, n, _tables.column_dtype(columns, result.columns, row_type, swap), meta)
                       for rows, n, columns, row_type in (
                           (result.clumps, result.n_clumps, lib.phew_clump_columns, "phew_object"),
                           (result.haloes, result.n_haloes, lib.phew_halo_columns, "phew_object"),
                           (result.nodes, result.n_nodes, lib.phew_node_columns, "phew_node")))
        return ClumpResult([shape_labels(a[:n_labels]) for a in labels], tables, result, params)
    finally:
        lib.phew_clump_result_free(result)
