"""phew: clumps, sub-clumps and haloes in simulation data (docs/python.md).

    import numpy as np, phew
    r = phew.find_clumps(density, threshold="auto", relevance=2, saddle="auto", periodic=True)
    r.clump_id            # int64 labels shaped as density, -1 outside every clump
    r.clumps.to_pandas()  # the catalogue (the CLI's -clumps.csv columns)
"""
from ._core import Cancelled, Error
from ._grids import ClumpResult, find_clumps, grid_block
from ._tables import Table

__all__ = ["find_clumps", "grid_block", "ClumpResult", "Table", "Error", "Cancelled"]
