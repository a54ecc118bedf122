// Automatic thresholds (issue 12): a negative density threshold is 10 x the mean density of
// the input, a negative saddle threshold 2.5 x the density threshold used, and a relevance
// threshold below 1 is refused.
//
// The mean density is checked against a reference written here with plain loops in long
// double: grids (the mean of the cells), explicit graphs (density x volume over volume; no
// volumes: the plain mean), AMR leaves (density x leaf volume over leaf volume, the volumes of
// amr_reference's brute-force leaf graph; covered cells hold a huge density that must not
// count) and particles (total mass over the box volume, or over the sum of mass / density).
// They agree to 1e-12 relative, not bit for bit: the core sums exactly and rounds once (to a
// 64-bit mantissa, then the quotient to a double), the reference rounds at every addition in
// long double; both are within a few units in the last place of the true mean. What must hold
// bit for bit: density_threshold_used == 10 * mean_density and saddle_threshold_used == 2.5 *
// density_threshold_used (the core's own arithmetic), and the labels and catalogue of a run
// equal those of a run given these thresholds as numbers.
#include "amr_reference.h"
#include "phew_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using phewtest::Field;
using phewtest::make_params;
using phewtest::Run;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A noisy background of about 1 with Gaussian blobs far above ten times the mean, every
// other one with a lower companion 3.5 cells away (substructure for saddle merging).
Field skewed_field(int64_t nx, int64_t ny, int64_t nz, uint64_t seed)
{
  Field f(nx, ny, nz);
  phewtest::SplitMix g(seed);
  for (double &v : f.rho)
    v = 0.5 + g.uniform();
  for (int k = 0; k < 8; ++k) {
    const double c[3] = {g.uniform() * nx, g.uniform() * ny, g.uniform() * nz};
    const double amplitude = 150.0 + 250.0 * g.uniform(), sigma = 0.7 + 0.3 * g.uniform();
    for (int pair = 0; pair < 1 + k % 2; ++pair)
      for (int64_t i = 0; i < f.size(); ++i) {
        int64_t x[3];
        f.coords(i, x);
        double r2 = 0.0;
        for (int d = 0; d < 3; ++d) {
          const double dx = (double)x[d] - c[d] - (d == 0 ? 3.5 * pair : 0.0);
          r2 += dx * dx;
        }
        f.rho[(size_t)i] += amplitude * (pair ? 0.8 : 1.0) * std::exp(-0.5 * r2 / (sigma * sigma));
      }
  }
  return f;
}

void expect_relative(double got, long double want, const char *what)
{
  EXPECT_LE(std::fabs((long double)got - want), 1e-12L * std::fabs(want))
      << what << ": " << got << " vs " << (double)want;
}

// The automatic thresholds of r are those of its mean density, bit for bit.
void expect_automatic(const Run &r, bool saddle_merging)
{
  EXPECT_EQ(r.result.density_threshold_used, 10.0 * r.result.mean_density);
  if (saddle_merging) {
    EXPECT_EQ(r.result.saddle_threshold_used, 2.5 * r.result.density_threshold_used);
  } else {
    EXPECT_TRUE(std::isnan(r.result.saddle_threshold_used)) << "no saddle merging, no saddle threshold";
  }
}

// Labels, catalogue and dendrogram of two runs are the same.
void expect_same_run(const Run &a, const Run &b)
{
  EXPECT_EQ(a.patch, b.patch);
  EXPECT_EQ(a.clump, b.clump);
  EXPECT_EQ(a.halo, b.halo);
  ASSERT_EQ(a.result.n_clumps, b.result.n_clumps);
  ASSERT_EQ(a.result.n_haloes, b.result.n_haloes);
  ASSERT_EQ(a.result.n_nodes, b.result.n_nodes);
  for (int64_t k = 0; k < a.result.n_clumps; ++k) {
    EXPECT_EQ(a.result.clumps[k].peak_id, b.result.clumps[k].peak_id);
    EXPECT_EQ(a.result.clumps[k].mass, b.result.clumps[k].mass);
    EXPECT_EQ(a.result.clumps[k].key_saddle_density, b.result.clumps[k].key_saddle_density);
  }
  for (int64_t k = 0; k < a.result.n_haloes; ++k)
    EXPECT_EQ(a.result.haloes[k].mass, b.result.haloes[k].mass);
  EXPECT_EQ(a.result.mean_density, b.result.mean_density) << "the mean density is computed in every run";
}

