"""Shared fixtures of the Python package's tests: seeded fields and the CLI."""
import csv
import os
import subprocess

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter


def read_csv(path):
    """A CSV table of the tool's: its header, its columns as float64 arrays by name (the
    tool's 17 digits give the doubles back) and its number of rows."""
    with open(path) as f:
        rows = list(csv.reader(f))
    columns = {name: np.array([float(row[j]) for row in rows[1:]]) for j, name in enumerate(rows[0])}
    return rows[0], columns, len(rows) - 1


def lognormal(shape, seed, contrast=2.0, smoothing=1.5, dtype=np.float32):
    g = gaussian_filter(np.random.default_rng(seed).standard_normal(shape), smoothing, mode="wrap")
    return np.exp(contrast * g / g.std()).astype(dtype)


@pytest.fixture
def field():
    return lognormal((24, 20, 28), 11)


@pytest.fixture
def cli():
    path = os.environ.get("PHEW_CLI")
    if not path:
        pytest.fail("PHEW_CLI (the phew tool) is not set: run these tests through ctest")

    def run(*args):
        done = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    return run


def clustered_particles(seed, n_clustered=3000, n_background=2000, box=10.0, dtype=np.float32):
    """Blobs in a periodic box with a uniform background: positions, masses, velocities, ids."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, box, (12, 3))
    blobs = centres[rng.integers(0, 12, n_clustered)] + rng.normal(0, 0.03 * box, (n_clustered, 3))
    pos = np.concatenate([blobs % box, rng.uniform(0, box, (n_background, 3))]).astype(dtype)
    n = len(pos)
    masses = rng.uniform(0.5, 2.0, n).astype(dtype)
    velocities = rng.normal(0, 1, (n, 3)).astype(dtype)
    ids = rng.permutation(10 * n)[:n].astype(np.int64)
    return pos, masses, velocities, ids


def amr_sample():
    """datasets/amr_sample (4 levels, 179 blocks; datasets/README.md) as find_clumps_amr takes
    it: (level, lo, density indexed [x, y, z]) per block, from its block list and raw file."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets")
    raw = np.fromfile(os.path.join(root, "amr_sample.raw"), np.float32)
    blocks, at = [], 0
    with open(os.path.join(root, "amr_sample.blocks.txt")) as f:
        for line in f:
            words = line.split()
            if words and words[0] == "block":
                level, lo, dims = int(words[1]), tuple(map(int, words[2:5])), tuple(map(int, words[5:8]))
                n = dims[0] * dims[1] * dims[2]
                # the file stores x fastest: [z, y, x] in C order, transposed to [x, y, z]
                blocks.append((level, lo, raw[at:at + n].reshape(dims[::-1]).transpose(2, 1, 0)))
                at += n
    assert at == len(raw)
    return blocks
