// AMR hierarchies (issue 8): PHEW_MESH_AMR against an independent reference (amr_reference.cpp:
// a brute-force leaf-cell graph and a plain serial PHEW on it), against the uniform-grid path
// where the AMR is a uniform grid in disguise, on hand-built cases whose answers are worked out
// below, on random hierarchies, and on bad input. The explicit leaf graph is also handed to
// the core as PHEW_MESH_GRAPH, which checks the reference's PHEW against the core's graph path.
#include "amr_reference.h"
#include "phew_reference.h"
#include "phew_test_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>

using amrref::Amr;
using amrref::CoreRun;
using amrref::LeafGraph;

namespace {

const double NaN = std::numeric_limits<double>::quiet_NaN();

// ---- helpers ----------------------------------------------------------------------------------

// A density per block cell from a function of (level, index on the level); covered cells get
// `covered` (NaN: the core must not read them).
template <class Fn> std::vector<double> fill_cells(const Amr &a, const LeafGraph &lg, Fn fn, double covered = NaN)
{
  const std::vector<amrref::BlockCell> cells = amrref::block_cells(a);
  std::vector<double> rho(cells.size());
  for (size_t c = 0; c < cells.size(); ++c)
    rho[c] = lg.leaf_of_cell[c] < 0 ? covered : fn(cells[c].level, cells[c].idx);
  return rho;
}

// Index of the block cell of (level, ix, iy, iz), -1 if no block holds it.
int64_t cell_index(const Amr &a, int level, int64_t x, int64_t y, int64_t z)
{
  int64_t base = 0;
  for (size_t b = 0; b < a.blocks.size(); ++b) {
    const phew_amr_block &B = a.blocks[b];
    const int64_t q[3] = {x - B.lo[0], y - B.lo[1], z - B.lo[2]};
    if (B.level == level && q[0] >= 0 && q[1] >= 0 && q[2] >= 0 && q[0] < B.dims[0] && q[1] < B.dims[1] &&
        q[2] < B.dims[2])
      return base + q[0] + B.dims[0] * (q[1] + B.dims[1] * q[2]);
    base += a.block_cells(b);
  }
  return -1;
}

int64_t leaf_index(const Amr &a, const LeafGraph &lg, int level, int64_t x, int64_t y, int64_t z)
{
  const int64_t c = cell_index(a, level, x, y, z);
  return c < 0 ? -1 : lg.leaf_of_cell[(size_t)c];
}

bool contains_any(const char *message, const std::vector<const char *> &words)
{
  std::string m(message);
  for (char &ch : m)
    ch = (char)std::tolower((unsigned char)ch);
  for (const char *w : words) {
    std::string x(w);
    for (char &ch : x)
      ch = (char)std::tolower((unsigned char)ch);
    if (m.find(x) != std::string::npos)
      return true;
  }
  return false;
}

// The core on the AMR and on the explicit leaf graph, both against the reference. Returns the
// reference for further checks by the caller.
amrref::Result check_against_reference(const Amr &a, const std::vector<double> &rho_cells, const phew_params &p,
                                       bool f32 = false)
{
  const LeafGraph lg = amrref::build_leaf_graph(a);
  std::vector<double> rho = rho_cells;
  if (f32)
    for (double &v : rho)
      v = (double)(float)v;
  const amrref::Graph g = amrref::make_graph(lg, rho);
  const amrref::Result ref = amrref::find_clumps(g, p);
  {
    SCOPED_TRACE("core PHEW_MESH_GRAPH on the reference's leaf graph");
    if (!f32) {
      auto core = amrref::run_graph(g, p);
      EXPECT_EQ(core->status, PHEW_OK) << core->context.message;
      if (core->status == PHEW_OK)
        amrref::expect_matches(g, core->result, core->patch, core->clump, core->halo, ref);
    }
  }
  {
    SCOPED_TRACE("core PHEW_MESH_AMR");
    auto core = amrref::run_amr(a, rho, p, f32);
    EXPECT_EQ(core->status, PHEW_OK) << core->context.message;
    if (core->status == PHEW_OK) {
      EXPECT_TRUE(amrref::covered_cells_unlabelled(lg, *core));
      std::vector<int64_t> patch, clump, halo;
      amrref::to_leaves(lg, *core, patch, clump, halo);
      amrref::expect_matches(g, core->result, patch, clump, halo, ref);
    }
  }
  return ref;
}

// ---- random hierarchies --------------------------------------------------------------------

// Level 0 tiles the domain (a product of random cuts per axis); each finer level gets a few
// random aligned blocks inside the union of the level above, not overlapping each other.
Amr random_amr(phewtest::SplitMix &g, int max_level, int64_t min_dim, int64_t max_dim, bool shuffle)
{
  Amr a;
  for (int d = 0; d < 3; ++d) {
    a.level0_dims[d] = min_dim + (int64_t)(g.next() % (uint64_t)(max_dim - min_dim + 1));
    a.periodic[d] = (int)(g.next() % 2);
    a.spacing[d] = 0.5 + (double)(g.next() % 4) * 0.25;
    a.origin[d] = (double)(g.next() % 5) - 2.0;
  }
  std::vector<int64_t> cuts[3];
  for (int d = 0; d < 3; ++d) {
    std::set<int64_t> s = {0, a.level0_dims[d]};
    const int n = (int)(g.next() % 3);
    for (int k = 0; k < n; ++k)
      s.insert(1 + (int64_t)(g.next() % (uint64_t)a.level0_dims[d]));
    cuts[d].assign(s.begin(), s.end());
    cuts[d].erase(std::unique(cuts[d].begin(), cuts[d].end()), cuts[d].end());
    while (cuts[d].back() > a.level0_dims[d])
      cuts[d].pop_back();
  }
  for (size_t i = 0; i + 1 < cuts[0].size(); ++i)
    for (size_t j = 0; j + 1 < cuts[1].size(); ++j)
      for (size_t k = 0; k + 1 < cuts[2].size(); ++k)
        a.add(0, cuts[0][i], cuts[1][j], cuts[2][k], cuts[0][i + 1] - cuts[0][i], cuts[1][j + 1] - cuts[1][j],
              cuts[2][k + 1] - cuts[2][k]);
  for (int l = 0; l < max_level; ++l) {
    // cells of level l present (in some block of level l) and already refined
    const int64_t n[3] = {a.level_dim(l, 0), a.level_dim(l, 1), a.level_dim(l, 2)};
    std::vector<char> present((size_t)(n[0] * n[1] * n[2]), 0), refined(present.size(), 0);
    for (const phew_amr_block &B : a.blocks)
      if (B.level == l)
        for (int64_t z = 0; z < B.dims[2]; ++z)
          for (int64_t y = 0; y < B.dims[1]; ++y)
            for (int64_t x = 0; x < B.dims[0]; ++x)
              present[(size_t)(B.lo[0] + x + n[0] * (B.lo[1] + y + n[1] * (B.lo[2] + z)))] = 1;
    const int want = 1 + (int)(g.next() % 4);
    int added = 0;
    for (int attempt = 0; attempt < 60 && added < want; ++attempt) {
      int64_t lo[3], dims[3];
      for (int d = 0; d < 3; ++d) {
        dims[d] = 1 + (int64_t)(g.next() % (uint64_t)std::min<int64_t>(3, n[d]));
        lo[d] = (int64_t)(g.next() % (uint64_t)(n[d] - dims[d] + 1));
      }
      bool ok = true;
      for (int64_t z = 0; z < dims[2] && ok; ++z)
        for (int64_t y = 0; y < dims[1] && ok; ++y)
          for (int64_t x = 0; x < dims[0] && ok; ++x) {
            const size_t c = (size_t)(lo[0] + x + n[0] * (lo[1] + y + n[1] * (lo[2] + z)));
            ok = present[c] && !refined[c];
          }
      if (!ok)
        continue;
      for (int64_t z = 0; z < dims[2]; ++z)
        for (int64_t y = 0; y < dims[1]; ++y)
          for (int64_t x = 0; x < dims[0]; ++x)
            refined[(size_t)(lo[0] + x + n[0] * (lo[1] + y + n[1] * (lo[2] + z)))] = 1;
      a.add(l + 1, 2 * lo[0], 2 * lo[1], 2 * lo[2], 2 * dims[0], 2 * dims[1], 2 * dims[2]);
      ++added;
    }
  }
  if (shuffle)
    for (size_t i = a.blocks.size() - 1; i > 0; --i)
      std::swap(a.blocks[i], a.blocks[(size_t)(g.next() % (i + 1))]);
  return a;
}

// Random smooth-ish field evaluated at the cell centres (in level-0 cell units), plus noise.
struct Blobs {
  double c[6][3], w[6], h[6];
  int n;
  double noise;
  int quantize; // 0: none; else values floor(v * quantize) / quantize (ties across levels)
  Blobs(phewtest::SplitMix &g, const Amr &a)
  {
    n = 2 + (int)(g.next() % 5);
    for (int b = 0; b < n; ++b) {
      for (int d = 0; d < 3; ++d)
        c[b][d] = g.uniform() * (double)a.level0_dims[d];
      w[b] = 0.4 + 1.2 * g.uniform();
      h[b] = 2.0 + 8.0 * g.uniform();
    }
    noise = g.uniform() < 0.3 ? 0.0 : 0.5 * g.uniform();
    quantize = g.uniform() < 0.3 ? 2 : 0;
  }
  double operator()(const Amr &a, phewtest::SplitMix &g, int level, const int64_t *idx) const
  {
    double v = 1.0 + noise * g.uniform();
    for (int b = 0; b < n; ++b) {
      double r2 = 0;
      for (int d = 0; d < 3; ++d) {
        double x = ((double)idx[d] + 0.5) / (double)(1 << level) - c[b][d];
        const double L = (double)a.level0_dims[d];
        if (a.periodic[d]) {
          if (x > L / 2)
            x -= L;
          if (x < -L / 2)
            x += L;
        }
        r2 += x * x;
      }
      v += h[b] * std::exp(-0.5 * r2 / (w[b] * w[b]));
    }
    if (quantize)
      v = std::floor(v * quantize) / quantize;
    return v;
  }
};

double leaf_quantile(const LeafGraph &lg, const std::vector<double> &rho_cells, double q)
{
  std::vector<double> v;
  for (int64_t i = 0; i < lg.n(); ++i)
    v.push_back(rho_cells[(size_t)lg.cell_of_leaf[(size_t)i]]);
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, (size_t)(q * (double)v.size()))];
}

// ---- (a) the reference's leaf graph, checked by hand and against the grid stencil ----------

