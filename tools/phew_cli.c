/* phew: the command-line clump finder on a raw density cube.
 *
 *   phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T
 *        [--relevance R] [--saddle S] [--mass-threshold M] [--periodic]
 *        [--spacing DX DY DZ] [--origin OX OY OZ] --output PREFIX [--verbose]
 *
 * Input: raw little-endian cube, x fastest. Output: PREFIX-patch.raw, PREFIX-clump.raw,
 * PREFIX-halo.raw (int64 little-endian, same layout, -1 = none), PREFIX-clumps.csv,
 * PREFIX-haloes.csv, PREFIX-dendrogram.csv. Before anything is computed the tool checks
 * that it can write them and creates them under temporary names; at the end they replace a
 * previous run's files all or nothing (outputs.c). A failed or killed run leaves the previous
 * files as they were and nothing half-written behind.
 *
 * Under mpirun (when built with MPI) the same command runs distributed: each rank reads and
 * labels its block of the cube (phew_grid_decompose), writes its cells of the label files,
 * and rank 0 writes the tables. Every failure is agreed by all ranks (all_ok), so all of them
 * exit with status 1, rank 0 prints the one message, and nothing is left behind.
 *
 * Sizes derived from --dims are computed with phew_checked_product: a grid whose cell or byte
 * count does not fit in int64 is refused before anything is allocated or read. */
#define _POSIX_C_SOURCE 200809L /* open, fstat */
#include "block_io.h"
#include "cli_procs.h"
#include "csv_output.h"
#include "file_io.h"
#include "outputs.h"
#include "phew/phew.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct options {
  const char *input;
  const char *output;
  int64_t dims[3];
  phew_scalar_type type;
  int have_type, have_dims, have_threshold, periodic, verbose;
  double spacing[3], origin[3];
  phew_params params;
} options;

/* The first failure of this process; printed by all_ok. */
static char error_text[512];

static void fail(const char *format, ...)
{
  if (error_text[0])
    return;
  va_list args;
  va_start(args, format);
  vsnprintf(error_text, sizeof error_text, format, args);
  va_end(args);
}

/* Collective: 1 if no rank has failed so far. Otherwise 0 on every rank, and rank 0 prints
 * the message of the lowest failing rank (one line on stderr). */
static int all_ok(const procs *p)
{
  if (procs_all_ok(p, error_text[0] == '\0', error_text, sizeof error_text))
    return 1;
  if (p->rank == 0)
    fprintf(stderr, "phew: error: %s\n", error_text);
  return 0;
}

static void usage(FILE *out)
{
  fputs("usage: phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T\n"
        "            [--relevance R] [--saddle S] [--mass-threshold M] [--periodic]\n"
        "            [--spacing DX DY DZ] [--origin OX OY OZ] --output PREFIX [--verbose]\n",
        out);
}

/* strtod on the whole text. Returns 1 with *value set, 0 when the text is not a finite
 * number (empty, trailing characters, nan, inf), -1 when it is a number beyond the double
 * range (1e999). Tiny values (denormals, or below them: 0) are accepted: strtod flags them
 * with ERANGE but returns the nearest double, which is what the user wrote. */
static int parse_double(const char *text, double *value)
{
  char *end = NULL;
  errno = 0;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || isnan(v))
    return 0;
  if (isinf(v))
    return errno == ERANGE ? -1 : 0;
  *value = v;
  return 1;
}

/* strtoll on the whole text: 1 with *value set, 0 when not an integer, -1 when beyond int64. */
static int parse_int64(const char *text, int64_t *value)
{
  char *end = NULL;
  errno = 0;
  const long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0')
    return 0;
  if (errno == ERANGE)
    return -1;
  *value = v;
  return 1;
}

/* Parses the numeric value of option a; 0 or -1 after fail. */
static int option_double(const char *a, const char *text, double *value, const char *what)
{
  const int r = parse_double(text, value);
  if (r == 1)
    return 0;
  if (r < 0)
    fail("%s value '%s' is out of range (finite numbers go up to about 1.8e308)", a, text);
  else
    fail("%s needs %s (got '%s')", a, what, text);
  return -1;
}

