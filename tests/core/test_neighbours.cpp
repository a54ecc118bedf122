// The core's kd-tree, exact k nearest neighbours and SPH density (core/src/particles/
// neighbours.h) against brute force written here: every pair, the nearest-image formula of
// the issue, sorted by (squared distance, global id). Sets: uniform, clustered, and integer
// lattices with many exact ties (where only the id decides); periodic, open and mixed axes;
// queries through a subset; ids not in storage order; 1, 2 and 4 threads; the same
// neighbourhood inside a larger tree (as a padded rank holds it).
#include <gtest/gtest.h>

extern "C" {
#include "neighbours.h"
}

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

struct Set {
  std::vector<double> pos;
  std::vector<int64_t> id;
  particle_box box;
  int64_t n() const { return (int64_t)id.size(); }
};

enum Kind { UNIFORM, CLUSTERED, LATTICE };

Set make_set(Kind kind, int n, const int periodic[3], uint64_t seed)
{
  Set s;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int d = 0; d < 3; ++d) {
    s.box.size[d] = kind == LATTICE ? 8.0 : 1.0;
    s.box.periodic[d] = periodic[d];
  }
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      double x;
      if (kind == UNIFORM)
        x = u(rng);
      else if (kind == CLUSTERED)
        x = (i % 3 == 0 ? u(rng) : (i % 3 == 1 ? 0.3 : 0.93) + 0.03 * g(rng));
      else
        x = (double)(rng() % 8); // integer lattice 8^3, points repeated: ties everywhere
      if (kind != LATTICE) {
        x -= std::floor(x);
        if (x >= 1.0)
          x = 0.0;
      }
      s.pos.push_back(x);
    }
    s.id.push_back((int64_t)(rng() >> 20)); // sparse, not in storage order
  }
  std::sort(s.id.begin(), s.id.end());
  s.id.erase(std::unique(s.id.begin(), s.id.end()), s.id.end());
  while ((int)s.id.size() < n)
    s.id.push_back(s.id.back() + 7);
  std::shuffle(s.id.begin(), s.id.end(), rng);
  return s;
}

double delta(const particle_box &b, int a, double x, double y)
{
  double d = x - y;
  if (b.periodic[a]) {
    if (2.0 * d > b.size[a])
      d -= b.size[a];
    else if (2.0 * d < -b.size[a])
      d += b.size[a];
  }
  return d;
}

double dist2(const Set &s, int64_t i, int64_t j)
{
  const double dx = delta(s.box, 0, s.pos[3 * i], s.pos[3 * j]),
               dy = delta(s.box, 1, s.pos[3 * i + 1], s.pos[3 * j + 1]),
               dz = delta(s.box, 2, s.pos[3 * i + 2], s.pos[3 * j + 2]);
  return (dx * dx + dy * dy) + dz * dz;
}

// The first k particles by (squared distance to i, id).
std::vector<int64_t> sorted_by_distance(const Set &s, int64_t i, int k)
{
  std::vector<int64_t> order((size_t)s.n());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    const double da = dist2(s, i, a), db = dist2(s, i, b);
    return da < db || (da == db && s.id[(size_t)a] < s.id[(size_t)b]);
  });
  return order;
}

struct Answer {
  std::vector<double> h, reach;
  std::vector<int32_t> nearest;
};

Answer search(const Set &s, int n_dens, int n_keep, int threads, const std::vector<int32_t> *subset = nullptr,
              int n_ordered = 0)
{
  kd_tree *tree = nullptr;
  call_result result;
  std::memset(&result, 0, sizeof result);
  EXPECT_EQ(kd_tree_build(&tree, s.n(), s.pos.data(), s.id.data(), &s.box, threads, &result), PHEW_OK)
      << result.message;
  const int64_t n = subset ? (int64_t)subset->size() : s.n();
  Answer a;
  a.h.assign((size_t)n, -1);
  a.reach.assign((size_t)n, -1);
  a.nearest.assign((size_t)(n * n_keep + 1), -1);
  knn_query q = {n_dens,           n_keep,  n,        subset ? subset->data() : nullptr, a.h.data(), a.reach.data(),
                 a.nearest.data(), threads, n_ordered};
  EXPECT_EQ(knn_search(tree, &q, &result), PHEW_OK) << result.message;
  kd_tree_free(tree);
  return a;
}

