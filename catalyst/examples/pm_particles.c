/* The particles: initial conditions, drift, and the exchange that keeps each particle on the
 * rank whose slab holds it. */
#include "pm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N_WAVES = 32, MAX_WAVE = 6 };

static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *state) { return (double)(splitmix64(state) >> 11) * 0x1.0p-53; }

static int reserve(pm_particles *p, int64_t n)
{
  if (n <= p->capacity)
    return 0;
  const int64_t capacity = n + n / 4 + 16;
  double *position = realloc(p->position, (size_t)capacity * 3 * sizeof *position);
  if (position)
    p->position = position;
  double *velocity = realloc(p->velocity, (size_t)capacity * 3 * sizeof *velocity);
  if (velocity)
    p->velocity = velocity;
  int64_t *id = realloc(p->id, (size_t)capacity * sizeof *id);
  if (id)
    p->id = id;
  if (!position || !velocity || !id)
    return -1;
  p->capacity = capacity;
  return 0;
}

int pm_particles_init(pm_particles *p, const pm_mesh *m, int side, double amplitude, uint64_t seed)
{
  memset(p, 0, sizeof *p);
  p->n_total = (int64_t)side * side * side;
  p->mass = 1.0 / (double)p->n_total;
  /* the waves: integer wave numbers (periodic), random phases, equal shares of the density
   * contrast; the displacement psi = sum A k/|k| sin(2 pi k.q + phase) has
   * div psi = sum A 2 pi |k| cos(...), so A = a / (2 pi |k|) with a the share */
  double wave[N_WAVES][5]; /* k x, y, z, phase, amplitude */
  uint64_t state = seed;
  const double two_pi = 2.0 * acos(-1.0), share = amplitude / sqrt(0.5 * N_WAVES);
  for (int w = 0; w < N_WAVES; ++w) {
    double k2 = 0.0;
    do {
      k2 = 0.0;
      for (int d = 0; d < 3; ++d) {
        wave[w][d] = (double)((int)(uniform(&state) * (2 * MAX_WAVE + 1)) - MAX_WAVE);
        k2 += wave[w][d] * wave[w][d];
      }
    } while (k2 == 0.0);
    wave[w][3] = two_pi * uniform(&state);
    wave[w][4] = share / (two_pi * sqrt(k2));
  }
  /* this rank makes the lattice planes of its share; pm_exchange moves them where they are */
  const int64_t first = (int64_t)side * m->rank / m->size, last = (int64_t)side * (m->rank + 1) / m->size;
  if (reserve(p, (last - first) * side * side) != 0)
    return -1;
  for (int64_t iz = first; iz < last; ++iz)
    for (int64_t iy = 0; iy < side; ++iy)
      for (int64_t ix = 0; ix < side; ++ix) {
        const double q[3] = {(ix + 0.5) / side, (iy + 0.5) / side, (iz + 0.5) / side};
        double psi[3] = {0.0, 0.0, 0.0};
        for (int w = 0; w < N_WAVES; ++w) {
          const double *k = wave[w];
          const double kn = sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
          const double s = -wave[w][4] * sin(two_pi * (k[0] * q[0] + k[1] * q[1] + k[2] * q[2]) + k[3]) / kn;
          for (int d = 0; d < 3; ++d)
            psi[d] += s * k[d];
        }
        const int64_t i = p->n++;
        for (int d = 0; d < 3; ++d) {
          const double x = q[d] + psi[d];
          p->position[3 * i + d] = x - floor(x);
          p->velocity[3 * i + d] = psi[d]; /* the growing mode: delta grows as e^t */
        }
        p->id[i] = ix + side * (iy + side * iz);
      }
  return pm_exchange(p, m);
}

void pm_particles_free(pm_particles *p)
{
  free(p->position);
  free(p->velocity);
  free(p->id);
  memset(p, 0, sizeof *p);
}

