/* What went wrong on this rank while reading, before the ranks agree on it (api/). */
#ifndef PHEW_READERS_READ_ERROR_H
#define PHEW_READERS_READ_ERROR_H

#include "phew/phew.h"

typedef struct read_error {
  phew_status status; /* PHEW_OK until the first failure */
  char message[512];  /* the first failure's message (the most specific) */
} read_error;

void read_error_init(read_error *e);
/* Records status and the message unless a failure is recorded already; returns -1. */
int read_fail(read_error *e, phew_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "not enough memory for WHAT (N bytes)": PHEW_ERROR_MEMORY; returns -1. */
int read_fail_memory(read_error *e, const char *what, double bytes);
/* A failed system call on PATH, with errno's text: PHEW_ERROR_IO; returns -1. */
int read_fail_errno(read_error *e, const char *doing, const char *path);

#endif
