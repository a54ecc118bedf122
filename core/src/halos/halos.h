/* The halo finders on particles, on the particle path of core/src/particles (reading,
 * subvolumes, padding, trees):
 *
 *   union_find.h     sets joined by several threads at once
 *   fof_cells.c      the sets of friends among a rank's particles, on a grid of cells
 *   fof.c            Friends-of-Friends: each particle's group, as the smallest global id in it,
 *                    over the ranks
 *   groups.c         from a group key per particle to GroupIds and the group catalogue
 *   find_groups.c    phew_find_fof_groups, end to end
 *
 * Internal to the core. */
#ifndef PHEW_HALOS_HALOS_H
#define PHEW_HALOS_HALOS_H

#include "../particles/points.h"
#include "union_find.h"

/* The sets of friends among n particles (fof_cells.c): order[t] is the particle at sorted
 * place t, and the sets are over sorted places (the root of a set is its smallest place). */
typedef struct friend_sets {
  int64_t n;
  int32_t *order;
  union_find sets;
} friend_sets;

/* Friends: particle_distance2 <= length^2. The particles lie in [lo, hi] (the box along
 * periodic axes). PHEW_ERROR_MEMORY, or PHEW_ERROR_ARGUMENT beyond 2^31 - 1 particles. */
phew_status friend_sets_find(friend_sets *f, const double *position, int64_t n, const particle_box *box,
                             const double *lo, const double *hi, double length, int n_threads);
void friend_sets_free(friend_sets *f);

/* Collective: Friends-of-Friends over every rank's own particles, with friends within
 * `linking_length` (nearest image on periodic axes, the distance compared as
 * particle_distance2 <= linking_length^2). s gains the padding it needs. key[i] (per own
 * particle) is the smallest global id in particle i's group, the same on every rank; -1 for
 * a group known here to have fewer than min_members particles (a smaller group that crosses
 * ranks keeps its key: the catalogue drops it). */
phew_status fof_find(const points_context *x, const subvolume *parts, particle_set *s, double linking_length,
                     int64_t min_members, int64_t *key);

/* What a finder tells the catalogue about its groups. */
typedef struct group_keys {
  const int64_t *key;     /* per own particle: its group (a global particle id), or -1: none */
  const double *density;  /* per own particle, or NULL: the catalogue has no peak columns */
  int64_t min_members;    /* groups with fewer particles get no GroupId */
} group_keys;

/* Collective: GroupIds of the groups with at least min_members particles, in catalogue order
 * (decreasing number of particles, equal counts by their smallest particle id), into
 * group_id (per own particle, -1: none), and the catalogue on rank 0 (result->groups). A
 * group's reference particle is the one whose global id is its key: the centre of mass is
 * summed relative to it (nearest image), and with densities it is the group's peak. */
phew_status groups_build(const points_context *x, const particle_set *s, const group_keys *g, int64_t *group_id);

#endif
