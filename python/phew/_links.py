"""phew.link_steps: the merger tree from one step to the next by shared mass (phew_link_steps;
docs/merger-trees.md): every pair of structures, one of each step, that share elements."""
import numpy as np

from . import _args, _tables
from ._core import Call, mpi_max
from ._ffi import ffi, lib


class _Step:
    """One step's elements as the core's phew_step_labels (the arrays kept alive here)."""

    def __init__(self, ids, labels, masses, which):
        self.ids = _args.int64_array(ids, "%s: ids" % which, np.shape(ids)[:1])
        if self.ids.ndim != 1:
            raise ValueError("%s: ids must be a 1-D array" % which)
        self.labels = _args.int64_array(labels, "%s: labels (one per element)" % which, self.ids.shape)
        self.masses = None
        if masses is not None:
            m = np.asarray(masses)
            if m.dtype.kind not in "fiu" or m.shape != self.ids.shape:
                raise ValueError("%s: masses must be one real number per element" % which)
            self.masses = np.ascontiguousarray(m, np.float64)
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


_TRACKED = np.dtype([("id", np.int64), ("step", np.int64), ("orphan_steps", np.int64), ("mass", np.float64),
                     ("tracer_offset", np.int64), ("n_tracers", np.int64)])


class Tracers:
    """A copy of a phew_tracer_set: the structures followed (id, step, orphan_steps, mass,
    tracer_offset, n_tracers) and their tracers' ids, most bound first."""

    def __init__(self, tracked, ids):
        tracked, ids = np.asarray(tracked), np.asarray(ids)
        if tracked.dtype != _TRACKED or tracked.ndim != 1:
            raise TypeError("tracers: tracked must be a 1-D array of dtype %s" % (_TRACKED,))
        self.tracked = np.ascontiguousarray(tracked)
        self.ids = _args.int64_array(ids, "tracers: ids", ids.shape[:1])
        ends = self.tracked["tracer_offset"] + self.tracked["n_tracers"]
        if len(self.tracked) and ((self.tracked["tracer_offset"] < 0).any() or (self.tracked["n_tracers"] < 0).any()
                                  or ends.max() > len(self.ids)):
            raise ValueError("tracers: the offsets and counts must lie within the %d ids" % len(self.ids))

    def __len__(self):
        return len(self.tracked)

    def c_set(self):
        """A phew_tracer_set over these arrays (alive as long as this object)."""
        s = ffi.new("phew_tracer_set *")
        s.n, s.n_ids = len(self.tracked), len(self.ids)
        s.tracked = ffi.cast("phew_tracked *", self.tracked.ctypes.data) if len(self.tracked) else ffi.NULL
        s.ids = ffi.cast("int64_t *", self.ids.ctypes.data) if len(self.ids) else ffi.NULL
        return s


def tracers_copy(c_set):
    assert _TRACKED.itemsize == ffi.sizeof("phew_tracked")
    tracked = np.zeros(0, _TRACKED) if c_set.n == 0 else np.frombuffer(
        ffi.buffer(c_set.tracked, c_set.n * _TRACKED.itemsize), _TRACKED).copy()
    ids = np.zeros(0, np.int64) if c_set.n_ids == 0 else np.frombuffer(
        ffi.buffer(c_set.ids, 8 * c_set.n_ids), np.int64).copy()
    return Tracers(tracked, ids)


class MergerTree:
    """Merger trees by shared mass and by most-bound particles, with orphans (phew_link_tracked;
    docs/merger-trees.md), one step at a time:

        tree = phew.MergerTree(max_orphan_steps=3)
        for snapshot in steps:
            h = phew.halo_properties(...)              # with n_most_bound tracers (200)
            links = tree.add(ids, h.bound_label, h.tracers)   # None for the first step
        tree.links                                     # every step's rows, with Step

    ids: the particles' ids; labels: the structure each is bound to itself (-1: none); tracers:
    the step's most-bound particles (PhysicsResult.tracers); masses: the particles' (None: each
    counts 1, and so do the structures' masses, their bound particles, as `phew link` counts). With comm=, each rank passes its
    particles (tracers on rank 0, as halo_properties returns them) and the links are on rank 0.
    """

    def __init__(self, max_orphan_steps=3, comm=None):
        self.max_orphan_steps = _args.integer(max_orphan_steps, "max_orphan_steps", 0)
        self.comm = comm
        self.n_steps = 0
        self.rows = []
        self._earlier = None  # (ids, labels) of the last step
        self._tracers = None  # its own tracers, then the orphans carried to it

    def add(self, ids, labels, tracers, masses=None):
        """Link the previous step to this one; returns this step's links (None the first time)."""
        call = Call(0, self.comm)
        with call.agreeing():
            later = _Step(ids, labels, masses, "step %d" % self.n_steps)
            if not isinstance(tracers, Tracers):
                raise TypeError("tracers must be a PhysicsResult's tracers, not %s" % type(tracers).__name__)
            own = Tracers(tracers.tracked.copy(), tracers.ids)  # checked again: they may have been changed
        own.tracked["step"] = self.n_steps  # the core counts from 0 per run: this tree's steps
        if masses is None:  # masses count particles: so do the structures' own (as `phew link`)
            own.tracked["mass"] = self._counts(later.labels, own.tracked["id"])
        links = None
        if self._earlier is not None:
            params = ffi.new("phew_track_params *")
            lib.phew_track_params_init(params)
            params.max_orphan_steps = self.max_orphan_steps
            result = ffi.new("phew_link_result *")
            orphans = ffi.new("phew_tracer_set *")
            joined = ffi.new("phew_tracer_set *")
            try:
                call.check(lib.phew_link_tracked(call.context, self._earlier.c, later.c, self._tracers.c_set(), params,
                                                 result, orphans))
                dtype = _tables.column_dtype(lib.phew_link_columns, None, "phew_link")
                links = _tables.read_rows(result.links, result.n_links, dtype, {"step": self.n_steps})
                call.check(lib.phew_tracer_set_join(own.c_set(), orphans, joined))
                own = tracers_copy(joined)
            finally:
                lib.phew_link_result_free(result)
                lib.phew_tracer_set_free(orphans)
                lib.phew_tracer_set_free(joined)
            self.rows.append((self.n_steps, links))
        self._earlier, self._tracers = later, own
        self.n_steps += 1
        return links

    def _counts(self, labels, structures):
        """How many elements over all ranks carry each of the structures' labels."""
        counts = np.bincount(labels[labels >= 0], minlength=int(structures.max(initial=-1)) + 1)
        if self.comm is not None:
            size = self.comm.allreduce(len(counts), op=mpi_max())
            counts = np.pad(counts, (0, size - len(counts)))
            counts = self.comm.allreduce(counts)
        return counts[structures].astype(np.float64) if len(structures) else np.zeros(0)

    @property
    def links(self):
        """Every step's links in one Table, with the later step's number first (Step), as
        `phew link` writes PREFIX-tree.csv."""
        parts = []
        for step, links in self.rows:
            rows = np.empty(len(links), [("Step", np.int64)] + [(n, links.dtype[n]) for n in links.dtype.names])
            rows["Step"] = step
            for name in links.dtype.names:
                rows[name] = links[name]
            parts.append(rows)
        dtype = parts[0].dtype if parts else np.dtype([("Step", np.int64)])
        return _tables.Table(np.concatenate(parts) if parts else np.zeros(0, dtype), {"steps": self.n_steps})
