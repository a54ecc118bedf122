#include "summary.h"

#include <stdio.h>

/* The particle stages (times are the maximum over ranks) and the padding; returns their total. */
static double particle_stages(const phew_stats *s)
{
  double total = 0.0;
  printf("  %-15s %9s\n", "particle stage", "seconds");
  for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k) {
    printf("  %-15s %9.4f\n", phew_particle_stage_name(k), s->particle_seconds[k]);
    total += s->particle_seconds[k];
  }
  printf("  padding: %d round(s), at most %lld padding particle(s) on a rank\n", (int)s->padding_rounds,
         (long long)s->max_padding);
  return total;
}

/* The thresholds the run used, the automatic ones marked, and the mean density they come from. */
static void thresholds(const phew_clump_result *r, const phew_params *params)
{
  printf("thresholds: density %.9g%s, relevance %.9g, ", r->density_threshold_used,
         params->density_threshold < 0.0 ? " (auto: 10 x the mean density)" : "", params->relevance_threshold);
  if (params->saddle_merging)
    printf("saddle %.9g%s", r->saddle_threshold_used,
           params->saddle_threshold < 0.0 ? " (auto: 2.5 x the density threshold)" : "");
  else
    printf("no saddle merging");
  printf("; mean density %.9g\n", r->mean_density);
}

void print_summary(const phew_clump_result *r, const phew_params *params, int points)
{
  const phew_stats *s = &r->stats;
  const char *unit = points ? "particles" : "cells";
  double total = 0.0;
  thresholds(r, params);
  printf("%s %lld, test %s %lld, peaks %lld, saddle pairs %lld\n", unit, (long long)s->n_cells, unit,
         (long long)s->n_test_cells, (long long)s->n_peaks, (long long)s->n_saddle_pairs);
  printf("noise removal: %d level(s), %lld isolated peak(s) discarded, %lld clump(s)\n", s->noise_levels,
         (long long)s->n_noise_discarded, (long long)s->n_clumps_found);
  printf("saddle merging: %d level(s), %lld halo(es)\n", s->saddle_levels, (long long)s->n_haloes_found);
  printf("catalogue (above the mass threshold): %lld clump(s), %lld halo(es), %lld dendrogram node(s)\n",
         (long long)r->n_clumps, (long long)r->n_haloes, (long long)r->n_nodes);
  if (points)
    total += particle_stages(s);
  printf("  %-15s %9s %7s %14s\n", "stage", "seconds", "rounds", "bytes sent");
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k) {
    printf("  %-15s %9.4f %7d %14lld\n", phew_stage_name(k), s->seconds[k], s->iterations[k],
           (long long)s->bytes_sent[k]);
    total += s->seconds[k];
  }
  printf("  %-15s %9.4f s (%.3g million %s/s)\n", "total", total, total > 0 ? (double)s->n_cells / total / 1e6 : 0.0,
         unit);
  if (points)
    printf("ranks %d, %d thread(s) each: ", s->n_ranks, s->n_threads);
  else
    printf("ranks %d: ", s->n_ranks);
  printf("per rank at most %lld active peak(s), %lld ghost peak(s), ghost/active %.3g, "
         "%lld saddle-matrix entries; %lld hash collision(s)\n",
         (long long)s->max_active_peaks, (long long)s->max_ghost_peaks, s->max_ghost_ratio,
         (long long)s->max_sparse_entries, (long long)s->hash_collisions);
}

void print_group_summary(const phew_group_result *r, int fof)
{
  const phew_stats *s = &r->stats;
  printf("particles %lld, groups %lld\n", (long long)s->n_cells, (long long)r->n_groups);
  if (fof)
    printf("linking length %.17g (in the positions' units)\n", r->linking_length_used);
  printf("largest groups (particles):");
  for (int64_t k = 0; k < r->n_groups && k < 10; ++k)
    printf(" %lld", (long long)r->groups[k].n_particles);
  printf("\n");
  /* the stages a finder used: FoF links in the neighbours' stage; HOP's hops are its
   * watershed, its regrouping its merging */
  double total = 0.0;
  for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
    if (s->particle_seconds[k] > 0.0) {
      printf("  %-15s %9.4f\n", fof && k == PHEW_PARTICLE_NEIGHBOURS ? "linking" : phew_particle_stage_name(k),
             s->particle_seconds[k]);
      total += s->particle_seconds[k];
    }
  const int stages[3] = {PHEW_STAGE_WATERSHED, PHEW_STAGE_SADDLE_MERGING, PHEW_STAGE_PROPERTIES};
  const char *const names[3] = {"hops", "regrouping", "catalogue"};
  for (int k = 0; k < 3; ++k)
    if (s->seconds[stages[k]] > 0.0) {
      printf("  %-15s %9.4f\n", names[k], s->seconds[stages[k]]);
      total += s->seconds[stages[k]];
    }
  printf("  %-15s %9.4f s (%.3g million particles/s)\n", "total", total,
         total > 0 ? (double)s->n_cells / total / 1e6 : 0.0);
  printf("ranks %d, %d thread(s) each: at most %lld padding particle(s) on a rank\n", s->n_ranks, s->n_threads,
         (long long)s->max_padding);
}

void print_snapshot(const phew_particle_set *set)
{
  const phew_snapshot_info *i = &set->info;
  printf("snapshot: %s, %s, %d file(s), %lld particles%s\n", i->path, i->code, i->n_files, (long long)set->n_total,
         set->velocity ? " with velocities" : "");
  printf("snapshot box: origin %.17g %.17g %.17g, size %.17g %.17g %.17g %s, periodic %d %d %d\n", i->box_origin[0],
         i->box_origin[1], i->box_origin[2], i->box_size[0], i->box_size[1], i->box_size[2], i->length_unit,
         i->periodic[0], i->periodic[1], i->periodic[2]);
  if (i->cosmological)
    printf("snapshot cosmology: a %.9g (z %.6g), h %.6g, Omega_m %.6g, Omega_Lambda %.6g\n", i->scale_factor,
           i->redshift, i->hubble, i->omega_matter, i->omega_lambda);
  printf("snapshot units: length %s, mass %s, velocity %s\n", i->length_unit, i->mass_unit, i->velocity_unit);
}
