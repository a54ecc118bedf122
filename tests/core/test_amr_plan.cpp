// phew_plan_amr on one process: an AMR hierarchy as a reader gives it (boxes counted from an
// origin of their own, some levels not loaded, metadata PHEW cannot use) becomes the phew_amr
// of phew_find_clumps, or a message that names the problem. Several ranks: tests/mpi/test_amr_plan.c.
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {

// A hierarchy built box by box; levels halve the spacing with ratio 2 unless changed.
struct Hierarchy {
  std::vector<phew_amr_level> levels;
  std::vector<phew_amr_box> boxes;
  double origin[3] = {0.0, 0.0, 0.0};

  explicit Hierarchy(int n_levels, double s0x = 1.0, double s0y = 1.0, double s0z = 1.0)
  {
    for (int l = 0; l < n_levels; ++l) {
      phew_amr_level level{};
      const double f = std::ldexp(1.0, -l);
      level.spacing[0] = s0x * f;
      level.spacing[1] = s0y * f;
      level.spacing[2] = s0z * f;
      level.refinement = 2;
      levels.push_back(level);
    }
  }
  // A box of `level` from lo, n cells per axis (0: none, hi = lo - 1), held or not.
  void add(int level, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz, bool held = true)
  {
    phew_amr_box b{};
    b.level = level;
    b.held = held ? 1 : 0;
    const int64_t lo[3] = {x, y, z}, n[3] = {nx, ny, nz};
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = lo[d];
      b.hi[d] = lo[d] + n[d] - 1;
    }
    boxes.push_back(b);
  }
  phew_amr_hierarchy view() const
  {
    phew_amr_hierarchy h{};
    h.n_levels = (int32_t)levels.size();
    h.levels = levels.data();
    for (int d = 0; d < 3; ++d)
      h.origin[d] = origin[d];
    h.n_boxes = (int64_t)boxes.size();
    h.boxes = boxes.data();
    return h;
  }
};

struct Planned {
  phew_context context;
  phew_amr_plan plan;
  phew_status status;

  explicit Planned(const Hierarchy &h)
  {
    phew_context_init(&context);
    const phew_amr_hierarchy view = h.view();
    status = phew_plan_amr(&context, &view, &plan);
  }
  ~Planned() { phew_amr_plan_free(&plan); }
  std::string message() const { return context.message; }
  std::vector<int> holders(int64_t k) const
  {
    return std::vector<int>(plan.holders + plan.holder_start[k], plan.holders + plan.holder_start[k + 1]);
  }
};

// An 8x4x4 level 0 in two boxes counted from (-4, 2, 10), a level-1 box over level-0 cells
// [-3, -1) x [3, 5) x [11, 13) and a level-2 box inside it.
Hierarchy offset_hierarchy()
{
  Hierarchy h(3, 0.5, 0.25, 1.0);
  h.origin[0] = 1.0;
  h.origin[1] = 2.0;
  h.origin[2] = 3.0;
  h.add(0, -4, 2, 10, 4, 4, 4);
  h.add(0, 0, 2, 10, 4, 4, 4);
  h.add(1, -6, 6, 22, 4, 4, 4);
  h.add(2, -10, 14, 46, 4, 2, 2);
  return h;
}

void expect_failure(const Hierarchy &h, phew_status status, const std::string &message)
{
  Planned p(h);
  EXPECT_EQ(p.status, status) << p.message();
  EXPECT_EQ(p.message(), message);
  EXPECT_EQ(p.plan.amr.n_blocks, 0);
  EXPECT_EQ(p.plan.amr.blocks, nullptr);
  EXPECT_EQ(p.plan.holders, nullptr);
  EXPECT_EQ(p.plan.holder_start, nullptr);
}

TEST(AmrPlan, ShiftsBoxesSoThatLevel0StartsAtTheDomainCorner)
{
  Planned p(offset_hierarchy());
  ASSERT_EQ(p.status, PHEW_OK) << p.message();
  EXPECT_EQ(p.message(), "");
  EXPECT_EQ(p.plan.n_levels, 3);
  const phew_amr &amr = p.plan.amr;
  ASSERT_EQ(amr.n_blocks, 4);
  const int64_t offset[3] = {-4, 2, 10}, dims[3] = {8, 4, 4};
  const double origin[3] = {1.0 - 4 * 0.5, 2.0 + 2 * 0.25, 3.0 + 10 * 1.0}, spacing[3] = {0.5, 0.25, 1.0};
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(p.plan.level0_offset[d], offset[d]);
    EXPECT_EQ(amr.level0_dims[d], dims[d]);
    EXPECT_EQ(amr.origin[d], origin[d]);
    EXPECT_EQ(amr.spacing[d], spacing[d]);
    EXPECT_EQ(amr.periodic[d], 0);
  }
  // level l: lo - offset * 2^l
  const int64_t lo[4][3] = {{0, 0, 0}, {4, 0, 0}, {2, 2, 2}, {6, 6, 6}};
  const int64_t n[4][3] = {{4, 4, 4}, {4, 4, 4}, {4, 4, 4}, {4, 2, 2}};
  const int level[4] = {0, 0, 1, 2};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(amr.blocks[k].level, level[k]) << "block " << k;
    EXPECT_EQ(amr.blocks[k].owner, 0) << "block " << k;
    EXPECT_EQ(p.holders(k), std::vector<int>{0}) << "block " << k;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(amr.blocks[k].lo[d], lo[k][d]) << "block " << k << " axis " << d;
      EXPECT_EQ(amr.blocks[k].dims[d], n[k][d]) << "block " << k << " axis " << d;
    }
  }
}

