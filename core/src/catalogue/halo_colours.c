/* Categorical colours for drawings of many haloes (phew_colour_haloes in phew.h).
 *
 * The most massive haloes get a colour of their own; all others share a few, chosen halo by
 * halo in decreasing mass so that a halo avoids the colours of the haloes already coloured
 * near it. "Near" is within twice the mean separation of the haloes: a uniform grid of cells
 * that wide holds the coloured haloes, and each halo looks at the 27 cells around its own
 * (wrapping on periodic axes). O(n log n) for the sort, O(n) for the rest on clustered data
 * of bounded density per cell. */
#include "phew/phew.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* 0..9: a colour each for the ten most massive haloes (ColorBrewer Set1 without its grey, and
 * two of Set2), saturated so that they stand out; 10..17: the colours the others share
 * (ColorBrewer Set3, lighter). Legible on ParaView's grey-blue background and on white. */
static const double palette[PHEW_COLOURS][3] = {{0.894, 0.102, 0.110}, {0.216, 0.494, 0.722}, {0.302, 0.686, 0.290},
                                                {0.596, 0.306, 0.639}, {1.000, 0.498, 0.000}, {1.000, 1.000, 0.200},
                                                {0.651, 0.337, 0.157}, {0.969, 0.506, 0.749}, {0.400, 0.761, 0.647},
                                                {0.988, 0.553, 0.384}, {0.553, 0.827, 0.780}, {1.000, 1.000, 0.702},
                                                {0.745, 0.729, 0.855}, {0.502, 0.694, 0.827}, {0.992, 0.706, 0.384},
                                                {0.702, 0.871, 0.412}, {0.988, 0.804, 0.898}, {0.737, 0.502, 0.741}};
/* what belongs to no structure: a light grey */
static const double no_structure[3] = {0.75, 0.75, 0.75};

void phew_colour_rgb(int32_t colour, double rgb[3])
{
  const double *c = colour >= 0 && colour < PHEW_COLOURS ? palette[colour] : no_structure;
  for (int k = 0; k < 3; ++k)
    rgb[k] = c[k];
}

typedef struct by_mass {
  double mass;
  int64_t index;
} by_mass;

/* Decreasing mass, NaN last, equal masses by the lower index: a total order. */
static int compare_mass(const void *pa, const void *pb)
{
  const by_mass *a = pa, *b = pb;
  const int na = isnan(a->mass), nb = isnan(b->mass);
  if (na != nb)
    return na - nb;
  if (!na && a->mass != b->mass)
    return a->mass > b->mass ? -1 : 1;
  return a->index < b->index ? -1 : (a->index > b->index);
}

/* The grid the coloured haloes are filed in: cells of side `cell` along each axis from
 * `low`, `cells[k]` of them; periodic axes wrap. */
typedef struct colour_grid {
  double low[3], cell[3], period[3];
  int64_t cells[3];
  int64_t *head; /* first halo filed in each cell, -1 none; then next[] */
  int64_t *next;
} colour_grid;

static int finite3(const double *x) { return isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]); }

/* The cell side: twice the mean separation of the haloes with a finite centre over their box
 * (the period on periodic axes; over the axes they spread along), at most 64 cells per axis. */
static void grid_shape(colour_grid *g, int64_t n, const double *centre, const double period[3])
{
  double high[3];
  int64_t placed = 0;
  for (int k = 0; k < 3; ++k) {
    g->period[k] = period ? period[k] : 0.0;
    g->low[k] = INFINITY;
    high[k] = -INFINITY;
  }
  for (int64_t i = 0; i < n; ++i)
    if (finite3(centre + 3 * i)) {
      ++placed;
      for (int k = 0; k < 3; ++k) {
        g->low[k] = fmin(g->low[k], centre[3 * i + k]);
        high[k] = fmax(high[k], centre[3 * i + k]);
      }
    }
  double volume = 1.0, extent[3];
  int dimensions = 0; /* the axes the haloes spread along (a flat axis: a plane or a line) */
  for (int k = 0; k < 3; ++k) {
    if (g->period[k] > 0.0)
      g->low[k] = 0.0;
    extent[k] = g->period[k] > 0.0 ? g->period[k] : placed ? high[k] - g->low[k] : 0.0;
    if (extent[k] > 0.0) {
      volume *= extent[k];
      ++dimensions;
    }
  }
  const double separation = placed && dimensions ? pow(volume / (double)placed, 1.0 / dimensions) : 1.0;
  for (int k = 0; k < 3; ++k) {
    double count = extent[k] > 0.0 ? floor(extent[k] / (2.0 * separation)) : 1.0;
    count = fmin(fmax(count, 1.0), 64.0);
    g->cells[k] = (int64_t)count;
    g->cell[k] = extent[k] > 0.0 ? extent[k] / count : 1.0;
  }
}

/* The cell index along axis k of coordinate x (clamped on open axes, wrapped on periodic). */
static int64_t cell_of(const colour_grid *g, int k, double x)
{
  int64_t c = (int64_t)floor((x - g->low[k]) / g->cell[k]);
  if (g->period[k] > 0.0) {
    c %= g->cells[k];
    return c < 0 ? c + g->cells[k] : c;
  }
  return c < 0 ? 0 : c >= g->cells[k] ? g->cells[k] - 1 : c;
}

static double distance2(const colour_grid *g, const double *a, const double *b)
{
  double d2 = 0.0;
  for (int k = 0; k < 3; ++k) {
    double d = fabs(a[k] - b[k]);
    if (g->period[k] > 0.0) {
      d = fmod(d, g->period[k]);
      d = fmin(d, g->period[k] - d);
    }
    d2 += d * d;
  }
  return d2;
}

