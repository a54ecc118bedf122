"""phew: clumps, sub-clumps and haloes in simulation data (docs/python.md).

    import numpy as np, phew
    r = phew.find_clumps(density, threshold="auto", relevance=2, saddle="auto", periodic=True)
    r.clump_id            # int64 labels shaped as density, -1 outside every clump
    r.clumps.to_pandas()  # the catalogue (the CLI's -clumps.csv columns)
"""
from ._core import Cancelled, Error
from ._amr import find_clumps_amr
from ._dendrogram import dendrogram_layout
from ._clumps import ClumpResult
from ._grids import find_clumps, grid_block
from ._points import GroupResult, find_clumps_points, friends_of_friends, hop, particle_density
from ._links import MergerTree, link_steps
from ._physics import PhysicsResult, halo_properties
from ._snapshots import AmrSnapshot, Snapshot, read_amr, read_snapshot
from ._tables import Table

__all__ = ["find_clumps", "grid_block", "find_clumps_amr", "find_clumps_points", "friends_of_friends", "hop", "particle_density",
           "GroupResult", "halo_properties", "PhysicsResult", "read_snapshot", "Snapshot", "read_amr", "AmrSnapshot", "link_steps", "MergerTree", "dendrogram_layout", "ClumpResult", "Table", "Error", "Cancelled"]
