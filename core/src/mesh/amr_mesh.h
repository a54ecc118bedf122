/* The leaf cells of a distributed AMR hierarchy, as the PHEW stages see them.
 *
 * Local cells are the cells of this rank's blocks (covered ones included: they are never
 * active), block after block, then ghost cells: leaf cells of other ranks' blocks that touch
 * a local leaf. Each own block keeps a padded map, its box grown by one cell on every side
 * on its own level, giving per position the local index of the leaf cell there at that level
 * or a coarser one, AMR_REFINED where the position is covered by finer cells, or AMR_OUTSIDE
 * beyond a non-periodic edge. Neighbours on the same or coarser levels come straight from
 * the 26 stencil entries of the map; finer neighbours are found by descending into refined
 * entries (only at the coarse side of level boundaries). RAMSES itself stores no adjacency;
 * neither does this: a few bytes per cell for the maps, none per neighbour. */
#ifndef PHEW_AMR_MESH_H
#define PHEW_AMR_MESH_H

#include "mesh.h"
#include "id_map.h"

enum { AMR_OUTSIDE = -1, AMR_REFINED = -2, AMR_FAILED = -3 };
#define AMR_MAX_LEVELS 54 /* level 53 has 2^53 cells per axis at least: coordinates stay exact */

/* Which block holds a cell of a level: a hash of tiles of 2^shift cells per axis. */
typedef struct amr_tile_slot {
  int64_t tile[3];
  int32_t level; /* -1: empty slot */
  int32_t unused;
  int64_t head; /* first entry */
} amr_tile_slot;

typedef struct amr_tiles {
  int shift[AMR_MAX_LEVELS];
  amr_tile_slot *slots;
  uint64_t mask;
  int64_t *entry_block, *entry_next;
  int64_t n_entries, capacity;
} amr_tiles;

struct amr_mesh {
  const phew_amr *desc;
  int rank;
  int n_levels;
  int64_t level_dims[AMR_MAX_LEVELS][3];
  int64_t level_offset[AMR_MAX_LEVELS]; /* global id of the level's cell (0, 0, 0) */
  amr_tiles tiles;
  int64_t *first_cell; /* per block: local index of its first cell if this rank owns it, else -1 */
  int64_t n_own_blocks;
  int64_t *own_block;   /* this rank's blocks, in list order */
  int64_t *map_first;   /* per own block: first entry of its padded map */
  unsigned char *plain; /* per own block: no covered cell, so that every cell not on its
                           faces has its 26 neighbours inside the block, on its level */
  int64_t *map;
  int64_t n_own_cells; /* cells of this rank's blocks, covered ones included */
  int64_t n_leaves;    /* leaf cells among them */
  int64_t n_ghosts, ghost_capacity;
  int64_t *ghost_id; /* ghost k is local cell n_own_cells + k */
  int32_t *ghost_owner;
  id_map ghost_index;           /* ghost id -> k */
  int64_t hint[AMR_MAX_LEVELS]; /* while building: the last block found on each level */
};

/* Collective: checks the description (the same on every rank, ratio-2 nesting, tiling) and
 * builds this rank's maps and ghost cells. */
phew_status amr_mesh_init(amr_mesh *a, const phew_amr *desc, comm *c, call_result *result);
void amr_mesh_free(amr_mesh *a);

/* Block lookup (amr_tiles.c). */
phew_status amr_tiles_build(amr_tiles *t, const phew_amr *desc, int n_levels);
void amr_tiles_free(amr_tiles *t);
/* The block of this level holding cell c (level coordinates), or -1. */
int64_t amr_tiles_find(const amr_tiles *t, const phew_amr *desc, int level, const int64_t c[3]);
/* Calls visit for each block of this level overlapping the box [lo, lo + dims), once each
 * (stamp: per-block scratch, set to token for visited blocks). Stops at a nonzero return. */
int amr_tiles_visit(const amr_tiles *t, const phew_amr *desc, int level, const int64_t lo[3], const int64_t dims[3],
                    int64_t *stamp, int64_t token, int (*visit)(void *context, int64_t block), void *context);

/* A cursor over the local cells in increasing order, which knows the block and position of
 * the current cell, and lists its neighbours. */
typedef struct amr_cursor {
  const amr_mesh *a;
  int64_t own;                 /* own block of the current cell */
  const phew_amr_block *block; /* that block */
  int64_t cell;                /* the current cell */
  int64_t xyz[3];              /* its position in that block */
  const int64_t *entry;        /* its map entry */
  int64_t stride[2];           /* of the padded map along y and z */
  int64_t stencil[26];         /* offsets of the 26 neighbouring entries */
  int64_t *list;               /* neighbours of the current cell */
  int64_t n, capacity;
  int create; /* while building: new ghost cells are added (else they must exist) */
  int failed;
} amr_cursor;

void amr_cursor_init(amr_cursor *c, const amr_mesh *a);
void amr_cursor_free(amr_cursor *c);
/* Moves to own cell i (i >= the previous one); 1 if it is a leaf. */
int amr_cursor_leaf(amr_cursor *c, int64_t i);
/* Offsets, in a block's own cell array, of the 27 cells around a cell (self at 13), in the
 * grid's stencil order: inside a block the index order is the global id order. */
static inline void amr_block_stencil(const phew_amr_block *k, int64_t off[27])
{
  int n = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        off[n++] = dx + k->dims[0] * (dy + k->dims[1] * dz);
}

/* Moves to cell (x, y, z) of own block o. */
void amr_cursor_at(amr_cursor *c, int64_t o, int64_t x, int64_t y, int64_t z);
/* Kernels read the map themselves: entries c->entry[c->stencil[k]] >= 0 are neighbours
 * (same or coarser level); where one is AMR_REFINED, this lists the finer neighbours behind
 * all refined entries in c->list (count returned, -1 if out of memory). */
int64_t amr_cursor_finer(amr_cursor *c);
int64_t amr_cursor_global_id(const amr_cursor *c);
/* Centre of the current cell in finest-level cells, as on a grid of the finest level (its
 * cell i is at i): ((2i + 1) * 2^(finest - level) - 1) / 2 for cell index i on its level,
 * exact multiples of 1/2, so that displacements and moments are exact as on a grid. */
void amr_cursor_coord(const amr_cursor *c, double coord[3]);
/* Global id of any local cell (own or ghost). */
int64_t amr_global_id(const amr_mesh *a, int64_t cell);
/* Local index of the own leaf cell with this global id, or -1 (for the ghost plan). */
int64_t amr_cell_of_id(const void *amr, int64_t global_id);

#endif
