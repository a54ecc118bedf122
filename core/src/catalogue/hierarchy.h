/* The dendrogram as rank 0 assembles it (hierarchy.c), from the clumps' records that their
 * owners send (catalogue.c). Internal to catalogue/. */
#ifndef PHEW_CATALOGUE_HIERARCHY_H
#define PHEW_CATALOGUE_HIERARCHY_H

#include "catalogue.h"

/* One clump as its owner describes it to rank 0, which assembles the catalogue. */
typedef struct clump_record {
  int64_t peak_id;
  double peak_density;
  double coord[3];
  double key_saddle; /* noise removal; isolated: no saddle at all */
  int32_t isolated;
  int32_t is_halo; /* it heads its halo */
  int64_t halo_peak_id;
  double halo_peak_density;
  double halo_key_saddle; /* if it heads its halo */
  int32_t halo_isolated;
  int32_t merge_level; /* saddle merging: level at which it merged (0: never) */
  int64_t parent_peak_id;
  double parent_peak_density;
  double merge_saddle;
  sums clump;
  sums halo; /* if it heads its halo */
} clump_record;

/* What the dendrogram is made of (on rank 0): the clumps in catalogue order, the
 * saddle-merging events and the haloes. */
typedef struct merger {
  int64_t child, parent; /* clump indices */
  double saddle;
  int32_t level;
} merger;

typedef struct hierarchy_input {
  int64_t n_clumps;
  const clump_record *const *clump; /* in catalogue order */
  const int64_t *clump_final_id;
  const int64_t *halo_of_clump; /* halo index */
  int64_t n_mergers;
  const merger *mergers; /* by increasing level */
  const int64_t *halo_final_id;
  const double *root_saddle;    /* per halo */
  const sums *const *halo_sums; /* per halo */
  const mesh *mesh;
} hierarchy_input;

phew_status hierarchy_build(const hierarchy_input *h, call_result *result);

#endif
