/* The properties of one structure from its members after unbinding (physics.h); the
 * definitions are in docs/physics.md. Every sum is an exact sum, merged over the ranks when
 * the structure is spread (c not NULL); the profile's order is (distance, id): the same bits on
 * one rank or several. */
#include "physics.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int is_bound(const member *m, int64_t structure, const structure_tree *t)
{
  if (m->bound < 0)
    return 0;
  const int64_t place = t->place[m->bound];
  return place >= t->place[structure] && place < t->subtree_end[structure];
}

/* A bound member's distance from the centre (the bits of r^2, increasing with it) and id: the
 * key of the circular velocity profile's order. */
typedef struct radius_entry {
  uint64_t r2_bits, id;
  double mass;
} radius_entry;

static double r2_of(const radius_entry *e)
{
  double r2;
  memcpy(&r2, &e->r2_bits, sizeof r2);
  return r2;
}

static int by_radius(const void *pa, const void *pb)
{
  const radius_entry *a = pa, *b = pb;
  if (a->r2_bits != b->r2_bits)
    return a->r2_bits < b->r2_bits ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

typedef struct peak {
  double v2, r;
} peak;

/* The walk outwards over k entries in profile order: *mass starts with the mass of every entry
 * before them and the entry after them is at next_r2 (NaN: none). M(<= r) is the exact sum of
 * the masses, rounded once; best keeps the first largest v^2. */
static void walk_profile(const radius_entry *e, int64_t k, exact_sum *mass, double next_r2, const physics_units *u,
                         double softening, peak *best)
{
  for (int64_t i = 0; i < k; ++i) {
    exact_sum_add(mass, e[i].mass);
    const double r2 = r2_of(&e[i]);
    if ((i + 1 < k ? r2_of(&e[i + 1]) : next_r2) == r2)
      continue; /* all members at one distance count together */
    const double r = sqrt(r2);
    if (!(r > softening))
      continue;
    const double v2 = u->G * exact_double(mass) / (u->a * r);
    if (v2 > best->v2)
      *best = (peak){v2, r};
  }
}

/* Collective over c: the profile's entries sorted over the ranks (rank after rank), each rank
 * walks its share after the mass of the shares before it, and the first peak wins. */
static phew_status spread_profile(comm *c, const radius_entry *mine, int64_t k, const physics_units *u,
                                  double softening, peak *best)
{
  inbox in;
  phew_status status = comm_sort(c, mine, k, sizeof *mine, &in);
  const radius_entry *e = (const radius_entry *)in.items;
  exact_sum own, before;
  exact_sum_clear(&own);
  for (int64_t i = 0; status == PHEW_OK && i < in.n; ++i)
    exact_sum_add(&own, e[i].mass);
  if (status == PHEW_OK)
    status = reduce_exact_before(c, &own, 1, &before);
  double *first_r2 = phew_malloc((size_t)c->size, sizeof *first_r2);
  peak *peaks = phew_malloc((size_t)c->size, sizeof *peaks);
  if (status == PHEW_OK && comm_max(c, !first_r2 || !peaks))
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    const double first = in.n > 0 ? r2_of(&e[0]) : NAN;
    comm_allgather(c, &first, sizeof first, first_r2);
    double next_r2 = NAN; /* the first distance of the next share that has one */
    for (int r = c->size - 1; r > c->rank; --r)
      next_r2 = isnan(first_r2[r]) ? next_r2 : first_r2[r];
    peak own_best = {-1.0, NAN};
    walk_profile(e, in.n, &before, next_r2, u, softening, &own_best);
    comm_allgather(c, &own_best, sizeof own_best, peaks);
    for (int r = 0; r < c->size; ++r)
      if (peaks[r].v2 > best->v2)
        *best = peaks[r];
  }
  free(first_r2);
  free(peaks);
  inbox_free(&in);
  return status;
}

/* Vmax and Rmax: the largest sqrt(G M(<= r) / (a r)) at the bound members' distances r from
 * the centre beyond the softening (M counts every bound member at distance <= r). */
