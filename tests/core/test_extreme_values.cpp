// Sums and sizes at the edges of the ranges: masses, volumes and centres right over the whole
// double range (against an independent exact big-integer sum), identical in any order of
// addition, the dendrogram equal to the catalogue, clear errors where a true result does not
// fit in a double, and size products that overflow int64 refused without a crash.
#include "phew_test_util.h"

extern "C" {
#include "exact_sum.h" // the core's accumulator, tested directly
}

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace phewtest;

namespace {

// An independent exact sum of nonnegative doubles: a plain big integer in 32-bit limbs whose
// lowest bit weighs 2^-1074, added to with schoolbook carries, read back rounded to nearest.
class BigSum {
public:
  void add(double x)
  {
    if (x == 0.0)
      return;
    int e = 0;
    const double f = std::frexp(x, &e);       // x = f * 2^e, f in [0.5, 1)
    uint64_t m = (uint64_t)std::ldexp(f, 53); // x = m * 2^(e - 53)
    int64_t shift = (int64_t)e - 53 + 1074;   // bit position of m's lowest bit
    if (shift < 0) {                          // subnormal: m has trailing zeros
      m >>= -shift;
      shift = 0;
    }
    for (int b = 0; b < 64; ++b)
      if ((m >> b) & 1)
        add_bit(shift + b);
  }
  // Correctly rounded to a double (to nearest, ties to even); inf beyond the range.
  double value() const
  {
    int64_t top = (int64_t)limbs_.size() * 32 - 1;
    while (top >= 0 && !bit(top))
      --top;
    if (top < 0)
      return 0.0;
    const int64_t low = std::max<int64_t>(top - 52, 0);
    uint64_t m = 0;
    for (int64_t b = top; b >= low; --b)
      m = (m << 1) | (uint64_t)bit(b);
    const bool round = low > 0 && bit(low - 1);
    bool sticky = false;
    for (int64_t b = 0; b + 1 < low; ++b)
      sticky = sticky || bit(b);
    if (round && (sticky || (m & 1)))
      ++m;
    return std::ldexp((double)m, (int)(low - 1074));
  }

private:
  std::vector<uint32_t> limbs_ = std::vector<uint32_t>(80, 0); // 2560 bits: 2^-1074 .. 2^1485
  bool bit(int64_t b) const { return (limbs_[(size_t)(b / 32)] >> (b % 32)) & 1; }
  void add_bit(int64_t b)
  {
    size_t i = (size_t)(b / 32);
    uint64_t carry = (uint64_t)1 << (b % 32);
    while (carry) {
      const uint64_t t = (uint64_t)limbs_[i] + carry;
      limbs_[i++] = (uint32_t)t;
      carry = t >> 32;
    }
  }
};

double value_of(const exact_sum &s)
{
  double x = 0.0;
  EXPECT_EQ(wide_to_double(exact_sum_value(&s), &x), WIDE_FITS);
  return x;
}

// Positive doubles whose exponents cover the whole range, subnormals included, below
// 2^top_exponent (so that sums of many stay finite).
std::vector<double> wild_values(size_t n, uint64_t seed, int top_exponent = 1024)
{
  std::mt19937_64 g(seed);
  std::vector<double> v(n);
  for (double &x : v) {
    const int e = (int)(g() % (uint64_t)(top_exponent + 1075)) - 1075;
    x = std::ldexp(1.0 + (double)(g() >> 11) * 0x1.0p-53, e);
    if (!std::isfinite(x))
      x = DBL_MAX;
  }
  return v;
}

TEST(ExactSum, SameBitsInAnyOrderAndAnySplit)
{
  const std::vector<double> v = wild_values(5000, 1);
  exact_sum ref;
  exact_sum_clear(&ref);
  for (double x : v)
    exact_sum_add(&ref, x);
  std::mt19937_64 g(2);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> w = v;
    std::shuffle(w.begin(), w.end(), g);
    // split into up to 8 partial sums (ranks), merged in a shuffled order
    const int parts = 1 + trial % 8;
    std::vector<exact_sum> partial((size_t)parts);
    for (exact_sum &p : partial)
      exact_sum_clear(&p);
    for (size_t i = 0; i < w.size(); ++i)
      exact_sum_add(&partial[g() % (size_t)parts], w[i]);
    std::shuffle(partial.begin(), partial.end(), g);
    exact_sum total;
    exact_sum_clear(&total);
    for (const exact_sum &p : partial)
      exact_sum_merge(&total, &p);
    ASSERT_EQ(total.top, ref.top);
    ASSERT_EQ(std::memcmp(total.bin, ref.bin, sizeof ref.bin), 0) << "trial " << trial;
  }
}