// The same parameters with the thresholds r used given as numbers.
phew_params given_thresholds(phew_params p, const Run &r)
{
  p.density_threshold = r.result.density_threshold_used;
  if (p.saddle_merging)
    p.saddle_threshold = r.result.saddle_threshold_used;
  return p;
}

TEST(AutomaticThresholds, GridIsTenTimesTheMeanDensity)
{
  struct Case {
    bool f32, periodic;
  } cases[] = {{false, false}, {true, true}};
  uint64_t seed = 7;
  for (const Case &k : cases) {
    SCOPED_TRACE(k.f32 ? "float32, periodic" : "float64, open");
    Field f = skewed_field(24, 20, 16, ++seed);
    f.set_periodic(k.periodic);
    f.spacing[0] = 0.5; // the cell volume is a common factor: it must not matter
    f.spacing[2] = 3.0;
    if (k.f32)
      f.to_float32();
    long double sum = 0.0L;
    for (double v : f.rho)
      sum += v;
    const long double mean = sum / (long double)f.size();
    for (int merging = 0; merging < 2; ++merging) {
      SCOPED_TRACE(merging ? "saddle merging" : "no saddle merging");
      const phew_params p = make_params(PHEW_THRESHOLD_AUTOMATIC, 1.5, merging, PHEW_THRESHOLD_AUTOMATIC);
      auto r = phewtest::run(f, p);
      ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
      expect_relative(r->result.mean_density, mean, "mean density");
      expect_relative(r->result.density_threshold_used, 10.0L * mean, "density threshold");
      expect_automatic(*r, merging);
      EXPECT_GT(r->result.n_clumps, 2) << "the field should have clumps above 10 x its mean";
      int64_t above = 0;
      for (double v : f.rho)
        above += v > r->result.density_threshold_used;
      EXPECT_EQ(r->result.stats.n_test_cells, above);
      if (merging) {
        EXPECT_LT(r->result.n_haloes, r->result.n_clumps) << "the automatic saddle threshold merges";
      }
      phewtest::check_consistency(f, given_thresholds(p, *r), *r);
      auto given = phewtest::run(f, given_thresholds(p, *r));
      ASSERT_EQ(given->status, PHEW_OK) << given->context.message;
      expect_same_run(*r, *given);
      EXPECT_EQ(given->result.density_threshold_used, r->result.density_threshold_used);
      // the same cells as an explicit graph: the same mean (to rounding) and thresholds
      auto graph = phewtest::run_graph(f, p, 99);
      ASSERT_EQ(graph->status, PHEW_OK) << graph->context.message;
      expect_relative(graph->result.mean_density, mean, "mean density of the graph view");
      expect_automatic(*graph, merging);
    }
  }
}

// An explicit graph (a chain) with cell volumes of several decades: density x volume over
// volume; without volumes, the plain mean.
TEST(AutomaticThresholds, GraphWeighsByCellVolume)
{
  const int64_t n = 300;
  phewtest::SplitMix g(5);
  std::vector<double> rho((size_t)n), volume((size_t)n);
  std::vector<int64_t> id((size_t)n), offsets((size_t)n + 1), neighbours;
  for (int64_t i = 0; i < n; ++i) {
    // spikes of 1e5 on a background of 1: far above ten times any weighted mean
    rho[(size_t)i] = i % 30 == 15 ? 1e5 * (1.0 + g.uniform()) : 1.0 + g.uniform();
    volume[(size_t)i] = std::exp(6.0 * (g.uniform() - 0.5));
    id[(size_t)i] = 1000 + 3 * i;
    offsets[(size_t)i] = (int64_t)neighbours.size();
    if (i > 0)
      neighbours.push_back(i - 1);
    if (i + 1 < n)
      neighbours.push_back(i + 1);
  }
  offsets[(size_t)n] = (int64_t)neighbours.size();
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = n;
  in.graph.global_id = id.data();
  in.graph.offsets = offsets.data();
  in.graph.neighbours = neighbours.data();
  in.density = rho.data();
  in.density_type = PHEW_FLOAT64;
  const phew_params p = make_params(PHEW_THRESHOLD_AUTOMATIC, 1.0, 1, PHEW_THRESHOLD_AUTOMATIC);
  for (int with_volumes = 0; with_volumes < 2; ++with_volumes) {
    SCOPED_TRACE(with_volumes ? "volumes" : "no volumes");
    in.graph.volume = with_volumes ? volume.data() : nullptr;
    long double mass = 0.0L, total = 0.0L;
    for (int64_t i = 0; i < n; ++i) {
      const long double v = with_volumes ? volume[(size_t)i] : 1.0L;
      mass += (long double)rho[(size_t)i] * v;
      total += v;
    }
    auto r = phewtest::run_input(in, p, (size_t)n);
    ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
    expect_relative(r->result.mean_density, mass / total, "mean density");
    expect_automatic(*r, true);
    EXPECT_GT(r->result.n_clumps, 1);
    auto given = phewtest::run_input(in, given_thresholds(p, *r), (size_t)n);
    ASSERT_EQ(given->status, PHEW_OK) << given->context.message;
    expect_same_run(*r, *given);
  }
}

