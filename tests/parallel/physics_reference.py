"""An independent numpy re-implementation of the physics of structures (docs/physics.md):
direct-sum softened potentials, the bottom-up unbinding with its bulk velocity iteration, and
every property of the catalogue, including the spherical-overdensity masses from all particles.
Written from the documented rules, not from the C code; the tests compare the tool with it."""
import numpy as np

G_ASTRO = 4.30091727003628e-9  # Mpc (km/s)^2 / Msun


def nearest_image(d, box, periodic):
    d = d.copy()
    for k in range(3):
        if periodic[k]:
            p = box[k]
            d[..., k] = np.where(2.0 * d[..., k] > p, d[..., k] - p, d[..., k])
            d[..., k] = np.where(2.0 * d[..., k] < -p, d[..., k] + p, d[..., k])
    return d


class Units:
    """G, a and the critical density (comoving units) of a run."""

    def __init__(self, cosmology=None, G=1.0):
        if cosmology is None:
            self.G, self.a, self.comoving = G, 1.0, False
            self.rho_crit = self.omega_m_a = self.delta_vir = np.nan
            return
        h, om, ol, a = cosmology
        e2 = om / a ** 3 + ol
        self.G, self.a, self.comoving = G_ASTRO, a, True
        self.rho_crit = 3.0 * 1e4 * e2 / (8.0 * np.pi * G_ASTRO) * a ** 3
        self.omega_m_a = om / a ** 3 / e2
        x = self.omega_m_a - 1.0
        self.delta_vir = 18.0 * np.pi ** 2 + 82.0 * x - 39.0 * x * x


def subtree_of(parent):
    """Per structure, the boolean mask of the structures in its subtree (itself included)."""
    n = len(parent)
    inside = np.zeros((n, n), dtype=bool)
    for s in range(n):
        v = s
        while v >= 0:
            inside[v, s] = True
            v = parent[v]
    return inside


def heights(parent):
    """0 for a structure without substructure, else 1 + the largest height of its children."""
    h = np.zeros(len(parent), dtype=np.int64)
    for s in range(len(parent)):
        v, d = s, 0
        while parent[v] >= 0:
            v, d = parent[v], d + 1
            h[v] = max(h[v], d)
    return h


def potentials(x, m, G_over_a, eps):
    n = len(m)
    phi = np.empty(n)
    for start in range(0, n, 512):
        d = x[None, :, :] - x[start:start + 512, None, :]
        r2 = np.einsum("ijk,ijk->ij", d, d)
        inv = m[None, :] / np.sqrt(r2 + eps * eps)
        for k in range(min(512, n - start)):
            inv[k, start + k] = 0.0
        phi[start:start + 512] = -G_over_a * inv.sum(axis=1)
    return phi


def spherical_potentials(x, m, centre, border, n_bins, log_bins, r_min, G_over_a):
    """RAMSES's potential of the binned mass profile (docs/physics.md, RAMSES's unbinding.f90)."""
    d = np.sqrt(((x - centre) ** 2).sum(axis=1))
    r_max = d.max()
    if not r_max > 0.0:
        return np.zeros(len(m))
    N = n_bins
    i = np.arange(N + 1, dtype=float)
    edge = r_min * (r_max / r_min) ** (i / N) if log_bins else i * r_max / N
    edge[0], edge[N] = 0.0, r_max
    # the first bin i >= 1 whose edge is >= the distance
    which = np.array([next((k for k in range(1, N) if di <= edge[k]), N) for di in d])
    M = np.zeros(N + 1)
    np.add.at(M, which, m)
    M = np.cumsum(M)
    phi = np.zeros(N + 1)
    phi[N] = -G_over_a * M[N] / edge[N]
    for k in range(N, 1, -1):
        phi[k - 1] = phi[k] - 0.5 * G_over_a * (M[k] / edge[k] ** 2 + M[k - 1] / edge[k - 1] ** 2) * (edge[k] - edge[k - 1])
    phi[0] = phi[1] - 0.5 * G_over_a * (M[1] / edge[1] ** 2) * edge[1]

    def at(r):
        k = next((k for k in range(1, N) if r <= edge[k]), N)
        return phi[k - 1] + (phi[k] - phi[k - 1]) * (r - edge[k - 1]) / (edge[k] - edge[k - 1])

    shift = at(border) if border <= r_max else 0.0
    return np.array([at(r) for r in d]) - shift


