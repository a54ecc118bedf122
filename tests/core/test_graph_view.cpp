// The explicit-graph view must give exactly what the structured view gives when the graph is
// the 26-neighbour stencil of a grid, and it must work on graphs that are not grids.
#include "phew/phew.h"
#include "phew_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct GraphRun {
  std::vector<int64_t> patch, clump, halo;
  phew_context context;
  phew_clump_result result{};
  phew_status status = PHEW_OK;
  GraphRun() { phew_context_init(&context); }
  ~GraphRun() { phew_clump_result_free(&result); }
};

void run(const phew_input &in, int64_t n, const phew_params &p, GraphRun &r)
{
  r.patch.assign((size_t)n, 7);
  r.clump.assign((size_t)n, 7);
  r.halo.assign((size_t)n, 7);
  phew_labels labels{r.patch.data(), r.clump.data(), r.halo.data(), nullptr};
  r.status = phew_find_clumps(&r.context, &in, &p, &labels, &r.result);
}

// Smoothed, positive random field on an n^3 grid (x fastest).
std::vector<double> smooth_field(int n, unsigned seed, bool periodic)
{
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> w((size_t)n * n * n), f((size_t)n * n * n, 0.0);
  for (auto &v : w)
    v = normal(rng);
  auto at = [&](int x, int y, int z) -> double {
    if (periodic) {
      x = (x + n) % n, y = (y + n) % n, z = (z + n) % n;
    } else if (x < 0 || y < 0 || z < 0 || x >= n || y >= n || z >= n) {
      return 0.0;
    }
    return w[(size_t)x + (size_t)n * ((size_t)y + (size_t)n * (size_t)z)];
  };
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        double s = 0.0;
        for (int dz = -2; dz <= 2; ++dz)
          for (int dy = -2; dy <= 2; ++dy)
            for (int dx = -2; dx <= 2; ++dx)
              s += at(x + dx, y + dy, z + dz) * std::exp(-0.5 * (dx * dx + dy * dy + dz * dz) / 1.5);
        f[(size_t)x + (size_t)n * ((size_t)y + (size_t)n * (size_t)z)] = std::exp(0.5 * s);
      }
  return f;
}

void expect_same_objects(const phew_object *a, const phew_object *b, int64_t n)
{
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].halo_id, b[i].halo_id);
    EXPECT_EQ(a[i].parent_id, b[i].parent_id);
    EXPECT_EQ(a[i].level, b[i].level);
    EXPECT_EQ(a[i].peak_id, b[i].peak_id);
    EXPECT_EQ(a[i].n_cells, b[i].n_cells);
    EXPECT_EQ(a[i].peak_density, b[i].peak_density);
    EXPECT_EQ(a[i].min_density, b[i].min_density);
    EXPECT_EQ(a[i].key_saddle_density, b[i].key_saddle_density);
    EXPECT_EQ(a[i].relevance, b[i].relevance);
    EXPECT_NEAR(a[i].mass, b[i].mass, 1e-12 * a[i].mass);
    EXPECT_NEAR(a[i].volume, b[i].volume, 1e-12 * a[i].volume);
    EXPECT_NEAR(a[i].mean_density, b[i].mean_density, 1e-12 * a[i].mean_density);
    for (int d = 0; d < 3; ++d) {
      EXPECT_DOUBLE_EQ(a[i].peak_position[d], b[i].peak_position[d]);
      EXPECT_NEAR(a[i].center_of_mass[d], b[i].center_of_mass[d], 1e-9);
    }
  }
}

class GraphMatchesGrid : public ::testing::TestWithParam<bool> {};

