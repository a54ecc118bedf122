/* phew link (link_mode.h). */
#include "link_mode.h"
#include "cli_errors.h"
#include "csv_output.h"
#include "json_writer.h"
#include "outputs.h"
#include "phew/phew_readers.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct link_options {
  const char *output, *hdf5;
  int verbose;
  phew_track_params track;
  int n_inputs;
  char **inputs;
} link_options;

/* A row of the tree: the later step's index and the link. */
typedef struct tree_row {
  int64_t step;
  phew_link link;
} tree_row;

/* Rank 0's tree, and counts for the record. */
typedef struct tree {
  tree_row *rows;
  int64_t n, capacity;
  int64_t n_orphan_rows, n_refound;
} tree;

static void link_usage(FILE *out)
{
  fputs("usage: phew link --output PREFIX [--max-orphan-steps K] [--hdf5 FILE] [--verbose]\n"
        "                 CATALOGUE0.hdf5 CATALOGUE1.hdf5 [...]\n"
        "\n"
        "Links the structures of runs' HDF5 catalogues (written with --hdf5 by runs with the physics\n"
        "of structures), given in time order: by shared bound particles and by each structure's\n"
        "most-bound particles; a structure that merged or vanished is followed as an orphan for at\n"
        "most K steps (default 3) until it is found again. Writes PREFIX-tree.csv (Step: the later\n"
        "step, counted from 0 in the order given), PREFIX-tree-run.json and with --hdf5 the table\n"
        "as the group MergerTree. docs/merger-trees.md defines the columns.\n",
        out);
}

/* 0, 2 for --help, or 1 after fail. */
static int parse(int argc, char **argv, link_options *o)
{
  memset(o, 0, sizeof *o);
  phew_track_params_init(&o->track);
  o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
  if (!o->inputs) {
    fail("out of memory for the arguments");
    return 1;
  }
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int valued = !strcmp(a, "--output") || !strcmp(a, "--hdf5") || !strcmp(a, "--max-orphan-steps");
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 2;
    if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
    } else if (valued && i + 1 >= argc) {
      fail("%s needs a value", a);
      return 1;
    } else if (!strcmp(a, "--output")) {
      o->output = argv[++i];
    } else if (!strcmp(a, "--hdf5")) {
      o->hdf5 = argv[++i];
    } else if (!strcmp(a, "--max-orphan-steps")) {
      char *end = NULL;
      const long long k = strtoll(argv[++i], &end, 10);
      if (end == argv[i] || *end || k < 0 || k > 1000000) {
        fail("--max-orphan-steps needs an integer in 0 .. 1000000 (got '%s')", argv[i]);
        return 1;
      }
      o->track.max_orphan_steps = k;
    } else if (a[0] == '-' && a[1] == '-') {
      fail("phew link: unknown option '%s' (phew link --help lists them)", a);
      return 1;
    } else {
      o->inputs[o->n_inputs++] = argv[i];
    }
  }
  if (!o->output)
    fail("phew link needs --output PREFIX");
  else if (o->n_inputs < 2)
    fail("phew link needs at least two catalogues, in time order (got %d)", o->n_inputs);
  return failed() ? 1 : 0;
}

/* Rank 0: the step's links appended to the tree; 0 or -1 after fail. */
static int append(tree *t, int64_t step, const phew_link_result *links)
{
  if (t->n + links->n_links > t->capacity) {
    const int64_t capacity = 2 * (t->n + links->n_links) + 16;
    tree_row *rows = realloc(t->rows, (size_t)capacity * sizeof *rows);
    if (!rows) {
      fail("out of memory for the merger tree (%lld links)", (long long)(t->n + links->n_links));
      return -1;
    }
    t->rows = rows;
    t->capacity = capacity;
  }
  for (int64_t k = 0; k < links->n_links; ++k) {
    t->rows[t->n++] = (tree_row){step, links->links[k]};
    t->n_orphan_rows += links->links[k].kind == PHEW_LINK_ORPHAN;
    t->n_refound += links->links[k].kind == PHEW_LINK_REFOUND;
  }
  return 0;
}

