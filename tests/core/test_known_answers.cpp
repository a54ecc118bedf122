// Hand-made fields with answers worked out in the test: two Gaussian peaks, chains of three
// peaks merging over one and two saddle levels, plateaus and exact ties, isolated peaks,
// a threshold above the maximum, periodic wrap, the mass threshold.
#include "phew_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

using namespace phewtest;

namespace {

Field line(const std::vector<double> &values)
{
  Field f((int64_t)values.size(), 1, 1);
  f.rho = values;
  return f;
}

const double kInf = std::numeric_limits<double>::infinity();

// ---- two Gaussian peaks ----------------------------------------------------------------------

struct TwoGaussians : ::testing::Test {
  Field f{40, 21, 21};
  const double threshold = 0.5;
  int64_t peak_a = 0, peak_b = 0;
  double saddle = 0, relevance_a = 0, relevance_b = 0;

  void SetUp() override
  {
    const double s2 = 2.0 * 3.5 * 3.5;
    for (int64_t z = 0; z < f.n[2]; ++z)
      for (int64_t y = 0; y < f.n[1]; ++y)
        for (int64_t x = 0; x < f.n[0]; ++x) {
          const double ra = (x - 12.0) * (x - 12.0) + (y - 10.0) * (y - 10.0) + (z - 10.0) * (z - 10.0);
          const double rb = (x - 27.0) * (x - 27.0) + (y - 10.0) * (y - 10.0) + (z - 10.0) * (z - 10.0);
          f.at(x, y, z) = 10.0 * std::exp(-ra / s2) + 6.0 * std::exp(-rb / s2);
        }
    peak_a = f.id(12, 10, 10);
    peak_b = f.id(27, 10, 10);
    // the two peaks, by brute force
    const std::vector<int64_t> peaks = brute_force_peaks(f, threshold);
    ASSERT_EQ(peaks.size(), 2u);
    ASSERT_EQ(std::set<int64_t>(peaks.begin(), peaks.end()), (std::set<int64_t>{peak_a, peak_b}));
    // patches by climbing, the saddle by scanning every neighbouring pair across them
    std::vector<int64_t> patch((size_t)f.size(), -1);
    for (int64_t c = 0; c < f.size(); ++c)
      if (f.rho[(size_t)c] > threshold) {
        int64_t x = c;
        while (highest_neighbour(f, x) != x)
          x = highest_neighbour(f, x);
        patch[(size_t)c] = x;
      }
    saddle = -kInf;
    for (int64_t c = 0; c < f.size(); ++c)
      if (patch[(size_t)c] >= 0)
        for_each_neighbour(f, c, [&](int64_t q) {
          if (patch[(size_t)q] >= 0 && patch[(size_t)q] != patch[(size_t)c])
            saddle = std::max(saddle, (f.rho[(size_t)c] + f.rho[(size_t)q]) / 2);
        });
    ASSERT_GT(saddle, threshold);
    relevance_a = f.rho[(size_t)peak_a] / saddle;
    relevance_b = f.rho[(size_t)peak_b] / saddle;
    ASSERT_GT(relevance_b, 1.0);
    ASSERT_LT(relevance_b, relevance_a);
  }
};

TEST_F(TwoGaussians, KeySaddleAndRelevanceAreExact)
{
  auto r = run(f, make_params(threshold, relevance_b));
  check_consistency(f, make_params(threshold, relevance_b), *r);
  ASSERT_EQ(r->n_clumps(), 2);
  EXPECT_EQ(r->result.stats.n_peaks, 2);
  EXPECT_EQ(r->result.stats.n_saddle_pairs, 1);
  const phew_object &a = r->clump_row(0), &b = r->clump_row(1);
  EXPECT_EQ(a.peak_id, peak_a);
  EXPECT_EQ(b.peak_id, peak_b);
  EXPECT_EQ(a.key_saddle_density, saddle);
  EXPECT_EQ(b.key_saddle_density, saddle);
  EXPECT_EQ(a.relevance, relevance_a);
  EXPECT_EQ(b.relevance, relevance_b);
  EXPECT_DOUBLE_EQ(a.peak_position[0], 12.5);
  EXPECT_DOUBLE_EQ(b.peak_position[0], 27.5);
  EXPECT_EQ(r->clump[(size_t)peak_a], 0);
  EXPECT_EQ(r->clump[(size_t)peak_b], 1);
}

TEST_F(TwoGaussians, RelevanceThresholdJustBelowAndAt)
{
  for (double R : {std::nextafter(relevance_b, 0.0), relevance_b}) {
    auto r = run(f, make_params(threshold, R));
    ASSERT_EQ(r->status, PHEW_OK);
    EXPECT_EQ(r->n_clumps(), 2) << "relevance threshold " << R << " (relevance of B " << relevance_b
                                << "): a peak merges only if relevance < threshold";
    EXPECT_EQ(r->result.stats.noise_levels, 0);
  }
}

TEST_F(TwoGaussians, RelevanceThresholdJustAboveMergesTheLowerPeak)
{
  const double R = std::nextafter(relevance_b, kInf);
  auto r = run(f, make_params(threshold, R));
  check_consistency(f, make_params(threshold, R), *r);
  ASSERT_EQ(r->n_clumps(), 1);
  const phew_object &a = r->clump_row(0);
  EXPECT_EQ(a.peak_id, peak_a);
  EXPECT_EQ(a.key_saddle_density, threshold) << "the merged clump is isolated";
  EXPECT_EQ(a.relevance, f.rho[(size_t)peak_a] / threshold);
  EXPECT_EQ(r->result.stats.noise_levels, 1);
  EXPECT_EQ(r->result.stats.n_peaks, 2);
  int64_t n_test = 0;
  for (int64_t c = 0; c < f.size(); ++c)
    if (f.rho[(size_t)c] > threshold) {
      ++n_test;
      ASSERT_EQ(r->clump[(size_t)c], 0);
      ASSERT_EQ(r->halo[(size_t)c], 0);
    }
  EXPECT_EQ(a.n_cells, n_test);
  // the PeakPatchId keeps the watershed patches
  EXPECT_EQ(r->patch[(size_t)peak_b], peak_b);
}

TEST_F(TwoGaussians, Float32GivesTheSameAnswerOnFloatValues)
{
  Field g = f;
  g.to_float32();
  auto r = run(g, make_params(threshold, 1.0));
  check_consistency(g, make_params(threshold, 1.0), *r);
  ASSERT_EQ(r->n_clumps(), 2);
  EXPECT_EQ(r->clump_row(0).peak_id, peak_a);
  EXPECT_EQ(r->clump_row(0).peak_density, (double)(float)f.rho[(size_t)peak_a]);
}

// ---- chains of three peaks ------------------------------------------------------------------

// C (x=2, 6) - B (x=6, 8) - A (x=10, 10) along x. Patches: C = x1..3, B = x4..7, A = x8..11.
// Saddles: C-B (x3, x4) = (5 + 4.5)/2 = 4.75; B-A (x7, x8) = (5 + 3)/2 = 4. B's key saddle
// (4.75) leads to the lower C, so B does not merge on level 1.
Field two_level_chain() { return line({1, 4, 6, 5, 4.5, 7, 8, 5, 3, 7, 10, 4, 1}); }

TEST(ThreePeakChain, PatchesAndKeySaddles)
{
  const Field f = two_level_chain();
  auto r = run(f, make_params(1.5, 1.0));
  check_consistency(f, make_params(1.5, 1.0), *r);
  const std::vector<int64_t> patch = {-1, 2, 2, 2, 6, 6, 6, 6, 10, 10, 10, 10, -1};
  EXPECT_EQ(r->patch, patch);
  ASSERT_EQ(r->n_clumps(), 3);
  EXPECT_EQ(r->result.stats.n_saddle_pairs, 2);
  const phew_object &a = r->clump_row(0), &b = r->clump_row(1), &c = r->clump_row(2);
  EXPECT_EQ(a.peak_id, 10);
  EXPECT_EQ(b.peak_id, 6);
  EXPECT_EQ(c.peak_id, 2);
  EXPECT_EQ(a.key_saddle_density, 4.0);
  EXPECT_EQ(b.key_saddle_density, 4.75);
  EXPECT_EQ(c.key_saddle_density, 4.75);
  EXPECT_EQ(a.relevance, 10.0 / 4.0);
  EXPECT_EQ(b.relevance, 8.0 / 4.75);
  EXPECT_EQ(c.relevance, 6.0 / 4.75);
  // no saddle merging: each clump is its own halo and its own dendrogram root
  ASSERT_EQ(r->n_haloes(), 3);
  EXPECT_EQ(r->result.n_nodes, 3);
  for (int64_t i = 0; i < r->result.n_nodes; ++i) {
    EXPECT_EQ(r->result.nodes[i].parent_id, -1);
    EXPECT_EQ(r->result.nodes[i].level, 0);
  }
  EXPECT_EQ(r->clump, r->halo);
}

TEST(ThreePeakChain, NoiseRemovalMergesOnTwoLevels)
{
  // relevance 1.5: C (1.26) merges into B on level 1 (B is not merged: its key neighbour C
  // is lower); then B+C has the single saddle 4 to A, relevance 8/4 = 2: stays.
  // relevance 2.01: level 1 as before, level 2 B merges into A (2 < 2.01).
  const Field f = two_level_chain();
  {
    auto r = run(f, make_params(1.5, 1.5));
    check_consistency(f, make_params(1.5, 1.5), *r);
    ASSERT_EQ(r->n_clumps(), 2);
    EXPECT_EQ(r->result.stats.noise_levels, 1);
    EXPECT_EQ(r->clump_row(1).peak_id, 6);
    EXPECT_EQ(r->clump_row(1).key_saddle_density, 4.0) << "the saddle inside B+C disappears";
    EXPECT_EQ(r->clump_row(1).n_cells, 7);
    EXPECT_EQ(r->clump, (std::vector<int64_t>{-1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -1}));
  }
  {
    auto r = run(f, make_params(1.5, 2.01));
    check_consistency(f, make_params(1.5, 2.01), *r);
    ASSERT_EQ(r->n_clumps(), 1);
    EXPECT_EQ(r->result.stats.noise_levels, 2);
    EXPECT_EQ(r->clump_row(0).n_cells, 11);
    EXPECT_EQ(r->clump_row(0).key_saddle_density, 1.5);
  }
}

TEST(ThreePeakChain, SaddleMergingOnTwoLevels)
{
  const Field f = two_level_chain();
  const phew_params p = make_params(1.5, 1.0, 1, 3.5);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 3);
  ASSERT_EQ(r->n_haloes(), 1);
  EXPECT_EQ(r->result.stats.saddle_levels, 2);
  const phew_object &a = r->clump_row(0), &b = r->clump_row(1), &c = r->clump_row(2);
  EXPECT_EQ(a.parent_id, -1);
  EXPECT_EQ(a.level, 0);
  EXPECT_EQ(b.parent_id, 0);
  EXPECT_EQ(b.level, 2);
  EXPECT_EQ(c.parent_id, 1) << "C merged into B on level 1";
  EXPECT_EQ(c.level, 1);
  for (const phew_object *o : {&a, &b, &c})
    EXPECT_EQ(o->halo_id, 0);
  const phew_object &h = r->halo_row(0);
  EXPECT_EQ(h.peak_id, 10);
  EXPECT_EQ(h.n_clumps, 3);
  EXPECT_EQ(h.level, 2);
  EXPECT_EQ(h.n_cells, 11);
  EXPECT_EQ(h.mass, 4 + 6 + 5 + 4.5 + 7 + 8 + 5 + 3 + 7 + 10 + 4);
  EXPECT_EQ(h.key_saddle_density, 1.5);
  EXPECT_EQ(r->halo, (std::vector<int64_t>{-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}));
  EXPECT_EQ(r->clump, (std::vector<int64_t>{-1, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, -1}));

