// phew_layout_dendrogram: where the dendrogram's nodes go in a drawing. Hand-built trees with
// known coordinates, invalid trees refused with a message, a chain of a million nodes (no
// recursion), random forests with ids that are not indices, and the sample's real dendrogram,
// all checked against an independent check of the layout rules.
#include "phew_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace phewtest;

namespace {

phew_node make_node(int64_t id, int64_t parent, double peak, double saddle, int32_t level = 0)
{
  phew_node n;
  std::memset(&n, 0, sizeof n);
  n.id = id;
  n.parent_id = parent;
  n.level = level;
  n.clump_id = -1;
  n.peak_density = peak;
  n.saddle_density = saddle;
  return n;
}

struct Layout {
  phew_status status = PHEW_OK;
  std::vector<phew_node_layout> at;
  double log_floor = -12345.0;
  std::string message;
};

Layout layout_of(const std::vector<phew_node> &nodes)
{
  Layout l;
  // sentinels: a failed call must leave them as they are
  phew_node_layout sentinel{-1.0, -2.0, -3.0, -4};
  l.at.assign(nodes.size() ? nodes.size() : 1, sentinel);
  // a stale message, which the call must replace (or empty)
  phew_context context;
  phew_context_init(&context);
  std::memset(context.message, 'x', sizeof context.message - 1);
  context.message[sizeof context.message - 1] = '\0';
  l.status = phew_layout_dendrogram(&context, nodes.data(), (int64_t)nodes.size(), l.at.data(), &l.log_floor);
  l.message = context.message;
  l.at.resize(nodes.size());
  return l;
}

// The layout of the node with this id.
const phew_node_layout &of(const std::vector<phew_node> &nodes, const Layout &l, int64_t id)
{
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id)
      return l.at[i];
  ADD_FAILURE() << "no node " << id;
  return l.at[0];
}

// An independent check of every rule, by brute force (walks each leaf's ancestors: fine for
// trees that are not deep). consistent: the data obey the core's invariants, so every child
// joins its parent at or below the parent's top.
void check_rules(const std::vector<phew_node> &nodes, const Layout &l, bool consistent)
{
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  ASSERT_EQ(l.message, "");
  const size_t n = nodes.size();
  std::unordered_map<int64_t, size_t> index;
  for (size_t i = 0; i < n; ++i)
    index[nodes[i].id] = i;
  ASSERT_EQ(index.size(), n);
  std::vector<std::vector<size_t>> children(n);
  std::vector<size_t> roots;
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i].parent_id == -1) {
      roots.push_back(i);
      EXPECT_EQ(l.at[i].parent_index, -1);
    } else {
      const size_t p = index.at(nodes[i].parent_id);
      children[p].push_back(i);
      EXPECT_EQ(l.at[i].parent_index, (int64_t)p);
    }
  }
  // the floor: one decade below the smallest positive density
  double smallest = INFINITY;
  for (const phew_node &v : nodes)
    for (double d : {v.peak_density, v.saddle_density})
      if (d > 0)
        smallest = std::min(smallest, d);
  const double floor_value = std::log10(smallest) - 1.0;
  EXPECT_DOUBLE_EQ(l.log_floor, floor_value);
  auto log_or_floor = [&](double d) { return d > 0 ? std::log10(d) : floor_value; };

  // leaves: x a permutation of 0..L-1
  std::vector<double> leaf_x;
  for (size_t i = 0; i < n; ++i)
    if (children[i].empty())
      leaf_x.push_back(l.at[i].x);
  std::sort(leaf_x.begin(), leaf_x.end());
  for (size_t k = 0; k < leaf_x.size(); ++k)
    ASSERT_EQ(leaf_x[k], (double)k) << "leaf x values are not 0..L-1";

  // every subtree's leaves are contiguous
  std::vector<double> lo(n, INFINITY), hi(n, -INFINITY);
  std::vector<int64_t> count(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!children[i].empty())
      continue;
    for (int64_t v = (int64_t)i, steps = 0; v >= 0 && steps <= (int64_t)n; ++steps) {
      lo[v] = std::min(lo[v], l.at[i].x);
      hi[v] = std::max(hi[v], l.at[i].x);
      ++count[v];
      v = nodes[v].parent_id == -1 ? -1 : (int64_t)index.at(nodes[v].parent_id);
    }
  }
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(hi[i] - lo[i] + 1.0, (double)count[i]) << "the leaves of node " << nodes[i].id << " are not contiguous";

  // siblings (and roots) in decreasing peak density, then smaller id, left to right
  auto check_order = [&](std::vector<size_t> group) {
    std::sort(group.begin(), group.end(), [&](size_t a, size_t b) {
      if (nodes[a].peak_density != nodes[b].peak_density)
        return nodes[a].peak_density > nodes[b].peak_density;
      return nodes[a].id < nodes[b].id;
    });
    for (size_t k = 1; k < group.size(); ++k)
      EXPECT_LT(hi[group[k - 1]], lo[group[k]])
          << "node " << nodes[group[k - 1]].id << " should be left of node " << nodes[group[k]].id;
  };
  check_order(roots);
  for (size_t i = 0; i < n; ++i)
    check_order(children[i]);

  for (size_t i = 0; i < n; ++i) {
    const phew_node_layout &a = l.at[i];
    EXPECT_EQ(a.log_bottom, log_or_floor(nodes[i].saddle_density)) << "node " << nodes[i].id;
    if (children[i].empty()) {
      EXPECT_EQ(a.log_top, log_or_floor(nodes[i].peak_density)) << "node " << nodes[i].id;
      continue;
    }
    double cmin = INFINITY, cmax = -INFINITY, junction = -INFINITY;
    for (size_t c : children[i]) {
      cmin = std::min(cmin, l.at[c].x);
      cmax = std::max(cmax, l.at[c].x);
      junction = std::max(junction, nodes[c].saddle_density);
    }
    EXPECT_EQ(a.x, 0.5 * (cmin + cmax)) << "node " << nodes[i].id;
    EXPECT_EQ(a.log_top, log_or_floor(junction)) << "node " << nodes[i].id;
    if (consistent) {
      EXPECT_LE(a.log_bottom, a.log_top + 1e-12) << "node " << nodes[i].id;
      for (size_t c : children[i])
        EXPECT_LE(l.at[c].log_bottom, a.log_top + 1e-12) << "node " << nodes[c].id;
    }
  }
}

