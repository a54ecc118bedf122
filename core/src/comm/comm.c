/* The communicator: the one place that talks MPI. Without MPI (or with a NULL
 * communicator) every operation is the identity on one rank, so the serial pipeline is the
 * parallel one with nothing to send.
 *
 * Exchanges are sparse: a rank sends items only to the ranks that need them, and no rank
 * ever holds an N x N matrix (paper section 3.3, footnote 7); the counts travel in one
 * all-to-all of N integers per rank. */
#include "comm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PHEW_WITH_MPI
#include <mpi.h>
#endif

int phew_has_mpi(void)
{
#ifdef PHEW_WITH_MPI
  return 1;
#else
  return 0;
#endif
}

phew_status comm_init(comm *c, const phew_context *context, call_result *result)
{
  memset(c, 0, sizeof *c);
  c->size = 1;
  if (context && context->mpi_comm && !phew_has_mpi())
    return phew_fail(result, PHEW_ERROR_MPI, "an MPI communicator was given but libphew was built without MPI support");
#ifdef PHEW_WITH_MPI
  /* without a communicator MPI may not even be initialised: never call it */
  c->mpi = MPI_COMM_NULL;
  if (context && context->mpi_comm) {
    c->mpi = *(MPI_Comm *)context->mpi_comm;
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
  }
#endif
  return PHEW_OK;
}

#ifdef PHEW_WITH_MPI
static void allreduce(const comm *c, void *value, MPI_Datatype type, MPI_Op op)
{
  if (c->size > 1)
    MPI_Allreduce(MPI_IN_PLACE, value, 1, type, op, c->mpi);
}
#define ALLREDUCE(c, value, type, op) allreduce(c, value, type, op)
#else
#define ALLREDUCE(c, value, type, op) (void)(c)
#endif

int64_t comm_sum(const comm *c, int64_t value)
{
  ALLREDUCE(c, &value, MPI_INT64_T, MPI_SUM);
  return value;
}

int64_t comm_max(const comm *c, int64_t value)
{
  ALLREDUCE(c, &value, MPI_INT64_T, MPI_MAX);
  return value;
}

void comm_sum_array(const comm *c, int64_t *values, int64_t n)
{
#ifdef PHEW_WITH_MPI
  for (int64_t k = 0; c->size > 1 && k < n; k += INT32_MAX) /* counts are ints */
    MPI_Allreduce(MPI_IN_PLACE, values + k, (int)(n - k < INT32_MAX ? n - k : INT32_MAX), MPI_INT64_T, MPI_SUM, c->mpi);
#else
  (void)c;
  (void)values;
  (void)n;
#endif
}

void comm_alltoall_double(const comm *c, const double *send, double *receive)
{
#ifdef PHEW_WITH_MPI
  if (c->size > 1) {
    MPI_Alltoall(send, 1, MPI_DOUBLE, receive, 1, MPI_DOUBLE, c->mpi);
    return;
  }
#else
  (void)c;
#endif
  receive[0] = send[0];
}

double comm_max_double(const comm *c, double value)
{
  ALLREDUCE(c, &value, MPI_DOUBLE, MPI_MAX);
  return value;
}

/* Every rank gets the worst status and the message of the lowest rank that had it. */
phew_status comm_agree(const comm *c, phew_status status, call_result *result)
{
#ifdef PHEW_WITH_MPI
  if (c->size > 1) {
    int mine[2] = {(int)status, c->rank}, worst[2]; /* MAXLOC breaks ties by the lowest rank */
    MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MAXLOC, c->mpi);
    if (worst[0] == PHEW_OK)
      return PHEW_OK;
    MPI_Bcast(result->message, (int)sizeof result->message, MPI_CHAR, worst[1], c->mpi);
    return (phew_status)worst[0];
  }
#else
  (void)c;
  (void)result;
#endif
  return status;
}

void outbox_init(outbox *o, const comm *c, size_t item_size)
{
  memset(o, 0, sizeof *o);
  o->item_size = item_size;
  o->size = c->size;
}

void outbox_free(outbox *o)
{
  free(o->dest);
  free(o->items);
  o->dest = NULL;
  o->items = NULL;
  o->n = o->capacity = 0;
}

phew_status outbox_put(outbox *o, int dest, const void *item)
{
  if (o->n == o->capacity) {
    const int64_t c = o->capacity < 256 ? 256 : 2 * o->capacity;
    int *d = phew_realloc(o->dest, (size_t)c, sizeof *d);
    if (d)
      o->dest = d;
    unsigned char *it = phew_realloc(o->items, (size_t)c, o->item_size);
    if (it)
      o->items = it;
    if (!d || !it) {
      o->failed = 1;
      return PHEW_ERROR_MEMORY;
    }
    o->capacity = c;
  }
  o->dest[o->n] = dest;
  memcpy(o->items + (size_t)o->n * o->item_size, item, o->item_size);
  o->n++;
  return PHEW_OK;
}