// One level split into blocks: the leaf graph is the 26-neighbour stencil and ids are grid ids.
TEST(AmrReference, OneLevelLeafGraphIsTheGridStencil)
{
  const int periodic_sets[3][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}};
  for (const auto &per : periodic_sets) {
    phewtest::Field f(5, 4, 3);
    Amr a;
    a.level0_dims[0] = 5, a.level0_dims[1] = 4, a.level0_dims[2] = 3;
    for (int d = 0; d < 3; ++d)
      f.periodic[d] = a.periodic[d] = per[d];
    a.add(0, 0, 0, 0, 2, 4, 3);
    a.add(0, 2, 0, 0, 3, 1, 3);
    a.add(0, 2, 1, 0, 3, 3, 3);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    ASSERT_EQ(lg.n(), 60);
    for (int64_t i = 0; i < lg.n(); ++i) {
      const int64_t id = lg.gid[(size_t)i];
      std::set<int64_t> want, got;
      phewtest::for_each_neighbour(f, id, [&](int64_t q) { want.insert(q); });
      for (int64_t k = lg.offsets[(size_t)i]; k < lg.offsets[(size_t)i + 1]; ++k)
        got.insert(lg.gid[(size_t)lg.neighbours[(size_t)k]]);
      ASSERT_EQ(got, want) << "cell " << id;
      const auto &x = lg.idx[(size_t)i];
      EXPECT_EQ(id, f.id(x[0], x[1], x[2]));
      EXPECT_EQ(lg.volume[(size_t)i], 1.0);
      EXPECT_EQ(lg.position[(size_t)(3 * i)], (double)x[0] + 0.5);
    }
  }
}

// 4^3 level 0, the level-1 block lo (2,2,2) dims (2,2,2) refines level-0 cell (1,1,1). Counted
// by hand: a level-1 cell touches its 7 siblings and the 7 uncovered level-0 cells around its
// corner; level-0 cell (2,1,1) touches 25 level-0 cells and the 4 level-1 cells on its face;
// level-0 cell (0,0,0) touches 6 level-0 cells and, at one corner point, level-1 cell (2,2,2).
TEST(AmrReference, TwoLevelsCountedByHand)
{
  Amr a;
  a.level0_dims[0] = a.level0_dims[1] = a.level0_dims[2] = 4;
  a.add(0, 0, 0, 0, 4, 4, 4);
  a.add(1, 2, 2, 2, 2, 2, 2);
  const LeafGraph lg = amrref::build_leaf_graph(a);
  ASSERT_EQ(lg.n(), 63 + 8);
  EXPECT_EQ(leaf_index(a, lg, 0, 1, 1, 1), -1) << "covered";
  auto degree = [&](int64_t i) { return lg.offsets[(size_t)i + 1] - lg.offsets[(size_t)i]; };
  const int64_t f222 = leaf_index(a, lg, 1, 2, 2, 2), f333 = leaf_index(a, lg, 1, 3, 3, 3);
  EXPECT_EQ(lg.gid[(size_t)f222], 64 + 2 + 8 * (2 + 8 * 2));
  EXPECT_EQ(lg.gid[(size_t)f333], 283);
  EXPECT_EQ(lg.volume[(size_t)f333], 0.125);
  EXPECT_EQ(lg.position[(size_t)(3 * f333)], 1.75);
  EXPECT_EQ(degree(f222), 14);
  EXPECT_EQ(degree(f333), 14);
  EXPECT_EQ(degree(leaf_index(a, lg, 0, 2, 1, 1)), 29);
  EXPECT_EQ(degree(leaf_index(a, lg, 0, 0, 0, 0)), 7);
  EXPECT_TRUE(lg.are_neighbours(leaf_index(a, lg, 0, 0, 0, 0), f222));
  EXPECT_FALSE(lg.are_neighbours(leaf_index(a, lg, 0, 0, 0, 0), f333));
  EXPECT_TRUE(lg.are_neighbours(f333, leaf_index(a, lg, 0, 2, 2, 2)));  // corner
  EXPECT_TRUE(lg.are_neighbours(f333, leaf_index(a, lg, 0, 2, 2, 1)));  // edge
  EXPECT_TRUE(lg.are_neighbours(f333, leaf_index(a, lg, 0, 2, 1, 1)));  // face
  EXPECT_FALSE(lg.are_neighbours(f222, leaf_index(a, lg, 0, 2, 2, 2))); // far corner
  // total volume of the leaves is the domain's
  double v = 0;
  for (double x : lg.volume)
    v += x;
  EXPECT_EQ(v, 64.0);
}

// The hierarchy H used by the level-jump cases: 4^3 level 0; level 1 lo 0 dims 4 (refines
// level-0 cells 0..1); level 2 lo (2,2,6) dims 2 (refines level-1 cell (1,1,3)); level 3 lo
// (6,6,12) dims (2,2,4) (refines level-2 cells (3,3,6) and (3,3,7)). Finest-level units: a
// level-0 cell is 8 wide, level 1 4, level 2 2, level 3 1.
Amr hierarchy_h()
{
  Amr a;
  a.level0_dims[0] = a.level0_dims[1] = a.level0_dims[2] = 4;
  a.add(0, 0, 0, 0, 4, 4, 4);
  a.add(1, 0, 0, 0, 4, 4, 4);
  a.add(2, 2, 2, 6, 2, 2, 2);
  a.add(3, 6, 6, 12, 2, 2, 4);
  return a;
}

TEST(AmrReference, LevelJumpsOfTwoAndThree)
{
  const Amr a = hierarchy_h();
  const LeafGraph lg = amrref::build_leaf_graph(a);
  ASSERT_EQ(lg.n(), 56 + 63 + 6 + 16);
  EXPECT_EQ(a.level_offset(3), 64 + 512 + 4096);
  const int64_t top = leaf_index(a, lg, 3, 7, 7, 15), bottom = leaf_index(a, lg, 3, 7, 7, 12);
  EXPECT_EQ(lg.gid[(size_t)top], 20263);
  EXPECT_EQ(lg.gid[(size_t)bottom], 17191);
  EXPECT_EQ(lg.volume[(size_t)top], 1.0 / 512);
  // level 3 [7,8]x[7,8]x[15,16] and level 0 (1,1,2) [8,16]x[8,16]x[16,24]: a corner point
  EXPECT_TRUE(lg.are_neighbours(top, leaf_index(a, lg, 0, 1, 1, 2)));
  EXPECT_TRUE(lg.are_neighbours(top, leaf_index(a, lg, 0, 0, 0, 2)));  // face z = 16
  EXPECT_TRUE(lg.are_neighbours(top, leaf_index(a, lg, 0, 1, 0, 2)));  // edge x = 8, z = 16
  EXPECT_TRUE(lg.are_neighbours(top, leaf_index(a, lg, 1, 2, 1, 3)));  // level 1, face x = 8
  EXPECT_TRUE(lg.are_neighbours(top, leaf_index(a, lg, 1, 2, 2, 3)));  // level 1, edge
  EXPECT_FALSE(lg.are_neighbours(top, leaf_index(a, lg, 1, 2, 2, 2))); // z [8,12]: apart
  // level 3 [7,8]x[7,8]x[12,13] and level 1 (2,2,2) [8,12]^2x[8,12]: a corner point
  EXPECT_TRUE(lg.are_neighbours(bottom, leaf_index(a, lg, 1, 2, 2, 2)));
  EXPECT_FALSE(lg.are_neighbours(bottom, leaf_index(a, lg, 0, 1, 1, 2)));
  // level 2 (2,2,6) [4,6]^2x[12,14]: an edge with level-3 (6,6,12) [6,7]^2x[12,13], apart from (7,7,12)
  EXPECT_TRUE(lg.are_neighbours(leaf_index(a, lg, 3, 6, 6, 12), leaf_index(a, lg, 2, 2, 2, 6)));
  EXPECT_FALSE(lg.are_neighbours(bottom, leaf_index(a, lg, 2, 2, 2, 6)));
  EXPECT_FALSE(lg.are_neighbours(leaf_index(a, lg, 1, 2, 2, 2), leaf_index(a, lg, 0, 1, 1, 2)));
}

// Periodic wrap between levels: level-1 cell (0,0,0) [0,1]^3 touches level-0 cell (3,3,3)
// [6,8]^3 through the corner of the periodic box (finest units, box 8).
TEST(AmrReference, PeriodicWrapBetweenLevels)
{
  Amr a;
  a.level0_dims[0] = a.level0_dims[1] = a.level0_dims[2] = 4;
  a.add(0, 0, 0, 0, 4, 4, 4);
  a.add(1, 0, 0, 0, 2, 2, 2);
  for (int per = 0; per < 2; ++per) {
    a.periodic[0] = a.periodic[1] = a.periodic[2] = per;
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const int64_t f = leaf_index(a, lg, 1, 0, 0, 0);
    EXPECT_EQ(lg.are_neighbours(f, leaf_index(a, lg, 0, 3, 3, 3)), per == 1);
    EXPECT_EQ(lg.are_neighbours(leaf_index(a, lg, 0, 3, 3, 3), f), per == 1);
    EXPECT_EQ(lg.are_neighbours(f, leaf_index(a, lg, 0, 3, 0, 0)), per == 1);
    EXPECT_FALSE(lg.are_neighbours(leaf_index(a, lg, 1, 1, 0, 0), leaf_index(a, lg, 0, 3, 0, 0)));
    EXPECT_EQ(lg.are_neighbours(leaf_index(a, lg, 1, 0, 1, 1), leaf_index(a, lg, 0, 3, 0, 0)), per == 1);
  }
}

