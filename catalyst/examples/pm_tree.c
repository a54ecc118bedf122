#include "pm_tree.h"

#include "pm_csv.h"

#include <math.h>
#include <phew/phew.h>
#include <stdlib.h>
#include <string.h>

void pm_tree_init(pm_tree *t, const char *output, const char *name)
{
  memset(t, 0, sizeof *t);
  t->output = output;
  t->name = name;
}

static void drop_step(pm_tree *t)
{
  free(t->id);
  free(t->label);
  free(t->mass);
  t->id = t->label = NULL;
  t->mass = NULL;
  t->n = 0;
}

/* Rank 0: the links as NAME_links_STEP.csv, and appended to NAME_tree.csv. */
static int write_links(pm_tree *t, const phew_link_result *r, int step, double time, double previous)
{
  char path[4096], prefix[128];
  int n_columns = 0;
  const phew_column *columns = phew_link_columns(&n_columns);
  snprintf(path, sizeof path, "%s/%s_links_%06d.csv", t->output, t->name, step);
  FILE *f = fopen(path, "w");
  if (!t->whole && t->steps == 0) {
    snprintf(path, sizeof path, "%s/%s_tree.csv", t->output, t->name);
    if ((t->whole = fopen(path, "w")) != NULL)
      pm_csv_header(t->whole, "TimeStep,Step,Time,PreviousTime,", columns, n_columns);
  }
  if (!f || !t->whole) {
    if (f)
      fclose(f);
    return -1;
  }
  pm_csv_header(f, "TimeStep,Step,Time,PreviousTime,", columns, n_columns);
  snprintf(prefix, sizeof prefix, "%d,%lld,%.17g,%.17g,", step, (long long)t->steps, time, previous);
  for (int64_t k = 0; k < r->n_links; ++k) {
    pm_csv_row(f, prefix, columns, n_columns, &r->links[k]);
    pm_csv_row(t->whole, prefix, columns, n_columns, &r->links[k]);
  }
  fflush(t->whole);
  return fclose(f) == 0 ? 0 : -1;
}

int pm_tree_step(pm_tree *t, MPI_Comm comm, int step, double time, int64_t n, int64_t *id, int64_t *label, double *mass)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  const phew_step_labels earlier = {t->n, t->id, t->label, t->mass, NULL}, later = {n, id, label, mass, NULL};
  phew_link_result r;
  memset(&r, 0, sizeof r);
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &comm;
  const phew_status status = phew_link_steps(&context, &earlier, &later, &r);
  int written = status != PHEW_OK || rank != 0 || write_links(t, &r, step, time, t->steps ? t->time : NAN) == 0;
  MPI_Bcast(&written, 1, MPI_INT, 0, comm);
  if (rank == 0 && status != PHEW_OK)
    fprintf(stderr, "phew_pm: the %s merger tree at step %d failed: %s\n", t->name, step, context.message);
  else if (rank == 0 && !written)
    fprintf(stderr, "phew_pm: cannot write the %s merger tree of step %d in %s\n", t->name, step, t->output);
  phew_link_result_free(&r);
  drop_step(t);
  t->n = n;
  t->id = id;
  t->label = label;
  t->mass = mass;
  t->time = time;
  t->steps++;
  return status == PHEW_OK && written ? 0 : -1;
}

void pm_tree_free(pm_tree *t)
{
  drop_step(t);
  if (t->whole)
    fclose(t->whole);
  t->whole = NULL;
}
