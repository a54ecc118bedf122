/* Sizes derived from user input (cell counts, byte counts) are products of int64 values that
 * a hostile or mistaken input can make overflow; every such product goes through here. */
#include "base.h"

phew_status phew_checked_product(const int64_t *factors, int n_factors, int64_t *product)
{
  int64_t p = 1;
  for (int k = 0; k < n_factors; ++k) {
    if (factors[k] < 0 || __builtin_mul_overflow(p, factors[k], &p))
      return PHEW_ERROR_ARGUMENT;
  }
  *product = p;
  return PHEW_OK;
}
