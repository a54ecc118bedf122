#!/usr/bin/python3
"""A small, slow, independent re-implementation of PHEW (Bleuler, Teyssier et al. 2015) in
numpy and plain Python, used to check the sample dataset and the core's results.

It follows the paper (sections 2.2 to 2.6) and the conventions of phew.h:
  * test cells have density strictly above the threshold;
  * every test cell points at its densest neighbour among the 26 (itself for a peak); ties
    go to the lower global cell id (ix + nx*(iy + ny*iz));
  * the saddle between two neighbouring peak patches is the highest (rho_a + rho_b) / 2 over
    pairs of neighbouring test cells, one in each patch;
  * noise removal: level by level, an alive peak whose relevance (peak / key saddle, or
    peak / threshold when isolated) is below the relevance threshold merges into its key
    neighbour if that neighbour is higher (density, then lower id); isolated irrelevant
    peaks are discarded;
  * saddle merging: the same, with "key saddle > saddle threshold" as the criterion; the
    level of a merger is the round in which it happens (the dendrogram's Level).

Not meant for big grids: the merging runs over peaks in Python.
"""
import numpy as np


def _shifted(a, d, periodic, fill):
    """b[z,y,x] = a[z+dz, y+dy, x+dx] (array axes z,y,x; d = (dx,dy,dz)); outside -> fill."""
    out = a
    for axis_xyz, s in enumerate(d):
        if s == 0:
            continue
        axis = 2 - axis_xyz
        if periodic[axis_xyz]:
            out = np.roll(out, -s, axis=axis)
        else:
            out = np.roll(out, -s, axis=axis)
            idx = [slice(None)] * 3
            idx[axis] = slice(-1, None) if s > 0 else slice(0, 1)
            out[tuple(idx)] = fill
    return out


