/* Memory for the large per-particle arrays a read fills. */
#ifndef PHEW_READERS_LARGE_ARRAYS_H
#define PHEW_READERS_LARGE_ARRAYS_H

#include <stddef.h>

/* bytes of memory (at least one), released with free(); NULL when there is not enough. Arrays of
 * a few megabytes or more are asked of the kernel in huge pages where it offers them. */
void *large_array_alloc(size_t bytes);

#endif
