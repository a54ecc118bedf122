/* The tool's errors: the first failure of this process is kept (fail), and agreed by every
 * rank at the next collective check (all_ok), so that all ranks stop together, rank 0 prints
 * the one message, and every rank exits with status 1. */
#ifndef PHEW_CLI_ERRORS_H
#define PHEW_CLI_ERRORS_H

#include "cli_procs.h"

#include <stdint.h>

/* Records the first failure of this process (later ones are dropped). */
void fail(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* 1 if this process has failed (fail was called). */
int failed(void);

/* Collective: 1 if no rank has failed so far. Otherwise 0 on every rank, and rank 0 prints
 * the message of the lowest failing rank (one line on stderr). */
int all_ok(const procs *p);

/* Allocates n values of size bytes (n checked against int64 overflow); NULL after fail. */
void *allocate(int64_t n, int64_t size, const char *what);

#endif
