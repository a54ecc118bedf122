/* Linked into every executable of a PHEW_SANITIZE build beside keep_modules.c (CMakeLists.txt):
 * the asprintf family, formatted with vsnprintf into a buffer this file allocates. Open MPI
 * leaks a few strings it makes with asprintf at MPI_Init (e.g. the locality string of
 * orte_ess_base_proc_binding). Through glibc's own asprintf such a leak has a stack that ends
 * in libc (its internal vasprintf has no frame pointer), and only a suppression by function
 * name, which needs every leaked stack symbolized, could tell it from phew's leaks. Here the
 * allocating function has a frame pointer, so the stack goes on to the caller's library (e.g.
 * libopen-pal.so) and the module entries of lsan.supp apply without symbolization
 * (ctest_env.cmake.in turns it off: it was most of the cost of the leak check at exit). The
 * executable's definitions come first in the dynamic symbol lookup (they are exported for
 * that), before the C library's and the sanitizer runtime's; the _chk forms are the ones
 * that _FORTIFY_SOURCE builds (Debian's Open MPI) call. Same results as glibc's: the length,
 * or -1 with *strp unspecified. */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int __vasprintf_chk(char **strp, int flag, const char *fmt, va_list ap);
int __asprintf_chk(char **strp, int flag, const char *fmt, ...);

static int __attribute__((noinline)) format_allocated(char **strp, const char *fmt, va_list ap)
{
  va_list count;
  va_copy(count, ap);
  int n = vsnprintf(NULL, 0, fmt, count);
  va_end(count);
  if (n < 0)
    return -1;
  char *s = malloc((size_t)n + 1);
  if (s == NULL)
    return -1;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  *strp = s;
  return n;
}

int vasprintf(char **strp, const char *fmt, va_list ap) { return format_allocated(strp, fmt, ap); }

int __vasprintf_chk(char **strp, int flag, const char *fmt, va_list ap)
{
  (void)flag;
  return format_allocated(strp, fmt, ap);
}

int asprintf(char **strp, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = format_allocated(strp, fmt, ap);
  va_end(ap);
  return n;
}

int __asprintf_chk(char **strp, int flag, const char *fmt, ...)
{
  (void)flag;
  va_list ap;
  va_start(ap, fmt);
  int n = format_allocated(strp, fmt, ap);
  va_end(ap);
  return n;
}