// Random hierarchies: the relation is symmetric, leaves tile the domain, a leaf's neighbours
// are exactly the leaves whose boxes come within its closed box (checked on a few by a second,
// independent route: every finest-level point of the closed box, looked up).
TEST(AmrReference, RandomLeafGraphsAreConsistent)
{
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    phewtest::SplitMix g(seed);
    const Amr a = random_amr(g, 1 + (int)(seed % 3), 2, 4, seed % 2);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const int L = a.max_level();
    int64_t N[3];
    for (int d = 0; d < 3; ++d)
      N[d] = a.level0_dims[d] << L;
    // the leaf owning each finest cell
    std::vector<int64_t> owner((size_t)(N[0] * N[1] * N[2]), -1);
    for (int64_t i = 0; i < lg.n(); ++i) {
      const int64_t s = (int64_t)1 << (L - lg.level[(size_t)i]);
      const auto &x = lg.idx[(size_t)i];
      for (int64_t z = x[2] * s; z < (x[2] + 1) * s; ++z)
        for (int64_t y = x[1] * s; y < (x[1] + 1) * s; ++y)
          for (int64_t w = x[0] * s; w < (x[0] + 1) * s; ++w) {
            int64_t &o = owner[(size_t)(w + N[0] * (y + N[1] * z))];
            ASSERT_EQ(o, -1) << "two leaves cover one point";
            o = i;
          }
    }
    for (int64_t o : owner)
      ASSERT_GE(o, 0) << "a hole in the leaves";
    for (int64_t i = 0; i < lg.n(); ++i) {
      for (int64_t k = lg.offsets[(size_t)i]; k < lg.offsets[(size_t)i + 1]; ++k)
        ASSERT_TRUE(lg.are_neighbours(lg.neighbours[(size_t)k], i)) << "not symmetric";
      // second route: finest cells within one finest cell of the leaf's box (wrapped)
      std::set<int64_t> want;
      const int64_t s = (int64_t)1 << (L - lg.level[(size_t)i]);
      const auto &x = lg.idx[(size_t)i];
      for (int64_t z = x[2] * s - 1; z <= (x[2] + 1) * s; ++z)
        for (int64_t y = x[1] * s - 1; y <= (x[1] + 1) * s; ++y)
          for (int64_t w = x[0] * s - 1; w <= (x[0] + 1) * s; ++w) {
            int64_t c[3] = {w, y, z};
            bool ok = true;
            for (int d = 0; d < 3; ++d)
              if (c[d] < 0 || c[d] >= N[d]) {
                if (!a.periodic[d])
                  ok = false;
                c[d] = (c[d] + N[d]) % N[d];
              }
            if (!ok)
              continue;
            const int64_t o = owner[(size_t)(c[0] + N[0] * (c[1] + N[1] * c[2]))];
            if (o != i)
              want.insert(o);
          }
      std::set<int64_t> got(lg.neighbours.begin() + lg.offsets[(size_t)i],
                            lg.neighbours.begin() + lg.offsets[(size_t)i + 1]);
      ASSERT_EQ(got, want) << "leaf " << i << " (level " << lg.level[(size_t)i] << ")";
    }
  }
}

// ---- (b) the reference's PHEW, checked against the core's grid path and the grid reference --

// On a one-level AMR (a uniform grid) the reference on its leaf graph gives exactly what the
// core's structured path gives, and what the existing grid reference gives.
TEST(AmrReference, OneLevelReferenceMatchesTheCoreGridPath)
{
  struct Case {
    int64_t n[3];
    int periodic[3];
    int kind;
    double relevance;
    int merging;
  } cases[] = {{{12, 10, 9}, {0, 0, 0}, 0, 1.5, 1},
               {{11, 9, 8}, {1, 1, 1}, 0, 2.0, 1},
               {{10, 10, 6}, {1, 0, 1}, 1, 1.2, 1},
               {{9, 8, 7}, {0, 1, 0}, 2, 1.0, 0}};
  uint64_t seed = 40;
  for (const Case &k : cases) {
    SCOPED_TRACE(++seed);
    phewtest::Field f = phewtest::smoothed_noise(k.n[0], k.n[1], k.n[2], seed, k.kind == 1 ? 1 : 2);
    if (k.kind == 2)
      for (double &v : f.rho)
        v = std::floor(v * 20.0);
    Amr a;
    for (int d = 0; d < 3; ++d) {
      a.level0_dims[d] = f.n[d];
      f.periodic[d] = a.periodic[d] = k.periodic[d];
      f.spacing[d] = a.spacing[d] = 0.5 + 0.25 * d;
      f.origin[d] = a.origin[d] = -1.0 + d;
    }
    a.add(0, 0, 0, 0, f.n[0], f.n[1], f.n[2]);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const amrref::Graph g = amrref::make_graph(lg, f.rho);
    const phew_params p = phewtest::make_params(phewtest::quantile(f, 0.4), k.relevance, k.merging,
                                                phewtest::quantile(f, 0.75));
    const amrref::Result ref = amrref::find_clumps(g, p);
    ASSERT_GT(ref.n_peaks, 3);
    auto core = phewtest::run(f, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    amrref::expect_matches(g, core->result, core->patch, core->clump, core->halo, ref);
    // and against the grid reference, cell by cell
    const phewref::Result grid_ref = phewref::find_clumps(f, p);
    EXPECT_EQ(ref.patch, grid_ref.patch);
    EXPECT_EQ(ref.clump, grid_ref.clump);
    EXPECT_EQ(ref.halo, grid_ref.halo);
  }
}

// Random hierarchies: the reference against the core's graph path on the same explicit graph
// (the AMR path is checked on the same hierarchies below).
TEST(AmrReference, RandomLeafGraphsMatchTheCoreGraphPath)
{
  for (uint64_t seed = 100; seed < 130; ++seed) {
    SCOPED_TRACE(seed);
    phewtest::SplitMix g(seed);
    const Amr a = random_amr(g, 1 + (int)(seed % 3), 2, 5, false);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const Blobs blobs(g, a);
    const std::vector<double> rho = fill_cells(
        a, lg, [&](int l, const int64_t *x) { return blobs(a, g, l, x); }, 0.0);
    const amrref::Graph gr = amrref::make_graph(lg, rho);
    const phew_params p = phewtest::make_params(leaf_quantile(lg, rho, 0.35), 1.0 + 0.25 * (double)(seed % 4),
                                                (int)(seed % 2), leaf_quantile(lg, rho, 0.7));
    const amrref::Result ref = amrref::find_clumps(gr, p);
    auto core = amrref::run_graph(gr, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    amrref::expect_matches(gr, core->result, core->patch, core->clump, core->halo, ref);
  }
}

// ---- targeted small cases, worked out by hand ------------------------------------------------

// The two-level hierarchy of TwoLevelsCountedByHand with densities 1 (below the threshold 2)
// except where set. Returns the block-cell densities.
struct Small {
  Amr a;
  LeafGraph lg;
  std::vector<double> rho;
  explicit Small(const Amr &amr) : a(amr), lg(amrref::build_leaf_graph(amr))
  {
    rho = fill_cells(a, lg, [](int, const int64_t *) { return 1.0; });
  }
  void set(int level, int64_t x, int64_t y, int64_t z, double v)
  {
    const int64_t c = cell_index(a, level, x, y, z);
    ASSERT_GE(c, 0);
    ASSERT_GE(lg.leaf_of_cell[(size_t)c], 0) << "not a leaf";
    rho[(size_t)c] = v;
  }
  int64_t gid(int level, int64_t x, int64_t y, int64_t z) const { return a.global_id(level, x, y, z); }
};

Amr two_levels()
{
  Amr a;
  a.level0_dims[0] = a.level0_dims[1] = a.level0_dims[2] = 4;
  a.add(0, 0, 0, 0, 4, 4, 4);
  a.add(1, 0, 0, 0, 4, 4, 4); // refines level-0 cells 0..1 on each axis
  return a;
}

// Peak A: level-1 cell (2,2,2) = 10 (id 210), with level-1 (3,3,3) = 5 (id 283) below it.
// Peak B: a level-0 cell = 9, next to a level-0 cell M = 4 that touches (3,3,3)_1 only through
// a face, an edge or a corner. M's highest neighbour is B: M joins B. The only pair of cells of
// different patches is ((3,3,3)_1, M): saddle (5 + 4) / 2 = 4.5, so B has relevance 9 / 4.5 = 2
// and A 10 / 4.5. Without the cross-level contact the patches would be isolated (key saddles
// at the threshold 2).
struct SaddleCase {
  const char *name;
  int64_t m[3], b[3];
} saddle_cases[] = {{"face", {2, 1, 1}, {3, 0, 0}}, {"edge", {2, 2, 1}, {3, 3, 0}}, {"corner", {2, 2, 2}, {3, 3, 3}}};

TEST(Amr, SaddleThroughAFaceAnEdgeAndACornerAcrossLevels)
{
  for (const SaddleCase &k : saddle_cases) {
    SCOPED_TRACE(k.name);
    Small s(two_levels());
    s.set(1, 2, 2, 2, 10);
    s.set(1, 3, 3, 3, 5);
    s.set(0, k.m[0], k.m[1], k.m[2], 4);
    s.set(0, k.b[0], k.b[1], k.b[2], 9);
    const int64_t A = s.gid(1, 2, 2, 2), B = s.gid(0, k.b[0], k.b[1], k.b[2]);
    ASSERT_EQ(A, 210);
    const int64_t M = leaf_index(s.a, s.lg, 0, k.m[0], k.m[1], k.m[2]);
    ASSERT_TRUE(s.lg.are_neighbours(M, leaf_index(s.a, s.lg, 1, 3, 3, 3)));
    ASSERT_FALSE(s.lg.are_neighbours(M, leaf_index(s.a, s.lg, 1, 2, 2, 2)));
    phew_params p = phewtest::make_params(2.0, 1.5, 1, 4.0);
    const amrref::Result ref = check_against_reference(s.a, s.rho, p);
    // the reference agrees with the hand-worked answer
    ASSERT_EQ(ref.clumps.size(), 2u);
    EXPECT_EQ(ref.clumps[0].peak_id, A);
    EXPECT_EQ(ref.clumps[1].peak_id, B);
    EXPECT_EQ(ref.clumps[1].key_saddle_density, 4.5);
    EXPECT_EQ(ref.clumps[1].relevance, 2.0);
    EXPECT_EQ(ref.clumps[0].mass, 10.0 / 8 + 5.0 / 8);
    EXPECT_EQ(ref.clumps[1].mass, 13.0);
    EXPECT_EQ(ref.clumps[1].parent_id, 0) << "saddle 4.5 > 4: B merges into A";
    ASSERT_EQ(ref.haloes.size(), 1u);
    EXPECT_EQ(ref.haloes[0].mass, 13.0 + 15.0 / 8);
    EXPECT_EQ(ref.patch[(size_t)M], B);

    // the core's own answer, spelled out
    auto core = amrref::run_amr(s.a, s.rho, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    ASSERT_EQ(core->result.n_clumps, 2);
    EXPECT_EQ(core->result.clumps[0].peak_id, A);
    EXPECT_EQ(core->result.clumps[1].peak_id, B);
    EXPECT_EQ(core->result.clumps[1].key_saddle_density, 4.5);
    EXPECT_EQ(core->result.clumps[0].key_saddle_density, 4.5);
    EXPECT_EQ(core->result.clumps[1].parent_id, 0);
    EXPECT_DOUBLE_EQ(core->result.clumps[0].mass, 1.875);
    EXPECT_EQ(core->result.n_haloes, 1);
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, 1, 3, 3, 3)], A);
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, 0, k.m[0], k.m[1], k.m[2])], B);

    // with a relevance threshold above 2, B is noise and joins A through the saddle
    p.relevance_threshold = 2.05;
    check_against_reference(s.a, s.rho, p);
    auto noisy = amrref::run_amr(s.a, s.rho, p);
    ASSERT_EQ(noisy->status, PHEW_OK) << noisy->context.message;
    ASSERT_EQ(noisy->result.n_clumps, 1);
    EXPECT_EQ(noisy->result.clumps[0].n_cells, 4);
    EXPECT_EQ(noisy->clump[(size_t)cell_index(s.a, 0, k.b[0], k.b[1], k.b[2])], 0);
  }
}

