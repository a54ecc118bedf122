// Friends-of-Friends (phew_find_fof_groups) against an independent reference written here:
// every pair of particles compared (nearest image as min(|d|, L - |d|) per periodic axis,
// the squared distance summed as (dx^2 + dy^2) + dz^2 and compared with <= the squared
// linking length), groups by a plain breadth-first search, ordered by decreasing size then
// smallest id, and their catalogue (masses, centres of mass, radii, velocities) in long
// double. Also: lattices where many pairs sit at exactly the linking length (absolute, and
// relative on lattices whose mean spacing is exact), invariance under threads and storage
// order, and bad input.
#include "phew/phew.h"

extern "C" {
#include "cube_root.h"
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <numeric>
#include <queue>
#include <vector>

namespace {

struct Random {
  uint64_t s;
  explicit Random(uint64_t seed) : s(seed) {}
  uint64_t next()
  {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double)(next() >> 11) * 0x1.0p-53; }
  double normal()
  {
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

struct Particles {
  double box = 1.0;
  bool periodic = true;
  std::vector<double> pos, vel, mass;
  std::vector<int64_t> id; // empty: the index
  size_t n() const { return pos.size() / 3; }
};

// Blobs (one across the periodic corner, two touching) on a uniform background.
Particles blobs(uint64_t seed, bool periodic, int n_background)
{
  Particles p;
  p.periodic = periodic;
  Random r(seed);
  struct Blob {
    double c[3], sigma;
    int n;
  };
  const Blob list[] = {{{0.30, 0.30, 0.30}, 0.03, 400},  {{0.37, 0.31, 0.30}, 0.01, 150},
                       {{0.70, 0.62, 0.55}, 0.04, 500},  {{0.01, 0.99, 0.02}, 0.03, 350},
                       {{0.50, 0.80, 0.20}, 0.015, 120}, {{0.85, 0.15, 0.60}, 0.006, 40}};
  auto put = [&](double x, double y, double z, double vx) {
    const double c[3] = {x, y, z};
    for (double v : c) {
      if (periodic) {
        v = std::fmod(v, 1.0);
        if (v < 0)
          v += 1.0;
        if (v >= 1.0)
          v = 0.0;
      } else {
        v = std::fabs(v);
        if (v > 1.0)
          v = 2.0 - v;
      }
      p.pos.push_back(v);
    }
    p.vel.push_back(vx + r.normal());
    p.vel.push_back(r.normal());
    p.vel.push_back(-vx + r.normal());
    p.mass.push_back(0.5 + r.uniform());
  };
  for (const Blob &b : list) {
    const double vx = 50 * r.normal();
    for (int k = 0; k < b.n; ++k)
      put(b.c[0] + b.sigma * r.normal(), b.c[1] + b.sigma * r.normal(), b.c[2] + b.sigma * r.normal(), vx);
  }
  for (int k = 0; k < n_background; ++k)
    put(r.uniform(), r.uniform(), r.uniform(), 0.0);
  return p;
}

double axis_gap(double a, double b, double box, bool periodic)
{
  const double d = std::fabs(a - b);
  return periodic ? std::min(d, box - d) : d;
}

double distance2(const Particles &p, size_t i, size_t j)
{
  const double dx = axis_gap(p.pos[3 * i], p.pos[3 * j], p.box, p.periodic);
  const double dy = axis_gap(p.pos[3 * i + 1], p.pos[3 * j + 1], p.box, p.periodic);
  const double dz = axis_gap(p.pos[3 * i + 2], p.pos[3 * j + 2], p.box, p.periodic);
  return (dx * dx + dy * dy) + dz * dz;
}

int64_t id_of(const Particles &p, size_t i) { return p.id.empty() ? (int64_t)i : p.id[i]; }

struct Reference {
  std::vector<int64_t> group;               // per particle, -1: none
  std::vector<std::vector<size_t>> members; // per group, in catalogue order
};

Reference reference_fof(const Particles &p, double length, int64_t min_members)
{
  const size_t n = p.n();
  std::vector<std::vector<size_t>> friends(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (distance2(p, i, j) <= length * length) {
        friends[i].push_back(j);
        friends[j].push_back(i);
      }
  std::vector<int64_t> component(n, -1);
  std::vector<std::vector<size_t>> all;
  for (size_t s = 0; s < n; ++s) {
    if (component[s] >= 0)
      continue;
    std::vector<size_t> members{s};
    component[s] = (int64_t)all.size();
    for (size_t k = 0; k < members.size(); ++k)
      for (size_t j : friends[members[k]])
        if (component[j] < 0) {
          component[j] = (int64_t)all.size();
          members.push_back(j);
        }
    all.push_back(members);
  }
  auto smallest = [&](const std::vector<size_t> &m) {
    int64_t s = INT64_MAX;
    for (size_t i : m)
      s = std::min(s, id_of(p, i));
    return s;
  };
  std::vector<size_t> order;
  for (size_t g = 0; g < all.size(); ++g)
    if ((int64_t)all[g].size() >= min_members)
      order.push_back(g);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (all[a].size() != all[b].size())
      return all[a].size() > all[b].size();
    return smallest(all[a]) < smallest(all[b]);
  });
  Reference r;
  r.group.assign(n, -1);
  for (size_t k = 0; k < order.size(); ++k) {
    for (size_t i : all[order[k]])
      r.group[i] = (int64_t)k;
    r.members.push_back(all[order[k]]);
  }
  return r;
}

struct FofRun {
  phew_status status;
  std::vector<int64_t> group;
  phew_context context;
  phew_group_result result;
  FofRun() : status(PHEW_OK)
  {
    phew_context_init(&context);
    std::memset(&result, 0, sizeof result);
  }
  ~FofRun() { phew_group_result_free(&result); }
};

void run_fof(const Particles &p, const phew_fof_params &params, FofRun &out, int threads = 1, bool velocities = true)
{
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)p.n();
  in.points.type = PHEW_FLOAT64;
  in.points.position = p.pos.data();
  in.points.mass = p.mass.data();
  in.points.velocity = velocities ? p.vel.data() : nullptr;
  in.points.id = p.id.empty() ? nullptr : p.id.data();
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = p.box;
    in.points.periodic[d] = p.periodic;
  }
  out.context.n_threads = threads;
  out.group.assign(p.n(), -7);
  out.status = phew_find_fof_groups(&out.context, &in, &params, out.group.data(), &out.result);
}

