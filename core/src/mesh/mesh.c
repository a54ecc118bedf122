/* The cells the algorithms run on: an implicit structured block (neighbours from the
 * stencil), an explicit graph (neighbours listed) or the leaves of an AMR hierarchy
 * (neighbours from padded block maps). This file checks either description, builds the ghost
 * plan, and walks the cells of graphs and AMR for the stages' list kernels. */
#include "amr_mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

phew_status graph_init(mesh *m, const phew_graph *g, const particle_cells *cells, call_result *result);
phew_status graph_ghost_plan(const mesh *m, comm *c, ghost_plan *plan, char *message, size_t message_size);

static phew_status grid_init(mesh *m, const phew_grid *g, call_result *result)
{
  phew_status s = block_init(&m->b, g, result);
  if (s != PHEW_OK)
    return s;
  if (g->global_dims[0] * g->global_dims[1] * g->global_dims[2] < 2) /* checked product */
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the grid has a single cell: there is nothing to segment");
  m->n_local = m->b.n_stored;
  m->n_active = g->active_dims[0] * g->active_dims[1] * g->active_dims[2]; /* <= n_stored: checked */
  m->n_ghosts = m->n_local - m->n_active;
  for (int d = 0; d < 3; ++d) {
    m->period[d] = g->periodic[d] ? (double)g->global_dims[d] : 0.0;
    m->origin[d] = g->origin[d];
    m->spacing[d] = m->cell_size[d] = g->spacing[d];
  }
  m->shift = 0.5;
  return PHEW_OK;
}

static phew_status amr_init(mesh *m, const phew_amr *d, comm *c, call_result *result)
{
  m->amr = calloc(1, sizeof *m->amr); /* zeroed: mesh_free may see it before amr_mesh_init */
  phew_status s = m->amr ? PHEW_OK : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory");
  s = comm_agree(c, s, result);
  if (s == PHEW_OK)
    s = amr_mesh_init(m->amr, d, c, result);
  if (s != PHEW_OK)
    return s;
  const amr_mesh *a = m->amr;
  m->n_local = a->n_own_cells + a->n_ghosts;
  m->n_active = a->n_leaves;
  m->n_ghosts = a->n_ghosts;
  const int finest = a->n_levels - 1;
  for (int k = 0; k < 3; ++k) { /* coordinates count finest cells, as on a grid */
    m->period[k] = d->periodic[k] ? (double)a->level_dims[finest][k] : 0.0;
    m->origin[k] = d->origin[k];
    m->spacing[k] = m->cell_size[k] = ldexp(d->spacing[k], -finest);
  }
  m->shift = 0.5;
  return PHEW_OK;
}

/* A graph with at least two cells somewhere: one rank alone must have them itself. */
static phew_status graph_mesh_init(mesh *m, const phew_graph *g, const particle_cells *cells, comm *c,
                                   call_result *result)
{
  phew_status s = graph_init(m, g, cells, result);
  if (s == PHEW_OK && c->size == 1 && m->n_local < 2)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph has %lld cell(s): there is nothing to segment",
                  (long long)m->n_local);
  return s;
}

phew_status mesh_init(mesh *m, const phew_input *in, comm *c, call_result *result)
{
  memset(m, 0, sizeof *m);
  m->kind = in->mesh;
  phew_status s;
  switch (in->mesh) {
  case PHEW_MESH_STRUCTURED:
    s = grid_init(m, &in->grid, result);
    m->active_labels = in->labels_active_only != 0;
    break;
  case PHEW_MESH_GRAPH: s = graph_mesh_init(m, &in->graph, NULL, c, result); break;
  case PHEW_MESH_AMR: return amr_init(m, &in->amr, c, result); /* collective itself */
  default: s = phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown mesh kind %d", (int)in->mesh);
  }
  return comm_agree(c, s, result); /* a bad block on one rank stops them all */
}

phew_status mesh_init_particles(mesh *m, const phew_graph *g, const particle_cells *cells, comm *c, call_result *result)
{
  memset(m, 0, sizeof *m);
  m->kind = PHEW_MESH_GRAPH;
  return comm_agree(c, graph_mesh_init(m, g, cells, c, result), result);
}

void mesh_free(mesh *m)
{
  if (m->amr)
    amr_mesh_free(m->amr);
  free(m->amr);
  m->amr = NULL;
}

static phew_status amr_ghost_plan(const mesh *m, comm *c, ghost_plan *plan, char *message, size_t message_size)
{
  const amr_mesh *a = m->amr;
  ghost_list ghosts = {0};
  phew_status s = ghost_list_reserve(&ghosts, a->n_ghosts);
  if (comm_max(c, s != PHEW_OK)) {
    ghost_list_free(&ghosts);
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < a->n_ghosts; ++k) {
    ghosts.cell[k] = a->n_own_cells + k;
    ghosts.owner[k] = a->ghost_owner[k];
    ghosts.global_id[k] = a->ghost_id[k];
  }
  ghosts.n = a->n_ghosts;
  s = ghost_plan_build(plan, c, &ghosts, amr_cell_of_id, a, message, message_size);
  ghost_list_free(&ghosts);
  return s;
}

phew_status mesh_ghost_plan(const mesh *m, comm *c, ghost_plan *plan, char *message, size_t message_size)
{
  switch (m->kind) {
  case PHEW_MESH_GRAPH: return graph_ghost_plan(m, c, plan, message, message_size);
  case PHEW_MESH_AMR: return amr_ghost_plan(m, c, plan, message, message_size);
  default: return grid_ghost_plan(plan, c, &m->b, message, message_size);
  }
}

double mesh_wrap(const mesh *m, int axis, double position)
{
  if (m->period[axis] <= 0.0)
    return position;
  const double origin = m->kind == PHEW_MESH_GRAPH ? m->graph->box_origin[axis] : m->origin[axis];
  const double length = m->period[axis] * m->spacing[axis];
  double x = fmod(position - origin, length);
  if (x < 0.0)
    x += length;
  return origin + x;
}

/* ---- walking the cells of a graph or of AMR leaves ---------------------------------------- */

phew_status cell_walk_init(cell_walk *w, const mesh *m)
{
  w->m = m;
  w->amr = NULL;
  if (m->kind != PHEW_MESH_AMR)
    return PHEW_OK;
  w->amr = phew_malloc(1, sizeof *w->amr);
  if (!w->amr)
    return PHEW_ERROR_MEMORY;
  amr_cursor_init(w->amr, m->amr);
  return PHEW_OK;
}

void cell_walk_free(cell_walk *w)
{
  if (w->amr)
    amr_cursor_free(w->amr);
  free(w->amr);
  w->amr = NULL;
}

int cell_walk_active(cell_walk *w, int64_t i)
{
  const phew_graph *g = w->m->graph;
  return !(g->ghost && g->ghost[i]);
}

int64_t cell_walk_global_id(const cell_walk *w, int64_t cell)
{
  return w->amr ? amr_global_id(w->m->amr, cell) : w->m->graph->global_id[cell];
}

void cell_walk_coord(const cell_walk *w, int64_t i, double c[3])
{
  const double *p = w->m->graph->position;
  for (int d = 0; d < 3; ++d)
    c[d] = p ? p[3 * i + d] : 0.0;
}

double cell_walk_volume(const cell_walk *w, int64_t i) { return w->m->graph->volume ? w->m->graph->volume[i] : 1.0; }
