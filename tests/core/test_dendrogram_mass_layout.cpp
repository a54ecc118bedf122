// phew_layout_dendrogram_by_mass: the dendrogram with room by mass. A hand-built forest with
// known coordinates, random forests (ids that are not indices, tied masses, zero saddles, mass
// cuts) against an independent recursive layout written from the rules in phew.h, bad input.
#include "phew_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace phewtest;

namespace {

phew_node node(int64_t id, int64_t parent, double peak, double saddle, double mass)
{
  phew_node n;
  std::memset(&n, 0, sizeof n);
  n.id = id;
  n.parent_id = parent;
  n.clump_id = -1;
  n.peak_density = peak;
  n.saddle_density = saddle;
  n.mass = mass;
  return n;
}

struct MassLayout {
  phew_status status = PHEW_OK;
  std::vector<phew_mass_layout> at;
  double log_floor = -12345.0;
  std::string message;
};

MassLayout layout_of(const std::vector<phew_node> &nodes, double cut)
{
  MassLayout l;
  phew_mass_layout sentinel{-1, -2, -3, -4, -5, -6, -7};
  l.at.assign(nodes.size() ? nodes.size() : 1, sentinel);
  phew_context context;
  phew_context_init(&context);
  l.status = phew_layout_dendrogram_by_mass(&context, nodes.data(), (int64_t)nodes.size(), cut, l.at.data(),
                                            &l.log_floor);
  l.message = context.message;
  l.at.resize(nodes.size());
  return l;
}

// The rules of phew.h, written again as a plain recursion over ids.
struct Reference {
  const std::vector<phew_node> &nodes;
  double cut;
  std::map<int64_t, size_t> index;
  std::map<int64_t, std::vector<size_t>> children;
  std::vector<phew_mass_layout> at;
  double floor_value = INFINITY;

  Reference(const std::vector<phew_node> &n, double c) : nodes(n), cut(c), at(n.size())
  {
    for (size_t i = 0; i < nodes.size(); ++i)
      index[nodes[i].id] = i;
    for (size_t i = 0; i < nodes.size(); ++i) {
      children[nodes[i].parent_id].push_back(i);
      for (double d : {nodes[i].peak_density, nodes[i].saddle_density})
        if (d > 0.0)
          floor_value = std::min(floor_value, std::log10(d) - 1.0);
    }
    for (auto &entry : children)
      std::sort(entry.second.begin(), entry.second.end(), [&](size_t a, size_t b) {
        const phew_node &x = nodes[a], &y = nodes[b];
        if (x.mass != y.mass)
          return x.mass > y.mass;
        if (x.peak_density != y.peak_density)
          return x.peak_density > y.peak_density;
        return x.id < y.id;
      });
    double next = 0.0;
    int64_t rank = 0;
    for (size_t r : children[-1]) {
      place(r, next, true);
      at[r].rank = rank++;
    }
  }
  double lg(double d) const { return d > 0.0 ? std::log10(d) : floor_value; }

  void place(size_t v, double &start, bool drawn_parent)
  {
    const phew_node &n = nodes[v];
    phew_mass_layout &a = at[v];
    a.parent_index = n.parent_id < 0 ? -1 : (int64_t)index.at(n.parent_id);
    a.rank = -1;
    a.log_bottom = lg(n.saddle_density);
    a.log_top = lg(n.peak_density);
    const bool drawn = drawn_parent && n.mass >= cut;
    a.x = a.x_low = a.x_high = NAN;
    if (drawn) {
      a.x_low = start;
      a.x_high = start + n.mass;
      start = a.x_high;
    }
    double cursor = a.x_low, lo = INFINITY, hi = -INFINITY, junction = -INFINITY;
    for (size_t c : children[n.id]) {
      place(c, cursor, drawn);
      if (drawn && !std::isnan(at[c].x)) {
        lo = std::min(lo, at[c].x);
        hi = std::max(hi, at[c].x);
        junction = std::max(junction, nodes[c].saddle_density);
      }
    }
    if (!drawn)
      return;
    if (lo <= hi) {
      a.x = 0.5 * (lo + hi);
      a.log_top = lg(junction);
    } else {
      a.x = 0.5 * (a.x_low + a.x_high);
    }
  }
};

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void expect_reference(const std::vector<phew_node> &nodes, double cut)
{
  const MassLayout l = layout_of(nodes, cut);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  const Reference want(nodes, cut);
  EXPECT_EQ(l.log_floor, want.floor_value);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const phew_mass_layout &a = l.at[i], &b = want.at[i];
    EXPECT_TRUE(same(a.x, b.x) && same(a.x_low, b.x_low) && same(a.x_high, b.x_high) && a.rank == b.rank &&
                a.parent_index == b.parent_index && a.log_bottom == b.log_bottom && a.log_top == b.log_top)
        << "node " << nodes[i].id << ": x " << a.x << " (" << b.x << "), [" << a.x_low << ", " << a.x_high << "] (["
        << b.x_low << ", " << b.x_high << "]), rank " << a.rank << " (" << b.rank << "), top " << a.log_top << " ("
        << b.log_top << ")";
  }
}

