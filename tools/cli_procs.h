/* The processes the command-line tool runs on: the ranks of MPI_COMM_WORLD when the tool is
 * built with MPI (PHEW_CLI_WITH_MPI) and started by an MPI launcher, else this process alone
 * (without MPI_Init). Nothing else in the tool includes mpi.h. */
#ifndef PHEW_CLI_PROCS_H
#define PHEW_CLI_PROCS_H

#include "phew/phew.h"

#include <stddef.h>
#include <stdint.h>

typedef struct procs {
  int rank, size;
  void *mpi_comm; /* for phew_context.mpi_comm: the address of an MPI_Comm, NULL when serial */
} procs;

/* MPI_Init (with MPI, under a launcher), then rank and size. */
void procs_init(procs *p, int *argc, char ***argv);
void procs_finalize(void);

/* Collective: returns 1 if ok is true on every rank. Otherwise returns 0 on every rank and
 * message (message_size bytes, the same size on every rank) holds, everywhere, the message
 * of the lowest rank that was not ok. Serial: returns ok. */
int procs_all_ok(const procs *p, int ok, char *message, size_t message_size);

/* The context of the library's calls over these processes, with n_threads threads each. */
phew_context procs_context(const procs *p, int n_threads);

/* Collective: every rank gets rank 0's *value. Serial: nothing to do. */
void procs_broadcast_int64(const procs *p, int64_t *value);

#endif
