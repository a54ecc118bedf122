/* The tool's processes: MPI_COMM_WORLD, or this process alone in a serial build. */
#include "cli_procs.h"

#ifdef PHEW_CLI_WITH_MPI
#include <mpi.h>

static MPI_Comm world; /* phew_input.mpi_comm points here */

void procs_init(procs *p, int *argc, char ***argv)
{
  MPI_Init(argc, argv); /* the default error handler aborts if this fails */
  world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &p->rank);
  MPI_Comm_size(world, &p->size);
  p->mpi_comm = &world;
}

void procs_finalize(void) { MPI_Finalize(); }

int procs_all_ok(const procs *p, int ok, char *message, size_t message_size)
{
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
