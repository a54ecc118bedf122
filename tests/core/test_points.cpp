// PHEW on particles (PHEW_MESH_POINTS) against an independent reference written here: brute
// force nearest neighbours (every pair, nearest image, ordered by squared distance then id),
// the SPH density of HOP summed in long double over every pair, the symmetrised graph of the
// 16 nearest other particles, and the plain serial PHEW of graph_reference.h on that graph.
// Also: the particle catalogue columns (masses, radius, velocities), invariance under the
// number of threads, the storage order and the position type, and bad input.
#include "graph_reference.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>

namespace {

// Deterministic normal deviates (Box-Muller on a 64-bit generator), the same on any platform.
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
  size_t n() const { return mass.size(); }
};

// Gaussian blobs of several sizes (one across the periodic corner), a bridge between two of
// them and a uniform background; velocities: a bulk flow per blob plus a dispersion.
Particles clustered(uint64_t seed, bool periodic, double box = 1.0)
{
  Particles p;
  p.box = box;
  p.periodic = periodic;
  Random r(seed);
  struct Blob {
    double c[3], sigma;
    int n;
  };
  const Blob blobs[] = {{{0.30, 0.30, 0.30}, 0.035, 420}, {{0.36, 0.33, 0.31}, 0.012, 160},
                        {{0.70, 0.62, 0.55}, 0.050, 520}, {{0.72, 0.30, 0.75}, 0.025, 300},
                        {{0.01, 0.99, 0.02}, 0.030, 380}, {{0.50, 0.80, 0.20}, 0.018, 200}};
  auto put = [&](double x, double y, double z, const double bulk[3], double sigma_v) {
    double c[3] = {x * box, y * box, z * box};
    for (double &v : c) {
      if (periodic) {
        v = std::fmod(v, box);
        if (v < 0)
          v += box;
        if (v >= box)
          v = 0.0;
      } else {
        v = std::fabs(v);
        if (v > box)
          v = 2 * box - v;
      }
      p.pos.push_back(v);
    }
    for (int d = 0; d < 3; ++d)
      p.vel.push_back(bulk[d] + sigma_v * r.normal());
    p.mass.push_back(0.5 + r.uniform());
  };
  for (const Blob &b : blobs) {
    const double bulk[3] = {100 * r.normal(), 100 * r.normal(), 100 * r.normal()};
    for (int k = 0; k < b.n; ++k)
      put(b.c[0] + b.sigma * r.normal(), b.c[1] + b.sigma * r.normal(), b.c[2] + b.sigma * r.normal(), bulk,
          30 * b.sigma / 0.03);
  }
  const double still[3] = {0, 0, 0};
  for (int k = 0; k < 900; ++k)
    put(r.uniform(), r.uniform(), r.uniform(), still, 10.0);
  return p;
}

double kernel(double r, double h) // M4, written out as in the issue
{
  const double q = r / h;
  const double norm = 1.0 / (M_PI * h * h * h);
  if (q < 1.0)
    return norm * (1.0 - 1.5 * q * q + 0.75 * q * q * q);
  if (q < 2.0)
    return norm * 0.25 * (2.0 - q) * (2.0 - q) * (2.0 - q);
  return 0.0;
}

struct Reference {
  std::vector<std::vector<int64_t>> nearest; // by (d2, id), itself excluded
  std::vector<double> h, rho;                // rho in units of the mean density
};

