"""The blocks the command-line tool gives each rank: phew_grid_block (the blocks
phew_grid_decompose gives the ranks of a communicator) called through ctypes on the built
libphew, so the tests place features on the real block boundaries."""
import ctypes

_I3 = ctypes.c_int64 * 3
_D3 = ctypes.c_double * 3


class _Grid(ctypes.Structure):  # struct phew_grid in phew.h
    _fields_ = [("global_dims", _I3), ("stored_offset", _I3), ("stored_dims", _I3),
                ("active_offset", _I3), ("active_dims", _I3), ("periodic", ctypes.c_int * 3),
                ("origin", _D3), ("spacing", _D3)]


class Block:
    """One rank's block; offsets and sizes as (x, y, z), global cell indices."""

    def __init__(self, g):
        self.active_offset = tuple(g.active_offset)
        self.active_dims = tuple(g.active_dims)
        self.stored_offset = tuple(g.stored_offset)
        self.stored_dims = tuple(g.stored_dims)

    def empty(self):
        return min(self.active_dims) == 0

    def active_slices(self):
        """numpy slices of the active box in an array indexed [z, y, x]."""
        o, n = self.active_offset, self.active_dims
        return tuple(slice(o[d], o[d] + n[d]) for d in (2, 1, 0))

    def stores(self, cell, dims):
        """True if the stored box (with its wrapped ghosts) holds cell (x, y, z)."""
        for d in range(3):
            lo, n = self.stored_offset[d], self.stored_dims[d]
            if not any(lo <= c < lo + n for c in (cell[d] - dims[d], cell[d], cell[d] + dims[d])):
                return False
        return True


def decompose(libphew, dims, periodic, n_ranks):
    """The Block of every rank when a dims = (nx, ny, nz) grid runs on n_ranks."""
    lib = ctypes.CDLL(libphew)
    # phew_status phew_grid_block(phew_context *context, phew_grid *grid, const int64_t global_dims[3],
    #                             const int periodic[3], int n_blocks, int block); no context: NULL
    lib.phew_grid_block.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Grid), ctypes.POINTER(ctypes.c_int64),
                                    ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
    lib.phew_grid_block.restype = ctypes.c_int
    blocks = []
    for rank in range(n_ranks):
        g = _Grid()
        status = lib.phew_grid_block(None, ctypes.byref(g), _I3(*dims), (ctypes.c_int * 3)(*([int(periodic)] * 3)),
                                     n_ranks, rank)
        if status != 0:
            raise RuntimeError(f"phew_grid_block({dims}, {n_ranks}, {rank}) failed: {status}")
        blocks.append(Block(g))
    return blocks


def cuts(blocks, axis):
    """Sorted coordinates c along axis where one block starts and another ends (c-1 | c)."""
    return sorted({b.active_offset[axis] for b in blocks if not b.empty() and b.active_offset[axis] > 0})
