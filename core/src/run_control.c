/* Progress reports and cancel requests for the caller (phew_input.progress and .cancel):
 * at every stage boundary, where the ranks agree to stop, and inside long loops, where one
 * rank may stop at once. */
#include "internal.h"

phew_status run_control_stage(run_control *rc, const comm *c, const char *stage, double from, double to,
                              phew_result *result)
{
  rc->stage = stage;
  rc->from = from;
  rc->to = to;
  const phew_input *in = rc->in;
  if (in && in->progress)
    in->progress(from, stage, in->progress_data);
  if (in && in->cancel && !rc->stopped)
    rc->stopped = in->cancel(in->cancel_data) != 0;
  return comm_agree(c, rc->stopped ? phew_fail(result, PHEW_CANCELLED, "stopped on request") : PHEW_OK, result);
}

int run_control_tick(run_control *rc, int64_t done, int64_t total)
{
  if (!rc || !rc->in)
    return 0;
  const phew_input *in = rc->in;
  if (in->progress && total > 0)
    in->progress(rc->from + (rc->to - rc->from) * (double)done / (double)total, rc->stage, in->progress_data);
  if (in->cancel && !rc->stopped)
    rc->stopped = in->cancel(in->cancel_data) != 0;
  return rc->stopped;
}