/* For a halo at x: the squared distance to the nearest halo of each shared colour filed in
 * the 27 cells around x (INFINITY where none). */
static void nearest_by_colour(const colour_grid *g, const double *centre, const int32_t *colour, const double *x,
                              double nearest[PHEW_COLOURS_SHARED])
{
  for (int c = 0; c < PHEW_COLOURS_SHARED; ++c)
    nearest[c] = INFINITY;
  int64_t base[3];
  for (int k = 0; k < 3; ++k)
    base[k] = cell_of(g, k, x[k]);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int d[3] = {dx, dy, dz};
        int64_t at[3];
        int inside = 1;
        for (int k = 0; k < 3; ++k) {
          at[k] = base[k] + d[k];
          if (g->period[k] > 0.0)
            at[k] = (at[k] + g->cells[k]) % g->cells[k];
          /* a periodic axis of one or two cells would visit a cell twice: harmless (a minimum) */
          inside &= at[k] >= 0 && at[k] < g->cells[k];
        }
        if (!inside)
          continue;
        for (int64_t j = g->head[at[0] + g->cells[0] * (at[1] + g->cells[1] * at[2])]; j >= 0; j = g->next[j]) {
          const int c = colour[j] - PHEW_COLOURS_OWN;
          const double d2 = distance2(g, x, centre + 3 * j);
          if (c >= 0 && d2 < nearest[c])
            nearest[c] = d2;
        }
      }
}

/* The shared colour farthest from its nearest user around x; among equals the first from
 * `start` on (so that isolated haloes take turns rather than all take the first). */
static int32_t pick_shared(const double nearest[PHEW_COLOURS_SHARED], int start)
{
  int best = start;
  for (int step = 1; step < PHEW_COLOURS_SHARED; ++step) {
    const int c = (start + step) % PHEW_COLOURS_SHARED;
    if (nearest[c] > nearest[best])
      best = c;
  }
  return (int32_t)(PHEW_COLOURS_OWN + best);
}

static phew_status check_arguments(int64_t n, const double *mass, const double *centre, const double period[3],
                                   const int32_t *colour, char *message, size_t message_size)
{
  if (n < 0) {
    snprintf(message, message_size, "cannot colour a negative number of haloes (%lld)", (long long)n);
    return PHEW_ERROR_ARGUMENT;
  }
  if (n > 0 && (!mass || !centre || !colour)) {
    snprintf(message, message_size, "colouring %lld haloes needs their masses, centres and a colour array",
             (long long)n);
    return PHEW_ERROR_ARGUMENT;
  }
  for (int k = 0; period && k < 3; ++k)
    if (!(period[k] >= 0.0) || !isfinite(period[k])) {
      snprintf(message, message_size, "the period along axis %d must be 0 (open) or a positive length, not %g", k,
               period[k]);
      return PHEW_ERROR_ARGUMENT;
    }
  return PHEW_OK;
}

phew_status phew_colour_haloes(phew_context *context, int64_t n, const double *mass, const double *centre,
                               const double period[3], int32_t *colour)
{
  char *message = context ? context->message : NULL;
  const size_t message_size = context ? sizeof context->message : 0;
  if (message_size)
    message[0] = '\0';
  phew_status status = check_arguments(n, mass, centre, period, colour, message, message_size);
  if (status != PHEW_OK || n == 0)
    return status;
  colour_grid g;
  grid_shape(&g, n, centre, period);
  const int64_t n_cells = g.cells[0] * g.cells[1] * g.cells[2];
  by_mass *order = malloc((size_t)n * sizeof *order);
  int32_t *chosen = malloc((size_t)n * sizeof *chosen);
  g.head = malloc((size_t)n_cells * sizeof *g.head);
  g.next = malloc((size_t)n * sizeof *g.next);
  if (!order || !chosen || !g.head || !g.next) {
    snprintf(message, message_size, "out of memory while colouring %lld haloes", (long long)n);
    status = PHEW_ERROR_MEMORY;
  }
  if (status == PHEW_OK) {
    for (int64_t i = 0; i < n; ++i)
      order[i] = (by_mass){mass[i], i};
    qsort(order, (size_t)n, sizeof *order, compare_mass);
    for (int64_t c = 0; c < n_cells; ++c)
      g.head[c] = -1;
    int previous = PHEW_COLOURS_SHARED - 1;
    for (int64_t rank = 0; rank < n; ++rank) {
      const int64_t i = order[rank].index;
      const double *x = centre + 3 * i;
      if (rank < PHEW_COLOURS_OWN) {
        chosen[i] = (int32_t)rank;
      } else {
        double nearest[PHEW_COLOURS_SHARED];
        if (finite3(x))
          nearest_by_colour(&g, centre, chosen, x, nearest);
        else
          for (int c = 0; c < PHEW_COLOURS_SHARED; ++c)
            nearest[c] = INFINITY;
        chosen[i] = pick_shared(nearest, (previous + 1) % PHEW_COLOURS_SHARED);
        previous = chosen[i] - PHEW_COLOURS_OWN;
      }
      if (finite3(x)) { /* filed for the haloes after it */
        const int64_t cell = cell_of(&g, 0, x[0]) +
                             g.cells[0] * (cell_of(&g, 1, x[1]) + g.cells[1] * cell_of(&g, 2, x[2]));
        g.next[i] = g.head[cell];
        g.head[cell] = i;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      colour[i] = chosen[i];
  }
  free(order);
  free(chosen);
  free(g.head);
  free(g.next);
  return status;
}
