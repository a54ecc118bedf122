/* The cube root rounded correctly (cube_root.h). cbrt's answer is within an ulp or so of the
 * root; it is moved to the double nearest the root by exact comparisons of x with the cubes of
 * the midpoints between neighbouring doubles. No cube of a midpoint is a double (it has more
 * than 53 significant bits), so x never ties with one and the nearest double is unique. */
#include "cube_root.h"
#include "exact_sum.h"

#include <math.h>

/* The bits of an unsigned number in 3 words, least significant first: 0 .. 192. */
static int bit_length3(const uint64_t w[3])
{
  for (int k = 2; k >= 0; --k)
    if (w[k])
      return 64 * k + 64 - __builtin_clzll(w[k]);
  return 0;
}

/* Sign of m^3 - x, m the midpoint between a and the next double up (a and x positive and
 * finite): 2m = (2A + 1) 2^ea for a = A 2^ea, so 8 m^3 = (2A + 1)^3 2^(3 ea), at most 162
 * bits, against 8x = X 2^(ex + 3), both as integers in three 64-bit words. */
static int midpoint_cube_compare(double a, double x)
{
  int64_t ea, ex;
  int negative;
  const uint64_t m = 2 * exact_split(a, &ea, &negative) + 1, xm = exact_split(x, &ex, &negative);
  const exact_u128 m2 = (exact_u128)m * m; /* < 2^108 */
  const exact_u128 lo = (exact_u128)(uint64_t)m2 * m, hi = (exact_u128)(uint64_t)(m2 >> 64) * m;
  const exact_u128 middle = (lo >> 64) + (uint64_t)hi;
  const uint64_t cube[3] = {(uint64_t)lo, (uint64_t)middle, (uint64_t)(hi >> 64) + (uint64_t)(middle >> 64)};
  const int cube_bits = bit_length3(cube), x_bits = 64 - __builtin_clzll(xm);
  const int64_t cube_top = cube_bits + 3 * ea, x_top = x_bits + ex + 3; /* above the highest bit */
  if (cube_top != x_top)
    return cube_top < x_top ? -1 : 1;
  /* the same highest bit: x's integer shifted up to the cube's (x_bits <= 53 < cube_bits) */
  const int shift = cube_bits - x_bits;
  const exact_u128 moved = (exact_u128)xm << (shift % 64);
  uint64_t eight_x[3] = {0, 0, 0};
  eight_x[shift / 64] = (uint64_t)moved;
  if (shift / 64 < 2)
    eight_x[shift / 64 + 1] = (uint64_t)(moved >> 64);
  for (int k = 2; k >= 0; --k)
    if (cube[k] != eight_x[k])
      return cube[k] < eight_x[k] ? -1 : 1;
  return 0;
}

double cube_root(double x)
{
  if (x < 0.0)
    return -cube_root(-x);
  if (!(x > 0.0) || isinf(x))
    return cbrt(x);
  /* the root of a positive double lies between 1.7e-108 and 5.7e102: y and its neighbours are
   * normal doubles */
  double y = cbrt(x);
  while (midpoint_cube_compare(y, x) < 0) /* the root lies beyond the midpoint above y */
    y = nextafter(y, INFINITY);
  while (midpoint_cube_compare(nextafter(y, 0.0), x) > 0) /* below the midpoint under y */
    y = nextafter(y, 0.0);
  return y;
}