def unbind(v, m, phi, cand, tol, max_iterations):
    """Returns (still bound per candidate mask over all members, iterations)."""
    still = np.ones(len(m), dtype=bool)
    counted = np.ones(len(m), dtype=bool)
    vb = (m[:, None] * v).sum(axis=0) / m.sum()
    it = 1
    while it < max_iterations:
        e = 0.5 * ((v - vb) ** 2).sum(axis=1) + phi
        still = np.where(cand, e < 0.0, True)
        counted = still
        if not m[counted].sum() > 0.0:
            break
        w = (m[counted, None] * v[counted]).sum(axis=0) / m[counted].sum()
        sigma = np.sqrt((m[counted] * ((v[counted] - w) ** 2).sum(axis=1)).sum() / m[counted].sum())
        it += 1
        moved = np.sqrt(((w - vb) ** 2).sum())
        vb = w
        if moved <= tol * sigma:
            break
    e = 0.5 * ((v - vb) ** 2).sum(axis=1) + phi
    return np.where(cand, e < 0.0, True), it


def nfw_concentration(ratio):
    from scipy.optimize import brentq
    if not ratio >= 1.0:
        return np.nan
    f = lambda x: np.log1p(x) - x / (1.0 + x)
    xm = brentq(lambda x: x * x / (1 + x) ** 2 - f(x), 1.0, 4.0, xtol=1e-15)
    peak = f(xm) / xm
    return brentq(lambda c: c / f(c) * peak - ratio * ratio, xm, 1e6, xtol=1e-14, rtol=1e-15)


def so_masses(all_x, all_m, all_id, centre, box, periodic, u):
    d = nearest_image(all_x - centre, box, periodic)
    r2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    order = np.lexsort((all_id, r2))
    r2, ms = r2[order], all_m[order]
    uniq, first = np.unique(r2, return_index=True)
    shell = np.add.reduceat(ms, first)
    inside = np.cumsum(shell)
    r = np.sqrt(uniq)
    out = []
    for delta in (200.0, 500.0, 200.0 * u.omega_m_a, u.delta_vir):
        rho = delta * u.rho_crit
        below = np.nonzero((r > 0.0) & (inside < rho * (4.0 / 3.0) * np.pi * r ** 3))[0]
        k = below[0]
        mass = inside[k - 1] if k > 0 else 0.0
        out.append((mass, np.cbrt(3.0 * mass / (4.0 * np.pi * rho))))
    return out


