/* The spherical-overdensity walk (overdensity.h). M(<= r) is the exact sum of the masses at
 * distance <= r, rounded once: the answer depends neither on the entries' order within a shell
 * nor on how they were split over ranks. A running double estimate decides each shell's test;
 * the exact sum is taken only when the estimate lies too close to the threshold to tell. */
#include "overdensity.h"

#include <math.h>
#include <string.h>

static void deltas(const physics_units *u, double delta[SO_KINDS])
{
  delta[0] = 200.0;
  delta[1] = 500.0;
  delta[2] = 200.0 * u->omega_m_a;
  delta[3] = u->delta_vir;
}

void so_densities(const physics_units *u, double density[SO_KINDS])
{
  double delta[SO_KINDS];
  deltas(u, delta);
  for (int k = 0; k < SO_KINDS; ++k)
    density[k] = delta[k] * u->rho_crit;
}

/* The walks' shared state: they only move outward. */
typedef struct walker {
  const so_entry *e;
  int64_t n, k;  /* the shells from e[k] on are still to walk */
  int64_t added; /* inside holds before and e[0 .. added) (added <= k) */
  exact_sum inside;
  double estimate; /* of the mass of before and e[0 .. k) */
} walker;

static double r2_of(const so_entry *e)
{
  double r2;
  memcpy(&r2, &e->r2_bits, sizeof r2);
  return r2;
}

static void advance(walker *w, int64_t to)
{
  for (; w->added < to; ++w->added)
    exact_sum_add(&w->inside, w->e[w->added].mass);
}

/* Whether M(<= r) < threshold at the shell e[k .. g) (estimate: with the shell). A double sum
 * of n nonnegative terms errs by less than n 2^-53 of it (here fewer than g + 2 terms: before
 * rounded, the masses), and the exact sum rounded by 2^-53: a margin of twice that decides. */
static int shell_ends(walker *w, int64_t g, double estimate, double threshold)
{
  const double margin = (double)(g + 2) * 0x1p-52;
  if (estimate < threshold * (1.0 - margin))
    return 1;
  if (estimate > threshold * (1.0 + margin))
    return 0;
  advance(w, w->k);
  exact_sum m = w->inside;
  for (int64_t i = w->k; i < g; ++i)
    exact_sum_add(&m, w->e[i].mass);
  return exact_double(&m) < threshold;
}

/* The walk of one density from where the last one ended: 1 and *mass if it ends here. */
static int walk_one(walker *w, double density, double *mass)
{
  while (w->k < w->n) {
    int64_t g = w->k;
    double shell = 0.0;
    while (g < w->n && w->e[g].r2_bits == w->e[w->k].r2_bits)
      shell += w->e[g++].mass;
    const double r = sqrt(r2_of(&w->e[w->k]));
    if (r > 0.0 && shell_ends(w, g, w->estimate + shell, density * (4.0 / 3.0) * M_PI * (r * r * r))) {
      advance(w, w->k);
      *mass = exact_double(&w->inside);
      w->estimate = *mass; /* exact, rounded once: the next walk's start */
      return 1;
    }
    w->estimate += shell;
    w->k = g;
  }
  return 0;
}

/* A denser sphere ends at the same shell or nearer (the test is monotone in the density): the
 * kinds walk from the densest, each from where the previous one ended, over the entries once. */
void so_walk(const so_entry *e, int64_t n, const exact_sum *before, const double density[SO_KINDS], int found[SO_KINDS],
             double mass[SO_KINDS])
{
  int order[SO_KINDS];
  for (int k = 0; k < SO_KINDS; ++k) {
    int i = k;
    for (; i > 0 && density[order[i - 1]] < density[k]; --i)
      order[i] = order[i - 1];
    order[i] = k;
  }
  walker w = {e, n, 0, 0, *before, exact_double(before)};
  for (int i = 0; i < SO_KINDS; ++i) {
    const int k = order[i];
    mass[k] = 0.0;
    found[k] = walk_one(&w, density[k], &mass[k]);
  }
}

void so_fill_row(const physics_units *u, const double mass[SO_KINDS], phew_structure *row)
{
  double delta[SO_KINDS], radius[SO_KINDS];
  deltas(u, delta);
  for (int k = 0; k < SO_KINDS; ++k)
    radius[k] = cbrt(3.0 * mass[k] / (4.0 * M_PI * delta[k] * u->rho_crit));
  row->m200c = mass[0];
  row->r200c = radius[0];
  row->m500c = mass[1];
  row->r500c = radius[1];
  row->m200m = mass[2];
  row->r200m = radius[2];
  row->mvir = mass[3];
  row->rvir = radius[3];
}
