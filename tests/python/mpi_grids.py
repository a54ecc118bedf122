"""Run under mpirun by test_mpi.py: phew.find_clumps with an mpi4py communicator, each rank its
balanced block (phew.grid_block) or a tiling of its own, against one process on the whole grid
(every rank computes that too, with comm=None): the same labels and tables, byte for byte.
Then bad input on one rank only: every rank raises, none waits. Prints 'ok N' on rank 0."""
import sys

import numpy as np
from mpi4py import MPI

import phew
from conftest import lognormal

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
shape = (30, 26, 22)
rho = lognormal(shape, 21, dtype=np.float64)
options = dict(spacing=(0.5, 1.0, 2.0), threshold=1.2, relevance=1.3, saddle="auto")
checks = 0
for periodic in (True, (False, True, False)):
    serial = phew.find_clumps(rho, periodic=periodic, threads=1, **options)
    assert len(serial.clumps) > 10
    # a balanced split, then slabs along axis 1 (another tiling)
    blocks = [phew.grid_block(shape, comm=comm, periodic=periodic)]
    cuts = np.linspace(0, shape[1], size + 1).astype(int)
    blocks.append(((0, cuts[rank], 0), (shape[0], cuts[rank + 1] - cuts[rank], shape[2])))
    for offset, block in blocks:
        where = tuple(slice(o, o + n) for o, n in zip(offset, block))
        r = phew.find_clumps(rho[where], comm=comm, offset=offset, global_shape=shape, periodic=periodic,
                             threads=2, **options)
        for name in ("peak_patch_id", "clump_id", "halo_id"):
            assert np.array_equal(getattr(r, name), getattr(serial, name)[where]), name
        if rank == 0:
            for table in ("clumps", "haloes", "dendrogram"):
                assert getattr(r, table).tobytes() == getattr(serial, table).tobytes(), table
        else:
            assert len(r.clumps) == 0
        assert r.stats["n_ranks"] == size
        checks += 1

# a NaN on the last rank only: every rank gets the core's error
offset, block = phew.grid_block(shape, comm=comm)
mine = rho[tuple(slice(o, o + n) for o, n in zip(offset, block))].copy()
if rank == size - 1:
    mine.flat[0] = np.nan
try:
    phew.find_clumps(mine, comm=comm, offset=offset, global_shape=shape, threshold=1.0)
    sys.exit("rank %d: no error" % rank)
except ValueError as e:
    assert "NaN" in str(e), e
# a wrong dtype on rank 0 only: agreed before the collective call
try:
    phew.find_clumps(mine.astype(complex) if rank == 0 else mine, comm=comm, offset=offset, global_shape=shape)
    sys.exit("rank %d: no error" % rank)
except (TypeError, ValueError) as e:
    assert "real numbers" in str(e), e
# no offset with several ranks
if size > 1:
    try:
        phew.find_clumps(rho, comm=comm)
        sys.exit("no error without offset")
    except ValueError as e:
        assert "global_shape" in str(e)
comm.Barrier()
if rank == 0:
    print("ok", checks)