// Steepest ascent across a level boundary: a level-0 cell M = 6 whose highest neighbour is a
// level-1 cell (3,3,3) = 8.5 touching it only through a face, an edge or a corner; its
// same-level neighbour B = 8 is lower. M climbs to (3,3,3)_1 and on to A = (2,2,2)_1 = 10.
TEST(Amr, SteepestAscentThroughAFaceAnEdgeAndACornerAcrossLevels)
{
  for (const SaddleCase &k : saddle_cases) {
    SCOPED_TRACE(k.name);
    Small s(two_levels());
    s.set(1, 2, 2, 2, 10);
    s.set(1, 3, 3, 3, 8.5);
    s.set(0, k.m[0], k.m[1], k.m[2], 6);
    s.set(0, k.b[0], k.b[1], k.b[2], 8);
    const phew_params p = phewtest::make_params(2.0, 1.01);
    const amrref::Result ref = check_against_reference(s.a, s.rho, p);
    const int64_t M = leaf_index(s.a, s.lg, 0, k.m[0], k.m[1], k.m[2]);
    EXPECT_EQ(ref.patch[(size_t)M], 210);
    ASSERT_EQ(ref.clumps.size(), 2u);
    EXPECT_EQ(ref.clumps[1].key_saddle_density, 7.0); // (6 + 8) / 2
    auto core = amrref::run_amr(s.a, s.rho, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, 0, k.m[0], k.m[1], k.m[2])], 210);
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, 0, k.b[0], k.b[1], k.b[2])], s.gid(0, k.b[0], k.b[1], k.b[2]));
    ASSERT_EQ(core->result.n_clumps, 2);
    EXPECT_EQ(core->result.clumps[1].key_saddle_density, 7.0);
    EXPECT_EQ(core->result.clumps[0].n_cells, 3);
  }
}

// A peak on a level-0 cell with a finer region on its face: P = (2,1,1)_0 = 10; the fine
// cells of the refined corner decrease away from it; all of them and the level-0 cells around
// belong to P's patch. Also from the fine side: a fine cell (3,3,3)_1 = 5 whose only higher
// neighbour is the coarse corner cell (2,2,2)_0 = 9 joins that coarse peak.
TEST(Amr, PeakOnACoarseCellNextToAFinerRegion)
{
  Small s(two_levels());
  for (int64_t z = 0; z < 4; ++z)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x) // fine cells: 9 minus their distance (in fine cells) from P's face
        s.set(1, x, y, z, 9.0 - 0.5 * (double)((3 - x) + std::abs(y - 2) + std::abs(z - 2)));
  s.set(0, 2, 1, 1, 10);
  const int64_t around[3][3] = {{2, 0, 0}, {3, 1, 1}, {2, 2, 2}};
  for (const auto &c : around)
    s.set(0, c[0], c[1], c[2], 7);
  const phew_params p = phewtest::make_params(2.0, 1.5);
  const amrref::Result ref = check_against_reference(s.a, s.rho, p);
  ASSERT_EQ(ref.clumps.size(), 1u);
  EXPECT_EQ(ref.clumps[0].peak_id, 22);
  EXPECT_EQ(ref.clumps[0].n_cells, 64 + 4);
  EXPECT_EQ(ref.clumps[0].peak_position[0], 2.5);
  auto core = amrref::run_amr(s.a, s.rho, p);
  ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
  ASSERT_EQ(core->result.n_clumps, 1);
  EXPECT_EQ(core->result.clumps[0].peak_id, 22);
  EXPECT_EQ(core->result.clumps[0].peak_position[0], 2.5);
  EXPECT_EQ(core->result.clumps[0].peak_position[1], 1.5);
  EXPECT_EQ(core->result.clumps[0].n_cells, 68);
  EXPECT_DOUBLE_EQ(core->result.clumps[0].volume, 8.0 + 4.0);

  Small t(two_levels());
  t.set(1, 3, 3, 3, 5);
  t.set(0, 2, 2, 2, 9);
  t.set(1, 1, 1, 1, 8); // another fine peak, apart
  const amrref::Result r2 = check_against_reference(t.a, t.rho, phewtest::make_params(2.0, 1.5));
  EXPECT_EQ(r2.patch[(size_t)leaf_index(t.a, t.lg, 1, 3, 3, 3)], 42);
  auto c2 = amrref::run_amr(t.a, t.rho, phewtest::make_params(2.0, 1.5));
  ASSERT_EQ(c2->status, PHEW_OK) << c2->context.message;
  EXPECT_EQ(c2->patch[(size_t)cell_index(t.a, 1, 3, 3, 3)], 42);
  ASSERT_EQ(c2->result.n_clumps, 2);
  EXPECT_EQ(c2->result.clumps[0].peak_id, 42);
  EXPECT_EQ(c2->result.clumps[0].n_cells, 2);
  EXPECT_DOUBLE_EQ(c2->result.clumps[0].mass, 9.0 + 5.0 / 8);
  EXPECT_EQ(c2->result.clumps[1].peak_id, s.gid(1, 1, 1, 1));
}

// Level jumps of 2 and 3 (hierarchy H): peak A on a level-3 cell = 10, a coarser cell M = 6
// touching A only at a corner point, and peak B = 9 next to M but not to A. M climbs to A
// (across the jump); the saddle A-B is (6 + 9) / 2 = 7.5, B's relevance 1.2.
//   jump 2: A = (7,7,12)_3 [7,8]^2x[12,13], M = (2,2,2)_1 [8,12]^3, B = (3,3,1)_1
//   jump 3: A = (7,7,15)_3 [7,8]^2x[15,16], M = (1,1,2)_0 [8,16]^2x[16,24], B = (2,2,3)_0
TEST(Amr, LevelJumpsOfTwoAndThreeThroughACorner)
{
  struct Jump {
    const char *name;
    int64_t a[3];
    int m_level;
    int64_t m[3], b[3];
    int64_t a_gid, m_gid, b_gid;
    double m_volume;
  } jumps[] = {{"jump 2", {7, 7, 12}, 1, {2, 2, 2}, {3, 3, 1}, 17191, 210, 155, 0.125},
               {"jump 3", {7, 7, 15}, 0, {1, 1, 2}, {2, 2, 3}, 20263, 37, 58, 1.0}};
  for (const Jump &k : jumps) {
    SCOPED_TRACE(k.name);
    Small s(hierarchy_h());
    s.set(3, k.a[0], k.a[1], k.a[2], 10);
    s.set(k.m_level, k.m[0], k.m[1], k.m[2], 6);
    s.set(k.m_level, k.b[0], k.b[1], k.b[2], 9);
    ASSERT_EQ(s.gid(3, k.a[0], k.a[1], k.a[2]), k.a_gid);
    ASSERT_EQ(s.gid(k.m_level, k.m[0], k.m[1], k.m[2]), k.m_gid);
    ASSERT_EQ(s.gid(k.m_level, k.b[0], k.b[1], k.b[2]), k.b_gid);
    const phew_params p = phewtest::make_params(2.0, 1.1, 1, 7.0);
    const amrref::Result ref = check_against_reference(s.a, s.rho, p);
    ASSERT_EQ(ref.clumps.size(), 2u);
    EXPECT_EQ(ref.clumps[0].peak_id, k.a_gid);
    EXPECT_EQ(ref.clumps[1].peak_id, k.b_gid);
    EXPECT_EQ(ref.clumps[0].mass, 10.0 / 512 + 6.0 * k.m_volume);
    EXPECT_EQ(ref.clumps[1].relevance, 1.2);

    auto core = amrref::run_amr(s.a, s.rho, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, k.m_level, k.m[0], k.m[1], k.m[2])], k.a_gid)
        << "the coarse cell must climb to the level-3 peak it touches at a corner";
    ASSERT_EQ(core->result.n_clumps, 2);
    EXPECT_EQ(core->result.clumps[0].peak_id, k.a_gid);
    EXPECT_EQ(core->result.clumps[0].n_cells, 2);
    EXPECT_DOUBLE_EQ(core->result.clumps[0].mass, 10.0 / 512 + 6.0 * k.m_volume);
    EXPECT_DOUBLE_EQ(core->result.clumps[0].volume, 1.0 / 512 + k.m_volume);
    EXPECT_EQ(core->result.clumps[1].key_saddle_density, 7.5);
    EXPECT_EQ(core->result.clumps[1].relevance, 1.2);
    EXPECT_EQ(core->result.clumps[1].parent_id, 0) << "saddle 7.5 > 7: B merges into A";
    EXPECT_EQ(core->result.n_haloes, 1);
    // A's centre is the centre of the level-3 cell (level-0 spacing 1, origin 0)
    EXPECT_DOUBLE_EQ(core->result.clumps[0].peak_position[0], 7.5 / 8);
    EXPECT_DOUBLE_EQ(core->result.clumps[0].peak_position[2], (k.a[2] + 0.5) / 8);
  }
}

