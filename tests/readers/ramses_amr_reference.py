"""RAMSES AMR files read independently for the tests (numpy over the Fortran records, from the
layout RAMSES's output_amr writes and yt documents), and hydro files written for a real amr
file's grids with values that are a known function of each cell's centre, so that a reader
that takes a value from the wrong grid, cell or variable is caught."""
import os

import numpy as np

from reference_readers import fortran_records, ramses_info

N_VARIABLES = 5
NAMES = ["density", "velocity_x", "velocity_y", "velocity_z", "pressure"]


def known_value(variable, level, x, y, z):
    """What the written hydro files hold for a cell centred at (x, y, z) on level."""
    return 1.0 + variable * 1000.0 + level * 100.0 + 10.0 * x + 3.0 * y + 7.0 * z + 0.001 * x * y * z


# Three Gaussian blobs in the periodic unit box (centre, width, height) over a density of 1:
# the clumps PHEW must find when they are the density (blob_value).
BLOBS = [((0.2537, 0.2461, 0.2519), 0.03, 100.0), ((0.7013, 0.3027, 0.5981), 0.02, 50.0),
         ((0.4969, 0.8041, 0.1522), 0.04, 30.0)]  # off the cells' symmetry: no equal peaks


def blob_density(x, y, z):
    rho = np.ones_like(np.asarray(x, dtype=np.float64))
    for (cx, cy, cz), width, height in BLOBS:
        d2 = sum(np.minimum(abs(a - c), 1.0 - abs(a - c)) ** 2 for a, c in ((x, cx), (y, cy), (z, cz)))
        rho = rho + height * np.exp(-d2 / (2.0 * width * width))
    return rho


def blob_value(variable, level, x, y, z):
    """The density is blob_density (on every level alike); the other variables known_value."""
    return blob_density(x, y, z) if variable == 0 else known_value(variable, level, x, y, z)


def amr_grids(path, ncpu_expected):
    """{(ilevel, ibound): dict(xg=(n, 3), son=(8, n))} of one amr file, and nlevelmax."""
    recs = fortran_records(path)
    i32 = lambda r: np.frombuffer(r, "<i4")  # noqa: E731
    ncpu, ndim, nlevelmax, nboundary = i32(recs[0])[0], i32(recs[1])[0], i32(recs[3])[0], i32(recs[5])[0]
    assert ncpu == ncpu_expected and ndim == 3 and nboundary == 0
    numbl = i32(recs[21]).reshape(nlevelmax, ncpu)  # Fortran numbl(ncpu, nlevelmax)
    at = 29  # 23 header records + free list + ordering + the Hilbert keys + 3 coarse records
    assert recs[24][:7] == b"hilbert"
    grids = {}
    for ilevel in range(1, nlevelmax + 1):
        for ibound in range(1, ncpu + 1):
            n = numbl[ilevel - 1, ibound - 1]
            if n == 0:
                continue
            block = recs[at: at + 37]
            xg = np.stack([np.frombuffer(block[3 + d], "<f8") for d in range(3)], axis=1)
            son = np.stack([i32(block[13 + c]) for c in range(8)])
            assert xg.shape == (n, 3) and son.shape == (8, n)
            grids[(ilevel, ibound)] = dict(xg=xg, son=son)
            at += 37
    assert at == len(recs)
    return grids, nlevelmax


def cell_centres(xg, ilevel):
    """(8, n, 3): the centres of the grids' cells, cell c = ix + 2 iy + 4 iz."""
    dx = 0.5**ilevel
    offsets = np.array([[(c & 1) - 0.5, ((c >> 1) & 1) - 0.5, ((c >> 2) & 1) - 0.5] for c in range(8)]) * dx
    return xg[None, :, :] + offsets[:, None, :]


def own_cells(folder):
    """Every own cell of levels >= levelmin: {(level, i, j, k): (leaf, centre)}, level from 0."""
    info = ramses_info(folder)
    ncpu, levelmin = int(info["ncpu"]), int(info["levelmin"])
    cells = {}
    for cpu in range(1, ncpu + 1):
        grids, _ = amr_grids(os.path.join(folder, f"amr_{info['number']:05d}.out{cpu:05d}"), ncpu)
        for (ilevel, ibound), g in grids.items():
            if ibound != cpu or ilevel < levelmin:
                continue
            centres = cell_centres(g["xg"], ilevel)
            index = np.floor(centres * 2**ilevel).astype(np.int64)
            for c in range(8):
                for k in range(len(g["xg"])):
                    key = (ilevel - levelmin, *index[c, k])
                    assert key not in cells
                    cells[key] = (g["son"][c, k] == 0, centres[c, k])
    return cells, info


def write_hydro(folder, descriptor=True, value=known_value):
    """hydro_NNNNN.outCCCCC for every CPU file, value(variable, level, x, y, z) on every grid
    (own and copies)."""
    info = ramses_info(folder)
    ncpu, number = int(info["ncpu"]), info["number"]

    def record(f, values):
        data = np.ascontiguousarray(values).tobytes()
        f.write(np.int32(len(data)).tobytes() + data + np.int32(len(data)).tobytes())

    for cpu in range(1, ncpu + 1):
        grids, nlevelmax = amr_grids(os.path.join(folder, f"amr_{number:05d}.out{cpu:05d}"), ncpu)
        with open(os.path.join(folder, f"hydro_{number:05d}.out{cpu:05d}"), "wb") as f:
            for v in (ncpu, N_VARIABLES, 3, nlevelmax, 0):
                record(f, np.int32(v))
            record(f, np.float64(5.0 / 3.0))
            for ilevel in range(1, nlevelmax + 1):
                for ibound in range(1, ncpu + 1):
                    g = grids.get((ilevel, ibound))
                    record(f, np.int32(ilevel))
                    record(f, np.int32(0 if g is None else len(g["xg"])))
                    if g is None:
                        continue
                    centres = cell_centres(g["xg"], ilevel)
                    for c in range(8):
                        for v in range(N_VARIABLES):
                            x, y, z = centres[c].T
                            record(f, np.asarray(value(v, ilevel - int(info["levelmin"]), x, y, z), "<f8"))
    path = os.path.join(folder, "hydro_file_descriptor.txt")
    if descriptor:
        with open(path, "w") as f:
            f.write("# version:  1\n# ivar, variable_name, variable_type\n")
            for k, name in enumerate(NAMES):
                f.write(f"{k + 1:2d}, {name}, d\n")
    elif os.path.exists(path):
        os.remove(path)
