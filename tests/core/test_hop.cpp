// HOP (phew_find_hop_groups) on designed density profiles, where every rule of the regrouping
// can be read off by hand: particles on a line one unit apart, with given densities. With 3 hop
// neighbours (itself and its two neighbours on the line) each particle hops to the denser of
// its two neighbours when denser than itself, so the HOP groups are the hills of the profile,
// cut at its valleys; with 2 merge neighbours a boundary is the mean of the two densities
// across a cut. Thresholds: outer 1, saddle 2.5, peak 3 (the default factors).
// The statistical tests against an independent reference of the same rules on clustered
// particle sets are in tests/parallel/test_cli_hop.py.
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Line {
  std::vector<double> pos, rho;
  std::vector<int64_t> group;
  phew_context context;
  phew_group_result result{};
  phew_status status = PHEW_OK;
  Line() { phew_context_init(&context); }
  ~Line() { phew_group_result_free(&result); }
};

// Runs HOP on particles at x = 0, 1, 2, ... with the given densities (ids = indices).
void run_line(Line &l, const std::vector<double> &rho, int64_t min_members = 1, int n_merge = 2, int threads = 1)
{
  const size_t n = rho.size();
  l.rho = rho;
  l.pos.assign(3 * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    l.pos[3 * i] = (double)i;
  l.group.assign(n, -7);
  phew_input in{};
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)n;
  in.points.type = PHEW_FLOAT64;
  in.points.position = l.pos.data();
  l.context.n_threads = threads;
  in.density = l.rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_hop_params p;
  phew_hop_params_init(&p);
  p.outer = 1.0;
  p.n_hop = 3;
  p.n_merge = n_merge;
  p.min_members = min_members;
  l.status = phew_find_hop_groups(&l.context, &in, &p, l.group.data(), nullptr, &l.result);
}

// The GroupId of each particle, as a string: '.' for -1, else '0' + id.
std::string groups_of(const Line &l)
{
  std::string s;
  for (int64_t g : l.group)
    s += g < 0 ? '.' : (char)('0' + g);
  return s;
}

TEST(Hop, HillsAreGroupsAndParticlesBelowOuterAreNone)
{
  Line l;
  // two proper hills (peaks 10 and 12), their boundary 0.7 (below the saddle); 0.5, 0.8 and
  // 0.6 are below outer
  run_line(l, {0.5, 2, 5, 10, 5, 2, 0.8, 0.6, 1.2, 3, 12, 3, 1.5, 0.5});
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  EXPECT_EQ(groups_of(l), ".00000..11111.");
  ASSERT_EQ(l.result.n_groups, 2);
  // equal counts: the smaller smallest id first
  EXPECT_EQ(l.result.groups[0].min_particle_id, 1);
  EXPECT_EQ(l.result.groups[0].peak_id, 3);
  EXPECT_EQ(l.result.groups[0].peak_density, 10.0);
  EXPECT_EQ(l.result.groups[1].peak_id, 10);
  EXPECT_EQ(l.result.groups[1].peak_position[0], 10.0);
}

TEST(Hop, ProperGroupsJoinAtTheSaddle)
{
  Line l;
  // the cut between 2.6 (hops to 3) and 2.8 (hops to 5): boundary 2.7 >= 2.5
  run_line(l, {0.5, 5, 10, 3, 2.6, 2.8, 5, 12, 4, 0.5});
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  EXPECT_EQ(groups_of(l), ".00000000.");
  ASSERT_EQ(l.result.n_groups, 1);
  EXPECT_EQ(l.result.groups[0].peak_id, 7); // the higher peak names the group
  // boundary 2.45 < 2.5: two groups
  Line m;
  run_line(m, {0.5, 5, 10, 3, 2.6, 2.3, 5, 12, 4, 0.5});
  EXPECT_EQ(groups_of(m), ".00001111."); // 4 and 4 particles: the smaller smallest id first
}

TEST(Hop, EqualPathsGoToTheHigherPeakThenTheSmallerPeakId)
{
  // a fringe hill (peak 2) between two proper hills, both boundaries 1.35
  Line higher_right;
  run_line(higher_right, {0.5, 5, 10, 2.2, 1.2, 1.5, 2.0, 1.5, 1.2, 2.2, 12, 5, 0.5});
  ASSERT_EQ(higher_right.status, PHEW_OK) << higher_right.context.message;
  EXPECT_EQ(groups_of(higher_right), ".11110000000.");
  Line higher_left;
  run_line(higher_left, {0.5, 5, 12, 2.2, 1.2, 1.5, 2.0, 1.5, 1.2, 2.2, 10, 5, 0.5});
  EXPECT_EQ(groups_of(higher_left), ".00000001111.");
  Line equal; // equal peaks: the smaller peak id (the left one, id 2)
  run_line(equal, {0.5, 5, 10, 2.2, 1.2, 1.5, 2.0, 1.5, 1.2, 2.2, 10, 5, 0.5});
  EXPECT_EQ(groups_of(equal), ".00000001111.");
}