static phew_status circular_velocity_peak(comm *c, const member *m, int64_t n, const unsigned char *bound,
                                          const double *position, const double *centre, const physics_units *u,
                                          double softening, phew_structure *row)
{
  radius_entry *e = phew_malloc((size_t)n + 1, sizeof *e);
  if (reduce_failed(c, !e)) {
    free(e);
    return PHEW_ERROR_MEMORY;
  }
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!bound[i])
      continue;
    const double dx = position[3 * i] - centre[0], dy = position[3 * i + 1] - centre[1],
                 dz = position[3 * i + 2] - centre[2];
    const double r2 = (dx * dx + dy * dy) + dz * dz;
    memcpy(&e[k].r2_bits, &r2, sizeof r2);
    e[k].id = (uint64_t)m[i].id;
    e[k++].mass = m[i].mass;
  }
  peak best = {-1.0, NAN};
  phew_status status = PHEW_OK;
  if (c) {
    status = spread_profile(c, e, k, u, softening, &best);
  } else {
    qsort(e, (size_t)k, sizeof *e, by_radius);
    exact_sum mass;
    exact_sum_clear(&mass);
    walk_profile(e, k, &mass, NAN, u, softening, &best);
  }
  free(e);
  if (best.v2 >= 0.0) {
    row->vmax = sqrt(best.v2);
    row->rmax = best.r;
  }
  return status;
}

/* Eigenvalues (decreasing) and the eigenvector of the largest of a symmetric 3x3 matrix, by
 * Jacobi rotations. */