/* Returns 0 on success, 1 after a failure (fail), 2 for --help. The same on every rank. */
static int parse_options(int argc, char **argv, options *o)
{
  memset(o, 0, sizeof *o);
  phew_params_init(&o->params);
  for (int d = 0; d < 3; ++d)
    o->spacing[d] = 1.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int left = argc - i - 1;
#define NEED(k)                                                                                                   \
  if (left < (k)) {                                                                                               \
    fail("%s needs %d value(s)", a, (k));                                                                        \
    return 1;                                                                                                     \
  }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      return 2;
    } else if (!strcmp(a, "--input")) {
      NEED(1);
      o->input = argv[++i];
    } else if (!strcmp(a, "--output")) {
      NEED(1);
      o->output = argv[++i];
    } else if (!strcmp(a, "--dims")) {
      NEED(3);
      for (int d = 0; d < 3; ++d) {
        const int r = parse_int64(argv[++i], &o->dims[d]);
        if (r < 0) {
          fail("--dims value '%s' is out of range (at most %lld)", argv[i], (long long)INT64_MAX);
          return 1;
        }
        if (r == 0 || o->dims[d] < 1) {
          fail("--dims needs three positive integers (got '%s')", argv[i]);
          return 1;
        }
      }
      o->have_dims = 1;
    } else if (!strcmp(a, "--type")) {
      NEED(1);
      const char *t = argv[++i];
      if (!strcmp(t, "float32"))
        o->type = PHEW_FLOAT32;
      else if (!strcmp(t, "float64"))
        o->type = PHEW_FLOAT64;
      else {
        fail("--type must be float32 or float64 (got '%s')", t);
        return 1;
      }
      o->have_type = 1;
    } else if (!strcmp(a, "--threshold") || !strcmp(a, "--relevance") || !strcmp(a, "--saddle") ||
               !strcmp(a, "--mass-threshold")) {
      NEED(1);
      double v;
      if (option_double(a, argv[++i], &v, "a finite number") != 0)
        return 1;
      if (!strcmp(a, "--threshold")) {
        o->params.density_threshold = v;
        o->have_threshold = 1;
      } else if (!strcmp(a, "--relevance")) {
        o->params.relevance_threshold = v;
      } else if (!strcmp(a, "--saddle")) {
        o->params.saddle_merging = 1;
        o->params.saddle_threshold = v;
      } else {
        o->params.mass_threshold = v;
      }
    } else if (!strcmp(a, "--spacing") || !strcmp(a, "--origin")) {
      NEED(3);
      double *target = !strcmp(a, "--spacing") ? o->spacing : o->origin;
      for (int d = 0; d < 3; ++d)
        if (option_double(a, argv[++i], &target[d], "three finite numbers") != 0)
          return 1;
    } else if (!strcmp(a, "--periodic")) {
      o->periodic = 1;
    } else if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
    } else {
      fail("unknown option '%s' (see phew --help)", a);
      return 1;
    }
#undef NEED
  }
  if (!o->input || !o->output || !o->have_dims || !o->have_type || !o->have_threshold) {
    fail("--input, --output, --dims, --type and --threshold are required (see phew --help)");
    return 1;
  }
  return 0;
}

/* The bytes of the input cube and of one label file. Every rank computes them (the same on
 * all); 0 or -1 after fail when a product overflows int64. */
static int cube_sizes(const options *o, int64_t value_size, int64_t *input_bytes, int64_t *label_bytes)
{
  int64_t cells;
  if (phew_checked_product(o->dims, 3, &cells) != 0) {
    fail("--dims %lld %lld %lld is too large: the number of cells overflows a 64-bit integer",
         (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2]);
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
    fail("'%s' has %lld bytes but --dims and --type need %lld", o->input, (long long)st.st_size,
         (long long)n_bytes);
  close(fd);
}

/* Rank 0 writes one table into its temporary file; 0 or -1 after fail. */
static int write_csv(int k, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size)
{
  const char *path = outputs_temporary(k);
  text_file *out = malloc(sizeof *out);
  if (!out) {
    fail("out of memory writing '%s'", path);
    return -1;
  }
  int err = text_open(out, path);
  if (err == 0) {
    csv_write_table(out, columns, n_columns, rows, n_rows, row_size);
    err = text_close(out);
    if (err)
      fail("writing '%s' failed: %s", path, strerror(err));
  } else {
    fail("cannot write '%s': %s", path, strerror(err));
  }
  free(out);
  return err ? -1 : 0;
}

/* Collective. Every rank writes its cells of the label files, rank 0 the tables, then rank 0
 * puts the six files in place. Returns 0, or -1 on every rank after all_ok has printed why. */
static int write_outputs(const procs *p, const phew_grid *g, const phew_labels *labels, const phew_result *r)
{
  const int64_t *arrays[3] = {labels->peak_patch_id, labels->clump_id, labels->halo_id};
  const int files[3] = {OUTPUT_PATCH, OUTPUT_CLUMP, OUTPUT_HALO};
  char message[512];
  for (int k = 0; k < 3; ++k) {
    if (block_write_labels(p, outputs_temporary(files[k]), g, arrays[k], message, sizeof message) != 0)
      fail("%s", message);
    if (!all_ok(p))
      return -1;
  }
  if (p->rank == 0) {
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(r->columns, &nc), *hc = phew_halo_columns(r->columns, &nh),
                      *dc = phew_node_columns(r->columns, &nn);
    if (write_csv(OUTPUT_CLUMPS_CSV, cc, nc, r->clumps, r->n_clumps, sizeof *r->clumps) == 0 &&
        write_csv(OUTPUT_HALOES_CSV, hc, nh, r->haloes, r->n_haloes, sizeof *r->haloes) == 0 &&
        write_csv(OUTPUT_DENDROGRAM_CSV, dc, nn, r->nodes, r->n_nodes, sizeof *r->nodes) == 0 &&
        outputs_commit(message, sizeof message) != 0)
      fail("%s", message);
  }
  return all_ok(p) ? 0 : -1;
}

static void print_summary(const phew_result *r)
{
  const phew_stats *s = &r->stats;
  double total = 0.0;
  printf("cells %lld, test cells %lld, peaks %lld, saddle pairs %lld\n", (long long)s->n_cells,
         (long long)s->n_test_cells, (long long)s->n_peaks, (long long)s->n_saddle_pairs);
  printf("noise removal: %d level(s), %lld isolated peak(s) discarded, %lld clump(s)\n", s->noise_levels,
         (long long)s->n_noise_discarded, (long long)s->n_clumps_found);
  printf("saddle merging: %d level(s), %lld halo(es)\n", s->saddle_levels, (long long)s->n_haloes_found);
  printf("catalogue (above the mass threshold): %lld clump(s), %lld halo(es), %lld dendrogram node(s)\n",
         (long long)r->n_clumps, (long long)r->n_haloes, (long long)r->n_nodes);
  printf("  %-15s %9s %7s %14s\n", "stage", "seconds", "rounds", "bytes sent");
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k) {
    printf("  %-15s %9.4f %7d %14lld\n", phew_stage_name(k), s->seconds[k], s->iterations[k],
           (long long)s->bytes_sent[k]);
    total += s->seconds[k];
  }
  printf("  %-15s %9.4f s (%.1f million cells/s)\n", "total", total,
         total > 0 ? (double)s->n_cells / total / 1e6 : 0.0);
  printf("ranks %d: per rank at most %lld active peak(s), %lld ghost peak(s), ghost/active %.3g, "
         "%lld saddle-matrix entries; %lld hash collision(s)\n",
         s->n_ranks, (long long)s->max_active_peaks, (long long)s->max_ghost_peaks, s->max_ghost_ratio,
         (long long)s->max_sparse_entries, (long long)s->hash_collisions);
}

