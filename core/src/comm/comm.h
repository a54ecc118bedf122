/* Communication between ranks, the one module that talks MPI (comm.c): a communicator that is
 * the identity on one rank, collectives that every rank calls, sparse exchanges of items
 * addressed to ranks, the plans that fill ghost cells from their owners (ghost_exchange.c),
 * and progress and cancel agreed over the ranks (run_control.c). */
#ifndef PHEW_COMM_H
#define PHEW_COMM_H

#include "base.h"
#include "threads.h"
#include "exact_sum.h"

#ifdef PHEW_WITH_MPI
#include <mpi.h>
#endif

typedef struct comm {
  int rank, size;
#ifdef PHEW_WITH_MPI
  MPI_Comm mpi;
#endif
  int64_t bytes_sent; /* to other ranks, by this rank */
} comm;

/* The communicator of context->mpi_comm (context NULL or no communicator: this process alone). */
phew_status comm_init(comm *c, const phew_context *context, call_result *result);
int64_t comm_sum(const comm *c, int64_t value);
int64_t comm_max(const comm *c, int64_t value);
double comm_max_double(const comm *c, double value);
/* Collective: receive[r] = what rank r put in its send[this rank] (one double per rank). */
void comm_alltoall_double(const comm *c, const double *send, double *receive);
/* Collective: values[k] becomes the sum over ranks, for k < n. */
void comm_sum_array(const comm *c, int64_t *values, int64_t n);
/* Collective: the worst status of all ranks, with its message on every rank. */
phew_status comm_agree(const comm *c, phew_status status, call_result *result);

/* Items of a fixed size addressed to ranks, sent in one sparse exchange. */
typedef struct outbox {
  size_t item_size;
  int size;
  int64_t n, capacity;
  int *dest;
  unsigned char *items;
  int failed; /* an item could not be stored: the exchange fails on every rank */
} outbox;

typedef struct inbox {
  int64_t n;
  size_t item_size;
  int *count, *offset; /* per source rank */
  unsigned char *items;
} inbox;

void outbox_init(outbox *o, const comm *c, size_t item_size);
phew_status outbox_put(outbox *o, int dest, const void *item);
/* Collective: delivers every rank's items (grouped by source rank, each in the order put)
 * and empties the outbox. Fails on every rank if one rank failed to fill its outbox. */
phew_status outbox_send(outbox *o, comm *c, inbox *in);
void outbox_free(outbox *o);
void inbox_free(inbox *in);
/* Collective: the same exchange for items already grouped by destination (counts[r] for r). */
phew_status comm_exchange_grouped(comm *c, const void *items, const int *counts, size_t item_size, inbox *in);
void comm_allgather(const comm *c, const void *item, size_t item_size, void *out);
/* Collective: sums[k] becomes the sum over ranks, the same bits on every rank (PHEW_OK, or
 * PHEW_ERROR_MEMORY on every rank). */
phew_status comm_sum_exact(const comm *c, exact_sum *sums, int n);
/* Collective: every rank's items end up on rank 0, in rank order; counts[r] says how many
 * came from rank r (rank 0 only, free it). */
phew_status comm_gather(comm *c, const void *items, int64_t n, size_t item_size, void **out, int64_t *n_out,
                        int **counts);
/* Collective (gather_all.c): every rank's items on every rank, in rank order; counts (not NULL):
 * how many came from each rank (free it). PHEW_ERROR_MEMORY on every rank if one ran out. */
phew_status comm_gather_all(comm *c, const void *items, int64_t n, size_t item_size, void **out, int64_t *n_out,
                            int **counts);
/* Collective: rank 0's *n items at *items reach every rank: the others get a copy there (and
 * its count in *n; what *items pointed to there is not freed: pass NULL); every rank frees its
 * own. PHEW_ERROR_MEMORY on every rank if one ran out. */
phew_status comm_broadcast(comm *c, void **items, int64_t *n, size_t item_size);
/* Collective: rank 0 sends counts[r] consecutive items to rank r; every rank receives n_out. */
phew_status comm_scatter(comm *c, const void *items, const int *counts, size_t item_size, void *out, int64_t n_out);
/* Collective (sort.c): every rank's n records (item_size bytes each, starting with a key of
 * two uint64, compared as (first, second)) sorted over the ranks: *out holds this rank's share,
 * in key order, and every record of rank r comes before every record of rank r + 1. Equal keys
 * stay on one rank. PHEW_ERROR_MEMORY on every rank if one ran out. */
