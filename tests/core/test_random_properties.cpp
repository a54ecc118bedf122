// Properties on seeded random fields of 64^3 cells (smoothed noise with many peaks and a
// realistic structure, white noise, quantized noise full of ties), periodic and not:
//  - the peaks are exactly the cells higher than all their 26 neighbours (brute force);
//  - every test cell reaches its peak along a strictly ascending path of highest neighbours;
//  - relevance 1 with saddle merging at the density threshold gives haloes equal to the
//    connected components of the test cells (independent breadth-first search);
//  - shuffling the order in which peaks are visited while merging changes nothing.
#include "phew_test_util.h"

#include <cmath>
#include <set>

using namespace phewtest;

namespace {

struct FieldCase {
  const char *name;
  int kind; // 0 smoothed, 1 white, 2 quantized smoothed
  bool periodic;
  bool f32;
  double quantile; // density threshold
};

void PrintTo(const FieldCase &k, std::ostream *os) { *os << k.name; }

Field make_field(const FieldCase &k, int64_t n = 64)
{
  Field f;
  switch (k.kind) {
  case 0: f = smoothed_noise(n, n, n, 1001, 2); break;
  case 1: f = white_noise(n, n, n, 1002); break;
  default:
    f = smoothed_noise(n, n, n, 1003, 1);
    for (double &v : f.rho)
      v = std::floor(v * 24.0); // ~ a dozen distinct levels: plateaus everywhere
    break;
  }
  f.set_periodic(k.periodic);
  if (k.f32)
    f.to_float32();
  return f;
}

const FieldCase kCases[] = {
    {"SmoothedPeriodic", 0, true, false, 0.5},    {"SmoothedOpen", 0, false, false, 0.3},
    {"SmoothedFloat32", 0, true, true, 0.6},      {"WhiteOpen", 1, false, false, 0.2},
    {"WhitePeriodicFloat32", 1, true, true, 0.5}, {"QuantizedPeriodic", 2, true, false, 0.4},
    {"QuantizedOpen", 2, false, false, 0.6},
};

class RandomField : public ::testing::TestWithParam<FieldCase> {
protected:
  void SetUp() override
  {
    f = make_field(GetParam());
    threshold = quantile(f, GetParam().quantile);
  }
  Field f;
  double threshold = 0;
};

TEST_P(RandomField, PeaksAreTheLocalMaximaOfTheTotalOrder)
{
  const phew_params p = make_params(threshold);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  const std::vector<int64_t> brute = brute_force_peaks(f, threshold);
  ASSERT_GT(brute.size(), 20u) << "the field should have many peaks";
  EXPECT_EQ(r->result.stats.n_peaks, (int64_t)brute.size());
  std::set<int64_t> labels;
  for (int64_t v : r->patch)
    if (v >= 0)
      labels.insert(v);
  EXPECT_EQ(labels.size(), brute.size()) << "distinct PeakPatchId values";
  EXPECT_TRUE(labels == std::set<int64_t>(brute.begin(), brute.end())) << "the patch labels are not the peaks";
}

TEST_P(RandomField, EveryCellClimbsToItsPeak)
{
  const phew_params p = make_params(threshold);
  auto r = run(f, p);
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  int64_t checked = 0;
  for (int64_t c = 0; c < f.size(); ++c) {
    if (!(f.rho[(size_t)c] > threshold)) {
      ASSERT_EQ(r->patch[(size_t)c], -1) << "cell " << c;
      continue;
    }
    int64_t x = c, steps = 0;
    for (;;) {
      const int64_t up = highest_neighbour(f, x);
      if (up == x)
        break;
      ASSERT_TRUE(higher(f, up, x));
      ASSERT_GT(f.rho[(size_t)up], threshold);
      x = up;
      ASSERT_LT(++steps, f.size()) << "no end to the climb from " << c;
    }
    ASSERT_EQ(r->patch[(size_t)c], x) << "cell " << c << " climbs to " << x;
    ++checked;
  }
  EXPECT_EQ(checked, r->result.stats.n_test_cells);
}

TEST_P(RandomField, HaloesAreConnectedComponentsAtRelevanceOne)
{
  const phew_params p = make_params(threshold, 1.0, 1, threshold);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  std::vector<int64_t> component;
  const int64_t n = connected_components(f, threshold, component);
  ASSERT_GT(n, 0);
  EXPECT_EQ(r->result.stats.n_noise_discarded, 0);
  EXPECT_EQ(r->result.stats.n_clumps_found, r->result.stats.n_peaks) << "relevance >= 1 always";
  EXPECT_EQ(r->n_haloes(), n);
  EXPECT_EQ(r->result.stats.n_haloes_found, n);
  EXPECT_TRUE(same_partition(r->halo, component));
  int64_t roots = 0;
  for (int64_t i = 0; i < r->result.n_nodes; ++i)
    roots += r->result.nodes[i].parent_id < 0;
  EXPECT_EQ(roots, n);
  // every halo is isolated now: its key saddle is the threshold
  for (int64_t h = 0; h < r->n_haloes(); ++h)
    EXPECT_EQ(r->halo_row(h).key_saddle_density, threshold) << "halo " << h;
}

TEST_P(RandomField, ShuffledPeakOrderGivesIdenticalResults)
{
  for (int saddle = 0; saddle < 2; ++saddle) {
    // a relevance threshold that merges a good fraction of the peaks over several levels
    phew_params p = make_params(threshold, 1.5, saddle, threshold + 0.3 * (quantile(f, 0.99) - threshold));
    auto base = run(f, p);
    check_consistency(f, p, *base);
    EXPECT_GT(base->result.stats.noise_levels, 0);
    for (unsigned seed : {1u, 2u, 77u, 0xdeadbeefu}) {
      p.peak_order_seed = seed;
      auto shuffled = run(f, p);
      SCOPED_TRACE("seed " + std::to_string(seed) + (saddle ? " with saddle merging" : ""));
      expect_identical(*base, *shuffled);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fields64, RandomField, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FieldCase> &info) { return info.param.name; });

TEST(RandomFieldSmallAxes, PeaksAndComponentsOnThinPeriodicBoxes)
{
  // axes of one and two cells: periodic neighbours repeat or coincide with the cell itself
  const int64_t dims[][3] = {{1, 40, 30}, {2, 17, 9}, {64, 2, 1}, {3, 3, 50}};
  for (const auto &d : dims)
    for (int periodic = 0; periodic < 2; ++periodic) {
      Field f = white_noise(d[0], d[1], d[2], 555 + (uint64_t)d[0] * 7 + (uint64_t)d[2]);
      f.set_periodic(periodic);
      const double t = quantile(f, 0.3);
      SCOPED_TRACE(std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]) +
                   (periodic ? " periodic" : ""));
      const phew_params p = make_params(t, 1.0, 1, t);
      auto r = run(f, p);
      check_consistency(f, p, *r);
      EXPECT_EQ(r->result.stats.n_peaks, (int64_t)brute_force_peaks(f, t).size());
      std::vector<int64_t> component;
      EXPECT_EQ(r->n_haloes(), connected_components(f, t, component));
      EXPECT_TRUE(same_partition(r->halo, component));
    }
}

} // namespace