Reference reference(const Particles &p, int k_graph, int n_dens)
{
  const size_t n = p.n();
  Reference ref;
  ref.nearest.resize(n);
  ref.h.resize(n);
  ref.rho.resize(n);
  auto delta = [&](double a, double b) {
    double d = a - b;
    if (p.periodic) {
      if (2.0 * d > p.box)
        d -= p.box;
      else if (2.0 * d < -p.box)
        d += p.box;
    }
    return d;
  };
  std::vector<std::vector<double>> d2(n, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const double dx = delta(p.pos[3 * i], p.pos[3 * j]), dy = delta(p.pos[3 * i + 1], p.pos[3 * j + 1]),
                   dz = delta(p.pos[3 * i + 2], p.pos[3 * j + 2]);
      d2[i][j] = (dx * dx + dy * dy) + dz * dz;
    }
  std::vector<int64_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return d2[i][a] < d2[i][b] || (d2[i][a] == d2[i][b] && a < b); });
    ref.h[i] = 0.5 * std::sqrt(d2[i][order[n_dens]]); // the (n_dens + 1)-th, itself counted
    for (size_t k = 0; k < n && (int)ref.nearest[i].size() < k_graph; ++k)
      if (order[k] != (int64_t)i)
        ref.nearest[i].push_back(order[k]);
  }
  long double total = 0;
  for (double m : p.mass)
    total += m;
  const long double mean = total / ((long double)p.box * p.box * p.box);
  for (size_t i = 0; i < n; ++i) {
    long double s = 0;
    for (size_t j = 0; j < n; ++j) {
      const double r = std::sqrt(d2[i][j]);
      s += (long double)p.mass[j] * ((long double)kernel(r, ref.h[i]) + kernel(r, ref.h[j])) / 2;
    }
    ref.rho[i] = (double)(s / mean);
  }
  return ref;
}

// The reference's graph: the symmetrised nearest lists, with the given densities.
graphref::Graph reference_graph(const Particles &p, const Reference &ref, const std::vector<double> &rho)
{
  const size_t n = p.n();
  std::vector<std::vector<int64_t>> adj(n);
  for (size_t i = 0; i < n; ++i)
    for (int64_t j : ref.nearest[i]) {
      adj[i].push_back(j);
      adj[(size_t)j].push_back((int64_t)i);
    }
  graphref::Graph g;
  g.offsets.push_back(0);
  for (size_t i = 0; i < n; ++i) {
    std::sort(adj[i].begin(), adj[i].end());
    adj[i].erase(std::unique(adj[i].begin(), adj[i].end()), adj[i].end());
    g.neighbours.insert(g.neighbours.end(), adj[i].begin(), adj[i].end());
    g.offsets.push_back((int64_t)g.neighbours.size());
    g.rho.push_back(rho[i]);
    g.gid.push_back((int64_t)i);
    g.volume.push_back(p.mass[i] / rho[i]); // the mean density is 1 in these tests' units... see below
  }
  g.position = p.pos;
  for (int d = 0; d < 3; ++d) {
    g.box_origin[d] = 0.0;
    g.box_size[d] = p.box;
    g.periodic[d] = p.periodic;
  }
  return g;
}

struct PointsRun {
  std::vector<int64_t> patch, clump, halo;
  std::vector<double> rho;
  phew_context context;
  phew_clump_result result;
  phew_status status;
  PointsRun()
  {
    phew_context_init(&context);
    std::memset(&result, 0, sizeof result);
  }
  ~PointsRun() { phew_clump_result_free(&result); }
};

struct Options {
  bool masses = true, velocities = true, float32 = false;
  int threads = 1;
  const std::vector<int64_t> *ids = nullptr;
};

void run_points(const Particles &p, const phew_params &params, const Options &o, PointsRun &r)
{
  const size_t n = p.n();
  std::vector<float> pos32(p.pos.begin(), p.pos.end()), vel32(p.vel.begin(), p.vel.end()),
      mass32(p.mass.begin(), p.mass.end());
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)n;
  in.points.type = o.float32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  in.points.position = o.float32 ? (const void *)pos32.data() : (const void *)p.pos.data();
  in.points.mass = !o.masses ? nullptr : o.float32 ? (const void *)mass32.data() : (const void *)p.mass.data();
  in.points.velocity = !o.velocities ? nullptr : o.float32 ? (const void *)vel32.data() : (const void *)p.vel.data();
  in.points.id = o.ids ? o.ids->data() : nullptr;
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = p.box;
    in.points.periodic[d] = p.periodic;
  }
  r.context.n_threads = o.threads;
  r.patch.assign(n, -7);
  r.clump.assign(n, -7);
  r.halo.assign(n, -7);
  r.rho.assign(n, -7.0);
  phew_labels labels = {r.patch.data(), r.clump.data(), r.halo.data(), r.rho.data()};
  r.status = phew_find_clumps(&r.context, &in, &params, &labels, &r.result);
}