TEST(AmrPlan, ThePlanIsAHierarchyTheClumpFinderRunsOn)
{
  Planned p(offset_hierarchy());
  ASSERT_EQ(p.status, PHEW_OK) << p.message();
  const int64_t cells = 2 * 64 + 64 + 16;
  std::vector<double> rho((size_t)cells, 1.0);
  rho[(size_t)cells - 1] = 50.0; // a peak in the level-2 block
  std::vector<int64_t> patch((size_t)cells), clump((size_t)cells), halo((size_t)cells);
  phew_input in{};
  in.mesh = PHEW_MESH_AMR;
  in.amr = p.plan.amr;
  in.density = rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = 2.0;
  phew_labels labels{patch.data(), clump.data(), halo.data(), nullptr};
  phew_clump_result result{};
  phew_context context;
  phew_context_init(&context);
  ASSERT_EQ(phew_find_clumps(&context, &in, &params, &labels, &result), PHEW_OK) << context.message;
  EXPECT_EQ(result.n_clumps, 1);
  EXPECT_EQ(clump[(size_t)cells - 1], 0);
  phew_clump_result_free(&result);
}

TEST(AmrPlan, LeavesOutTheLevelsNoRankHolds)
{
  Hierarchy h = offset_hierarchy();
  h.boxes[3].held = 0; // level 2 not loaded
  {
    Planned p(h);
    ASSERT_EQ(p.status, PHEW_OK) << p.message();
    EXPECT_EQ(p.plan.n_levels, 2);
    EXPECT_EQ(p.plan.amr.n_blocks, 3);
    EXPECT_EQ(p.plan.holder_start[3], 3);
  }
  h.boxes[2].held = 0; // level 1 neither
  {
    Planned p(h);
    ASSERT_EQ(p.status, PHEW_OK) << p.message();
    EXPECT_EQ(p.plan.n_levels, 1);
    EXPECT_EQ(p.plan.amr.n_blocks, 2);
    EXPECT_EQ(p.plan.amr.level0_dims[0], 8);
  }
  // What the levels left out hold is not checked: here a 2-D box and ratio 4.
  h.boxes[3].hi[2] = h.boxes[3].lo[2] - 1;
  h.levels[1].refinement = 4;
  h.levels[2].spacing[0] = 0.01;
  Planned p(h);
  EXPECT_EQ(p.status, PHEW_OK) << p.message();
  EXPECT_EQ(p.plan.n_levels, 1);
}

TEST(AmrPlan, ABlockMissingFromALoadedLevelIsAnError)
{
  Hierarchy h = offset_hierarchy();
  h.add(1, -2, 6, 22, 2, 2, 2, false); // a second level-1 box, held by nobody, before level 2
  std::swap(h.boxes[3], h.boxes[4]);
  expect_failure(h, PHEW_ERROR_ARGUMENT,
                 "no rank holds the dataset of block 1 of level 1 of the AMR (every block of a level that is "
                 "loaded must be present on some rank)");
  // level 1's first block missing while level 2 is loaded
  Hierarchy g = offset_hierarchy();
  g.boxes[2].held = 0;
  expect_failure(g, PHEW_ERROR_ARGUMENT,
                 "no rank holds the dataset of block 0 of level 1 of the AMR (every block of a level that is "
                 "loaded must be present on some rank)");
  // a level-0 block missing
  Hierarchy f = offset_hierarchy();
  f.boxes[1].held = 0;
  expect_failure(f, PHEW_ERROR_ARGUMENT,
                 "no rank holds the dataset of block 1 of level 0 of the AMR (every block of a level that is "
                 "loaded must be present on some rank)");
}

TEST(AmrPlan, NothingHeldOrNoBlocksIsAnError)
{
  Hierarchy h = offset_hierarchy();
  for (phew_amr_box &b : h.boxes)
    b.held = 0;
  expect_failure(h, PHEW_ERROR_ARGUMENT, "the input AMR holds no data: none of its 4 blocks has a dataset on any rank");
  expect_failure(Hierarchy(2), PHEW_ERROR_ARGUMENT, "the input AMR is empty (no blocks)");
  expect_failure(Hierarchy(0), PHEW_ERROR_ARGUMENT, "the input AMR is empty (no blocks)");
}

