/* Boxes over one level's octs (ramses_boxes.h). Three sorts: octs by (z, y, x) into rows
 * along x; rows by (z, x0, x1, y) into slabs along y; slabs by (x0, x1, y0, y1, z) into boxes
 * along z. Every box is a full block of octs, so each of its cells has a value. */
#include "ramses_boxes.h"

#include <stdlib.h>
#include <string.h>

typedef struct run {
  int64_t key[5]; /* what it is sorted by: the first entries compare first */
  int64_t lo[3], hi[3];
  int64_t first, count; /* its parts: entries [first, first + count) of the finer list */
} run;

static int compare_runs(const void *a, const void *b)
{
  const run *x = a, *y = b;
  for (int k = 0; k < 5; ++k)
    if (x->key[k] != y->key[k])
      return x->key[k] < y->key[k] ? -1 : 1;
  return 0;
}

/* Merges consecutive parts (sorted) that continue each other along axis into runs: parts
 * equal on the other extents and with lo[axis] = previous hi[axis] + 1. */
static int64_t merge(const run *parts, int64_t n, int axis, run *out)
{
  int64_t m = 0;
  for (int64_t k = 0; k < n; ++k) {
    run *last = m > 0 ? &out[m - 1] : NULL;
    int joins = last != NULL && parts[k].lo[axis] == last->hi[axis] + 1;
    for (int d = 0; joins && d < 3; ++d)
      joins = d == axis || (parts[k].lo[d] == last->lo[d] && parts[k].hi[d] == last->hi[d]);
    if (joins) {
      last->hi[axis] = parts[k].hi[axis];
      last->count += 1;
    } else {
      out[m] = parts[k];
      out[m].first = k;
      out[m].count = 1;
      ++m;
    }
  }
  return m;
}

/* The sort key of a run before merging along axis: the other extents, then lo[axis]. */
static void set_keys(run *runs, int64_t n, int axis)
{
  static const int order[3][2] = {{2, 1}, {2, 0}, {0, 1}}; /* x: (z, y); y: (z, x); z: (x, y) */
  for (int64_t k = 0; k < n; ++k) {
    run *r = &runs[k];
    const int a = order[axis][0], b = order[axis][1];
    const int64_t key[5] = {r->lo[a], r->hi[a], r->lo[b], r->hi[b], r->lo[axis]};
    memcpy(r->key, key, sizeof key);
  }
  qsort(runs, (size_t)n, sizeof *runs, compare_runs);
}

/* The cells of one box from its octs (box -> slabs -> rows -> octs). */
static void fill(const oct_level *level, int n_variables, const run *blk, const run *slabs, const run *rows,
                 const run *octs, level_box *box)
{
  const int64_t nx = box->hi[0] - box->lo[0] + 1, ny = box->hi[1] - box->lo[1] + 1, nz = box->hi[2] - box->lo[2] + 1;
  const int64_t cells = nx * ny * nz;
  for (int64_t s = blk->first; s < blk->first + blk->count; ++s)
    for (int64_t r = slabs[s].first; r < slabs[s].first + slabs[s].count; ++r)
      for (int64_t o = rows[r].first; o < rows[r].first + rows[r].count; ++o) {
        const int64_t k = octs[o].first; /* the oct's index in the level's arrays */
        for (int c = 0; c < 8; ++c) {
          const int64_t x = 2 * octs[o].lo[0] + (c & 1) - box->lo[0], y = 2 * octs[o].lo[1] + (c >> 1 & 1) - box->lo[1],
                        z = 2 * octs[o].lo[2] + (c >> 2 & 1) - box->lo[2];
          for (int v = 0; v < n_variables; ++v)
            box->values[v * cells + x + nx * (y + ny * z)] = level->values[((int64_t)v * 8 + c) * level->n + k];
        }
      }
}

int octs_to_boxes(const oct_level *level, int n_variables, level_box **boxes, int64_t *n_boxes, read_error *e)
{
  const int64_t n = level->n;
  *boxes = NULL;
  *n_boxes = 0;
  if (n == 0)
    return 0;
  run *octs = malloc((size_t)n * sizeof *octs), *rows = malloc((size_t)n * sizeof *rows);
  run *slabs = malloc((size_t)n * sizeof *slabs), *blocks = malloc((size_t)n * sizeof *blocks);
  int ok = octs && rows && slabs && blocks;
  for (int64_t k = 0; ok && k < n; ++k) {
    for (int d = 0; d < 3; ++d)
      octs[k].lo[d] = octs[k].hi[d] = level->ijk[3 * k + d];
    octs[k].first = k;
  }
  int64_t m = 0;
  if (ok) {
    set_keys(octs, n, 0);
    const int64_t n_rows = merge(octs, n, 0, rows);
    set_keys(rows, n_rows, 1);
    const int64_t n_slabs = merge(rows, n_rows, 1, slabs);
    set_keys(slabs, n_slabs, 2);
    m = merge(slabs, n_slabs, 2, blocks);
    *boxes = calloc((size_t)m, sizeof **boxes);
    ok = *boxes != NULL;
  }
  for (int64_t b = 0; ok && b < m; ++b) {
    level_box *box = &(*boxes)[b];
    for (int d = 0; d < 3; ++d) {
      box->lo[d] = 2 * blocks[b].lo[d];
      box->hi[d] = 2 * blocks[b].hi[d] + 1;
    }
    const int64_t cells = (box->hi[0] - box->lo[0] + 1) * (box->hi[1] - box->lo[1] + 1) * (box->hi[2] - box->lo[2] + 1);
    if (n_variables > 0 && !(box->values = malloc((size_t)(n_variables * cells) * sizeof *box->values)))
      ok = 0;
    else if (n_variables > 0)
      fill(level, n_variables, &blocks[b], slabs, rows, octs, box);
  }
  *n_boxes = m;
  free(octs);
  free(rows);
  free(slabs);
  free(blocks);
  return ok ? 0 : read_fail_memory(e, "the AMR boxes", (double)n * 8.0 * n_variables * 8.0);
}