phew_params test_params()
{
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 4.0;
  p.relevance_threshold = 2.0;
  p.saddle_merging = 1;
  p.saddle_threshold = 30.0;
  return p;
}

class PointsMatchReference : public ::testing::TestWithParam<bool> {};

TEST_P(PointsMatchReference, DensityGraphLabelsAndCatalogue)
{
  // masses scaled so that the mean density is 1: the reference's volumes m / rho are then the
  // core's (which are physical: m / (rho * mean))
  Particles p = clustered(12345, GetParam());
  const double volume = p.box * p.box * p.box;
  long double total = 0;
  for (double m : p.mass)
    total += m;
  for (double &m : p.mass)
    m = (double)(m * (long double)volume / total);
  const phew_params params = test_params();
  PointsRun core;
  run_points(p, params, Options(), core);
  ASSERT_EQ(core.status, PHEW_OK) << core.context.message;

  const Reference ref = reference(p, 16, 64);
  int64_t worst = 0;
  double worst_error = 0;
  for (size_t i = 0; i < p.n(); ++i) {
    const double e = std::fabs(core.rho[i] - ref.rho[i]) / ref.rho[i];
    if (e > worst_error) {
      worst_error = e;
      worst = (int64_t)i;
    }
  }
  EXPECT_LT(worst_error, 1e-13) << "particle " << worst << ": " << core.rho[worst] << " vs " << ref.rho[worst];

  // the partition: the reference PHEW on the reference graph, with the core's densities (the
  // densities agree to rounding; equal inputs make the comparison exact)
  const graphref::Graph g = reference_graph(p, ref, core.rho);
  const graphref::Result expected = graphref::find_clumps(g, params);
  graphref::expect_matches(g, core.result, core.patch, core.clump, core.halo, expected, 1e-12);
  EXPECT_GT(core.result.n_clumps, 4);
  EXPECT_GT(core.result.n_haloes, 2);
  EXPECT_EQ(core.result.columns, PHEW_COLUMNS_PARTICLES | PHEW_COLUMNS_VELOCITY);
  EXPECT_EQ(core.result.stats.n_cells, (int64_t)p.n());
}

// Radius, mean velocity and dispersion of every clump and halo from the labels, in long double.
TEST_P(PointsMatchReference, ParticleColumns)
{
  const Particles p = clustered(777, GetParam());
  PointsRun core;
  run_points(p, test_params(), Options(), core);
  ASSERT_EQ(core.status, PHEW_OK) << core.context.message;
  auto check = [&](const std::vector<int64_t> &label, const phew_object *objects, int64_t n_objects, const char *what) {
    for (int64_t k = 0; k < n_objects; ++k) {
      const phew_object &o = objects[k];
      long double m = 0, mv[3] = {0, 0, 0};
      int64_t count = 0;
      for (size_t i = 0; i < p.n(); ++i)
        if (label[i] == k) {
          ++count;
          m += p.mass[i];
          for (int d = 0; d < 3; ++d)
            mv[d] += (long double)p.mass[i] * p.vel[3 * i + d];
        }
      ASSERT_EQ(count, o.n_cells) << what << " " << k;
      EXPECT_NEAR(o.mass, (double)m, 1e-13 * (double)m) << what << " " << k;
      long double disp = 0, r_max = 0;
      for (size_t i = 0; i < p.n(); ++i)
        if (label[i] == k) {
          long double v2 = 0, r2 = 0;
          for (int d = 0; d < 3; ++d) {
            const long double dv = p.vel[3 * i + d] - mv[d] / m;
            v2 += dv * dv;
            double dx = p.pos[3 * i + d] - o.center_of_mass[d];
            if (p.periodic)
              dx -= p.box * std::round(dx / p.box);
            r2 += (long double)dx * dx;
          }
          disp += p.mass[i] * v2;
          r_max = std::max(r_max, r2);
        }
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(o.mean_velocity[d], (double)(mv[d] / m), 1e-11 * (1 + std::fabs((double)(mv[d] / m))))
            << what << " " << k;
      EXPECT_NEAR(o.velocity_dispersion, (double)std::sqrt(disp / m), 1e-10 * (double)std::sqrt(disp / m))
          << what << " " << k;
      EXPECT_NEAR(o.radius, (double)std::sqrt(r_max), 1e-9 * p.box) << what << " " << k;
      EXPECT_GT(o.radius, 0.0);
    }
  };
  check(core.clump, core.result.clumps, core.result.n_clumps, "clump");
  check(core.halo, core.result.haloes, core.result.n_haloes, "halo");
}

