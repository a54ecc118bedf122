/* --verbose while a run goes: rank 0 prints each stage of the library's work as it starts
 * ("  started: watershed", indented like the other per-run figures of --verbose), and, when
 * stderr is a terminal, a progress line that it redraws in place. */
#ifndef PHEW_PROGRESS_H
#define PHEW_PROGRESS_H

#include "cli_procs.h"
#include "phew/phew.h"

/* Sets the context's progress callback on rank 0 when verbose (else leaves it unset). */
void progress_attach(phew_context *context, const procs *p, int verbose);
/* A stage the tool itself goes through (reading a snapshot), announced the same way. */
void progress_stage(const procs *p, int verbose, const char *stage);
/* After the library's call: the progress line is cleared off the terminal. */
void progress_done(void);

#endif