TEST(ExactSum, MatchesAnIndependentBigIntegerSum)
{
  for (uint64_t seed = 10; seed < 40; ++seed) {
    // some sets span the whole range, others a few decades (where every bit counts)
    std::vector<double> v = wild_values(200 + seed * 10, seed, 1000);
    if (seed % 2)
      for (size_t i = 0; i < v.size(); ++i) {
        int e = 0;
        v[i] = std::ldexp(std::frexp(v[i], &e), (int)(seed % 50) - 25 + (int)(i % 10));
      }
    BigSum big;
    exact_sum s;
    exact_sum_clear(&s);
    for (double x : v) {
      big.add(x);
      exact_sum_add(&s, x);
    }
    const double expected = big.value();
    const double got = value_of(s);
    // two roundings (exact -> 64 bits -> 53 bits): at most one unit in the last place
    EXPECT_LE(std::fabs(got - expected), std::ldexp(std::fabs(expected), -52)) << "seed " << seed;
  }
}

TEST(ExactSum, TermsFarBelowTheLargestDoNotDisturbIt)
{
  exact_sum s;
  exact_sum_clear(&s);
  exact_sum_add(&s, 1e300);
  for (int i = 0; i < 1000; ++i)
    exact_sum_add(&s, 1e-300);
  exact_sum_add(&s, 1.0);
  EXPECT_EQ(value_of(s), 1e300);
  exact_sum t;
  exact_sum_clear(&t);
  exact_sum_add(&t, 3.0);
  exact_sum_add(&t, 0x1.0p-60); // within the window: kept exactly
  exact_sum_add(&t, -3.0);
  EXPECT_EQ(value_of(t), 0x1.0p-60);
}

// Terms summed as integers above a base and folded once (exact_sum_add_fixed, the catalogue's
// fast path) give the bits of adding them one by one, also when their sum outgrows the top
// bin and when some terms lie below the base.
TEST(ExactSum, FixedPointFoldsGiveTheSameBits)
{
  std::mt19937_64 g(29);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t bits = -300 + (int64_t)(g() % 900); // |term| < 2^bits
    const int64_t top = (bits - 1) >> 6, n = 1 + (int64_t)(g() % 5000);
    const int64_t base = bits + 13 - 126; // headroom for 2^13 terms
    const bool near_top = trial % 3 == 0, signs = trial % 2 == 1;
    exact_sum one, fast;
    exact_sum_start(&one, top);
    exact_sum_start(&fast, top);
    exact_bin v = 0;
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t m = (g() >> 11) | (UINT64_C(1) << 52); // 53 bits
      // exponents from the bound down to 200 bits below it (past the base: the general way)
      const int64_t e = bits - 53 - (near_top ? (int64_t)(g() % 2) : (int64_t)(g() % 200));
      const int negative = signs && (g() & 1);
      exact_sum_add_below(&one, negative, m, e);
      if (e >= base) {
        const exact_bin t = (exact_bin)m << (e - base);
        v += negative ? -t : t;
      } else {
        exact_sum_add_below(&fast, negative, m, e);
      }
    }
    exact_sum_add_fixed(&fast, v, base);
    const wide_float a = exact_sum_value(&one), b = exact_sum_value(&fast);
    ASSERT_TRUE(a.mantissa == b.mantissa && a.exponent == b.exponent && a.negative == b.negative)
        << "trial " << trial << ": " << n << " terms below 2^" << bits;
  }
}

TEST(ExactSum, ProductsAreExact)
{
  std::mt19937_64 g(5);
  for (int i = 0; i < 2000; ++i) {
    const double a = std::ldexp(1.0 + (double)(g() >> 11) * 0x1.0p-53, (int)(g() % 400) - 200);
    const double b = std::ldexp(1.0 + (double)(g() >> 11) * 0x1.0p-53, (int)(g() % 400) - 200);
    const double p = a * b, err = std::fma(a, b, -p); // a * b = p + err exactly
    exact_sum s;
    exact_sum_clear(&s);
    exact_sum_add_product(&s, a, b);
    exact_sum_add(&s, -p);
    ASSERT_EQ(value_of(s), err) << a << " * " << b;
    // a * b * c with c a power of two times an odd integer below 2^20
    const double c = std::ldexp((double)(g() % (1u << 20) | 1u), (int)(g() % 100) - 50);
    exact_sum_clear(&s);
    exact_sum_add_product3(&s, a, b, c);
    exact_sum_add_product(&s, -p, c);
    ASSERT_EQ(value_of(s), err * c);
    const int64_t k = (int64_t)(g() >> 12) - ((int64_t)1 << 51);
    exact_sum_clear(&s);
    exact_sum_add_times_int(&s, a, k);
    exact_sum_add_product(&s, -a, (double)k); // k < 2^52: exact as a double
    ASSERT_EQ(value_of(s), 0.0);
  }
}

