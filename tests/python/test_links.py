"""phew.link_steps against a plain-Python reference of the merger-tree rules
(docs/merger-trees.md: shared masses both ways, main partners with ties to the smaller id,
counts of progenitors and descendants, structures sharing nothing alone)."""
import math
from collections import defaultdict

import numpy as np
import pytest

import phew


def reference(e_ids, e_labels, e_mass, l_ids, l_labels, l_mass):
    earlier = dict(zip(e_ids, zip(e_labels, e_mass)))
    later = dict(zip(l_ids, zip(l_labels, l_mass)))
    mass_p, mass_d = defaultdict(list), defaultdict(list)
    for label, m in earlier.values():
        if label >= 0:
            mass_p[label].append(m)
    for label, m in later.values():
        if label >= 0:
            mass_d[label].append(m)
    shared_e, shared_l = defaultdict(list), defaultdict(list)
    for i, (p, me) in earlier.items():
        if p >= 0 and i in later and later[i][0] >= 0:
            d, ml = later[i]
            shared_e[p, d].append(me)
            shared_l[p, d].append(ml)
    pairs = {k: (math.fsum(shared_e[k]), math.fsum(shared_l[k])) for k in shared_e}
    main_p = {}  # descendant -> its main progenitor
    main_d = {}
    for (p, d), (se, sl) in sorted(pairs.items()):
        if d not in main_p or sl > pairs[main_p[d], d][1]:
            main_p[d] = p
        if p not in main_d or se > pairs[p, main_d[p]][0]:
            main_d[p] = d
    n_prog = defaultdict(int)
    n_desc = defaultdict(int)
    for p, d in main_d.items():
        n_prog[d] += 1
    for d, p in main_p.items():
        n_desc[p] += 1
    rows = []
    for (p, d), (se, sl) in pairs.items():
        mp, md = math.fsum(mass_p[p]), math.fsum(mass_d[d])
        rows.append((p, d, mp, md, se, sl, se / mp if mp else 0.0, sl / md if md else 0.0, int(main_p[d] == p),
                     int(main_d[p] == d), n_prog[d], n_desc[p]))
    for p in mass_p:
        if not any(k[0] == p for k in pairs):
            rows.append((p, -1, math.fsum(mass_p[p]), 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0))
    for d in mass_d:
        if not any(k[1] == d for k in pairs):
            rows.append((-1, d, 0.0, math.fsum(mass_d[d]), 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0))
    rows.sort(key=lambda r: (r[1] if r[1] >= 0 else math.inf, r[0]))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_links_follow_the_rules(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    ids = rng.permutation(10 * n)[:n]
    e_labels = rng.integers(-1, 25, n)
    # the later step: most elements keep a structure mapped by a random merger table, some move
    merge = rng.integers(0, 18, 25)
    l_labels = np.where(e_labels >= 0, merge[np.maximum(e_labels, 0)], -1)
    moved = rng.random(n) < 0.15
    l_labels[moved] = rng.integers(-1, 20, moved.sum())
    e_mass = rng.uniform(0.5, 2.0, n) * 10.0 ** rng.integers(-3, 4, n)
    l_mass = e_mass * rng.uniform(0.9, 1.1, n)
    order = rng.permutation(n)  # the later step lists its elements in another order
    got = phew.link_steps(ids, e_labels, ids[order], l_labels[order], earlier_masses=e_mass,
                          later_masses=l_mass[order])
    want = reference(ids, e_labels, e_mass, ids[order], l_labels[order], l_mass[order])
    names = ["ProgenitorId", "DescendantId", "ProgenitorMass", "DescendantMass", "SharedMassEarlier",
             "SharedMassLater", "ProgenitorFraction", "DescendantFraction", "MainProgenitor", "MainDescendant",
             "NumberOfProgenitors", "NumberOfDescendants"]
    assert len(got) == len(want)
    for j, name in enumerate(names):
        assert list(got[name]) == [row[j] for row in want], name
    assert (got["Kind"] == 0).all() and (got["ProgenitorStep"] == -1).all()


def test_bad_steps_raise():
    with pytest.raises(ValueError, match="twice|more than once|duplicate"):
        phew.link_steps([1, 1], [0, 0], [1], [0])
    with pytest.raises(ValueError, match="labels .* must have shape"):
        phew.link_steps([1, 2], [0], [1], [0])
    with pytest.raises(TypeError, match="ids must hold integers"):
        phew.link_steps(np.array([1.5, 2.5]), [0, 0], [1], [0])
    with pytest.raises(TypeError, match="ids must hold integers"):
        phew.link_steps(np.array(["1", "2"]), [0, 0], [1], [0])
    with pytest.raises(ValueError, match="does not fit in int64"):
        phew.link_steps(np.array([2 ** 63 + 3], np.uint64), [0], [1], [0])
    with pytest.raises(ValueError, match="mass"):
        phew.link_steps([1], [0], [1], [0], earlier_masses=[np.nan])