// Periodic wrap between levels: A = (0,0,0)_1 = 10 (id 64), M = (3,3,3)_0 = 6 (id 63), B =
// (2,2,2)_0 = 9 (id 42). Periodic: M touches A at the box corner and climbs to it; clump A =
// {A, M}, centre of mass 0.25 + 6 * (-0.75) / 7.25 wrapped into [0, 4). Not periodic: M joins B
// and A is alone.
TEST(Amr, PeriodicWrapBetweenLevels)
{
  for (int per = 0; per < 2; ++per) {
    SCOPED_TRACE(per ? "periodic" : "open");
    Amr amr;
    amr.level0_dims[0] = amr.level0_dims[1] = amr.level0_dims[2] = 4;
    amr.periodic[0] = amr.periodic[1] = amr.periodic[2] = per;
    amr.add(0, 0, 0, 0, 4, 4, 4);
    amr.add(1, 0, 0, 0, 2, 2, 2);
    Small s(amr);
    s.set(1, 0, 0, 0, 10);
    s.set(0, 3, 3, 3, 6);
    s.set(0, 2, 2, 2, 9);
    const phew_params p = phewtest::make_params(2.0, 1.1);
    const amrref::Result ref = check_against_reference(s.a, s.rho, p);
    const int64_t want_m = per ? 64 : 42;
    EXPECT_EQ(ref.patch[(size_t)leaf_index(s.a, s.lg, 0, 3, 3, 3)], want_m);
    auto core = amrref::run_amr(s.a, s.rho, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    EXPECT_EQ(core->patch[(size_t)cell_index(s.a, 0, 3, 3, 3)], want_m);
    ASSERT_EQ(core->result.n_clumps, 2);
    const phew_object &A = core->result.clumps[0];
    EXPECT_EQ(A.peak_id, 64);
    if (per) {
      EXPECT_EQ(A.n_cells, 2);
      EXPECT_EQ(A.key_saddle_density, 7.5);
      const double com = 4.0 + 0.25 + 6.0 * (-0.75) / 7.25;
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(A.center_of_mass[d], com, 1e-12);
    } else {
      EXPECT_EQ(A.n_cells, 1);
      EXPECT_EQ(A.key_saddle_density, 2.0);
      EXPECT_EQ(core->result.clumps[1].n_cells, 2);
    }
  }
}

// Periodic wrap along one axis only, between a level-2 block at the low x end and level-1
// cells at the high x end, with a clump spread across the boundary.
TEST(Amr, PeriodicOneAxisAcrossTheBoundaryBetweenLevels)
{
  Amr a;
  a.level0_dims[0] = 4, a.level0_dims[1] = 3, a.level0_dims[2] = 2;
  a.periodic[0] = 1;
  a.add(0, 0, 0, 0, 4, 3, 2);
  a.add(1, 0, 0, 0, 2, 6, 4); // level-0 column x = 0
  a.add(1, 6, 2, 0, 2, 2, 2); // level-0 cell (3,1,0)
  a.add(2, 0, 4, 0, 2, 4, 4); // level-1 cells x = 0, y 2..3, z 0..1
  const LeafGraph lg = amrref::build_leaf_graph(a);
  const std::vector<double> rho = fill_cells(a, lg, [&](int l, const int64_t *x) {
    const double h = 1.0 / (double)(1 << l);
    double cx = ((double)x[0] + 0.5) * h, cy = ((double)x[1] + 0.5) * h;
    if (cx > 2)
      cx -= 4; // a ridge across x = 0
    return 10.0 * std::exp(-(cx * cx) / 0.8 - (cy - 1.5) * (cy - 1.5) / 2.0) + 0.01 * (double)(x[2] % 2) + 0.5;
  });
  const phew_params p = phewtest::make_params(1.0, 1.2);
  const amrref::Result ref = check_against_reference(a, rho, p);
  ASSERT_GE(ref.clumps.size(), 1u);
  // the main clump reaches across x = 0 to the cells at the high end
  int64_t high_end = 0;
  for (int64_t i = 0; i < lg.n(); ++i)
    if (ref.clump[(size_t)i] == 0 && lg.position[(size_t)(3 * i)] > 2.0)
      ++high_end;
  EXPECT_GT(high_end, 0);
}

// Levels 0..6 nested around the centre of a 2^3 domain: each level refines the one cell of the
// level above that has a corner at the centre. The level-6 leaf at the centre touches level-0
// leaves (the other octants) at that single point: a level difference of 6.
TEST(Amr, DeepHierarchyAroundOnePoint)
{
  for (int per = 0; per < 2; ++per) {
    SCOPED_TRACE(per ? "periodic" : "open");
    Amr a;
    for (int d = 0; d < 3; ++d) {
      a.level0_dims[d] = 2;
      a.periodic[d] = per;
    }
    a.add(0, 0, 0, 0, 2, 2, 2);
    for (int l = 1; l <= 6; ++l) { // level l: the cells [2^l - 2, 2^l) of the 2^(l+1) per axis
      const int64_t lo = ((int64_t)1 << l) - 2;
      a.add(l, lo, lo, lo, 2, 2, 2);
    }
    const LeafGraph lg = amrref::build_leaf_graph(a);
    ASSERT_EQ(lg.n(), 7 + 6 * 7 + 1);
    const int64_t centre = leaf_index(a, lg, 6, 63, 63, 63), far = leaf_index(a, lg, 0, 1, 1, 1);
    ASSERT_TRUE(lg.are_neighbours(centre, far));
    // density rises towards the centre on the fine side; the level-0 cell (1,1,1) beyond it
    const std::vector<double> rho = fill_cells(a, lg, [&](int l, const int64_t *x) {
      const double h = 1.0 / (double)(1 << l);
      double r2 = 0;
      for (int d = 0; d < 3; ++d)
        r2 += (((double)x[d] + 0.5) * h - 1.0) * (((double)x[d] + 0.5) * h - 1.0);
      return 1.0 + 10.0 * std::exp(-r2 * 50.0) + (l == 0 && x[0] == 1 && x[1] == 1 && x[2] == 1 ? 3.0 : 0.0);
    });
    const phew_params p = phewtest::make_params(1.5, 1.2);
    const amrref::Result ref = check_against_reference(a, rho, p);
    auto core = amrref::run_amr(a, rho, p);
    ASSERT_EQ(core->status, PHEW_OK) << core->context.message;
    // the far level-0 cell climbs straight to the level-6 peak at the centre
    EXPECT_EQ(core->patch[(size_t)cell_index(a, 0, 1, 1, 1)], a.global_id(6, 63, 63, 63));
    EXPECT_EQ(ref.patch[(size_t)far], a.global_id(6, 63, 63, 63));
  }
}

// Tiny level-0 grids (1 or 2 cells along periodic or open axes) with refinement: a level-0
// cell may touch the same neighbour across both faces, or itself (not a neighbour).
TEST(Amr, TinyDomainsAgainstTheReference)
{
  for (uint64_t seed = 3000; seed < 3040; ++seed) {
    phewtest::SplitMix g(seed);
    const Amr a = random_amr(g, 1 + (int)(seed % 3), 1, 2, seed % 2 == 0);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    if (lg.n() < 2)
      continue;
    const Blobs blobs(g, a);
    const std::vector<double> rho = fill_cells(a, lg, [&](int l, const int64_t *x) { return blobs(a, g, l, x); });
    const phew_params p = phewtest::make_params(leaf_quantile(lg, rho, 0.2), 1.1, 1, leaf_quantile(lg, rho, 0.6));
    SCOPED_TRACE("seed " + std::to_string(seed) + ": level 0 " + std::to_string(a.level0_dims[0]) + "x" +
                 std::to_string(a.level0_dims[1]) + "x" + std::to_string(a.level0_dims[2]) + ", periodic " +
                 std::to_string(a.periodic[0]) + std::to_string(a.periodic[1]) + std::to_string(a.periodic[2]) + ", " +
                 std::to_string(lg.n()) + " leaves");
    check_against_reference(a, rho, p);
  }
}

// ---- the AMR path against the uniform grid ---------------------------------------------------

// Compare two catalogues where one is the uniform-grid run (peak ids g) and the other the AMR
// run (peak ids offset + g).
void expect_same_catalogue(const phew_clump_result &grid, const phew_clump_result &amr, int64_t offset)
{
  ASSERT_EQ(grid.n_clumps, amr.n_clumps);
  ASSERT_EQ(grid.n_haloes, amr.n_haloes);
  ASSERT_EQ(grid.n_nodes, amr.n_nodes);
  for (int t = 0; t < 2; ++t) {
    const phew_object *x = t ? grid.haloes : grid.clumps, *y = t ? amr.haloes : amr.clumps;
    for (int64_t i = 0; i < (t ? grid.n_haloes : grid.n_clumps); ++i) {
      SCOPED_TRACE(std::string(t ? "halo " : "clump ") + std::to_string(i) + "\n grid " + amrref::describe(x[i]) +
                   "\n amr  " + amrref::describe(y[i]));
      EXPECT_EQ(y[i].id, x[i].id);
      EXPECT_EQ(y[i].halo_id, x[i].halo_id);
      EXPECT_EQ(y[i].parent_id, x[i].parent_id);
      EXPECT_EQ(y[i].level, x[i].level);
      EXPECT_EQ(y[i].peak_id, x[i].peak_id + offset);
      EXPECT_EQ(y[i].n_cells, x[i].n_cells);
      EXPECT_EQ(y[i].n_clumps, x[i].n_clumps);
      EXPECT_NEAR(y[i].volume, x[i].volume, 1e-12 * x[i].volume);
      EXPECT_NEAR(y[i].mass, x[i].mass, 1e-12 * x[i].mass);
      EXPECT_EQ(y[i].peak_density, x[i].peak_density);
      EXPECT_EQ(y[i].min_density, x[i].min_density);
      EXPECT_NEAR(y[i].mean_density, x[i].mean_density, 1e-12 * x[i].mean_density);
      EXPECT_EQ(y[i].key_saddle_density, x[i].key_saddle_density);
      EXPECT_EQ(y[i].relevance, x[i].relevance);
      for (int d = 0; d < 3; ++d) {
        EXPECT_DOUBLE_EQ(y[i].peak_position[d], x[i].peak_position[d]);
        EXPECT_NEAR(y[i].center_of_mass[d], x[i].center_of_mass[d], 1e-9);
      }
    }
  }
  for (int64_t i = 0; i < grid.n_nodes; ++i) {
    const phew_node &m = grid.nodes[i], &n = amr.nodes[i];
    EXPECT_TRUE(m.id == n.id && m.parent_id == n.parent_id && m.level == n.level && m.clump_id == n.clump_id &&
                m.halo_id == n.halo_id && m.peak_id + offset == n.peak_id && m.peak_density == n.peak_density &&
                m.saddle_density == n.saddle_density && m.n_cells == n.n_cells &&
                std::fabs(m.mass - n.mass) <= 1e-12 * m.mass)
        << "dendrogram node " << i;
  }
  const phew_stats &s = grid.stats, &t = amr.stats;
  EXPECT_EQ(t.n_cells, s.n_cells);
  EXPECT_EQ(t.n_test_cells, s.n_test_cells);
  phewtest::expect_same_merging_stats(t, s);
}

// Bit-identical runs (labels already compared by the caller).
void expect_identical_tables(const phew_clump_result &x, const phew_clump_result &y)
{
  ASSERT_EQ(x.n_clumps, y.n_clumps);
  ASSERT_EQ(x.n_haloes, y.n_haloes);
  ASSERT_EQ(x.n_nodes, y.n_nodes);
  for (int64_t i = 0; i < x.n_clumps; ++i)
    EXPECT_EQ(0, std::memcmp(&x.clumps[i], &y.clumps[i], sizeof(phew_object)))
        << "clump " << i << ": " << amrref::describe(x.clumps[i]) << " vs " << amrref::describe(y.clumps[i]);
  for (int64_t i = 0; i < x.n_haloes; ++i)
    EXPECT_EQ(0, std::memcmp(&x.haloes[i], &y.haloes[i], sizeof(phew_object)))
        << "halo " << i << ": " << amrref::describe(x.haloes[i]) << " vs " << amrref::describe(y.haloes[i]);
  for (int64_t i = 0; i < x.n_nodes; ++i)
    EXPECT_EQ(0, std::memcmp(&x.nodes[i], &y.nodes[i], sizeof(phew_node))) << "dendrogram node " << i;
}

// Labels of an AMR run mapped onto the finest-level grid (cells of level `level` only).
void labels_on_grid(const Amr &a, const CoreRun &r, int level, std::vector<int64_t> out[3])
{
  const int64_t n[3] = {a.level_dim(level, 0), a.level_dim(level, 1), a.level_dim(level, 2)};
  for (int k = 0; k < 3; ++k)
    out[k].assign((size_t)(n[0] * n[1] * n[2]), -99);
  const std::vector<amrref::BlockCell> cells = amrref::block_cells(a);
  for (size_t c = 0; c < cells.size(); ++c)
    if (cells[c].level == level) {
      const size_t g = (size_t)(cells[c].idx[0] + n[0] * (cells[c].idx[1] + n[1] * cells[c].idx[2]));
      out[0][g] = r.patch[c];
      out[1][g] = r.clump[c];
      out[2][g] = r.halo[c];
    }
}

// Random guillotine split of a box into blocks (down to single cells).
void split_box(phewtest::SplitMix &g, Amr &a, int level, const int64_t lo[3], const int64_t dims[3], int depth,
               int64_t unit)
{
  int axis = (int)(g.next() % 3);
  if (depth == 0 || dims[axis] < 2 * unit || g.uniform() < 0.15) {
    a.add(level, lo[0], lo[1], lo[2], dims[0], dims[1], dims[2]);
    return;
  }
  const int64_t cut = unit * (1 + (int64_t)(g.next() % (uint64_t)(dims[axis] / unit - 1)));
  int64_t lo2[3] = {lo[0], lo[1], lo[2]}, d1[3] = {dims[0], dims[1], dims[2]}, d2[3] = {dims[0], dims[1], dims[2]};
  d1[axis] = cut;
  d2[axis] = dims[axis] - cut;
  lo2[axis] += cut;
  split_box(g, a, level, lo, d1, depth - 1, unit);
  split_box(g, a, level, lo2, d2, depth - 1, unit);
}

// An AMR whose finest level covers the whole domain is the uniform grid of that level: the
// same labels (ids shifted by offset(L)) and the same catalogue. The covered coarse cells hold
// NaN, which must not be read.
TEST(Amr, FinestLevelCoveringTheDomainIsTheUniformGrid)
{
  for (int per = 0; per < 2; ++per)
    for (int L = 1; L <= 2; ++L) {
      SCOPED_TRACE("periodic " + std::to_string(per) + ", finest level " + std::to_string(L));
      const int64_t n0[3] = {4, 5, 3};
      Amr a;
      phewtest::SplitMix g(77 + (uint64_t)(per * 10 + L));
      for (int d = 0; d < 3; ++d) {
        a.level0_dims[d] = n0[d];
        a.periodic[d] = per;
        a.spacing[d] = 2.0 - 0.5 * d;
        a.origin[d] = 0.5 * d - 1.0;
      }
      for (int l = 0; l <= L; ++l) {
        const int64_t lo[3] = {0, 0, 0}, dims[3] = {a.level_dim(l, 0), a.level_dim(l, 1), a.level_dim(l, 2)};
        split_box(g, a, l, lo, dims, 4, l == 0 ? 1 : 2);
      }
      phewtest::Field f = phewtest::smoothed_noise(a.level_dim(L, 0), a.level_dim(L, 1), a.level_dim(L, 2),
                                                   300 + (uint64_t)(per * 10 + L), 1);
      for (double &v : f.rho)
        v = std::exp(60.0 * (v - 0.5));
      for (int d = 0; d < 3; ++d) {
        f.periodic[d] = per;
        f.spacing[d] = a.spacing[d] / (double)(1 << L);
        f.origin[d] = a.origin[d];
      }
      const LeafGraph lg = amrref::build_leaf_graph(a);
      ASSERT_EQ(lg.n(), f.size());
      const std::vector<double> rho = fill_cells(a, lg, [&](int, const int64_t *x) { return f.at(x[0], x[1], x[2]); });
      const phew_params p = phewtest::make_params(phewtest::quantile(f, 0.4), 1.3, 1, phewtest::quantile(f, 0.7));
      auto grid = phewtest::run(f, p);
      ASSERT_EQ(grid->status, PHEW_OK) << grid->context.message;
      ASSERT_GT(grid->result.n_clumps, 2);
      auto amr = amrref::run_amr(a, rho, p);
      ASSERT_EQ(amr->status, PHEW_OK) << amr->context.message;
      EXPECT_TRUE(amrref::covered_cells_unlabelled(lg, *amr));
      const int64_t off = a.level_offset(L);
      std::vector<int64_t> got[3];
      labels_on_grid(a, *amr, L, got);
      for (size_t c = 0; c < (size_t)f.size(); ++c) {
        ASSERT_EQ(got[0][c], grid->patch[c] < 0 ? -1 : grid->patch[c] + off) << "PeakPatchId of grid cell " << c;
        ASSERT_EQ(got[1][c], grid->clump[c]) << "ClumpId of grid cell " << c;
        ASSERT_EQ(got[2][c], grid->halo[c]) << "HaloId of grid cell " << c;
      }
      expect_same_catalogue(grid->result, amr->result, off);
      check_against_reference(a, rho, p);
    }
}

// One uniform level split into many blocks (slabs one cell thick, single-cell blocks, random
// splits, blocks listed in any order) gives the single grid's answer; all splits are
// bit-identical to each other.
TEST(Amr, OneLevelSplitIntoBlocksIsTheSingleGrid)
{
  for (int per = 0; per < 2; ++per) {
    SCOPED_TRACE(per ? "periodic" : "open");
    phewtest::Field f = phewtest::smoothed_noise(9, 7, 6, 500 + (uint64_t)per, 1);
    for (double &v : f.rho)
      v = std::exp(60.0 * (v - 0.5));
    f.set_periodic(per);
    const phew_params p = phewtest::make_params(phewtest::quantile(f, 0.35), 1.2, 1, phewtest::quantile(f, 0.7));
    auto grid = phewtest::run(f, p);
    ASSERT_EQ(grid->status, PHEW_OK) << grid->context.message;
    ASSERT_GT(grid->result.n_clumps, 2);

    std::vector<Amr> splits;
    Amr base;
    for (int d = 0; d < 3; ++d) {
      base.level0_dims[d] = f.n[d];
      base.periodic[d] = per;
    }
    Amr one = base;
    one.add(0, 0, 0, 0, 9, 7, 6);
    splits.push_back(one);
    for (int axis = 0; axis < 3; ++axis) { // slabs one cell thick
      Amr s = base;
      for (int64_t i = 0; i < f.n[axis]; ++i) {
        int64_t lo[3] = {0, 0, 0}, dims[3] = {f.n[0], f.n[1], f.n[2]};
        lo[axis] = i;
        dims[axis] = 1;
        s.add(0, lo[0], lo[1], lo[2], dims[0], dims[1], dims[2]);
      }
      splits.push_back(s);
    }
    Amr cells = base; // every cell its own block, listed backwards
    for (int64_t z = 5; z >= 0; --z)
      for (int64_t y = 6; y >= 0; --y)
        for (int64_t x = 8; x >= 0; --x)
          cells.add(0, x, y, z, 1, 1, 1);
    splits.push_back(cells);
    Amr pencils = base; // 1x1 pencils along y
    for (int64_t z = 0; z < 6; ++z)
      for (int64_t x = 0; x < 9; ++x)
        pencils.add(0, x, 0, z, 1, 7, 1);
    splits.push_back(pencils);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      phewtest::SplitMix g(seed * 13 + (uint64_t)per);
      Amr s = base;
      const int64_t lo[3] = {0, 0, 0}, dims[3] = {9, 7, 6};
      split_box(g, s, 0, lo, dims, 8, 1);
      for (size_t i = s.blocks.size() - 1; i > 0; --i)
        std::swap(s.blocks[i], s.blocks[(size_t)(g.next() % (i + 1))]);
      splits.push_back(s);
    }
    std::unique_ptr<CoreRun> first;
    for (size_t k = 0; k < splits.size(); ++k) {
      const Amr &a = splits[k];
      SCOPED_TRACE("split " + std::to_string(k) + " into " + std::to_string(a.blocks.size()) + " blocks");
      const LeafGraph lg = amrref::build_leaf_graph(a);
      const std::vector<double> rho = fill_cells(a, lg, [&](int, const int64_t *x) { return f.at(x[0], x[1], x[2]); });
      auto amr = amrref::run_amr(a, rho, p);
      ASSERT_EQ(amr->status, PHEW_OK) << amr->context.message;
      std::vector<int64_t> got[3];
      labels_on_grid(a, *amr, 0, got);
      EXPECT_EQ(got[0], grid->patch);
      EXPECT_EQ(got[1], grid->clump);
      EXPECT_EQ(got[2], grid->halo);
      expect_same_catalogue(grid->result, amr->result, 0);
      if (!first)
        first = std::move(amr);
      else
        expect_identical_tables(first->result, amr->result);
    }
  }
}

