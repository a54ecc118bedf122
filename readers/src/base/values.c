/* Chosen elements with a conversion (values.h). */
#include "values.h"

#include <string.h>

phew_value_type scalar_value_type(phew_scalar_type type)
{
  return type == PHEW_FLOAT32 ? PHEW_VALUE_FLOAT32 : PHEW_VALUE_FLOAT64;
}

int is_float_type(phew_value_type type) { return type == PHEW_VALUE_FLOAT32 || type == PHEW_VALUE_FLOAT64; }

static int64_t load_int(const void *src, phew_value_type type, int64_t i)
{
  switch (type) {
  case PHEW_VALUE_INT8: return ((const int8_t *)src)[i];
  case PHEW_VALUE_INT16: return ((const int16_t *)src)[i];
  case PHEW_VALUE_INT32: return ((const int32_t *)src)[i];
  case PHEW_VALUE_INT64: return ((const int64_t *)src)[i];
  case PHEW_VALUE_UINT8: return ((const uint8_t *)src)[i];
  case PHEW_VALUE_UINT16: return ((const uint16_t *)src)[i];
  case PHEW_VALUE_UINT32: return ((const uint32_t *)src)[i];
  case PHEW_VALUE_UINT64: return (int64_t)((const uint64_t *)src)[i];
  case PHEW_VALUE_FLOAT32: return (int64_t)((const float *)src)[i];
  default: return (int64_t)((const double *)src)[i];
  }
}

static double load_float(const void *src, phew_value_type type, int64_t i)
{
  if (type == PHEW_VALUE_FLOAT32)
    return ((const float *)src)[i];
  if (type == PHEW_VALUE_FLOAT64)
    return ((const double *)src)[i];
  return (double)load_int(src, type, i);
}

static void store(void *dst, phew_value_type to, int64_t k, const void *src, phew_value_type from, int64_t i)
{
  switch (to) {
  case PHEW_VALUE_FLOAT32: ((float *)dst)[k] = (float)load_float(src, from, i); break;
  case PHEW_VALUE_FLOAT64: ((double *)dst)[k] = load_float(src, from, i); break;
  case PHEW_VALUE_INT8: ((int8_t *)dst)[k] = (int8_t)load_int(src, from, i); break;
  case PHEW_VALUE_INT16: ((int16_t *)dst)[k] = (int16_t)load_int(src, from, i); break;
  case PHEW_VALUE_INT32: ((int32_t *)dst)[k] = (int32_t)load_int(src, from, i); break;
  case PHEW_VALUE_INT64: ((int64_t *)dst)[k] = load_int(src, from, i); break;
  case PHEW_VALUE_UINT8: ((uint8_t *)dst)[k] = (uint8_t)load_int(src, from, i); break;
  case PHEW_VALUE_UINT16: ((uint16_t *)dst)[k] = (uint16_t)load_int(src, from, i); break;
  case PHEW_VALUE_UINT32: ((uint32_t *)dst)[k] = (uint32_t)load_int(src, from, i); break;
  case PHEW_VALUE_UINT64: ((uint64_t *)dst)[k] = (uint64_t)load_int(src, from, i); break;
  }
}

void copy_kept(const void *src, phew_value_type from, const unsigned char *keep, int64_t n, void *dst,
               phew_value_type to, int64_t at, int stride, int component)
{
  int64_t j = at;
  for (int64_t i = 0; i < n; ++i)
    if (!keep || keep[i])
      store(dst, to, j++ * stride + component, src, from, i);
}
