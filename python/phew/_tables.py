"""Catalogues as numpy structured arrays: the core's rows (phew_object, phew_node, ...) read
through its column lists (name, type, offset), copied out before the result is freed."""
import numpy as np

from ._ffi import ffi, lib

_FORMATS = {lib.PHEW_COLUMN_INT64: np.int64, lib.PHEW_COLUMN_INT32: np.int32, lib.PHEW_COLUMN_DOUBLE: np.float64}


class Table(np.ndarray):
    """A catalogue: a structured numpy array (one field per column, the CLI's CSV header names)
    with `meta`, a dict of the run's parameters and units, and `to_pandas()`."""

    def __new__(cls, rows, meta=None):
        table = np.asarray(rows).view(cls)
        table.meta = dict(meta or {})
        return table

    def __array_finalize__(self, source):
        self.meta = getattr(source, "meta", {})

    @property
    def columns(self):
        return list(self.dtype.names)

    def to_pandas(self):
        """A pandas DataFrame of the same columns; meta goes into DataFrame.attrs."""
        import pandas

        frame = pandas.DataFrame({name: np.asarray(self[name]) for name in self.dtype.names})
        frame.attrs.update(self.meta)
        return frame

    def __reduce__(self):  # pickling keeps meta
        constructor, args, state = super().__reduce__()
        return constructor, args, (state, self.meta)

    def __setstate__(self, state):
        base, self.meta = state
        super().__setstate__(base)


def column_dtype(columns_fn, flags, row_type, swap=()):
    """The numpy dtype of the core's rows of row_type, as columns_fn(flags) lists them; each
    pair of names in swap trades places in the row (the columns keep their order)."""
    count = ffi.new("int *")
    columns = columns_fn(flags, count) if flags is not None else columns_fn(count)
    names, formats, offsets = [], [], []
    for k in range(count[0]):
        c = columns[k]
        name = ffi.string(c.name).decode()
        names.append(name)
        formats.append(_FORMATS[c.type])
        offsets.append(c.offset)
    for a, b in swap:
        if a in names and b in names:
            i, j = names.index(a), names.index(b)
            offsets[i], offsets[j] = offsets[j], offsets[i]
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": ffi.sizeof(row_type)})


def read_rows(pointer, n, dtype, meta):
    """n rows at pointer as a packed Table of its own (the core's memory may be freed after)."""
    if n == 0 or pointer == ffi.NULL:
        rows = np.zeros(0, dtype)
    else:
        rows = np.frombuffer(ffi.buffer(pointer, n * dtype.itemsize), dtype)
    packed = np.empty(len(rows), np.dtype([(name, dtype.fields[name][0]) for name in dtype.names]))
    for name in dtype.names:
        packed[name] = rows[name]
    return Table(packed, meta)


def struct_dict(value, arrays=list):
    """A struct of plain fields (phew_stats, phew_snapshot_info) as a dict: char arrays as
    strings, other arrays through `arrays` (list, tuple)."""
    out = {}
    for name, field in ffi.typeof(value).fields:
        v = getattr(value, name)
        if field.type.kind == "array" and field.type.item.cname == "char":
            v = ffi.string(v).decode("utf-8", "replace")
        elif field.type.kind == "array":
            v = arrays(v)
        out[name] = v
    return out