// ---- a smooth field on a three-level AMR refined around its peaks ---------------------------

// Sum of Gaussians on a 16^3 level-0 grid. Levels 1 and 2 refine aligned chunks of 2^3 cells of
// the level above wherever the field exceeds a level's threshold in the chunk, with proper
// nesting (a level-2 chunk is refined only if it and its 26 neighbouring chunks lie inside
// level 1, so touching leaves differ by at most one level).
struct GaussianAmr {
  Amr a;
  LeafGraph lg;
  std::vector<double> rho;
  static double field(const double x[3], bool periodic)
  {
    static const double c[6][3] = {{4.5, 4.5, 5.5},    {9.0, 5.5, 6.0},   {6.0, 10.0, 5.0},
                                   {11.5, 11.0, 11.0}, {13.0, 3.0, 12.5}, {3.5, 3.5, 11.0}};
    static const double w[6] = {1.3, 1.2, 1.1, 1.5, 1.0, 1.0}, h[6] = {40.0, 25.0, 30.0, 18.0, 22.0, 9.0};
    double v = 1.0;
    for (int b = 0; b < 6; ++b) {
      double r2 = 0;
      for (int d = 0; d < 3; ++d) {
        double dx = x[d] - c[b][d];
        if (periodic) {
          if (dx > 8)
            dx -= 16;
          if (dx < -8)
            dx += 16;
        }
        r2 += dx * dx;
      }
      v += h[b] * std::exp(-0.5 * r2 / (w[b] * w[b]));
    }
    return v;
  }
  explicit GaussianAmr(bool periodic)
  {
    for (int d = 0; d < 3; ++d) {
      a.level0_dims[d] = 16;
      a.periodic[d] = periodic;
      a.spacing[d] = 1.0 / 16;
      a.origin[d] = 0.0;
    }
    a.add(0, 0, 0, 0, 8, 16, 16);
    a.add(0, 8, 0, 0, 8, 16, 16);
    const double refine_above[2] = {4.0, 12.0};
    std::set<std::array<int64_t, 3>> chunks[3]; // per level: refined chunks of 2^3 cells
    for (int l = 0; l < 2; ++l) {
      const int64_t n = 16 << l, nc = n / 2;
      auto present = [&](int64_t cx, int64_t cy, int64_t cz) { // chunk inside level l
        if (l == 0)
          return true;
        if (periodic)
          cx = (cx + nc) % nc, cy = (cy + nc) % nc, cz = (cz + nc) % nc;
        else if (cx < 0 || cy < 0 || cz < 0 || cx >= nc || cy >= nc || cz >= nc)
          return true; // outside the domain: no nesting constraint
        return chunks[l - 1].count({cx / 2, cy / 2, cz / 2}) > 0;
      };
      for (int64_t cz = 0; cz < nc; ++cz)
        for (int64_t cy = 0; cy < nc; ++cy)
          for (int64_t cx = 0; cx < nc; ++cx) {
            bool nested = true;
            for (int dz = -1; dz <= 1; ++dz)
              for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                  nested = nested && present(cx + dx, cy + dy, cz + dz);
            if (!nested)
              continue;
            double top = 0;
            for (int64_t z = 2 * cz; z < 2 * cz + 2; ++z)
              for (int64_t y = 2 * cy; y < 2 * cy + 2; ++y)
                for (int64_t x = 2 * cx; x < 2 * cx + 2; ++x) {
                  const double h = 1.0 / (double)(1 << l);
                  const double pos[3] = {((double)x + 0.5) * h, ((double)y + 0.5) * h, ((double)z + 0.5) * h};
                  top = std::max(top, field(pos, periodic));
                }
            if (top > refine_above[l]) {
              chunks[l].insert({cx, cy, cz});
              a.add(l + 1, 4 * cx, 4 * cy, 4 * cz, 4, 4, 4);
            }
          }
    }
    lg = amrref::build_leaf_graph(a);
    rho = fill_cells(
        a, lg,
        [&](int l, const int64_t *x) {
          const double h = 1.0 / (double)(1 << l);
          const double pos[3] = {((double)x[0] + 0.5) * h, ((double)x[1] + 0.5) * h, ((double)x[2] + 0.5) * h};
          return field(pos, periodic);
        },
        -5.0 /* covered: a value no leaf has */);
  }
};