// AMR: leaf cells weighted by their volume; covered cells (density 1e6 here) do not count.
TEST(AutomaticThresholds, AmrLeafCells)
{
  amrref::Amr a;
  for (int d = 0; d < 3; ++d) {
    a.level0_dims[d] = 6;
    a.spacing[d] = 0.25 * (d + 1);
    a.origin[d] = -1.0;
  }
  a.periodic[0] = 1;
  a.add(0, 0, 0, 0, 6, 6, 6);
  a.add(1, 2, 2, 2, 6, 4, 6); // level-0 cells 1..3 x 1..2 x 1..3
  a.add(1, 8, 8, 8, 4, 2, 2); // level-0 cells 4..5 x 4 x 4
  a.add(2, 6, 6, 6, 4, 4, 4); // inside the first level-1 block
  const amrref::LeafGraph lg = amrref::build_leaf_graph(a);
  const std::vector<amrref::BlockCell> cells = amrref::block_cells(a);
  phewtest::SplitMix g(11);
  std::vector<double> rho(cells.size());
  for (size_t c = 0; c < cells.size(); ++c)
    rho[c] = lg.leaf_of_cell[c] < 0 ? 1e6 : std::exp(7.0 * g.uniform()) * (1.0 + cells[c].level);
  long double mass = 0.0L, volume = 0.0L;
  for (int64_t leaf = 0; leaf < lg.n(); ++leaf) {
    const long double v = lg.volume[(size_t)leaf];
    mass += (long double)rho[(size_t)lg.cell_of_leaf[(size_t)leaf]] * v;
    volume += v;
  }
  ASSERT_GT(lg.n(), 216) << "refined leaves";
  ASSERT_LT(lg.n(), (int64_t)cells.size()) << "covered cells";
  const phew_params p = make_params(PHEW_THRESHOLD_AUTOMATIC, 1.2, 1, PHEW_THRESHOLD_AUTOMATIC);
  auto r = amrref::run_amr(a, rho, p);
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  expect_relative(r->result.mean_density, mass / volume, "mean density");
  expect_automatic(*r, true);
  EXPECT_GT(r->result.n_clumps, 0);
  auto given = amrref::run_amr(a, rho, given_thresholds(p, *r));
  ASSERT_EQ(given->status, PHEW_OK) << given->context.message;
  expect_same_run(*r, *given);
  // float32 densities: the mean of the values as the core reads them
  std::vector<double> rounded(rho);
  long double mass32 = 0.0L;
  for (size_t c = 0; c < rounded.size(); ++c)
    rounded[c] = (double)(float)rounded[c];
  for (int64_t leaf = 0; leaf < lg.n(); ++leaf)
    mass32 += (long double)rounded[(size_t)lg.cell_of_leaf[(size_t)leaf]] * lg.volume[(size_t)leaf];
  auto r32 = amrref::run_amr(a, rounded, p, true);
  ASSERT_EQ(r32->status, PHEW_OK) << r32->context.message;
  expect_relative(r32->result.mean_density, mass32 / volume, "float32 mean density");
}

// Particles: blobs and a background in a box, masses of a factor 3 apart.
struct Particles {
  std::vector<double> pos, mass;
  int64_t n() const { return (int64_t)mass.size(); }
};

Particles blobs(uint64_t seed)
{
  Particles p;
  phewtest::SplitMix g(seed);
  const double centres[3][3] = {{0.3, 0.3, 0.3}, {0.7, 0.6, 0.5}, {0.2, 0.8, 0.7}};
  for (int b = 0; b < 4; ++b)
    for (int k = 0; k < 300; ++k) {
      for (int d = 0; d < 3; ++d) {
        double x = b < 3 ? centres[b][d] + 0.04 * g.normal() : g.uniform();
        x -= std::floor(x); // into the unit box
        p.pos.push_back(x);
      }
      p.mass.push_back(0.5 + g.uniform());
    }
  return p;
}

