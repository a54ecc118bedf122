// Labels of the active cells alone (phew_input.labels_active_only): on a block with ghost layers the
// start of each array holds the active box's labels, x fastest, equal to the per-stored-cell
// labels of the same block restricted to the active box and to the labels of the whole grid
// passed without ghosts. Other meshes refuse the flag.
#include "phew_test_util.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace phewtest;

namespace {

// The whole periodic field as one block with a ghost layer on every side (the copies wrap onto
// its own cells), run with active_only 0 or 1. The labels come back as the core wrote them.
std::unique_ptr<Run> run_ghosted(const Field &f, const phew_params &p, int active_only)
{
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_STRUCTURED;
  int64_t stored[3];
  for (int d = 0; d < 3; ++d) {
    in.grid.global_dims[d] = f.n[d];
    in.grid.active_offset[d] = 0;
    in.grid.active_dims[d] = f.n[d];
    in.grid.stored_offset[d] = -1;
    in.grid.stored_dims[d] = stored[d] = f.n[d] + 2;
    in.grid.periodic[d] = 1;
    in.grid.origin[d] = f.origin[d];
    in.grid.spacing[d] = f.spacing[d];
  }
  const size_t n_stored = (size_t)(stored[0] * stored[1] * stored[2]);
  std::vector<double> block(n_stored, -1.0);
  for (int64_t z = 0; z < f.n[2]; ++z)
    for (int64_t y = 0; y < f.n[1]; ++y)
      for (int64_t x = 0; x < f.n[0]; ++x)
        block[(size_t)((x + 1) + stored[0] * ((y + 1) + stored[1] * (z + 1)))] = f.at(x, y, z);
  phew_context context;
  phew_context_init(&context);
  EXPECT_EQ(phew_exchange_ghosts(&context, &in.grid, block.data(), sizeof(double)), PHEW_OK) << context.message;
  in.density = block.data();
  in.density_type = PHEW_FLOAT64;
  in.labels_active_only = active_only;

  auto r = std::make_unique<Run>();
  r->patch.assign(n_stored, -7);
  r->clump.assign(n_stored, -7);
  r->halo.assign(n_stored, -7);
  phew_labels labels = {r->patch.data(), r->clump.data(), r->halo.data(), nullptr};
  r->status = phew_find_clumps(&r->context, &in, &p, &labels, &r->result);
  EXPECT_EQ(r->status, PHEW_OK) << r->context.message;
  return r;
}

TEST(ActiveLabels, StartOfTheArraysHoldsTheActiveBox)
{
  Field f = smoothed_noise(18, 15, 12, 2024, 1);
  for (double &v : f.rho)
    v = std::exp(8.0 * v); // contrast: peaks well above their saddles
  f.set_periodic(true);
  const phew_params p = make_params(quantile(f, 0.6), 1.2, 1, quantile(f, 0.9));
  auto whole = run(f, p);
  auto stored = run_ghosted(f, p, 0);
  auto active = run_ghosted(f, p, 1);
  ASSERT_EQ(whole->status, PHEW_OK);
  ASSERT_GT(whole->n_clumps(), 3); // several clumps and haloes, so that a misplaced label shows
  ASSERT_GT(whole->n_haloes(), 1);
  ASSERT_LT(whole->n_haloes(), whole->n_clumps());
  EXPECT_EQ(stored->n_clumps(), whole->n_clumps());
  EXPECT_EQ(active->n_clumps(), whole->n_clumps());
  EXPECT_EQ(active->n_haloes(), whole->n_haloes());

  const int64_t sx = f.n[0] + 2, sy = f.n[1] + 2;
  int64_t mismatches = 0;
  for (int64_t z = 0; z < f.n[2]; ++z)
    for (int64_t y = 0; y < f.n[1]; ++y)
      for (int64_t x = 0; x < f.n[0]; ++x) {
        const size_t g = (size_t)f.id(x, y, z), s = (size_t)((x + 1) + sx * ((y + 1) + sy * (z + 1)));
        const int64_t expected[3] = {whole->patch[g], whole->clump[g], whole->halo[g]};
        const int64_t in_block[3] = {stored->patch[s], stored->clump[s], stored->halo[s]};
        const int64_t at_start[3] = {active->patch[g], active->clump[g], active->halo[g]};
        for (int k = 0; k < 3; ++k)
          mismatches += (in_block[k] != expected[k]) + (at_start[k] != expected[k]);
      }
  EXPECT_EQ(mismatches, 0);
}

TEST(ActiveLabels, OtherMeshesRefuseTheFlag)
{
  // a graph of two cells, and two particles
  const int64_t offsets[3] = {0, 1, 2}, neighbours[2] = {1, 0};
  const double density[2] = {2.0, 1.0}, centres[6] = {0, 0, 0, 1, 0, 0};
  int64_t patch[2], clump[2], halo[2];
  phew_labels labels = {patch, clump, halo, nullptr};
  const phew_params p = make_params(0.5);
  phew_context context;
  phew_context_init(&context);
  phew_clump_result result;

  phew_input graph;
  std::memset(&graph, 0, sizeof graph);
  graph.mesh = PHEW_MESH_GRAPH;
  graph.graph.n_cells = 2;
  graph.graph.offsets = offsets;
  graph.graph.neighbours = neighbours;
  graph.density = density;
  graph.density_type = PHEW_FLOAT64;
  graph.labels_active_only = 1;
  EXPECT_EQ(phew_find_clumps(&context, &graph, &p, &labels, &result), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::strstr(context.message, "labels_active_only"), nullptr) << context.message;
  phew_clump_result_free(&result);

  phew_input points;
  std::memset(&points, 0, sizeof points);
  points.mesh = PHEW_MESH_POINTS;
  phew_points_init(&points.points);
  points.points.n = 2;
  points.points.position = centres;
  points.labels_active_only = 1;
  EXPECT_EQ(phew_find_clumps(&context, &points, &p, &labels, &result), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::strstr(context.message, "labels_active_only"), nullptr) << context.message;
  phew_clump_result_free(&result);
}

} // namespace
