// The split of a grid over ranks: every cell is active on exactly one rank, blocks are
// balanced, and each block stores exactly one ghost layer towards every neighbouring block.
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

struct Case {
  int64_t n[3];
  int periodic;
  int ranks;
};

class Decompose : public ::testing::TestWithParam<Case> {};

TEST_P(Decompose, CoversTheGridOnceWithGhostLayers)
{
  const Case c = GetParam();
  const int periodic[3] = {c.periodic, c.periodic, c.periodic};
  const int64_t total = c.n[0] * c.n[1] * c.n[2];
  std::vector<int> owner((size_t)total, -1);
  int64_t most = 0, least = total;
  for (int r = 0; r < c.ranks; ++r) {
    phew_grid g;
    ASSERT_EQ(phew_grid_block(nullptr, &g, c.n, periodic, c.ranks, r), PHEW_OK);
    int64_t cells = 1;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(g.global_dims[d], c.n[d]);
      EXPECT_EQ(g.periodic[d], c.periodic);
      cells *= g.active_dims[d];
      const int64_t lo = g.active_offset[d], hi = lo + g.active_dims[d];
      if (g.active_dims[d] == 0 || g.active_dims[d] == c.n[d]) {
        EXPECT_EQ(g.stored_offset[d], lo); // no ghosts: empty, or the whole axis
        EXPECT_EQ(g.stored_dims[d], g.active_dims[d]);
        continue;
      }
      const bool below = lo > 0 || c.periodic, above = hi < c.n[d] || c.periodic;
      EXPECT_EQ(g.stored_offset[d], lo - (below ? 1 : 0)) << "axis " << d << " rank " << r;
      EXPECT_EQ(g.stored_offset[d] + g.stored_dims[d], hi + (above ? 1 : 0)) << "axis " << d << " rank " << r;
    }
    most = std::max(most, cells);
    least = std::min(least, cells);
    for (int64_t z = g.active_offset[2]; z < g.active_offset[2] + g.active_dims[2]; ++z)
      for (int64_t y = g.active_offset[1]; y < g.active_offset[1] + g.active_dims[1]; ++y)
        for (int64_t x = g.active_offset[0]; x < g.active_offset[0] + g.active_dims[0]; ++x) {
          int &o = owner[(size_t)(x + c.n[0] * (y + c.n[1] * z))];
          EXPECT_EQ(o, -1) << "cell owned twice";
          o = r;
        }
  }
  EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0) << "cells owned by nobody";
  if (total >= 8 * c.ranks) {
    EXPECT_LE(most, 2 * least + 1) << "unbalanced blocks";
  }
}

INSTANTIATE_TEST_SUITE_P(Grids, Decompose,
                         ::testing::Values(Case{{16, 16, 16}, 0, 1}, Case{{16, 16, 16}, 1, 2}, Case{{16, 16, 16}, 0, 3},
                                           Case{{16, 16, 16}, 1, 4}, Case{{17, 13, 11}, 0, 6}, Case{{17, 13, 11}, 1, 8},
                                           Case{{64, 8, 8}, 1, 8}, Case{{4, 4, 4}, 1, 8}, Case{{2, 2, 2}, 1, 8},
                                           Case{{3, 1, 1}, 0, 8}, Case{{5, 5, 5}, 1, 5}),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           const Case &c = i.param;
                           return std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" + std::to_string(c.n[2]) +
                                  (c.periodic ? "_periodic_" : "_") + std::to_string(c.ranks) + "ranks";
                         });

TEST(Decompose, RefusesNonsense)
{
  phew_grid g;
  const int64_t n[3] = {4, 4, 4}, zero[3] = {4, 0, 4};
  EXPECT_EQ(phew_grid_block(nullptr, &g, n, nullptr, 0, 0), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_grid_block(nullptr, &g, n, nullptr, 2, 2), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_grid_block(nullptr, &g, zero, nullptr, 1, 0), PHEW_ERROR_ARGUMENT);
}

} // namespace