TEST(ExactSum, ResultsBeyondTheDoubleRangeAreReported)
{
  exact_sum s;
  exact_sum_clear(&s);
  exact_sum_add(&s, DBL_MAX);
  exact_sum_add(&s, DBL_MAX);
  double x = 0.0;
  EXPECT_EQ(wide_to_double(exact_sum_value(&s), &x), WIDE_TOO_LARGE);
  EXPECT_NEAR(wide_log10(exact_sum_value(&s)), std::log10(2.0) + std::log10(DBL_MAX), 1e-9);
  exact_sum_clear(&s);
  exact_sum_add_product(&s, 1e-300, 1e-300);
  EXPECT_EQ(wide_to_double(exact_sum_value(&s), &x), WIDE_TOO_SMALL);
  // the product of a sum and three spacings keeps the digits of both
  exact_sum_clear(&s);
  exact_sum_add(&s, 3.0);
  wide_float w = exact_sum_value(&s);
  for (int d = 0; d < 3; ++d)
    w = wide_mul(w, wide_from_double(1e-100));
  ASSERT_EQ(wide_to_double(w, &x), WIDE_FITS);
  EXPECT_NEAR(x, 3e-300, 1e-15 * 3e-300);
}

// ---- the cases of issue 7 through phew_find_clumps ---------------------------------------

Field line(const std::vector<double> &values)
{
  Field f((int64_t)values.size(), 1, 1);
  f.rho = values;
  return f;
}

const phew_node *leaf_of(const phew_clump_result &r, int64_t clump)
{
  for (int64_t i = 0; i < r.n_nodes; ++i)
    if (r.nodes[i].level == 0 && r.nodes[i].clump_id == clump)
      return &r.nodes[i];
  return nullptr;
}

// A float64 row with 40 and with 20 decades between the two clumps of one halo: the
// dendrogram leaf of the faint clump has exactly its mass (it was 4e8, then 0).
TEST(ExtremeValues, DendrogramLeavesKeepTheirMassOverManyDecades)
{
  for (const double scale : {1e-40, 1e-20}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    const Field f = line({1e10, 1e4 * scale, 1e9 * scale, 1e10 * scale, 1e9 * scale, 0});
    const phew_params p = make_params(0.0, 2.0, 1, 0.0);
    auto r = run(f, p);
    check_consistency(f, p, *r);
    ASSERT_EQ(r->n_clumps(), 2);
    ASSERT_EQ(r->n_haloes(), 1);
    BigSum faint, all;
    for (double x : {1e9 * scale, 1e10 * scale, 1e9 * scale})
      faint.add(x);
    for (double x : f.rho)
      all.add(x);
    const phew_object &c1 = r->clump_row(1);
    EXPECT_NEAR(c1.mass, faint.value(), 1e-15 * faint.value());
    const phew_node *leaf = leaf_of(r->result, 1);
    ASSERT_NE(leaf, nullptr);
    EXPECT_EQ(leaf->mass, c1.mass);
    EXPECT_NEAR(r->halo_row(0).mass, all.value(), 1e-15 * all.value());
  }
}

// One structure whose densities span 600 decades: mass and mean density right to 1e-15.
TEST(ExtremeValues, OneStructureOverTheWholeRange)
{
  Field f(31, 1, 1);
  for (int64_t x = 0; x < 31; ++x) // a single peak at 15, falling by 20 decades per cell
    f.rho[(size_t)x] = std::pow(10.0, 300.0 - 20.0 * (double)std::llabs(x - 15));
  const phew_params p = make_params(0.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 1);
  BigSum big;
  for (double x : f.rho)
    big.add(x);
  const phew_object &c = r->clump_row(0);
  EXPECT_EQ(c.n_cells, 31);
  EXPECT_NEAR(c.mass, big.value(), 1e-15 * big.value());
  EXPECT_NEAR(c.mean_density, big.value() / 31.0, 1e-15 * big.value() / 31.0);
  EXPECT_NEAR(c.center_of_mass[0], 15.5, 1e-12);
}

