#!/usr/bin/python3
"""Make a tiny DM-only cosmological IC file in SWIFT format.

16^3 particles on a lattice in a periodic 25 Mpc (h-free, comoving) box,
displaced with a first-order (Zel'dovich) displacement field drawn from a
seeded Gaussian random field with a simple power-law-ish spectrum.
Velocities are *peculiar* velocities in km/s (SWIFT convention, no sqrt(a)).
Units: Mpc, 1e10 Msun, km/s (same as the internal units of params.yml).
"""
import numpy as np
import h5py

N = 16                      # particles per dimension
L = 25.0                    # box side, comoving Mpc (h-free)
a_begin = 0.05              # z = 19
h = 0.6766
Omega_cdm, Omega_b, Omega_lambda = 0.2607, 0.0490, 0.6903
Omega_m = Omega_cdm + Omega_b
seed = 12345
rms_disp_frac = 0.1         # rms displacement as a fraction of the grid spacing
fname = "ics.hdf5"

# Units (cgs)
UL = 3.08567758e24          # Mpc
UM = 1.98841e43             # 1e10 Msun
UV = 1e5                    # km/s
Ut = UL / UV
G_cgs = 6.67430e-8

# Particle mass from mean matter density
H0_cgs = 100.0 * h * 1e5 / 3.08567758e24        # 1/s
rho_crit0 = 3.0 * H0_cgs**2 / (8.0 * np.pi * G_cgs)  # g/cm^3
rho_m = Omega_m * rho_crit0 * UL**3 / UM         # 1e10 Msun / Mpc^3
m_part = rho_m * L**3 / N**3

# Gaussian random displacement field (Zel'dovich): psi_k = i k / k^2 * delta_k
rng = np.random.default_rng(seed)
dx = L / N
k1 = 2.0 * np.pi * np.fft.fftfreq(N, d=dx)
kx, ky, kz = np.meshgrid(k1, k1, k1, indexing="ij")
k2 = kx**2 + ky**2 + kz**2
k2[0, 0, 0] = 1.0
kmag = np.sqrt(k2)
Pk = kmag**-2.0                                   # arbitrary shape, rescaled below
white = np.fft.fftn(rng.standard_normal((N, N, N)))
delta_k = white * np.sqrt(Pk)
delta_k[0, 0, 0] = 0.0
psi = np.empty((3, N, N, N))
for i, kk in enumerate((kx, ky, kz)):
    psi[i] = np.real(np.fft.ifftn(1j * kk / k2 * delta_k))
psi *= rms_disp_frac * dx / np.sqrt(np.mean(np.sum(psi**2, axis=0)))

# Lattice positions
q1 = (np.arange(N) + 0.5) * dx
qx, qy, qz = np.meshgrid(q1, q1, q1, indexing="ij")
q = np.stack([qx, qy, qz])
pos = (q + psi).reshape(3, -1).T % L

# Peculiar velocity v = a * H(a) * f(a) * psi   (growing mode, EdS-like f)
H0 = 100.0 * h                                     # km/s/Mpc
Ha = H0 * np.sqrt(Omega_m * a_begin**-3 + Omega_lambda)
Om_a = Omega_m * a_begin**-3 / (Omega_m * a_begin**-3 + Omega_lambda)
f = Om_a**0.55
vel = (a_begin * Ha * f * psi).reshape(3, -1).T   # km/s

n = N**3
ids = np.arange(1, n + 1, dtype=np.uint64)
masses = np.full(n, m_part, dtype=np.float32)

with h5py.File(fname, "w") as fh:
    hd = fh.create_group("Header")
    hd.attrs["BoxSize"] = np.array([L, L, L], dtype=np.float64)
    hd.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0], dtype=np.uint32)
    hd.attrs["NumPart_ThisFile"] = np.array([0, n, 0, 0, 0, 0], dtype=np.uint32)
    hd.attrs["NumPart_Total_HighWord"] = np.zeros(6, dtype=np.uint32)
    hd.attrs["MassTable"] = np.zeros(6, dtype=np.float64)
    hd.attrs["Flag_Entropy_ICs"] = 0
    hd.attrs["NumFilesPerSnapshot"] = 1
    hd.attrs["Time"] = a_begin
    hd.attrs["Redshift"] = 1.0 / a_begin - 1.0
    hd.attrs["Dimension"] = 3
    u = fh.create_group("Units")
    u.attrs["Unit length in cgs (U_L)"] = UL
    u.attrs["Unit mass in cgs (U_M)"] = UM
    u.attrs["Unit time in cgs (U_t)"] = Ut
    u.attrs["Unit current in cgs (U_I)"] = 1.0
    u.attrs["Unit temperature in cgs (U_T)"] = 1.0
    p = fh.create_group("PartType1")
    p.create_dataset("Coordinates", data=pos.astype(np.float64))
    p.create_dataset("Velocities", data=vel.astype(np.float32))
    p.create_dataset("ParticleIDs", data=ids)
    p.create_dataset("Masses", data=masses)

print(f"wrote {fname}: N={n} L={L} Mpc a={a_begin} m_part={m_part:.6g} 1e10 Msun "
      f"rms disp={np.sqrt(np.mean(np.sum(psi**2,axis=0))):.4g} Mpc "
      f"rms v={np.sqrt(np.mean(np.sum(vel**2,axis=1))):.4g} km/s")
