/* Filling ghost cells of structured blocks from the ranks that own them (paper section 3:
 * the "virtual boundaries"). Every rank publishes its active box; each ghost cell asks the
 * rank whose active box holds it; owners answer in the order asked. One round of
 * all-to-all counts plus one exchange of ids builds the plan; values then travel in one
 * exchange per call. Without a communicator the owner is this process (periodic wrap). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PHEW_WITH_MPI
#include <mpi.h>
#endif

typedef struct box {
  int64_t lo[3], n[3];
} box;

static int box_holds(const box *b, const int64_t c[3])
{
  for (int d = 0; d < 3; ++d)
    if (c[d] < b->lo[d] || c[d] >= b->lo[d] + b->n[d])
      return 0;
  return 1;
}

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

phew_status phew_exchange_ghosts(const phew_grid *g, void *values, size_t value_size, void *mpi_comm,
                                 char *message, size_t message_size)
{
  int size = 1;
  if (mpi_comm && !phew_has_mpi()) {
    snprintf(message, message_size, "an MPI communicator was given but libphew was built without MPI support");
    return PHEW_ERROR_MPI;
  }
#ifdef PHEW_WITH_MPI
  MPI_Comm comm = mpi_comm ? *(MPI_Comm *)mpi_comm : MPI_COMM_SELF;
  MPI_Comm_size(comm, &size);
#endif
  box mine;
  for (int d = 0; d < 3; ++d) {
    mine.lo[d] = g->active_offset[d];
    mine.n[d] = g->active_dims[d];
  }
  box *boxes = phew_malloc((size_t)size, sizeof *boxes);
  int *ask_count = calloc((size_t)size, sizeof *ask_count), *answer_count = calloc((size_t)size, sizeof *answer_count);
  int *ask_offset = calloc((size_t)size + 1, sizeof *ask_offset), *answer_offset = calloc((size_t)size + 1, sizeof *answer_offset);
  int64_t *ask_cell = NULL, *ask_id = NULL, *answer_id = NULL;
  unsigned char *send = NULL, *recv = NULL;
  int ok = boxes && ask_count && answer_count && ask_offset && answer_offset;
#ifdef PHEW_WITH_MPI
  if (ok)
    MPI_Allgather(&mine, 6, MPI_INT64_T, boxes, 6, MPI_INT64_T, comm);
#else
  if (ok)
    boxes[0] = mine;
#endif
  /* ghosts: stored cells outside the active box, each asked of its owner */
  const int64_t sx = g->stored_dims[0], sy = g->stored_dims[1], sz = g->stored_dims[2];
  int64_t n_ghost = sx * sy * sz - mine.n[0] * mine.n[1] * mine.n[2];
  if (ok) {
    ask_cell = phew_malloc((size_t)n_ghost, sizeof *ask_cell);
    ask_id = phew_malloc((size_t)n_ghost, sizeof *ask_id);
    ok = ask_cell && ask_id;
  }
  int64_t *owner_of = ok ? phew_malloc((size_t)n_ghost, sizeof *owner_of) : NULL;
  ok = ok && owner_of;
  int64_t k = 0, orphans = 0;
  for (int64_t z = 0; ok && z < sz; ++z)
    for (int64_t y = 0; y < sy; ++y)
      for (int64_t x = 0; x < sx; ++x) {
        const int64_t c[3] = {wrap(g->stored_offset[0] + x, g->global_dims[0]),
                              wrap(g->stored_offset[1] + y, g->global_dims[1]),
                              wrap(g->stored_offset[2] + z, g->global_dims[2])};
        const int64_t raw[3] = {g->stored_offset[0] + x, g->stored_offset[1] + y, g->stored_offset[2] + z};
        if (box_holds(&mine, raw))
          continue;
        int owner = -1;
        for (int r = 0; r < size && owner < 0; ++r)
          if (box_holds(&boxes[r], c))
            owner = r;
        if (owner < 0) {
          ++orphans;
          continue;
        }
        owner_of[k] = owner;
        ask_cell[k] = x + sx * (y + sy * z);
        ask_id[k] = c[0] + g->global_dims[0] * (c[1] + g->global_dims[1] * c[2]);
        ask_count[owner]++;
        ++k;
      }
  int failed = !ok || orphans > 0;