static void symmetric_eigen(const double in[3][3], double value[3], double major[3])
{
  double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  memcpy(a, in, sizeof a);
  for (int sweep = 0; sweep < 64; ++sweep) {
    const double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
    if (off == 0.0 || off < 1e-300)
      break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0.0)
          continue;
        const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
        const double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 3; ++k) { /* a <- a J (columns p, q) */
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) { /* a <- J^T a (rows p, q) */
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  int order[3] = {0, 1, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (a[order[j]][order[j]] > a[order[i]][order[i]]) {
        const int swap = order[i];
        order[i] = order[j];
        order[j] = swap;
      }
  for (int i = 0; i < 3; ++i)
    value[i] = a[order[i]][order[i]];
  double norm = 0.0;
  for (int k = 0; k < 3; ++k)
    norm += v[k][order[0]] * v[k][order[0]];
  norm = sqrt(norm);
  int flip = 0;
  for (int k = 0; k < 3; ++k)
    if (v[k][order[0]] != 0.0) {
      flip = v[k][order[0]] < 0.0;
      break;
    }
  for (int k = 0; k < 3; ++k)
    major[k] = (flip ? -v[k][order[0]] : v[k][order[0]]) / norm;
}

enum { SUM_KINETIC, SUM_POTENTIAL, SUM_J, SUM_INERTIA = SUM_J + 3, N_MOMENT_SUMS = SUM_INERTIA + 6 };

/* The inertia tensor's six entries: xx, yy, zz, xy, xz, yz. */
static const int inertia_p[6] = {0, 1, 2, 0, 0, 1}, inertia_q[6] = {0, 1, 2, 1, 2, 2};

/* The exact sums about the centre of mass com with bulk velocity v: kinetic and potential
 * energies, angular momentum and the inertia tensor. */
static void moment_sums(const member *m, int64_t n, const unsigned char *bound, const double *position,
                        const double *phi, const double com[3], const double v[3], double a, exact_sum *sum)
{
  for (int k = 0; k < N_MOMENT_SUMS; ++k)
    exact_sum_clear(&sum[k]);
  for (int64_t i = 0; i < n; ++i) {
    if (!bound[i])
      continue;
    double r[3], w[3];
    for (int d = 0; d < 3; ++d) {
      r[d] = position[3 * i + d] - com[d];
      w[d] = m[i].velocity[d] - v[d];
    }
    const double mi = m[i].mass;
    exact_sum_add_product(&sum[SUM_KINETIC], mi, 0.5 * ((w[0] * w[0] + w[1] * w[1]) + w[2] * w[2]));
    exact_sum_add_product(&sum[SUM_POTENTIAL], mi, 0.5 * phi[i]);
    exact_sum_add_product3(&sum[SUM_J], mi, a, r[1] * w[2] - r[2] * w[1]);
    exact_sum_add_product3(&sum[SUM_J + 1], mi, a, r[2] * w[0] - r[0] * w[2]);
    exact_sum_add_product3(&sum[SUM_J + 2], mi, a, r[0] * w[1] - r[1] * w[0]);
    for (int e = 0; e < 6; ++e)
      exact_sum_add_product3(&sum[SUM_INERTIA + e], mi, r[inertia_p[e]], r[inertia_q[e]]);
  }
}

/* Centre of mass, bulk velocity, dispersion, angular momentum, energy and shape. */
static phew_status moments(comm *c, const member *m, int64_t n, const unsigned char *bound, const double *position,
                           const double *phi, const physics_units *u, const points_context *x, phew_structure *row)
{
  const double mass = row->bound_mass_inclusive;
  exact_sum first[6], sum[N_MOMENT_SUMS];
  for (int k = 0; k < 6; ++k)
    exact_sum_clear(&first[k]);
  for (int64_t i = 0; i < n; ++i)
    if (bound[i])
      for (int d = 0; d < 3; ++d) {
        exact_sum_add_product(&first[d], m[i].mass, position[3 * i + d]);
        exact_sum_add_product(&first[3 + d], m[i].mass, m[i].velocity[d]);
      }
  phew_status status = reduce_exact(c, first, 6);
  double com[3], v[3];
  for (int d = 0; d < 3; ++d) {
    com[d] = exact_double(&first[d]) / mass;
    v[d] = exact_double(&first[3 + d]) / mass;
    row->center_of_mass[d] = points_wrap(x, d, com[d]);
    row->bulk_velocity[d] = v[d];
  }
  moment_sums(m, n, bound, position, phi, com, v, u->a, sum);
  if (status == PHEW_OK)
    status = reduce_exact(c, sum, N_MOMENT_SUMS);
  const double kinetic = exact_double(&sum[SUM_KINETIC]), potential = exact_double(&sum[SUM_POTENTIAL]);
  double j[3], inertia[3][3];
  for (int d = 0; d < 3; ++d)
    row->angular_momentum[d] = j[d] = exact_double(&sum[SUM_J + d]);
  for (int e = 0; e < 6; ++e)
    inertia[inertia_p[e]][inertia_q[e]] = inertia[inertia_q[e]][inertia_p[e]] = exact_double(&sum[SUM_INERTIA + e]) /
                                                                                mass;
  row->velocity_dispersion = sqrt(2.0 * kinetic / mass);
  const double jj = sqrt((j[0] * j[0] + j[1] * j[1]) + j[2] * j[2]);
  row->spin_peebles = jj * sqrt(fabs(kinetic + potential)) / (u->G * pow(mass, 2.5));
  double value[3];
  symmetric_eigen(inertia, value, row->major_axis);
  row->axis_ratio_ba = value[0] > 0.0 ? sqrt(fmax(value[1], 0.0) / value[0]) : NAN;
  row->axis_ratio_ca = value[0] > 0.0 ? sqrt(fmax(value[2], 0.0) / value[0]) : NAN;
  return status;
}

/* The bound member of lowest potential (equal potentials: the smaller id) over the ranks. */
typedef struct centre_pick {
  double phi;
  int64_t id;
  double position[3], unwrapped[3];
  int64_t found;
} centre_pick;

static centre_pick pick_centre(comm *c, const member *m, int64_t n, const unsigned char *bound, const double *position,
                               const double *phi, centre_pick *all)
{
  centre_pick own = {0.0, -1, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, 0};
  for (int64_t i = 0; i < n; ++i)
    if (bound[i] && (!own.found || phi[i] < own.phi || (phi[i] == own.phi && m[i].id < own.id))) {
      own = (centre_pick){phi[i], m[i].id, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, 1};
      memcpy(own.position, m[i].position, sizeof own.position);
      memcpy(own.unwrapped, position + 3 * i, sizeof own.unwrapped);
    }
  reduce_allgather(c, &own, sizeof own, all);
  centre_pick best = all[0];
  for (int r = 1; r < reduce_parts(c); ++r)
    if (all[r].found && (!best.found || all[r].phi < best.phi || (all[r].phi == best.phi && all[r].id < best.id)))
      best = all[r];
  return best;
}

/* Member counts and masses: all, bound with substructure, bound to the structure itself. */
static phew_status masses(comm *c, const member *m, int64_t n, int64_t structure, const structure_tree *t,
                          unsigned char *bound, phew_structure *row)
{
  int64_t count[3] = {n, 0, 0};
  exact_sum mass[3];
  for (int k = 0; k < 3; ++k)
    exact_sum_clear(&mass[k]);
  for (int64_t i = 0; i < n; ++i) {
    exact_sum_add(&mass[0], m[i].mass);
    bound[i] = (unsigned char)is_bound(&m[i], structure, t);
    if (!bound[i])
      continue;
    ++count[1];
    exact_sum_add(&mass[1], m[i].mass);
    if (m[i].bound == structure) {
      ++count[2];
      exact_sum_add(&mass[2], m[i].mass);
    }
  }
  reduce_counts(c, count, 3);
  const phew_status status = reduce_exact(c, mass, 3);
  row->n_members = count[0];
  row->n_bound_inclusive = count[1];
  row->n_bound = count[2];
  row->member_mass = exact_double(&mass[0]);
  row->bound_mass_inclusive = exact_double(&mass[1]);
  row->bound_mass = exact_double(&mass[2]);
  row->bound_fraction = row->member_mass > 0.0 ? row->bound_mass_inclusive / row->member_mass : NAN;
  return status;
}

phew_status properties_of_members(comm *c, const member *m, int64_t n, const double *position, const double *phi,
                                  int64_t structure, const structure_tree *t, const physics_units *u, double softening,
                                  const points_context *x, phew_structure *row)
{
  unsigned char *bound = phew_malloc((size_t)n + 1, 1);
  centre_pick *all = phew_malloc((size_t)reduce_parts(c), sizeof *all);
  if (reduce_failed(c, !bound || !all)) {
    free(bound);
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  phew_status status = masses(c, m, n, structure, t, bound, row);
  const centre_pick centre = pick_centre(c, m, n, bound, position, phi, all);
  if (status == PHEW_OK && centre.found) { /* else no bound member: the rest stays NaN */
    row->centre_id = centre.id;
    memcpy(row->centre, centre.position, sizeof row->centre);
    row->centre_potential = centre.phi;
    status = moments(c, m, n, bound, position, phi, u, x, row);
    if (status == PHEW_OK)
      status = circular_velocity_peak(c, m, n, bound, position, centre.unwrapped, u, softening, row);
  }
  free(bound);
  free(all);
  return status;
}

/* NFW: Vmax^2 / V200^2 = (f(x_m) / x_m) / (f(c) / c), f(x) = ln(1 + x) - x / (1 + x), x_m the
 * radius of the peak in units of r_s (where f(x) / x is largest). Bisection. */
static double nfw_f(double x) { return log1p(x) - x / (1.0 + x); }

double nfw_concentration(double ratio)
{
  if (!(ratio >= 1.0) || !isfinite(ratio))
    return NAN;
  /* x_m: d/dx (f(x) / x) = 0, i.e. x^2 / (1 + x)^2 = f(x) */
  double lo = 1.0, hi = 4.0;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (mid * mid / ((1.0 + mid) * (1.0 + mid)) - nfw_f(mid) > 0.0)
      lo = mid;
    else
      hi = mid;
  }
  const double xm = 0.5 * (lo + hi), peak = nfw_f(xm) / xm;
  const double target = ratio * ratio; /* c / f(c) * peak = target, increasing in c for c > x_m */
  lo = xm;
  hi = 1e6;
  if (hi / nfw_f(hi) * peak < target)
    return NAN;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (mid / nfw_f(mid) * peak < target)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}
