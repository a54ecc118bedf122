/* The readers' public calls refuse NULL arguments with PHEW_ERROR_ARGUMENT and a message that
 * names the call, and never touch memory they were not given (run under the sanitizers too). */
#include "phew/phew_readers.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(phew_status got, const phew_context *context, const char *call)
{
  const int named = context == NULL || strstr(context->message, call) != NULL;
  if (got != PHEW_ERROR_ARGUMENT || !named) {
    printf("FAIL: %s: status %d, message '%s'\n", call, (int)got, context ? context->message : "(no context)");
    ++failures;
  }
}

int main(void)
{
  phew_context context;
  phew_context_init(&context);
  phew_read_options options;
  phew_read_options_init(&options);
  phew_snapshot_info info;
  phew_particle_set set;
  phew_amr_set amr;
  const char *variables[1] = {"density"};
  expect(phew_read_snapshot_info(&context, "x", NULL, &info), &context, "phew_read_snapshot_info");
  expect(phew_read_snapshot_info(&context, "x", &options, NULL), &context, "phew_read_snapshot_info");
  expect(phew_read_snapshot_info(NULL, "x", &options, &info), NULL, "phew_read_snapshot_info");
  expect(phew_read_particles(&context, "x", &options, NULL), &context, "phew_read_particles");
  expect(phew_read_particles(NULL, "x", &options, &set), NULL, "phew_read_particles");
  expect(phew_read_amr(&context, "x", &options, variables, -1, &amr), &context, "phew_read_amr");
  expect(phew_read_amr(&context, "x", NULL, variables, 1, &amr), &context, "phew_read_amr");
  expect(phew_read_amr(NULL, "x", &options, variables, 1, &amr), NULL, "phew_read_amr");
  phew_particle_set_free(NULL); /* allowed, as free(NULL) */
  phew_amr_set_free(NULL);
  printf("%s\n", failures ? "api_arguments: FAILED" : "api_arguments: ok");
  return failures ? 1 : 0;
}