phew_fof_params absolute(double length, int64_t min_members)
{
  phew_fof_params f;
  phew_fof_params_init(&f);
  f.linking_length = length;
  f.absolute = 1;
  f.min_members = min_members;
  return f;
}

// The labels and the catalogue against the reference (catalogue values in long double).
void expect_reference(const Particles &p, double length, const FofRun &run, int64_t min_members, bool velocities = true)
{
  ASSERT_EQ(run.status, PHEW_OK) << run.context.message;
  const Reference ref = reference_fof(p, length, min_members);
  ASSERT_EQ(run.result.n_groups, (int64_t)ref.members.size());
  for (size_t i = 0; i < p.n(); ++i)
    ASSERT_EQ(run.group[i], ref.group[i]) << "particle " << i;
  for (size_t k = 0; k < ref.members.size(); ++k) {
    const phew_group &g = run.result.groups[k];
    const std::vector<size_t> &m = ref.members[k];
    EXPECT_EQ(g.id, (int64_t)k);
    EXPECT_EQ(g.n_particles, (int64_t)m.size());
    int64_t smallest = INT64_MAX;
    size_t first = m[0];
    for (size_t i : m)
      if (id_of(p, i) < smallest) {
        smallest = id_of(p, i);
        first = i;
      }
    EXPECT_EQ(g.min_particle_id, smallest);
    long double mass = 0, moment[3] = {0, 0, 0}, momentum[3] = {0, 0, 0};
    for (size_t i : m) {
      mass += p.mass[i];
      for (int d = 0; d < 3; ++d) {
        double dx = p.pos[3 * i + d] - p.pos[3 * first + d];
        if (p.periodic)
          dx -= p.box * std::round(dx / p.box);
        moment[d] += (long double)p.mass[i] * dx;
        momentum[d] += (long double)p.mass[i] * p.vel[3 * i + d];
      }
    }
    EXPECT_NEAR(g.mass, (double)mass, 1e-13 * (double)mass);
    double com[3], mean_v[3];
    for (int d = 0; d < 3; ++d) {
      com[d] = p.pos[3 * first + d] + (double)(moment[d] / mass);
      if (p.periodic)
        com[d] -= std::floor(com[d] / p.box) * p.box;
      EXPECT_NEAR(g.center_of_mass[d], com[d], 1e-12) << "group " << k;
      mean_v[d] = (double)(momentum[d] / mass);
    }
    long double radius2 = 0, dispersion = 0;
    for (size_t i : m) {
      long double r2 = 0, v2 = 0;
      for (int d = 0; d < 3; ++d) {
        const double dx = axis_gap(p.pos[3 * i + d], com[d], p.box, p.periodic);
        r2 += (long double)dx * dx;
        const double dv = p.vel[3 * i + d] - mean_v[d];
        v2 += (long double)dv * dv;
      }
      radius2 = std::max(radius2, r2);
      dispersion += p.mass[i] * v2;
    }
    EXPECT_NEAR(g.radius, std::sqrt((double)radius2), 1e-12) << "group " << k;
    if (velocities) {
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(g.mean_velocity[d], mean_v[d], 1e-10 * (1 + std::fabs(mean_v[d])));
      EXPECT_NEAR(g.velocity_dispersion, std::sqrt((double)(dispersion / mass)), 1e-10);
    } else {
      EXPECT_TRUE(std::isnan(g.mean_velocity[0]) && std::isnan(g.velocity_dispersion));
    }
    EXPECT_EQ(g.peak_id, -1);
    EXPECT_TRUE(std::isnan(g.peak_density));
  }
}

