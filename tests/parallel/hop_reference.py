"""HOP (Eisenstein & Hut 1998) with the rules of issue 10, re-implemented in numpy independently
of the core, on given densities (the SPH densities are checked apart, against sph_reference.py).

- neighbours: each particle's nearest other particles in order of (squared distance, id), the
  squared distance (dx*dx + dy*dy) + dz*dz of nearest-image differences (scipy's cKDTree only
  proposes candidates: every particle within a radius that holds enough of them);
- hop: to the densest of itself and its n_hop - 1 nearest others, itself first, a later one only
  when strictly denser; chains lead to maxima; a maximum's particles are one HOP group;
- boundaries: for every particle and each of its n_merge nearest others in another group, the
  mean of the two densities; per pair of groups the largest;
- regroup: proper groups (peak >= peak) joined by boundaries >= saddle, each named by its
  highest peak (then the smallest id); each fringe group's widest path to a proper group
  (bottleneck Dijkstras from each proper group through fringe groups whose peaks are >= outer,
  by links >= outer), the best of equally wide ones by the proper group's higher peak, then its
  smaller peak id;
  particles below outer in no group; groups with fewer than min_members particles dropped;
  catalogue order: decreasing size, then smallest particle id."""
import heapq

import numpy as np
from scipy.spatial import cKDTree


def squared_distances(pos, i, j, box, periodic):
    d2 = 0.0
    for axis in (0, 1, 2):
        delta = pos[i, axis] - pos[j, axis]
        if periodic:
            size = box[axis]
            delta = np.where(2.0 * delta > size, delta - size, np.where(2.0 * delta < -size, delta + size, delta))
        d2 = d2 + delta * delta
    return d2


def nearest_others(pos, ids, box, periodic, k):
    """(n, k) indices of each particle's k nearest others, by (squared distance, id)."""
    n = len(pos)
    tree = cKDTree(pos, boxsize=np.asarray(box) if periodic else None)
    dist, _ = tree.query(pos, k=min(n, k + 1))
    radius = dist[:, -1] * (1 + 1e-9) + 1e-12  # every particle at the (k+1)-th distance, ties too
    out = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        cand = np.asarray(tree.query_ball_point(pos[i], radius[i]), dtype=np.int64)
        cand = cand[cand != i]
        d2 = squared_distances(pos, np.full(len(cand), i), cand, box, periodic)
        order = np.lexsort((ids[cand], d2))
        out[i] = cand[order[:k]]
    return out


def hop_groups(rho, near, n_hop):
    """Per particle the index of the maximum its chain ends at."""
    n = len(rho)
    candidates = np.column_stack([np.arange(n), near[:, :n_hop - 1]])  # itself first
    target = candidates[np.arange(n), np.argmax(rho[candidates], axis=1)]  # the first densest
    while True:
        nxt = target[target]
        if np.array_equal(nxt, target):
            return target
        target = nxt


def boundaries(rho, near, group, n_merge):
    """{(a, b): largest mean density} over pairs of HOP groups a < b (maximum indices)."""
    out = {}
    for i in range(len(rho)):
        for j in near[i, :n_merge]:
            a, b = group[i], group[j]
            if a == b:
                continue
            key = (min(a, b), max(a, b))
            value = 0.5 * (rho[i] + rho[j])
            if key not in out or value > out[key]:
                out[key] = value
    return out


def regroup(peak, ids, edges, outer, saddle, peak_threshold, stats=None):
    """peak: {group: density}; returns {group: final group (a maximum's index) or None}."""
    proper = {g for g, p in peak.items() if p >= peak_threshold}
    parent = {g: g for g in proper}

    def find(g):
        while parent[g] != g:
            g = parent[g]
        return g

    merges = 0
    for (a, b), v in edges.items():
        if a in proper and b in proper and v >= saddle:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb
                merges += 1
    better = lambda g: (peak[g], -ids[g])  # noqa: E731
    name = {}
    for g in proper:
        r = find(g)
        if r not in name or better(g) > better(name[r]):
            name[r] = g
    final = {g: name[find(g)] for g in proper}

    # widest paths, searched from each proper group p: a bottleneck Dijkstra through fringe
    # groups, by links >= outer (a weaker link makes the path fail), onwards from a fringe group
    # only if its peak is >= outer; choice[f] = the best (width, peak of p, -id of p, p)
    links = {}
    for (a, b), v in edges.items():
        if v >= outer:
            links.setdefault(a, []).append((b, v))
            links.setdefault(b, []).append((a, v))
    choice = {}
    for p in proper:
        widest = {}
        heap = [(-v, f) for f, v in links.get(p, ()) if f not in proper]
        heapq.heapify(heap)
        while heap:
            w, f = heapq.heappop(heap)
            w = -w
            if f in widest:
                continue
            widest[f] = w
            if peak[f] < outer:
                continue
            for g, v in links.get(f, ()):
                if g not in proper and g not in widest and peak[g] >= outer:
                    heapq.heappush(heap, (-min(w, v), g))
        for f, w in widest.items():
            cand = (w, peak[p], -ids[p], p)
            if f not in choice or cand[:3] > choice[f][:3]:
                choice[f] = cand
    attached = dropped = 0
    for f in peak:
        if f in proper:
            continue
        final[f] = final[choice[f][3]] if f in choice else None
        if peak[f] >= outer:
            attached += f in choice
            dropped += f not in choice
    if stats is not None:
        stats.update(proper=len(proper), merges=merges, fringe_attached=attached, fringe_dropped=dropped)
    return final


def hop(near, ids, masses, rho, outer, saddle_factor=2.5, peak_factor=3.0, n_hop=64, n_merge=4, min_members=10,
        stats=None):
    """GroupId per particle (-1: none) and the groups' rows (size, smallest id, mass, peak id,
    peak density), in catalogue order. near: nearest_others with at least max(n_hop - 1,
    n_merge) columns."""
    n = len(rho)
    ids = np.arange(n) if ids is None else np.asarray(ids)
    masses = np.ones(n) if masses is None else np.asarray(masses)
    group = hop_groups(rho, near, n_hop)
    maxima = np.unique(group)
    peak = {int(g): rho[g] for g in maxima}
    edges = boundaries(rho, near, group, n_merge)
    final = regroup(peak, ids, edges, outer, saddle_factor * outer, peak_factor * outer, stats)
    members = {}
    for i in range(n):
        f = final[int(group[i])]
        if rho[i] >= outer and f is not None:
            members.setdefault(f, []).append(i)
    kept = [(f, m) for f, m in members.items() if len(m) >= min_members]
    kept.sort(key=lambda fm: (-len(fm[1]), int(ids[fm[1]].min())))
    label = -np.ones(n, dtype=np.int64)
    rows = []
    for k, (f, m) in enumerate(kept):
        label[m] = k
        rows.append((len(m), int(ids[m].min()), float(masses[m].sum()), int(ids[f]), float(rho[f])))
    if stats is not None:
        stats.update(hop_groups=len(maxima), groups=len(rows))
    return label, rows