  // dendrogram: leaves A, B, C; node (B, 1) = B + C; root (A, 2) = A + (B + C)
  ASSERT_EQ(r->result.n_nodes, 5);
  std::map<std::pair<int64_t, int>, const phew_node *> by;
  for (int64_t i = 0; i < r->result.n_nodes; ++i)
    by[{r->result.nodes[i].peak_id, r->result.nodes[i].level}] = &r->result.nodes[i];
  ASSERT_EQ(by.size(), 5u);
  const phew_node *la = by.at({10, 0}), *lb = by.at({6, 0}), *lc = by.at({2, 0});
  const phew_node *n1 = by.at({6, 1}), *n2 = by.at({10, 2});
  EXPECT_EQ(la->clump_id, 0);
  EXPECT_EQ(lb->clump_id, 1);
  EXPECT_EQ(lc->clump_id, 2);
  EXPECT_EQ(n1->clump_id, -1);
  EXPECT_EQ(n2->clump_id, -1);
  EXPECT_EQ(lc->parent_id, n1->id);
  EXPECT_EQ(lb->parent_id, n1->id);
  EXPECT_EQ(n1->parent_id, n2->id);
  EXPECT_EQ(la->parent_id, n2->id);
  EXPECT_EQ(n2->parent_id, -1);
  EXPECT_EQ(lc->saddle_density, 4.75);
  EXPECT_EQ(lb->saddle_density, 4.75);
  EXPECT_EQ(n1->saddle_density, 4.0);
  EXPECT_EQ(la->saddle_density, 4.0);
  EXPECT_EQ(n2->saddle_density, 1.5) << "an isolated root sits at the density threshold";
  EXPECT_EQ(n1->n_cells, 7);
  EXPECT_EQ(n2->n_cells, 11);
  EXPECT_EQ(n1->mass, 4 + 6 + 5 + 4.5 + 7 + 8 + 5.0);
  EXPECT_EQ(lc->n_cells, 3);
}

