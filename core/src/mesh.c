/* The cells the algorithms run on: an implicit structured block (neighbours from the
 * stencil) or an explicit graph (neighbours listed). This file checks either description and
 * answers the few questions that do not sit in a hot loop: ids, coordinates, positions. */
#include "internal.h"

#include <math.h>

static phew_status graph_init(mesh *m, const phew_graph *g, phew_result *result)
{
  if (g->n_cells < 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph has a negative number of cells");
  if (g->n_cells > 0 && (!g->global_id || !g->offsets || (!g->neighbours && g->offsets[g->n_cells] > 0)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph needs global ids, offsets and neighbours");
  if (g->n_cells > 0 && g->offsets[0] != 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "graph offsets must start at 0");
  m->n_active = 0;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t i = 0; i < g->n_cells; ++i) {
    if (g->offsets[i + 1] < g->offsets[i])
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "graph offsets decrease at cell %lld", (long long)i);
    for (int64_t k = g->offsets[i]; k < g->offsets[i + 1]; ++k)
      if (g->neighbours[k] < 0 || g->neighbours[k] >= g->n_cells)
        return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld lists neighbour %lld, outside 0..%lld",
                         (long long)i, (long long)g->neighbours[k], (long long)g->n_cells - 1);
    if (g->volume && !(g->volume[i] > 0.0 && isfinite(g->volume[i])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld has volume %g: volumes must be positive",
                       (long long)i, g->volume ? g->volume[i] : 0.0);
    if (g->position)
      for (int d = 0; d < 3; ++d) {
        const double x = g->position[3 * i + d];
        if (!isfinite(x))
          return phew_fail(result, PHEW_ERROR_ARGUMENT, "cell %lld has a position that is not finite",
                           (long long)i);
        lo[d] = x < lo[d] ? x : lo[d];
        hi[d] = x > hi[d] ? x : hi[d];
      }
    m->n_active += !(g->ghost && g->ghost[i]);
  }
  m->graph = g;
  m->n_local = g->n_cells;
  for (int d = 0; d < 3; ++d) {
    if (g->periodic[d] && !(g->box_size[d] > 0.0 && isfinite(g->box_size[d]) && isfinite(g->box_origin[d]) &&
                            isfinite(g->box_origin[d] + g->box_size[d])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "a periodic graph needs a positive, finite box size");
    m->period[d] = g->periodic[d] ? g->box_size[d] : 0.0;
    /* displacements between cells are differences of positions: they must be finite too */
    if (hi[d] > lo[d] && !isfinite(hi[d] - lo[d]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "the cell positions along %c span more than the double range", (char)('x' + d));
  }
  return PHEW_OK;
}

/* Ghost cells of a graph are copies of other ranks' cells, and graphs run on one rank: alone,
 * nothing can fill their labels. (Ghost layers of a grid are filled by the ghost exchange.) */
static phew_status check_graph_ghosts(const mesh *m, phew_result *result)
{
  if (m->n_active != m->n_local)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "%lld ghost cell(s) were given in a graph, but graphs run on one rank only in this "
                     "version: pass only active cells",
                     (long long)(m->n_local - m->n_active));
  return PHEW_OK;
}

phew_status mesh_init(mesh *m, const phew_input *in, int n_ranks, phew_result *result)
{
  m->kind = in->mesh;
  if (in->mesh == PHEW_MESH_GRAPH) {
    phew_status s = graph_init(m, &in->graph, result);
    if (s == PHEW_OK && m->n_local < 2 && n_ranks == 1)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the graph has %lld cell(s): there is nothing to segment",
                       (long long)m->n_local);
    return s == PHEW_OK ? check_graph_ghosts(m, result) : s;
  }
  if (in->mesh != PHEW_MESH_STRUCTURED)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown mesh kind %d", (int)in->mesh);
  phew_status s = block_init(&m->b, &in->grid, result);
  if (s != PHEW_OK)
    return s;
  const phew_grid *g = &in->grid;
  if (g->global_dims[0] * g->global_dims[1] * g->global_dims[2] < 2) /* checked product */
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the grid has a single cell: there is nothing to segment");
  m->n_local = m->b.n_stored;
  m->n_active = g->active_dims[0] * g->active_dims[1] * g->active_dims[2]; /* <= n_stored: checked */
  for (int d = 0; d < 3; ++d)
    m->period[d] = g->periodic[d] ? (double)g->global_dims[d] : 0.0;
  return PHEW_OK;
}

static void stored_xyz(const block *b, int64_t cell, int64_t xyz[3])
{
  xyz[0] = cell % b->dims[0];
  xyz[1] = (cell / b->dims[0]) % b->dims[1];
  xyz[2] = cell / (b->dims[0] * b->dims[1]);
}

int64_t mesh_global_id(const mesh *m, int64_t cell)
{
  if (m->kind == PHEW_MESH_GRAPH)
    return m->graph->global_id[cell];
  int64_t s[3];
  stored_xyz(&m->b, cell, s);
  return block_global_id(&m->b, s[0], s[1], s[2]);
}

void mesh_coordinates(const mesh *m, int64_t cell, double c[3])
{
  if (m->kind == PHEW_MESH_GRAPH) {
    for (int d = 0; d < 3; ++d)
      c[d] = m->graph->position ? m->graph->position[3 * cell + d] : 0.0;
    return;
  }
  const phew_grid *g = m->b.grid;
  const int64_t id = mesh_global_id(m, cell);
  c[0] = (double)(id % g->global_dims[0]);
  c[1] = (double)((id / g->global_dims[0]) % g->global_dims[1]);
  c[2] = (double)(id / (g->global_dims[0] * g->global_dims[1]));
}

double mesh_position(const mesh *m, int axis, double c)
{
  if (m->kind == PHEW_MESH_GRAPH)
    return c;
  const phew_grid *g = m->b.grid;
  return g->origin[axis] + (c + 0.5) * g->spacing[axis];
}

double mesh_wrap(const mesh *m, int axis, double position)
{
  if (m->period[axis] <= 0.0)
    return position;
  double origin, length;
  if (m->kind == PHEW_MESH_GRAPH) {
    origin = m->graph->box_origin[axis];
    length = m->graph->box_size[axis];
  } else {
    const phew_grid *g = m->b.grid;
    origin = g->origin[axis];
    length = (double)g->global_dims[axis] * g->spacing[axis];
  }
  double x = fmod(position - origin, length);
  if (x < 0.0)
    x += length;
  return origin + x;
}