/* Items sorted by destination (counting sort keeps each destination's items in order). */
static unsigned char *sorted_by_destination(const outbox *o, int *count, int *offset)
{
  unsigned char *sorted = phew_malloc((size_t)o->n, o->item_size);
  int *fill = calloc((size_t)o->size, sizeof *fill);
  if (!sorted || !fill) {
    free(sorted);
    free(fill);
    return NULL;
  }
  for (int r = 0; r < o->size; ++r)
    count[r] = 0;
  for (int64_t i = 0; i < o->n; ++i)
    count[o->dest[i]]++;
  offset[0] = 0;
  for (int r = 0; r < o->size; ++r)
    offset[r + 1] = offset[r] + count[r];
  for (int64_t i = 0; i < o->n; ++i) {
    const int r = o->dest[i];
    memcpy(sorted + (size_t)(offset[r] + fill[r]++) * o->item_size, o->items + (size_t)i * o->item_size, o->item_size);
  }
  free(fill);
  return sorted;
}

/* The exchange itself: items already grouped by destination, send_count[r] for rank r (a
 * count of -1 everywhere says that this rank failed, and makes the exchange fail everywhere).
 * Every rank reaches the same collectives: a rank that cannot allocate says so in an
 * agreement before each of them. */
static phew_status exchange_grouped(comm *c, const unsigned char *sorted, int *send_count, size_t item_size, inbox *in)
{
  const int size = c->size;
  memset(in, 0, sizeof *in);
  int *send_offset = phew_malloc((size_t)size + 1, sizeof *send_offset);
  in->count = phew_malloc((size_t)size, sizeof *in->count);
  in->offset = phew_malloc((size_t)size + 1, sizeof *in->offset);
  phew_status status = PHEW_ERROR_MEMORY;
  if (comm_max(c, !send_offset || !in->count || !in->offset))
    goto done;
#ifdef PHEW_WITH_MPI
  if (size > 1)
    MPI_Alltoall(send_count, 1, MPI_INT, in->count, 1, MPI_INT, c->mpi);
  else
#endif
    in->count[0] = send_count[0];
  int failed = 0;
  int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    if (in->count[r] < 0 || send_count[r] < 0)
      failed = 1;
    total += in->count[r];
  }
  if (!failed && total <= INT_MAX) {
    send_offset[0] = in->offset[0] = 0;
    for (int r = 0; r < size; ++r) {
      send_offset[r + 1] = send_offset[r] + send_count[r];
      in->offset[r + 1] = in->offset[r] + in->count[r];
    }
    in->n = total;
    in->item_size = item_size;
    in->items = phew_malloc((size_t)(total > 0 ? total : 1), item_size);
  }
  if (comm_max(c, failed || total > INT_MAX || !in->items))
    goto done;
  status = PHEW_OK;
#ifdef PHEW_WITH_MPI
  if (size > 1) {
    MPI_Datatype item;
    MPI_Type_contiguous((int)item_size, MPI_BYTE, &item);
    MPI_Type_commit(&item);
    MPI_Alltoallv(sorted, send_count, send_offset, item, in->items, in->count, in->offset, item, c->mpi);
    MPI_Type_free(&item);
  } else
#endif
    memcpy(in->items, sorted, (size_t)total * item_size);
  for (int r = 0; r < size; ++r)
    if (r != c->rank)
      c->bytes_sent += (int64_t)send_count[r] * (int64_t)item_size;
done:
  free(send_offset);
  return status;
}

phew_status outbox_send(outbox *o, comm *c, inbox *in)
{
  memset(in, 0, sizeof *in);
  int *send_count = phew_malloc((size_t)c->size, sizeof *send_count);
  int *send_offset = phew_malloc((size_t)c->size + 1, sizeof *send_offset);
  unsigned char *sorted = NULL;
  if (!o->failed && send_count && send_offset && o->n <= INT_MAX)
    sorted = sorted_by_destination(o, send_count, send_offset);
  phew_status status = PHEW_ERROR_MEMORY;
  if (!comm_max(c, !send_count)) { /* every rank goes on to the exchange, or none */
    if (!sorted)
      for (int r = 0; r < c->size; ++r)
        send_count[r] = -1;
    status = exchange_grouped(c, sorted, send_count, o->item_size, in);
  }
  free(send_count);
  free(send_offset);
  free(sorted);
  o->n = 0; /* the outbox can be filled again */
  o->failed = 0;
  return status;
}

