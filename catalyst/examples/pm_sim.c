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

static int parse(int argc, char **argv, options *o)
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
  for (int k = 1; k < argc; ++k) {
    const char *a = argv[k];
    const int has_value = k + 1 < argc;
    if (!strcmp(a, "--replicated"))
      o->replicated = 1;
    else if (!strcmp(a, "--direct"))
      o->insitu.direct = 1;
    else if (!strcmp(a, "--stop-on-error"))
      o->insitu.stop_on_error = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    else if (!has_value)
      return -1;
    else if (!strcmp(a, "--mesh"))
      o->mesh = atoi(argv[++k]);
    else if (!strcmp(a, "--side"))
      o->side = atoi(argv[++k]);
    else if (!strcmp(a, "--steps"))
      o->steps = atoi(argv[++k]);
    else if (!strcmp(a, "--every"))
      o->every = atoi(argv[++k]);
    else if (!strcmp(a, "--dt"))
      o->dt = atof(argv[++k]);
    else if (!strcmp(a, "--amplitude"))
      o->amplitude = atof(argv[++k]);
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(argv[++k], NULL, 10);
    else if (!strcmp(a, "--output"))
      o->output = argv[++k];
    else if (!strcmp(a, "--threshold"))
      o->insitu.threshold = atof(argv[++k]);
    else if (!strcmp(a, "--relevance"))
      o->insitu.relevance = atof(argv[++k]);
    else if (!strcmp(a, "--saddle"))
      o->insitu.saddle = atof(argv[++k]);
    else if (!strcmp(a, "--catalyst") && o->insitu.n_scripts < INSITU_MAX_SCRIPTS)
      o->insitu.scripts[o->insitu.n_scripts++] = argv[++k];
    else
      return -1;
  }
  if (o->side == 0)
    o->side = o->mesh;
  if (o->mesh < 4 || o->side < 1 || o->steps < 0 || o->every < 1 || !(o->dt > 0.0) || !(o->amplitude >= 0.0))
    return -1;
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  const int parsed = parse(argc, argv, &o);
  if (parsed != 0) {
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
