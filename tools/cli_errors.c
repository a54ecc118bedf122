#define _DEFAULT_SOURCE /* madvise */
#include "cli_errors.h"
#include "phew/phew.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* The first failure of this process; printed by all_ok. */
static char error_text[512];

void fail(const char *format, ...)
{
  if (error_text[0])
    return;
  va_list args;
  va_start(args, format);
  vsnprintf(error_text, sizeof error_text, format, args);
  va_end(args);
}

int failed(void) { return error_text[0] != '\0'; }

int all_ok(const procs *p)
{
  if (procs_all_ok(p, error_text[0] == '\0', error_text, sizeof error_text))
    return 1;
  if (p->rank == 0)
    fprintf(stderr, "phew: error: %s\n", error_text);
  return 0;
}

void *allocate(int64_t n, int64_t size, const char *what)
{
  const int64_t factors[2] = {n, size};
  int64_t bytes;
  if (phew_checked_product(factors, 2, &bytes) != 0 || (uint64_t)bytes > SIZE_MAX) {
    fail("%s: %lld values of %lld bytes do not fit in memory", what, (long long)n, (long long)size);
    return NULL;
  }
  void *data = NULL;
  /* Large arrays (cubes, labels) in huge pages where the system offers them: the first write
   * to every 4 KB page costs a fault, which on some machines (virtual ones) took longer than
   * the clump finding itself. */
  enum { HUGE_PAGE = 2 << 20 };
#ifdef MADV_HUGEPAGE
  if (bytes >= 2 * HUGE_PAGE && posix_memalign(&data, HUGE_PAGE, (size_t)bytes) == 0)
    (void)madvise(data, (size_t)bytes, MADV_HUGEPAGE); /* only advice: plain pages if refused */
  else
    data = NULL;
#endif
  if (!data)
    data = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!data)
    fail("out of memory for %s (%lld bytes)", what, (long long)bytes);
  return data;
}
