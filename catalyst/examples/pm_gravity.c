/* Particle-mesh gravity on z slabs: cloud-in-cell deposit (the planes one beyond each side
 * of the slab are added to the neighbouring ranks), the Poisson equation solved with FFTW's
 * MPI transforms, accelerations by central differences of the potential (two planes of the
 * neighbours' potential), cloud-in-cell interpolation back to the particles. */
#include "pm.h"

#include <fftw3-mpi.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pm_fft {
  ptrdiff_t alloc_local;
  double *real;          /* n * n * 2 (n/2 + 1) per plane: FFTW's padded in-place layout */
  fftw_complex *complex; /* the same memory */
  fftw_plan forward, backward;
  double *deposit;   /* (nz + 2) planes of n * n: the slab and one plane beyond each side */
  double *potential; /* (nz + 4) planes: the slab and two planes beyond each side */
  double *exchange;  /* 2 planes: the deposit's planes beyond the slab from the neighbours */
} pm_fft;

static size_t plane_size(const pm_mesh *m) { return (size_t)m->n * (size_t)m->n; }

int pm_mesh_init(pm_mesh *m, MPI_Comm comm, int n)
{
  memset(m, 0, sizeof *m);
  m->comm = comm;
  m->n = n;
  MPI_Comm_rank(comm, &m->rank);
  MPI_Comm_size(comm, &m->size);
  /* equal slabs of at least two planes: the potential's differences reach two planes over */
  if (n < 4 || n % m->size != 0 || n / m->size < 2)
    return -1;
  fftw_mpi_init();
  pm_fft *f = calloc(1, sizeof *f);
  if (!f)
    return -1;
  m->fft = f;
  ptrdiff_t local_n0 = 0, local_0_start = 0;
  f->alloc_local = fftw_mpi_local_size_3d(n, n, n / 2 + 1, comm, &local_n0, &local_0_start);
  m->z0 = local_0_start;
  m->nz = local_n0;
  if (m->nz != n / m->size)
    return -1;
  f->real = fftw_alloc_real(2 * (size_t)f->alloc_local);
  f->complex = (fftw_complex *)f->real;
  f->deposit = malloc((size_t)(m->nz + 2) * plane_size(m) * sizeof *f->deposit);
  f->potential = malloc((size_t)(m->nz + 4) * plane_size(m) * sizeof *f->potential);
  f->exchange = malloc(2 * plane_size(m) * sizeof *f->exchange);
  m->density = malloc((size_t)m->nz * plane_size(m) * sizeof *m->density);
  m->accel = malloc((size_t)(m->nz + 2) * plane_size(m) * 3 * sizeof *m->accel);
  if (!f->real || !f->deposit || !f->potential || !f->exchange || !m->density || !m->accel)
    return -1;
  f->forward = fftw_mpi_plan_dft_r2c_3d(n, n, n, f->real, f->complex, comm, FFTW_ESTIMATE);
  f->backward = fftw_mpi_plan_dft_c2r_3d(n, n, n, f->complex, f->real, comm, FFTW_ESTIMATE);
  return f->forward && f->backward ? 0 : -1;
}

void pm_mesh_free(pm_mesh *m)
{
  pm_fft *f = m->fft;
  if (f) {
    if (f->forward)
      fftw_destroy_plan(f->forward);
    if (f->backward)
      fftw_destroy_plan(f->backward);
    fftw_free(f->real);
    free(f->deposit);
    free(f->potential);
    free(f->exchange);
    free(f);
  }
  free(m->density);
  free(m->accel);
  memset(m, 0, sizeof *m);
}

static int64_t wrap(int64_t i, int n) { return ((i % n) + n) % n; }

/* Cloud in cell: the 8 cells a particle touches, as indices into a buffer of the planes
 * z0 - 1 .. z0 + nz (x fastest; the particle's own plane is in the slab), and their weights,
 * z slowest. The deposit and the interpolation use the same cells and weights. */
typedef struct cic {
  size_t cell[8];
  double weight[8];
} cic;

static cic cic_of(const pm_mesh *m, const double *p)
{
  const int n = m->n;
  int64_t i[3];
  double w[3];
  for (int d = 0; d < 3; ++d) {
    const double u = p[d] * n - 0.5; /* in cells, less half a cell: the cell below, the weight above */
    const double f = floor(u);
    i[d] = (int64_t)f;
    w[d] = u - f;
  }
  cic c;
  int k = 0;
  for (int dz = 0; dz < 2; ++dz) {
    const int64_t z = i[2] + dz - (m->z0 - 1);
    const double wz = dz ? w[2] : 1.0 - w[2];
    for (int dy = 0; dy < 2; ++dy) {
      const size_t row = ((size_t)z * (size_t)n + (size_t)wrap(i[1] + dy, n)) * (size_t)n;
      const double wyz = wz * (dy ? w[1] : 1.0 - w[1]);
      for (int dx = 0; dx < 2; ++dx, ++k) {
        c.cell[k] = row + (size_t)wrap(i[0] + dx, n);
        c.weight[k] = wyz * (dx ? w[0] : 1.0 - w[0]);
      }
    }
  }
  return c;
}

/* Planes to the neighbouring ranks along the ring (the rank itself when alone): `count`
 * values from `send_down` go to rank - 1 and arrive in its `receive_up`, and the other way. */
