/* Threads (threads.h): the only file that uses OpenMP. */
#include "threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int threads_resolve(int n_threads)
{
  if (n_threads > 0)
    return n_threads;
#ifdef _OPENMP
  const int n = omp_get_max_threads();
  return n > 0 ? n : 1;
#else
  return 1;
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
