/* Threads (threads.h): the only file that uses OpenMP. */
#include "threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* More threads than cores would only take turns on them, yet each would still get its own
 * scratch space (about 25 KB in the neighbour search and the density: a million threads asked
 * for took gigabytes), so a request is capped at the cores this process may run on (its
 * affinity mask, as OpenMP counts them: under mpirun's binding to a core, one). */
static int core_limit = 0; /* threads_set_core_limit: 0, the process's own cores */

void threads_set_core_limit(int cores) { core_limit = cores > 0 ? cores : 0; }

int threads_resolve(int n_threads)
{
#ifdef _OPENMP
  const int cores = core_limit > 0 ? core_limit : (omp_get_num_procs() > 0 ? omp_get_num_procs() : 1);
  const int wanted = n_threads > 0 ? n_threads : omp_get_max_threads();
  return wanted < 1 ? 1 : (wanted < cores ? wanted : cores);
#else
  (void)n_threads;
  return 1; /* the tasks run in order on the calling thread */
#endif
}

/* Tasks first .. first + n_tasks - 1. */
static void wave_run(int n_threads, int64_t first, int64_t n_tasks, thread_task_fn fn, void *context)
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
      for (int64_t task = first; task < first + n_tasks; ++task)
        fn(context, thread, task);
    }
    return;
  }
#else
  (void)n_threads;
#endif
  for (int64_t task = first; task < first + n_tasks; ++task)
    fn(context, 0, task);
}

void threads_run(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context)
{
  wave_run(n_threads, 0, n_tasks, fn, context);
}

/* Tasks per thread in a wave: enough that the threads rarely wait for the slowest task of a
 * wave, few enough that a stop request is heard soon. */
enum { WAVE_TASKS_PER_THREAD = 4 };

int threads_run_waves(int n_threads, int64_t n_tasks, thread_task_fn fn, void *context, thread_tick_fn tick,
                      void *tick_data)
{
  const int64_t wave = (int64_t)WAVE_TASKS_PER_THREAD * (n_threads > 1 ? n_threads : 1);
  for (int64_t first = 0; first < n_tasks; first += wave) {
    const int64_t n = n_tasks - first < wave ? n_tasks - first : wave;
    for (int64_t task = first; task < first + n; ++task)
      if (tick && tick(tick_data, task))
        return 1;
    wave_run(n_threads, first, n, fn, context);
  }
  return 0;
}