TEST(FriendsOfFriends, BlobsPeriodicAgainstReference)
{
  const Particles p = blobs(11, true, 800);
  phew_fof_params f;
  phew_fof_params_init(&f); // b = 0.2 of the mean spacing, 20 members
  FofRun run;
  run_fof(p, f, run);
  const double length = 0.2 * std::cbrt(1.0 / (double)p.n());
  expect_reference(p, length, run, 20);
  EXPECT_GE(run.result.n_groups, 4); // the blobs, the one across the corner included
  EXPECT_EQ(run.result.columns & PHEW_COLUMNS_VELOCITY, PHEW_COLUMNS_VELOCITY);
}

TEST(FriendsOfFriends, BlobsOpenAgainstReferenceWithSingletons)
{
  const Particles p = blobs(12, false, 600);
  FofRun run;
  run_fof(p, absolute(0.012, 1), run, 1, false);
  expect_reference(p, 0.012, run, 1, false);
  int64_t labelled = 0;
  for (int64_t g : run.group)
    labelled += g >= 0;
  EXPECT_EQ(labelled, (int64_t)p.n()); // min_members 1: every particle is in a group
}

// A lattice of spacing 1/16 with holes (one site in five, well below the percolation threshold of 0.31,
// so the groups are finite): neighbours along an axis are at exactly the linking length
// (exact in binary), diagonal ones beyond it. Every such pair must link.
TEST(FriendsOfFriends, PairsAtExactlyTheLinkingLength)
{
  for (bool periodic : {true, false}) {
    Particles p;
    p.periodic = periodic;
    Random r(5);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j)
        for (int k = 0; k < 16; ++k)
          if (r.uniform() < 0.2) {
            p.pos.insert(p.pos.end(), {i / 16.0, j / 16.0, k / 16.0});
            p.vel.insert(p.vel.end(), {1.0, 2.0, 3.0});
            p.mass.push_back(1.0);
          }
    FofRun run;
    run_fof(p, absolute(0.0625, 2), run);
    expect_reference(p, 0.0625, run, 2);
    EXPECT_GT(run.result.n_groups, 50);
    // a hair shorter: no pair links
    FofRun shorter;
    run_fof(p, absolute(std::nextafter(0.0625, 0.0), 1), shorter);
    ASSERT_EQ(shorter.status, PHEW_OK);
    EXPECT_EQ(shorter.result.n_groups, (int64_t)p.n());
  }
}

