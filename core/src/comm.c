/* The communicator: the one place that knows whether this process is alone. Without MPI
 * (or with a NULL communicator) every operation is the identity on one rank. */
#include "internal.h"

int phew_comm_check(const phew_input *input, phew_result *result)
{
  if (input->mpi_comm && !phew_has_mpi())
    return phew_fail(result, PHEW_ERROR_MPI,
                     "an MPI communicator was given but libphew was built without MPI support");
  return PHEW_OK;
}