// ---- the sample: a minimal reader of datasets/sample.vti (one Float32 cell array, inline
// base64 with a UInt32 header, as datasets/vti_to_raw.py reads it) ----------------------------
std::vector<unsigned char> base64_decode(const std::string &text)
{
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> out;
  uint32_t bits = 0;
  int n_bits = 0;
  for (char ch : text) {
    const size_t v = alphabet.find(ch);
    if (v == std::string::npos)
      continue; // whitespace and '=' padding
    bits = (bits << 6) | (uint32_t)v;
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      out.push_back((unsigned char)((bits >> n_bits) & 0xff));
    }
  }
  return out;
}

bool read_sample(Field &f, std::string &why)
{
  std::ifstream in(PHEW_SAMPLE_VTI, std::ios::binary);
  if (!in) {
    why = std::string("cannot open ") + PHEW_SAMPLE_VTI;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  const size_t array = s.find("Name=\"density\"");
  const size_t start = array == std::string::npos ? array : s.find('>', array);
  const size_t end = start == std::string::npos ? start : s.find('<', start);
  if (end == std::string::npos || s.find("header_type=\"UInt32\"") == std::string::npos) {
    why = "no inline density array with a UInt32 header";
    return false;
  }
  const std::vector<unsigned char> raw = base64_decode(s.substr(start + 1, end - start - 1));
  f = Field(64, 64, 64);
  const size_t bytes = (size_t)f.size() * sizeof(float);
  uint32_t header = 0;
  if (raw.size() < 4 + bytes || (std::memcpy(&header, raw.data(), 4), header != bytes)) {
    why = "the density array is not 64^3 float32 values";
    return false;
  }
  for (int64_t i = 0; i < f.size(); ++i) {
    float v;
    std::memcpy(&v, raw.data() + 4 + (size_t)i * sizeof v, sizeof v);
    f.rho[(size_t)i] = (double)v;
  }
  f.to_float32();
  f.set_periodic(true);
  for (int d = 0; d < 3; ++d)
    f.spacing[d] = 1.0 / 64.0;
  return true;
}

} // namespace