TEST(ExtremeValues, LargestAndSmallestDensitiesInOneCell)
{
  for (const double v : {DBL_MAX, 1e-300, DBL_MIN, 4.9e-324}) {
    SCOPED_TRACE("value " + std::to_string(v));
    Field f(8, 8, 8, 0.0);
    f.at(3, 4, 5) = v;
    const phew_params p = make_params(0.0);
    auto r = run(f, p);
    if (v < DBL_MIN) { // a subnormal mass is not a double with 1e-12 precision: an error
      EXPECT_EQ(r->status, PHEW_ERROR_DATA);
      EXPECT_NE(std::string(r->context.message).find("below the range"), std::string::npos) << r->context.message;
      EXPECT_TRUE(std::all_of(r->clump.begin(), r->clump.end(), [](int64_t c) { return c == -1; }));
      continue;
    }
    check_consistency(f, p, *r);
    ASSERT_EQ(r->n_clumps(), 1);
    const phew_object &c = r->clump_row(0);
    EXPECT_EQ(c.mass, v);
    EXPECT_EQ(c.volume, 1.0);
    EXPECT_EQ(c.mean_density, v);
    EXPECT_EQ(c.center_of_mass[0], 3.5);
    EXPECT_EQ(c.center_of_mass[1], 4.5);
    EXPECT_EQ(c.center_of_mass[2], 5.5);
    EXPECT_EQ(r->clump[(size_t)f.id(3, 4, 5)], 0);
    EXPECT_EQ(r->result.n_nodes, 1);
    EXPECT_EQ(r->result.nodes[0].mass, v);
  }
}

TEST(ExtremeValues, MassBeyondTheDoubleRangeIsAnError)
{
  Field f(8, 8, 8, 0.0);
  f.at(3, 4, 5) = DBL_MAX;
  f.at(4, 4, 5) = DBL_MAX / 2;
  auto r = run(f, make_params(0.0));
  EXPECT_EQ(r->status, PHEW_ERROR_DATA);
  EXPECT_NE(std::string(r->context.message).find("whose peak is cell 355"), std::string::npos) << r->context.message;
  EXPECT_NE(std::string(r->context.message).find("above the range"), std::string::npos) << r->context.message;
  EXPECT_EQ(r->n_clumps(), 0);
  EXPECT_TRUE(std::all_of(r->clump.begin(), r->clump.end(), [](int64_t c) { return c == -1; }));
}

TEST(ExtremeValues, SpacingsThatPutVolumesOutOfRangeAreErrors)
{
  Field f = smoothed_noise(12, 10, 8, 3, 2);
  const phew_params p = make_params(quantile(f, 0.7), 1.0);
  auto unit = run(f, p);
  check_consistency(f, p, *unit);
  ASSERT_GT(unit->n_clumps(), 0);
  for (const double h : {1e-200, 1e200}) {
    SCOPED_TRACE("spacing " + std::to_string(h));
    Field g = f;
    g.spacing[0] = g.spacing[1] = g.spacing[2] = h;
    auto r = run(g, p);
    EXPECT_EQ(r->status, PHEW_ERROR_DATA);
    const std::string m = r->context.message;
    EXPECT_NE(m.find(h < 1 ? "below the range" : "above the range"), std::string::npos) << m;
    EXPECT_NE(m.find("rescale"), std::string::npos) << m;
    EXPECT_TRUE(std::all_of(r->patch.begin(), r->patch.end(), [](int64_t c) { return c == -1; }));
  }
}