/* Collective: reads catalogue `step`; 0, or -1 on every rank after the failure was reported. */
static int read_step(const procs *p, phew_context *context, const link_options *o, int step, phew_catalogue_step *out)
{
  if (phew_read_catalogue_step(context, o->inputs[step], step, out) != PHEW_OK)
    fail("%s", context->message); /* the same on every rank */
  return all_ok(p) ? 0 : -1;
}

/* Collective: the links of every step to the next, into t (rank 0); 0, or -1 on every rank
 * after the failure was reported (all_ok). */
static int link_all(const procs *p, const link_options *o, tree *t)
{
  phew_context context = procs_context(p, 1);
  phew_catalogue_step earlier, later;
  memset(&later, 0, sizeof later);
  if (read_step(p, &context, o, 0, &earlier) != 0)
    return -1;
  phew_tracer_set tracers = earlier.tracers; /* the step's own, then the orphans carried to it */
  memset(&earlier.tracers, 0, sizeof earlier.tracers);
  int status = 0;
  for (int step = 1; status == 0 && step < o->n_inputs; ++step) {
    status = read_step(p, &context, o, step, &later);
    phew_link_result links;
    phew_tracer_set orphans, joined;
    memset(&links, 0, sizeof links);
    memset(&orphans, 0, sizeof orphans);
    memset(&joined, 0, sizeof joined);
    const phew_step_labels a = {earlier.n, earlier.id, earlier.label, NULL, NULL},
                           b = {later.n, later.id, later.label, NULL, NULL};
    if (status == 0 && phew_link_tracked(&context, &a, &b, &tracers, &o->track, &links, &orphans) != PHEW_OK)
      fail("linking step %d to step %d: %s", step - 1, step, context.message); /* the same on every rank */
    if (status == 0 && p->rank == 0 && !failed() && append(t, step, &links) == 0 &&
        phew_tracer_set_join(&later.tracers, &orphans, &joined) != PHEW_OK)
      fail("out of memory for the tracers of step %d", step);
    status = status == 0 && all_ok(p) ? 0 : -1;
    if (status == 0 && o->verbose && p->rank == 0)
      printf("link: step %d: %lld links, %lld orphans carried on\n", step, (long long)links.n_links,
             (long long)orphans.n);
    phew_link_result_free(&links);
    phew_tracer_set_free(&orphans);
    phew_tracer_set_free(&tracers);
    tracers = joined;
    phew_catalogue_step_free(&earlier);
    earlier = later;
    memset(&later, 0, sizeof later);
  }
  phew_tracer_set_free(&tracers);
  phew_catalogue_step_free(&earlier);
  phew_catalogue_step_free(&later);
  return status;
}

/* The tree's columns: Step, then phew_link_columns() in the row's link. */
static int tree_parts(const tree *t, csv_part *parts)
{
  static const phew_column step_column[] = {{"Step", PHEW_COLUMN_INT64, offsetof(tree_row, step)}};
  int n = 0;
  const phew_column *columns = phew_link_columns(&n);
  parts[0] = (csv_part){step_column, 1, t->rows, sizeof(tree_row)};
  parts[1] = (csv_part){columns, n, t->rows ? (const char *)t->rows + offsetof(tree_row, link) : NULL,
                        sizeof(tree_row)};
  return n;
}

/* Rank 0: PREFIX-tree.csv; 0 or -1 after fail. */
static int write_csv(const tree *t)
{
  csv_part parts[2];
  tree_parts(t, parts);
  const char *path = outputs_temporary(OUTPUT_TREE_CSV);
  text_file *out = malloc(sizeof *out);
  int err = out ? text_open(out, path) : ENOMEM;
  if (err == 0) {
    csv_write_joined(out, parts, 2, t->n);
    err = text_close(out);
  }
  free(out);
  if (err)
    fail("writing '%s' failed: %s", path, strerror(err));
  return err ? -1 : 0;
}

