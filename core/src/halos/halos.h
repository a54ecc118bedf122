/* The halo finders on particles, on the particle path of core/src/particles (reading,
 * subvolumes, padding, trees):
 *
 *   union_find.h     sets joined by several threads at once
 *   fof.c            Friends-of-Friends: each particle's group, as the smallest global id in it
 *   groups.c         from a group key per particle to GroupIds and the group catalogue
 *   find_groups.c    phew_find_fof_groups, end to end
 *
 * Internal to the core. */
#ifndef PHEW_HALOS_HALOS_H
#define PHEW_HALOS_HALOS_H

#include "../particles/points.h"

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