TEST(Hop, FringeGroupsFollowTheWidestPathThroughOtherFringeGroups)
{
  // proper Q (peak 20) | fringe A (2.5) | fringe B (2.8) | proper P (10): A touches Q by 1.1
  // and B by 1.5, B touches P by 1.45. A's widest path goes through B to P (1.45 > 1.1)
  Line l;
  run_line(l, {0.5, 20, 1.4, 0.9, 1.3, 2.5, 1.6, 1.4, 2.8, 1.3, 1.6, 10, 1.2, 0.5});
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  EXPECT_EQ(groups_of(l), ".11.000000000.");
}

TEST(Hop, AFringeLinkNeedsBothPeaksAboveOuter)
{
  // fringe A (peak 2.5) | B | proper P (10), with 4 merge neighbours (pairs two apart make
  // boundaries 1.25 on both sides of B). B's peak 0.98 is below outer: A cannot pass
  // through B, and is alone; B's own particles are all below outer
  Line below;
  run_line(below, {0.5, 1.3, 2.5, 1.6, 0.85, 0.9, 0.98, 0.9, 0.85, 1.6, 10, 1.2, 0.5}, 1, 4);
  ASSERT_EQ(below.status, PHEW_OK) << below.context.message;
  EXPECT_EQ(groups_of(below), ".........000.");
  // B's peak 1.05 above outer: A and B join P
  Line above;
  run_line(above, {0.5, 1.3, 2.5, 1.6, 0.85, 0.9, 1.05, 0.9, 0.85, 1.6, 10, 1.2, 0.5}, 1, 4);
  ASSERT_EQ(above.status, PHEW_OK) << above.context.message;
  EXPECT_EQ(groups_of(above), ".000..0..000.");
}

TEST(Hop, AWeakestLinkBelowOuterLeavesTheFringeGroupAlone)
{
  // fringe (peak 2) next to a proper hill by 0.95 (< outer 1): alone, in no group
  Line l;
  run_line(l, {0.5, 1.2, 2, 1.2, 0.7, 1.2, 10, 1.2, 0.5});
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  EXPECT_EQ(groups_of(l), ".....000.");
}

TEST(Hop, GroupsBelowTheMinimumSizeAreDropped)
{
  Line l;
  run_line(l, {0.5, 2, 5, 10, 5, 2, 1.2, 0.6, 3, 12, 3, 0.5}, 4);
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  EXPECT_EQ(groups_of(l), ".000000.....");
}

TEST(Hop, BadParametersAreRefused)
{
  std::vector<double> pos(30, 0.0);
  for (int i = 0; i < 10; ++i)
    pos[3 * i] = i;
  std::vector<int64_t> group(10, 5);
  std::vector<double> rho(10, 1.0);
  phew_input in{};
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = 10;
  in.points.type = PHEW_FLOAT64;
  in.points.position = pos.data();
  in.density = rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_hop_params p;
  phew_context context;
  phew_context_init(&context);
  phew_group_result r{};
  const auto refused = [&](const char *what) {
    const phew_status s = phew_find_hop_groups(&context, &in, &p, group.data(), nullptr, &r);
    EXPECT_EQ(s, PHEW_ERROR_ARGUMENT) << what;
    EXPECT_NE(std::string(context.message), "") << what;
    EXPECT_EQ(group[0], -1) << what;
    phew_group_result_free(&r);
    group.assign(10, 5);
  };
  phew_hop_params_init(&p);
  p.outer = 0;
  refused("outer 0");
  phew_hop_params_init(&p);
  p.outer = NAN;
  refused("outer NaN");
  phew_hop_params_init(&p);
  p.peak_factor = 0.5;
  refused("peak factor below 1");
  phew_hop_params_init(&p);
  p.n_hop = 0;
  refused("no hop neighbours");
  phew_hop_params_init(&p);
  p.min_members = 0;
  refused("no members");
  phew_hop_params_init(&p);
  p.n_hop = 64;
  refused("10 particles, 64 hop neighbours");
  EXPECT_EQ(phew_find_hop_groups(&context, &in, nullptr, group.data(), nullptr, &r), PHEW_ERROR_ARGUMENT);
  phew_group_result_free(&r);
}

} // namespace

namespace {

// A NaN in a given density would let hops cycle: refused with a message, labels -1.
TEST(Hop, NonFiniteGivenDensityIsRefused)
{
  Line l;
  run_line(l, {0.5, 2, 5, 10, NAN, 2, 1.2, 0.6, 1.2, 3, 12, 3, 1.5, 0.5});
  EXPECT_EQ(l.status, PHEW_ERROR_DATA);
  EXPECT_NE(std::string(l.context.message).find("particle 4 has density"), std::string::npos) << l.context.message;
  for (int64_t g : l.group)
    EXPECT_EQ(g, -1);
}

} // namespace
