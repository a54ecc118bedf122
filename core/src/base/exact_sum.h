/* Exact, order-independent sums over the whole double range, and the wide numbers their
 * results are read as.
 *
 * A sum keeps counters of 64-bit "bins" at absolute binary positions: bin j collects the
 * parts of the terms that fall on the bits [64 j, 64 j + 64). Every term is an exact integer
 * times a power of two (a double, or an exact product of doubles), cut exactly at bin
 * boundaries; each bin adds its parts in a 128-bit counter and never carries into the next
 * one. Only the EXACT_SUM_BINS highest bins any term reached are kept; lower parts (more than
 * 128 bits below the largest term) are dropped. What is kept depends only on the set of
 * terms, not on the order of the additions or on how they were split into partial sums:
 * a sum has the same bits on any number of ranks and threads. What is dropped is below
 * 2^-65 of the largest term even for 2^63 terms, far under the precision of a double.
 *
 * Counters cannot overflow: a term adds at most one part (< 2^64) to a bin, and there are
 * fewer than 2^62 terms (two per cell at most, int64 cell counts). */
#ifndef PHEW_EXACT_SUM_H
#define PHEW_EXACT_SUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EXACT_SUM_BINS 3
#define EXACT_SUM_EMPTY INT64_MIN

__extension__ typedef __int128 exact_bin;
__extension__ typedef unsigned __int128 exact_u128;

typedef struct exact_sum {
  exact_bin bin[EXACT_SUM_BINS]; /* bin[k] is the absolute bin top - (EXACT_SUM_BINS - 1) + k */
  int64_t top;                   /* highest bin reached; EXACT_SUM_EMPTY before the first term */
} exact_sum;

void exact_sum_clear(exact_sum *s);
/* Moves the window up so that its highest bin is new_top (> top); lower bins fall out. */
void exact_sum_raise_top(exact_sum *s, int64_t new_top);

/* |x| = m * 2^e with m < 2^53 an integer (x finite); *negative is the sign bit. */
static inline uint64_t exact_split(double x, int64_t *e, int *negative)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  *negative = (int)(bits >> 63);
  const uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
  const int biased = (int)((bits >> 52) & 0x7ff);
  if (biased == 0) { /* zero or subnormal */
    *e = -1074;
    return fraction;
  }
  *e = biased - 1075;
  return fraction | (UINT64_C(1) << 52);
}

/* A sum whose terms are known in advance never to reach above bin top: exact_sum_add_below
 * then skips the window checks. When top is the bin the largest term reaches (a structure's
 * peak density for the sum of its densities) the result is the same as that of a sum started
 * empty; a higher top keeps a window that is as order-independent, only placed higher. */
void exact_sum_start(exact_sum *s, int64_t top);
/* The bin of the highest bit |x| * k can have (x finite and nonzero, k > 0). */
int64_t exact_sum_top_bin(double x, uint64_t k);

/* Adds (-1)^negative * m * 2^exponent, exactly, to a sum whose top bounds the term: m << r
 * cut into the 64-bit words of bins j0, j0 + 1, j0 + 2, each added to its bin if the window
 * holds it. Inline: the per-cell sums call it in their hot loop. */
static inline void exact_sum_add_below(exact_sum *s, int negative, exact_u128 m, int64_t exponent)
{
  const int64_t k0 = (exponent >> 6) - (s->top - (EXACT_SUM_BINS - 1)); /* bin of the lowest word */
  const int r = (int)(exponent & 63);
  const uint64_t lo = (uint64_t)m, hi = (uint64_t)(m >> 64);
  const exact_bin flip = -(exact_bin)negative; /* 0, or all ones: v -> -v */
  const uint64_t w0 = lo << r;
  const uint64_t w1 = (hi << r) | ((lo >> 1) >> (63 - r)); /* no shift by 64 when r = 0 */
  const uint64_t w2 = (hi >> 1) >> (63 - r);
  /* the top bounds every term, so the upper checks never fail: they only keep a broken
   * bound from writing outside the window */
  if (k0 >= 0 && k0 < EXACT_SUM_BINS)
    s->bin[k0] += ((exact_bin)w0 ^ flip) - flip;
  if (w1 && k0 >= -1 && k0 + 1 < EXACT_SUM_BINS)
    s->bin[k0 + 1] += ((exact_bin)w1 ^ flip) - flip;
  if (w2 && k0 >= -2 && k0 + 2 < EXACT_SUM_BINS)
    s->bin[k0 + 2] += ((exact_bin)w2 ^ flip) - flip;
}