void pm_drift(pm_particles *p, double dt)
{
  for (int64_t k = 0; k < 3 * p->n; ++k) {
    const double x = p->position[k] + p->velocity[k] * dt;
    p->position[k] = x - floor(x);
    if (p->position[k] >= 1.0) /* x just below an integer */
      p->position[k] = 0.0;
  }
}

/* One particle's 7 values, for the exchange and the sort. */
typedef struct packed {
  double position[3], velocity[3];
  int64_t id;
} packed;

int pm_exchange(pm_particles *p, const pm_mesh *m)
{
  const int size = m->size;
  int *send = calloc((size_t)size, sizeof *send), *receive = calloc((size_t)size, sizeof *receive);
  int *send_at = calloc((size_t)size + 1, sizeof *send_at), *receive_at = calloc((size_t)size + 1, sizeof *receive_at);
  packed *out = malloc(((size_t)p->n + 1) * sizeof *out);
  int ok = send && receive && send_at && receive_at && out;
  for (int64_t k = 0; ok && k < p->n; ++k)
    send[pm_plane_of(p->position[3 * k + 2], m->n) / m->nz]++;
  for (int r = 0; ok && r < size; ++r)
    send_at[r + 1] = send_at[r] + send[r];
  int *fill = ok ? calloc((size_t)size, sizeof *fill) : NULL;
  ok = ok && fill;
  for (int64_t k = 0; ok && k < p->n; ++k) {
    const int r = (int)(pm_plane_of(p->position[3 * k + 2], m->n) / m->nz);
    packed *q = &out[send_at[r] + fill[r]++];
    memcpy(q->position, &p->position[3 * k], sizeof q->position);
    memcpy(q->velocity, &p->velocity[3 * k], sizeof q->velocity);
    q->id = p->id[k];
  }
  free(fill);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm);
  packed *in = NULL;
  int64_t n_in = 0;
  if (all_ok) {
    MPI_Alltoall(send, 1, MPI_INT, receive, 1, MPI_INT, m->comm);
    for (int r = 0; r < size; ++r)
      receive_at[r + 1] = receive_at[r] + receive[r];
    n_in = receive_at[size];
    in = malloc(((size_t)n_in + 1) * sizeof *in);
    ok = in && reserve(p, n_in) == 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm);
  }
  if (all_ok) {
    MPI_Datatype type;
    MPI_Type_contiguous((int)sizeof(packed), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Alltoallv(out, send, send_at, type, in, receive, receive_at, type, m->comm);
    MPI_Type_free(&type);
    /* ordered by plane, stably (a counting sort over the slab's planes) */
    int64_t *start = calloc((size_t)m->nz + 1, sizeof *start);
    all_ok = start != NULL;
    for (int64_t k = 0; start && k < n_in; ++k)
      start[pm_plane_of(in[k].position[2], m->n) - m->z0 + 1]++;
    for (int64_t z = 0; start && z < m->nz; ++z)
      start[z + 1] += start[z];
    for (int64_t k = 0; start && k < n_in; ++k) {
      const int64_t at = start[pm_plane_of(in[k].position[2], m->n) - m->z0]++;
      memcpy(&p->position[3 * at], in[k].position, sizeof in[k].position);
      memcpy(&p->velocity[3 * at], in[k].velocity, sizeof in[k].velocity);
      p->id[at] = in[k].id;
    }
    free(start);
    p->n = n_in;
  }
  free(send);
  free(receive);
  free(send_at);
  free(receive_at);
  free(out);
  free(in);
  return all_ok ? 0 : -1;
}

static int64_t first_at_or_above(const pm_particles *p, const pm_mesh *m, int64_t z)
{
  int64_t lo = 0, hi = p->n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pm_plane_of(p->position[3 * mid + 2], m->n) < z)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void pm_particles_in_planes(const pm_particles *p, const pm_mesh *m, int64_t z_begin, int64_t z_end, int64_t *first,
                            int64_t *count)
{
  *first = first_at_or_above(p, m, z_begin);
  *count = first_at_or_above(p, m, z_end) - *first;
}
