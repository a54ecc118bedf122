#define _DEFAULT_SOURCE /* clock_gettime, madvise */
/* The clock and the allocations of the core (base.h). */
#include "base.h"

#include <stdlib.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

double phew_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Large arrays (per particle or cell, millions of them) ask Linux for transparent huge pages
 * where the system leaves that to the program ("madvise" mode): each of their first touches
 * then costs one page fault per 2 MiB instead of one per 4 KiB (a quarter of the
 * Friends-of-Friends time on 4e6 particles went to page faults). Only the part of the array
 * on whole 2 MiB pages is advised; a refusal changes nothing. */
static void *large_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (p && bytes >= 2 * huge) {
    const uintptr_t begin = ((uintptr_t)p + huge - 1) & ~(huge - 1), end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > begin)
      (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
  }
#else
  (void)bytes;
#endif
  return p;
}

void *phew_malloc(size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(malloc(count * size), count * size);
}

void *phew_calloc(size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(calloc(count, size), count * size);
}

void *phew_realloc(void *p, size_t count, size_t size)
{
  if (count == 0)
    count = 1;
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return large_pages(realloc(p, count * size), count * size);
}

int phew_grow(void *p, size_t count, size_t size)
{
  void **array = p;
  void *grown = phew_realloc(*array, count, size);
  if (!grown)
    return -1;
  *array = grown;
  return 0;
}