TEST(ThreePeakChain, SaddleThresholdBetweenTheLevels)
{
  const Field f = two_level_chain();
  for (double S : {4.0, 4.5, std::nextafter(4.75, 0.0)}) {
    const phew_params p = make_params(1.5, 1.0, 1, S);
    auto r = run(f, p);
    check_consistency(f, p, *r);
    ASSERT_EQ(r->n_haloes(), 2) << "saddle threshold " << S;
    EXPECT_EQ(r->result.stats.saddle_levels, 1);
    EXPECT_EQ(r->halo_row(0).peak_id, 10);
    EXPECT_EQ(r->halo_row(1).peak_id, 6);
    EXPECT_EQ(r->halo_row(0).key_saddle_density, 4.0);
    EXPECT_EQ(r->halo_row(1).key_saddle_density, 4.0);
    EXPECT_EQ(r->halo_row(1).n_clumps, 2);
    EXPECT_EQ(r->halo_row(1).level, 1);
    EXPECT_EQ(r->halo_row(0).level, 0);
    EXPECT_EQ(r->clump_row(2).parent_id, 1);
    EXPECT_EQ(r->clump_row(1).parent_id, -1);
    EXPECT_EQ(r->halo, (std::vector<int64_t>{-1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, -1}));
    EXPECT_EQ(r->result.n_nodes, 4);
    int roots = 0;
    for (int64_t i = 0; i < r->result.n_nodes; ++i)
      if (r->result.nodes[i].parent_id < 0) {
        ++roots;
        EXPECT_EQ(r->result.nodes[i].saddle_density, 4.0) << "roots sit at their halo's key saddle";
      }
    EXPECT_EQ(roots, 2);
  }
  // a merger needs key saddle > threshold
  const phew_params p = make_params(1.5, 1.0, 1, 4.75);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  EXPECT_EQ(r->n_haloes(), 3);
  EXPECT_EQ(r->result.stats.saddle_levels, 0);
}

// C (x=2, 6) - B (x=5, 8) - A (x=9, 10): C-B = (6+3)/2 = 4.5, B-A = (6+5)/2 = 5.5. Both C and B
// merge on level 1, C through B into A (labels follow the chain within a level).
TEST(ThreePeakChain, ChainWithinOneLevel)
{
  const Field f = line({1, 4, 6, 3, 7, 8, 6, 5, 9, 10, 4, 1});
  const phew_params p = make_params(1.5, 1.0, 1, 4.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  EXPECT_EQ(r->patch, (std::vector<int64_t>{-1, 2, 2, 5, 5, 5, 5, 9, 9, 9, 9, -1}));
  ASSERT_EQ(r->n_clumps(), 3);
  ASSERT_EQ(r->n_haloes(), 1);
  EXPECT_EQ(r->result.stats.saddle_levels, 1);
  EXPECT_EQ(r->clump_row(1).parent_id, 0);
  EXPECT_EQ(r->clump_row(1).level, 1);
  EXPECT_EQ(r->clump_row(2).parent_id, 0) << "C joins A, the final label of the chain on that level";
  EXPECT_EQ(r->clump_row(2).level, 1);
  EXPECT_EQ(r->halo_row(0).level, 1);
  EXPECT_EQ(r->clump_row(2).key_saddle_density, 4.5);
  EXPECT_EQ(r->clump_row(1).key_saddle_density, 5.5);
  ASSERT_EQ(r->result.n_nodes, 4);
  const phew_node *root = nullptr;
  for (int64_t i = 0; i < r->result.n_nodes; ++i)
    if (r->result.nodes[i].level == 1)
      root = &r->result.nodes[i];
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->peak_id, 9);
  EXPECT_EQ(root->parent_id, -1);
  EXPECT_EQ(root->n_cells, 10);
  for (int64_t i = 0; i < r->result.n_nodes; ++i) {
    const phew_node &x = r->result.nodes[i];
    if (x.level != 0)
      continue;
    EXPECT_EQ(x.parent_id, root->id) << "leaf of peak " << x.peak_id;
    const double want = x.peak_id == 2 ? 4.5 : 5.5; // A's own leaf joins at the highest saddle
    EXPECT_EQ(x.saddle_density, want) << "leaf of peak " << x.peak_id;
  }
}