// Returns how many queries had a tie of distances across the end of their kept list (where
// only the ids decide which particles are listed). n_ordered > 0: only the first n_ordered of
// a list are in order, the rest must be the same set.
int64_t expect_brute_force(const Set &s, int n_dens, int n_keep, const char *what, int n_ordered = 0)
{
  int64_t ties = 0;
  const Answer a = search(s, n_dens, n_keep, 1, nullptr, n_ordered);
  const int k = std::max(n_dens + 1, n_keep + 1);
  int64_t bad = 0;
  for (int64_t i = 0; i < s.n(); ++i) {
    const std::vector<int64_t> order = sorted_by_distance(s, i, k + 1);
    ties += dist2(s, i, order[(size_t)n_keep]) == dist2(s, i, order[(size_t)n_keep + 1]);
    const double h = 0.5 * std::sqrt(dist2(s, i, order[(size_t)n_dens]));
    const double reach = std::sqrt(dist2(s, i, order[(size_t)k - 1]));
    std::vector<int32_t> others;
    for (int e = 0; e < k; ++e)
      if (order[(size_t)e] != i && (int)others.size() < n_keep)
        others.push_back((int32_t)order[(size_t)e]);
    std::vector<int32_t> got(a.nearest.begin() + i * n_keep, a.nearest.begin() + (i + 1) * n_keep);
    if (n_ordered > 0) { /* the unordered tails as sets */
      std::sort(others.begin() + n_ordered, others.end());
      std::sort(got.begin() + n_ordered, got.end());
    }
    const bool same = a.h[(size_t)i] == h && a.reach[(size_t)i] == reach && got == others;
    if (!same && bad++ < 3)
      ADD_FAILURE() << what << ": particle " << i << " (id " << s.id[(size_t)i] << ") h " << a.h[(size_t)i] << " vs "
                    << h << ", reach " << a.reach[(size_t)i] << " vs " << reach;
  }
  EXPECT_EQ(bad, 0) << what;
  return ties;
}

TEST(Neighbours, BruteForce)
{
  const int open[3] = {0, 0, 0}, periodic[3] = {1, 1, 1}, mixed[3] = {1, 0, 1};
  expect_brute_force(make_set(UNIFORM, 900, periodic, 1), 64, 16, "uniform, periodic");
  expect_brute_force(make_set(UNIFORM, 900, open, 2), 64, 16, "uniform, open");
  expect_brute_force(make_set(CLUSTERED, 1200, periodic, 3), 64, 16, "clustered, periodic");
  expect_brute_force(make_set(CLUSTERED, 1200, mixed, 4), 64, 16, "clustered, mixed axes");
  EXPECT_GT(expect_brute_force(make_set(LATTICE, 1500, periodic, 5), 64, 16, "lattice with ties, periodic"), 500);
  EXPECT_GT(expect_brute_force(make_set(LATTICE, 1500, open, 6), 32, 40,
                               "lattice with ties, open, more kept than dens"),
            500);
}

// HOP's lists: 63 kept, the first 4 in order and the others as a set.
TEST(Neighbours, PartlyOrderedListsAreTheNearestSet)
{
  const int periodic[3] = {1, 1, 1}, open[3] = {0, 0, 0};
  expect_brute_force(make_set(CLUSTERED, 1200, periodic, 13), 64, 63, "clustered, 4 of 63 ordered", 4);
  expect_brute_force(make_set(UNIFORM, 900, open, 14), 64, 63, "uniform, open, 1 of 63 ordered", 1);
  EXPECT_GT(expect_brute_force(make_set(LATTICE, 1500, periodic, 15), 64, 63, "lattice with ties, 4 of 63 ordered", 4),
            500);
}

TEST(Neighbours, SubsetThreadsAndPadding)
{
  const int periodic[3] = {1, 1, 1};
  const Set s = make_set(LATTICE, 2000, periodic, 7);
  const Answer base = search(s, 64, 16, 1);
  for (int threads : {2, 4}) {
    const Answer a = search(s, 64, 16, threads);
    EXPECT_EQ(a.h, base.h) << threads;
    EXPECT_EQ(a.nearest, base.nearest) << threads;
  }
  std::vector<int32_t> subset;
  for (int32_t i = (int32_t)s.n() - 1; i >= 0; i -= 3)
    subset.push_back(i);
  const Answer part = search(s, 64, 16, 2, &subset);
  for (size_t k = 0; k < subset.size(); ++k) {
    EXPECT_EQ(part.h[k], base.h[(size_t)subset[k]]);
    EXPECT_TRUE(std::equal(part.nearest.begin() + (int64_t)k * 16, part.nearest.begin() + (int64_t)k * 16 + 16,
                           base.nearest.begin() + (int64_t)subset[k] * 16));
  }
}

