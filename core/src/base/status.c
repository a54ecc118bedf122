/* Status strings, stage names and the failure message of a result. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>

const char *phew_status_string(phew_status status)
{
  switch (status) {
  case PHEW_OK: return "ok";
  case PHEW_ERROR_ARGUMENT: return "invalid argument";
  case PHEW_ERROR_DATA: return "invalid data";
  case PHEW_ERROR_MEMORY: return "out of memory";
  case PHEW_ERROR_MPI: return "MPI error";
  case PHEW_ERROR_IO: return "I/O error";
  case PHEW_CANCELLED: return "cancelled";
  }
  return "unknown status";
}

const char *phew_stage_name(int stage)
{
  static const char *names[PHEW_STAGE_COUNT] = {"watershed", "saddles", "noise removal", "saddle merging",
                                                "properties"};
  return stage >= 0 && stage < PHEW_STAGE_COUNT ? names[stage] : "unknown";
}

const char *phew_particle_stage_name(int stage)
{
  static const char *names[PHEW_PARTICLE_STAGE_COUNT] = {"domain", "tree", "neighbours", "density", "graph"};
  return stage >= 0 && stage < PHEW_PARTICLE_STAGE_COUNT ? names[stage] : "unknown";
}

phew_status phew_fail(call_result *result, phew_status status, const char *format, ...)
{
  if (result && result->message[0] == '\0') { /* keep the first, most specific message */
    va_list args;
    va_start(args, format);
    vsnprintf(result->message, sizeof result->message, format, args);
    va_end(args);
  }
  return status;
}