// ---- plateaus and exact ties ------------------------------------------------------------------

TEST(Ties, FlatPlateauHasOnePeakAtItsLowestId)
{
  Field f(10, 9, 8, 1.0);
  for (int64_t z = 4; z < 6; ++z)
    for (int64_t y = 2; y < 6; ++y)
      for (int64_t x = 3; x < 6; ++x)
        f.at(x, y, z) = 5.0;
  const phew_params p = make_params(2.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  const int64_t lowest = f.id(3, 2, 4);
  EXPECT_EQ(r->result.stats.n_peaks, 1);
  EXPECT_EQ(r->result.stats.n_test_cells, 24);
  ASSERT_EQ(r->n_clumps(), 1);
  EXPECT_EQ(r->clump_row(0).peak_id, lowest);
  for (int64_t c = 0; c < f.size(); ++c)
    ASSERT_EQ(r->patch[(size_t)c], f.rho[(size_t)c] > 2.0 ? lowest : -1) << "cell " << c;
}

TEST(Ties, WholeBoxPlateau)
{
  for (int periodic = 0; periodic < 2; ++periodic) {
    Field f(7, 5, 3, 2.0);
    f.set_periodic(periodic);
    const phew_params p = make_params(1.0);
    auto r = run(f, p);
    check_consistency(f, p, *r);
    EXPECT_EQ(r->result.stats.n_peaks, 1);
    for (int64_t c = 0; c < f.size(); ++c)
      ASSERT_EQ(r->patch[(size_t)c], 0) << "cell " << c << (periodic ? " (periodic)" : "");
  }
}

TEST(Ties, PlateauAcrossThePeriodicEdge)
{
  // plateau on x = 8, 9, 0, 1 (periodic). Cells on x = 9 see x = 0 through the edge, whose ids
  // are lower, and climb to (0,2,1); cells on x = 8 see only x = 9 (higher ids) and x = 7 (off
  // the plateau), so they climb to (8,2,1), which has no higher neighbour: a second peak, whose
  // patch meets the first at saddle 3 = its peak density (relevance 1). Relevance 2 merges it
  // into the peak at the plateau's lowest id, (0,2,1).
  Field f(10, 6, 5, 0.0);
  for (int64_t z = 1; z < 3; ++z)
    for (int64_t y = 2; y < 4; ++y)
      for (int64_t x : {8, 9, 0, 1})
        f.at(x, y, z) = 3.0;
  f.set_periodic(true);
  const phew_params p = make_params(1.0, 2.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  EXPECT_EQ(r->result.stats.n_peaks, 2);
  for (int64_t z = 1; z < 3; ++z)
    for (int64_t y = 2; y < 4; ++y)
      for (int64_t x : {8, 9, 0, 1})
        EXPECT_EQ(r->patch[(size_t)f.id(x, y, z)], x == 8 ? f.id(8, 2, 1) : f.id(0, 2, 1)) << x << " " << y << " " << z;
  ASSERT_EQ(r->n_clumps(), 1);
  EXPECT_EQ(r->clump_row(0).peak_id, f.id(0, 2, 1));
  EXPECT_EQ(r->clump_row(0).n_cells, 16);
  EXPECT_EQ(r->result.stats.noise_levels, 1);
  // centre of mass between x = 9 and x = 0, i.e. at x = 0 (or 10, the same point)
  const double cx = r->clump_row(0).center_of_mass[0];
  EXPECT_NEAR(std::min(std::fabs(cx), std::fabs(cx - 10.0)), 0.0, 1e-12) << cx;
  EXPECT_NEAR(r->clump_row(0).center_of_mass[1], 3.0, 1e-12);
  EXPECT_NEAR(r->clump_row(0).center_of_mass[2], 2.0, 1e-12);
  // relevance 1: the two peaks stay apart, each with key saddle 3 and relevance exactly 1
  const phew_params keep = make_params(1.0, 1.0);
  auto k = run(f, keep);
  check_consistency(f, keep, *k);
  ASSERT_EQ(k->n_clumps(), 2);
  EXPECT_EQ(k->clump_row(0).peak_id, f.id(0, 2, 1));
  EXPECT_EQ(k->clump_row(1).peak_id, f.id(8, 2, 1));
  EXPECT_EQ(k->clump_row(1).key_saddle_density, 3.0);
  EXPECT_EQ(k->clump_row(1).relevance, 1.0);
  // not periodic: two separate plateaus, two isolated clumps
  f.set_periodic(false);
  auto q = run(f, p);
  check_consistency(f, p, *q);
  ASSERT_EQ(q->n_clumps(), 2);
  EXPECT_EQ(q->clump_row(0).peak_id, f.id(0, 2, 1));
  EXPECT_EQ(q->clump_row(1).peak_id, f.id(8, 2, 1));
  EXPECT_EQ(q->result.stats.n_saddle_pairs, 0);
}

TEST(Ties, EqualNeighboursGoToTheLowerId)
{
  // x3 (4) sits between two 6s: it follows x2. x7 likewise follows x6.
  const Field f = line({1, 10, 6, 4, 6, 7, 6, 4, 6, 10, 1});
  auto r = run(f, make_params(1.5, 1.0));
  check_consistency(f, make_params(1.5, 1.0), *r);
  EXPECT_EQ(r->patch, (std::vector<int64_t>{-1, 1, 1, 1, 5, 5, 5, 5, 9, 9, -1}));
  // equal peaks 10 and 10: catalogue order by lower peak id
  ASSERT_EQ(r->n_clumps(), 3);
  EXPECT_EQ(r->clump_row(0).peak_id, 1);
  EXPECT_EQ(r->clump_row(1).peak_id, 9);
  EXPECT_EQ(r->clump_row(2).peak_id, 5);
}

TEST(Ties, AdjacentEqualPeakCells)
{
  // two equal maxima side by side in 3D: the one with the lower id is the peak
  Field f(6, 6, 6, 0.0);
  for (int64_t z = 2; z < 5; ++z) // every cell of the box touches (3,3,3)
    for (int64_t y = 2; y < 5; ++y)
      for (int64_t x = 2; x < 5; ++x)
        f.at(x, y, z) = 2.0;
  f.at(3, 3, 3) = 9.0;
  f.at(2, 2, 4) = 9.0; // diagonal neighbour, higher id
  auto r = run(f, make_params(1.0));
  check_consistency(f, make_params(1.0), *r);
  EXPECT_EQ(r->result.stats.n_peaks, 1);
  EXPECT_EQ(r->patch[(size_t)f.id(2, 2, 4)], f.id(3, 3, 3));
}

TEST(Ties, KeySaddleTieGoesToTheHigherNeighbour)
{
  // P (x5, 7) has equal saddles 5 to Q1 (x1) and Q2 (x9): relevance 1.4 < 2, it merges into the
  // higher of the two. Equal densities: Q1, the lower id; Q2 denser: Q2.
  for (double q2 : {10.0, 11.0}) {
    const Field f = line({1, 10, 6, 4, 6, 7, 6, 4, 6, q2, 1});
    auto r = run(f, make_params(1.5, 2.0));
    check_consistency(f, make_params(1.5, 2.0), *r);
    ASSERT_EQ(r->n_clumps(), 2) << "Q2 = " << q2;
    const int64_t into = q2 == 10.0 ? 1 : 9;
    const int64_t cid = r->clump[(size_t)into];
    for (int64_t x = 4; x <= 7; ++x)
      EXPECT_EQ(r->clump[(size_t)x], cid) << "x = " << x << ", Q2 = " << q2;
    // Q1-Q2 saddle after the merger: 5 (through P's patch)
    EXPECT_EQ(r->clump_row(0).key_saddle_density, 5.0);
    EXPECT_EQ(r->clump_row(1).key_saddle_density, 5.0);
    EXPECT_EQ(r->result.stats.noise_levels, 1);
  }
}

// ---- isolated peaks ---------------------------------------------------------------------------

Field isolated_blobs()
{
  // blob 1: peak 3 at (3,3,3); blob 2: peak 8 at (12,4,4) with a side peak 7.5 at (12,4,6)
  Field f(16, 8, 9, 0.0);
  for (int64_t z = 2; z < 5; ++z)
    for (int64_t y = 2; y < 5; ++y)
      for (int64_t x = 2; x < 5; ++x)
        f.at(x, y, z) = 2.0;
  f.at(3, 3, 3) = 3.0;
  for (int64_t z = 3; z < 8; ++z)
    for (int64_t y = 3; y < 6; ++y)
      for (int64_t x = 11; x < 14; ++x)
        f.at(x, y, z) = 2.0;
  f.at(12, 4, 4) = 8.0;
  f.at(12, 4, 6) = 7.5;
  return f;
}

TEST(IsolatedPeak, KeptOrDiscardedByPeakOverThreshold)
{
  const Field f = isolated_blobs();
  const double threshold = 1.0; // relevance of blob 1: 3 / 1 = 3
  for (double R : {2.0, 3.0}) {
    auto r = run(f, make_params(threshold, R));
    check_consistency(f, make_params(threshold, R), *r);
    ASSERT_EQ(r->n_clumps(), 2) << "R = " << R;
    EXPECT_EQ(r->clump_row(1).peak_id, f.id(3, 3, 3));
    EXPECT_EQ(r->clump_row(1).key_saddle_density, threshold);
    EXPECT_EQ(r->clump_row(1).relevance, 3.0);
    EXPECT_EQ(r->result.stats.n_noise_discarded, 0);
  }
  const double R = std::nextafter(3.0, kInf);
  auto r = run(f, make_params(threshold, R));
  check_consistency(f, make_params(threshold, R), *r);
  ASSERT_EQ(r->n_clumps(), 1);
  EXPECT_EQ(r->n_haloes(), 1);
  EXPECT_EQ(r->result.stats.n_noise_discarded, 1);
  EXPECT_EQ(r->result.n_nodes, 1);
  EXPECT_EQ(r->clump_row(0).peak_id, f.id(12, 4, 4));
  for (int64_t z = 2; z < 5; ++z)
    for (int64_t y = 2; y < 5; ++y)
      for (int64_t x = 2; x < 5; ++x) {
        const size_t c = (size_t)f.id(x, y, z);
        EXPECT_EQ(r->patch[c], f.id(3, 3, 3)) << "the watershed label stays";
        EXPECT_EQ(r->clump[c], -1);
        EXPECT_EQ(r->halo[c], -1);
      }
}

TEST(IsolatedPeak, MergedGroupIsDiscardedWhole)
{
  // blob 2's side peak (7.5) has relevance 7.5 / 4.75 < 2 and merges into the 8 peak; the
  // merged group is isolated with relevance 8 / 1: discarded with R = 9, side peak cells too.
  const Field f = isolated_blobs();
  {
    auto r = run(f, make_params(1.0, 2.0));
    check_consistency(f, make_params(1.0, 2.0), *r);
    EXPECT_EQ(r->result.stats.n_peaks, 3);
    ASSERT_EQ(r->n_clumps(), 2);
    EXPECT_EQ(r->clump_row(0).n_cells, 45);
    EXPECT_EQ(r->clump[(size_t)f.id(12, 4, 6)], 0);
  }
  auto r = run(f, make_params(1.0, 9.0));
  check_consistency(f, make_params(1.0, 9.0), *r);
  EXPECT_EQ(r->n_clumps(), 0);
  EXPECT_EQ(r->n_haloes(), 0);
  EXPECT_EQ(r->result.n_nodes, 0);
  EXPECT_EQ(r->result.stats.n_noise_discarded, 2);
  EXPECT_EQ(r->result.stats.n_clumps_found, 0);
  for (int64_t c = 0; c < f.size(); ++c) {
    ASSERT_EQ(r->clump[(size_t)c], -1);
    ASSERT_EQ(r->halo[(size_t)c], -1);
  }
  EXPECT_EQ(r->patch[(size_t)f.id(12, 4, 6)], f.id(12, 4, 6));
}

TEST(IsolatedPeak, ZeroThresholdMakesIsolatedPeaksInfinitelyRelevant)
{
  const Field f = isolated_blobs();
  auto r = run(f, make_params(0.0, 1e300));
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  // blob 2's side peak merges (relevance 7.5/4.75 < 1e300); the isolated ones stay
  ASSERT_EQ(r->n_clumps(), 2);
  EXPECT_EQ(r->clump_row(0).key_saddle_density, 0.0);
  EXPECT_TRUE(std::isinf(r->clump_row(0).relevance));
}

// ---- nothing above the threshold ------------------------------------------------------------

TEST(EmptyResult, ThresholdAboveTheMaximum)
{
  Field f = smoothed_noise(12, 10, 8, 99, 2);
  double top = 0;
  for (double v : f.rho)
    top = std::max(top, v);
  for (double t : {top, top * 2.0}) {
    for (int saddle = 0; saddle < 2; ++saddle) {
      const phew_params p = make_params(t, 2.0, saddle, t);
      auto r = run(f, p, 1234);
      ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
      EXPECT_EQ(r->n_clumps(), 0);
      EXPECT_EQ(r->n_haloes(), 0);
      EXPECT_EQ(r->result.n_nodes, 0);
      EXPECT_EQ(r->result.stats.n_test_cells, 0);
      EXPECT_EQ(r->result.stats.n_peaks, 0);
      for (size_t c = 0; c < r->patch.size(); ++c) {
        ASSERT_EQ(r->patch[c], -1);
        ASSERT_EQ(r->clump[c], -1);
        ASSERT_EQ(r->halo[c], -1);
      }
    }
  }
}

TEST(EmptyResult, AllZeroField)
{
  Field f(5, 4, 3, 0.0);
  auto r = run(f, make_params(0.0));
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  EXPECT_EQ(r->n_clumps(), 0);
  for (int64_t v : r->clump)
    ASSERT_EQ(v, -1);
}

// ---- periodic wrap ------------------------------------------------------------------------------

// A Gaussian blob centred on cell `centre`, distances measured with wrap on every axis.
Field wrapped_blob(int64_t nx, int64_t ny, int64_t nz, const int64_t centre[3])
{
  Field f(nx, ny, nz);
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t c[3] = {x, y, z};
        double r2 = 0;
        for (int d = 0; d < 3; ++d) {
          int64_t dd = std::llabs(c[d] - centre[d]);
          dd = std::min(dd, f.n[d] - dd);
          r2 += (double)(dd * dd);
        }
        f.at(x, y, z) = 5.0 * std::exp(-r2 / (2 * 1.5 * 1.5));
      }
  return f;
}

TEST(Periodic, ClumpCutByTheBoxEdgeAlongX)
{
  const int64_t centre[3] = {0, 6, 5};
  Field f = wrapped_blob(16, 12, 10, centre);
  f.origin[0] = -2.0;
  f.spacing[0] = 0.5;
  const phew_params p = make_params(0.5);
  f.set_periodic(true);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 1);
  const phew_object &c = r->clump_row(0);
  EXPECT_EQ(c.peak_id, f.id(0, 6, 5));
  EXPECT_NEAR(c.center_of_mass[0], -2.0 + 0.5 * 0.5, 1e-12) << "the centre of the peak cell, by symmetry";
  EXPECT_NEAR(c.center_of_mass[1], 6.5, 1e-12);
  EXPECT_NEAR(c.center_of_mass[2], 5.5, 1e-12);

  f.set_periodic(false);
  auto q = run(f, p);
  check_consistency(f, p, *q);
  ASSERT_EQ(q->n_clumps(), 2);
  EXPECT_EQ(q->clump_row(0).peak_id, f.id(0, 6, 5));
  EXPECT_EQ(q->clump_row(1).peak_id, f.id(15, 6, 5));
  // non-periodic centres of mass, computed directly
  for (int k = 0; k < 2; ++k) {
    long double m = 0, mx = 0;
    for (int64_t i = 0; i < f.size(); ++i)
      if (q->clump[(size_t)i] == k) {
        int64_t x[3];
        f.coords(i, x);
        m += f.rho[(size_t)i];
        mx += f.rho[(size_t)i] * (long double)(f.origin[0] + (x[0] + 0.5) * f.spacing[0]);
      }
    EXPECT_NEAR(q->clump_row(k).center_of_mass[0], (double)(mx / m), 1e-12) << "clump " << k;
  }
  EXPECT_EQ(r->clump_row(0).n_cells, q->clump_row(0).n_cells + q->clump_row(1).n_cells);
}