// The same particles stored in another order, as another rank would hold them: the same h,
// and the same neighbours (by id).
TEST(Neighbours, StorageOrder)
{
  const int open[3] = {0, 0, 0};
  const Set s = make_set(CLUSTERED, 1500, open, 8);
  std::vector<int64_t> perm((size_t)s.n());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(9));
  Set t = s;
  for (size_t k = 0; k < perm.size(); ++k) {
    t.id[k] = s.id[(size_t)perm[k]];
    for (int d = 0; d < 3; ++d)
      t.pos[3 * k + d] = s.pos[3 * (size_t)perm[k] + d];
  }
  const Answer a = search(s, 64, 16, 1), b = search(t, 64, 16, 2);
  for (size_t k = 0; k < perm.size(); ++k) {
    const size_t i = (size_t)perm[k];
    ASSERT_EQ(b.h[k], a.h[i]);
    for (int e = 0; e < 16; ++e)
      ASSERT_EQ(t.id[(size_t)b.nearest[k * 16 + e]], s.id[(size_t)a.nearest[i * 16 + e]]);
  }
}

double m4(double r, double h)
{
  const double q = r / h, norm = 1.0 / (M_PI * h * h * h);
  return q < 1 ? norm * (1 - 1.5 * q * q + 0.75 * q * q * q) : (q < 2 ? norm * 0.25 * (2 - q) * (2 - q) * (2 - q) : 0);
}

TEST(Neighbours, DensityAgainstBruteForce)
{
  const int periodic[3] = {1, 1, 1};
  const Set s = make_set(CLUSTERED, 1500, periodic, 10);
  std::vector<double> mass((size_t)s.n());
  for (size_t i = 0; i < mass.size(); ++i)
    mass[i] = 0.5 + (double)(i % 7) / 7.0;
  const Answer a = search(s, 64, 0, 2);
  kd_tree *tree = nullptr;
  call_result result;
  std::memset(&result, 0, sizeof result);
  ASSERT_EQ(kd_tree_build(&tree, s.n(), s.pos.data(), s.id.data(), &s.box, 2, &result), PHEW_OK);
  std::vector<double> rho((size_t)s.n()), rho4((size_t)s.n());
  ASSERT_EQ(sph_density(tree, a.h.data(), mass.data(), 2.0, s.n(), nullptr, rho.data(), 1, &result), PHEW_OK)
      << result.message;
  ASSERT_EQ(sph_density(tree, a.h.data(), mass.data(), 2.0, s.n(), nullptr, rho4.data(), 4, &result), PHEW_OK);
  // HOP's way: the balls from 63-nearest lists instead of the tree, on 1 and 3 threads, the
  // first 1000 particles listed and the others scanning: the same bits
  const Answer listed = search(s, 64, 63, 2, nullptr, 4);
  const density_lists lists = {listed.nearest.data(), 63, 1000};
  std::vector<double> rho_lists((size_t)s.n()), rho_lists3((size_t)s.n());
  ASSERT_EQ(sph_density_listed(tree, a.h.data(), mass.data(), 2.0, s.n(), nullptr, &lists, rho_lists.data(), 1,
                               &result),
            PHEW_OK);
  ASSERT_EQ(sph_density_listed(tree, a.h.data(), mass.data(), 2.0, s.n(), nullptr, &lists, rho_lists3.data(), 3,
                               &result),
            PHEW_OK);
  kd_tree_free(tree);
  EXPECT_EQ(0, std::memcmp(rho.data(), rho4.data(), rho.size() * sizeof(double))) << "threads change the density";
  EXPECT_EQ(0, std::memcmp(rho.data(), rho_lists.data(), rho.size() * sizeof(double))) << "lists change the density";
  EXPECT_EQ(0, std::memcmp(rho.data(), rho_lists3.data(), rho.size() * sizeof(double))) << "lists, 3 threads";
  double worst = 0;
  for (int64_t i = 0; i < s.n(); ++i) {
    long double sum = 0;
    for (int64_t j = 0; j < s.n(); ++j) {
      const double r = std::sqrt(dist2(s, i, j));
      sum += (long double)mass[(size_t)j] * ((long double)m4(r, a.h[(size_t)i]) + m4(r, a.h[(size_t)j])) / 2;
    }
    worst = std::max(worst, (double)(std::fabs((long double)rho[(size_t)i] - sum) / sum));
  }
  EXPECT_LT(worst, 1e-13);

  // the same neighbourhoods inside a tree holding far particles too (a padded rank): same bits
  Set big = s;
  std::vector<double> h2 = a.h, mass2 = mass;
  for (int k = 0; k < 200; ++k) { // a far, dense clump (other ranks' particles) with tiny h
    big.pos.insert(big.pos.end(), {0.6 + 1e-4 * k, 0.6, 0.6});
    big.id.push_back(int64_t(1) << 40 | k);
    h2.push_back(1e-4);
    mass2.push_back(1.0);
  }
  ASSERT_EQ(kd_tree_build(&tree, big.n(), big.pos.data(), big.id.data(), &big.box, 2, &result), PHEW_OK);
  std::vector<double> rho_big((size_t)s.n());
  ASSERT_EQ(sph_density(tree, h2.data(), mass2.data(), 2.0, s.n(), nullptr, rho_big.data(), 2, &result), PHEW_OK);
  kd_tree_free(tree);
  int64_t differ = 0;
  for (int64_t i = 0; i < s.n(); ++i) {
    bool near_far_clump = false; // particles whose kernel reaches the added ones may change
    for (int k = 0; k < 200 && !near_far_clump; ++k) {
      const double dx = delta(s.box, 0, s.pos[3 * i], 0.6 + 1e-4 * k), dy = delta(s.box, 1, s.pos[3 * i + 1], 0.6),
                   dz = delta(s.box, 2, s.pos[3 * i + 2], 0.6);
      near_far_clump = std::sqrt((dx * dx + dy * dy) + dz * dz) < 2 * a.h[(size_t)i] + 1e-3;
    }
    if (!near_far_clump && std::memcmp(&rho[(size_t)i], &rho_big[(size_t)i], sizeof(double)) != 0)
      ++differ;
  }
  EXPECT_EQ(differ, 0) << "the density depends on particles outside the kernels";
}

