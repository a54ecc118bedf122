/* Threads: one parallel loop over tasks, the only construct the core's threaded parts (the
 * kd-tree, the neighbour search, the density, the halo finders, the radix sort) need.
 * threads.c is the one file that uses OpenMP; without it the tasks run in order on the
 * calling thread, with the same answers. */
#ifndef PHEW_BASE_THREADS_H
#define PHEW_BASE_THREADS_H

#include <stdint.h>

/* Number of threads to run: n_threads > 0 as asked, 0 "all cores", either capped at the cores
 * this process may run on (1 without OpenMP); the one place that asks OpenMP. */
int threads_resolve(int n_threads);
/* Tests only: resolve as if the process could run on `cores` cores (0: as it can), so that
 * answers on 3, 4 or 8 threads can be checked on a machine with fewer. */
void threads_set_core_limit(int cores);

/* One task: its number and the number of the thread running it (0 .. n_threads - 1, for
 * per-thread scratch space). A task writes only its own outputs. */
typedef void (*thread_task_fn)(void *context, int thread, int64_t task);

/* Runs tasks 0 .. n_tasks - 1 on at most n_threads threads (as threads_resolve resolved
 * it, >= 1), handed out dynamically; returns when all are done. Which thread runs which task
 * is not fixed: the tasks' outputs must not depend on it. */
void threads_run(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context);

/* Called on the calling thread before task `task` starts; nonzero stops the run there. */
typedef int (*thread_tick_fn)(void *data, int64_t task);

/* threads_run in waves of a few tasks per thread, with tick(tick_data, task) called for every
 * task of a wave, in order, on the calling thread before the wave runs: callbacks that must
 * run on the caller's thread (progress, cancel) see the same calls for any thread count. A
 * nonzero tick stops before its wave; returns 1 then, else 0. */
int threads_run_waves(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context, thread_tick_fn tick,
                      void *tick_data);

#endif
