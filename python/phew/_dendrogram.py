"""phew.dendrogram_layout: where each node of a dendrogram goes in a plot (phew_layout_dendrogram:
leaves along x in depth-first order by peak density, log10 of the density up y)."""
import numpy as np

from . import _tables
from ._core import Call
from ._ffi import ffi, lib


def dendrogram_layout(result):
    """Per node of result.dendrogram (same order): x, log_top, log_bottom (log10 densities: a
    node is the vertical segment from log_top down to log_bottom, joined to its parent by a
    horizontal one at its log_bottom) and parent_index (-1 for roots). meta["log_floor"]:
    where densities <= 0 are drawn."""
    n = len(result.dendrogram)
    call = Call(1)
    layout = ffi.new("phew_node_layout[]", max(n, 1))
    floor = ffi.new("double *")
    nodes = ffi.from_buffer("phew_node[]", result.nodes_raw) if n else ffi.new("phew_node[]", 1)
    call.check(lib.phew_layout_dendrogram(call.context, nodes, n, layout, floor))
    table = np.zeros(n, [("x", np.float64), ("log_top", np.float64), ("log_bottom", np.float64),
                         ("parent_index", np.int64)])
    for i in range(n):
        table[i] = (layout[i].x, layout[i].log_top, layout[i].log_bottom, layout[i].parent_index)
    return _tables.Table(table, {"log_floor": floor[0]})