// The same labels, densities and catalogue bits for any thread count, storage order and
// position type holding the same values.
TEST_P(PointsMatchReference, IndependentOfThreadsOrderAndType)
{
  const Particles p = clustered(4242, GetParam());
  const phew_params params = test_params();
  PointsRun base;
  run_points(p, params, Options(), base);
  ASSERT_EQ(base.status, PHEW_OK) << base.context.message;
  auto same_catalogue = [](const phew_clump_result &a, const phew_clump_result &b) {
    ASSERT_EQ(a.n_clumps, b.n_clumps);
    ASSERT_EQ(a.n_haloes, b.n_haloes);
    ASSERT_EQ(a.n_nodes, b.n_nodes);
    EXPECT_EQ(0, std::memcmp(a.clumps, b.clumps, (size_t)a.n_clumps * sizeof *a.clumps));
    EXPECT_EQ(0, std::memcmp(a.haloes, b.haloes, (size_t)a.n_haloes * sizeof *a.haloes));
    EXPECT_EQ(0, std::memcmp(a.nodes, b.nodes, (size_t)a.n_nodes * sizeof *a.nodes));
  };
  for (int threads : {2, 4}) {
    Options o;
    o.threads = threads;
    PointsRun r;
    run_points(p, params, o, r);
    ASSERT_EQ(r.status, PHEW_OK);
    EXPECT_EQ(r.patch, base.patch) << threads << " threads";
    EXPECT_EQ(r.clump, base.clump) << threads << " threads";
    EXPECT_EQ(0, std::memcmp(r.rho.data(), base.rho.data(), r.rho.size() * sizeof(double))) << threads;
    same_catalogue(r.result, base.result);
  }
  { // shuffled storage, ids carrying the original order
    std::vector<int64_t> perm(p.n());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(99));
    Particles q = p;
    std::vector<int64_t> ids(p.n());
    for (size_t k = 0; k < p.n(); ++k) {
      const size_t i = (size_t)perm[k];
      ids[k] = (int64_t)i;
      q.mass[k] = p.mass[i];
      for (int d = 0; d < 3; ++d) {
        q.pos[3 * k + d] = p.pos[3 * i + d];
        q.vel[3 * k + d] = p.vel[3 * i + d];
      }
    }
    Options o;
    o.ids = &ids;
    o.threads = 2;
    PointsRun r;
    run_points(q, params, o, r);
    ASSERT_EQ(r.status, PHEW_OK);
    for (size_t k = 0; k < p.n(); ++k) {
      const size_t i = (size_t)perm[k];
      ASSERT_EQ(r.patch[k], base.patch[i]) << "particle " << i;
      ASSERT_EQ(r.clump[k], base.clump[i]) << "particle " << i;
      ASSERT_EQ(r.halo[k], base.halo[i]) << "particle " << i;
      ASSERT_EQ(r.rho[k], base.rho[i]) << "particle " << i;
    }
    same_catalogue(r.result, base.result);
  }
  { // float32 input holding the same values (round them first)
    Particles q = p;
    for (double &v : q.pos)
      v = (double)(float)v;
    for (double &v : q.vel)
      v = (double)(float)v;
    for (double &v : q.mass)
      v = (double)(float)v;
    PointsRun a, b;
    Options o32;
    o32.float32 = true;
    run_points(q, params, Options(), a);
    run_points(q, params, o32, b);
    ASSERT_EQ(a.status, PHEW_OK);
    ASSERT_EQ(b.status, PHEW_OK);
    EXPECT_EQ(a.clump, b.clump);
    EXPECT_EQ(0, std::memcmp(a.rho.data(), b.rho.data(), a.rho.size() * sizeof(double)));
    same_catalogue(a.result, b.result);
  }
}

