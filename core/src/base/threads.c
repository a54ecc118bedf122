/* Threads (threads.h): the only file that uses OpenMP. */
#include "threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* More threads than cores would only take turns on them, yet each would still get its own
 * scratch space (about 25 KB in the neighbour search and the density: a million threads asked
 * for took gigabytes), so a request is capped at the cores this process may run on (its
 * affinity mask, as OpenMP counts them: under mpirun's binding to a core, one). */
int threads_resolve(int n_threads)
{
#ifdef _OPENMP
  const int cores = omp_get_num_procs() > 0 ? omp_get_num_procs() : 1;
  const int wanted = n_threads > 0 ? n_threads : omp_get_max_threads();
  return wanted < 1 ? 1 : (wanted < cores ? wanted : cores);
#else
  (void)n_threads;
  return 1; /* the tasks run in order on the calling thread */
#endif
}

void threads_run(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context)
{
  if (n_tasks <= 0)
    return;
  if (n_threads > n_tasks)
    n_threads = (int)n_tasks;
#ifdef _OPENMP
  if (n_threads > 1) {
#pragma omp parallel num_threads(n_threads)
    {
      const int thread = omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < n_tasks; ++task)
        fn(context, thread, task);
    }
    return;
  }
#else
  (void)n_threads;
#endif
  for (int64_t task = 0; task < n_tasks; ++task)
    fn(context, 0, task);
}
