// HOP (phew_find_hop_groups) on designed density profiles, where every rule of the regrouping
// can be read off by hand: particles on a line one unit apart, with given densities. With 3 hop
// neighbours (itself and its two neighbours on the line) each particle hops to the denser of
// its two neighbours when denser than itself, so the HOP groups are the hills of the profile,
// cut at its valleys; with 2 merge neighbours a boundary is the mean of the two densities
// across a cut. Thresholds: outer 1, saddle 2.5, peak 3 (the default factors).
// The statistical tests against an independent reference of the same rules on clustered
// particle sets are in tests/parallel/test_cli_hop.py.
#include "phew/phew.h"
extern "C" {
#include "threads.h" // threads_set_core_limit: more threads than this machine's cores
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

namespace {

// The threaded stages (the hops and their chains, the boundaries, the final keys, the
// catalogue) take blocks of 4096 particles per task; every thread count must give the bytes of
// one thread. (Beyond the cores the count is capped: on 2 cores, 3, 4 and 8 run as 2.)
const int thread_counts[] = {2, 3, 4, 8};

// A reproducible uniform in [0, 1) (splitmix64: the same numbers with any standard library).
struct Mix {
  uint64_t state;
  double uniform()
  {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
  }
};

// Expects the same GroupIds and catalogue bytes as the first run.
void expect_same_groups(const std::vector<int64_t> &group, const phew_group_result &r,
                        const std::vector<int64_t> &group1, const phew_group_result &r1, int threads)
{
  EXPECT_EQ(group, group1) << threads << " threads";
  ASSERT_EQ(r.n_groups, r1.n_groups) << threads << " threads";
  EXPECT_EQ(0, std::memcmp(r.groups, r1.groups, (size_t)r1.n_groups * sizeof(phew_group))) << threads << " threads";
}

// 3, 4 and 8 threads run as many even on a machine with fewer cores, while it lives.
struct AnyCoreCount {
  AnyCoreCount() { threads_set_core_limit(8); }
  ~AnyCoreCount() { threads_set_core_limit(0); }
};

// 60,000 particles on a line with a given density: hills of random heights (proper, fringe,
// below outer) and widths of up to 6,000 particles, valleys of random depths, so that chains of
// hops run across several tasks' blocks, groups meet at saddles above and below 2.5, and fringe
// groups reach proper ones through others.
TEST(Hop, AnyThreadCountGivesTheBytesOfOneOnLongChains)
{
  const AnyCoreCount cores;
  const size_t n = 60000;
  std::vector<double> rho(n);
  Mix mix{29};
  double valley = 0.5;
  for (size_t i = 0; i < n;) {
    const double peak = 0.6 + 9.0 * mix.uniform();
    const double next = std::min(peak, 0.3 + 4.0 * mix.uniform());
    const size_t up = 1 + (size_t)(3000 * mix.uniform()), down = 1 + (size_t)(3000 * mix.uniform());
    for (size_t k = 0; k < up && i < n; ++k, ++i)
      rho[i] = valley + (peak - valley) * (double)(k + 1) / (double)up;
    for (size_t k = 1; k <= down && i < n; ++k, ++i)
      rho[i] = peak + (next - peak) * (double)k / (double)down;
    valley = next;
  }
  Line one;
  run_line(one, rho, 10, 2, 1);
  ASSERT_EQ(one.status, PHEW_OK) << one.context.message;
  ASSERT_GT(one.result.n_groups, 5); // real work: several final groups, most particles in one
  EXPECT_GT(std::count_if(one.group.begin(), one.group.end(), [](int64_t g) { return g >= 0; }), (long)n / 2);
  EXPECT_EQ(one.result.stats.n_threads, 1);
  for (int threads : thread_counts) {
    Line l;
    run_line(l, rho, 10, 2, threads);
    ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
    expect_same_groups(l.group, l.result, one.group, one.result, threads);
  }
}

// The same on 40,000 clustered particles in a periodic box, with HOP's own density and
// neighbours (64 and 4): 24 haloes of several sizes, two pairs touching, one over the corner,
// on a uniform background.
TEST(Hop, AnyThreadCountGivesTheBytesOfOneOnClusteredParticles)
{
  const AnyCoreCount cores;
  std::vector<double> pos;
  Mix mix{1998};
  double centre[24][4] = {{0.2, 0.2, 0.2, 0.03},
                          {0.24, 0.21, 0.2, 0.01},
                          {0.0, 0.99, 0.01, 0.03},
                          {0.45, 0.5, 0.5, 0.04},
                          {0.5, 0.55, 0.5, 0.04}};
  for (int b = 5; b < 24; ++b) // the others anywhere, of any size
    centre[b][0] = mix.uniform(), centre[b][1] = mix.uniform(), centre[b][2] = mix.uniform(),
    centre[b][3] = 0.005 + 0.03 * mix.uniform();
  for (int b = 0; b < 24; ++b)
    for (int k = 0; k < 1000; ++k)
      for (int d = 0; d < 3; ++d) { // a Gaussian by Box-Muller, into the periodic box
        const double u = 1.0 - mix.uniform(), v = mix.uniform();
        const double x = centre[b][d] + centre[b][3] * std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
        pos.push_back(x - std::floor(x));
      }
  while (pos.size() < 3 * 40000)
    pos.push_back(mix.uniform());
  phew_input in{};
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)(pos.size() / 3);
  in.points.type = PHEW_FLOAT64;
  in.points.position = pos.data();
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = 1.0;
    in.points.periodic[d] = 1;
  }
  phew_hop_params p;
  phew_hop_params_init(&p);
  p.outer = 80.0;
  std::vector<int64_t> group1;
  phew_group_result r1{};
  for (int threads : {1, 2, 3, 4, 8}) {
    phew_context context;
    phew_context_init(&context);
    context.n_threads = threads;
    std::vector<int64_t> group((size_t)in.points.n, -7);
    phew_group_result r{};
    ASSERT_EQ(phew_find_hop_groups(&context, &in, &p, group.data(), nullptr, &r), PHEW_OK) << context.message;
    if (threads == 1) {
      group1 = group;
      r1 = r;
      ASSERT_GT(r1.n_groups, 5);
      continue;
    }
    expect_same_groups(group, r, group1, r1, threads);
    phew_group_result_free(&r);
  }
  phew_group_result_free(&r1);
}

} // namespace
