/* A small self-gravitating N-body code: particle-mesh gravity in a periodic unit box, slabs of
 * the mesh (along z) and the particles in them on each MPI rank, kick-drift-kick leapfrog.
 *
 * Units: box 1, total mass 1, so the mean density is 1; G = 1 / (4 pi), so that the
 * potential obeys  laplacian(phi) = rho / rho_mean - 1  and small perturbations grow as
 * e^t on a static background. Densities handed to the clump finders are rho / rho_mean. */
#ifndef PM_H
#define PM_H

#include <mpi.h>
#include <stdint.h>

/* The mesh: n^3 cells; this rank holds z planes [z0, z0 + nz). */
typedef struct pm_mesh {
  MPI_Comm comm;
  int rank, size;
  int n;
  int64_t z0, nz;
  double *density; /* n * n * nz, x fastest: rho / rho_mean (what the in-situ code is given) */
  double *accel;   /* 3 components per cell, (nz + 2) planes: planes z0 - 1 .. z0 + nz */
  void *fft;       /* pm_gravity.c's FFT state */
} pm_mesh;

/* This rank's particles (those whose z lies in its slab), as separate arrays so that the
 * in-situ adaptor can wrap them. */
typedef struct pm_particles {
  int64_t n, capacity;
  int64_t n_total;
  double mass;      /* every particle's */
  double *position; /* 3 per particle, in [0, 1) */
  double *velocity; /* 3 per particle */
  int64_t *id;      /* the index of the particle's lattice site */
} pm_particles;

/* pm_gravity.c */
int pm_mesh_init(pm_mesh *m, MPI_Comm comm, int n);
void pm_mesh_free(pm_mesh *m);
/* The density of the particles (cloud in cell), then the accelerations on the mesh. */
void pm_mesh_solve(pm_mesh *m, const pm_particles *p);
/* Each particle's acceleration, interpolated from the mesh (cloud in cell), times dt, added
 * to its velocity. */
void pm_kick(const pm_mesh *m, pm_particles *p, double dt);

/* pm_particles.c */
/* Particles on a side^3 lattice, displaced by a sum of plane waves with random directions,
 * wavelengths and phases (the same for any number of ranks: each particle's displacement
 * depends only on its lattice site and the seed), amplitude the rms density contrast. */
int pm_particles_init(pm_particles *p, const pm_mesh *m, int side, double amplitude, uint64_t seed);
void pm_particles_free(pm_particles *p);
void pm_drift(pm_particles *p, double dt);
/* Particles to the ranks whose slabs hold them; then ordered by z plane (stably), so that
 * the particles of any range of planes are one run of the arrays. */
int pm_exchange(pm_particles *p, const pm_mesh *m);
/* The run of particles whose planes lie in [z_begin, z_end): first index and count (after
 * pm_exchange). */
void pm_particles_in_planes(const pm_particles *p, const pm_mesh *m, int64_t z_begin, int64_t z_end, int64_t *first,
                            int64_t *count);

/* The plane of a coordinate in [0, 1). */
static inline int64_t pm_plane_of(double z, int n)
{
  int64_t k = (int64_t)(z * n);
  return k < 0 ? 0 : (k >= n ? n - 1 : k);
}

#endif
