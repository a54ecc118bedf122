"""Particles with a known answer for the physics of structures: NFW haloes in a periodic
comoving box (Mpc/h, km/s, Msun/h), a subhalo moving through its host, a cloud of fast particles
that no structure can hold, host particles wrongly given to the subhalo, and a uniform
background that only the spherical-overdensity masses see."""
import numpy as np

G_ASTRO = 4.30091727003628e-9


def nfw_radii(rng, n, radius, c):
    """n radii from an NFW profile truncated at `radius` (concentration c), by inverting M(<r)."""
    f = lambda x: np.log1p(x) - x / (1.0 + x)
    grid = np.linspace(0.0, c, 20001)
    cum = f(grid) / f(c)
    return np.interp(rng.random(n), cum, grid) / c * radius


def sphere_points(rng, radii):
    d = rng.normal(size=(len(radii), 3))
    return d / np.linalg.norm(d, axis=1)[:, None] * radii[:, None]


def halo(rng, n, radius, c, mass, a, sigma_fraction):
    x = sphere_points(rng, nfw_radii(rng, n, radius, c))
    v_scale = np.sqrt(G_ASTRO * n * mass / (a * radius))
    v = rng.normal(scale=sigma_fraction * v_scale, size=(n, 3))
    return x, v, v_scale


class Scenario:
    """Arrays per particle (shuffled, ids shuffled) and the grouping: 0 the host, 1 its
    subhalo, 2 a separate halo, 3 an empty child of 2; -1 the background."""

    def __init__(self, seed=7, box=4.0, a=0.5, mass=2e9, n_host=1500, n_sub=200, n_fast=80, n_swapped=40,
                 n_other=300, n_background=4000):
        rng = np.random.default_rng(seed)
        self.box, self.a, self.particle_mass = box, a, mass
        parts = []  # (x, v, label, kind)
        host_centre = np.array([0.05, box - 0.05, 0.05])  # across the periodic corner
        host_bulk = np.array([200.0, -100.0, 50.0])
        x, v, vh = halo(rng, n_host, 0.25, 6.0, mass, a, 0.35)
        parts.append((x + host_centre, v + host_bulk, 0, "host"))
        # fast particles inside the host: far beyond any escape speed
        xf = sphere_points(rng, 0.2 * rng.random(n_fast) ** (1 / 3))
        vf = rng.normal(size=(n_fast, 3))
        vf = vf / np.linalg.norm(vf, axis=1)[:, None] * 8.0 * vh
        parts.append((xf + host_centre, vf + host_bulk, 0, "fast"))
        sub_centre = host_centre + np.array([0.15, 0.0, 0.0])
        sub_bulk = host_bulk + np.array([2.0 * vh, 0.0, 0.0])
        x, v, vs = halo(rng, n_sub, 0.06, 4.0, mass, a, 0.3)
        parts.append((x + sub_centre, v + sub_bulk, 1, "sub"))
        # host particles near the subhalo but given to it: they move with the host
        xs = sphere_points(rng, 0.06 * rng.random(n_swapped) ** (1 / 3))
        vsw = rng.normal(scale=0.35 * vh, size=(n_swapped, 3))
        parts.append((xs + sub_centre, vsw + host_bulk, 1, "swapped"))
        other_centre = np.array([2.0, 1.5, 2.5])
        x, v, _ = halo(rng, n_other, 0.12, 5.0, mass, a, 0.35)
        parts.append((x + other_centre, v + np.array([-50.0, 30.0, 0.0]), 2, "other"))
        xb = rng.random((n_background, 3)) * box
        vb = rng.normal(scale=100.0, size=(n_background, 3))
        parts.append((xb, vb, -1, "background"))
        pos = np.concatenate([p[0] for p in parts])
        vel = np.concatenate([p[1] for p in parts])
        label = np.concatenate([np.full(len(p[0]), p[2], dtype=np.int64) for p in parts])
        kind = np.concatenate([np.array([p[3]] * len(p[0])) for p in parts])
        order = rng.permutation(len(pos))
        self.pos = np.mod(pos[order], box)
        self.pos[self.pos >= box] = 0.0
        self.vel, self.label, self.kind = vel[order], label[order], kind[order]
        self.mass = np.full(len(self.pos), mass)
        self.ids = rng.permutation(len(self.pos)).astype(np.int64) * 3 + 5
        self.parent = np.array([-1, 0, -1, 2], dtype=np.int64)

    def write(self, folder):
        """The raw files of the tool and the parents CSV; returns their paths by option."""
        import os
        os.makedirs(folder, exist_ok=True)
        files = {"--points": self.pos, "--velocities": self.vel, "--masses": self.mass}
        paths = {}
        for option, array in files.items():
            path = os.path.join(folder, option.strip("-") + ".f64")
            np.ascontiguousarray(array, dtype="<f8").tofile(path)
            paths[option] = path
        for option, array in (("--ids", self.ids), ("--groups", self.label)):
            path = os.path.join(folder, option.strip("-") + ".i64")
            np.ascontiguousarray(array, dtype="<i8").tofile(path)
            paths[option] = path
        path = os.path.join(folder, "parents.csv")
        with open(path, "w") as f:
            f.write("Id,ParentId\n")
            for s, p in enumerate(self.parent):
                f.write(f"{s},{p}\n")
        paths["--parents"] = path
        return paths