// A halo of two clumps: the root (id 2) and its leaves a (peak 100) and b (peak 50), joined at 30.
TEST(DendrogramLayout, TwoLeafHalo)
{
  const std::vector<phew_node> nodes = {make_node(0, 2, 100, 30), make_node(1, 2, 50, 30), make_node(2, -1, 100, 5, 1)};
  const Layout l = layout_of(nodes);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  EXPECT_EQ(l.at[0].x, 0.0);
  EXPECT_EQ(l.at[1].x, 1.0);
  EXPECT_EQ(l.at[2].x, 0.5);
  EXPECT_DOUBLE_EQ(l.at[0].log_top, 2.0);
  EXPECT_DOUBLE_EQ(l.at[1].log_top, std::log10(50.0));
  EXPECT_DOUBLE_EQ(l.at[0].log_bottom, std::log10(30.0));
  EXPECT_DOUBLE_EQ(l.at[2].log_top, std::log10(30.0));
  EXPECT_DOUBLE_EQ(l.at[2].log_bottom, std::log10(5.0));
  EXPECT_EQ(l.at[0].parent_index, 2);
  EXPECT_EQ(l.at[2].parent_index, -1);
  EXPECT_DOUBLE_EQ(l.log_floor, std::log10(5.0) - 1.0);
  check_rules(nodes, l, true);
}

// H1 of the sample, built as the core builds it (README of datasets/): leaves a1 a2 b1 b2 b3 b4,
// A = {a1, a2} and B1 = {b1, b2}, B2 = {b3, b4} on level 1, B = {B1, B2} on level 2, the root
// {A, B} on level 3. Once with ids = indices in the core's order, once with other ids in a
// shuffled array: the same drawing.
TEST(DendrogramLayout, ThreeLevelTree)
{
  enum { a1, b1, b3, b2, a2, b4, A, B1, B2, B, root };
  const std::vector<phew_node> core_order = {make_node(a1, A, 567, 100),     make_node(b1, B1, 498, 80),
                                             make_node(b3, B2, 380, 70),     make_node(b2, B1, 283, 80),
                                             make_node(a2, A, 275, 90),      make_node(b4, B2, 255, 70),
                                             make_node(A, root, 567, 37, 1), make_node(B1, B, 498, 46, 1),
                                             make_node(B2, B, 380, 46, 1),   make_node(B, root, 498, 37, 2),
                                             make_node(root, -1, 567, 15, 3)};
  // expected x: a1 a2 | b1 b2 | b3 b4
  std::map<int64_t, double> x = {{a1, 0},  {a2, 1},   {b1, 2},   {b2, 3},  {b3, 4},  {b4, 5},
                                 {A, 0.5}, {B1, 2.5}, {B2, 4.5}, {B, 3.5}, {root, 2}};
  std::map<int64_t, double> top = {{A, 100}, {B1, 80}, {B2, 70}, {B, 46}, {root, 37}};
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<phew_node> nodes = core_order;
    if (variant == 1) {
      // ids 1000 - 7 id, array reversed and rotated
      for (phew_node &v : nodes) {
        v.id = 1000 - 7 * v.id;
        if (v.parent_id >= 0)
          v.parent_id = 1000 - 7 * v.parent_id;
      }
      std::reverse(nodes.begin(), nodes.end());
      std::rotate(nodes.begin(), nodes.begin() + 4, nodes.end());
    }
    const Layout l = layout_of(nodes);
    ASSERT_EQ(l.status, PHEW_OK) << l.message;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int64_t original = variant == 1 ? (1000 - nodes[i].id) / 7 : nodes[i].id;
      EXPECT_EQ(l.at[i].x, x.at(original)) << "node " << original << " variant " << variant;
      const double t = top.count(original) ? top.at(original) : nodes[i].peak_density;
      EXPECT_DOUBLE_EQ(l.at[i].log_top, std::log10(t)) << "node " << original;
      EXPECT_DOUBLE_EQ(l.at[i].log_bottom, std::log10(nodes[i].saddle_density)) << "node " << original;
    }
    EXPECT_DOUBLE_EQ(l.log_floor, std::log10(15.0) - 1.0);
    check_rules(nodes, l, true);
  }
}

