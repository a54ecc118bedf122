/* The properties of one structure from its members after unbinding (physics.h); the
 * definitions are in docs/physics.md. Sums run in the members' order. */
#include "physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_bound(const member *m, int64_t structure, const structure_tree *t)
{
  if (m->bound < 0)
    return 0;
  const int64_t place = t->place[m->bound];
  return place >= t->place[structure] && place < t->subtree_end[structure];
}

typedef struct radius_entry {
  double r2;
  int64_t id;
  double mass;
} radius_entry;

static int by_radius(const void *pa, const void *pb)
{
  const radius_entry *a = pa, *b = pb;
  if (a->r2 != b->r2)
    return a->r2 < b->r2 ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* Vmax and Rmax: the largest sqrt(G M(<= r) / (a r)) at the bound members' distances r from
 * the centre beyond the softening (M counts every bound member at distance <= r). */
static void circular_velocity_peak(const member *m, int64_t n, const unsigned char *bound, const double *position,
                                   const double *centre, const physics_units *u, double softening, phew_structure *row)
{
  radius_entry *e = phew_malloc((size_t)n, sizeof *e);
  if (!e)
    return; /* the row keeps NaN; the caller reports memory before this */
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!bound[i])
      continue;
    const double dx = position[3 * i] - centre[0], dy = position[3 * i + 1] - centre[1],
                 dz = position[3 * i + 2] - centre[2];
    e[k].r2 = (dx * dx + dy * dy) + dz * dz;
    e[k].id = m[i].id;
    e[k++].mass = m[i].mass;
  }
  qsort(e, (size_t)k, sizeof *e, by_radius);
  double mass = 0.0, best = -1.0, best_r = NAN;
  for (int64_t i = 0; i < k; ++i) {
    mass += e[i].mass;
    if (i + 1 < k && e[i + 1].r2 == e[i].r2)
      continue; /* all members at one distance count together */
    const double r = sqrt(e[i].r2);
    if (!(r > softening))
      continue;
    const double v2 = u->G * mass / (u->a * r);
    if (v2 > best) {
      best = v2;
      best_r = r;
    }
  }
  free(e);
  if (best >= 0.0) {
    row->vmax = sqrt(best);
    row->rmax = best_r;
  }
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

/* Centre of mass, bulk velocity, dispersion, angular momentum, energy and shape. */
static void moments(const member *m, int64_t n, const unsigned char *bound, const double *position, const double *phi,
                    const physics_units *u, const points_context *x, phew_structure *row)
{
  const double mass = row->bound_mass_inclusive;
  double mx[3] = {0, 0, 0}, mv[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i)
    if (bound[i])
      for (int d = 0; d < 3; ++d) {
        mx[d] += m[i].mass * position[3 * i + d];
        mv[d] += m[i].mass * m[i].velocity[d];
      }
  double com[3], v[3];
  for (int d = 0; d < 3; ++d) {
    com[d] = mx[d] / mass;
    v[d] = mv[d] / mass;
    row->center_of_mass[d] = points_wrap(x, d, com[d]);
    row->bulk_velocity[d] = v[d];
  }
  double kinetic = 0.0, potential = 0.0, j[3] = {0, 0, 0}, inertia[3][3] = {{0}};
  for (int64_t i = 0; i < n; ++i) {
    if (!bound[i])
      continue;
    double r[3], w[3];
    for (int d = 0; d < 3; ++d) {
      r[d] = position[3 * i + d] - com[d];
      w[d] = m[i].velocity[d] - v[d];
    }
    const double mi = m[i].mass;
    kinetic += 0.5 * mi * ((w[0] * w[0] + w[1] * w[1]) + w[2] * w[2]);
    potential += 0.5 * mi * phi[i];
    j[0] += mi * u->a * (r[1] * w[2] - r[2] * w[1]);
    j[1] += mi * u->a * (r[2] * w[0] - r[0] * w[2]);
    j[2] += mi * u->a * (r[0] * w[1] - r[1] * w[0]);
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q)
        inertia[p][q] += mi * r[p] * r[q];
  }
  row->velocity_dispersion = sqrt(2.0 * kinetic / mass);
  for (int d = 0; d < 3; ++d)
    row->angular_momentum[d] = j[d];
  const double jj = sqrt((j[0] * j[0] + j[1] * j[1]) + j[2] * j[2]);
  row->spin_peebles = jj * sqrt(fabs(kinetic + potential)) / (u->G * pow(mass, 2.5));
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      inertia[p][q] /= mass;
  double value[3];
  symmetric_eigen(inertia, value, row->major_axis);
  row->axis_ratio_ba = value[0] > 0.0 ? sqrt(fmax(value[1], 0.0) / value[0]) : NAN;
  row->axis_ratio_ca = value[0] > 0.0 ? sqrt(fmax(value[2], 0.0) / value[0]) : NAN;
}

void properties_of_members(const member *m, int64_t n, const double *position, const double *phi, int64_t structure,
                           const structure_tree *t, const physics_units *u, double softening, const points_context *x,
                           phew_structure *row)
{
  unsigned char *bound = phew_malloc((size_t)n + 1, 1);
  row->n_members = n;
  row->member_mass = 0.0;
  row->n_bound = row->n_bound_inclusive = 0;
  row->bound_mass = row->bound_mass_inclusive = 0.0;
  int64_t centre = -1;
  for (int64_t i = 0; i < n; ++i) {
    row->member_mass += m[i].mass;
    const int b = is_bound(&m[i], structure, t);
    if (bound)
      bound[i] = (unsigned char)b;
    if (!b)
      continue;
    ++row->n_bound_inclusive;
    row->bound_mass_inclusive += m[i].mass;
    if (m[i].bound == structure) {
      ++row->n_bound;
      row->bound_mass += m[i].mass;
    }
    if (centre < 0 || phi[i] < phi[centre] || (phi[i] == phi[centre] && m[i].id < m[centre].id))
      centre = i;
  }
  row->bound_fraction = row->member_mass > 0.0 ? row->bound_mass_inclusive / row->member_mass : NAN;
  if (centre < 0 || !bound) {
    free(bound);
    return; /* no bound member: the rest stays NaN */
  }
  row->centre_id = m[centre].id;
  memcpy(row->centre, m[centre].position, sizeof row->centre);
  row->centre_potential = phi[centre];
  moments(m, n, bound, position, phi, u, x, row);
  circular_velocity_peak(m, n, bound, position, position + 3 * centre, u, softening, row);
  free(bound);
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
