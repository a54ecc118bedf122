"""The SPH density of the particle path, re-implemented in numpy and scipy independently of the
core: the M4 cubic spline with support 2h, h_i = half the distance to the (n_dens + 1)-th
nearest particle with the particle itself counted first, and
    rho_i = sum_j m_j [W(r_ij, h_i) + W(r_ij, h_j)] / 2   over all j (i included),
divided by the mean density (total mass / box volume). Distances along periodic axes go to
the nearest image. scipy's cKDTree (boxsize for periodic boxes) only finds the candidates: the
nearest particles and, for each i, every j within 2 h_i; the distances and sums are numpy's.
Summing W(r_ij, h_i) over the balls of i into rho_i and into rho_j gives both halves."""
import numpy as np
from scipy.spatial import cKDTree


def kernel(r, h):
    q = r / h
    t = np.maximum(2.0 - q, 0.0)
    w = np.where(q < 1.0, 1.0 - q * q * (1.5 - 0.75 * q), 0.25 * (t * t * t))
    return w / (np.pi * (h * h * h))


def distance(pos, i, j, box, periodic):
    """Distances between the particles i and j (index arrays)."""
    d2 = 0.0
    for axis in (0, 1, 2):  # (dx*dx + dy*dy) + dz*dz, like the core
        delta = pos[i, axis] - pos[j, axis]
        if periodic:
            size = box[axis]
            delta = np.where(2.0 * delta > size, delta - size, np.where(2.0 * delta < -size, delta + size, delta))
        d2 = d2 + delta * delta
    return np.sqrt(d2)


def density(pos, masses, box, periodic, n_dens):
    n = len(pos)
    m = np.ones(n) if masses is None else masses
    tree = cKDTree(pos, boxsize=np.asarray(box) if periodic else None)
    _, nearest = tree.query(pos, k=n_dens + 1)
    everyone = np.arange(n)
    h = 0.5 * distance(pos, everyone, nearest[:, n_dens], box, periodic)
    balls = tree.query_ball_point(pos, 2.0 * h * (1 + 1e-12))
    i = np.repeat(everyone, [len(b) for b in balls])
    j = np.concatenate([np.asarray(b, dtype=np.int64) for b in balls])
    w = 0.5 * kernel(distance(pos, i, j, box, periodic), h[i])  # W(r_ij, h_i) / 2
    rho = np.bincount(i, weights=m[j] * w, minlength=n) + np.bincount(j, weights=m[i] * w, minlength=n)
    return rho / (m.sum() / (box[0] * box[1] * box[2]))