// float32 densities are summed by chunks of a run at once where their exponents lie close
// (cell_sums.c); float64 ones cell by cell. The same values as float32 and as float64 must
// give the same catalogue, bit for bit: runs longer than a chunk, a chunk whose exponents
// spread 28 bits (its integer sums would overflow 64 bits), whole chunks of terms below the
// fixed-point base, a subnormal density, and a halo whose periodic nearest image flips inside
// a run (its reference, the highest peak at x = 150, lies half a box from x = 850).
TEST(ExtremeValues, Float32ChunkSumsEqualFloat64CellSums)
{
  const int64_t nx = 1400;
  Field f(nx, 3, 3);
  f.set_periodic(true);
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 3; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        const auto bump = [x, nx](double at, double width) {
          const double d = std::fabs((double)x - at), e = std::min(d, (double)nx - d);
          return std::exp(-0.5 * e * e / (width * width));
        };
        double v = (1e6 * bump(150, 80) + 4e5 * bump(800, 120)) * (1.0 + 0.01 * (double)(y + 2 * z));
        if (x == 500 || x == 501)
          v *= 0x1.0p-28;          // a dip inside the run of the second peak
        if (x >= 1050 && x < 1350) // 2^-95 of the peak, rising to the first peak's slope
          v = 1e-30 * (1.0 + 0.001 * (double)(x - 1050 + y + 2 * z));
        if (x == 1200 && y == 1 && z == 1)
          v = 1e-40; // a float32 subnormal
        f.at(x, y, z) = v;
      }
  Field as32 = f;
  as32.to_float32();
  Field as64 = f;
  as64.rho = as32.rho; // the same values, handed over as float64
  const phew_params p = make_params(0.0, 1.0, 1, 1e-38);
  auto a = run(as32, p), b = run(as64, p);
  ASSERT_EQ(a->status, PHEW_OK) << a->context.message;
  ASSERT_EQ(a->n_haloes(), 1);
  ASSERT_GE(a->n_clumps(), 2);
  expect_identical(*a, *b);
  BigSum all;
  for (double v : as64.rho)
    all.add(v);
  EXPECT_NEAR(a->halo_row(0).mass, all.value(), 1e-15 * all.value());
}

TEST(ExtremeValues, TinyCellsKeepEveryDigit)
{
  Field f = smoothed_noise(12, 10, 8, 4, 2);
  const phew_params p = make_params(quantile(f, 0.6), 1.0, 1, quantile(f, 0.8));
  auto unit = run(f, p);
  check_consistency(f, p, *unit);
  Field g = f;
  g.spacing[0] = 1e-100;
  g.spacing[1] = 2e-100;
  g.spacing[2] = 0.5e-100; // cell volume 1e-300, near the bottom of the range
  auto tiny = run(g, p);
  ASSERT_EQ(tiny->status, PHEW_OK) << tiny->context.message;
  ASSERT_EQ(tiny->n_clumps(), unit->n_clumps());
  ASSERT_GT(unit->n_clumps(), 2);
  for (int64_t i = 0; i < unit->n_clumps(); ++i) {
    const phew_object &a = unit->clump_row(i), &b = tiny->clump_row(i);
    EXPECT_NEAR(b.mass, a.mass * 1e-300, 1e-15 * a.mass * 1e-300);
    EXPECT_NEAR(b.volume, (double)a.n_cells * 1e-300, 1e-15 * (double)a.n_cells * 1e-300);
    EXPECT_EQ(b.mean_density, a.mean_density);
    EXPECT_NEAR(b.center_of_mass[0], a.center_of_mass[0] * 1e-100, 1e-12 * 12e-100);
  }
}

// Structures left out by the mass threshold need no representable mass: no error.
TEST(ExtremeValues, MassThresholdComparesBeyondTheRange)
{
  Field f(8, 8, 8, 0.0);
  f.at(1, 1, 1) = 1e-300;
  f.at(6, 6, 6) = 1.0;
  f.spacing[0] = f.spacing[1] = f.spacing[2] = 1e-5; // masses 1e-315 (subnormal) and 1e-15
  auto r = run(f, make_params(0.0, 2.0, 0, 0.0, 1e-200));
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  ASSERT_EQ(r->n_clumps(), 1);
  EXPECT_NEAR(r->clump_row(0).mass, 1e-15, 1e-30);
  EXPECT_EQ(r->clump[(size_t)f.id(1, 1, 1)], -1);
  auto all = run(f, make_params(0.0));
  EXPECT_EQ(all->status, PHEW_ERROR_DATA) << "without the threshold the 1e-315 mass must be reported";
}

// Relevance is +inf where the key saddle is 0 (an isolated clump at threshold 0).
TEST(ExtremeValues, IsolatedClumpAtThresholdZeroHasInfiniteRelevance)
{
  const Field f = line({0, 1, 3, 1, 0});
  auto r = run(f, make_params(0.0));
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  ASSERT_EQ(r->n_clumps(), 1);
  EXPECT_EQ(r->clump_row(0).key_saddle_density, 0.0);
  EXPECT_TRUE(std::isinf(r->clump_row(0).relevance));
  EXPECT_EQ(r->clump_row(0).mass, 5.0);
}