/* Allocates n values of size bytes (n checked against int64 overflow); NULL after fail. */
static void *allocate(int64_t n, int64_t size, const char *what)
{
  const int64_t factors[2] = {n, size};
  int64_t bytes;
  if (phew_checked_product(factors, 2, &bytes) != 0 || (uint64_t)bytes > SIZE_MAX) {
    fail("%s: %lld values of %lld bytes do not fit in memory", what, (long long)n, (long long)size);
    return NULL;
  }
  void *data = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!data)
    fail("out of memory for %s (%lld bytes)", what, (long long)bytes);
  return data;
}

/* The run once the outputs are prepared, on every rank: read, find, write. Returns the exit
 * status (the same on every rank). */
static int find_and_write(const procs *p, const options *o, size_t value_size)
{
  /* this rank's block: its active box plus one ghost layer (the whole grid when alone) */
  phew_input in;
  memset(&in, 0, sizeof in);
  const int periodic[3] = {o->periodic, o->periodic, o->periodic};
  if (phew_grid_decompose(&in.grid, o->dims, periodic, p->size, p->rank) != PHEW_OK)
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
  phew_result result;
  memset(&result, 0, sizeof result);
  int code = 1;
  char message[512];
  if (!error_text[0] && (density = allocate(n, (int64_t)value_size, "the density block")) != NULL &&
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
  in.mpi_comm = p->mpi_comm;
  const phew_status s = phew_find_clumps(&in, &o->params, &labels, &result);
  if (s != PHEW_OK) /* the same status and message on every rank */
    fail("%s", result.message[0] ? result.message : phew_status_string(s));
  if (!all_ok(p))
    goto done;
  if (o->verbose && p->rank == 0)
    print_summary(&result);
  if (write_outputs(p, &in.grid, &labels, &result) == 0)
    code = 0;
done:
  phew_result_free(&result);
  free(labels.peak_patch_id);
  free(labels.clump_id);
  free(labels.halo_id);
  free(density);
  return code;
}

/* The whole run on every rank; returns the exit status (the same on every rank). */
static int run(const procs *p, int argc, char **argv)
{
  options o;
  const int parsed = parse_options(argc, argv, &o);
  if (parsed == 2) {
    if (p->rank == 0)
      usage(stdout);
    return 0;
  }
  if (!all_ok(p))
    return 1;
  const size_t value_size = o.type == PHEW_FLOAT32 ? 4 : 8;
  int64_t input_bytes = 0, label_bytes = 0;
  if (cube_sizes(&o, (int64_t)value_size, &input_bytes, &label_bytes) == 0 && p->rank == 0)
    check_input(&o, input_bytes);
  if (!all_ok(p))
    return 1;

  /* the outputs, before anything is computed: the names on every rank (for the signal
   * handlers and the label writes), the checks and the temporary files on rank 0 */
  char message[512];
  if (outputs_init(o.output, message, sizeof message) != 0)
    fail("%s", message);
  else if (p->rank == 0 && outputs_prepare(message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p)) {
    outputs_done();
    return 1;
  }
  const int code = find_and_write(p, &o, value_size);
  if (code != 0 && p->rank == 0)
    outputs_discard();
  outputs_done();
  return code;
}

int main(int argc, char **argv)
{
  procs p;
  procs_init(&p, &argc, &argv);
  const int code = run(&p, argc, argv);
  procs_finalize();
  return code;
}