TEST(Periodic, BlobOnTheCornerOfTheBox)
{
  const int64_t centre[3] = {0, 0, 0};
  Field f = wrapped_blob(16, 12, 10, centre);
  const phew_params p = make_params(0.5);
  struct Case {
    int periodic[3];
    int64_t clumps;
  } cases[] = {{{1, 1, 1}, 1}, {{0, 0, 0}, 8}, {{1, 0, 0}, 4}, {{0, 1, 1}, 2}, {{0, 0, 1}, 4}};
  for (const Case &k : cases) {
    for (int d = 0; d < 3; ++d)
      f.periodic[d] = k.periodic[d];
    SCOPED_TRACE("periodic " + std::to_string(k.periodic[0]) + std::to_string(k.periodic[1]) +
                 std::to_string(k.periodic[2]));
    auto r = run(f, p);
    check_consistency(f, p, *r);
    ASSERT_EQ(r->n_clumps(), k.clumps);
    EXPECT_EQ(r->clump_row(0).peak_id, 0);
    if (k.clumps == 1) {
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(r->clump_row(0).center_of_mass[d], 0.5, 1e-12) << "axis " << d;
    }
  }
}

TEST(Periodic, SaddleAcrossTheEdge)
{
  // two peaks joined only through the periodic x edge: a saddle with wrap, none without
  Field f(12, 3, 3, 0.0);
  const double row[12] = {5, 4, 3, 0, 0, 0, 0, 0, 0, 2, 3, 4.5};
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 3; ++y)
      for (int64_t x = 0; x < 12; ++x)
        f.at(x, y, z) = row[x] * (y == 1 && z == 1 ? 1.0 : 0.5);
  const phew_params p = make_params(1.0, 1.0);
  f.set_periodic(true);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 1) << "the lower cells at x = 11 climb to x = 0 through the edge";
  f.periodic[1] = f.periodic[2] = 0;
  // lower the cell next to the edge so that x = 11 is a peak of its own
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 3; ++y)
      f.at(0, y, z) = 4.0 * (y == 1 && z == 1 ? 1.0 : 0.5), f.at(1, y, z) = 5.0 * (y == 1 && z == 1 ? 1.0 : 0.5);
  auto q = run(f, p);
  check_consistency(f, p, *q);
  ASSERT_EQ(q->n_clumps(), 2);
  EXPECT_EQ(q->clump_row(0).peak_id, f.id(1, 1, 1));
  EXPECT_EQ(q->clump_row(1).peak_id, f.id(11, 1, 1));
  // saddle: (x0, x11) on the central line = (4 + 4.5) / 2
  EXPECT_EQ(q->clump_row(1).key_saddle_density, 4.25);
  EXPECT_EQ(q->result.stats.n_saddle_pairs, 1);
  f.periodic[0] = 0;
  auto s = run(f, p);
  check_consistency(f, p, *s);
  ASSERT_EQ(s->n_clumps(), 2);
  EXPECT_EQ(s->result.stats.n_saddle_pairs, 0);
  EXPECT_EQ(s->clump_row(1).key_saddle_density, 1.0);
}

