// The core against the independent reference implementation (phew_reference.cpp) on random
// fields: periodic and not (also per axis), float32 and float64, non-cubic boxes, odd spacing
// and origin, several density, relevance, saddle and mass thresholds. Labels, catalogues,
// dendrogram and statistics must match.
#include "phew_reference.h"

#include <cmath>

using namespace phewtest;

namespace {

struct RefCase {
  std::string name;
  int64_t n[3];
  int kind; // 0 smoothed (2 passes), 1 white, 2 quantized, 3 lognormal (high dynamic range)
  int periodic[3];
  bool f32;
  double threshold_quantile;
  double relevance;
  int saddle_merging;
  double saddle_quantile; // saddle threshold as a quantile of the field
  double mass_fraction;   // mass threshold as a fraction of the mean test-cell mass per peak
  bool odd_geometry;      // non-unit spacing and a shifted origin
  uint64_t seed;
};

void PrintTo(const RefCase &k, std::ostream *os) { *os << k.name; }

Field make(const RefCase &k)
{
  Field f;
  switch (k.kind) {
  case 0: f = smoothed_noise(k.n[0], k.n[1], k.n[2], k.seed, 2); break;
  case 1: f = white_noise(k.n[0], k.n[1], k.n[2], k.seed); break;
  case 2:
    f = smoothed_noise(k.n[0], k.n[1], k.n[2], k.seed, 1);
    for (double &v : f.rho)
      v = std::floor(v * 20.0) * 0.25;
    break;
  default: {
    f = smoothed_noise(k.n[0], k.n[1], k.n[2], k.seed, 2);
    // exp of a field with a spread of a few: densities over ~6 orders of magnitude
    for (double &v : f.rho)
      v = std::exp(60.0 * (v - 0.5));
    break;
  }
  }
  for (int d = 0; d < 3; ++d)
    f.periodic[d] = k.periodic[d];
  if (k.odd_geometry) {
    const double spacing[3] = {0.5, 2.0, 0.75}, origin[3] = {-3.25, 10.0, 0.125};
    for (int d = 0; d < 3; ++d) {
      f.spacing[d] = spacing[d];
      f.origin[d] = origin[d];
    }
  }
  if (k.f32)
    f.to_float32();
  return f;
}

phew_params params_for(const RefCase &k, const Field &f)
{
  const double t = quantile(f, k.threshold_quantile);
  phew_params p = make_params(t, k.relevance, k.saddle_merging, quantile(f, k.saddle_quantile));
  if (k.mass_fraction > 0) {
    double m = 0;
    int64_t cells = 0;
    for (double v : f.rho)
      if (v > t) {
        m += v;
        ++cells;
      }
    const int64_t peaks = (int64_t)brute_force_peaks(f, t).size();
    p.mass_threshold = k.mass_fraction * m * f.cell_volume() / (double)std::max<int64_t>(peaks, 1);
  }
  return p;
}

std::vector<RefCase> cases()
{
  std::vector<RefCase> v;
  // a spread of small, non-cubic boxes: many combinations, quickly
  const int periodic_sets[4][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 0}, {0, 1, 1}};
  const double relevances[] = {1.0, 1.3, 2.0, 3.0};
  int i = 0;
  for (int kind = 0; kind < 4; ++kind)
    for (int ps = 0; ps < 4; ++ps)
      for (int f32 = 0; f32 < 2; ++f32) {
        RefCase k;
        k.n[0] = 23;
        k.n[1] = 17;
        k.n[2] = 12;
        k.kind = kind;
        for (int d = 0; d < 3; ++d)
          k.periodic[d] = periodic_sets[ps][d];
        k.f32 = f32;
        k.threshold_quantile = kind == 1 ? 0.25 : 0.35 + 0.1 * (i % 4);
        k.relevance = relevances[i % 4];
        k.saddle_merging = (i / 2) % 2;
        k.saddle_quantile = 0.6 + 0.1 * (i % 3);
        k.mass_fraction = (i % 5 == 0) ? 0.3 : 0.0;
        k.odd_geometry = i % 3 == 1;
        k.seed = 100 + (uint64_t)i;
        static const char *kinds[] = {"Smoothed", "White", "Quantized", "Lognormal"};
        k.name = std::string(kinds[kind]) + "_P" + std::to_string(periodic_sets[ps][0]) +
                 std::to_string(periodic_sets[ps][1]) + std::to_string(periodic_sets[ps][2]) + (f32 ? "_f32" : "_f64") +
                 "_" + std::to_string(i);
        v.push_back(k);
        ++i;
      }
  // full-size fields
  v.push_back({"Smoothed64Periodic", {64, 64, 64}, 0, {1, 1, 1}, false, 0.5, 2.0, 1, 0.8, 0.0, false, 7});
  v.push_back({"Smoothed64OpenFloat32", {64, 64, 64}, 0, {0, 0, 0}, true, 0.4, 1.2, 1, 0.7, 0.2, true, 8});
  v.push_back({"White64Periodic", {64, 64, 64}, 1, {1, 1, 1}, false, 0.3, 1.5, 1, 0.6, 0.0, false, 9});
  v.push_back({"Quantized64Open", {64, 48, 40}, 2, {0, 0, 0}, false, 0.5, 1.0, 1, 0.75, 0.0, false, 10});
  v.push_back({"Lognormal64Periodic", {64, 64, 64}, 3, {1, 1, 1}, false, 0.5, 3.0, 1, 0.9, 0.0, false, 11});
  return v;
}

class Reference : public ::testing::TestWithParam<RefCase> {};

TEST_P(Reference, CoreMatchesTheReference)
{
  const RefCase &k = GetParam();
  const Field f = make(k);
  const phew_params p = params_for(k, f);
  SCOPED_TRACE("threshold " + std::to_string(p.density_threshold) + ", relevance " +
               std::to_string(p.relevance_threshold) + ", saddle merging " + std::to_string(p.saddle_merging) + " at " +
               std::to_string(p.saddle_threshold) + ", mass threshold " + std::to_string(p.mass_threshold));
  auto core = run(f, p);
  ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
  const phewref::Result ref = phewref::find_clumps(f, p);
  ASSERT_GT(ref.n_peaks, 3) << "a dull field";
  phewref::expect_matches(f, *core, ref);
  check_consistency(f, p, *core);
}

// The same fields through the explicit-graph view (cells stored in a shuffled order, so local
// indices are not global ids): the same answers as the reference. 64^3 cases are left to the
// grid test above, except one.
class ReferenceGraph : public ::testing::TestWithParam<RefCase> {};

std::vector<RefCase> graph_cases()
{
  std::vector<RefCase> v;
  for (const RefCase &k : cases())
    if (k.n[0] * k.n[1] * k.n[2] < 30000 || k.name == "Smoothed64OpenFloat32")
      v.push_back(k);
  return v;
}

TEST_P(ReferenceGraph, GraphViewMatchesTheReference)
{
  const RefCase &k = GetParam();
  const Field f = make(k);
  const phew_params p = params_for(k, f);
  auto core = run_graph(f, p, 99 + k.seed);
  ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
  const phewref::Result ref = phewref::find_clumps(f, p);
  phewref::expect_matches(f, *core, ref);
}

INSTANTIATE_TEST_SUITE_P(Fields, Reference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<RefCase> &info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Fields, ReferenceGraph, ::testing::ValuesIn(graph_cases()),
                         [](const ::testing::TestParamInfo<RefCase> &info) { return info.param.name; });

} // namespace
