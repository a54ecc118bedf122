#!/usr/bin/python3
"""The shared cosmological snapshot (../shared/data/cosmo64_z0_*.f32: 64^3 dark-matter particles,
RAMSES, 50 Mpc/h, z = 0) as a GADGET-4 HDF5 snapshot that the plugin's readers open:
datasets/cosmo64/snap_z0.hdf5 (about 2.9 MB).

To keep it small, positions are rounded down to multiples of 2^-16 of the box (0.76 kpc/h, far
below the 15 kpc/h softening of such runs and the 156 kpc/h FoF linking length) and velocities
to whole km/s; both then compress (shuffle + gzip). The box is one length unit of 50 Mpc/h
(UnitLength_in_cm), so positions stay the box fractions they were. ParticleIDs are the particles'
indices in the raw files.

    /usr/bin/python3 datasets/generators/make_cosmo64_snapshot.py SHARED_DATA_DIR OUT.hdf5
"""
import sys

import h5py
import numpy as np

MPC_CM = 3.085677581e24  # 1 Mpc in cm
RHO_CRIT = 2.77536627e11  # critical density, h^2 Msun / Mpc^3
OMEGA_M, OMEGA_L, HUBBLE, BOX_MPC_H = 0.3, 0.7, 0.7, 50.0


def main(shared, out):
    pos = np.fromfile(shared + "/cosmo64_z0_pos.f32", dtype="<f4").reshape(-1, 3).astype(np.float64)
    vel = np.fromfile(shared + "/cosmo64_z0_vel.f32", dtype="<f4").reshape(-1, 3)
    n = len(pos)
    assert n == 64 ** 3 and vel.shape == pos.shape
    # floor, then wrap: a coordinate just below 1 must not round up onto the box's upper face
    quantised = (np.floor(pos * 65536.0) % 65536.0 / 65536.0).astype(np.float32)
    # particle mass in GADGET's 1e10 Msun/h: the box's matter over the particles
    mass = OMEGA_M * RHO_CRIT * BOX_MPC_H ** 3 / n / 1e10
    counts = np.array([0, n, 0, 0, 0, 0], dtype=np.uint32)
    with h5py.File(out, "w") as f:
        header = f.create_group("Header")
        header.attrs["BoxSize"] = 1.0
        header.attrs["NumPart_ThisFile"] = counts
        header.attrs["NumPart_Total"] = counts
        header.attrs["NumPart_Total_HighWord"] = np.zeros(6, dtype=np.uint32)
        header.attrs["MassTable"] = np.array([0.0, mass, 0.0, 0.0, 0.0, 0.0])
        header.attrs["Time"] = 1.0
        header.attrs["Redshift"] = 0.0
        header.attrs["NumFilesPerSnapshot"] = 1
        params = f.create_group("Parameters")
        params.attrs["HubbleParam"] = HUBBLE
        params.attrs["Omega0"] = OMEGA_M
        params.attrs["OmegaLambda"] = OMEGA_L
        params.attrs["OmegaBaryon"] = 0.0
        params.attrs["ComovingIntegrationOn"] = 1
        params.attrs["UnitLength_in_cm"] = BOX_MPC_H * MPC_CM  # (lengths in units of it / h)
        params.attrs["UnitMass_in_g"] = 1.989e43
        params.attrs["UnitVelocity_in_cm_per_s"] = 1e5
        dm = f.create_group("PartType1")
        options = dict(compression="gzip", compression_opts=9, shuffle=True)
        dm.create_dataset("Coordinates", data=quantised, **options)
        # GADGET stores sqrt(a) times the peculiar velocity: a = 1 here
        dm.create_dataset("Velocities", data=np.round(vel).astype(np.float32), **options)
        dm.create_dataset("ParticleIDs", data=np.arange(n, dtype=np.uint32), **options)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