struct PointsRun {
  phew_status status;
  phew_context context;
  phew_clump_result result{};
  std::vector<int64_t> patch, clump, halo;
  std::vector<double> rho;
  PointsRun() { phew_context_init(&context); }
  ~PointsRun() { phew_clump_result_free(&result); }
};

void run_points(const Particles &p, bool box, const double *density, const phew_params &params, PointsRun &r)
{
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = p.n();
  in.points.position = p.pos.data();
  in.points.mass = p.mass.data();
  in.points.has_box = box;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = 1.0;
    in.points.periodic[d] = box;
  }
  r.context.n_threads = 1;
  in.density = density;
  in.density_type = PHEW_FLOAT64;
  const size_t n = (size_t)p.n();
  r.patch.assign(n, -7);
  r.clump.assign(n, -7);
  r.halo.assign(n, -7);
  r.rho.assign(n, -7.0);
  phew_labels labels = {r.patch.data(), r.clump.data(), r.halo.data(), r.rho.data()};
  r.status = phew_find_clumps(&r.context, &in, &params, &labels, &r.result);
}

TEST(AutomaticThresholds, ParticlesInABox)
{
  const Particles p = blobs(3);
  long double total = 0.0L;
  for (double m : p.mass)
    total += m;
  const phew_params params = make_params(PHEW_THRESHOLD_AUTOMATIC, 2.0, 1, PHEW_THRESHOLD_AUTOMATIC);
  // estimated densities are in units of the mean, total mass / box volume: the mean is 1
  PointsRun est;
  run_points(p, true, nullptr, params, est);
  ASSERT_EQ(est.status, PHEW_OK) << est.context.message;
  EXPECT_EQ(est.result.mean_density, 1.0);
  EXPECT_EQ(est.result.density_threshold_used, 10.0);
  EXPECT_EQ(est.result.saddle_threshold_used, 25.0);
  EXPECT_GT(est.result.n_clumps, 2);
  int64_t above = 0;
  for (double r : est.rho)
    above += r > 10.0;
  EXPECT_EQ(est.result.stats.n_test_cells, above);
  PointsRun est_given;
  run_points(p, true, nullptr, make_params(10.0, 2.0, 1, 25.0), est_given);
  ASSERT_EQ(est_given.status, PHEW_OK) << est_given.context.message;
  EXPECT_EQ(est.clump, est_given.clump);
  EXPECT_EQ(est.halo, est_given.halo);

  // densities given (3 x the estimate in mass per volume): total mass / box volume
  std::vector<double> given(est.rho);
  for (double &r : given)
    r *= 3.0 * (double)total;
  PointsRun box;
  run_points(p, true, given.data(), params, box);
  ASSERT_EQ(box.status, PHEW_OK) << box.context.message;
  expect_relative(box.result.mean_density, total, "mean density, box volume 1");
  EXPECT_EQ(box.result.density_threshold_used, 10.0 * box.result.mean_density);
  EXPECT_EQ(box.result.saddle_threshold_used, 2.5 * box.result.density_threshold_used);

  // no box: total mass over the sum of mass / density
  long double volume = 0.0L;
  for (int64_t i = 0; i < p.n(); ++i)
    volume += (long double)p.mass[(size_t)i] / given[(size_t)i];
  PointsRun open;
  run_points(p, false, given.data(), params, open);
  ASSERT_EQ(open.status, PHEW_OK) << open.context.message;
  expect_relative(open.result.mean_density, total / volume, "mean density without a box");
  EXPECT_EQ(open.result.density_threshold_used, 10.0 * open.result.mean_density);
  EXPECT_EQ(open.result.saddle_threshold_used, 2.5 * open.result.density_threshold_used);
  EXPECT_GT(open.result.n_clumps, 0);
}

TEST(AutomaticThresholds, RelevanceBelowOneIsRefused)
{
  const Field f = skewed_field(8, 8, 8, 3);
  auto r = phewtest::run(f, make_params(PHEW_THRESHOLD_AUTOMATIC, 0.5));
  EXPECT_EQ(r->status, PHEW_ERROR_ARGUMENT);
  EXPECT_STREQ(r->context.message, "the relevance threshold must be >= 1 (got 0.5): a peak's relevance, peak density / "
                                   "key saddle density, is at least 1; 1 keeps every peak");
  for (int64_t x : r->clump)
    ASSERT_EQ(x, -1);
  // 1 keeps every peak: every peak is a clump (or discarded isolated noise: none at relevance 1)
  auto one = phewtest::run(f, make_params(PHEW_THRESHOLD_AUTOMATIC, 1.0));
  ASSERT_EQ(one->status, PHEW_OK) << one->context.message;
  EXPECT_EQ(one->result.stats.n_clumps_found, one->result.stats.n_peaks);
}

