/* Stages and a progress line for --verbose (progress.h). One state per process: the tool
 * runs one library call at a time. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct progress_state {
  char stage[64]; /* the stage last announced */
  int tty;        /* stderr is a terminal: draw the progress line */
  int percent;    /* last drawn */
} progress_state;

static progress_state state = {"", -1, -1};

static void report(double fraction, const char *stage, void *data)
{
  progress_state *s = data;
  if (!stage)
    return;
  if (s->tty < 0)
    s->tty = isatty(STDERR_FILENO);
  if (strncmp(stage, s->stage, sizeof s->stage) != 0) {
    if (s->tty)
      fputs("\r\033[K", stderr); /* the progress line gives way to the stage's line */
    printf("  started: %s\n", stage);
    fflush(stdout);
    snprintf(s->stage, sizeof s->stage, "%s", stage);
    s->percent = -1;
  }
  const int percent = (int)(100.0 * (fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction));
  if (s->tty && percent != s->percent) {
    fprintf(stderr, "\r[%3d%%] %s", percent, stage);
    fflush(stderr);
    s->percent = percent;
  }
}

void progress_attach(phew_context *context, const procs *p, int verbose)
{
  if (!verbose || p->rank != 0)
    return;
  context->progress = report;
  context->progress_data = &state;
}

void progress_stage(const procs *p, int verbose, const char *stage)
{
  if (verbose && p->rank == 0)
    report(0.0, stage, &state);
}

void progress_done(void)
{
  if (state.tty && state.stage[0])
    fputs("\r\033[K", stderr);
  state.stage[0] = '\0';
}