// Several roots: by decreasing peak, equal peaks by the smaller id; a root's subtree stays
// together.
TEST(DendrogramLayout, MultipleRoots)
{
  const std::vector<phew_node> nodes = {make_node(5, -1, 10, 3),  make_node(9, -1, 30, 4),  make_node(7, -1, 30, 2),
                                        make_node(20, 22, 80, 8), make_node(21, 22, 40, 8), make_node(22, -1, 80, 6, 1),
                                        make_node(30, -1, 30, 1)};
  const Layout l = layout_of(nodes);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  // order: 22 {20, 21}, 7, 9, 30 (peaks 30: ids 7 < 9 < 30), 5
  EXPECT_EQ(of(nodes, l, 20).x, 0.0);
  EXPECT_EQ(of(nodes, l, 21).x, 1.0);
  EXPECT_EQ(of(nodes, l, 22).x, 0.5);
  EXPECT_EQ(of(nodes, l, 7).x, 2.0);
  EXPECT_EQ(of(nodes, l, 9).x, 3.0);
  EXPECT_EQ(of(nodes, l, 30).x, 4.0);
  EXPECT_EQ(of(nodes, l, 5).x, 5.0);
  EXPECT_DOUBLE_EQ(l.log_floor, -1.0); // smallest positive density 1
  check_rules(nodes, l, true);
}

// A saddle at density 0 (threshold 0) goes to the floor, one decade below the smallest positive
// density; negative densities too; no positive density at all is an error.
TEST(DendrogramLayout, ZeroSaddleDensity)
{
  std::vector<phew_node> nodes = {make_node(0, 2, 8, 0.5), make_node(1, 2, 4, 0.25), make_node(2, -1, 8, 0.0, 1)};
  Layout l = layout_of(nodes);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  const double floor_value = std::log10(0.25) - 1.0;
  EXPECT_DOUBLE_EQ(l.log_floor, floor_value);
  EXPECT_EQ(l.at[2].log_bottom, l.log_floor);
  EXPECT_DOUBLE_EQ(l.at[2].log_top, std::log10(0.5));
  EXPECT_DOUBLE_EQ(l.at[1].log_bottom, std::log10(0.25));
  check_rules(nodes, l, true);

  // every child joins at 0: the parent's top is the floor too
  nodes = {make_node(0, 2, 8, 0.0), make_node(1, 2, 4, -1.0), make_node(2, -1, 8, 0.0, 1)};
  l = layout_of(nodes);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  EXPECT_DOUBLE_EQ(l.log_floor, std::log10(4.0) - 1.0);
  EXPECT_EQ(l.at[2].log_top, l.log_floor);
  EXPECT_EQ(l.at[1].log_bottom, l.log_floor);
  check_rules(nodes, l, true);

  nodes = {make_node(0, -1, 0.0, 0.0), make_node(1, -1, -2.0, 0.0)};
  l = layout_of(nodes);
  EXPECT_EQ(l.status, PHEW_ERROR_DATA);
  EXPECT_NE(l.message.find("positive"), std::string::npos) << l.message;
  EXPECT_EQ(l.log_floor, -12345.0);
  EXPECT_EQ(l.at[0].x, -1.0); // not written

  // no nodes: nothing to draw, no error
  l = layout_of({});
  EXPECT_EQ(l.status, PHEW_OK);
  EXPECT_TRUE(std::isnan(l.log_floor));
}

// Odd data are drawn as they are: a top below the bottom is kept.
TEST(DendrogramLayout, TopBelowBottomIsKept)
{
  const std::vector<phew_node> nodes = {make_node(0, 1, 10, 20), make_node(1, -1, 10, 50, 1)};
  const Layout l = layout_of(nodes);
  ASSERT_EQ(l.status, PHEW_OK) << l.message;
  EXPECT_DOUBLE_EQ(l.at[0].log_top, 1.0);
  EXPECT_DOUBLE_EQ(l.at[0].log_bottom, std::log10(20.0));
  EXPECT_DOUBLE_EQ(l.at[1].log_top, std::log10(20.0));
  EXPECT_DOUBLE_EQ(l.at[1].log_bottom, std::log10(50.0));
  check_rules(nodes, l, false);
}

