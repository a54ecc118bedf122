"""phew.find_clumps_amr: the grid's answer on an unrefined hierarchy, the sample hierarchy's
known clumps, any order of the blocks, covered cells unlabelled, bad blocks."""
import numpy as np
import pytest

import phew
from conftest import amr_sample, lognormal

SAMPLE = dict(level0_shape=(32, 32, 32), spacing=1 / 32, periodic=True, threshold=3.0, saddle=20.0)


def test_one_level_is_the_grid():
    rho = lognormal((24, 20, 28), 51)
    options = dict(threshold=1.2, relevance=1.2, saddle="auto", spacing=(0.5, 1.0, 2.0), periodic=True)
    grid = phew.find_clumps(rho, **options)
    halves = [(0, (12, 0, 0), rho[12:]), (0, (0, 0, 0), rho[:12])]
    amr = phew.find_clumps_amr(halves, level0_shape=rho.shape, **options)
    assert np.array_equal(np.concatenate([amr.clump_id[1], amr.clump_id[0]]), grid.clump_id)
    assert np.array_equal(np.concatenate([amr.halo_id[1], amr.halo_id[0]]), grid.halo_id)
    for table in ("clumps", "haloes", "dendrogram"):
        assert getattr(amr, table).tobytes() == getattr(grid, table).tobytes(), table


def test_the_sample_hierarchy():
    blocks = amr_sample()
    r = phew.find_clumps_amr(blocks, **SAMPLE)
    # datasets/README.md: D, A1, A2, C1, B1, B2 and E; saddle merging makes 5 haloes
    assert (len(r.clumps), len(r.haloes)) == (7, 5)
    # covered cells (under a finer block) are no leaves: -1
    covered = 0
    for (level, lo, rho), labels in zip(blocks, r.peak_patch_id):
        mask = np.zeros(rho.shape, bool)
        for finer, flo, frho in blocks:
            if finer == level + 1:
                a = [(flo[k] // 2 - lo[k], (flo[k] + frho.shape[k]) // 2 - lo[k]) for k in range(3)]
                if all(a[k][1] > 0 and a[k][0] < rho.shape[k] for k in range(3)):
                    mask[tuple(slice(max(a[k][0], 0), min(a[k][1], rho.shape[k])) for k in range(3))] = True
        assert (labels[mask] == -1).all()
        assert (labels[~mask & (rho > 3.0)] >= 0).all()
        covered += mask.sum()
    assert covered == 178176 - 160000  # datasets/README.md: cells less leaf cells
    assert phew.find_clumps(blocks, **SAMPLE).clumps.tobytes() == r.clumps.tobytes()  # find_clumps hands on
    reordered = phew.find_clumps_amr(blocks[::-1], **SAMPLE)
    assert reordered.clumps.tobytes() == r.clumps.tobytes()
    assert all(np.array_equal(a, b) for a, b in zip(reordered.clump_id[::-1], r.clump_id))


@pytest.mark.parametrize("blocks, error, words", [
    ([(0, (0, 0, 0), np.ones((4, 4)))], ValueError, "3-D"),
    ([(0, (0, 0), np.ones((4, 4, 4)))], ValueError, "lo"),
    ([(-1, (0, 0, 0), np.ones((4, 4, 4)))], ValueError, "level"),
    ([(0, (0, 0, 0), np.ones((4, 4, 4), complex))], TypeError, "real numbers"),
    ([(0, (0, 0, 0), np.ones((4, 4, 4))), (1, (1, 0, 0), np.ones((2, 2, 2)))], ValueError, "even|align|inside"),
    ([(0, (0, 0, 0), np.ones((4, 4, 3)))], ValueError, "tile|cover|domain"),
    ("not blocks", TypeError, "block 0"),
])
def test_bad_hierarchies_raise(blocks, error, words):
    with pytest.raises(error, match=words):
        phew.find_clumps_amr(blocks, level0_shape=(4, 4, 4), threshold=0.5)