TEST(Amr, GaussiansOnThreeLevelsMatchTheReference)
{
  for (int per = 0; per < 2; ++per) {
    SCOPED_TRACE(per ? "periodic" : "open");
    const GaussianAmr G(per);
    int levels[3] = {0, 0, 0};
    for (int l : G.lg.level)
      levels[l]++;
    ASSERT_GT(levels[1], 500);
    ASSERT_GT(levels[2], 500) << "the peaks are refined twice";
    // proper nesting: touching leaves differ by at most one level
    for (int64_t i = 0; i < G.lg.n(); ++i)
      for (int64_t k = G.lg.offsets[(size_t)i]; k < G.lg.offsets[(size_t)i + 1]; ++k)
        ASSERT_LE(std::abs(G.lg.level[(size_t)i] - G.lg.level[(size_t)G.lg.neighbours[(size_t)k]]), 1);
    for (int merging = 0; merging < 2; ++merging) {
      const phew_params p = phewtest::make_params(1.0, 1.5, merging, 6.0);
      const amrref::Result ref = check_against_reference(G.a, G.rho, p);
      ASSERT_EQ(ref.clumps.size(), 6u) << "one clump per Gaussian";
      // the high peaks sit on level 2, the low one on level 1
      int on_level[3] = {0, 0, 0};
      for (const phew_object &o : ref.clumps)
        on_level[o.peak_id >= G.a.level_offset(2) ? 2 : o.peak_id >= G.a.level_offset(1) ? 1 : 0]++;
      EXPECT_GE(on_level[2], 3);
      EXPECT_GE(on_level[1], 1);
      EXPECT_EQ(ref.n_pairs > 2, true);
      if (merging) {
        EXPECT_EQ(ref.haloes.size(), 5u) << "one merger";
      }
      // the total mass of the test cells is the sum over clumps (no mass threshold)
      long double total = 0, listed = 0;
      for (int64_t i = 0; i < G.lg.n(); ++i)
        if (ref.clump[(size_t)i] >= 0)
          total += (long double)G.rho[(size_t)G.lg.cell_of_leaf[(size_t)i]] * G.lg.volume[(size_t)i];
      for (const phew_object &o : ref.clumps)
        listed += o.mass;
      EXPECT_NEAR((double)listed, (double)total, 1e-12 * (double)total);
    }
    // float32 input, and a mass threshold that leaves some clumps out
    phew_params p = phewtest::make_params(1.0, 1.5, 1, 6.0);
    const amrref::Result ref = amrref::find_clumps(amrref::make_graph(G.lg, G.rho), p);
    std::vector<double> masses;
    for (const phew_object &o : ref.clumps)
      masses.push_back(o.mass);
    std::sort(masses.begin(), masses.end());
    ASSERT_GE(masses.size(), 3u);
    p.mass_threshold = 0.5 * (masses[1] + masses[2]);
    check_against_reference(G.a, G.rho, p, true);
  }
}

// ---- random hierarchies against the reference -------------------------------------------------

TEST(Amr, RandomHierarchiesMatchTheReference)
{
  int with_jumps = 0, with_cross_level_saddles = 0;
  for (uint64_t seed = 1000; seed < 1060; ++seed) {
    phewtest::SplitMix g(seed);
    const int max_level = 1 + (int)(seed % 3);
    const Amr a = random_amr(g, max_level, 2, 5, seed % 3 == 0);
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const Blobs blobs(g, a);
    const bool nan_covered = seed % 2 == 0;
    const std::vector<double> rho = fill_cells(
        a, lg, [&](int l, const int64_t *x) { return blobs(a, g, l, x); }, nan_covered ? NaN : 1e300);
    phew_params p = phewtest::make_params(leaf_quantile(lg, rho, 0.25 + 0.05 * (double)(seed % 5)),
                                          1.0 + 0.25 * (double)(seed % 4), (int)((seed / 2) % 2),
                                          leaf_quantile(lg, rho, 0.6 + 0.05 * (double)(seed % 5)));
    p.peak_order_seed = seed % 5 == 1 ? (unsigned)seed : 0u; // merging order must not matter
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + std::to_string(a.blocks.size()) + " blocks, " +
                 std::to_string(lg.n()) + " leaves, levels 0.." + std::to_string(a.max_level()) + ", periodic " +
                 std::to_string(a.periodic[0]) + std::to_string(a.periodic[1]) + std::to_string(a.periodic[2]));
    const amrref::Result ref = check_against_reference(a, rho, p, seed % 7 == 3);
    // what the cases cover: touching leaves two or more levels apart; patches meeting across levels
    int jump = 0, cross = 0;
    for (int64_t i = 0; i < lg.n(); ++i)
      for (int64_t k = lg.offsets[(size_t)i]; k < lg.offsets[(size_t)i + 1]; ++k) {
        const int64_t j = lg.neighbours[(size_t)k];
        const int dl = std::abs(lg.level[(size_t)i] - lg.level[(size_t)j]);
        jump = std::max(jump, dl);
        cross += dl > 0 && ref.patch[(size_t)i] >= 0 && ref.patch[(size_t)j] >= 0 &&
                 ref.patch[(size_t)i] != ref.patch[(size_t)j];
      }
    with_jumps += jump >= 2;
    with_cross_level_saddles += cross > 0;
  }
  EXPECT_GE(with_jumps, 10) << "random hierarchies with leaves touching two or more levels apart";
  EXPECT_GE(with_cross_level_saddles, 20) << "random cases with patch boundaries across levels";
}

// The same leaves described by other block lists (a level's blocks split further and listed
// in another order) give bit-identical labels (per leaf) and tables.
TEST(Amr, RandomHierarchiesDoNotDependOnTheBlockList)
{
  for (uint64_t seed = 2000; seed < 2020; ++seed) {
    SCOPED_TRACE(seed);
    phewtest::SplitMix g(seed);
    const Amr a = random_amr(g, 2, 2, 4, false);
    Amr b = a;
    b.blocks.clear();
    for (const phew_amr_block &B : a.blocks)
      split_box(g, b, B.level, B.lo, B.dims, 3, B.level == 0 ? 1 : 2);
    for (size_t i = b.blocks.size() - 1; i > 0; --i)
      std::swap(b.blocks[i], b.blocks[(size_t)(g.next() % (i + 1))]);
    const LeafGraph la = amrref::build_leaf_graph(a), lb = amrref::build_leaf_graph(b);
    ASSERT_EQ(la.n(), lb.n());
    const Blobs blobs(g, a);
    std::map<int64_t, double> by_gid;
    for (int64_t i = 0; i < la.n(); ++i)
      by_gid[la.gid[(size_t)i]] = blobs(a, g, la.level[(size_t)i], la.idx[(size_t)i].data());
    auto value = [&](int l, const int64_t *x) { return by_gid.at(a.global_id(l, x[0], x[1], x[2])); };
    const std::vector<double> ra = fill_cells(a, la, value);
    const std::vector<double> rb = fill_cells(b, lb, value);
    const phew_params p = phewtest::make_params(leaf_quantile(la, ra, 0.3), 1.3, 1, leaf_quantile(la, ra, 0.7));
    auto x = amrref::run_amr(a, ra, p), y = amrref::run_amr(b, rb, p);
    ASSERT_EQ(x->status, PHEW_OK) << x->context.message;
    ASSERT_EQ(y->status, PHEW_OK) << y->context.message;
    std::map<int64_t, std::array<int64_t, 3>> lx, ly;
    for (int64_t i = 0; i < la.n(); ++i) {
      const size_t c = (size_t)la.cell_of_leaf[(size_t)i];
      lx[la.gid[(size_t)i]] = {x->patch[c], x->clump[c], x->halo[c]};
    }
    for (int64_t i = 0; i < lb.n(); ++i) {
      const size_t c = (size_t)lb.cell_of_leaf[(size_t)i];
      ly[lb.gid[(size_t)i]] = {y->patch[c], y->clump[c], y->halo[c]};
    }
    EXPECT_TRUE(lx == ly) << "labels differ between the two block lists";
    expect_identical_tables(x->result, y->result);
  }
}

