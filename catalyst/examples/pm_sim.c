/* phew_pm: a particle-mesh N-body simulation that finds its clumps while it runs, through
 * Catalyst scripts (phew_catalyst) or by calling libphew directly.
 *
 *   mpirun -np 2 phew_pm --mesh 64 --steps 120 --every 10 --catalyst catalyst/scripts/clumps.py
 *   mpirun -np 2 phew_pm --mesh 64 --steps 120 --every 10 --direct
 *
 * --replicated computes the evolution on every rank over the whole mesh (no FFT split, no
 * particle exchange), so that the fields handed to the clump finders are the same, bit for
 * bit, for any number of ranks; the clump finding itself still runs split over the ranks,
 * each passing its slab of the mesh and the particles in it. Without it the simulation is
 * split over the ranks, and its fields differ in their last bits between rank counts (the
 * FFT's and the deposit's sums run in other orders). */
#include "pm.h"
#include "pm_insitu.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct options {
  int mesh, side, steps, every;
  double dt, amplitude;
  uint64_t seed;
  int replicated;
  const char *output;
  insitu_options insitu;
} options;

static void usage(FILE *out)
{
  fprintf(out, "usage: phew_pm [--mesh N] [--side P] [--steps S] [--every K] [--dt T] [--amplitude A]\n"
               "               [--seed S] [--replicated] [--output DIR]\n"
               "               [--catalyst SCRIPT]... [--direct [--threshold D] [--relevance R] [--saddle S]]\n"
               "  --mesh N        cells per side of the mesh (default 64; a multiple of 2 x ranks)\n"
               "  --side P        particles per side (default: the mesh's)\n"
               "  --steps S       time steps (default 100); --dt T their length (default 0.05)\n"
               "  --every K       find clumps every K steps, and after the last (default 10)\n"
               "  --amplitude A   rms density contrast of the initial waves (default 0.05)\n"
               "  --replicated    the same fields for any number of ranks (see the top of pm_sim.c)\n"
               "  --output DIR    where the scripts and --direct write (default insitu_output)\n"
               "  --catalyst F    run this Catalyst script (repeat for several)\n"
               "  --direct        call libphew directly on the density grid (no Catalyst, no Python):\n"
               "                  DIR/direct_clumps_STEP.csv, thresholds in units of the mean density\n"
               "                  (defaults 10, 3, 30)\n"
               "  --stop-on-error stop at the first failed in-situ call (default: say why, go on, and\n"
               "                  exit with status 3 at the end)\n");
}

/* A bad command line: why, for rank 0 to print before the usage. */
typedef struct complaint {
  char text[256];
} complaint;

/* The value of an integer option, at least `least`: 0, or -1 with the complaint. */
static int int_value(const char *option, const char *text, int least, int *out, complaint *why)
{
  char *end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || v < least || v > INT_MAX) {
    snprintf(why->text, sizeof why->text, "%s needs an integer of at least %d (got '%s')", option, least, text);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* What a real option takes: any finite number, or one >= 0, or one > 0. */
typedef enum real_range { ANY_FINITE, NOT_NEGATIVE, POSITIVE } real_range;

/* The value of a real option: 0, or -1 with the complaint. */
static int real_value(const char *option, const char *text, real_range range, double *out, complaint *why)
{
  static const char *const wanted[] = {"a finite number", "a finite number >= 0", "a finite number > 0"};
  char *end = NULL;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(v) || (range == NOT_NEGATIVE && v < 0.0) ||
      (range == POSITIVE && v <= 0.0)) {
    snprintf(why->text, sizeof why->text, "%s needs %s (got '%s')", option, wanted[range], text);
    return -1;
  }
  *out = v;
  return 0;
}

/* The options that take a value. */
static int takes_value(const char *a)
{
  static const char *const valued[] = {"--mesh", "--side",   "--steps",     "--every",     "--dt",     "--amplitude",
                                       "--seed", "--output", "--threshold", "--relevance", "--saddle", "--catalyst"};
  for (size_t k = 0; k < sizeof valued / sizeof *valued; ++k)
    if (!strcmp(a, valued[k]))
      return 1;
  return 0;
}

/* One option that takes a value (takes_value), with its value: 0, or -1 with the complaint. */
static int option_value(options *o, const char *a, const char *v, complaint *why)
{
  if (!strcmp(a, "--mesh"))
    return int_value(a, v, 4, &o->mesh, why);
  if (!strcmp(a, "--side"))
    return int_value(a, v, 1, &o->side, why);
  if (!strcmp(a, "--steps"))
    return int_value(a, v, 0, &o->steps, why);
  if (!strcmp(a, "--every"))
    return int_value(a, v, 1, &o->every, why);
  if (!strcmp(a, "--dt"))
    return real_value(a, v, POSITIVE, &o->dt, why);
  if (!strcmp(a, "--amplitude"))
    return real_value(a, v, NOT_NEGATIVE, &o->amplitude, why);
  if (!strcmp(a, "--threshold")) /* the library says what it takes of these */
    return real_value(a, v, ANY_FINITE, &o->insitu.threshold, why);
  if (!strcmp(a, "--relevance"))
    return real_value(a, v, ANY_FINITE, &o->insitu.relevance, why);
  if (!strcmp(a, "--saddle"))
    return real_value(a, v, ANY_FINITE, &o->insitu.saddle, why);
  if (!strcmp(a, "--seed")) {
    char *end = NULL;
    errno = 0;
    o->seed = strtoull(v, &end, 10);
    if (end != v && *end == '\0' && errno != ERANGE && v[0] != '-')
      return 0;
    snprintf(why->text, sizeof why->text, "--seed needs an unsigned integer (got '%s')", v);
    return -1;
  }
  if (!strcmp(a, "--output")) {
    o->output = v;
    return 0;
  }
  if (o->insitu.n_scripts < INSITU_MAX_SCRIPTS) { /* --catalyst */
    o->insitu.scripts[o->insitu.n_scripts++] = v;
    return 0;
  }
  snprintf(why->text, sizeof why->text, "at most %d --catalyst scripts", INSITU_MAX_SCRIPTS);
  return -1;
}