def properties(row, x, pos_given, v, m, ids, phi, bound, own, u, eps, box, periodic, origin):
    M = m[bound].sum()
    row["NumberOfBoundParticlesInclusive"] = int(bound.sum())
    row["BoundMassInclusive"] = M
    row["NumberOfBoundParticles"] = int(own.sum())
    row["BoundMass"] = m[own].sum()
    if not bound.any():
        row["CenterId"] = -1  # no bound member: no centre, the rest undefined
        return
    cand = np.nonzero(bound)[0]
    best = cand[np.lexsort((ids[cand], phi[cand]))[0]]
    row["CenterId"] = int(ids[best])
    for k, c in enumerate("XYZ"):
        row["Center" + c] = pos_given[best, k]
    row["CenterPotential"] = phi[best]
    com = (m[bound, None] * x[bound]).sum(axis=0) / M
    vb = (m[bound, None] * v[bound]).sum(axis=0) / M
    for k, c in enumerate("XYZ"):
        w = com[k]
        if periodic[k]:
            w = w - box[k] * np.floor((w - origin[k]) / box[k])
        row["BoundCenterOfMass" + c] = w
        row["BulkVelocity" + c] = vb[k]
    r = x[bound] - com
    w = v[bound] - vb
    mb = m[bound]
    kinetic = 0.5 * (mb * (w ** 2).sum(axis=1)).sum()
    pot = 0.5 * (mb * phi[bound]).sum()
    row["BoundVelocityDispersion"] = np.sqrt(2.0 * kinetic / M)
    J = (mb[:, None] * u.a * np.cross(r, w)).sum(axis=0)
    for k, c in enumerate("XYZ"):
        row["AngularMomentum" + c] = J[k]
    jj = np.sqrt((J ** 2).sum())
    row["SpinPeebles"] = jj * np.sqrt(abs(kinetic + pot)) / (u.G * M ** 2.5)
    inertia = (mb[:, None, None] * r[:, :, None] * r[:, None, :]).sum(axis=0) / M
    val, vec = np.linalg.eigh(inertia)
    val, vec = val[::-1], vec[:, ::-1]
    row["AxisRatioBA"] = np.sqrt(max(val[1], 0.0) / val[0])
    row["AxisRatioCA"] = np.sqrt(max(val[2], 0.0) / val[0])
    major = vec[:, 0] / np.linalg.norm(vec[:, 0])
    if major[np.nonzero(major)[0][0]] < 0:
        major = -major
    for k, c in enumerate("XYZ"):
        row["MajorAxis" + c] = major[k]
    # Vmax over the bound members' distances beyond the softening
    d = x[bound] - x[best]
    r2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    order = np.lexsort((ids[bound], r2))
    uniq, first = np.unique(r2[order], return_index=True)
    inside = np.cumsum(np.add.reduceat(mb[order], first))
    rr = np.sqrt(uniq)
    ok = rr > eps
    if ok.any():
        v2 = u.G * inside[ok] / (u.a * rr[ok])
        k = np.argmax(v2)
        row["Vmax"] = np.sqrt(v2[k])
        row["Rmax"] = rr[ok][k]


def preorder(parent):
    """Places of the structures: roots by id, each structure's children by id, depth first."""
    n = len(parent)
    place, order = np.zeros(n, dtype=np.int64), []

    def visit(s):
        place[s] = len(order)
        order.append(s)
        for c in range(n):
            if parent[c] == s:
                visit(c)

    for r in range(n):
        if parent[r] < 0:
            visit(r)
    return place


def membership(rows, parent, inside, label, bound, ids):
    """The offsets of every structure into the bound and unbound id lists (docs/physics.md)."""
    place = preorder(parent)
    b = np.nonzero(bound >= 0)[0]
    b = b[np.lexsort((ids[b], place[bound[b]]))]
    bound_places = place[bound[b]]
    given = np.nonzero(label >= 0)[0]
    below = np.array([bound[i] >= 0 and inside[label[i], bound[i]] for i in given], dtype=bool)
    u = given[~below]
    u = u[np.lexsort((ids[u], place[label[u]]))]
    unbound_places = place[label[u]]
    for row in rows:
        p = place[row["StructureId"]]
        row["BoundOffset"] = int(np.searchsorted(bound_places, p))
        row["UnboundOffset"] = int(np.searchsorted(unbound_places, p))
        row["NumberOfUnboundParticles"] = int(np.count_nonzero(unbound_places == p))
    return ids[b], ids[u]


