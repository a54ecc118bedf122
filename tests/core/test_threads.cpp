// Threads (issue 29): the grid and AMR stages (the mean density, the watershed, the saddles,
// the catalogue's sums and the labels) give bit-identical labels, catalogues, dendrograms and
// statistics on 1, 2, 3, 4 and 8 threads, on fields with many peaks, ties and plateaus across
// the threads' z planes, open and periodic, float32 and float64, and on fields whose
// structures span so many decades that part of their sums leave the fixed-point path; and
// float32 AMR leaves sum as their float64 copies do.
#include "amr_reference.h"
#include "phew_test_util.h"
extern "C" {
#include "threads.h" // threads_set_core_limit: more threads than this machine's cores
}

#include <cmath>

using namespace phewtest;

namespace {

const int kThreads[] = {2, 3, 4, 8};

// Runs at any thread count are allowed on any machine while a test runs.
class Threads : public ::testing::Test {
protected:
  void SetUp() override { threads_set_core_limit(8); }
  void TearDown() override { threads_set_core_limit(0); }
};

Adjust with_threads(int n)
{
  return [n](phew_input &, phew_context &c) { c.n_threads = n; };
}

// The run on one thread, then every other count against it.
void expect_same_on_all_threads(const Field &f, const phew_params &p)
{
  auto one = run(f, p, -7, with_threads(1));
  ASSERT_EQ(one->status, PHEW_OK) << one->context.message;
  ASSERT_EQ(one->result.stats.n_threads, 1);
  ASSERT_GT(one->n_clumps(), 3) << "the field should have several clumps";
  for (int n : kThreads) {
    SCOPED_TRACE("threads " + std::to_string(n));
    auto many = run(f, p, -7, with_threads(n));
    EXPECT_EQ(many->result.stats.n_threads, n);
    expect_identical(*one, *many);
    EXPECT_EQ(one->result.mean_density, many->result.mean_density);
    EXPECT_EQ(one->result.stats.hash_collisions, many->result.stats.hash_collisions);
    EXPECT_EQ(one->result.stats.n_test_cells, many->result.stats.n_test_cells);
  }
}

TEST_F(Threads, SmoothedPeriodicFloat64)
{
  Field f = smoothed_noise(40, 36, 33, 2901, 2);
  f.set_periodic(true);
  expect_same_on_all_threads(f, make_params(quantile(f, 0.5), 1.02, 1, quantile(f, 0.8)));
}

TEST_F(Threads, SmoothedOpenFloat32WithAutomaticThresholds)
{
  Field f = smoothed_noise(37, 31, 29, 2902, 2);
  const double mid = quantile(f, 0.5), spread = quantile(f, 0.9) - mid;
  for (double &v : f.rho)
    v = std::exp(2.0 * (v - mid) / spread); // a contrast at which 10x the mean leaves peaks
  f.to_float32();
  phew_params p = make_params(-1.0, 1.2, 1, -1.0); // from the mean density, summed on threads
  expect_same_on_all_threads(f, p);
}

TEST_F(Threads, PlateausAcrossPlanes)
{
  Field f = smoothed_noise(30, 30, 40, 2903, 1);
  quantize(f, 12); // ties and plateaus spanning many z planes, hence many tasks
  f.set_periodic(true);
  expect_same_on_all_threads(f, make_params(quantile(f, 0.4), 1.2, 1, quantile(f, 0.7)));
}

// Densities over some 90 decades: in every structure, cells far below the peak leave the
// fixed-point sums for the general ones; the masses still match the field's (check_consistency)
// and do not depend on the threads.
TEST_F(Threads, StructuresSpanningManyDecades)
{
  Field f = smoothed_noise(32, 30, 28, 2904, 2);
  const double lo = quantile(f, 0.0), hi = quantile(f, 1.0);
  for (double &v : f.rho)
    v = std::exp(((v - lo) / (hi - lo)) * 200.0 - 100.0); // 1e-43 .. 1e43
  f.set_periodic(true);
  const phew_params p = make_params(quantile(f, 0.2), 1.5, 1, quantile(f, 0.6));
  auto one = run(f, p, -7, with_threads(1));
  ASSERT_EQ(one->status, PHEW_OK) << one->context.message;
  check_consistency(f, p, *one);
  expect_same_on_all_threads(f, p);
}

// ---- AMR --------------------------------------------------------------------------------

// Level 0: 16^3 in eight blocks; level 1: four blocks; level 2: two blocks inside them.
amrref::Amr three_levels(bool periodic)
{
  amrref::Amr a;
  for (int d = 0; d < 3; ++d) {
    a.level0_dims[d] = 16;
    a.periodic[d] = periodic;
  }
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x)
        a.add(0, 8 * x, 8 * y, 8 * z, 8, 8, 8);
  a.add(1, 2, 2, 2, 10, 8, 6);
  a.add(1, 16, 4, 10, 12, 12, 8);
  a.add(1, 4, 20, 20, 8, 10, 10);
  a.add(1, 20, 20, 2, 10, 6, 12);
  a.add(2, 6, 6, 6, 8, 8, 6);
  a.add(2, 36, 10, 22, 12, 10, 8);
  return a;
}