// A chain of a million nodes (each node the only child of the next): no recursion, so no stack
// overflow; every node at x = 0. Ids = indices, and ids that are not indices (array reversed).
TEST(DendrogramLayout, ChainOfAMillionNodes)
{
  const int64_t n = 1000000;
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<phew_node> nodes((size_t)n);
    for (int64_t k = 0; k < n; ++k) {
      // node k joins node k+1 at density n - k (higher up the chain: lower saddles)
      const int64_t at = variant == 0 ? k : n - 1 - k;
      const int64_t id = variant == 0 ? k : 3 * k + 1, parent = variant == 0 ? k + 1 : 3 * (k + 1) + 1;
      nodes[(size_t)at] = make_node(id, k + 1 < n ? parent : -1, 2.0 * n, (double)(n - k), (int32_t)k);
    }
    const Layout l = layout_of(nodes);
    ASSERT_EQ(l.status, PHEW_OK) << l.message;
    EXPECT_DOUBLE_EQ(l.log_floor, -1.0);
    for (int64_t k = 0; k < n; ++k) {
      const phew_node_layout &a = l.at[(size_t)(variant == 0 ? k : n - 1 - k)];
      ASSERT_EQ(a.x, 0.0) << k;
      ASSERT_EQ(a.log_bottom, std::log10((double)(n - k))) << k;
      ASSERT_EQ(a.log_top, k == 0 ? std::log10(2.0 * n) : std::log10((double)(n - k + 1))) << k;
      ASSERT_EQ(a.parent_index, k + 1 < n ? (variant == 0 ? k + 1 : n - 2 - k) : -1) << k;
    }
  }
}

// Invalid trees: refused with PHEW_ERROR_ARGUMENT (or DATA) and a message that says why; the
// layout is not written.
TEST(DendrogramLayout, InvalidTreesAreRefused)
{
  struct Case {
    const char *what;
    std::vector<phew_node> nodes;
    phew_status status;
    const char *says;
  };
  const std::vector<Case> cases = {
      {"parent not found (ids = indices)",
       {make_node(0, 1, 5, 1), make_node(1, 7, 5, 1)},
       PHEW_ERROR_ARGUMENT,
       "parent 7"},
      {"parent not found (other ids)",
       {make_node(10, -1, 5, 1), make_node(20, 15, 5, 1)},
       PHEW_ERROR_ARGUMENT,
       "parent 15"},
      {"negative parent other than -1",
       {make_node(0, -1, 5, 1), make_node(1, -2, 5, 1)},
       PHEW_ERROR_ARGUMENT,
       "parent -2"},
      {"own parent", {make_node(0, -1, 5, 1), make_node(1, 1, 5, 1)}, PHEW_ERROR_ARGUMENT, "cycle"},
      {"cycle beside a good tree",
       {make_node(0, -1, 5, 1), make_node(1, 2, 5, 1), make_node(2, 3, 5, 1), make_node(3, 1, 5, 1),
        make_node(4, 3, 5, 1)},
       PHEW_ERROR_ARGUMENT,
       "cycle"},
      {"cycle and no root", {make_node(10, 20, 5, 1), make_node(20, 10, 5, 1)}, PHEW_ERROR_ARGUMENT, "cycle"},
      {"duplicate id", {make_node(4, -1, 5, 1), make_node(4, -1, 6, 1)}, PHEW_ERROR_ARGUMENT, "same id 4"},
      {"NaN peak", {make_node(0, -1, NAN, 1)}, PHEW_ERROR_DATA, "peak density"},
      {"infinite saddle", {make_node(0, -1, 5, INFINITY)}, PHEW_ERROR_DATA, "saddle density"},
  };
  for (const Case &c : cases) {
    const Layout l = layout_of(c.nodes);
    EXPECT_EQ(l.status, c.status) << c.what;
    EXPECT_NE(l.message.find(c.says), std::string::npos) << c.what << ": " << l.message;
    EXPECT_EQ(l.at[0].x, -1.0) << c.what;
    EXPECT_EQ(l.log_floor, -12345.0) << c.what;
  }
  // the cycle's message names a node on the cycle (1, 2 or 3), not the node below it (4)
  const Layout l = layout_of(cases[4].nodes);
  EXPECT_TRUE(l.message.find("node 4 ") == std::string::npos) << l.message;

  phew_node one = make_node(0, -1, 5, 1);
  phew_node_layout out;
  phew_context context;
  phew_context_init(&context);
  EXPECT_EQ(phew_layout_dendrogram(&context, &one, -1, &out, nullptr), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("negative"), std::string::npos) << context.message;
  EXPECT_EQ(phew_layout_dendrogram(&context, nullptr, 1, &out, nullptr), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("NULL"), std::string::npos) << context.message;
  EXPECT_EQ(phew_layout_dendrogram(&context, &one, 1, nullptr, nullptr), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_layout_dendrogram(&context, nullptr, 0, nullptr, nullptr), PHEW_OK);
  // no context (no message), no floor wanted: fine
  EXPECT_EQ(phew_layout_dendrogram(nullptr, &one, 1, &out, nullptr), PHEW_OK);
  EXPECT_EQ(phew_layout_dendrogram(nullptr, nullptr, 1, &out, nullptr), PHEW_ERROR_ARGUMENT);
}

