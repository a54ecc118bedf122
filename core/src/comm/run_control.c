/* Progress reports and cancel requests for the caller (phew_context.progress and .cancel):
 * at every stage boundary, where the ranks agree to stop, and inside long loops, where one
 * rank may stop at once. */
#include "comm.h"

phew_status run_control_stage(run_control *rc, const comm *c, const char *stage, double from, double to,
                              call_result *result)
{
  rc->stage = stage;
  rc->from = rc->part_from = from;
  rc->to = rc->part_to = to;
  const phew_context *ctx = rc->context;
  if (ctx && ctx->progress)
    ctx->progress(from, stage, ctx->progress_data);
  if (ctx && ctx->cancel && !rc->stopped)
    rc->stopped = ctx->cancel(ctx->cancel_data) != 0;
  return run_control_agree(rc, c, result);
}

phew_status run_control_agree(run_control *rc, const comm *c, call_result *result)
{
  return comm_agree(c, rc && rc->stopped ? phew_fail(result, PHEW_CANCELLED, "stopped on request") : PHEW_OK, result);
}

void run_control_part(run_control *rc, double lo, double hi)
{
  if (!rc)
    return;
  rc->part_from = rc->from + (rc->to - rc->from) * lo;
  rc->part_to = rc->from + (rc->to - rc->from) * hi;
}

int run_control_tick(run_control *rc, int64_t done, int64_t total)
{
  if (!rc || !rc->context)
    return 0;
  const phew_context *ctx = rc->context;
  if (ctx->progress && total > 0)
    ctx->progress(rc->part_from + (rc->part_to - rc->part_from) * (double)done / (double)total, rc->stage,
                  ctx->progress_data);
  if (ctx->cancel && !rc->stopped)
    rc->stopped = ctx->cancel(ctx->cancel_data) != 0;
  return rc->stopped;
}

typedef struct task_ticks {
  run_control *rc;
  int64_t n_tasks;
} task_ticks;

static int tick_task(void *data, int64_t task)
{
  const task_ticks *t = data;
  return run_control_tick(t->rc, task, t->n_tasks);
}

int run_control_threads(run_control *rc, int64_t n_tasks, thread_task_fn fn, void *context)
{
  task_ticks t = {rc, n_tasks};
  return threads_run_waves(rc && rc->n_threads > 1 ? rc->n_threads : 1, n_tasks, fn, context, tick_task, &t);
}