// A density of every block cell: Gaussians around a few centres plus noise, at the cells'
// centres (in level-0 cells).
std::vector<double> amr_density(const amrref::Amr &a, uint64_t seed)
{
  SplitMix g(seed);
  const double centre[5][3] = {{4, 4, 4}, {11, 6, 8}, {5, 12, 13}, {13, 13, 3}, {9, 9, 9}};
  std::vector<double> rho;
  for (const amrref::BlockCell &c : amrref::block_cells(a)) {
    const double scale = std::ldexp(1.0, -c.level);
    double v = 0.05 * g.uniform();
    for (const auto &k : centre) {
      double r2 = 0.0;
      for (int d = 0; d < 3; ++d) {
        const double x = (c.idx[d] + 0.5) * scale - k[d];
        r2 += x * x;
      }
      v += std::exp(-r2 / 6.0);
    }
    rho.push_back(v);
  }
  return rho;
}

void expect_same_amr_on_all_threads(const amrref::Amr &a, const std::vector<double> &rho, bool f32)
{
  const phew_params p = make_params(0.3, 1.2, 1, 0.6);
  auto one = amrref::run_amr(a, rho, p, f32, -7, with_threads(1));
  ASSERT_EQ(one->status, PHEW_OK) << one->context.message;
  ASSERT_GT(one->n_clumps(), 2);
  for (int n : kThreads) {
    SCOPED_TRACE("threads " + std::to_string(n));
    auto many = amrref::run_amr(a, rho, p, f32, -7, with_threads(n));
    expect_identical(*one, *many);
    EXPECT_EQ(one->result.mean_density, many->result.mean_density);
  }
}

TEST_F(Threads, AmrThreeLevelsPeriodic)
{
  const amrref::Amr a = three_levels(true);
  expect_same_amr_on_all_threads(a, amr_density(a, 2905), false);
}

TEST_F(Threads, AmrThreeLevelsOpenFloat32)
{
  const amrref::Amr a = three_levels(false);
  std::vector<double> rho = amr_density(a, 2906);
  expect_same_amr_on_all_threads(a, rho, true);
  // float32 leaves are summed by chunks of a run (cell_sums.c), float64 ones cell by cell:
  // the same values give the same catalogue
  for (double &v : rho)
    v = (double)(float)v;
  const phew_params p = make_params(0.3, 1.2, 1, 0.6);
  expect_identical(*amrref::run_amr(a, rho, p, true, -7, with_threads(2)),
                   *amrref::run_amr(a, rho, p, false, -7, with_threads(2)));
}

} // namespace
