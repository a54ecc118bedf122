/* phew_agree: a problem found by some ranks, agreed by all, for callers that check their own
 * input before a collective call (the plugin's adaptors, a simulation's Catalyst adaptor). */
#include "comm.h"

#include <stdio.h>

phew_status phew_agree(phew_context *context, phew_status status)
{
  if (!context)
    return call_refused(context, "phew_agree");
  call_result r;
  call_result_start(&r);
  if (status != PHEW_OK)
    snprintf(r.message, sizeof r.message, "%s", context->message);
  comm c;
  phew_status s = comm_init(&c, context, &r);
  if (s == PHEW_OK)
    s = comm_agree(&c, status, &r);
  call_result_report(&r, s, context);
  return s;
}
