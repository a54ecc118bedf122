"""phew.link_steps: the merger tree from one step to the next by shared mass (phew_link_steps;
docs/merger-trees.md): every pair of structures, one of each step, that share elements."""
import numpy as np

from . import _tables
from ._core import Call
from ._ffi import ffi, lib


class _Step:
    """One step's elements as the core's phew_step_labels (the arrays kept alive here)."""

    def __init__(self, ids, labels, masses, which):
        self.ids = np.ascontiguousarray(ids, np.int64)
        self.labels = np.ascontiguousarray(labels, np.int64)
        if self.ids.ndim != 1 or self.labels.shape != self.ids.shape:
            raise ValueError("%s: ids and labels must be 1-D arrays of one length" % which)
        self.masses = None if masses is None else np.ascontiguousarray(masses, np.float64)
        if self.masses is not None and self.masses.shape != self.ids.shape:
            raise ValueError("%s: masses must have one entry per element" % which)
        s = ffi.new("phew_step_labels *")
        s.n = len(self.ids)
        s.id = ffi.cast("const int64_t *", self.ids.ctypes.data)
        s.label = ffi.cast("const int64_t *", self.labels.ctypes.data)
        if self.masses is not None:
            s.mass = ffi.cast("const double *", self.masses.ctypes.data)
        self.c = s


def link_steps(earlier_ids, earlier_labels, later_ids, later_labels, *, earlier_masses=None, later_masses=None,
               comm=None):
    """Links between the structures of two steps. ids: each element's global id (particles:
    their ids; grids: the cell's flat index), labels: its structure (-1: none), masses:
    optional (1 per element). Returns a Table (on rank 0 with comm=): ProgenitorId,
    DescendantId, the masses and shared masses both ways, the fractions, the main flags and
    the counts of progenitors and descendants; ordered by descendant (-1 last), then
    progenitor."""
    call = Call(0, comm)
    with call.agreeing():
        earlier = _Step(earlier_ids, earlier_labels, earlier_masses, "earlier")
        later = _Step(later_ids, later_labels, later_masses, "later")
    result = ffi.new("phew_link_result *")
    try:
        call.check(lib.phew_link_steps(call.context, earlier.c, later.c, result))
        dtype = _tables.column_dtype(lib.phew_link_columns, None, "phew_link")
        return _tables.read_rows(result.links, result.n_links, dtype, {"kind": "shared mass"})
    finally:
        lib.phew_link_result_free(result)