phew_status comm_sort(comm *c, const void *items, int64_t n, size_t item_size, inbox *out);

/* ---- ghost cells filled from their owners (ghost_exchange.c) ----------------------------- */
/* The ghost cells of this rank: for each, its local index, the rank owning it and its global
 * id (which travel with the requests, so that no rank decodes another rank's layout). */
typedef struct ghost_list {
  int64_t n;
  int64_t *cell;
  int32_t *owner;
  int64_t *global_id;
} ghost_list;

phew_status ghost_list_reserve(ghost_list *g, int64_t n); /* room for n, empty */
void ghost_list_free(ghost_list *g);

/* Local index of the active cell of this rank with this global id, or -1. */
typedef int64_t (*cell_of_id_fn)(const void *context, int64_t global_id);

typedef struct ghost_plan {
  int64_t n_ask;        /* ghost cells of this rank */
  int64_t *ask_cell;    /* their local indices, grouped by owner rank */
  int64_t n_answer;     /* active cells of this rank that other ranks hold as ghosts */
  int64_t *answer_cell; /* their local indices, grouped by the rank that asked */
  int *answer_count;    /* per rank */
} ghost_plan;

/* Collective. Fails on every rank if some ghost names no valid owner, or an owner does not
 * have the cell. */
phew_status ghost_plan_build(ghost_plan *p, comm *c, const ghost_list *ghosts, cell_of_id_fn find, const void *context,
                             char *message, size_t message_size);
/* Collective: answer[i] (value of answer_cell[i]) travels to the ghost copies; ask[i]
 * receives the value of ask_cell[i]. */
phew_status ghost_plan_exchange(const ghost_plan *p, comm *c, const void *answer, void *ask, size_t value_size);
void ghost_plan_free(ghost_plan *p);

/* ---- progress and cancel (run_control.c) ------------------------------------------------- */
/* The caller's progress and cancel callbacks (phew_context). A stage reports where it starts in
 * the run and asks whether to go on, the ranks agreeing; a long loop ticks, which reports how
 * far it is and asks again on this rank alone: it may then leave early, and the ranks agree at
 * the next stage boundary (or the loop's own agreement). NULL controls do nothing. */
typedef struct run_control {
  const phew_context *context;
  const char *stage;
  double from, to;           /* the stage's share of the run */
  double part_from, part_to; /* the share of the loop ticking now (run_control_part) */
  int stopped;               /* the cancel callback said stop (it stays said) */
  int n_threads;             /* threads of the stages' loops (threads_resolve'd; 0 taken as 1) */
} run_control;

/* Collective: reports `stage` at `from`, then PHEW_CANCELLED on every rank if any was asked
 * to stop (with the message), else PHEW_OK. */
phew_status run_control_stage(run_control *rc, const comm *c, const char *stage, double from, double to,
                              call_result *result);
/* Local: `done` of `total` items of the stage (or of its part); 1 when this rank was asked to
 * stop. */
int run_control_tick(run_control *rc, int64_t done, int64_t total);
/* The same for loops over single cells, every RUN_CONTROL_CELLS cells only (a callback per
 * cell would cost more than the cell). */
#define RUN_CONTROL_CELLS 65536
static inline int run_control_tick_cells(run_control *rc, int64_t cell, int64_t total)
{
  return cell % RUN_CONTROL_CELLS == 0 && run_control_tick(rc, cell, total);
}
/* Local: tasks 0 .. n_tasks - 1 on rc's threads (threads_run_waves), ticking rc once per task
 * on the calling thread before the task's wave; 1 when this rank was asked to stop (some
 * tasks did not run). A NULL rc runs them all on one thread. */
int run_control_threads(run_control *rc, int64_t n_tasks, thread_task_fn fn, void *context);
/* The ticks that follow cover the fractions [lo, hi] of the current stage (a stage with several
 * long loops); a stage starts whole. */
void run_control_part(run_control *rc, double lo, double hi);
/* Collective: PHEW_CANCELLED on every rank (with the message) if a tick on any rank was asked
 * to stop, else PHEW_OK; for a stage whose loops cannot wait for the next boundary. */
phew_status run_control_agree(run_control *rc, const comm *c, call_result *result);

#endif
