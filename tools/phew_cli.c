/* phew: the command-line clump finder on a raw density cube.
 *
 *   phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T
 *        [--relevance R] [--saddle S] [--mass-threshold M] [--periodic]
 *        [--spacing DX DY DZ] [--origin OX OY OZ] --output PREFIX [--verbose]
 *
 * Input: raw little-endian cube, x fastest. Output: PREFIX-patch.raw, PREFIX-clump.raw,
 * PREFIX-halo.raw (int64 little-endian, same layout, -1 = none), PREFIX-clumps.csv,
 * PREFIX-haloes.csv, PREFIX-dendrogram.csv. Every file is written under a temporary name
 * and renamed at the end, so a failed run leaves nothing half-written behind.
 *
 * Under mpirun (when built with MPI) the same command runs distributed: each rank reads and
 * labels its block of the cube (phew_grid_decompose), writes its cells of the label files,
 * and rank 0 writes the tables. Every failure is agreed by all ranks (all_ok), so all of them
 * exit with status 1, rank 0 prints the one message, and nothing is left behind. */
#include "block_io.h"
#include "cli_procs.h"
#include "csv_output.h"
#include "phew/phew.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int parse_double(const char *text, double *value)
{
  char *end = NULL;
  errno = 0;
  *value = strtod(text, &end);
  return errno == 0 && end != text && *end == '\0' && isfinite(*value);
}