INSTANTIATE_TEST_SUITE_P(PeriodicAndNot, PointsMatchReference, ::testing::Values(true, false));

TEST(Points, WithoutMassesOrVelocities)
{
  Particles p = clustered(31, true);
  Options o;
  o.masses = false;
  o.velocities = false;
  PointsRun r;
  run_points(p, test_params(), o, r);
  ASSERT_EQ(r.status, PHEW_OK) << r.context.message;
  EXPECT_EQ(r.result.columns, PHEW_COLUMNS_PARTICLES);
  ASSERT_GT(r.result.n_clumps, 0);
  for (int64_t k = 0; k < r.result.n_clumps; ++k) {
    EXPECT_EQ(r.result.clumps[k].mass, (double)r.result.clumps[k].n_cells); // mass 1 each
    EXPECT_TRUE(std::isnan(r.result.clumps[k].velocity_dispersion));
  }
  int n = 0;
  const phew_column *c = phew_clump_columns(r.result.columns, &n);
  bool count = false, radius = false, velocity = false;
  for (int k = 0; k < n; ++k) {
    count = count || !std::strcmp(c[k].name, "NumberOfParticles");
    radius = radius || !std::strcmp(c[k].name, "Radius");
    velocity = velocity || !std::strcmp(c[k].name, "VelocityDispersion");
  }
  EXPECT_TRUE(count);
  EXPECT_TRUE(radius);
  EXPECT_FALSE(velocity);
}