def physics(pos, vel, mass, ids, label, parent, box, periodic, origin, u, eps, unbind_on=True, tol=0.01,
            max_iterations=100, spherical=None, energies=None):
    """spherical: None (the exact potential), or a dict of RAMSES's method: centres (per structure,
    or None: centres of mass), n_bins, log_bins, r_min, saddle_cut, unbind_top."""
    """Returns (bound label per particle, list of rows as dicts keyed by the CSV's column names);
    energies (an array per particle, optional) gets each bound particle's specific energy in the
    structure it is bound to itself."""
    n = len(parent)
    parent = np.asarray(parent, dtype=np.int64)
    inside = subtree_of(parent)
    h = heights(parent)
    bound = label.copy()
    rows = []
    for s in sorted(range(n), key=lambda s: (h[s], s)):
        row = {"StructureId": s, "ParentId": int(parent[s]), "Height": int(h[s])}
        sel = np.nonzero((label >= 0) & inside[s, np.maximum(label, 0)])[0]
        row["NumberOfMembers"] = len(sel)
        row["MemberMass"] = mass[sel].sum()
        rows.append(row)
        if len(sel) == 0:
            row.update({"Iterations": 0, "NumberOfBoundParticles": 0, "NumberOfBoundParticlesInclusive": 0,
                        "BoundMass": 0.0, "BoundMassInclusive": 0.0, "CenterId": -1})
            continue
        ref = sel[np.argmin(ids[sel])]
        x = pos[ref] + nearest_image(pos[sel] - pos[ref], box, periodic)
        if spherical is None:
            phi = potentials(x, mass[sel], u.G / u.a, eps)
        else:
            sp = spherical
            if sp["centres"] is not None:
                centre = pos[ref] + nearest_image(np.asarray(sp["centres"][s]) - pos[ref], box, periodic)
            else:
                centre = (mass[sel, None] * x).sum(axis=0) / mass[sel].sum()
            border = np.inf
            if sp["saddle_cut"] and parent[s] >= 0:
                root = s
                while parent[root] >= 0:
                    root = parent[root]
                others = np.nonzero((label >= 0) & inside[root, np.maximum(label, 0)] &
                                    ~inside[s, np.maximum(label, 0)])[0]
                if len(others):
                    d = nearest_image(pos[others] - centre, box, periodic)
                    border = np.sqrt(((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]).min())
            phi = spherical_potentials(x, mass[sel], centre, border, sp["n_bins"], sp["log_bins"], sp["r_min"],
                                       u.G / u.a)
        cand = bound[sel] == s
        top_keeps = spherical is not None and not spherical.get("unbind_top", True) and parent[s] < 0
        if unbind_on and cand.any() and not top_keeps:
            keep, it = unbind(vel[sel], mass[sel], phi, cand, tol, max_iterations)
            gone = sel[cand & ~keep]
            bound[gone] = parent[s]
        else:
            it = 0
        row["Iterations"] = it
        b = bound[sel]
        in_sub = (b >= 0) & inside[s, np.maximum(b, 0)]
        row["BoundFraction"] = mass[sel][in_sub].sum() / mass[sel].sum()
        properties(row, x, pos[sel], vel[sel], mass[sel], ids[sel], phi, in_sub, b == s, u, eps, box, periodic, origin)
        if energies is not None and "BulkVelocityX" in row:  # docs/merger-trees.md: the tracers' energy
            own = b == s
            dv = vel[sel][own] - np.array([row["BulkVelocity" + c] for c in "XYZ"])
            energies[sel[own]] = 0.5 * ((dv[:, 0] * dv[:, 0] + dv[:, 1] * dv[:, 1]) + dv[:, 2] * dv[:, 2]) + phi[own]
        if u.comoving and "CenterId" in row:
            centre = pos[sel][ids[sel] == row["CenterId"]][0]
            names = ["200c", "500c", "200m", "vir"]
            for (mm, rr), nm in zip(so_masses(pos, mass, ids, centre, box, periodic, u), names):
                row["M" + nm] = mm
                row["R" + nm] = rr
            v200 = np.sqrt(u.G * row["M200c"] / (u.a * row["R200c"]))
            row["C200c"] = nfw_concentration(row["Vmax"] / v200)
            rv = u.a * row["Rvir"]
            vv = np.sqrt(u.G * row["Mvir"] / rv)
            J = np.array([row["AngularMomentum" + c] for c in "XYZ"])
            row["SpinBullock"] = np.sqrt((J ** 2).sum()) / (np.sqrt(2.0) * row["Mvir"] * vv * rv)
    rows.sort(key=lambda r: r["StructureId"])
    membership(rows, parent, inside, label, bound, ids)
    masses = np.array([r.get("BoundMassInclusive", 0.0) for r in rows])
    order = np.lexsort((np.arange(n), -masses))
    for rank, s in enumerate(order):
        rows[s]["MassRank"] = rank
    return bound, rows