// ---- mass threshold -------------------------------------------------------------------------------

// Three separate blobs with exactly representable masses: A (peak 8, mass 112),
// B (peak 6, mass 20), C (peak 5, mass 31).
Field mass_blobs()
{
  Field f(20, 8, 8, 0.0);
  for (int64_t z = 1; z < 4; ++z)
    for (int64_t y = 1; y < 4; ++y)
      for (int64_t x = 1; x < 4; ++x)
        f.at(x, y, z) = 4.0;
  f.at(2, 2, 2) = 8.0;
  for (int64_t z = 4; z < 6; ++z)
    for (int64_t y = 4; y < 6; ++y)
      for (int64_t x = 8; x < 10; ++x)
        f.at(x, y, z) = 2.0;
  f.at(8, 4, 4) = 6.0;
  for (int64_t z = 2; z < 5; ++z)
    for (int64_t y = 3; y < 6; ++y)
      for (int64_t x = 14; x < 17; ++x)
        f.at(x, y, z) = 1.0;
  f.at(15, 4, 3) = 5.0;
  return f;
}

TEST(MassThreshold, ClumpAtTheThresholdIsLeftOut)
{
  const Field f = mass_blobs();
  {
    const phew_params p = make_params(0.5, 1.0, 0, 0, std::nextafter(20.0, 0.0));
    auto r = run(f, p);
    check_consistency(f, p, *r);
    ASSERT_EQ(r->n_clumps(), 3);
    EXPECT_EQ(r->clump_row(0).mass, 112.0);
    EXPECT_EQ(r->clump_row(1).mass, 20.0);
    EXPECT_EQ(r->clump_row(2).mass, 31.0);
  }
  const phew_params p = make_params(0.5, 1.0, 0, 0, 20.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 2);
  ASSERT_EQ(r->n_haloes(), 2);
  EXPECT_EQ(r->result.stats.n_clumps_found, 3);
  EXPECT_EQ(r->result.stats.n_haloes_found, 3);
  EXPECT_EQ(r->clump_row(0).peak_id, f.id(2, 2, 2));
  EXPECT_EQ(r->clump_row(1).peak_id, f.id(15, 4, 3)) << "compact ids: C becomes clump 1";
  EXPECT_EQ(r->clump_row(1).id, 1);
  EXPECT_EQ(r->halo_row(1).peak_id, f.id(15, 4, 3));
  EXPECT_EQ(r->result.n_nodes, 2);
  for (int64_t z = 4; z < 6; ++z)
    for (int64_t y = 4; y < 6; ++y)
      for (int64_t x = 8; x < 10; ++x) {
        const size_t c = (size_t)f.id(x, y, z);
        EXPECT_EQ(r->patch[c], f.id(8, 4, 4));
        EXPECT_EQ(r->clump[c], -1);
        EXPECT_EQ(r->halo[c], -1);
      }
  EXPECT_EQ(r->clump[(size_t)f.id(15, 4, 3)], 1);
  EXPECT_EQ(r->halo[(size_t)f.id(15, 4, 3)], 1);
}