static int parse_int64(const char *text, int64_t *value)
{
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  *value = v;
  return errno == 0 && end != text && *end == '\0';
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
      for (int d = 0; d < 3; ++d)
        if (!parse_int64(argv[++i], &o->dims[d]) || o->dims[d] < 1) {
          fail("--dims needs three positive integers (got '%s')", argv[i]);
          return 1;
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
      if (!parse_double(argv[++i], &v)) {
        fail("%s needs a finite number (got '%s')", a, argv[i]);
        return 1;
      }
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
        if (!parse_double(argv[++i], &target[d])) {
          fail("%s needs three finite numbers (got '%s')", a, argv[i]);
          return 1;
        }
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

/* Rank 0 checks that the input exists and has the size --dims and --type imply. */
static void check_input(const options *o, size_t n_bytes)
{
  FILE *in = fopen(o->input, "rb");
  if (!in) {
    fail("cannot open input '%s': %s", o->input, strerror(errno));
    return;
  }
  if (fseek(in, 0, SEEK_END) != 0 || ftell(in) < 0) {
    fail("cannot read the size of '%s'", o->input);
  } else {
    const long size = ftell(in);
    if ((size_t)size != n_bytes)
      fail("'%s' has %ld bytes but --dims and --type need %zu", o->input, size, n_bytes);
  }
  fclose(in);
}

enum { N_OUTPUTS = 6 };
static const char *output_suffix[N_OUTPUTS] = {"-patch.raw",  "-clump.raw",   "-halo.raw",
                                               "-clumps.csv", "-haloes.csv", "-dendrogram.csv"};

typedef struct output_files {
  char final_name[N_OUTPUTS][4096];
  char temp_name[N_OUTPUTS][4096];
} output_files;

static int name_outputs(const char *prefix, output_files *f)
{
  for (int k = 0; k < N_OUTPUTS; ++k) {
    int a = snprintf(f->final_name[k], sizeof f->final_name[k], "%s%s", prefix, output_suffix[k]);
    int b = snprintf(f->temp_name[k], sizeof f->temp_name[k], "%s%s.partial", prefix, output_suffix[k]);
    if (a < 0 || b < 0 || (size_t)b >= sizeof f->temp_name[k]) {
      fail("output prefix is too long");
      return -1;
    }
  }
  return 0;
}

static void remove_temporaries(const output_files *f)
{
  for (int k = 0; k < N_OUTPUTS; ++k)
    remove(f->temp_name[k]);
}

/* An empty file (truncating an old one), for the ranks to write their cells into. */
static int create_file(const char *path)
{
  FILE *out = fopen(path, "wb");
  if (!out || fclose(out) != 0) {
    fail("cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

static int write_csv(const char *path, const phew_column *columns, int n_columns, const void *rows,
                     int64_t n_rows, size_t row_size)
{
  FILE *out = fopen(path, "w");
  if (!out) {
    fail("cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  const int ok = csv_write_table(out, columns, n_columns, rows, n_rows, row_size) == 0;
  if (fclose(out) != 0 || !ok) {
    fail("writing '%s' failed", path);
    return -1;
  }
  return 0;
}

/* Rank 0 writes the tables (it holds the whole catalogue) and renames all six files. */
static void write_tables_and_rename(const output_files *f, const phew_result *r)
{
  int nc, nh, nn;
  const phew_column *cc = phew_clump_columns(&nc), *hc = phew_halo_columns(&nh), *dc = phew_node_columns(&nn);
  if (write_csv(f->temp_name[3], cc, nc, r->clumps, r->n_clumps, sizeof *r->clumps) != 0 ||
      write_csv(f->temp_name[4], hc, nh, r->haloes, r->n_haloes, sizeof *r->haloes) != 0 ||
      write_csv(f->temp_name[5], dc, nn, r->nodes, r->n_nodes, sizeof *r->nodes) != 0)
    return;
  for (int k = 0; k < N_OUTPUTS; ++k)
    if (rename(f->temp_name[k], f->final_name[k]) != 0) {
      fail("cannot rename '%s' to '%s': %s", f->temp_name[k], f->final_name[k], strerror(errno));
      for (int done = 0; done < k; ++done) /* all six or none */
        remove(f->final_name[done]);
      return;
    }
}

/* Collective. Returns 0, or -1 on every rank after all_ok has printed why. */
static int write_outputs(const procs *p, const options *o, const phew_grid *g, const phew_labels *labels,
                         const phew_result *r)
{
  output_files f;
  name_outputs(o->output, &f);
  if (!all_ok(p))
    return -1;
  const int64_t *arrays[3] = {labels->peak_patch_id, labels->clump_id, labels->halo_id};
  char message[512];
  if (p->rank == 0) /* the label files exist before any rank writes its cells into them */
    for (int k = 0; k < 3 && create_file(f.temp_name[k]) == 0; ++k)
      ;
  int ok = all_ok(p);
  for (int k = 0; ok && k < 3; ++k) {
    if (block_write_labels(p, f.temp_name[k], g, arrays[k], message, sizeof message) != 0)
      fail("%s", message);
    ok = all_ok(p);
  }
  if (ok && p->rank == 0)
    write_tables_and_rename(&f, r);
  ok = ok && all_ok(p);
  if (!ok && p->rank == 0)
    remove_temporaries(&f);
  return ok ? 0 : -1;
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
  if (p->rank == 0)
    check_input(&o, (size_t)(o.dims[0] * o.dims[1] * o.dims[2]) * value_size);
  if (!all_ok(p))
    return 1;

  /* this rank's block: its active box plus one ghost layer (the whole grid when alone) */
  phew_input in;
  memset(&in, 0, sizeof in);
  const int periodic[3] = {o.periodic, o.periodic, o.periodic};
  if (phew_grid_decompose(&in.grid, o.dims, periodic, p->size, p->rank) != PHEW_OK)
    fail("cannot split the grid over %d rank(s)", p->size);
  if (!all_ok(p))
    return 1;
  for (int d = 0; d < 3; ++d) {
    in.grid.spacing[d] = o.spacing[d];
    in.grid.origin[d] = o.origin[d];
  }
  const size_t n = (size_t)(in.grid.stored_dims[0] * in.grid.stored_dims[1] * in.grid.stored_dims[2]);
  void *density = malloc(n ? n * value_size : 1);
  phew_labels labels = {malloc(n ? n * 8 : 1), malloc(n ? n * 8 : 1), malloc(n ? n * 8 : 1)};
  phew_result result;
  memset(&result, 0, sizeof result);
  int code = 1;
  char message[512];
  if (!density)
    fail("out of memory reading '%s' (%zu bytes)", o.input, n * value_size);
  else if (!labels.peak_patch_id || !labels.clump_id || !labels.halo_id)
    fail("out of memory for the label arrays (%zu cells)", n);
  if (!all_ok(p))
    goto done;
  if (block_read(p, o.input, &in.grid, value_size, density, message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p))
    goto done;

  in.density = density;
  in.density_type = o.type;
  in.mpi_comm = p->mpi_comm;
  const phew_status s = phew_find_clumps(&in, &o.params, &labels, &result);
  if (s != PHEW_OK) /* the same status and message on every rank */
    fail("%s", result.message[0] ? result.message : phew_status_string(s));
  if (!all_ok(p))
    goto done;
  if (o.verbose && p->rank == 0)
    print_summary(&result);
  if (write_outputs(p, &o, &in.grid, &labels, &result) == 0)
    code = 0;
done:
  phew_result_free(&result);
  free(labels.peak_patch_id);
  free(labels.clump_id);
  free(labels.halo_id);
  free(density);
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
