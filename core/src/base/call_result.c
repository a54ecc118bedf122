/* The report of a call (base.h: call_result). */
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void call_result_start(call_result *r)
{
  memset(r, 0, sizeof *r);
  r->stats.n_ranks = 1;
  r->density_threshold_used = r->saddle_threshold_used = r->mean_density = r->linking_length_used = NAN;
}

void call_result_free(call_result *r)
{
  if (!r)
    return;
  free(r->clumps);
  free(r->haloes);
  free(r->nodes);
  free(r->groups);
  free(r->links);
  r->clumps = r->haloes = NULL;
  r->nodes = NULL;
  r->groups = NULL;
  r->links = NULL;
  r->n_clumps = r->n_haloes = r->n_nodes = r->n_groups = r->n_links = 0;
}

void call_result_report(const call_result *r, phew_status status, phew_context *context)
{
  if (!context)
    return;
  if (status == PHEW_OK)
    context->message[0] = '\0';
  else if (r->message[0] != '\0')
    snprintf(context->message, sizeof context->message, "%s", r->message);
  else
    snprintf(context->message, sizeof context->message, "%s", phew_status_string(status));
}

phew_status call_refused(phew_context *context, const char *function)
{
  if (context)
    snprintf(context->message, sizeof context->message, "%s: the context and the result must not be NULL", function);
  return PHEW_ERROR_ARGUMENT;
}
