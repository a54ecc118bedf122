"""Run under mpirun by test_mpi.py: phew.find_clumps with an mpi4py communicator, each rank its
balanced block (phew.grid_block) or a tiling of its own, against one process on the whole grid
(every rank computes that too, with comm=None): the same labels and tables, byte for byte; the
particle finders with each rank a share of the particles, likewise. Then bad input on one rank
only: every rank raises, none waits. Prints 'ok N' (N checks) on rank 0."""
import sys

import numpy as np
from mpi4py import MPI

import phew
from conftest import amr_sample, clustered_particles, lognormal

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

# particles: rank r passes every size-th particle from r on (shares of any kind work)
pos, masses, velocities, ids = clustered_particles(32)
share = slice(rank, None, size)
common = dict(box=10.0, periodic=True, masses=masses, velocities=velocities, ids=ids)
for finder, options in ((phew.find_clumps_points, dict(threshold=30.0, saddle="auto")),
                        (phew.friends_of_friends, dict(linking_length=0.25)), (phew.hop, dict(outer=20.0))):
    serial = finder(pos, threads=1, **common, **options)
    mine_only = {k: (v[share] if isinstance(v, np.ndarray) else v) for k, v in common.items()}
    r = finder(pos[share], comm=comm, threads=2, **mine_only, **options)
    labels = ("peak_patch_id", "clump_id", "halo_id", "density") if finder is phew.find_clumps_points else (
        ("group_id", "density") if finder is phew.hop else ("group_id",))
    for name in labels:
        assert np.array_equal(getattr(r, name), getattr(serial, name)[share]), (finder.__name__, name)
    tables = ("clumps", "haloes", "dendrogram") if finder is phew.find_clumps_points else ("groups",)
    for table in tables:
        if rank == 0:
            assert getattr(r, table).tobytes() == getattr(serial, table).tobytes(), (finder.__name__, table)
        else:
            assert len(getattr(r, table)) == 0
    checks += 1

# AMR: the sample hierarchy's blocks dealt out round robin
blocks = amr_sample()
options = dict(level0_shape=(32, 32, 32), spacing=1 / 32, periodic=True, threshold=3.0, saddle=20.0)
serial = phew.find_clumps_amr(blocks, threads=1, **options)
r = phew.find_clumps_amr(blocks[rank::size], comm=comm, threads=2, **options)
for name in ("peak_patch_id", "clump_id", "halo_id"):
    assert all(np.array_equal(a, b) for a, b in zip(getattr(r, name), getattr(serial, name)[rank::size])), name
if rank == 0:
    assert r.clumps.tobytes() == serial.clumps.tobytes() and r.dendrogram.tobytes() == serial.dendrogram.tobytes()
checks += 1

# a snapshot read in shares: consecutive, together the serial arrays; FoF on the shares
import os  # noqa: E402

ramses = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "ramses_cosmo32",
                      "output_00003")
whole = phew.read_snapshot(ramses)
part = phew.read_snapshot(ramses, comm=comm)
assert part.n_total == whole.n_total
shares = comm.allgather((part.first, part.positions, part.ids))
assert [first for first, _, _ in shares] == list(np.cumsum([0] + [len(p) for _, p, _ in shares[:-1]]))
assert np.array_equal(np.concatenate([p for _, p, _ in shares]), whole.positions)
assert np.array_equal(np.concatenate([i for _, _, i in shares]), whole.ids)
mine = phew.friends_of_friends(part.positions, ids=part.ids, box=part.box, periodic=part.periodic, comm=comm)
serial = phew.friends_of_friends(whole.positions, ids=whole.ids, box=whole.box, periodic=whole.periodic)
assert np.array_equal(mine.group_id, serial.group_id[part.first:part.first + len(part.positions)])
checks += 1

# a merger tree with each rank a share of every step's particles
from test_merger_tree import steps  # noqa: E402

trees = {"serial": phew.MergerTree(max_orphan_steps=2), "shared": phew.MergerTree(max_orphan_steps=2, comm=comm)}
for pos, masses, velocities, ids in steps():
    for kind, tree in trees.items():
        part = slice(None) if kind == "serial" else slice(rank, None, size)
        f = phew.friends_of_friends(pos[part], masses=masses[part], velocities=velocities[part], ids=ids[part],
                                    box=10.0, periodic=True, comm=None if kind == "serial" else comm)
        h = phew.halo_properties(pos[part], velocities[part], f, masses=masses[part], ids=ids[part], box=10.0,
                                 periodic=True, n_most_bound=20, comm=None if kind == "serial" else comm)
        tree.add(ids[part], h.bound_label, h.tracers)
if rank == 0:
    assert trees["shared"].links.tobytes() == trees["serial"].links.tobytes()
    assert len(trees["serial"].links) > 10
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
# bad particles on one rank for the physics: every rank raises
pos, masses, velocities, ids = clustered_particles(33, 600, 200)
share = slice(rank, None, size)
labels = (pos[share, 0] > 5).astype(np.int64)
try:
    bad = pos[share][:, :2] if rank == size - 1 else pos[share]
    phew.halo_properties(bad, velocities[share], labels, ids=ids[share], box=10.0, periodic=True, comm=comm)
    sys.exit("rank %d: no error" % rank)
except ValueError as e:
    assert "(n, 3)" in str(e), e

# a rank without AMR blocks, through find_clumps; a rank with an empty grid block
blocks = amr_sample()
mine = blocks if rank == 0 else []
r = phew.find_clumps(mine, comm=comm, level0_shape=(32, 32, 32), spacing=1 / 32, periodic=True, threshold=3.0,
                     saddle=20.0)
assert len(r.clump_id) == len(mine) and (rank > 0 or len(r.clumps) == 7)
tiny = np.array([[[1.0]], [[3.0]]])
offset, block = phew.grid_block(tiny.shape, comm=comm)
where = tuple(slice(o, o + n) for o, n in zip(offset, block))
r = phew.find_clumps(tiny[where], comm=comm, offset=offset, global_shape=tiny.shape, threshold=0.5)
assert np.array_equal(r.clump_id, phew.find_clumps(tiny, threshold=0.5).clump_id[where])

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