// ---- bad input ---------------------------------------------------------------------------------

struct Bad {
  const char *name;
  std::function<void(Amr &, std::vector<double> &)> edit;
  phew_status status;
  std::vector<const char *> words; // the message holds one of them (any case)
};

TEST(Amr, BadInputIsRefusedWithAMessage)
{
  // a valid base: 4^3 level 0 in two blocks, level 1 lo (2,2,2) dims (4,4,2), level 2 inside it
  auto base = [] {
    Amr a;
    a.level0_dims[0] = a.level0_dims[1] = a.level0_dims[2] = 4;
    a.add(0, 0, 0, 0, 2, 4, 4);
    a.add(0, 2, 0, 0, 2, 4, 4);
    a.add(1, 2, 2, 2, 4, 4, 2);
    a.add(2, 6, 6, 4, 2, 2, 2);
    return a;
  };
  {
    const Amr a = base();
    const LeafGraph lg = amrref::build_leaf_graph(a);
    const std::vector<double> rho = fill_cells(a, lg, [](int l, const int64_t *x) { return 1.0 + l + 0.1 * x[0]; });
    auto ok = amrref::run_amr(a, rho, phewtest::make_params(1.5));
    ASSERT_EQ(ok->status, PHEW_OK) << "the base case must be valid: " << ok->context.message;
  }
  // clang-format off
  const std::vector<Bad> bad = {
      {"odd lo on level 1", [](Amr &a, std::vector<double> &) { a.blocks[2].lo[0] = 3; }, PHEW_ERROR_ARGUMENT,
       {"align", "even", "odd"}},
      {"odd dims on level 2", [](Amr &a, std::vector<double> &) { a.blocks[3].dims[1] = 1; }, PHEW_ERROR_ARGUMENT,
       {"align", "even", "odd"}},
      {"level-1 block outside level 0",
       [](Amr &a, std::vector<double> &) {
         a.blocks[2].lo[0] = 6;
         a.blocks[2].dims[0] = 4;
       },
       PHEW_ERROR_ARGUMENT, {"inside", "outside", "nest", "domain", "cover"}},
      {"level-2 block not inside level 1", [](Amr &a, std::vector<double> &) { a.blocks[3].lo[0] = 0; },
       PHEW_ERROR_ARGUMENT, {"inside", "outside", "nest", "cover"}},
      {"level-2 block half inside level 1",
       [](Amr &a, std::vector<double> &) { // z 6..9 on level 2, level 1 holds 4..7
         a.blocks[3].lo[2] = 6;
         a.blocks[3].dims[2] = 4;
       },
       PHEW_ERROR_ARGUMENT,
       {"inside", "outside", "nest", "cover"}},
      {"a level-2 block with no level 1 at all",
       [](Amr &a, std::vector<double> &) { a.blocks.erase(a.blocks.begin() + 2); }, PHEW_ERROR_ARGUMENT,
       {"inside", "outside", "nest", "cover", "level"}},
      {"overlapping level-1 blocks",
       [](Amr &a, std::vector<double> &) {
         phew_amr_block b = a.blocks[2]; // lo (2,2,2) dims (4,4,2): a second block over half of it
         b.dims[0] = 2;
         a.blocks.push_back(b);
       },
       PHEW_ERROR_ARGUMENT, {"overlap"}},
      {"overlapping level-0 blocks", [](Amr &a, std::vector<double> &) { a.blocks[1].lo[0] = 1; },
       PHEW_ERROR_ARGUMENT, {"overlap", "tile", "cover"}},
      {"level 0 not tiling the domain", [](Amr &a, std::vector<double> &) { a.blocks[1].dims[1] = 3; },
       PHEW_ERROR_ARGUMENT, {"tile", "cover", "level 0", "domain"}},
      {"level-0 block beyond the domain", [](Amr &a, std::vector<double> &) { a.blocks[1].dims[0] = 3; },
       PHEW_ERROR_ARGUMENT, {"domain", "outside", "inside", "tile", "beyond"}},
      {"negative level", [](Amr &a, std::vector<double> &) { a.blocks[1].level = -1; }, PHEW_ERROR_ARGUMENT,
       {"level"}},
      {"zero dims", [](Amr &a, std::vector<double> &) { a.blocks[3].dims[2] = 0; }, PHEW_ERROR_ARGUMENT,
       {"dim", "empty", "size", "cells"}},
      {"owner out of range (one rank)", [](Amr &a, std::vector<double> &) { a.blocks[3].owner = 1; },
       PHEW_ERROR_ARGUMENT, {"owner", "rank"}},
      {"zero level-0 dims", [](Amr &a, std::vector<double> &) { a.level0_dims[1] = 0; }, PHEW_ERROR_ARGUMENT,
       {"dim", "level 0", "domain", "size"}},
      {"NaN in a leaf cell",
       [](Amr &a, std::vector<double> &rho) {
         const LeafGraph lg = amrref::build_leaf_graph(a);
         rho[(size_t)lg.cell_of_leaf[(size_t)(lg.n() / 2)]] = NaN;
       },
       PHEW_ERROR_DATA, {"nan"}},
      {"NaN in a level-2 leaf cell",
       [](Amr &a, std::vector<double> &rho) { rho[(size_t)cell_index(a, 2, 7, 7, 5)] = NaN; }, PHEW_ERROR_DATA,
       {"nan"}},
      {"negative density in a leaf cell",
       [](Amr &a, std::vector<double> &rho) { rho[(size_t)cell_index(a, 0, 0, 0, 0)] = -1.0; }, PHEW_ERROR_DATA,
       {"negative"}},
      {"empty hierarchy", [](Amr &a, std::vector<double> &) { a.blocks.clear(); }, PHEW_ERROR_ARGUMENT,
       {"block", "empty", "tile", "cover", "no cells", "nothing"}},
  };
  // clang-format on
  for (const Bad &k : bad) {
    SCOPED_TRACE(k.name);
    Amr a = base();
    const LeafGraph lg = amrref::build_leaf_graph(a);
    std::vector<double> rho = fill_cells(
        a, lg, [](int l, const int64_t *x) { return 1.0 + l + 0.1 * x[0]; }, NaN);
    k.edit(a, rho);
    rho.resize((size_t)std::max<int64_t>(0,
                                         [&] {
                                           int64_t n = 0;
                                           for (const phew_amr_block &B : a.blocks)
                                             n += std::max<int64_t>(0, B.dims[0]) * std::max<int64_t>(0, B.dims[1]) *
                                                  std::max<int64_t>(0, B.dims[2]);
                                           return n;
                                         }()),
               2.0);
    auto r = amrref::run_amr(a, rho, phewtest::make_params(1.5));
    EXPECT_EQ(r->status, k.status) << r->context.message;
    EXPECT_TRUE(contains_any(r->context.message, k.words)) << "message: '" << r->context.message << "'";
    EXPECT_EQ(r->result.n_clumps, 0);
    // this process's cells: those of the blocks it owns (rank 0)
    size_t own = 0;
    for (const phew_amr_block &B : a.blocks)
      if (B.owner == 0)
        own += (size_t)(std::max<int64_t>(0, B.dims[0]) * std::max<int64_t>(0, B.dims[1]) *
                        std::max<int64_t>(0, B.dims[2]));
    for (size_t c = 0; c < std::min(own, r->patch.size()); ++c)
      if (r->patch[c] != -1 || r->clump[c] != -1 || r->halo[c] != -1) {
        ADD_FAILURE() << "labels not reset to -1 (block cell " << c << ": " << r->patch[c] << ")";
        break;
      }
  }
  // NaN (and Inf) in covered cells is fine: they are never read
  Amr a = base();
  const LeafGraph lg = amrref::build_leaf_graph(a);
  std::vector<double> rho = fill_cells(
      a, lg, [](int l, const int64_t *x) { return 1.0 + l + 0.1 * x[0]; }, NaN);
  ASSERT_GE(cell_index(a, 0, 2, 2, 1), 0);
  ASSERT_LT(lg.leaf_of_cell[(size_t)cell_index(a, 0, 2, 2, 1)], 0) << "covered by level 1";
  rho[(size_t)cell_index(a, 0, 2, 2, 1)] = INFINITY;
  ASSERT_TRUE(std::isnan(rho[(size_t)cell_index(a, 0, 1, 1, 1)]));
  ASSERT_TRUE(std::isnan(rho[(size_t)cell_index(a, 1, 3, 3, 2)])) << "covered by level 2";
  const phew_params p = phewtest::make_params(1.5);
  auto r = amrref::run_amr(a, rho, p);
  EXPECT_EQ(r->status, PHEW_OK) << r->context.message;
  check_against_reference(a, rho, p);
}

} // namespace

namespace {

// A block list that cannot be read: a negative count, or a count without blocks.
TEST(Amr, UnreadableBlockListIsRefused)
{
  std::vector<double> rho(8, 2.0);
  std::vector<int64_t> a(8, 5), b(8, 5), c(8, 5);
  phew_amr_block block;
  std::memset(&block, 0, sizeof block);
  block.dims[0] = block.dims[1] = block.dims[2] = 2;
  for (int what = 0; what < 2; ++what) {
    SCOPED_TRACE(what ? "blocks NULL" : "negative count");
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_AMR;
    in.amr.level0_dims[0] = in.amr.level0_dims[1] = in.amr.level0_dims[2] = 2;
    in.amr.spacing[0] = in.amr.spacing[1] = in.amr.spacing[2] = 1.0;
    in.amr.n_blocks = what ? 1 : -1;
    in.amr.blocks = what ? nullptr : &block;
    in.density = rho.data();
    in.density_type = PHEW_FLOAT64;
    phew_labels labels = {a.data(), b.data(), c.data(), nullptr};
    const phew_params p = phewtest::make_params(1.0);
    phew_context context;
    phew_context_init(&context);
    phew_clump_result r;
    std::memset(&r, 0, sizeof r);
    EXPECT_EQ(phew_find_clumps(&context, &in, &p, &labels, &r), PHEW_ERROR_ARGUMENT);
    EXPECT_TRUE(contains_any(context.message, {"block"})) << context.message;
    phew_clump_result_free(&r);
  }
}

} // namespace
