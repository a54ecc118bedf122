/* Exact, order-independent sums and their wide results (see exact_sum.h for the idea). */
#include "exact_sum.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = EXACT_SUM_BINS };

void exact_sum_clear(exact_sum *s)
{
  memset(s->bin, 0, sizeof s->bin);
  s->top = EXACT_SUM_EMPTY;
}

void exact_sum_start(exact_sum *s, int64_t top)
{
  memset(s->bin, 0, sizeof s->bin);
  s->top = top;
}

int64_t exact_sum_top_bin(double x, uint64_t k)
{
  int64_t e;
  int negative;
  const uint64_t m = exact_split(x, &e, &negative);
  /* m * k < 2^(bits of m + bits of k) */
  const int64_t bits = (64 - __builtin_clzll(m)) + (64 - __builtin_clzll(k));
  return (e + bits - 1) >> 6;
}

void exact_sum_raise_top(exact_sum *s, int64_t new_top)
{
  const int64_t delta = new_top - s->top;
  for (int k = 0; k < B; ++k)
    s->bin[k] = delta < B - k ? s->bin[k + delta] : 0;
  s->top = new_top;
}

void exact_sum_add(exact_sum *s, double a)
{
  int64_t e;
  int negative;
  const uint64_t m = exact_split(a, &e, &negative);
  exact_sum_add_term(s, negative, m, e);
}

void exact_sum_add_times_int(exact_sum *s, double a, int64_t k)
{
  int64_t e;
  int negative;
  const uint64_t m = exact_split(a, &e, &negative);
  const uint64_t magnitude = k < 0 ? (uint64_t)0 - (uint64_t)k : (uint64_t)k;
  exact_sum_add_term(s, negative ^ (k < 0), (exact_u128)m * magnitude, e);
}

void exact_sum_add_product(exact_sum *s, double a, double b)
{
  int64_t ea, eb;
  int na, nb;
  const uint64_t ma = exact_split(a, &ea, &na), mb = exact_split(b, &eb, &nb);
  exact_sum_add_term(s, na ^ nb, (exact_u128)ma * mb, ea + eb);
}

void exact_sum_add_product3(exact_sum *s, double a, double b, double c)
{
  int64_t ea, eb, ec;
  int na, nb, nc;
  const uint64_t ma = exact_split(a, &ea, &na), mb = exact_split(b, &eb, &nb), mc = exact_split(c, &ec, &nc);
  /* ma * mb has at most 106 bits; times mc it needs 159: add it as two exact terms */
  const exact_u128 ab = (exact_u128)ma * mb;
  const int negative = na ^ nb ^ nc;
  exact_sum_add_term(s, negative, (exact_u128)(uint64_t)ab * mc, ea + eb + ec);
  exact_sum_add_term(s, negative, (exact_u128)(uint64_t)(ab >> 64) * mc, ea + eb + ec + 64);
}

void exact_sum_add_fixed(exact_sum *s, exact_bin v, int64_t base)
{
  if (v == 0)
    return;
  const int negative = v < 0;
  const exact_u128 m = negative ? (exact_u128)0 - (exact_u128)v : (exact_u128)v;
  /* from the window's lowest bit */
  const int64_t offset = s->top == EXACT_SUM_EMPTY ? -1 : base - 64 * (s->top - (B - 1));
  if (offset < 0) {
    exact_sum_add_term(s, negative, m, base); /* not a window placed for it: as one term */
    return;
  }
  /* m << r in three words from bin k0 up; a sum of many terms may reach one bin above the
   * top, whose word the top bin's 128-bit counter holds shifted (bins never carry) */
  const int64_t k0 = offset >> 6;
  const int r = (int)(offset & 63);
  const uint64_t lo = (uint64_t)m, hi = (uint64_t)(m >> 64);
  const uint64_t w[3] = {lo << r, (hi << r) | ((lo >> 1) >> (63 - r)), (hi >> 1) >> (63 - r)};
  const exact_bin flip = -(exact_bin)negative;
  for (int j = 0; j < 3; ++j) {
    const int64_t k = k0 + j;
    if (w[j] == 0 || k > B)
      continue; /* k > B: beyond the bound the caller keeps; cannot happen */
    const exact_bin part = k == B ? (exact_bin)((exact_u128)w[j] << 64) : (exact_bin)w[j];
    s->bin[k == B ? B - 1 : k] += (part ^ flip) - flip;
  }
}

