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

/* One task: its number and the number of the thread running it (0 .. n_threads - 1, for
 * per-thread scratch space). A task writes only its own outputs. */
typedef void (*thread_task_fn)(void *context, int thread, int64_t task);

/* Runs tasks 0 .. n_tasks - 1 on at most n_threads threads (as threads_resolve resolved
 * it, >= 1), handed out dynamically; returns when all are done. Which thread runs which task
 * is not fixed: the tasks' outputs must not depend on it. */
void threads_run(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context);

#endif