namespace {

TEST(HaloProperties, DependOnlyOnTheHalosCells)
{
  // With saddle merging at the density threshold the haloes are the connected components,
  // whatever the relevance threshold; only their split into clumps changes. A halo's
  // properties (here a large halo wrapping around a periodic box) must not change with it.
  Field f = smoothed_noise(23, 17, 12, 126, 2);
  for (double &v : f.rho)
    v = std::exp(60.0 * (v - 0.5));
  f.set_periodic(true);
  const double t = quantile(f, 0.55);
  std::unique_ptr<phewtest::Run> base;
  for (double R : {1.0, 2.0, 5.0}) {
    const phew_params p = make_params(t, R, 1, t);
    auto r = run(f, p);
    check_consistency(f, p, *r);
    if (!base) {
      base = std::move(r);
      ASSERT_GT(base->n_haloes(), 0);
      continue;
    }
    SCOPED_TRACE("relevance " + std::to_string(R) + ": " + std::to_string(r->n_clumps()) + " clumps vs " +
                 std::to_string(base->n_clumps()));
    ASSERT_TRUE(r->halo == base->halo) << "the haloes should be the same cells";
    for (int64_t h = 0; h < r->n_haloes(); ++h) {
      const phew_object &a = base->halo_row(h), &b = r->halo_row(h);
      EXPECT_EQ(a.n_cells, b.n_cells);
      EXPECT_NEAR(a.mass, b.mass, 1e-12 * a.mass);
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(a.center_of_mass[d], b.center_of_mass[d], 1e-9 * (double)f.n[d])
            << "halo " << h << " (" << a.n_cells << " cells), axis " << d;
    }
  }
}

} // namespace