TEST(Neighbours, Errors)
{
  const int periodic[3] = {1, 1, 1};
  Set s = make_set(UNIFORM, 40, periodic, 11);
  kd_tree *tree = nullptr;
  call_result result;
  std::memset(&result, 0, sizeof result);
  ASSERT_EQ(kd_tree_build(&tree, s.n(), s.pos.data(), s.id.data(), &s.box, 1, &result), PHEW_OK);
  std::vector<double> h((size_t)s.n()), reach((size_t)s.n());
  std::vector<int32_t> nearest((size_t)s.n() * 16);
  knn_query q = {64, 16, s.n(), nullptr, h.data(), reach.data(), nearest.data(), 1, 0};
  EXPECT_EQ(knn_search(tree, &q, &result), PHEW_ERROR_ARGUMENT); // 40 particles, 65 needed
  EXPECT_GT(std::strlen(result.message), 0u);
  kd_tree_free(tree);

  Set piled = make_set(UNIFORM, 300, periodic, 12); // 70 at one point: h = 0 there
  for (int k = 0; k < 70; ++k)
    for (int d = 0; d < 3; ++d)
      piled.pos[3 * (size_t)k + d] = 0.25;
  const Answer a = search(piled, 64, 0, 1);
  EXPECT_EQ(a.h[0], 0.0);
  ASSERT_EQ(kd_tree_build(&tree, piled.n(), piled.pos.data(), piled.id.data(), &piled.box, 1, &result), PHEW_OK);
  std::vector<double> rho((size_t)piled.n());
  std::memset(&result, 0, sizeof result);
  EXPECT_EQ(sph_density(tree, a.h.data(), nullptr, 1.0, piled.n(), nullptr, rho.data(), 1, &result), PHEW_ERROR_DATA);
  EXPECT_NE(std::strstr(result.message, "smoothing length 0"), nullptr) << result.message;
  kd_tree_free(tree);
}

} // namespace