// Grids whose cells cannot all be whole: a slab a little thicker than a cell (so that a cell
// of the grid along z would need friends four cells away), and a linking length so short that
// the unit box would need more than 2^20 cells per axis (pairs placed at and just beyond it).
TEST(FriendsOfFriends, GridsWithoutWholeCells)
{
  Particles slab;
  slab.periodic = false;
  Random r(31);
  for (int k = 0; k < 600; ++k) { // cells 0.0115 wide; the slab, 0.0125 thick, gets two of 0.00625
    slab.pos.insert(slab.pos.end(), {r.uniform(), r.uniform(), 0.0125 * r.uniform()});
    slab.vel.insert(slab.vel.end(), {r.normal(), r.normal(), r.normal()});
    slab.mass.push_back(1.0);
  }
  FofRun thick;
  run_fof(slab, absolute(0.02, 2), thick);
  expect_reference(slab, 0.02, thick, 2);
  EXPECT_GT(thick.result.n_groups, 10);

  Particles fine;
  fine.periodic = true;
  const double length = 1e-7;
  for (int k = 0; k < 400; ++k) {
    const double x = r.uniform() * 0.999, y = r.uniform() * 0.999, z = r.uniform() * 0.999;
    fine.pos.insert(fine.pos.end(), {x, y, z});
    // a partner at exactly the length along x (when exact), and one a hair beyond along y
    fine.pos.insert(fine.pos.end(), {x + length, y, z});
    fine.pos.insert(fine.pos.end(), {x, y + 1.5 * length, z});
    for (int j = 0; j < 3; ++j) {
      fine.vel.insert(fine.vel.end(), {0.0, 0.0, 0.0});
      fine.mass.push_back(1.0);
    }
  }
  FofRun tiny;
  run_fof(fine, absolute(length, 1), tiny);
  expect_reference(fine, length, tiny, 1);
}

// Whole cells, but fewer than three blocks of 4^3 cells across the periodic box (lengths of a
// quarter box and more): the cells are joined column by column, not by blocks, across every
// face; lengths of a tenth (three blocks exactly) and a twentieth, by blocks; and 2e-6, whose
// cell keys (about 2^18 blocks per axis) leave no room for the particle index in one 64-bit
// word (the sort then carries the index beside the key), in tight clumps across the corner.
TEST(FriendsOfFriends, WholeCellsWithAndWithoutBlocks)
{
  for (double length : {0.3, 0.25, 0.1, 0.05, 2e-6}) {
    Particles p = blobs(47, true, 300);
    if (length < 1e-5) {
      Particles clumps;
      Random r(59);
      const double centre[4][3] = {{0.3, 0.6, 0.2}, {0.7, 0.1, 0.9}, {1e-7, 1e-7, 1e-7}, {0.5, 0.5, 0.5}};
      for (int k = 0; k < 800; ++k)
        for (int d = 0; d < 3; ++d) {
          double x = centre[k % 4][d] + 1.5 * length * r.normal();
          x = x < 0.0 ? x + 1.0 : (x >= 1.0 ? x - 1.0 : x);
          clumps.pos.push_back(x);
          clumps.vel.push_back(r.normal());
          if (d == 0)
            clumps.mass.push_back(1.0);
        }
      p = clumps;
    }
    if (length > 0.2) { // a few particles, so that the long lengths leave several groups
      Particles sparse;
      Random r(53);
      for (int k = 0; k < 12; ++k) {
        sparse.pos.insert(sparse.pos.end(), {r.uniform(), r.uniform(), r.uniform()});
        sparse.vel.insert(sparse.vel.end(), {r.normal(), r.normal(), r.normal()});
        sparse.mass.push_back(1.0);
      }
      p = sparse;
    }
    FofRun run;
    run_fof(p, absolute(length, 1), run);
    expect_reference(p, length, run, 1);
    EXPECT_GT(run.result.n_groups, 1) << "length " << length;
  }
}