#ifdef PHEW_WITH_MPI
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm); /* errors are collective */
#endif
  phew_status status = PHEW_OK;
  if (failed) {
    snprintf(message, message_size,
             !ok ? "out of memory while planning the ghost exchange"
                 : "some ghost cells lie in no rank's active box: the blocks do not tile the grid");
    status = !ok ? PHEW_ERROR_MEMORY : PHEW_ERROR_ARGUMENT;
    goto done;
  }
  /* order the asks by owner (counting sort keeps each owner's cells in stored order) */
  for (int r = 0; r < size; ++r)
    ask_offset[r + 1] = ask_offset[r] + ask_count[r];
  {
    int64_t *cell = phew_malloc((size_t)k, sizeof *cell), *id = phew_malloc((size_t)k, sizeof *id);
    int *fill = calloc((size_t)size, sizeof *fill);
    for (int64_t i = 0; cell && id && fill && i < k; ++i) {
      const int r = (int)owner_of[i];
      cell[ask_offset[r] + fill[r]] = ask_cell[i];
      id[ask_offset[r] + fill[r]] = ask_id[i];
      fill[r]++;
    }
    free(fill);
    free(ask_cell);
    free(ask_id);
    ask_cell = cell;
    ask_id = id;
  }
#ifdef PHEW_WITH_MPI
  MPI_Alltoall(ask_count, 1, MPI_INT, answer_count, 1, MPI_INT, comm);
#else
  answer_count[0] = ask_count[0];
#endif
  for (int r = 0; r < size; ++r)
    answer_offset[r + 1] = answer_offset[r] + answer_count[r];
  answer_id = phew_malloc((size_t)answer_offset[size], sizeof *answer_id);
  send = phew_malloc((size_t)answer_offset[size], value_size);
  recv = phew_malloc((size_t)k, value_size);
#ifdef PHEW_WITH_MPI
  MPI_Alltoallv(ask_id, ask_count, ask_offset, MPI_INT64_T, answer_id, answer_count, answer_offset, MPI_INT64_T, comm);
#else
  memcpy(answer_id, ask_id, (size_t)k * sizeof *ask_id);
#endif
  /* answer with the values of the asked cells, which are active here */
  for (int64_t i = 0; i < answer_offset[size]; ++i) {
    const int64_t id = answer_id[i];
    const int64_t c[3] = {id % g->global_dims[0], (id / g->global_dims[0]) % g->global_dims[1],
                          id / (g->global_dims[0] * g->global_dims[1])};
    const int64_t local = (c[0] - g->stored_offset[0]) + sx * ((c[1] - g->stored_offset[1]) + sy * (c[2] - g->stored_offset[2]));
    memcpy(send + (size_t)i * value_size, (const unsigned char *)values + (size_t)local * value_size, value_size);
  }
#ifdef PHEW_WITH_MPI
  {
    MPI_Datatype cell_type;
    MPI_Type_contiguous((int)value_size, MPI_BYTE, &cell_type);
    MPI_Type_commit(&cell_type);
    MPI_Alltoallv(send, answer_count, answer_offset, cell_type, recv, ask_count, ask_offset, cell_type, comm);
    MPI_Type_free(&cell_type);
  }
#else
  memcpy(recv, send, (size_t)k * value_size);
#endif
  for (int64_t i = 0; i < k; ++i)
    memcpy((unsigned char *)values + (size_t)ask_cell[i] * value_size, recv + (size_t)i * value_size, value_size);
done:
  free(boxes);
  free(ask_count);
  free(answer_count);
  free(ask_offset);
  free(answer_offset);
  free(ask_cell);
  free(ask_id);
  free(answer_id);
  free(owner_of);
  free(send);
  free(recv);
  return status;
}
