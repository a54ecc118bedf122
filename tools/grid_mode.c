/* The grid mode: each rank reads and labels its block of the cube (phew_grid_decompose),
 * writes its cells of the label files, and rank 0 writes the tables.
 *
 * Sizes derived from --dims are computed with phew_checked_product: a grid whose cell or byte
 * count does not fit in int64 is refused before anything is allocated or read. */
#define _POSIX_C_SOURCE 200809L /* open, fstat */
#include "grid_mode.h"
#include "progress.h"
#include "block_io.h"
#include "cli_errors.h"
#include "outputs.h"
#include "summary.h"
#include "tables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bytes of the input cube and of one label file. Every rank computes them (the same on
 * all); 0 or -1 after fail when a product overflows int64. */
static int cube_sizes(const options *o, int64_t value_size, int64_t *input_bytes, int64_t *label_bytes)
{
  int64_t cells;
  if (phew_checked_product(o->dims, 3, &cells) != 0) {
    fail("--dims %lld %lld %lld is too large: the number of cells overflows a 64-bit integer", (long long)o->dims[0],
         (long long)o->dims[1], (long long)o->dims[2]);
    return -1;
  }
  const int64_t input[2] = {cells, value_size}, labels[2] = {cells, 8};
  if (phew_checked_product(input, 2, input_bytes) != 0 || phew_checked_product(labels, 2, label_bytes) != 0) {
    fail("--dims %lld %lld %lld is too large: %lld cells of 8 bytes overflow a 64-bit byte count",
         (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2], (long long)cells);
    return -1;
  }
  return 0;
}

/* Rank 0 checks that the input is a readable regular file of the size --dims and --type imply. */
static void check_input(const options *o, int64_t n_bytes)
{
  const int fd = open(o->input, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* O_NONBLOCK: a FIFO must not hang us */
  if (fd < 0) {
    fail("cannot open input '%s': %s", o->input, strerror(errno));
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0)
    fail("cannot read the size of '%s': %s", o->input, strerror(errno));
  else if (S_ISDIR(st.st_mode))
    fail("'%s' is a directory, not a raw file", o->input);
  else if (!S_ISREG(st.st_mode))
    fail("'%s' is not a regular file", o->input);
  else if ((int64_t)st.st_size != n_bytes)
    fail("'%s' has %lld bytes but --dims and --type need %lld", o->input, (long long)st.st_size, (long long)n_bytes);
  close(fd);
}

void grid_mode_check(const procs *p, const options *o)
{
  const int64_t value_size = o->type == PHEW_FLOAT32 ? 4 : 8;
  int64_t input_bytes = 0, label_bytes = 0;
  if (cube_sizes(o, value_size, &input_bytes, &label_bytes) == 0 && p->rank == 0)
    check_input(o, input_bytes);
}

/* Collective. Every rank writes its cells of the label files, rank 0 the tables, then rank 0
 * puts the six files in place. Returns 0, or -1 on every rank after all_ok has printed why. */
static int write_outputs(const procs *p, const options *o, const phew_grid *g, phew_labels *labels,
                         const phew_clump_result *r)
{
  int64_t *const arrays[3] = {labels->peak_patch_id, labels->clump_id, labels->halo_id};
  const char *const paths[3] = {outputs_temporary(OUTPUT_PATCH), outputs_temporary(OUTPUT_CLUMP),
                                outputs_temporary(OUTPUT_HALO)};
  char message[512];
  if (block_write_labels(p, paths, g, arrays, o->labels_int32, message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p))
    return -1;
  return tables_write_and_commit(p, o, r, NULL, 0, NULL, NULL);
}

int grid_mode_run(const procs *p, const options *o)
{
  const size_t value_size = o->type == PHEW_FLOAT32 ? 4 : 8;
  /* this rank's block: its active box plus one ghost layer (the whole grid when alone) */
  phew_input in;
  memset(&in, 0, sizeof in);
  const int periodic[3] = {o->periodic, o->periodic, o->periodic};
  phew_context context = procs_context(p, o->n_threads);
  if (phew_grid_decompose(&context, &in.grid, o->dims, periodic) != PHEW_OK)
    fail("cannot split the grid over %d rank(s)", p->size);
  if (!all_ok(p))
    return 1;
  for (int d = 0; d < 3; ++d) {
    in.grid.spacing[d] = o->spacing[d];
    in.grid.origin[d] = o->origin[d];
  }
  int64_t n = 0;
  if (phew_checked_product(in.grid.stored_dims, 3, &n) != 0)
    fail("this rank's block of the grid has more cells than a 64-bit integer holds");
  void *density = NULL;
  phew_labels labels = {NULL, NULL, NULL, NULL};
  phew_clump_result result;
  memset(&result, 0, sizeof result);
  int code = 1;
  char message[512];
  if (!failed() && (density = allocate(n, (int64_t)value_size, "the density block")) != NULL &&
      (labels.peak_patch_id = allocate(n, 8, "the label arrays")) != NULL &&
      (labels.clump_id = allocate(n, 8, "the label arrays")) != NULL)
    labels.halo_id = allocate(n, 8, "the label arrays");
  if (!all_ok(p))
    goto done;
  if (block_read(p, o->input, &in.grid, value_size, density, message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p))
    goto done;

  in.density = density;
  in.density_type = o->type;
  progress_attach(&context, p, o->verbose);
  const phew_status s = phew_find_clumps(&context, &in, &o->params, &labels, &result);
  progress_done();
  if (s != PHEW_OK) /* the same status and message on every rank */
    fail("%s", context.message);
  if (!all_ok(p))
    goto done;
  if (o->verbose && p->rank == 0)
    print_summary(&result, &o->params, 0);
  if (write_outputs(p, o, &in.grid, &labels, &result) == 0)
    code = 0;
done:
  phew_clump_result_free(&result);
  free(labels.peak_patch_id);
  free(labels.clump_id);
  free(labels.halo_id);
  free(density);
  return code;
}
