/* The tool's processes: MPI_COMM_WORLD under an MPI launcher, or this process alone (a serial
 * build, or a process started without mpiexec). */
#include "cli_procs.h"

#ifdef PHEW_CLI_WITH_MPI
#include <mpi.h>
#include <stdlib.h>

static MPI_Comm world; /* phew_context.mpi_comm points here */
static int with_mpi;   /* MPI was initialised */

/* Whether an MPI launcher (mpiexec, mpirun, srun) started this process: each sets one of these
 * in its processes' environment. A process started alone runs without MPI: singleton
 * MPI_Init starts Open MPI's runtime, a third of a second that a serial run does not need. */
static int launched_by_mpi(void)
{
  static const char *const set_by_launchers[] = {
      "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",           "PMI_RANK",    "PMI_SIZE",
      "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_SIZE", "SLURM_PROCID"};
  for (size_t k = 0; k < sizeof set_by_launchers / sizeof set_by_launchers[0]; ++k)
    if (getenv(set_by_launchers[k]))
      return 1;
  return 0;
}

void procs_init(procs *p, int *argc, char ***argv)
{
  with_mpi = launched_by_mpi();
  if (!with_mpi) {
    p->rank = 0;
    p->size = 1;
    p->mpi_comm = NULL;
    return;
  }
  MPI_Init(argc, argv); /* the default error handler aborts if this fails */
  world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &p->rank);
  MPI_Comm_size(world, &p->size);
  p->mpi_comm = &world;
}

void procs_finalize(void)
{
  if (with_mpi)
    MPI_Finalize();
}

int procs_all_ok(const procs *p, int ok, char *message, size_t message_size)
{
  if (!with_mpi)
    return ok;
  int first_bad = ok ? p->size : p->rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, world);
  if (first_bad == p->size)
    return 1;
  /* every rank gets the failing rank's message, so the tool prints it once, on rank 0 */
  MPI_Bcast(message, (int)message_size, MPI_CHAR, first_bad, world);
  message[message_size - 1] = '\0';
  return 0;
}

void procs_broadcast_int64(const procs *p, int64_t *value)
{
  (void)p;
  if (with_mpi)
    MPI_Bcast(value, 1, MPI_INT64_T, 0, world);
}

#else

void procs_init(procs *p, int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  p->rank = 0;
  p->size = 1;
  p->mpi_comm = NULL;
}

void procs_finalize(void) {}

int procs_all_ok(const procs *p, int ok, char *message, size_t message_size)
{
  (void)p;
  (void)message;
  (void)message_size;
  return ok;
}

void procs_broadcast_int64(const procs *p, int64_t *value)
{
  (void)p;
  (void)value;
}

#endif

phew_context procs_context(const procs *p, int n_threads)
{
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = p->mpi_comm;
  context.n_threads = n_threads;
  return context;
}
