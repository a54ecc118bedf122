"""phew: clumps, sub-clumps and haloes in simulation data (docs/python.md).

    import numpy as np, phew
    r = phew.find_clumps(density, threshold="auto", relevance=2, saddle="auto", periodic=True)
    r.clump_id            # int64 labels shaped as density, -1 outside every clump
    r.clumps.to_pandas()  # the catalogue (the CLI's -clumps.csv columns)
"""
from ._core import Cancelled, Error
from ._grids import ClumpResult, find_clumps
from ._tables import Table

__all__ = ["find_clumps", "ClumpResult", "Table", "Error", "Cancelled"]