TEST(ExtremeValues, GridsBeyondTheDoubleRangeAreRefused)
{
  Field f = smoothed_noise(8, 8, 8, 5, 1);
  f.origin[1] = 1e308;
  f.spacing[1] = 1e307; // the far corner is 1.08e308 + ...: still finite? 1e308 + 8e307 = inf
  auto r = run(f, make_params(quantile(f, 0.5)));
  EXPECT_EQ(r->status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(r->context.message).find("beyond the double range along y"), std::string::npos)
      << r->context.message;
}

// ---- sizes ------------------------------------------------------------------------------------

TEST(Sizes, CheckedProduct)
{
  int64_t p = 7;
  const int64_t ok[3] = {1 << 20, 1 << 20, 1 << 20};
  EXPECT_EQ(phew_checked_product(ok, 3, &p), 0);
  EXPECT_EQ(p, (int64_t)1 << 60);
  const int64_t big[3] = {1, 3, 6148914691236517206};
  p = 7;
  EXPECT_EQ(phew_checked_product(big, 3, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(p, 7);
  const int64_t wraps[3] = {4294967297, 4294967295, 1};
  EXPECT_EQ(phew_checked_product(wraps, 3, &p), PHEW_ERROR_ARGUMENT);
  const int64_t negative[2] = {-2, -3};
  EXPECT_EQ(phew_checked_product(negative, 2, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_checked_product(nullptr, 0, &p), 0);
  EXPECT_EQ(p, 1);
}

// The block that once overflowed the watershed kernel's heap: refused before any access.
TEST(Sizes, GridsWhoseCellCountOverflowsAreRefused)
{
  double rho[3] = {1, 2, 1};
  int64_t labels[3][3];
  const int64_t dims[][3] = {
      {1, 3, 6148914691236517206}, {4294967297, 4294967295, 1}, {INT64_MAX, 1, 1}, {((int64_t)1 << 53) + 1, 2, 1}};
  for (const auto &d : dims) {
    phew_input in{};
    phew_grid_init_whole(&in.grid, d[0], d[1], d[2]);
    int64_t count;
    if (phew_checked_product(d, 3, &count) == 0) // a count that fits: pass a one-cell block of
      for (int a = 0; a < 3; ++a)                // it, as large as the label arrays really are
        in.grid.stored_dims[a] = in.grid.active_dims[a] = 1;
    in.density = rho;
    in.density_type = PHEW_FLOAT64;
    phew_labels l{labels[0], labels[1], labels[2], nullptr};
    phew_params p = make_params(0.5);
    phew_context context;
    phew_context_init(&context);
    phew_clump_result r{};
    EXPECT_EQ(phew_find_clumps(&context, &in, &p, &l, &r), PHEW_ERROR_ARGUMENT);
    EXPECT_TRUE(std::string(context.message).find("overflows") != std::string::npos ||
                std::string(context.message).find("at most 2^53") != std::string::npos)
        << context.message;
    phew_clump_result_free(&r);
    phew_grid g;
    const int per[3] = {0, 0, 0};
    EXPECT_EQ(phew_grid_block(nullptr, &g, d, per, 3, 1), PHEW_ERROR_ARGUMENT);
    phew_context exchange;
    phew_context_init(&exchange);
    EXPECT_EQ(phew_exchange_ghosts(&exchange, &in.grid, rho, sizeof(double)), PHEW_ERROR_ARGUMENT);
    EXPECT_STRNE(exchange.message, "");
  }
}

// Offsets and sizes near INT64_MAX must not overflow the block checks.
TEST(Sizes, HostileBlockOffsetsAreRefused)
{
  double rho[8] = {0};
  int64_t labels[3][8];
  const int64_t hostile[] = {INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, (int64_t)1 << 62};
  for (int field = 0; field < 4; ++field)
    for (const int64_t v : hostile) {
      phew_input in{};
      phew_grid_init_whole(&in.grid, 2, 2, 2);
      int64_t *target[4] = {in.grid.stored_offset, in.grid.stored_dims, in.grid.active_offset, in.grid.active_dims};
      target[field][1] = v;
      in.density = rho;
      in.density_type = PHEW_FLOAT64;
      phew_labels l{labels[0], labels[1], labels[2], nullptr};
      phew_params p = make_params(0.5);
      phew_context context;
      phew_context_init(&context);
      phew_clump_result r{};
      EXPECT_EQ(phew_find_clumps(&context, &in, &p, &l, &r), PHEW_ERROR_ARGUMENT) << field << " " << v;
      phew_clump_result_free(&r);
    }
}

} // namespace