TEST(FriendsOfFriends, ThreadsAndStorageOrderChangeNothing)
{
  Particles p = blobs(13, true, 1500);
  // ids in shuffled order: the smallest id of a group is not its first particle
  p.id.resize(p.n());
  std::iota(p.id.begin(), p.id.end(), 1000);
  Random r(3);
  for (size_t i = p.n() - 1; i > 0; --i)
    std::swap(p.id[i], p.id[r.next() % (i + 1)]);
  phew_fof_params f;
  phew_fof_params_init(&f);
  FofRun one;
  run_fof(p, f, one, 1);
  expect_reference(p, 0.2 * std::cbrt(1.0 / (double)p.n()), one, 20);
  for (int threads : {2, 4}) {
    FofRun t;
    run_fof(p, f, t, threads);
    ASSERT_EQ(t.status, PHEW_OK);
    EXPECT_EQ(t.group, one.group);
    ASSERT_EQ(t.result.n_groups, one.result.n_groups);
    EXPECT_EQ(0, std::memcmp(t.result.groups, one.result.groups, sizeof(phew_group) * (size_t)one.result.n_groups));
  }
  // the particles in reverse order, with their ids: the same groups, the same catalogue bits
  Particles q = p;
  const size_t n = p.n();
  for (size_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      q.pos[3 * i + d] = p.pos[3 * (n - 1 - i) + d];
      q.vel[3 * i + d] = p.vel[3 * (n - 1 - i) + d];
    }
    q.mass[i] = p.mass[n - 1 - i];
    q.id[i] = p.id[n - 1 - i];
  }
  FofRun reversed;
  run_fof(q, f, reversed, 2);
  ASSERT_EQ(reversed.status, PHEW_OK);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(reversed.group[i], one.group[n - 1 - i]);
  ASSERT_EQ(reversed.result.n_groups, one.result.n_groups);
  EXPECT_EQ(0,
            std::memcmp(reversed.result.groups, one.result.groups, sizeof(phew_group) * (size_t)one.result.n_groups));
}

// The mean spacing of a relative linking length is the correctly rounded cube root of box
// volume / N: on an n^3 lattice whose spacing L / n is a double, b = 1 is exactly that spacing
// and every particle links its axis neighbours (periodic or not): one group of all. libm's
// cbrt(2^-9) is 0.12499999999999999: 8^3 particles in a unit box gave 512 single particles.
TEST(FriendsOfFriends, RelativeLengthOnExactLatticesLinksNeighbours)
{
  const struct {
    int side;
    double box;
  } cases[] = {{8, 1.0}, {16, 1.0}, {4, 2.0}, {16, 2.0}, {4, 3.0}, {8, 3.0}, {16, 3.0}};
  for (const auto &c : cases)
    for (bool periodic : {true, false}) {
      Particles p;
      p.box = c.box;
      p.periodic = periodic;
      const double spacing = c.box / c.side; // exact: the box is 1, 2 or 3, the side a power of 2
      for (int i = 0; i < c.side; ++i)
        for (int j = 0; j < c.side; ++j)
          for (int k = 0; k < c.side; ++k) {
            p.pos.insert(p.pos.end(), {i * spacing, j * spacing, k * spacing});
            p.vel.insert(p.vel.end(), {0.0, 0.0, 0.0});
            p.mass.push_back(1.0);
          }
      phew_fof_params f;
      phew_fof_params_init(&f);
      f.linking_length = 1.0;
      f.min_members = 1;
      FofRun run;
      run_fof(p, f, run);
      SCOPED_TRACE(std::to_string(c.side) + "^3 in a box of " + std::to_string((int)c.box) +
                   (periodic ? ", periodic" : ", open"));
      ASSERT_EQ(run.status, PHEW_OK) << run.context.message;
      EXPECT_EQ(run.result.linking_length_used, spacing);
      ASSERT_EQ(run.result.n_groups, 1);
      EXPECT_EQ(run.result.groups[0].n_particles, (int64_t)p.n());
      // a relative length a little below 1 links no pair
      f.linking_length = 0.999;
      FofRun shorter;
      run_fof(p, f, shorter);
      ASSERT_EQ(shorter.status, PHEW_OK) << shorter.context.message;
      EXPECT_EQ(shorter.result.n_groups, (int64_t)p.n());
    }
}

