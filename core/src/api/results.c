/* The public results' lifetime (phew.h). */
#include "api.h"

#include <stdlib.h>
#include <string.h>

void phew_clump_result_free(phew_clump_result *result)
{
  if (!result)
    return;
  free(result->clumps);
  free(result->haloes);
  free(result->nodes);
  result->clumps = result->haloes = NULL;
  result->nodes = NULL;
  result->n_clumps = result->n_haloes = result->n_nodes = 0;
}

void phew_group_result_free(phew_group_result *result)
{
  if (!result)
    return;
  free(result->groups);
  result->groups = NULL;
  result->n_groups = 0;
}

void phew_link_result_free(phew_link_result *result)
{
  if (!result)
    return;
  free(result->links);
  result->links = NULL;
  result->n_links = 0;
}