static void swap_planes(const pm_mesh *m, double *send_down, double *receive_up, double *send_up, double *receive_down,
                        size_t count)
{
  const int down = (m->rank + m->size - 1) % m->size, up = (m->rank + 1) % m->size;
  MPI_Sendrecv(send_down, (int)count, MPI_DOUBLE, down, 1, receive_up, (int)count, MPI_DOUBLE, up, 1, m->comm,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(send_up, (int)count, MPI_DOUBLE, up, 2, receive_down, (int)count, MPI_DOUBLE, down, 2, m->comm,
               MPI_STATUS_IGNORE);
}

static void deposit(pm_mesh *m, const pm_particles *p)
{
  pm_fft *f = m->fft;
  const int n = m->n;
  const size_t plane = plane_size(m);
  memset(f->deposit, 0, (size_t)(m->nz + 2) * plane * sizeof *f->deposit);
  for (int64_t k = 0; k < p->n; ++k) {
    const cic c = cic_of(m, &p->position[3 * k]);
    for (int j = 0; j < 8; ++j)
      f->deposit[c.cell[j]] += c.weight[j];
  }
  /* the plane below the slab belongs to the rank below, the one above to the rank above */
  double *below = f->exchange, *above = f->exchange + plane;
  swap_planes(m, f->deposit, above, &f->deposit[(size_t)(m->nz + 1) * plane], below, plane);
  for (size_t c = 0; c < plane; ++c) {
    f->deposit[plane * (size_t)m->nz + c] += above[c]; /* the top plane of the slab */
    f->deposit[plane + c] += below[c];                 /* the bottom plane */
  }
  const double to_density = p->mass * (double)n * (double)n * (double)n; /* mean density 1 */
  for (size_t c = 0; c < (size_t)m->nz * plane; ++c)
    m->density[c] = f->deposit[plane + c] * to_density;
}

/* laplacian(phi) = density - 1, through the FFT: phi_k = -delta_k / k^2. */
static void potential(pm_mesh *m)
{
  pm_fft *f = m->fft;
  const int n = m->n, nx = 2 * (n / 2 + 1);
  const size_t plane = plane_size(m);
  for (int64_t z = 0; z < m->nz; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        f->real[((size_t)z * (size_t)n + (size_t)y) * (size_t)nx + (size_t)x] =
            m->density[(size_t)z * plane + (size_t)y * (size_t)n + (size_t)x] - 1.0;
  fftw_execute(f->forward);
  const double two_pi = 2.0 * acos(-1.0), norm = 1.0 / ((double)n * (double)n * (double)n);
  for (int64_t z = 0; z < m->nz; ++z) {
    const int64_t gz = m->z0 + z;
    const double kz = two_pi * (double)(gz <= n / 2 ? gz : gz - n);
    for (int y = 0; y < n; ++y) {
      const double ky = two_pi * (double)(y <= n / 2 ? y : y - n);
      for (int x = 0; x <= n / 2; ++x) {
        const double kx = two_pi * (double)x, k2 = kx * kx + ky * ky + kz * kz;
        const double g = k2 > 0.0 ? -norm / k2 : 0.0;
        fftw_complex *v = &f->complex[((size_t)z * (size_t)n + (size_t)y) * (size_t)(n / 2 + 1) + (size_t)x];
        (*v)[0] *= g;
        (*v)[1] *= g;
      }
    }
  }
  fftw_execute(f->backward);
  /* the slab into planes 2 .. nz + 1 of the potential, then two planes from each neighbour */
  for (int64_t z = 0; z < m->nz; ++z)
    for (int y = 0; y < n; ++y)
      memcpy(&f->potential[(size_t)(z + 2) * plane + (size_t)y * (size_t)n],
             &f->real[((size_t)z * (size_t)n + (size_t)y) * (size_t)nx], (size_t)n * sizeof(double));
  swap_planes(m, &f->potential[2 * plane], &f->potential[(size_t)(m->nz + 2) * plane],
              &f->potential[(size_t)m->nz * plane], f->potential, 2 * plane);
}

/* g = -grad(phi), central differences, on planes z0 - 1 .. z0 + nz. */
static void accelerations(pm_mesh *m)
{
  const pm_fft *f = m->fft;
  const int n = m->n;
  const size_t plane = plane_size(m);
  const double half_over_h = 0.5 * n;
  for (int64_t z = 0; z < m->nz + 2; ++z) { /* potential plane z + 1 is mesh plane z0 - 1 + z */
    const double *mid = &f->potential[(size_t)(z + 1) * plane];
    const double *below = mid - plane, *above = mid + plane;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const size_t c = (size_t)y * (size_t)n;
        double *a = &m->accel[3 * ((size_t)z * plane + c + (size_t)x)];
        a[0] = -(mid[c + (size_t)wrap(x + 1, n)] - mid[c + (size_t)wrap(x - 1, n)]) * half_over_h;
        a[1] = -(mid[(size_t)wrap(y + 1, n) * (size_t)n + (size_t)x] -
                 mid[(size_t)wrap(y - 1, n) * (size_t)n + (size_t)x]) *
               half_over_h;
        a[2] = -(above[c + (size_t)x] - below[c + (size_t)x]) * half_over_h;
      }
  }
}

void pm_mesh_solve(pm_mesh *m, const pm_particles *p)
{
  deposit(m, p);
  potential(m);
  accelerations(m);
}

void pm_kick(const pm_mesh *m, pm_particles *p, double dt)
{
  for (int64_t k = 0; k < p->n; ++k) {
    const cic c = cic_of(m, &p->position[3 * k]);
    double g[3] = {0.0, 0.0, 0.0};
    for (int j = 0; j < 8; ++j)
      for (int d = 0; d < 3; ++d)
        g[d] += c.weight[j] * m->accel[3 * c.cell[j] + (size_t)d];
    for (int d = 0; d < 3; ++d)
      p->velocity[3 * k + d] += g[d] * dt;
  }
}
