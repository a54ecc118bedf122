/* The threads of the particle code: one parallel loop over tasks, the only construct the
 * tree, the kNN search and the density need. threads.c is the one file that uses OpenMP;
 * without it the tasks run in order on the calling thread. Internal to core/src/particles. */
#ifndef PHEW_PARTICLES_THREADS_H
#define PHEW_PARTICLES_THREADS_H

#include <stdint.h>

/* One task: its number and the number of the thread running it (0 .. n_threads - 1, for
 * per-thread scratch space). A task writes only its own outputs. */
typedef void (*particle_task_fn)(void *context, int thread, int64_t task);

/* Runs tasks 0 .. n_tasks - 1 on at most n_threads threads (as particle_threads resolved
 * it, >= 1), handed out dynamically; returns when all are done. Which thread runs which task
 * is not fixed: the tasks' outputs must not depend on it. */
void particle_parallel(int n_threads, int64_t n_tasks, particle_task_fn fn, void *context);

#endif