// A thread count far beyond the cores (the CLI's --threads is any int): the core runs on the
// cores available, with the answer of one thread. Every thread it runs gets scratch space of
// its own (about 25 KB in the density, the neighbour search and HOP), so the count it reports
// having run (stats.n_threads) is what bounds that memory: at most the machine's processors.
// Taken as asked, INT_MAX threads would need terabytes (and failed with "out of memory").
TEST(Points, ThreadsBeyondTheCoresAreCapped)
{
  const Particles p = clustered(2718, true);
  const int cores = (int)std::max(1u, std::thread::hardware_concurrency());
  const phew_params params = test_params();
  PointsRun one, many;
  Options o;
  run_points(p, params, o, one);
  o.threads = INT_MAX;
  run_points(p, params, o, many);
  ASSERT_EQ(one.status, PHEW_OK) << one.context.message;
  ASSERT_EQ(many.status, PHEW_OK) << many.context.message;
  EXPECT_GE(many.result.stats.n_threads, 1);
  EXPECT_LE(many.result.stats.n_threads, cores);
  EXPECT_EQ(many.clump, one.clump);
  EXPECT_EQ(many.halo, one.halo);
  EXPECT_EQ(0, std::memcmp(many.rho.data(), one.rho.data(), one.rho.size() * sizeof(double)));
  ASSERT_EQ(many.result.n_clumps, one.result.n_clumps);
  EXPECT_EQ(0, std::memcmp(many.result.clumps, one.result.clumps, (size_t)one.result.n_clumps * sizeof(phew_object)));

  // the halo finders, which share the particle path and have scratch space per thread too
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = (int64_t)p.n();
  in.points.position = p.pos.data();
  in.points.mass = p.mass.data();
  in.points.velocity = p.vel.data();
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = p.box;
    in.points.periodic[d] = 1;
  }
  phew_hop_params hop;
  phew_hop_params_init(&hop);
  hop.outer = 10.0;
  phew_fof_params fof;
  phew_fof_params_init(&fof);
  std::vector<int64_t> group[2][2];
  phew_group_result result[2][2];
  for (int k = 0; k < 2; ++k) {
    phew_context c;
    phew_context_init(&c);
    c.n_threads = k == 0 ? 1 : INT_MAX;
    for (int finder = 0; finder < 2; ++finder) {
      group[finder][k].assign(p.n(), -7);
      const phew_status s = finder == 0
                                ? phew_find_hop_groups(&c, &in, &hop, group[0][k].data(), nullptr, &result[0][k])
                                : phew_find_fof_groups(&c, &in, &fof, group[1][k].data(), &result[1][k]);
      EXPECT_EQ(s, PHEW_OK) << c.message;
      EXPECT_GE(result[finder][k].stats.n_threads, 1);
      EXPECT_LE(result[finder][k].stats.n_threads, cores);
    }
  }
  for (int finder = 0; finder < 2; ++finder) {
    const char *name = finder == 0 ? "HOP" : "FoF";
    EXPECT_EQ(group[finder][1], group[finder][0]) << name;
    EXPECT_GT(result[finder][0].n_groups, 1) << name;
    ASSERT_EQ(result[finder][1].n_groups, result[finder][0].n_groups) << name;
    EXPECT_EQ(0, std::memcmp(result[finder][1].groups, result[finder][0].groups,
                             (size_t)result[finder][0].n_groups * sizeof(phew_group)))
        << name;
    phew_group_result_free(&result[finder][0]);
    phew_group_result_free(&result[finder][1]);
  }
}

// No particles at all: every finder says so, in the same words, whether the set has a box or
// not (before: "the mean density (total mass 0 over box volume 1) is out of range" from FoF,
// "0 particles are fewer than the 65 neighbours each needs ..." from PHEW and HOP).
TEST(Points, EmptySetSaysNoParticles)
{
  for (int has_box : {1, 0}) {
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_POINTS;
    phew_points_init(&in.points);
    in.points.has_box = has_box;
    for (int d = 0; d < 3; ++d)
      in.points.box_size[d] = 1.0;
    const std::string no_particles = "no particles: the particle set is empty";
    auto expect_no_particles = [&](const char *finder, phew_status status, const phew_context &c) {
      EXPECT_EQ(status, PHEW_ERROR_ARGUMENT) << finder << (has_box ? " with a box" : " without a box");
      EXPECT_EQ(std::string(c.message).substr(0, no_particles.size()), no_particles) << finder;
    };
    phew_context c;
    phew_context_init(&c);
    phew_params params = test_params();
    phew_labels labels = {nullptr, nullptr, nullptr, nullptr};
    phew_clump_result clumps;
    expect_no_particles("PHEW", phew_find_clumps(&c, &in, &params, &labels, &clumps), c);
    phew_clump_result_free(&clumps);
    expect_no_particles("the density", phew_estimate_density(&c, &in, nullptr, nullptr), c);
    phew_group_result groups;
    phew_hop_params hop;
    phew_hop_params_init(&hop);
    expect_no_particles("HOP", phew_find_hop_groups(&c, &in, &hop, nullptr, nullptr, &groups), c);
    phew_group_result_free(&groups);
    phew_fof_params fof;
    phew_fof_params_init(&fof);
    expect_no_particles("FoF", phew_find_fof_groups(&c, &in, &fof, nullptr, &groups), c);
    phew_group_result_free(&groups);
    fof.absolute = 1; // needs neither a box nor a mean spacing
    expect_no_particles("FoF (absolute)", phew_find_fof_groups(&c, &in, &fof, nullptr, &groups), c);
    phew_group_result_free(&groups);
  }
}