TEST(MassThreshold, UsesTheCellVolume)
{
  Field f = mass_blobs();
  f.spacing[0] = 0.5;
  f.spacing[1] = 0.5;
  f.spacing[2] = 0.5; // masses 14, 2.5, 3.875
  const phew_params p = make_params(0.5, 1.0, 0, 0, 2.5);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->n_clumps(), 2);
  EXPECT_EQ(r->clump_row(0).mass, 14.0);
  EXPECT_EQ(r->clump_row(0).volume, 27 * 0.125);
  EXPECT_EQ(r->clump_row(1).mass, 3.875);
  const phew_params all = make_params(0.5, 1.0, 0, 0, 112.0 * 0.125);
  auto none = run(f, all);
  check_consistency(f, all, *none);
  EXPECT_EQ(none->n_clumps(), 0);
  EXPECT_EQ(none->n_haloes(), 0);
  EXPECT_EQ(none->result.n_nodes, 0);
  for (size_t c = 0; c < none->clump.size(); ++c)
    ASSERT_EQ(none->clump[c], -1);
}

TEST(MassThreshold, LightClumpInsideAHeavyHalo)
{
  // B (peak 6, mass 20) touches A (mass 112): saddle (4 + 6)/2 = 5 > 4 merges it into A's halo.
  // With M = 20 clump B is left out, but its cells stay in the halo.
  Field f(12, 6, 6, 0.0);
  for (int64_t z = 1; z < 4; ++z)
    for (int64_t y = 1; y < 4; ++y)
      for (int64_t x = 1; x < 4; ++x)
        f.at(x, y, z) = 4.0;
  f.at(2, 2, 2) = 8.0;
  for (int64_t z = 2; z < 4; ++z)
    for (int64_t y = 2; y < 4; ++y)
      for (int64_t x = 4; x < 6; ++x)
        f.at(x, y, z) = 2.0;
  f.at(4, 2, 2) = 6.0;
  const phew_params p = make_params(0.5, 1.0, 1, 4.0, 20.0);
  auto r = run(f, p);
  check_consistency(f, p, *r);
  ASSERT_EQ(r->result.stats.n_clumps_found, 2);
  ASSERT_EQ(r->n_clumps(), 1);
  ASSERT_EQ(r->n_haloes(), 1);
  EXPECT_EQ(r->halo_row(0).mass, 132.0);
  EXPECT_EQ(r->halo_row(0).n_cells, 35);
  EXPECT_EQ(r->halo_row(0).n_clumps, 2);
  EXPECT_EQ(r->clump_row(0).key_saddle_density, 5.0);
  for (int64_t z = 2; z < 4; ++z)
    for (int64_t y = 2; y < 4; ++y)
      for (int64_t x = 4; x < 6; ++x) {
        const size_t c = (size_t)f.id(x, y, z);
        EXPECT_EQ(r->clump[c], -1);
        EXPECT_EQ(r->halo[c], 0);
      }
  ASSERT_EQ(r->result.n_nodes, 3);
  int light_leaves = 0;
  for (int64_t i = 0; i < r->result.n_nodes; ++i)
    if (r->result.nodes[i].level == 0 && r->result.nodes[i].clump_id == -1) {
      ++light_leaves;
      EXPECT_EQ(r->result.nodes[i].peak_id, f.id(4, 2, 2));
      EXPECT_EQ(r->result.nodes[i].saddle_density, 5.0);
    }
  EXPECT_EQ(light_leaves, 1);
}

