"""The particle sets of the parallel command-line tests, generated at test time (seeded).

cases() returns the list of PointCase, each in a periodic and an open flavour:
  corner_halo  blobs and a uniform background, one blob centred on the corner (0, 0, 0) of
               the box so that, periodic, one halo spans all 8 corners; float64, masses and
               velocities given
  lattice      a lattice of dyadic coordinates (multiples of 1/16, a finer one of 1/64 in a
               small cube): particles exactly on the subvolumes' faces (0.5, 0.25, ...), and
               exact ties of distances and densities everywhere; float32
  sparse       a dense clump plus a few isolated particles far from it, whose neighbourhoods
               reach across the box (the padding must widen); float32, ids given
  corner_only  every particle in a small corner of the box, in two blobs; float64
  planes       600 particles on two planes x = 10 and x = 30 of a long box: every cut across x
               falls on a plane, so most subvolumes hold no particle (on 6 ranks at most 2
               do); float64
  small        150 particles: on 3 or more ranks a subvolume holds fewer particles than one
               neighbourhood (65), so its neighbourhoods all need the padding; float64
Arrays are (n, 3) float64, holding exactly the values written (float32 cases are rounded)."""
import numpy as np


class PointCase:
    def __init__(self, name, pos, box, periodic, kind="float64", masses=None, velocities=None, ids=None,
                 threshold=2.0, relevance=2.0, saddle=None, neighbours=16, density_neighbours=64, expect=None):
        self.name = name + ("_periodic" if periodic else "_open")
        self.box, self.periodic, self.type = tuple(box), periodic, kind
        dtype = np.float32 if kind == "float32" else np.float64
        self.pos = np.asarray(pos, dtype=dtype).astype(np.float64)
        if periodic:  # a value rounded up to the box size wraps to 0 (the box is closed when open)
            self.pos[self.pos >= np.asarray(box)] = 0.0
        self.masses = None if masses is None else np.asarray(masses, dtype=dtype).astype(np.float64)
        self.velocities = None if velocities is None else np.asarray(velocities, dtype=dtype).astype(np.float64)
        self.ids = ids
        self.threshold, self.relevance, self.saddle = threshold, relevance, saddle
        self.neighbours, self.density_neighbours = neighbours, density_neighbours
        self.expect = expect  # what the case must exercise (checked by test_cli_points.py)

    @property
    def n(self):
        return len(self.pos)

    def write(self, directory):
        """Writes the particle files into directory; returns their options."""
        little = "<f4" if self.type == "float32" else "<f8"
        opts = []
        for option, values, dtype in (("--points", self.pos, little), ("--masses", self.masses, little),
                                      ("--velocities", self.velocities, little), ("--ids", self.ids, "<i8")):
            if values is None:
                continue
            path = f"{directory}/{self.name}-{option[2:]}.raw"
            np.asarray(values).astype(dtype).tofile(path)
            opts += [option, path]
        if self.velocities is not None:  # these cases test the finders; cli_physics tests the physics
            opts.append("--no-physics")
        return opts

    def args(self, files, prefix, threads):
        """The phew command line (without the program)."""
        a = files + ["--type", self.type, "--box"] + [repr(float(b)) for b in self.box]
        a += ["--neighbours", str(self.neighbours), "--density-neighbours", str(self.density_neighbours),
              "--threshold", repr(self.threshold), "--relevance", repr(self.relevance),
              "--threads", str(threads), "--output", prefix]
        if self.saddle is not None:
            a += ["--saddle", repr(self.saddle)]
        if self.periodic:
            a.append("--periodic")
        return a


def _blobs(rng, centres, sigma, count, box):
    return np.concatenate([c + sigma * rng.standard_normal((count, 3)) for c in centres]) % np.asarray(box)


def corner_halo(periodic):
    rng = np.random.default_rng(101)
    box = (1.0, 1.2, 0.9)
    centres = np.array([[0.0, 0.0, 0.0], [0.5, 0.6, 0.45], [0.25, 0.9, 0.6]])
    pos = np.concatenate([_blobs(rng, centres, 0.05, 500, box), rng.random((500, 3)) * box])
    vel = rng.standard_normal(pos.shape)
    masses = 0.5 + rng.random(len(pos))
    return PointCase("corner_halo", pos, box, periodic, masses=masses, velocities=vel, saddle=4.0,
                     expect="one halo over the 8 corners" if periodic else "the corner blob split")


def lattice(periodic):
    coarse = np.stack(np.meshgrid(*[np.arange(16) / 16] * 3, indexing="ij"), -1).reshape(-1, 3)
    fine = 0.5 + np.stack(np.meshgrid(*[np.arange(8) / 64] * 3, indexing="ij"), -1).reshape(-1, 3)
    fine = fine[~np.all((fine * 16) % 1 == 0, axis=1)]  # not on the coarse lattice
    pos = np.concatenate([coarse, fine])
    return PointCase("lattice", pos, (1.0, 1.0, 1.0), periodic, kind="float32", threshold=5.0,
                     expect="equal densities far from the fine cube" if periodic else None)


def sparse(periodic):
    rng = np.random.default_rng(303)
    box = (2.0, 2.0, 2.0)
    clump = _blobs(rng, [[0.5, 0.5, 0.5]], 0.06, 2500, box)
    far = 1.1 + 0.8 * rng.random((15, 3))  # in the opposite corner region
    pos = np.concatenate([clump, far])
    ids = rng.permutation(len(pos)).astype(np.int64) * 7 + 11
    return PointCase("sparse", pos, box, periodic, kind="float32", ids=ids, threshold=3.0,
                     expect="a wide padding")


def corner_only(periodic):
    rng = np.random.default_rng(404)
    box = (4.0, 4.0, 4.0)
    pos = np.concatenate([_blobs(rng, [[0.06, 0.06, 0.06], [0.14, 0.12, 0.1]], 0.015, 700, box)])
    pos = np.clip(pos, 0.0, 0.199)  # all in [0, 0.2)^3
    return PointCase("corner_only", pos, box, periodic, threshold=50.0, expect="all in a corner")


def planes(periodic):
    rng = np.random.default_rng(505)
    n = 300
    yz = np.concatenate([rng.random((n, 2)), (0.5 + 0.05 * rng.standard_normal((n, 2))) % 1.0])
    pos = np.column_stack([np.repeat([10.0, 30.0], n), yz])
    return PointCase("planes", pos, (40.0, 1.0, 1.0), periodic, threshold=1.0, expect="2 planes")


def small(periodic):
    rng = np.random.default_rng(606)
    return PointCase("small", rng.random((150, 3)), (1.0, 1.0, 1.0), periodic, threshold=1.0, relevance=1.2)


def cases():
    return [make(periodic) for make in (corner_halo, lattice, sparse, corner_only, planes, small)
            for periodic in (True, False)]