// Masses so small that sums of them leave the double range underneath (subnormal): every
// particle path says which number fell out of range, by how much and what to rescale, as the
// grid path does ("... below the range of double precision (2.22507e-308 to 1.79769e+308):
// rescale ..."), where the halo finders said "the mass of group 1 is beyond the range of double
// precision", and a box's mean density "(total mass nan over box volume 1) is out of range".
TEST(Points, SubnormalMassesSayWhatToRescale)
{
  const Particles base = clustered(1618, true);
  auto run = [&](const char *finder, double scale, bool box, std::string &message) {
    Particles p = base;
    for (double &m : p.mass)
      m *= scale;
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_POINTS;
    phew_points_init(&in.points);
    in.points.n = (int64_t)p.n();
    in.points.position = p.pos.data();
    in.points.mass = p.mass.data();
    in.points.has_box = box;
    for (int d = 0; d < 3; ++d) {
      in.points.box_size[d] = p.box;
      in.points.periodic[d] = box;
    }
    phew_context c;
    phew_context_init(&c);
    std::vector<int64_t> a(p.n()), b(p.n()), h(p.n());
    std::vector<double> rho(p.n());
    phew_status status;
    if (!std::strcmp(finder, "PHEW")) {
      const phew_params params = test_params();
      phew_labels labels = {a.data(), b.data(), h.data(), rho.data()};
      phew_clump_result r;
      status = phew_find_clumps(&c, &in, &params, &labels, &r);
      phew_clump_result_free(&r);
    } else {
      phew_group_result r;
      if (!std::strcmp(finder, "HOP")) {
        phew_hop_params hop;
        phew_hop_params_init(&hop);
        hop.outer = 20.0;
        status = phew_find_hop_groups(&c, &in, &hop, a.data(), nullptr, &r);
      } else {
        phew_fof_params fof;
        phew_fof_params_init(&fof);
        fof.min_members = 1; // single particles are groups: their masses are subnormal
        status = phew_find_fof_groups(&c, &in, &fof, a.data(), &r);
      }
      phew_group_result_free(&r);
    }
    message = c.message;
    return status;
  };
  const std::string below = " below the range of double precision (2.22507e-308 to 1.79769e+308): ";
  struct Case {
    const char *finder;
    double scale;
    bool box;
    const char *subject, *hint;
  } cases[] = {
      // sums of a few masses of about 1e-310: the catalogue's masses
      {"FoF", 1e-310, true, "the mass of group ", "rescale the particle masses"},
      {"HOP", 1e-310, true, "the mass of group ", "rescale the particle masses"},
      // (PHEW: "the mass of the clump whose peak is particle N ...", or of a halo)
      {"PHEW", 1e-310, true, "the mass of the ", "rescale the particle masses"},
      // all of them, with a box: the mean density's total mass
      {"FoF", 1e-320, true, "the total mass of the particles is ", "rescale the particle masses"},
      {"HOP", 1e-320, true, "the total mass of the particles is ", "rescale the particle masses"},
      {"PHEW", 1e-320, true, "the total mass of the particles is ", "rescale the particle masses"},
      // without a box, the SPH density (mass per volume) of HOP and PHEW
      {"HOP", 1e-320, false, "SPH density: the density of the particle", "rescale the particle masses or positions"},
      {"PHEW", 1e-320, false, "SPH density: the density of the particle", "rescale the particle masses or positions"},
  };
  for (const Case &c : cases) {
    std::string m;
    EXPECT_EQ(run(c.finder, c.scale, c.box, m), PHEW_ERROR_DATA) << c.finder << " " << c.scale;
    EXPECT_EQ(m.substr(0, std::strlen(c.subject)), c.subject) << c.finder << " " << c.scale << ": " << m;
    if (std::string(c.subject).rfind("SPH", 0) != 0) {
      EXPECT_NE(m.find(below), std::string::npos) << c.finder << " " << c.scale << ": " << m;
    }
    if (!std::strcmp(c.finder, "PHEW") && c.scale > 1e-315) {
      EXPECT_NE(m.find(" whose peak is particle "), std::string::npos) << m;
    }
    const size_t n = std::strlen(c.hint);
    EXPECT_EQ(m.substr(m.size() > n ? m.size() - n : 0), c.hint) << c.finder << " " << c.scale << ": " << m;
  }
}