void exact_sum_merge(exact_sum *to, const exact_sum *from)
{
  if (from->top == EXACT_SUM_EMPTY)
    return;
  if (to->top == EXACT_SUM_EMPTY) {
    *to = *from;
    return;
  }
  if (from->top > to->top)
    exact_sum_raise_top(to, from->top);
  const int64_t delta = to->top - from->top;
  for (int k = 0; k < B; ++k)
    if (delta < B - k)
      to->bin[k] += from->bin[k + delta];
}

/* ---- reading a sum ---------------------------------------------------------------------- */

enum { LIMBS = B + 2 }; /* B counters of up to 128 bits, one limb apart, plus their carries */

/* limb += v * 2^(64 k), two's complement over LIMBS limbs. */
static void add_at(uint64_t limb[LIMBS], int k, exact_bin v)
{
  const uint64_t part[2] = {(uint64_t)v, (uint64_t)((exact_u128)v >> 64)};
  const uint64_t extension = v < 0 ? ~UINT64_C(0) : 0;
  unsigned carry = 0;
  for (int i = k; i < LIMBS; ++i) {
    const uint64_t add = i - k < 2 ? part[i - k] : extension;
    const uint64_t t = limb[i] + add;
    const uint64_t u = t + carry;
    carry = (t < add) | (u < t);
    limb[i] = u;
  }
}

static int highest_bit(uint64_t x) { return 63 - __builtin_clzll(x); }

/* The 64 highest bits of a nonnegative integer of LIMBS limbs whose lowest bit weighs
 * 2^base, rounded to nearest (ties to even). */
static wide_float round_limbs(const uint64_t limb[LIMBS], int64_t base, int negative)
{
  wide_float w = {0, 0, negative};
  int i = LIMBS - 1;
  while (i >= 0 && limb[i] == 0)
    --i;
  if (i < 0)
    return (wide_float){0, 0, 0};
  const int b = highest_bit(limb[i]);
  uint64_t m = b == 63 ? limb[i] : limb[i] << (63 - b);
  int round = 0, sticky = 0;
  if (i > 0) {
    const uint64_t below = limb[i - 1];
    if (b < 63)
      m |= below >> (b + 1);
    const uint64_t unused = b == 63 ? below : below & ((UINT64_C(1) << (b + 1)) - 1);
    const int width = b == 63 ? 64 : b + 1; /* bits of the limb below that m does not hold */
    round = (int)((unused >> (width - 1)) & 1);
    sticky = (unused & ((width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1) >> 1)) != 0;
    for (int k = 0; k < i - 1; ++k)
      sticky |= limb[k] != 0;
  }
  w.exponent = base + 64 * (int64_t)i + b - 63;
  if (round && (sticky || (m & 1))) {
    if (++m == 0) {
      m = UINT64_C(1) << 63;
      w.exponent += 1;
    }
  }
  w.mantissa = m;
  return w;
}

wide_float exact_sum_value(const exact_sum *s)
{
  if (s->top == EXACT_SUM_EMPTY)
    return (wide_float){0, 0, 0};
  uint64_t limb[LIMBS] = {0};
  for (int k = 0; k < B; ++k)
    add_at(limb, k, s->bin[k]);
  const int negative = (int)(limb[LIMBS - 1] >> 63);
  if (negative) { /* two's complement: the magnitude is ~limb + 1 */
    unsigned carry = 1;
    for (int i = 0; i < LIMBS; ++i) {
      limb[i] = ~limb[i] + carry;
      carry = carry && limb[i] == 0;
    }
  }
  return round_limbs(limb, 64 * (s->top - (B - 1)), negative);
}