// Random forests with tied peaks, zero saddles, ids that are not indices and a shuffled array.
TEST(DendrogramLayout, RandomForests)
{
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SplitMix g(seed);
    const int64_t n = 1 + (int64_t)(g.next() % 300);
    std::vector<phew_node> nodes((size_t)n);
    for (int64_t k = 0; k < n; ++k) {
      // a parent among the later nodes (or none): never a cycle
      const bool root = k == n - 1 || g.uniform() < 0.1;
      const int64_t parent = root ? -1 : k + 1 + (int64_t)(g.next() % (uint64_t)(n - 1 - k));
      const double peak = (double)(1 + g.next() % 8); // many ties
      const double saddle = g.uniform() < 0.1 ? 0.0 : g.uniform() * peak;
      nodes[(size_t)k] = make_node(k, parent, peak, saddle);
    }
    if (seed % 2 == 0) {
      // ids: a random permutation times 5 minus 17, array shuffled
      std::vector<int64_t> id((size_t)n);
      for (int64_t k = 0; k < n; ++k)
        id[(size_t)k] = k;
      for (int64_t k = n - 1; k > 0; --k)
        std::swap(id[(size_t)k], id[(size_t)(g.next() % (uint64_t)(k + 1))]);
      for (phew_node &v : nodes) {
        v.id = 5 * id[(size_t)v.id] - 17;
        if (v.parent_id >= 0)
          v.parent_id = 5 * id[(size_t)v.parent_id] - 17;
      }
      for (int64_t k = n - 1; k > 0; --k)
        std::swap(nodes[(size_t)k], nodes[(size_t)(g.next() % (uint64_t)(k + 1))]);
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_rules(nodes, layout_of(nodes), false);
  }
}

// The sample's real dendrogram (datasets/README.md: threshold 10, relevance 2, saddle merging
// at 25, periodic: 14 clumps, 6 haloes, 22 nodes, H1 of depth 3).
TEST(DendrogramLayout, SampleDendrogram)
{
  Field f;
  std::string why;
  ASSERT_TRUE(read_sample(f, why)) << why;
  const std::unique_ptr<phewtest::Run> r = run(f, make_params(10.0, 2.0, 1, 25.0));
  ASSERT_EQ(r->status, PHEW_OK) << r->context.message;
  ASSERT_EQ(r->n_clumps(), 14);
  ASSERT_EQ(r->n_haloes(), 6);
  ASSERT_EQ(r->result.n_nodes, 22);
  const std::vector<phew_node> nodes(r->result.nodes, r->result.nodes + r->result.n_nodes);
  for (size_t i = 0; i < nodes.size(); ++i)
    ASSERT_EQ(nodes[i].id, (int64_t)i) << "the core numbers its nodes by their index";
  const Layout l = layout_of(nodes);
  check_rules(nodes, l, true);

  // the leaves are the 14 clumps, at the x the designed hierarchy gives (ClumpIds of
  // datasets/README.md): H1 a1 a2 | b1 b2 | b3 b4, H2 c1 | c2 c3, H3 d1 d2, then f1, g1, e1
  const std::map<int64_t, double> leaf_x = {{0, 0}, {7, 1},  {1, 2}, {5, 3},   {4, 4},  {9, 5},   {2, 6},
                                            {3, 7}, {10, 8}, {6, 9}, {11, 10}, {8, 11}, {12, 12}, {13, 13}};
  int64_t leaves = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    bool has_children = false;
    for (const phew_node &c : nodes)
      has_children |= c.parent_id == nodes[i].id;
    if (!has_children) {
      ++leaves;
      EXPECT_GE(nodes[i].clump_id, 0);
    }
    if (nodes[i].clump_id >= 0) {
      EXPECT_EQ(l.at[i].x, leaf_x.at(nodes[i].clump_id)) << "ClumpId " << nodes[i].clump_id;
    }
    if (nodes[i].parent_id == -1 && nodes[i].halo_id == 0) { // H1's root over a1..b4
      EXPECT_EQ(l.at[i].x, 2.0);
    }
  }
  EXPECT_EQ(leaves, 14);
  EXPECT_GT(l.log_floor, 0.0); // threshold 10: every density is positive, the floor is log10(min) - 1
}