// The linking length used, as the result reports it: an absolute one as given, a relative one
// times the mean spacing (here (1 / 1000)^(1/3) of a unit box, rounded correctly), and NaN for
// HOP, which has none.
TEST(FriendsOfFriends, ResultReportsTheLinkingLengthUsed)
{
  const Particles p = blobs(15, true, 600);
  FofRun given;
  run_fof(p, absolute(0.0123, 5), given);
  ASSERT_EQ(given.status, PHEW_OK) << given.context.message;
  EXPECT_EQ(given.result.linking_length_used, 0.0123);
  phew_fof_params f;
  phew_fof_params_init(&f);
  FofRun relative;
  run_fof(p, f, relative);
  ASSERT_EQ(relative.status, PHEW_OK) << relative.context.message;
  EXPECT_EQ(relative.result.linking_length_used, 0.2 * cube_root(1.0 / (double)p.n()));
  EXPECT_NEAR(relative.result.linking_length_used, 0.2 * std::cbrt(1.0 / (double)p.n()), 1e-16);

  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)p.n();
  in.points.position = p.pos.data();
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d)
    in.points.box_size[d] = 1.0;
  phew_hop_params h;
  phew_hop_params_init(&h);
  std::vector<int64_t> group(p.n());
  phew_context context;
  phew_context_init(&context);
  phew_group_result hop;
  ASSERT_EQ(phew_find_hop_groups(&context, &in, &h, group.data(), nullptr, &hop), PHEW_OK) << context.message;
  EXPECT_TRUE(std::isnan(hop.linking_length_used));
  phew_group_result_free(&hop);
}

// The cube root itself: exact cubes of doubles (k 2^j with k below 2^17, so that the cube is
// exact too) give that double back, over the whole range, where glibc's cbrt misses some; other
// arguments give the double nearest the root, as long double's cbrtl says (64 bits) wherever the
// root is not too close to a midpoint between doubles for it to decide.
TEST(FriendsOfFriends, CubeRootIsRoundedCorrectly)
{
  Random r(21);
  int libm_misses = 0;
  for (int t = 0; t < 20000; ++t) {
    const double k = (double)(1 + r.next() % (1u << 17));
    const int j = (int)(r.next() % 630) - 330;
    const double y = std::ldexp(k, j), x = y * y * y;
    ASSERT_EQ(x / y / y, y); // the cube is exact
    ASSERT_EQ(cube_root(x), y) << std::hexfloat << x;
    ASSERT_EQ(cube_root(-x), -y);
    libm_misses += std::cbrt(x) != y;
  }
  EXPECT_GT(libm_misses, 0); // what the test is about
  int decided = 0;
  for (int t = 0; t < 20000; ++t) {
    const double x = std::ldexp(0.5 + 0.5 * r.uniform(), (int)(r.next() % 2000) - 1000);
    const long double root = cbrtl((long double)x);
    const double nearest = (double)root;
    const long double half_ulp = 0.5L * (std::nextafter(nearest, INFINITY) - nearest);
    if (half_ulp - fabsl(root - (long double)nearest) < 0x1p-58L * root)
      continue; // too close to a midpoint for long double
    ++decided;
    ASSERT_EQ(cube_root(x), nearest) << std::hexfloat << x;
  }
  EXPECT_GT(decided, 19000);
  EXPECT_EQ(cube_root(0.0), 0.0);
  EXPECT_TRUE(std::isinf(cube_root(INFINITY)));
  EXPECT_TRUE(std::isnan(cube_root(NAN)));
  EXPECT_EQ(cube_root(0x1p-1074), (double)cbrtl(0x1p-1074L)); // the smallest subnormal
  EXPECT_EQ(cube_root(DBL_MAX), (double)cbrtl((long double)DBL_MAX));
}

TEST(FriendsOfFriends, BadInputIsRefused)
{
  Particles p = blobs(14, true, 100);
  FofRun run;
  run_fof(p, absolute(-1.0, 20), run);
  EXPECT_EQ(run.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(run.context.message).find("linking length"), std::string::npos) << run.context.message;
  for (int64_t g : run.group)
    ASSERT_EQ(g, -1);
  FofRun members;
  run_fof(p, absolute(0.01, 0), members);
  EXPECT_EQ(members.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(members.context.message).find("minimum number of members"), std::string::npos);
  p.pos[7] = NAN;
  FofRun bad;
  run_fof(p, absolute(0.01, 20), bad);
  EXPECT_EQ(bad.status, PHEW_ERROR_DATA);
  EXPECT_NE(std::string(bad.context.message).find("not finite"), std::string::npos) << bad.context.message;
  for (int64_t g : bad.group)
    ASSERT_EQ(g, -1);
}

} // namespace
