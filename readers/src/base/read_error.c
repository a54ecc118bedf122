/* The first failure on this rank, with its message. */
#include "read_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void read_error_init(read_error *e)
{
  e->status = PHEW_OK;
  e->message[0] = '\0';
}

int read_fail(read_error *e, phew_status status, const char *format, ...)
{
  if (e->status != PHEW_OK)
    return -1;
  e->status = status;
  va_list args;
  va_start(args, format);
  vsnprintf(e->message, sizeof e->message, format, args);
  va_end(args);
  return -1;
}

int read_fail_memory(read_error *e, const char *what, double bytes)
{
  return read_fail(e, PHEW_ERROR_MEMORY, "not enough memory for %s (%.0f bytes)", what, bytes);
}

int read_fail_errno(read_error *e, const char *doing, const char *path)
{
  const int saved = errno;
  return read_fail(e, PHEW_ERROR_IO, "cannot %s %s: %s", doing, path, strerror(saved));
}