OFFSETS = [(dx, dy, dz) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
FORWARD = [d for d in OFFSETS if (d[2], d[1], d[0]) > (0, 0, 0)]


def watershed(rho, threshold, periodic=(False, False, False)):
    """Returns (label, peaks): label[z,y,x] = global id of the peak of the cell's patch, -1
    below threshold; peaks = sorted array of peak global ids."""
    nz, ny, nx = rho.shape
    gid = np.arange(rho.size, dtype=np.int64).reshape(rho.shape)
    best_val = rho.astype(np.float64).copy()
    best_id = gid.copy()
    for d in OFFSETS:
        if d == (0, 0, 0):
            continue
        v = _shifted(rho.astype(np.float64), d, periodic, -np.inf)
        i = _shifted(gid, d, periodic, -1)
        better = (v > best_val) | ((v == best_val) & (i < best_id) & (i >= 0))
        best_val = np.where(better, v, best_val)
        best_id = np.where(better, i, best_id)
    test = rho > threshold
    up = np.where(test, best_id, -1).ravel()
    lab = up.copy()
    t = lab >= 0
    while True:
        nxt = lab.copy()
        nxt[t] = lab[lab[t]]
        if np.array_equal(nxt, lab):
            break
        lab = nxt
    peaks = np.nonzero((up == np.arange(up.size)) & (up >= 0))[0]
    return lab.reshape(rho.shape), peaks


def saddles(rho, label, periodic=(False, False, False)):
    """dict {(p, q) with p < q: saddle density}."""
    r = rho.astype(np.float64)
    keys_a, keys_b, vals = [], [], []
    for d in FORWARD:
        lb = _shifted(label, d, periodic, -1)
        rb = _shifted(r, d, periodic, 0.0)
        m = (label >= 0) & (lb >= 0) & (label != lb)
        a, b = label[m], lb[m]
        keys_a.append(np.minimum(a, b))
        keys_b.append(np.maximum(a, b))
        vals.append(0.5 * (r[m] + rb[m]))
    a = np.concatenate(keys_a)
    b = np.concatenate(keys_b)
    v = np.concatenate(vals)
    out = {}
    if a.size == 0:
        return out
    order = np.lexsort((v, b, a))
    a, b, v = a[order], b[order], v[order]
    last = np.ones(a.size, dtype=bool)
    last[:-1] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    for p, q, s in zip(a[last].tolist(), b[last].tolist(), v[last].tolist()):
        out[(p, q)] = s
    return out


def merge_levels(alive, density, edges, rule, value, density_threshold):
    """Level-by-level merging. alive: set of peak ids; density: {peak: rho};
    edges: {(p, q): saddle} between alive peaks. Returns (group, events, levels, edges,
    discarded) with group: {peak: final peak}, events: [(child, parent, saddle, level)]."""
    def higher(p, q):
        return density[p] > density[q] or (density[p] == density[q] and p < q)

    group = {p: p for p in alive}
    alive = set(alive)
    edges = dict(edges)
    events = []
    level = 0
    while True:
        key = {}
        for (p, q), s in edges.items():
            for a, b in ((p, q), (q, p)):
                k = key.get(a)
                if k is None or s > k[0] or (s == k[0] and higher(b, k[1])):
                    key[a] = (s, b)
        into = {}
        for p in alive:
            k = key.get(p)
            if k is None or not higher(k[1], p):
                continue
            if rule == "relevance":
                merge = density[p] / k[0] < value
            else:
                merge = k[0] > value
            if merge:
                into[p] = k[1]
        if not into:
            break
        level += 1
        final = {}

        def resolve(p):
            while p in into:
                p = into[p]
            return p
        for p in into:
            final[p] = resolve(p)
            events.append((p, final[p], key[p][0], level))
        alive -= set(into)
        for p in group:
            g = group[p]
            if g in final:
                group[p] = final[g]
        new_edges = {}
        for (p, q), s in edges.items():
            p2, q2 = final.get(p, p), final.get(q, q)
            if p2 == q2:
                continue
            k = (min(p2, q2), max(p2, q2))
            if s > new_edges.get(k, -np.inf):
                new_edges[k] = s
        edges = new_edges
    discarded = set()
    if rule == "relevance":
        # isolated (no saddle left) and irrelevant relative to the threshold
        connected = set()
        for (p, q) in edges:
            connected.add(p)
            connected.add(q)
        for p in alive:
            if p not in connected and density[p] / density_threshold < value:
                discarded.add(p)
    return group, events, level, edges, discarded


def dendrogram_levels(clumps, events):
    """Level of the node each clump's structure reaches: returns {peak: max level of a node
    headed by that peak} and the overall depth."""
    node_level = {c: 0 for c in clumps}
    for child, parent, s, level in events:
        node_level[parent] = max(node_level[parent], level)
    depth = max(node_level.values()) if node_level else 0
    return node_level, depth


def find_clumps(rho, threshold, relevance=2.0, saddle=None, periodic=(False, False, False)):
    """Run the whole pipeline; returns a dict of results (see keys below)."""
    label, peaks = watershed(rho, threshold, periodic)
    flat = rho.ravel().astype(np.float64)
    density = {int(p): float(flat[p]) for p in peaks}
    edges = saddles(rho, label, periodic)
    g1, ev1, lev1, edges1, discarded = merge_levels(set(density), density, edges, "relevance",
                                                    relevance, threshold)
    clumps = sorted((p for p in set(g1.values()) if p not in discarded),
                    key=lambda p: (-density[p], p))
    res = dict(label=label, peaks=peaks, saddles=edges, noise_levels=lev1, noise_group=g1,
               discarded=discarded, clumps=clumps)
    if saddle is not None:
        e1 = {k: v for k, v in edges1.items() if k[0] not in discarded and k[1] not in discarded}
        g2, ev2, lev2, _, _ = merge_levels(set(clumps), density, e1, "saddle", saddle, threshold)
        haloes = sorted(set(g2.values()), key=lambda p: (-density[p], p))
        node_level, depth = dendrogram_levels(clumps, ev2)
        res.update(halo_of_clump=g2, haloes=haloes, saddle_events=ev2, saddle_levels=lev2,
                   halo_depth={h: node_level[h] for h in haloes}, depth=depth)
    # per-cell clump labels (peak id of the clump, -1 none)
    lab = label.ravel()
    peak_to_clump = np.full(rho.size, -1, dtype=np.int64)
    for p, g in g1.items():
        peak_to_clump[p] = -1 if g in discarded else g
    cl = np.where(lab >= 0, peak_to_clump[np.maximum(lab, 0)], -1)
    res["clump_label"] = cl.reshape(rho.shape)
    return res
