"""Checks and conversions of the arguments every finder takes: messages name the user's axes
and parameters, wrong types raise TypeError and wrong values ValueError, before any C call."""
import numbers

import numpy as np

from ._ffi import ffi, lib

INT64_MAX = np.iinfo(np.int64).max


def boolean(value, name):
    if not isinstance(value, (bool, np.bool_, numbers.Integral)):
        raise TypeError("%s must be a bool, not %r" % (name, value))
    return 1 if value else 0


def number(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number, not %r" % (name, value))
    return float(value)


def integer(value, name, lo=0, hi=INT64_MAX):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, not %r" % (name, value))
    if not lo <= value <= hi:
        raise ValueError("%s must be between %d and %d, not %d" % (name, lo, hi, value))
    return int(value)


def per_axis(value, name, convert, n_dims=3, pad=None):
    """One value for every axis, or exactly one per axis of an n_dims array; the axes beyond
    n_dims (up to 3) take `pad` (or the value given once)."""
    if np.ndim(value) == 0:
        values = [value] * 3
    elif np.ndim(value) == 1 and len(value) == n_dims:
        values = list(value) + [pad] * (3 - n_dims)
    else:
        raise ValueError("%s must be one value or %d (one per axis), not %r" % (name, n_dims, value))
    return tuple(convert(v, "%s along axis %d" % (name, k)) for k, v in enumerate(values))


def geometry(spacing, origin, n_dims=3):
    """spacing (positive, finite) and origin (finite) per axis."""
    spacing = per_axis(spacing, "spacing", number, n_dims, 1.0)
    origin = per_axis(origin, "origin", number, n_dims, 0.0)
    for axis in range(3):
        if not (np.isfinite(spacing[axis]) and spacing[axis] > 0):
            raise ValueError("spacing along axis %d must be positive and finite, not %r" % (axis, spacing[axis]))
        if not np.isfinite(origin[axis]):
            raise ValueError("origin along axis %d must be finite, not %r" % (axis, origin[axis]))
    return spacing, origin


def int64_array(values, name, shape):
    """An int64 array of this shape from integers only (no floats, strings, or uint64 values
    beyond int64), C-contiguous."""
    a = np.asarray(values)
    if a.dtype.kind not in "iu":
        raise TypeError("%s must hold integers, not %s" % (name, a.dtype))
    if a.shape != shape:
        raise ValueError("%s must have shape %s, not %s" % (name, shape, a.shape))
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > INT64_MAX:
        raise ValueError("%s: %d does not fit in int64" % (name, int(a.max())))
    return np.ascontiguousarray(a, np.int64)


def clump_params(threshold, relevance, saddle, mass_threshold):
    """The core's phew_params: threshold "auto" or >= 0, saddle None (no merging), "auto" or
    >= 0."""
    p = ffi.new("phew_params *")
    lib.phew_params_init(p)
    if threshold is None or (isinstance(threshold, str) and threshold == "auto"):
        p.density_threshold = -1.0  # automatic (PHEW_THRESHOLD_AUTOMATIC)
    else:
        p.density_threshold = number(threshold, "threshold")
        if not p.density_threshold >= 0:  # a negative number would mean "automatic" to the core
            raise ValueError("threshold must be >= 0 or 'auto', not %r" % (threshold,))
    p.relevance_threshold = number(relevance, "relevance")
    p.saddle_merging = 0 if saddle is None else 1
    if isinstance(saddle, str) and saddle == "auto":
        p.saddle_threshold = -1.0
    elif saddle is not None:
        p.saddle_threshold = number(saddle, "saddle")
        if not p.saddle_threshold >= 0:
            raise ValueError("saddle must be >= 0, 'auto' or None, not %r" % (saddle,))
    p.mass_threshold = number(mass_threshold, "mass_threshold")
    return p