static void defaults(options *o)
{
  memset(o, 0, sizeof *o);
  o->mesh = 64;
  o->steps = 100;
  o->every = 10;
  o->dt = 0.05;
  o->amplitude = 0.05;
  o->seed = 12345;
  o->output = "insitu_output";
  o->insitu.threshold = 10.0;
  o->insitu.relevance = 3.0;
  o->insitu.saddle = 30.0;
}

/* 0: run; 1: --help; -1: a bad command line (why says what). */
static int parse(int argc, char **argv, options *o, complaint *why)
{
  defaults(o);
  why->text[0] = '\0';
  for (int k = 1; k < argc; ++k) {
    const char *a = argv[k];
    if (!strcmp(a, "--replicated"))
      o->replicated = 1;
    else if (!strcmp(a, "--direct"))
      o->insitu.direct = 1;
    else if (!strcmp(a, "--stop-on-error"))
      o->insitu.stop_on_error = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    else if (!takes_value(a)) {
      snprintf(why->text, sizeof why->text, "unknown option '%s'", a);
      return -1;
    } else if (k + 1 == argc) {
      snprintf(why->text, sizeof why->text, "%s needs a value", a);
      return -1;
    } else if (option_value(o, a, argv[++k], why) != 0)
      return -1;
  }
  if (o->side == 0) /* not given: one particle per cell */
    o->side = o->mesh;
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  complaint why;
  const int parsed = parse(argc, argv, &o, &why);
  if (parsed != 0) {
    if (rank == 0 && parsed < 0)
      fprintf(stderr, "phew_pm: %s\n", why.text);
    if (rank == 0)
      usage(parsed > 0 ? stdout : stderr);
    MPI_Finalize();
    return parsed > 0 ? 0 : 2;
  }
  if (rank == 0)
    mkdir(o.output, 0777);
  MPI_Barrier(MPI_COMM_WORLD);

  /* the physics on every rank alone (replicated) or split over all of them */
  pm_mesh mesh;
  pm_particles particles;
  memset(&particles, 0, sizeof particles);
  int ok = pm_mesh_init(&mesh, o.replicated ? MPI_COMM_SELF : MPI_COMM_WORLD, o.mesh) == 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    if (rank == 0)
      fprintf(stderr,
              "phew_pm: the mesh of %d cells per side cannot be split into slabs of at least 2 planes on %d "
              "ranks (it needs a multiple of 2 x ranks), or memory ran out\n",
              o.mesh, o.replicated ? 1 : size);
    pm_mesh_free(&mesh);
    MPI_Finalize();
    return 2;
  }
  ok = pm_particles_init(&particles, &mesh, o.side, o.amplitude, o.seed) == 0;
  if (ok)
    pm_mesh_solve(&mesh, &particles);
  insitu in;
  ok = insitu_start(&in, &o.insitu, o.output, MPI_COMM_WORLD) == 0 && ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int status = all_ok ? 0 : 1;
  double time = 0.0, step_seconds = 0.0;
  int failed_calls = 0;
  for (int step = 0; status == 0 && step <= o.steps; ++step) {
    if (step % o.every == 0 || step == o.steps) {
      const insitu_state state = {&mesh, &particles, step, time, step_seconds};
      if (insitu_step(&in, &state) != 0) {
        failed_calls++;
        status = o.insitu.stop_on_error ? 1 : 0;
      }
    }
    if (step == o.steps || status != 0)
      break;
    const double t0 = MPI_Wtime();
    pm_kick(&mesh, &particles, 0.5 * o.dt);
    pm_drift(&particles, o.dt);
    ok = pm_exchange(&particles, &mesh) == 0;
    if (ok)
      pm_mesh_solve(&mesh, &particles);
    pm_kick(&mesh, &particles, 0.5 * o.dt);
    time += o.dt;
    step_seconds = MPI_Wtime() - t0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (rank == 0)
        fprintf(stderr, "phew_pm: out of memory at step %d\n", step);
      status = 1;
    }
  }
  insitu_stop(&in);
  if (failed_calls > 0 && rank == 0)
    fprintf(stderr, "phew_pm: %d in-situ call(s) failed (see above)\n", failed_calls);
  pm_particles_free(&particles);
  pm_mesh_free(&mesh);
  MPI_Finalize();
  return status != 0 ? 1 : (failed_calls > 0 ? 3 : 0);
}
