/* An explicit cell graph: the checks of its description, and its ghost cells (flagged by
 * the caller, each with the rank owning it), which owners find by global id in a hash of
 * their active cells. */
#include "mesh.h"
#include "id_map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

phew_status graph_init(mesh *m, const phew_graph *g, const particle_cells *cells, call_result *result)
{
  if (cells) { /* built by the particle path */
    m->particles = 1;
    m->neighbours32 = cells->neighbours32;
    m->cell_mass = cells->mass;
    m->velocity = cells->velocity;
    m->density_unit = cells->density_unit;
  }
  if (g->n_cells < 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph has a negative number of cells");
  if (g->n_cells > 0 &&
      (!g->global_id || !g->offsets || (!g->neighbours && !m->neighbours32 && g->offsets[g->n_cells] > 0)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph needs global ids, offsets and neighbours");
  if (g->n_cells > 0 && g->offsets[0] != 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "graph offsets must start at 0");
  m->n_active = 0;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t i = 0; i < g->n_cells; ++i) {
    if (g->offsets[i + 1] < g->offsets[i])
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "graph offsets decrease at cell %lld", (long long)i);
    for (int64_t k = g->offsets[i]; k < g->offsets[i + 1]; ++k) {
      const int64_t j = m->neighbours32 ? m->neighbours32[k] : g->neighbours[k];
      if (j < 0 || j >= g->n_cells)
        return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld lists neighbour %lld, outside 0..%lld", (long long)i,
                         (long long)j, (long long)g->n_cells - 1);
    }
    if (g->volume && !(g->volume[i] > 0.0 && isfinite(g->volume[i])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld has volume %g: volumes must be positive", (long long)i,
                       g->volume ? g->volume[i] : 0.0);
    if (g->position)
      for (int d = 0; d < 3; ++d) {
        const double x = g->position[3 * i + d];
        if (!isfinite(x))
          return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld has a position that is not finite", (long long)i);
        lo[d] = x < lo[d] ? x : lo[d];
        hi[d] = x > hi[d] ? x : hi[d];
      }
    const int ghost = g->ghost && g->ghost[i];
    if (ghost && !g->owner)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph has ghost cells but no owner ranks");
    m->n_active += !ghost;
  }
  m->graph = g;
  m->n_local = g->n_cells;
  m->n_ghosts = m->n_local - m->n_active;
  for (int d = 0; d < 3; ++d) {
    if (g->periodic[d] && !(g->box_size[d] > 0.0 && isfinite(g->box_size[d]) && isfinite(g->box_origin[d]) &&
                            isfinite(g->box_origin[d] + g->box_size[d])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "a periodic graph needs a positive, finite box size");
    m->period[d] = g->periodic[d] ? g->box_size[d] : 0.0;
    m->origin[d] = 0.0;
    m->spacing[d] = m->cell_size[d] = 1.0;
    /* displacements between cells are differences of positions: they must be finite too */
    if (hi[d] > lo[d] && !isfinite(hi[d] - lo[d]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the cell positions along %c span more than the double range",
                       (char)('x' + d));
  }
  m->shift = 0.0;
  return PHEW_OK;
}

/* Global id -> local index of the active cells, for the owners' side of the ghost plan. */
static int64_t graph_cell_of_id(const void *context, int64_t id) { return id_map_find(context, id); }

phew_status graph_ghost_plan(const mesh *m, comm *c, ghost_plan *plan, char *message, size_t message_size)
{
  const phew_graph *g = m->graph;
  id_map index;
  ghost_list ghosts = {0};
  int failed = id_map_init(&index, m->n_active) != 0;
  failed = failed || ghost_list_reserve(&ghosts, m->n_ghosts) != PHEW_OK;
  int64_t duplicate = -1;
  for (int64_t i = 0; !failed && i < g->n_cells; ++i) {
    if (g->ghost && g->ghost[i]) {
      ghosts.cell[ghosts.n] = i;
      ghosts.owner[ghosts.n] = g->owner[i];
      ghosts.global_id[ghosts.n++] = g->global_id[i];
      continue;
    }
    int64_t existing;
    failed = id_map_insert(&index, g->global_id[i], i, &existing) != 0;
    if (!failed && existing != i && duplicate < 0)
      duplicate = g->global_id[i];
  }
  phew_status s;
  if (comm_max(c, failed)) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    s = PHEW_ERROR_MEMORY;
  } else if (comm_max(c, duplicate >= 0)) {
    snprintf(message, message_size, "two active cells of a rank have the same global id: ids must be unique");
    s = PHEW_ERROR_ARGUMENT;
  } else {
    s = ghost_plan_build(plan, c, &ghosts, graph_cell_of_id, &index, message, message_size);
  }
  id_map_free(&index);
  ghost_list_free(&ghosts);
  return s;
}
