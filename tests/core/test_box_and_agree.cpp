// phew_points_box_from_bounds and phew_agree on one process: the box against the bounds
// computed here (origin the lowest coordinate, origin + size reaching the highest), NaN and
// infinite coordinates left out, the refusals; the agreement of one rank is its own status.
// tests/mpi/test_parallel_points.c checks both over several ranks.
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

phew_points Points(const std::vector<double> &xyz)
{
  phew_points p;
  phew_points_init(&p);
  p.n = static_cast<int64_t>(xyz.size() / 3);
  p.type = PHEW_FLOAT64;
  p.position = xyz.data();
  return p;
}

TEST(BoxFromBounds, LowestCoordinateAndASizeReachingTheHighest)
{
  // 0.2 + (0.9 - 0.2) rounds below 0.9 in double: the size must be raised to reach it.
  const std::vector<double> xyz = {0.2, -2.0, 5.0, 0.9, 3.0, 5.5, 0.3, 1.0, 1e-300};
  ASSERT_LT(0.2 + (0.9 - 0.2), 0.9);
  phew_points p = Points(xyz);
  phew_context context;
  phew_context_init(&context);
  ASSERT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_OK) << context.message;
  EXPECT_EQ(p.has_box, 1);
  const double lo[3] = {0.2, -2.0, 1e-300}, hi[3] = {0.9, 3.0, 5.5};
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(p.box_origin[d], lo[d]) << d;
    EXPECT_GE(p.box_origin[d] + p.box_size[d], hi[d]) << d;
    // the smallest such size: one step less misses the highest coordinate
    const double smaller = std::nextafter(p.box_size[d], 0.0);
    EXPECT_LT(p.box_origin[d] + smaller, hi[d]) << d;
  }
  EXPECT_EQ(p.box_size[0], std::nextafter(0.9 - 0.2, 1.0));
  EXPECT_STREQ(context.message, "");
}

TEST(BoxFromBounds, Float32PositionsAndNonFiniteCoordinatesLeftOut)
{
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> xyz = {1.0f, 2.0f, 3.0f, inf, 2.5f, nan, 0.5f, -inf, 4.0f, 2.0f, 1.5f, 3.5f};
  phew_points p;
  phew_points_init(&p);
  p.n = 4;
  p.type = PHEW_FLOAT32;
  p.position = xyz.data();
  phew_context context;
  phew_context_init(&context);
  ASSERT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_OK) << context.message;
  EXPECT_EQ(p.box_origin[0], 0.5);
  EXPECT_EQ(p.box_origin[0] + p.box_size[0], 2.0);
  EXPECT_EQ(p.box_origin[1], 1.5);
  EXPECT_EQ(p.box_origin[1] + p.box_size[1], 2.5);
  EXPECT_EQ(p.box_origin[2], 3.0);
  EXPECT_EQ(p.box_origin[2] + p.box_size[2], 4.0);
}

TEST(BoxFromBounds, NoFiniteCoordinateLeavesTheBoxForTheFinder)
{
  const double nan = std::nan("");
  const std::vector<double> xyz = {nan, 1.0, 2.0, nan, 3.0, 4.0};
  phew_points p = Points(xyz);
  p.box_origin[0] = 7.0;
  p.box_size[0] = 9.0;
  phew_context context;
  phew_context_init(&context);
  ASSERT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_OK) << context.message;
  EXPECT_EQ(p.has_box, 0);
  EXPECT_EQ(p.box_origin[0], 7.0);
  EXPECT_EQ(p.box_size[0], 9.0);
  phew_points none = Points({});
  EXPECT_EQ(phew_points_box_from_bounds(&context, &none), PHEW_OK);
  EXPECT_EQ(none.has_box, 0);
  // and the finder names the particle whose position is not finite
  std::vector<double> many;
  for (int i = 0; i < 200; ++i) {
    many.insert(many.end(), {0.01 * i, std::fmod(0.37 * i, 1.0), std::fmod(0.61 * i, 1.0)});
  }
  many[3 * 17 + 1] = std::numeric_limits<double>::infinity();
  phew_points p2 = Points(many);
  ASSERT_EQ(phew_points_box_from_bounds(&context, &p2), PHEW_OK) << context.message;
  EXPECT_EQ(p2.has_box, 1);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  in.points = p2;
  std::vector<double> density(200);
  EXPECT_EQ(phew_estimate_density(&context, &in, density.data(), nullptr), PHEW_ERROR_DATA);
  EXPECT_NE(std::string(context.message).find("particle 17 has a position that is not finite"), std::string::npos)
      << context.message;
}

TEST(BoxFromBounds, Refusals)
{
  phew_context context;
  phew_context_init(&context);
  const std::vector<double> flat = {0.0, 0.25, 1.0, 1.0, 0.25, 2.0};
  phew_points p = Points(flat);
  EXPECT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("same y (0.25)"), std::string::npos) << context.message;
  EXPECT_EQ(p.has_box, 0);
  const std::vector<double> good = {0.0, 0.0, 0.0, 1.0, 1.0, 1.0};
  p = Points(good);
  p.periodic[2] = 1;
  EXPECT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("periodic"), std::string::npos) << context.message;
  p.periodic[2] = 0;
  p.type = static_cast<phew_scalar_type>(7);
  EXPECT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_ERROR_ARGUMENT);
  p.type = PHEW_FLOAT64;
  p.position = nullptr;
  EXPECT_EQ(phew_points_box_from_bounds(&context, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_points_box_from_bounds(nullptr, &p), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_points_box_from_bounds(&context, nullptr), PHEW_ERROR_ARGUMENT);
}

TEST(Agree, OneRankKeepsItsOwnStatusAndMessage)
{
  phew_context context;
  phew_context_init(&context);
  std::snprintf(context.message, sizeof context.message, "%s", "the mass array is missing");
  EXPECT_EQ(phew_agree(&context, PHEW_ERROR_DATA), PHEW_ERROR_DATA);
  EXPECT_STREQ(context.message, "the mass array is missing");
  EXPECT_EQ(phew_agree(&context, PHEW_OK), PHEW_OK);
  EXPECT_STREQ(context.message, "");
  context.message[0] = '\0';
  EXPECT_EQ(phew_agree(&context, PHEW_ERROR_ARGUMENT), PHEW_ERROR_ARGUMENT);
  EXPECT_STREQ(context.message, phew_status_string(PHEW_ERROR_ARGUMENT));
  EXPECT_EQ(phew_agree(nullptr, PHEW_OK), PHEW_ERROR_ARGUMENT);
}

} // namespace