static wide_float normalise(uint64_t m, int64_t e, int negative)
{
  if (m == 0)
    return (wide_float){0, 0, 0};
  const int shift = __builtin_clzll(m);
  return (wide_float){m << shift, e - shift, negative};
}

wide_float wide_from_double(double x)
{
  int64_t e;
  int negative;
  const uint64_t m = exact_split(x, &e, &negative);
  return normalise(m, e, negative);
}

wide_float wide_from_int(int64_t k)
{
  const uint64_t magnitude = k < 0 ? (uint64_t)0 - (uint64_t)k : (uint64_t)k;
  return normalise(magnitude, 0, k < 0);
}

wide_float wide_mul(wide_float a, wide_float b)
{
  if (a.mantissa == 0 || b.mantissa == 0)
    return (wide_float){0, 0, 0};
  const exact_u128 p = (exact_u128)a.mantissa * b.mantissa; /* bit 127 or 126 is set */
  const uint64_t limb[LIMBS] = {(uint64_t)p, (uint64_t)(p >> 64)};
  return round_limbs(limb, a.exponent + b.exponent, a.negative ^ b.negative);
}

static double clamped_ldexp(double x, int64_t e)
{
  if (e > 4096)
    e = 4096;
  if (e < -4096)
    e = -4096;
  return ldexp(x, (int)e);
}

double wide_ratio(wide_float a, wide_float b)
{
  if (a.mantissa == 0)
    return 0.0;
  const double q = (double)a.mantissa / (double)b.mantissa;
  const double r = clamped_ldexp(q, a.exponent - b.exponent);
  return a.negative ^ b.negative ? -r : r;
}

int wide_compare(wide_float a, wide_float b)
{
  const int sa = a.mantissa == 0 ? 0 : (a.negative ? -1 : 1);
  const int sb = b.mantissa == 0 ? 0 : (b.negative ? -1 : 1);
  if (sa != sb || sa == 0)
    return sa < sb ? -1 : (sa > sb);
  int magnitude; /* compare |a| with |b|: both mantissas are normalised */
  if (a.exponent != b.exponent)
    magnitude = a.exponent < b.exponent ? -1 : 1;
  else
    magnitude = a.mantissa < b.mantissa ? -1 : (a.mantissa > b.mantissa);
  return sa * magnitude;
}

double wide_log10(wide_float a) { return log10((double)a.mantissa) + (double)a.exponent * log10(2.0); }

/* The mantissa rounded to 53 bits (ties to even) with its exponent adjusted. */
static uint64_t mantissa53(wide_float a, int64_t *e)
{
  uint64_t m = a.mantissa >> 11;
  const uint64_t rest = a.mantissa & 0x7ff;
  *e = a.exponent + 11;
  if (rest > 0x400 || (rest == 0x400 && (m & 1))) {
    if (++m == (UINT64_C(1) << 53)) {
      m >>= 1;
      *e += 1;
    }
  }
  return m;
}

wide_range wide_to_double(wide_float a, double *out)
{
  if (a.mantissa == 0) {
    *out = 0.0;
    return WIDE_FITS;
  }
  int64_t e;
  const uint64_t m = mantissa53(a, &e); /* |a| = m * 2^e, 2^52 <= m < 2^53 */
  if (e + 52 > DBL_MAX_EXP - 1)
    return WIDE_TOO_LARGE;
  if (e + 52 < DBL_MIN_EXP - 1)
    return WIDE_TOO_SMALL;
  const double x = ldexp((double)m, (int)e);
  *out = a.negative ? -x : x;
  return WIDE_FITS;
}

int wide_to_double_why(wide_float a, const char *subject, const char *hint, double *out, char *why, size_t why_size)
{
  const wide_range r = wide_to_double(a, out);
  if (r == WIDE_FITS)
    return 0;
  const double decimal = wide_log10(a), power = floor(decimal);
  snprintf(why, why_size, "%s is %.3ge%+.0f, %s the range of double precision (%g to %g): %s", subject,
           pow(10.0, decimal - power), power, r == WIDE_TOO_LARGE ? "above" : "below", DBL_MIN, DBL_MAX, hint);
  return -1;
}
