/* What every part of the core uses: failure messages, the clock and memory. Plain C, no MPI,
 * no threads. The other tools of this folder have headers of their own: exact sums
 * (exact_sum.h), the correctly rounded cube root (cube_root.h), the hash from global ids
 * (id_map.h), threads (threads.h), radix sort (radix_sort.h) and union-find (union_find.h). */
#ifndef PHEW_BASE_H
#define PHEW_BASE_H

#include "phew/phew.h"

#include <stddef.h>
#include <stdint.h>

/* What a public call reports besides its labels, as the core's functions fill it: the failure
 * message, the statistics and every kind of table. The public functions (phew_find_clumps in
 * api/, the others in the module that does their work) hand the message to the caller's
 * phew_context and the tables to the result type of their finder. */
typedef struct call_result {
  int columns; /* phew_column_set flags of this catalogue */
  int64_t n_clumps;
  phew_object *clumps;
  int64_t n_haloes;
  phew_object *haloes;
  int64_t n_nodes;
  phew_node *nodes;
  int64_t n_groups;
  phew_group *groups;
  int64_t n_links;
  phew_link *links;
  phew_stats stats;
  char message[512];             /* why the call failed, empty on success */
  double density_threshold_used; /* phew_clump_result */
  double saddle_threshold_used;
  double mean_density;
  double linking_length_used; /* phew_group_result */
} call_result;

/* Empty: no tables, one rank, the thresholds and the linking length NaN. */
void call_result_start(call_result *r);
/* Frees the tables of r and empties their counts. */
void call_result_free(call_result *r);
/* The call's message into context->message (context may be NULL): r's message after a
 * failure (or the status's name if it has none), empty after a success. */
void call_result_report(const call_result *r, phew_status status, phew_context *context);
/* A public call without its context or its result: PHEW_ERROR_ARGUMENT, with a message when
 * there is a context; the caller empties the result it has (nothing else is touched). */
phew_status call_refused(phew_context *context, const char *function);

/* Writes the message into result->message unless one is there already (the first, most
 * specific message is kept), and returns status. result may be NULL. */
phew_status phew_fail(call_result *result, phew_status status, const char *format, ...);

/* A monotonic clock, in seconds. */
double phew_seconds(void);

/* malloc, calloc and realloc of count items (at least one) of size bytes; NULL if the product
 * overflows. Arrays of several MiB are advised onto transparent huge pages (memory.c). */
void *phew_malloc(size_t count, size_t size);
void *phew_calloc(size_t count, size_t size);
void *phew_realloc(void *p, size_t count, size_t size);
/* *p resized to count items of size bytes (at least one); 0, or -1 without memory (*p then
 * unchanged). Arrays that grow together call it once each. */
int phew_grow(void *p, size_t count, size_t size);

/* Hot loops compiled also for AVX2 and picked at load time where the processor has it (GCC's
 * function multiversioning). The same IEEE operations on every lane and no contraction into
 * fused multiply-adds (AVX2 alone has none), so both versions give the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PHEW_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PHEW_VECTOR_CLONES
#endif

#endif
