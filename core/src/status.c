#define _DEFAULT_SOURCE /* clock_gettime, madvise */
/* Status strings, defaults, result lifetime and the small helpers every file uses. */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

const char *phew_status_string(phew_status status)
{
  switch (status) {
  case PHEW_OK: return "ok";
  case PHEW_ERROR_ARGUMENT: return "invalid argument";
  case PHEW_ERROR_DATA: return "invalid data";
  case PHEW_ERROR_MEMORY: return "out of memory";
  case PHEW_ERROR_MPI: return "MPI error";
  case PHEW_ERROR_IO: return "I/O error";
  case PHEW_CANCELLED: return "cancelled";
  }
  return "unknown status";
}

const char *phew_stage_name(int stage)
{
  static const char *names[PHEW_STAGE_COUNT] = {"watershed", "saddles", "noise removal",
                                                "saddle merging", "properties"};
  return stage >= 0 && stage < PHEW_STAGE_COUNT ? names[stage] : "unknown";
}

const char *phew_particle_stage_name(int stage)
{
  static const char *names[PHEW_PARTICLE_STAGE_COUNT] = {"domain", "tree", "neighbours", "density", "graph"};
  return stage >= 0 && stage < PHEW_PARTICLE_STAGE_COUNT ? names[stage] : "unknown";
}

void phew_params_init(phew_params *params)
{
  memset(params, 0, sizeof *params);
  /* automatic: a first run on data nobody has looked at yet finds clumps */
  params->density_threshold = PHEW_THRESHOLD_AUTOMATIC;
  params->relevance_threshold = 2.0;
  params->saddle_merging = 0;
  params->saddle_threshold = PHEW_THRESHOLD_AUTOMATIC;
  params->mass_threshold = 0.0;
  params->peak_order_seed = 0;
}

void phew_points_init(phew_points *points)
{
  memset(points, 0, sizeof *points);
  points->type = PHEW_FLOAT64;
  points->n_neighbours = 16;
  points->n_density_neighbours = 64;
}

void phew_grid_init_whole(phew_grid *grid, int64_t nx, int64_t ny, int64_t nz)
{
  memset(grid, 0, sizeof *grid);
  const int64_t n[3] = {nx, ny, nz};
  for (int d = 0; d < 3; ++d) {
    grid->global_dims[d] = grid->stored_dims[d] = grid->active_dims[d] = n[d];
    grid->spacing[d] = 1.0;
  }
}

void phew_result_free(phew_result *result)
{
  if (!result)
    return;
  free(result->clumps);
  free(result->haloes);
  free(result->nodes);
  free(result->groups);
  free(result->links);
  result->links = NULL;
  result->n_links = 0;
  result->clumps = result->haloes = NULL;
  result->nodes = NULL;
  result->groups = NULL;
  result->n_clumps = result->n_haloes = result->n_nodes = result->n_groups = 0;
}

int phew_has_mpi(void)
{
#ifdef PHEW_WITH_MPI
  return 1;
#else
  return 0;
#endif
}

phew_status phew_fail(phew_result *result, phew_status status, const char *format, ...)
{
  if (result && result->message[0] == '\0') { /* keep the first, most specific message */
    va_list args;
    va_start(args, format);
    vsnprintf(result->message, sizeof result->message, format, args);
    va_end(args);
  }
  return status;
}

double phew_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Large arrays (per particle or cell, millions of them) ask Linux for transparent huge pages
 * where the system leaves that to the program ("madvise" mode): each of their first touches
 * then costs one page fault per 2 MiB instead of one per 4 KiB (a quarter of the
 * Friends-of-Friends time on 4e6 particles went to page faults). Only the part of the array
 * on whole 2 MiB pages is advised; a refusal changes nothing. */
static void *large_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (p && bytes >= 2 * huge) {
    const uintptr_t begin = ((uintptr_t)p + huge - 1) & ~(huge - 1), end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > begin)
      (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
  }
#else
  (void)bytes;
#endif
  return p;
}

void *phew_malloc(size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(malloc(count * size), count * size);
}

void *phew_calloc(size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(calloc(count, size), count * size);
}

void *phew_realloc(void *p, size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(realloc(p, count * size), count * size);
}

int phew_grow(void *p, size_t count, size_t size)
{
  void **array = p;
  void *grown = phew_realloc(*array, count, size);
  if (!grown)
    return -1;
  *array = grown;
  return 0;
}