// Two haloes: H (mass 10) over clumps a (6) and b (4), and a lone clump c (3); a mass cut of
// 3.5 keeps H, a and b and drops c; 5 keeps H and a.
TEST(DendrogramMassLayout, KnownCoordinates)
{
  const std::vector<phew_node> nodes = {node(0, 2, 100.0, 20.0, 6.0), node(1, 2, 1000.0, 20.0, 4.0),
                                        node(2, -1, 1000.0, 10.0, 10.0), node(3, -1, 500.0, 10.0, 3.0)};
  MassLayout l = layout_of(nodes, -1.0);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  // roots by mass: H [0, 10), c [10, 13); H's children by mass: a [0, 6), b [6, 10)
  EXPECT_EQ(l.at[2].x_low, 0.0);
  EXPECT_EQ(l.at[2].x_high, 10.0);
  EXPECT_EQ(l.at[3].x_low, 10.0);
  EXPECT_EQ(l.at[3].x, 11.5);
  EXPECT_EQ(l.at[0].x, 3.0);
  EXPECT_EQ(l.at[1].x, 8.0);
  EXPECT_EQ(l.at[2].x, 5.5);
  EXPECT_EQ(l.at[2].log_top, std::log10(20.0));
  EXPECT_EQ(l.at[1].log_top, 3.0);
  EXPECT_EQ(l.at[2].rank, 0);
  EXPECT_EQ(l.at[3].rank, 1);
  EXPECT_EQ(l.at[0].rank, -1);
  l = layout_of(nodes, 5.0); // b and c collapsed: H stands over a alone
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  EXPECT_TRUE(std::isnan(l.at[1].x) && std::isnan(l.at[3].x) && std::isnan(l.at[3].x_low));
  EXPECT_EQ(l.at[3].rank, 1); // (ranked all the same)
  EXPECT_EQ(l.at[0].x, 3.0);
  EXPECT_EQ(l.at[2].x, 3.0);
  l = layout_of(nodes, 8.0); // a collapsed too: H is a leaf of the drawing, up to its peak
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  EXPECT_EQ(l.at[2].x, 5.0);
  EXPECT_EQ(l.at[2].log_top, 3.0);
  expect_reference(nodes, -1.0);
  expect_reference(nodes, 3.5);
}

TEST(DendrogramMassLayout, RandomForestsAgainstTheRules)
{
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SplitMix g(seed);
    const int64_t n = 1 + (int64_t)(g.next() % 300);
    std::vector<phew_node> nodes((size_t)n);
    for (int64_t k = 0; k < n; ++k) {
      const bool root = k == n - 1 || g.uniform() < 0.1;
      const int64_t parent = root ? -1 : k + 1 + (int64_t)(g.next() % (uint64_t)(n - 1 - k));
      const double peak = (double)(1 + g.next() % 8);
      const double saddle = g.uniform() < 0.1 ? 0.0 : g.uniform() * peak;
      nodes[(size_t)k] = node(k, parent, peak, saddle, (double)(g.next() % 5)); // tied masses, zeros
    }
    // masses as the core makes them: each node its own plus its children's (children first)
    for (int64_t k = 0; k < n; ++k)
      if (nodes[(size_t)k].parent_id >= 0)
        nodes[(size_t)nodes[(size_t)k].parent_id].mass += nodes[(size_t)k].mass;
    if (seed % 2 == 0) { // ids that are not indices, the array shuffled
      for (phew_node &v : nodes) {
        v.id = 3 * v.id + 7;
        if (v.parent_id >= 0)
          v.parent_id = 3 * v.parent_id + 7;
      }
      for (int64_t k = n - 1; k > 0; --k)
        std::swap(nodes[(size_t)k], nodes[(size_t)(g.next() % (uint64_t)(k + 1))]);
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (double cut : {-1.0, 0.0, 2.0, 6.0})
      expect_reference(nodes, cut);
  }
}

TEST(DendrogramMassLayout, BadInputIsRefused)
{
  std::vector<phew_node> nodes = {node(0, -1, 10.0, 1.0, 5.0), node(1, 0, 10.0, 2.0, 5.0)};
  MassLayout l = layout_of(nodes, NAN);
  EXPECT_EQ(l.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(l.message.find("mass cut"), std::string::npos) << l.message;
  for (double bad : {-1.0, (double)NAN, (double)INFINITY}) {
    nodes[1].mass = bad;
    l = layout_of(nodes, 0.0);
    EXPECT_EQ(l.status, PHEW_ERROR_DATA);
    EXPECT_NE(l.message.find("mass"), std::string::npos) << l.message;
    EXPECT_EQ(l.at[0].x, -1.0) << "written after a failure";
  }
  nodes[1].mass = 5.0;
  nodes[1].parent_id = 9;
  l = layout_of(nodes, 0.0);
  EXPECT_EQ(l.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(l.message.find("not a node"), std::string::npos) << l.message;
  double floor_value = 0.0;
  EXPECT_EQ(phew_layout_dendrogram_by_mass(nullptr, nullptr, 0, 0.0, nullptr, &floor_value), PHEW_OK);
  EXPECT_TRUE(std::isnan(floor_value));
}

} // namespace
