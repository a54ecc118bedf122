/* The halo finders on particles, on the particle path of core/src/particles (reading,
 * subvolumes, padding, trees), with base/union_find.h (sets joined by several threads at once):
 *
 *   fof_cells.c      the sets of friends among a rank's particles, on a grid of cells
 *   fof.c            Friends-of-Friends: each particle's group, as the smallest global id in it,
 *                    over the ranks
 *   ask_owners.c     questions about particles to the ranks owning them
 *   hop.c            HOP's hops: each particle's group, as the global id of its maximum
 *   hop_regroup.c    HOP's boundaries and regrouping by the density thresholds
 *   groups.c         from a group key per particle to GroupIds and the group catalogue
 *   find_groups.c    phew_find_fof_groups and phew_find_hop_groups, end to end */
#ifndef PHEW_HALOS_HALOS_H
#define PHEW_HALOS_HALOS_H

#include "id_map.h"
#include "particles.h"
#include "union_find.h"

/* The sets of friends among n particles (fof_cells.c): order[t] is the particle at sorted
 * place t, and the sets are over sorted places (the root of a set is its smallest place; on
 * return every place's parent is its root). */
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

/* An owner's answer about its own particle i: value_size bytes (at most 64) into out. */
typedef void (*owner_reply)(const void *context, int64_t i, void *out);

/* Collective: answers[k] (value_size bytes each) is what rank rank[k] replies about its own
 * particle whose global id is id[k] (own: global id -> own index on every rank). */
phew_status ask_owners(const points_context *x, const id_map *own, const int32_t *rank, const int64_t *id, int64_t n,
                       owner_reply reply, const void *context, size_t value_size, void *answers);

/* HOP's neighbours: n_keep nearest other particles per own particle (particle_set indices),
 * the first n_merge of them by (distance, id), the others as a set (all in order when
 * n_merge >= n_keep). A particle hops among the first n_hop - 1 (and itself; all of them, or
 * an ordered prefix) and makes boundaries with the first n_merge. */
typedef struct hop_lists {
  const int32_t *nearest;
  int n_keep, n_hop, n_merge;
} hop_lists;

/* Collective: key[i] (per own particle) is the global id of the maximum its chain of hops
 * ends at. rho: per own particle; rho_padding: per padding particle, where a list refers to it. */
phew_status hop_chains(const points_context *x, const particle_set *s, const id_map *own, const hop_lists *lists,
                       const double *rho, const double *rho_padding, int64_t *key);

/* HOP's density thresholds, in the densities' units. */
typedef struct hop_thresholds {
  double outer, saddle, peak;
} hop_thresholds;

/* Collective: final_key[i] (per own particle) is the key of the group particle i ends in
 * after the regrouping (the global id of the group's peak), or -1. key_padding: the HOP keys
 * of the padding particles among the first n_merge of a list. */
phew_status hop_regroup(const points_context *x, const particle_set *s, const hop_lists *lists, const double *rho,
                        const double *rho_padding, const int64_t *key, const int64_t *key_padding,
                        const hop_thresholds *t, int64_t *final_key);

/* What a finder tells the catalogue about its groups. */
typedef struct group_keys {
  const int64_t *key;    /* per own particle: its group (a global particle id), or -1: none */
  const double *density; /* per own particle, or NULL: the catalogue has no peak columns */
  int64_t min_members;   /* groups with fewer particles get no GroupId */
} group_keys;

/* Collective: GroupIds of the groups with at least min_members particles, in catalogue order
 * (decreasing number of particles, equal counts by their smallest particle id), into
 * group_id (per own particle, -1: none), and the catalogue on rank 0 (result->groups). A
 * group's reference particle is the one whose global id is its key: the centre of mass is
 * summed relative to it (nearest image), and with densities it is the group's peak. */
phew_status groups_build(const points_context *x, const particle_set *s, const group_keys *g, int64_t *group_id);

#endif
