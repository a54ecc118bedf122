"""Shared fixtures of the Python package's tests: seeded fields and the CLI."""
import os
import subprocess

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter


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
