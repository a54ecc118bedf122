/* Structures followed in time (the tracking module):
 *
 *   link_steps.c     links by shared mass between two steps (phew_link_steps)
 *   most_bound.c     each structure's most-bound particles, its tracers (phew_most_bound)
 *   tracer_set.c     tracer sets freed and joined
 *   locate.c         where tracer particles lie in a later step
 *   link_tracked.c   links by tracers, orphans lost and found again (phew_link_tracked)
 *
 * Elements meet on the rank that owns their id (tracking_owner_of), wherever they lie in each
 * step; everything decided is decided on rank 0 from exact sums and counts, so nothing depends
 * on the number of ranks. */
#ifndef PHEW_TRACKING_H
#define PHEW_TRACKING_H

#include "comm.h"

/* The rank owning an element id: a splitmix64 hash, so that ids in runs spread evenly. */
static inline int tracking_owner_of(int64_t id, int size)
{
  uint64_t h = (uint64_t)id + UINT64_C(0x9e3779b97f4a7c15);
  h = (h ^ (h >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  h = (h ^ (h >> 27)) * UINT64_C(0x94d049bb133111eb);
  h ^= h >> 31;
  return (int)(h % (uint64_t)size);
}

/* A step's labels checked (ids >= 0, labels >= -1, masses finite and >= 0); `which` names the
 * step in the message. Not collective. */
phew_status tracking_check_step(const phew_step_labels *s, const char *which, call_result *result);

/* Collective (steps checked): the links by shared mass into result->links on rank 0. */
phew_status tracking_shared_links(comm *c, const phew_step_labels *earlier, const phew_step_labels *later,
                                  call_result *result);

/* Collective (labels checked, energies given, n >= 0): phew_most_bound's set on rank 0. */
phew_status tracking_most_bound(comm *c, const phew_step_labels *labels, int64_t step, int64_t n, phew_tracer_set *set,
                                call_result *result);

/* Collective: label[k] (rank 0, n_ids entries) = the later step's label of element ids[k] (rank
 * 0's), -1 where the later step does not label it. */
phew_status tracking_locate(comm *c, const phew_step_labels *later, const int64_t *ids, int64_t n_ids, int64_t *label,
                            call_result *result);

#endif