phew_status comm_exchange_grouped(comm *c, const void *items, const int *counts, size_t item_size, inbox *in)
{
  memset(in, 0, sizeof *in);
  int *send_count = phew_malloc((size_t)c->size, sizeof *send_count);
  if (comm_max(c, !send_count)) { /* every rank returns here, or none */
    free(send_count);
    return PHEW_ERROR_MEMORY;
  }
  memcpy(send_count, counts, (size_t)c->size * sizeof *send_count);
  phew_status s = exchange_grouped(c, items, send_count, item_size, in);
  free(send_count);
  return s;
}

void inbox_free(inbox *in)
{
  free(in->count);
  free(in->offset);
  free(in->items);
  memset(in, 0, sizeof *in);
}

/* Concatenate every rank's items on rank 0 (in rank order), with the number from each rank;
 * other ranks get nothing. */
phew_status comm_gather(comm *c, const void *items, int64_t n, size_t item_size, void **out, int64_t *n_out,
                        int **counts)
{
  *out = NULL;
  *n_out = 0;
  *counts = NULL;
  outbox o;
  outbox_init(&o, c, item_size);
  o.n = o.capacity = n;
  o.items = (unsigned char *)items;
  o.dest = calloc((size_t)(n > 0 ? n : 1), sizeof *o.dest); /* all to rank 0 */
  o.failed = !o.dest;
  inbox in;
  phew_status s = outbox_send(&o, c, &in);
  free(o.dest);
  if (s == PHEW_OK) {
    *out = in.items;
    *n_out = in.n;
    *counts = in.count;
    in.items = NULL;
    in.count = NULL;
  }
  inbox_free(&in);
  return s;
}

/* Rank 0's items go back to their ranks: counts[r] items for rank r, in rank order. */
phew_status comm_scatter(comm *c, const void *items, const int *counts, size_t item_size, void *out, int64_t n_out)
{
  outbox o;
  outbox_init(&o, c, item_size);
  int64_t n = 0;
  if (c->rank == 0)
    for (int r = 0; r < c->size; ++r)
      n += counts[r];
  o.n = o.capacity = n;
  o.items = (unsigned char *)items;
  o.dest = phew_malloc((size_t)(n > 0 ? n : 1), sizeof *o.dest);
  o.failed = !o.dest;
  for (int r = 0, k = 0; o.dest && c->rank == 0 && r < c->size; ++r)
    for (int i = 0; i < counts[r]; ++i)
      o.dest[k++] = r;
  inbox in;
  phew_status s = outbox_send(&o, c, &in);
  free(o.dest);
  if (s == PHEW_OK && in.n != n_out)
    s = PHEW_ERROR_MPI;
  if (s == PHEW_OK)
    memcpy(out, in.items, (size_t)n_out * item_size);
  inbox_free(&in);
  return s;
}

phew_status comm_broadcast(comm *c, void **items, int64_t *n, size_t item_size)
{
#ifdef PHEW_WITH_MPI
  if (c->size > 1) {
    int64_t count = *n;
    MPI_Bcast(&count, 1, MPI_INT64_T, 0, c->mpi);
    if (c->rank != 0) {
      *n = count;
      *items = phew_malloc((size_t)count + 1, item_size);
    }
    if (comm_max(c, c->rank != 0 && *items == NULL))
      return PHEW_ERROR_MEMORY;
    const size_t bytes = (size_t)count * item_size, chunk = (size_t)1 << 30;
    for (size_t at = 0; at < bytes; at += chunk)
      MPI_Bcast((unsigned char *)*items + at, (int)(bytes - at < chunk ? bytes - at : chunk), MPI_BYTE, 0, c->mpi);
    if (c->rank == 0)
      c->bytes_sent += (int64_t)bytes * (c->size - 1);
  }
#else
  (void)c;
  (void)items;
  (void)n;
  (void)item_size;
#endif
  return PHEW_OK;
}

/* Every rank's item, in rank order, on every rank. */
void comm_allgather(const comm *c, const void *item, size_t item_size, void *out)
{
#ifdef PHEW_WITH_MPI
  if (c->size > 1) {
    MPI_Allgather(item, (int)item_size, MPI_BYTE, out, (int)item_size, MPI_BYTE, c->mpi);
    return;
  }
#else
  (void)c;
#endif
  memcpy(out, item, item_size);
}

/* The sums of exact_sum.h over ranks: allgather, then merge in rank order (exact, so the order
 * does not matter). */
phew_status comm_sum_exact(const comm *c, exact_sum *sums, int n)
{
  exact_sum *all = phew_malloc((size_t)c->size * (size_t)n, sizeof *all);
  if (comm_max(c, !all)) { /* every rank stops here, or none */
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  comm_allgather(c, sums, (size_t)n * sizeof *sums, all);
  for (int k = 0; k < n; ++k) {
    exact_sum_clear(&sums[k]);
    for (int r = 0; r < c->size; ++r) /* exact: the order does not matter */
      exact_sum_merge(&sums[k], &all[(size_t)r * (size_t)n + (size_t)k]);
  }
  free(all);
  return PHEW_OK;
}