// Bad input: one clear message, labels -1, densities NaN, no crash.
TEST(Points, BadInput)
{
  const Particles good = clustered(5, true);
  auto expect_fails = [&](const Particles &p, const Options &o, phew_status status, const char *words,
                          void (*edit)(phew_input &) = nullptr) {
    std::vector<float> unused;
    (void)unused;
    phew_params params = test_params();
    PointsRun r;
    // run_points with an optional edit of the input
    const size_t n = p.n();
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_POINTS;
    phew_points_init(&in.points);
    in.points.n = (int64_t)n;
    in.points.position = p.pos.data();
    in.points.mass = o.masses ? p.mass.data() : nullptr;
    in.points.has_box = 1;
    for (int d = 0; d < 3; ++d) {
      in.points.box_size[d] = p.box;
      in.points.periodic[d] = p.periodic;
    }
    if (edit)
      edit(in);
    r.patch.assign(n, 5);
    r.clump.assign(n, 5);
    r.halo.assign(n, 5);
    r.rho.assign(n, 5.0);
    phew_labels labels = {r.patch.data(), r.clump.data(), r.halo.data(), r.rho.data()};
    r.status = phew_find_clumps(&r.context, &in, &params, &labels, &r.result);
    EXPECT_EQ(r.status, status) << words;
    EXPECT_NE(std::strstr(r.context.message, words), nullptr) << "message: " << r.context.message;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(r.clump[i], -1);
      ASSERT_TRUE(std::isnan(r.rho[i]));
    }
  };
  Particles nan_position = good;
  nan_position.pos[3 * 17 + 1] = NAN;
  expect_fails(nan_position, Options(), PHEW_ERROR_DATA, "particle 17 has a position that is not finite");
  Particles outside = good;
  outside.pos[3 * 5] = 1.0; // the upper face of a periodic box is outside
  expect_fails(outside, Options(), PHEW_ERROR_DATA, "particle 5 lies outside the box along x");
  Particles zero_mass = good;
  zero_mass.mass[9] = 0.0;
  expect_fails(zero_mass, Options(), PHEW_ERROR_DATA, "particle 9 has mass 0");
  Particles few = good;
  few.pos.resize(3 * 40);
  few.mass.resize(40);
  expect_fails(few, Options(), PHEW_ERROR_ARGUMENT, "40 particles are fewer than the 65 neighbours");
  expect_fails(good, Options(), PHEW_ERROR_ARGUMENT, "a periodic axis needs a box",
               [](phew_input &in) { in.points.has_box = 0; });
  expect_fails(good, Options(), PHEW_ERROR_ARGUMENT, "the number of neighbours must be at least 1",
               [](phew_input &in) { in.points.n_neighbours = 0; });
  { // ids must be unique
    std::vector<int64_t> ids(good.n());
    std::iota(ids.begin(), ids.end(), 100);
    ids[20] = ids[10];
    Options o;
    o.ids = &ids;
    PointsRun r;
    run_points(good, test_params(), o, r);
    EXPECT_EQ(r.status, PHEW_ERROR_ARGUMENT);
    EXPECT_NE(std::strstr(r.context.message, "particle id 110 is given to more than one particle"), nullptr)
        << r.context.message;
  }
  Particles piled = good; // 70 particles at one point: h = 0
  for (int k = 0; k < 70; ++k)
    for (int d = 0; d < 3; ++d)
      piled.pos[3 * (size_t)k + d] = 0.5;
  expect_fails(piled, Options(), PHEW_ERROR_DATA, "particle");
}

} // namespace
