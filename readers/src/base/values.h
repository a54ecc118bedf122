/* Copying the chosen elements of a file's array into a rank's arrays, with a conversion. */
#ifndef PHEW_READERS_VALUES_H
#define PHEW_READERS_VALUES_H

#include "phew/phew_readers.h"

#include <stdint.h>

/* For each i < n with keep[i] (keep NULL: every i), the value src[i] of type from goes to
 * dst[(at + j) * stride + component] of type to, j counting the kept values. Floats convert
 * through double, integers through int64 (a float to an integer type is not done). */
void copy_kept(const void *src, phew_value_type from, const unsigned char *keep, int64_t n, void *dst,
               phew_value_type to, int64_t at, int stride, int component);

/* phew_scalar_type as a phew_value_type. */
phew_value_type scalar_value_type(phew_scalar_type type);

/* 1 for float32 and float64. */
int is_float_type(phew_value_type type);

#endif
