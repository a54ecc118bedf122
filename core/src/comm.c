/* The communicator: the one place that knows whether this process is alone. Without MPI
 * (or with a NULL communicator) every operation is the identity on one rank. */
#include "internal.h"

#ifdef PHEW_WITH_MPI
#include <mpi.h>
#endif

int phew_comm_check(const phew_input *input, phew_result *result)
{
  if (input->mpi_comm && !phew_has_mpi())
    return phew_fail(result, PHEW_ERROR_MPI,
                     "an MPI communicator was given but libphew was built without MPI support");
#ifdef PHEW_WITH_MPI
  if (input->mpi_comm) {
    int size = 1;
    MPI_Comm_size(*(MPI_Comm *)input->mpi_comm, &size);
    if (size > 1)
      return phew_fail(result, PHEW_ERROR_MPI,
                       "the communicator has %d ranks, but this version of libphew runs on one rank only", size);
  }
#endif
  return PHEW_OK;
}