TEST(AmrPlan, RefusesWhatPhewCannotRunOn)
{
  Hierarchy flat = offset_hierarchy();
  flat.boxes[2].hi[2] = flat.boxes[2].lo[2] - 1;
  expect_failure(flat, PHEW_ERROR_ARGUMENT,
                 "the AMR is not 3-D (block 0 of level 1 has no cells along z); PHEW on AMR needs 3-D blocks (2-D "
                 "AMR is not supported)");
  Hierarchy ratio = offset_hierarchy();
  ratio.levels[1].refinement = 3;
  expect_failure(ratio, PHEW_ERROR_ARGUMENT,
                 "the refinement ratio between levels 1 and 2 of the AMR is 3; PHEW on AMR needs refinement ratio 2 "
                 "on every level");
  Hierarchy spacing = offset_hierarchy();
  spacing.levels[1].spacing[1] = 0.1;
  expect_failure(spacing, PHEW_ERROR_ARGUMENT,
                 "the spacing of level 1 of the AMR along y is 0.100000, not half of level 0's 0.250000 (refinement "
                 "ratio 2 is needed on every level)");
  Hierarchy rounded = offset_hierarchy(); // six significant digits, as .vthb files store them
  rounded.levels[2].spacing[0] = 0.125 * (1.0 + 5e-5);
  Planned p(rounded);
  EXPECT_EQ(p.status, PHEW_OK) << p.message();
  Hierarchy zero = offset_hierarchy();
  zero.levels[0].spacing[1] = 0.0;
  expect_failure(zero, PHEW_ERROR_ARGUMENT, "the AMR's level-0 spacing along y is 0.000000; it must be positive");
  Hierarchy coarse(2);
  coarse.add(1, 0, 0, 0, 2, 2, 2);
  expect_failure(coarse, PHEW_ERROR_ARGUMENT, "the AMR has no blocks on level 0 (level 0 must cover the domain)");
}

TEST(AmrPlan, BoxesTooFarFromTheDomainForInt64)
{
  Hierarchy h(3);
  const int64_t far = INT64_C(1) << 61;
  h.add(0, far, 0, 0, 1, 1, 1);
  h.add(1, 2 * far - 2, 0, 0, 2, 2, 2);
  h.add(2, -4, 0, 0, 2, 2, 2); // -4 - far * 4 < -2^63
  expect_failure(h, PHEW_ERROR_ARGUMENT,
                 "block 0 of level 2 of the AMR lies too far from the domain's corner along x for 64-bit cell indices");
}

TEST(AmrPlan, RefusesBadArguments)
{
  phew_context context;
  phew_context_init(&context);
  phew_amr_plan plan;
  EXPECT_EQ(phew_plan_amr(&context, nullptr, &plan), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(std::string(context.message), "phew_plan_amr: the hierarchy must not be NULL");
  EXPECT_EQ(plan.amr.blocks, nullptr);
  const Hierarchy good = offset_hierarchy();
  const phew_amr_hierarchy view = good.view();
  EXPECT_EQ(phew_plan_amr(&context, &view, nullptr), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(std::string(context.message), "phew_plan_amr: the context and the result must not be NULL");
  EXPECT_EQ(phew_plan_amr(nullptr, &view, &plan), PHEW_ERROR_ARGUMENT);

  Hierarchy order = offset_hierarchy();
  std::swap(order.boxes[2], order.boxes[3]);
  expect_failure(order, PHEW_ERROR_ARGUMENT,
                 "phew_plan_amr: box 3 (level 1) follows a box of level 2: list the boxes level by level");
  Hierarchy level = offset_hierarchy();
  level.boxes[3].level = 3;
  expect_failure(level, PHEW_ERROR_ARGUMENT, "phew_plan_amr: box 3 has level 3, outside 0 .. 2");
  Hierarchy corner = offset_hierarchy();
  corner.boxes[0].lo[1] = -(INT64_C(1) << 62);
  expect_failure(corner, PHEW_ERROR_ARGUMENT, "phew_plan_amr: box 0 has a corner beyond 2^62 along y");
  Hierarchy no_list = offset_hierarchy();
  phew_amr_hierarchy missing = no_list.view();
  missing.levels = nullptr;
  phew_amr_plan other;
  EXPECT_EQ(phew_plan_amr(&context, &missing, &other), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(std::string(context.message), "phew_plan_amr: 3 levels (0 to 54 are allowed, and their list)");

  // a success empties the message; freeing twice is harmless
  Planned p(good);
  ASSERT_EQ(p.status, PHEW_OK);
  phew_amr_plan_free(&p.plan);
  phew_amr_plan_free(&p.plan);
  phew_amr_plan_free(nullptr);
}

} // namespace