// ---- high dynamic range ---------------------------------------------------------------------------

TEST(Properties, FaintClumpNextToAVeryDenseOne)
{
  // Two isolated blobs: a faint one (nine cells of 1.1 around a peak of 2.3) and a bright one
  // of 8 cells. The faint clump's mass, mean density and centre of mass must not depend on how
  // dense the other clump is (sums to 1e-12 relative).
  for (double bright : {1e3, 1e6, 1e8, 1e10, 1e20}) {
    Field f(16, 6, 6, 0.0);
    for (int64_t z = 1; z < 3; ++z)
      for (int64_t y = 1; y < 3; ++y)
        for (int64_t x = 1; x < 3; ++x)
          f.at(x, y, z) = bright;
    for (int64_t z = 2; z < 5; ++z)
      for (int64_t y = 2; y < 5; ++y)
        for (int64_t x = 10; x < 13; ++x)
          f.at(x, y, z) = (x + y + z) % 3 == 0 ? 1.1 : 0.0;
    f.at(11, 3, 3) = 2.3;
    long double mass = 0, mx = 0;
    int64_t cells = 0;
    for (int64_t c = 0; c < f.size(); ++c)
      if (f.rho[(size_t)c] > 0.5 && f.rho[(size_t)c] < 10) {
        int64_t x[3];
        f.coords(c, x);
        mass += f.rho[(size_t)c];
        mx += f.rho[(size_t)c] * (x[0] + 0.5L);
        ++cells;
      }
    ASSERT_EQ(cells, 10);
    const phew_params p = make_params(0.5, 1.0);
    auto r = run(f, p);
    SCOPED_TRACE("bright clump density " + std::to_string(bright));
    ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
    ASSERT_EQ(r->n_clumps(), 2) << "the faint clump went missing";
    const phew_object &faint = r->clump_row(1);
    EXPECT_EQ(faint.peak_id, f.id(11, 3, 3));
    EXPECT_EQ(faint.n_cells, 10);
    EXPECT_NEAR(faint.mass, (double)mass, 1e-12 * (double)mass);
    EXPECT_NEAR(faint.mean_density, (double)(mass / 10), 1e-12 * (double)(mass / 10));
    EXPECT_NEAR(faint.center_of_mass[0], (double)(mx / mass), 1e-12 * 16);
    EXPECT_NEAR(r->clump_row(0).mass, 8 * bright, 1e-12 * 8 * bright);
    check_consistency(f, p, *r);
  }
}

// ---- progress callback ------------------------------------------------------------------------------

TEST(Progress, StagesInOrderEndingAtOne)
{
  Field f = smoothed_noise(16, 16, 16, 5, 2);
  std::vector<std::pair<double, std::string>> calls;
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, 16, 16, 16);
  in.density = f.rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_context context;
  phew_context_init(&context);
  context.progress = [](double fraction, const char *stage, void *data) {
    static_cast<std::vector<std::pair<double, std::string>> *>(data)->emplace_back(fraction, stage ? stage : "");
  };
  context.progress_data = &calls;
  std::vector<int64_t> a((size_t)f.size()), b(a.size()), c(a.size());
  phew_labels labels = {a.data(), b.data(), c.data(), nullptr};
  phew_params p = make_params(quantile(f, 0.5));
  phew_clump_result res;
  ASSERT_EQ(phew_find_clumps(&context, &in, &p, &labels, &res), PHEW_OK);
  phew_clump_result_free(&res);
  ASSERT_GE(calls.size(), 2u);
  for (size_t i = 1; i < calls.size(); ++i)
    EXPECT_GE(calls[i].first, calls[i - 1].first);
  EXPECT_EQ(calls.front().first, 0.0);
  EXPECT_EQ(calls.back().first, 1.0);
}

} // namespace