TEST_P(GraphMatchesGrid, LabelsCatalogueAndDendrogram)
{
  const bool periodic = GetParam();
  const int n = 20;
  const double spacing[3] = {0.5, 0.25, 2.0}, origin[3] = {-1.0, 3.0, 0.5};
  const std::vector<double> rho = smooth_field(n, periodic ? 11u : 12u, periodic);
  std::vector<double> sorted = rho;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 3, sorted.end());

  phew_params p;
  phew_params_init(&p);
  p.density_threshold = sorted[sorted.size() / 3];
  p.relevance_threshold = 1.3;
  p.saddle_merging = 1;
  p.saddle_threshold = p.density_threshold * 1.5;

  phew_input grid{};
  phew_grid_init_whole(&grid.grid, n, n, n);
  for (int d = 0; d < 3; ++d) {
    grid.grid.periodic[d] = periodic;
    grid.grid.spacing[d] = spacing[d];
    grid.grid.origin[d] = origin[d];
  }
  grid.density = rho.data();
  grid.density_type = PHEW_FLOAT64;

  // the grid's 26-neighbour relation written out as a graph (as the grid reference builds it)
  phewtest::Field f(n, n, n);
  for (int d = 0; d < 3; ++d) {
    f.periodic[d] = periodic;
    f.spacing[d] = spacing[d];
    f.origin[d] = origin[d];
  }
  f.rho = rho;
  const graphref::Graph g = phewref::grid_graph(f);
  const phew_input graph = graphref::graph_input(g);

  GraphRun a, b;
  run(grid, (int64_t)n * n * n, p, a);
  run(graph, (int64_t)n * n * n, p, b);
  ASSERT_EQ(a.status, PHEW_OK) << a.context.message;
  ASSERT_EQ(b.status, PHEW_OK) << b.context.message;
  ASSERT_GT(a.result.n_clumps, 3);
  ASSERT_GT(a.result.stats.saddle_levels, 0);
  EXPECT_EQ(a.patch, b.patch);
  EXPECT_EQ(a.clump, b.clump);
  EXPECT_EQ(a.halo, b.halo);
  EXPECT_EQ(a.result.stats.n_peaks, b.result.stats.n_peaks);
  EXPECT_EQ(a.result.stats.n_saddle_pairs, b.result.stats.n_saddle_pairs);
  ASSERT_EQ(a.result.n_clumps, b.result.n_clumps);
  ASSERT_EQ(a.result.n_haloes, b.result.n_haloes);
  expect_same_objects(a.result.clumps, b.result.clumps, a.result.n_clumps);
  expect_same_objects(a.result.haloes, b.result.haloes, a.result.n_haloes);
  ASSERT_EQ(a.result.n_nodes, b.result.n_nodes);
  for (int64_t i = 0; i < a.result.n_nodes; ++i) {
    const phew_node &x = a.result.nodes[i], &y = b.result.nodes[i];
    EXPECT_EQ(x.parent_id, y.parent_id);
    EXPECT_EQ(x.level, y.level);
    EXPECT_EQ(x.clump_id, y.clump_id);
    EXPECT_EQ(x.peak_id, y.peak_id);
    EXPECT_EQ(x.saddle_density, y.saddle_density);
    EXPECT_EQ(x.n_cells, y.n_cells);
  }
}

INSTANTIATE_TEST_SUITE_P(PeriodicAndNot, GraphMatchesGrid, ::testing::Values(false, true));

// Six particles on a line, neighbours within one step: peaks at 1 and 4, saddle between
// cells 2 and 3 = (3 + 2) / 2 = 2.5, so the lower peak has relevance 5 / 2.5 = 2.
TEST(GraphView, ParticlesOnALine)
{
  const std::vector<double> rho = {1, 9, 3, 2, 5, 1};
  std::vector<int64_t> ids = {100, 101, 102, 103, 104, 105}, offsets = {0}, nb;
  std::vector<double> pos;
  for (int i = 0; i < 6; ++i) {
    if (i > 0)
      nb.push_back(i - 1);
    if (i < 5)
      nb.push_back(i + 1);
    offsets.push_back((int64_t)nb.size());
    pos.insert(pos.end(), {double(i), 0.0, 0.0});
  }
  phew_input in{};
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = 6;
  in.graph.global_id = ids.data();
  in.graph.offsets = offsets.data();
  in.graph.neighbours = nb.data();
  in.graph.position = pos.data();
  in.density = rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 1.5;
  p.relevance_threshold = 1.9;

  GraphRun r;
  run(in, 6, p, r);
  ASSERT_EQ(r.status, PHEW_OK) << r.context.message;
  EXPECT_EQ(r.patch, (std::vector<int64_t>{-1, 101, 101, 104, 104, -1}));
  ASSERT_EQ(r.result.n_clumps, 2);
  EXPECT_EQ(r.result.clumps[1].peak_id, 104);
  EXPECT_DOUBLE_EQ(r.result.clumps[1].key_saddle_density, 2.5);
  EXPECT_DOUBLE_EQ(r.result.clumps[1].relevance, 2.0);
  EXPECT_DOUBLE_EQ(r.result.clumps[1].mass, 7.0); // cells 3 and 4, volume 1
  EXPECT_DOUBLE_EQ(r.result.clumps[1].center_of_mass[0], (3 * 2 + 4 * 5) / 7.0);

  p.relevance_threshold = 2.1; // now the lower peak is noise and joins the higher one
  GraphRun s;
  run(in, 6, p, s);
  ASSERT_EQ(s.status, PHEW_OK) << s.context.message;
  ASSERT_EQ(s.result.n_clumps, 1);
  EXPECT_EQ(s.clump, (std::vector<int64_t>{-1, 0, 0, 0, 0, -1}));
  EXPECT_EQ(s.result.clumps[0].n_cells, 4);
}

TEST(GraphView, RejectsBrokenGraphs)
{
  const std::vector<double> rho = {1, 2, 3};
  std::vector<int64_t> ids = {0, 1, 2}, offsets = {0, 1, 2, 3}, nb = {1, 2, 7};
  phew_input in{};
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = 3;
  in.graph.global_id = ids.data();
  in.graph.offsets = offsets.data();
  in.graph.neighbours = nb.data();
  in.density = rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 0.5;
  GraphRun r;
  run(in, 3, p, r);
  EXPECT_EQ(r.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(r.context.message).find("neighbour 7"), std::string::npos) << r.context.message;
  EXPECT_EQ(r.patch, (std::vector<int64_t>{-1, -1, -1})) << "labels reset when the input is refused";

  offsets = {0, 2, 1, 3};
  nb = {1, 2, 0};
  GraphRun s;
  run(in, 3, p, s);
  EXPECT_EQ(s.status, PHEW_ERROR_ARGUMENT);
}

} // namespace
