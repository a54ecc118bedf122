/* The spherical-overdensity walk shared by the one-rank path (overdensity.c) and the spread one
 * (overdensity_spread.c); the walk itself in overdensity_walk.c. */
#ifndef PHEW_OVERDENSITY_H
#define PHEW_OVERDENSITY_H

#include "physics.h"

enum { SO_KINDS = 4, SO_BATCH = 16 };

/* A particle within a query's search radius. Starts with comm_sort's key: (query, distance). */
typedef struct so_entry {
  uint64_t query;   /* the query's index in its round */
  uint64_t r2_bits; /* the distance squared's bits (>= 0: they order as the value) */
  double mass;
} so_entry;

/* The mean densities of the four kinds: 200c, 500c, 200m, vir (comoving). */
void so_densities(const physics_units *u, double density[SO_KINDS]);

/* The walks of the four kinds over n entries in distance order (a whole shell of equal
 * distances always together), after the mass `before` of all the entries nearer than these
 * (held elsewhere; empty: none): found[k] 1 and mass[k] the mass inside, the exact sum rounded
 * once, when kind k's sphere ends at a shell of these entries; found[k] 0 otherwise. */
void so_walk(const so_entry *e, int64_t n, const exact_sum *before, const double density[SO_KINDS], int found[SO_KINDS],
             double mass[SO_KINDS]);

/* The row's eight columns from the masses (the radii from the masses). */
void so_fill_row(const physics_units *u, const double mass[SO_KINDS], phew_structure *row);

/* A search about a row's centre (the spread path shares them with every rank). */
typedef struct so_query {
  int64_t row; /* the row's index on its rank */
  int32_t owner;
  int32_t pad;
  double centre[3];
  double radius;
} so_query;

/* Collective: the columns of the rows with spread[r] (each rank's rows of spread structures,
 * with their first search radii), every rank walking its own particles' share
 * (ball: over this rank's particles; limit: the largest radius). */
phew_status overdensity_spread(const points_context *x, const particle_set *s, ball_query *ball, const physics_units *u,
                               phew_structure *rows, int64_t n_rows, const unsigned char *spread, const double *radius,
                               double limit);

#endif