/* Rank 0: PREFIX-tree-run.json; 0 or -1 after fail. */
static int write_record(const link_options *o, const tree *t)
{
  const char *path = outputs_temporary(OUTPUT_TREE_RUN);
  text_file *out = malloc(sizeof *out);
  int err = out ? text_open(out, path) : ENOMEM;
  if (err == 0) {
    json_writer w;
    json_begin(&w, out);
    json_string(&w, "program", "phew " PHEW_VERSION);
    json_string(&w, "mode", "link");
    json_open_array(&w, "catalogues");
    for (int k = 0; k < o->n_inputs; ++k)
      json_string(&w, NULL, o->inputs[k]);
    json_close(&w, ']');
    json_open_object(&w, "parameters");
    json_integer(&w, "max_orphan_steps", o->track.max_orphan_steps);
    json_close(&w, '}');
    json_open_object(&w, "results");
    json_integer(&w, "links", t->n);
    json_integer(&w, "orphan_links", t->n_orphan_rows);
    json_integer(&w, "found_again", t->n_refound);
    json_close(&w, '}');
    json_end(&w);
    err = text_close(out);
  }
  free(out);
  if (err)
    fail("writing '%s' failed: %s", path, strerror(err));
  return err ? -1 : 0;
}

/* Collective: the HDF5 table (rank 0's rows); 0 or -1 on every rank. */
static int write_hdf5(const procs *p, const link_options *o, const tree *t)
{
  if (!o->hdf5)
    return 0;
  csv_part parts[2];
  tree_parts(t, parts);
  phew_hdf5_table table = {"MergerTree", p->rank == 0 ? t->n : 0, 2, {{0}}};
  for (int k = 0; k < 2; ++k)
    table.parts[k] = (phew_hdf5_part){parts[k].columns, parts[k].n_columns, parts[k].rows, parts[k].row_size};
  phew_hdf5_catalogue c;
  memset(&c, 0, sizeof c);
  c.n_tables = 1;
  c.tables = &table;
  c.version = "phew " PHEW_VERSION;
  phew_context context = procs_context(p, 1);
  if (phew_write_catalogue_hdf5(&context, outputs_temporary(OUTPUT_HDF5), &c) != PHEW_OK)
    fail("--hdf5: %s", context.message);
  return all_ok(p) ? 0 : -1;
}

static int run_link(const procs *p, const link_options *o)
{
  char message[512];
  if (outputs_init(o->output, OUTPUTS_TREE, 0, o->hdf5, message, sizeof message) != 0)
    fail("%s", message);
  else if (p->rank == 0 && outputs_prepare(message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p))
    return 1;
  tree t;
  memset(&t, 0, sizeof t);
  int status = link_all(p, o, &t);
  if (status == 0 && p->rank == 0 && write_csv(&t) == 0)
    write_record(o, &t);
  status = status == 0 && all_ok(p) ? write_hdf5(p, o, &t) : -1;
  if (status == 0 && p->rank == 0 && outputs_commit(message, sizeof message) != 0)
    fail("%s", message);
  status = status == 0 && all_ok(p) ? 0 : -1;
  if (status != 0 && p->rank == 0)
    outputs_discard();
  if (status == 0 && o->verbose && p->rank == 0)
    printf("link: %lld links (%lld of orphans followed, %lld found again) in %s%s\n", (long long)t.n,
           (long long)t.n_orphan_rows, (long long)t.n_refound, o->output, "-tree.csv");
  free(t.rows);
  return status == 0 ? 0 : 1;
}

int link_mode_main(const procs *p, int argc, char **argv)
{
  link_options o;
  const int parsed = parse(argc, argv, &o);
  int code = 0;
  if (parsed == 2) {
    if (p->rank == 0)
      link_usage(stdout);
  } else {
    code = all_ok(p) ? run_link(p, &o) : 1;
  }
  outputs_done();
  free(o.inputs);
  return code;
}