/* Adds (-1)^negative * m * 2^exponent, exactly: the window first rises to the term's top
 * bin if it lies higher, then the term goes in as above. */
static inline void exact_sum_add_term(exact_sum *s, int negative, exact_u128 m, int64_t exponent)
{
  if (m == 0)
    return;
  const uint64_t hi = (uint64_t)(m >> 64);
  const int top_bit = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)m);
  const int64_t jt = (exponent + top_bit) >> 6; /* bin of the term's highest bit */
  if (s->top == EXACT_SUM_EMPTY) {
    memset(s->bin, 0, sizeof s->bin);
    s->top = jt;
  } else if (jt > s->top) {
    exact_sum_raise_top(s, jt);
  }
  exact_sum_add_below(s, negative, m, exponent);
}

/* Adds a finite double, a * k, a * b or a * b * c, each exactly (no rounding, no overflow). */
void exact_sum_add(exact_sum *s, double a);
void exact_sum_add_times_int(exact_sum *s, double a, int64_t k);
void exact_sum_add_product(exact_sum *s, double a, double b);
void exact_sum_add_product3(exact_sum *s, double a, double b, double c);
/* Adds v * 2^base, exactly, for a v summed as integers by a caller (fixed-point terms). When
 * base lies at or above the bottom of the window the sum keeps at its end (a started sum
 * whose top bounds every term and the sum of the terms times 2^64), the result is the one of
 * adding the terms one by one: the same integer lands in the same window. */
void exact_sum_add_fixed(exact_sum *s, exact_bin v, int64_t base);
/* to += from (the partial sums of two sets of terms give the sum of their union). */
void exact_sum_merge(exact_sum *to, const exact_sum *from);

/* A number with a 64-bit mantissa and an exponent that does not overflow: the value of a
 * sum, and products of it with doubles, before they are checked against the double range.
 * value = (-1)^negative * mantissa * 2^exponent; mantissa has its top bit set, or is 0. */
typedef struct wide_float {
  uint64_t mantissa;
  int64_t exponent;
  int negative;
} wide_float;

/* The sum, rounded to 64 bits (to nearest, ties to even). */
wide_float exact_sum_value(const exact_sum *s);
wide_float wide_from_double(double x); /* x finite */
wide_float wide_from_int(int64_t k);
wide_float wide_mul(wide_float a, wide_float b);
/* a / b as a double (b nonzero); for ratios known to lie well inside the double range. */
double wide_ratio(wide_float a, wide_float b);
/* -1, 0 or 1 as a < b, a == b, a > b. */
int wide_compare(wide_float a, wide_float b);
/* Decimal exponent of |a| (for messages), a nonzero. */
double wide_log10(wide_float a);

typedef enum wide_range { WIDE_FITS = 0, WIDE_TOO_LARGE, WIDE_TOO_SMALL } wide_range;
/* a rounded to a double. WIDE_FITS when it is 0 or a normal double (|a| in [DBL_MIN, DBL_MAX]);
 * otherwise *out is not written and the answer says which way it left the range. */
wide_range wide_to_double(wide_float a, double *out);
/* wide_to_double, and when a does not fit, why, for a message: "<subject> is 1.23e-310, below
 * the range of double precision (2.22507e-308 to 1.79769e+308): <hint>" (the hint says what to
 * rescale). 0 when it fits (*out written), else -1. */
int wide_to_double_why(wide_float a, const char *subject, const char *hint, double *out, char *why, size_t why_size);
#endif
