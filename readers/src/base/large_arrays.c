/* Large arrays in huge pages (large_arrays.h). Reading a snapshot that sits in the page cache
 * is mostly copying, and one page fault per 4 KB page of the fresh arrays costs as much again
 * (more in a virtual machine); with transparent huge pages "on request", the Linux default,
 * advising them makes it one fault per 2 MB, as numpy does for its arrays. */
#define _DEFAULT_SOURCE
#include "large_arrays.h"

#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20, WORTH_IT = 4 << 20 };

void *large_array_alloc(size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
#ifdef MADV_HUGEPAGE
  if (bytes >= WORTH_IT) {
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
      return NULL;
    madvise(p, bytes - bytes % HUGE_PAGE, MADV_HUGEPAGE); /* advice only: failure changes nothing */
    return p;
  }
#endif
  return malloc(bytes);
}