TEST(AutomaticThresholds, NaNIsStillAnError)
{
  const Field f = skewed_field(8, 8, 8, 4);
  auto r = phewtest::run(f, make_params(kNaN));
  EXPECT_EQ(r->status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(r->context.message).find("the density threshold must be set"), std::string::npos)
      << r->context.message;
  EXPECT_TRUE(std::isnan(r->result.density_threshold_used));
  auto s = phewtest::run(f, make_params(1.0, 2.0, 1, kNaN));
  EXPECT_EQ(s->status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(s->context.message).find("the saddle threshold must be set"), std::string::npos)
      << s->context.message;
  // without saddle merging the saddle threshold is not read
  EXPECT_EQ(phewtest::run(f, make_params(1.0, 2.0, 0, kNaN))->status, PHEW_OK);
}

TEST(AutomaticThresholds, Edges)
{
  // every negative value is automatic; given thresholds are reported as given, and the mean
  // density is computed all the same
  const Field f = skewed_field(9, 8, 7, 6);
  auto minus = phewtest::run(f, make_params(-1e300, 2.0, 1, -0.5));
  auto automatic = phewtest::run(f, make_params(PHEW_THRESHOLD_AUTOMATIC, 2.0, 1, PHEW_THRESHOLD_AUTOMATIC));
  ASSERT_EQ(minus->status, PHEW_OK) << minus->context.message;
  ASSERT_EQ(automatic->status, PHEW_OK);
  expect_same_run(*minus, *automatic);
  auto given = phewtest::run(f, make_params(3.0, 2.0, 1, 4.5));
  ASSERT_EQ(given->status, PHEW_OK);
  EXPECT_EQ(given->result.density_threshold_used, 3.0);
  EXPECT_EQ(given->result.saddle_threshold_used, 4.5);
  EXPECT_EQ(given->result.mean_density, automatic->result.mean_density);
  // the default parameters are automatic
  phew_params defaults;
  phew_params_init(&defaults);
  auto d = phewtest::run(f, defaults);
  ASSERT_EQ(d->status, PHEW_OK) << d->context.message;
  EXPECT_EQ(d->result.density_threshold_used, automatic->result.density_threshold_used);
  EXPECT_TRUE(std::isnan(d->result.saddle_threshold_used));

  // a field of zeros: mean 0, threshold 0, nothing above it
  const Field zeros(6, 5, 4, 0.0);
  auto z = phewtest::run(zeros, make_params(PHEW_THRESHOLD_AUTOMATIC));
  ASSERT_EQ(z->status, PHEW_OK) << z->context.message;
  EXPECT_EQ(z->result.mean_density, 0.0);
  EXPECT_EQ(z->result.density_threshold_used, 0.0);
  EXPECT_EQ(z->result.n_clumps, 0);

  // 10 x the mean beyond the double range: a clear error, not an infinite threshold
  const Field huge(4, 4, 4, 1.7e308);
  auto h = phewtest::run(huge, make_params(PHEW_THRESHOLD_AUTOMATIC));
  EXPECT_EQ(h->status, PHEW_ERROR_DATA);
  EXPECT_NE(std::string(h->context.message).find("automatic density threshold"), std::string::npos)
      << h->context.message;
  // the sum of the cells may exceed the double range (it is exact): the mean does not
  Field big(4, 4, 4, 0.0);
  big.at(0, 0, 0) = big.at(2, 2, 2) = 1.7e308;
  auto b = phewtest::run(big, make_params(1e308, 1.0));
  ASSERT_EQ(b->status, PHEW_OK) << b->context.message;
  EXPECT_EQ(b->result.mean_density, 1.7e308 / 32);
  EXPECT_EQ(b->result.n_clumps, 2);

  // a NaN in the data is reported as such, with or without an automatic threshold
  Field bad = f;
  bad.at(2, 3, 4) = kNaN;
  auto n = phewtest::run(bad, make_params(PHEW_THRESHOLD_AUTOMATIC));
  EXPECT_EQ(n->status, PHEW_ERROR_DATA);
  EXPECT_NE(std::string(n->context.message).find("NaN, infinite or negative"), std::string::npos) << n->context.message;
}

} // namespace
