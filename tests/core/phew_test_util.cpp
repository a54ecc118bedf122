#include "phew_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>

namespace phewtest {

Field::Field(int64_t nx, int64_t ny, int64_t nz, double fill)
{
  n[0] = nx;
  n[1] = ny;
  n[2] = nz;
  rho.assign((size_t)(nx * ny * nz), fill);
}

void Field::to_float32()
{
  rho32.resize(rho.size());
  for (size_t i = 0; i < rho.size(); ++i) {
    rho32[i] = (float)rho[i];
    rho[i] = (double)rho32[i];
  }
  f32 = true;
}

int64_t highest_neighbour(const Field &f, int64_t c)
{
  int64_t best = c;
  for_each_neighbour(f, c, [&](int64_t q) {
    if (higher(f, q, best))
      best = q;
  });
  return best;
}

std::unique_ptr<Run> run_input(const phew_input &input, const phew_params &p, size_t n, int64_t sentinel,
                               const Adjust &adjust)
{
  std::unique_ptr<Run> r(new Run);
  phew_input in = input;
  if (adjust)
    adjust(in, r->context);
  r->patch.assign(n ? n : 1, sentinel);
  r->clump.assign(n ? n : 1, sentinel);
  r->halo.assign(n ? n : 1, sentinel);
  phew_labels labels = {r->patch.data(), r->clump.data(), r->halo.data(), nullptr};
  r->status = phew_find_clumps(&r->context, &in, &p, &labels, &r->result);
  r->patch.resize(n);
  r->clump.resize(n);
  r->halo.resize(n);
  return r;
}

std::unique_ptr<Run> run(const Field &f, const phew_params &p, int64_t sentinel, const Adjust &adjust)
{
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, f.n[0], f.n[1], f.n[2]);
  for (int d = 0; d < 3; ++d) {
    in.grid.periodic[d] = f.periodic[d];
    in.grid.origin[d] = f.origin[d];
    in.grid.spacing[d] = f.spacing[d];
  }
  in.density = f.f32 ? (const void *)f.rho32.data() : (const void *)f.rho.data();
  in.density_type = f.f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  return run_input(in, p, (size_t)f.size(), sentinel, adjust);
}

std::unique_ptr<Run> run_graph(const Field &f, const phew_params &p, uint64_t shuffle_seed, int64_t sentinel,
                               const Adjust &adjust)
{
  const int64_t n = f.size();
  std::vector<int64_t> perm((size_t)n), inv((size_t)n); // local index -> grid cell, and back
  for (int64_t i = 0; i < n; ++i)
    perm[(size_t)i] = i;
  if (shuffle_seed) {
    SplitMix g(shuffle_seed);
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(perm[(size_t)i], perm[(size_t)(g.next() % (uint64_t)(i + 1))]);
  }
  for (int64_t i = 0; i < n; ++i)
    inv[(size_t)perm[(size_t)i]] = i;
  std::vector<int64_t> offsets(1, 0), neighbours;
  std::vector<double> volume((size_t)n, f.cell_volume()), position((size_t)(3 * n)), rho((size_t)n);
  std::vector<float> rho32(f.f32 ? (size_t)n : 0);
  std::vector<int64_t> list;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = perm[(size_t)i];
    list.clear();
    for_each_neighbour(f, c, [&](int64_t q) { list.push_back(inv[(size_t)q]); });
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    neighbours.insert(neighbours.end(), list.begin(), list.end());
    offsets.push_back((int64_t)neighbours.size());
    int64_t x[3];
    f.coords(c, x);
    for (int d = 0; d < 3; ++d)
      position[(size_t)(3 * i + d)] = f.origin[d] + ((double)x[d] + 0.5) * f.spacing[d];
    rho[(size_t)i] = f.rho[(size_t)c];
    if (f.f32)
      rho32[(size_t)i] = f.rho32[(size_t)c];
  }
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = n;
  in.graph.global_id = perm.data();
  in.graph.offsets = offsets.data();
  in.graph.neighbours = neighbours.data();
  in.graph.volume = volume.data();
  in.graph.position = position.data();
  for (int d = 0; d < 3; ++d) {
    in.graph.box_origin[d] = f.origin[d];
    in.graph.box_size[d] = (double)f.n[d] * f.spacing[d];
    in.graph.periodic[d] = f.periodic[d];
  }
  in.density = f.f32 ? (const void *)rho32.data() : (const void *)rho.data();
  in.density_type = f.f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  std::vector<int64_t> a((size_t)n, sentinel), b((size_t)n, sentinel), c((size_t)n, sentinel);
  phew_labels labels = {a.data(), b.data(), c.data(), nullptr};
  std::unique_ptr<Run> r(new Run);
  if (adjust)
    adjust(in, r->context);
  r->status = phew_find_clumps(&r->context, &in, &p, &labels, &r->result);
  r->patch.resize((size_t)n);
  r->clump.resize((size_t)n);
  r->halo.resize((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    r->patch[(size_t)perm[(size_t)i]] = a[(size_t)i];
    r->clump[(size_t)perm[(size_t)i]] = b[(size_t)i];
    r->halo[(size_t)perm[(size_t)i]] = c[(size_t)i];
  }
  return r;
}

phew_params make_params(double threshold, double relevance, int saddle_merging, double saddle_threshold,
                        double mass_threshold)
{
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = threshold;
  p.relevance_threshold = relevance;
  p.saddle_merging = saddle_merging;
  p.saddle_threshold = saddle_threshold;
  p.mass_threshold = mass_threshold;
  return p;
}

uint64_t SplitMix::next()
{
  uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double SplitMix::normal()
{
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Field white_noise(int64_t nx, int64_t ny, int64_t nz, uint64_t seed)
{
  Field f(nx, ny, nz);
  SplitMix g(seed);
  for (double &v : f.rho)
    v = g.uniform();
  return f;
}

Field smoothed_noise(int64_t nx, int64_t ny, int64_t nz, uint64_t seed, int passes)
{
  Field f = white_noise(nx, ny, nz, seed);
  std::vector<double> tmp(f.rho.size());
  for (int pass = 0; pass < passes; ++pass)
    for (int axis = 0; axis < 3; ++axis) {
      const int64_t len = f.n[axis];
      const int64_t stride = axis == 0 ? 1 : axis == 1 ? f.n[0] : f.n[0] * f.n[1];
      for (int64_t c = 0; c < f.size(); ++c) {
        int64_t x[3];
        f.coords(c, x);
        const int64_t lo = x[axis] == 0 ? c + (len - 1) * stride : c - stride;
        const int64_t hi = x[axis] == len - 1 ? c - (len - 1) * stride : c + stride;
        tmp[(size_t)c] = (f.rho[(size_t)lo] + 2.0 * f.rho[(size_t)c] + f.rho[(size_t)hi]) * 0.25;
      }
      f.rho.swap(tmp);
    }
  return f;
}

void quantize(Field &f, int levels)
{
  for (double &v : f.rho)
    v = std::floor(v * levels);
}

double quantile(const Field &f, double q)
{
  std::vector<double> v = f.rho;
  const size_t k = std::min(v.size() - 1, (size_t)(q * (double)v.size()));
  std::nth_element(v.begin(), v.begin() + (ptrdiff_t)k, v.end());
  return v[k];
}

std::vector<int64_t> brute_force_peaks(const Field &f, double threshold)
{
  std::vector<int64_t> peaks;
  for (int64_t c = 0; c < f.size(); ++c) {
    if (!(f.rho[(size_t)c] > threshold))
      continue;
    bool peak = true;
    for_each_neighbour(f, c, [&](int64_t q) {
      if (higher(f, q, c))
        peak = false;
    });
    if (peak)
      peaks.push_back(c);
  }
  return peaks;
}

int64_t connected_components(const Field &f, double threshold, std::vector<int64_t> &component)
{
  component.assign((size_t)f.size(), -1);
  int64_t count = 0;
  std::deque<int64_t> queue;
  for (int64_t s = 0; s < f.size(); ++s) {
    if (!(f.rho[(size_t)s] > threshold) || component[(size_t)s] >= 0)
      continue;
    component[(size_t)s] = count;
    queue.push_back(s);
    while (!queue.empty()) {
      const int64_t c = queue.front();
      queue.pop_front();
      for_each_neighbour(f, c, [&](int64_t q) {
        if (f.rho[(size_t)q] > threshold && component[(size_t)q] < 0) {
          component[(size_t)q] = count;
          queue.push_back(q);
        }
      });
    }
    ++count;
  }
  return count;
}

::testing::AssertionResult same_partition(const std::vector<int64_t> &a, const std::vector<int64_t> &b)
{
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  std::map<int64_t, int64_t> ab, ba;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] < 0) != (b[i] < 0))
      return ::testing::AssertionFailure() << "cell " << i << ": label " << a[i] << " vs " << b[i];
    if (a[i] < 0)
      continue;
    auto x = ab.emplace(a[i], b[i]);
    auto y = ba.emplace(b[i], a[i]);
    if (x.first->second != b[i] || y.first->second != a[i])
      return ::testing::AssertionFailure()
             << "cell " << i << ": label " << a[i] << " vs " << b[i] << " splits or joins groups";
  }
  return ::testing::AssertionSuccess() << ab.size() << " groups";
}

std::string describe(const phew_object &o)
{
  std::ostringstream s;
  s.precision(17);
  s << "{id " << o.id << " halo " << o.halo_id << " parent " << o.parent_id << " level " << o.level << " peak "
    << o.peak_id << " cells " << o.n_cells << " clumps " << o.n_clumps << " mass " << o.mass << " volume " << o.volume
    << " peak_rho " << o.peak_density << " saddle " << o.key_saddle_density << " relevance " << o.relevance << "}";
  return s.str();
}

namespace {

struct Totals {
  int64_t n = 0;
  long double mass = 0;
  double min = INFINITY;
  int64_t halo = -2; // clumps: the HaloId of their cells
};

void check_objects(const Field &f, const phew_params &p, const phew_object *rows, int64_t n_rows,
                   const std::vector<int64_t> &label, const char *what, bool clumps, const Run &r)
{
  std::vector<Totals> t((size_t)n_rows);
  for (size_t c = 0; c < label.size(); ++c) {
    const int64_t id = label[c];
    ASSERT_GE(id, -1) << what << " label of cell " << c;
    ASSERT_LT(id, n_rows) << what << " label of cell " << c;
    if (id < 0)
      continue;
    ASSERT_GE(r.patch[c], 0) << "cell " << c << " has " << what << " " << id << " but no PeakPatchId";
    Totals &x = t[(size_t)id];
    x.n++;
    x.mass += (long double)f.rho[c];
    x.min = std::min(x.min, f.rho[c]);
    if (clumps) {
      if (x.halo == -2)
        x.halo = r.halo[c];
      ASSERT_EQ(x.halo, r.halo[c]) << "the cells of clump " << id << " have different HaloIds";
    }
  }
  const double vol = f.cell_volume();
  for (int64_t i = 0; i < n_rows; ++i) {
    const phew_object &o = rows[i];
    SCOPED_TRACE(std::string(what) + " row " + std::to_string(i) + " " + describe(o));
    EXPECT_EQ(o.id, i);
    if (i > 0) { // catalogue order: decreasing peak density, ties by lower peak id
      const phew_object &prev = rows[i - 1];
      EXPECT_TRUE(prev.peak_density > o.peak_density ||
                  (prev.peak_density == o.peak_density && prev.peak_id < o.peak_id))
          << "catalogue order broken after " << describe(prev);
    }
    ASSERT_GE(o.peak_id, 0);
    ASSERT_LT(o.peak_id, f.size());
    EXPECT_EQ(label[(size_t)o.peak_id], i) << "the peak cell is not labelled with its own " << what;
    EXPECT_EQ(r.patch[(size_t)o.peak_id], o.peak_id) << "the peak cell is not a peak";
    EXPECT_EQ(o.peak_density, f.rho[(size_t)o.peak_id]);
    int64_t x[3];
    f.coords(o.peak_id, x);
    for (int d = 0; d < 3; ++d)
      EXPECT_DOUBLE_EQ(o.peak_position[d], f.origin[d] + ((double)x[d] + 0.5) * f.spacing[d]);
    const Totals &s = t[(size_t)i];
    EXPECT_EQ(o.n_cells, s.n);
    EXPECT_DOUBLE_EQ(o.volume, (double)s.n * vol);
    EXPECT_NEAR(o.mass, (double)(s.mass * vol), 1e-12 * (double)(s.mass * vol));
    EXPECT_EQ(o.min_density, s.min);
    if (s.n > 0) {
      EXPECT_NEAR(o.mean_density, (double)(s.mass / s.n), 1e-12 * (double)(s.mass / s.n));
    }
    EXPECT_GT(o.mass, p.mass_threshold) << "below the mass threshold but in the catalogue";
    EXPECT_GE(o.key_saddle_density, p.density_threshold);
    EXPECT_LE(o.key_saddle_density, o.peak_density);
    EXPECT_EQ(o.relevance, o.peak_density / o.key_saddle_density);
    if (clumps) {
      EXPECT_EQ(o.halo_id, s.halo) << "the clump's HaloId differs from its cells'";
      EXPECT_EQ(o.n_clumps, 1);
      if (o.parent_id >= 0) {
        ASSERT_LT(o.parent_id, n_rows);
        EXPECT_TRUE(rows[o.parent_id].peak_density > o.peak_density ||
                    (rows[o.parent_id].peak_density == o.peak_density && rows[o.parent_id].peak_id < o.peak_id))
            << "merged into a lower clump";
        EXPECT_EQ(rows[o.parent_id].halo_id, o.halo_id);
        EXPECT_GT(o.level, 0);
      }
      if (o.level == 0) {
        EXPECT_EQ(o.parent_id, -1);
      }
      if (!p.saddle_merging) {
        EXPECT_EQ(o.level, 0);
      }
    } else {
      EXPECT_EQ(o.halo_id, i);
      EXPECT_GE(o.n_clumps, 1);
    }
  }
}

} // namespace

void check_consistency(const Field &f, const phew_params &p, const Run &r)
{
  ASSERT_EQ(r.status, PHEW_OK) << r.context.message;
  EXPECT_STREQ(r.context.message, "");
  const phew_clump_result &res = r.result;
  const size_t n = (size_t)f.size();
  ASSERT_EQ(r.patch.size(), n);
  // PeakPatchId: -1 exactly off the test cells; a patch label is a peak labelled with itself.
  std::set<int64_t> patches;
  int64_t n_test = 0;
  for (size_t c = 0; c < n; ++c) {
    const bool test = f.rho[c] > p.density_threshold;
    n_test += test;
    if (!test) {
      ASSERT_EQ(r.patch[c], -1) << "cell " << c;
      ASSERT_EQ(r.clump[c], -1) << "cell " << c;
      ASSERT_EQ(r.halo[c], -1) << "cell " << c;
      continue;
    }
    const int64_t pk = r.patch[c];
    ASSERT_GE(pk, 0) << "test cell " << c << " has no PeakPatchId";
    ASSERT_LT(pk, (int64_t)n);
    ASSERT_EQ(r.patch[(size_t)pk], pk) << "cell " << c << " is in the patch of " << pk << ", not a peak";
    ASSERT_FALSE(higher(f, c, pk)) << "cell " << c << " is higher than its peak " << pk;
    patches.insert(pk);
  }
  EXPECT_EQ(res.stats.n_cells, (int64_t)n);
  EXPECT_EQ(res.stats.n_test_cells, n_test);
  EXPECT_EQ(res.stats.n_peaks, (int64_t)patches.size());
  // a patch is never split between clumps or haloes
  std::map<int64_t, std::pair<int64_t, int64_t>> of_patch;
  for (size_t c = 0; c < n; ++c) {
    if (r.patch[c] < 0)
      continue;
    auto e = of_patch.emplace(r.patch[c], std::make_pair(r.clump[c], r.halo[c]));
    ASSERT_EQ(e.first->second.first, r.clump[c]) << "patch " << r.patch[c] << " is split between clumps";
    ASSERT_EQ(e.first->second.second, r.halo[c]) << "patch " << r.patch[c] << " is split between haloes";
  }
  check_objects(f, p, res.clumps, res.n_clumps, r.clump, "clump", true, r);
  check_objects(f, p, res.haloes, res.n_haloes, r.halo, "halo", false, r);
  EXPECT_GE(res.stats.n_clumps_found, res.n_clumps);
  EXPECT_GE(res.stats.n_haloes_found, res.n_haloes);
  EXPECT_LE(res.stats.n_haloes_found, res.stats.n_clumps_found);
  EXPECT_LE(res.stats.n_clumps_found + res.stats.n_noise_discarded, res.stats.n_peaks);
  if (!p.saddle_merging) {
    EXPECT_EQ(res.stats.n_haloes_found, res.stats.n_clumps_found);
  }
  for (int64_t h = 0; h < res.n_haloes; ++h) {
    int64_t listed = 0;
    for (int64_t c = 0; c < res.n_clumps; ++c)
      listed += res.clumps[c].halo_id == h;
    EXPECT_GE(res.haloes[h].n_clumps, listed) << "halo " << h;
  }

  // dendrogram
  const phew_node *nodes = res.nodes;
  const int64_t nn = res.n_nodes;
  int64_t roots = 0;
  std::vector<int64_t> child_cells((size_t)nn, 0);
  std::vector<long double> child_mass((size_t)nn, 0);
  std::vector<int> n_children((size_t)nn, 0);
  std::vector<int64_t> leaf_of_clump((size_t)res.n_clumps, -1);
  std::vector<int64_t> root_of_halo((size_t)res.n_haloes, -1);
  for (int64_t i = 0; i < nn; ++i) {
    const phew_node &x = nodes[i];
    SCOPED_TRACE("node " + std::to_string(i));
    EXPECT_EQ(x.id, i);
    ASSERT_GE(x.halo_id, 0) << "nodes of haloes below the mass threshold must not be listed";
    ASSERT_LT(x.halo_id, res.n_haloes);
    EXPECT_GE(x.level, 0);
    EXPECT_LE(x.saddle_density, x.peak_density);
    EXPECT_EQ(x.peak_density, f.rho[(size_t)x.peak_id]);
    if (x.level == 0) {
      ASSERT_GE(x.clump_id, -1);
      ASSERT_LT(x.clump_id, res.n_clumps);
      if (x.clump_id >= 0) {
        EXPECT_EQ(leaf_of_clump[(size_t)x.clump_id], -1) << "two leaves for clump " << x.clump_id;
        leaf_of_clump[(size_t)x.clump_id] = i;
        const phew_object &c = res.clumps[x.clump_id];
        EXPECT_EQ(x.peak_id, c.peak_id);
        EXPECT_EQ(x.n_cells, c.n_cells);
        EXPECT_EQ(x.mass, c.mass) << "a leaf has exactly its clump's mass";
        EXPECT_EQ(x.halo_id, c.halo_id);
      }
    } else {
      EXPECT_EQ(x.clump_id, -1);
    }
    if (x.parent_id < 0) {
      ++roots;
      EXPECT_EQ(root_of_halo[(size_t)x.halo_id], -1) << "two roots for halo " << x.halo_id;
      root_of_halo[(size_t)x.halo_id] = i;
      const phew_object &h = res.haloes[x.halo_id];
      EXPECT_EQ(x.peak_id, h.peak_id);
      EXPECT_EQ(x.n_cells, h.n_cells);
      EXPECT_EQ(x.mass, h.mass) << "a root has exactly its halo's mass";
      EXPECT_EQ(x.level, h.level) << "halo level (depth) differs from its root node's";
      EXPECT_EQ(x.saddle_density, h.key_saddle_density) << "a root sits at its halo's key saddle";
    } else {
      ASSERT_LT(x.parent_id, nn);
      const phew_node &up = nodes[x.parent_id];
      EXPECT_GT(up.level, x.level);
      EXPECT_EQ(up.halo_id, x.halo_id);
      EXPECT_TRUE(up.peak_density > x.peak_density || (up.peak_density == x.peak_density && up.peak_id <= x.peak_id));
      child_cells[(size_t)x.parent_id] += x.n_cells;
      child_mass[(size_t)x.parent_id] += x.mass;
      n_children[(size_t)x.parent_id]++;
    }
  }
  EXPECT_EQ(roots, res.n_haloes) << "number of dendrogram roots differs from the number of haloes";
  for (int64_t i = 0; i < nn; ++i)
    if (nodes[i].level > 0) {
      EXPECT_GE(n_children[(size_t)i], 2) << "node " << i << " was formed by a merger";
      EXPECT_EQ(nodes[i].n_cells, child_cells[(size_t)i]) << "node " << i;
      EXPECT_NEAR(nodes[i].mass, (double)child_mass[(size_t)i], 1e-12 * nodes[i].mass) << "node " << i;
    }
  for (int64_t c = 0; c < res.n_clumps; ++c)
    if (res.clumps[c].halo_id >= 0) {
      EXPECT_GE(leaf_of_clump[(size_t)c], 0) << "clump " << c << " has no leaf";
    }
}

void expect_identical(const Run &a, const Run &b)
{
  ASSERT_EQ(a.status, b.status);
  EXPECT_TRUE(a.patch == b.patch) << "PeakPatchId differs";
  EXPECT_TRUE(a.clump == b.clump) << "ClumpId differs";
  EXPECT_TRUE(a.halo == b.halo) << "HaloId differs";
  const phew_clump_result &x = a.result, &y = b.result;
  ASSERT_EQ(x.n_clumps, y.n_clumps);
  ASSERT_EQ(x.n_haloes, y.n_haloes);
  ASSERT_EQ(x.n_nodes, y.n_nodes);
  for (int64_t i = 0; i < x.n_clumps; ++i)
    EXPECT_EQ(0, std::memcmp(&x.clumps[i], &y.clumps[i], sizeof(phew_object)))
        << "clump " << i << ": " << describe(x.clumps[i]) << " vs " << describe(y.clumps[i]);
  for (int64_t i = 0; i < x.n_haloes; ++i)
    EXPECT_EQ(0, std::memcmp(&x.haloes[i], &y.haloes[i], sizeof(phew_object)))
        << "halo " << i << ": " << describe(x.haloes[i]) << " vs " << describe(y.haloes[i]);
  for (int64_t i = 0; i < x.n_nodes; ++i) {
    const phew_node &m = x.nodes[i], &n = y.nodes[i];
    EXPECT_TRUE(m.id == n.id && m.parent_id == n.parent_id && m.level == n.level && m.clump_id == n.clump_id &&
                m.halo_id == n.halo_id && m.peak_id == n.peak_id && m.peak_density == n.peak_density &&
                m.saddle_density == n.saddle_density && m.n_cells == n.n_cells && m.mass == n.mass)
        << "node " << i << " differs";
  }
  expect_same_merging_stats(x.stats, y.stats);
}

void expect_same_merging_stats(const phew_stats &s, const phew_stats &t)
{
  EXPECT_EQ(s.n_peaks, t.n_peaks);
  EXPECT_EQ(s.n_saddle_pairs, t.n_saddle_pairs);
  EXPECT_EQ(s.n_noise_discarded, t.n_noise_discarded);
  EXPECT_EQ(s.n_clumps_found, t.n_clumps_found);
  EXPECT_EQ(s.n_haloes_found, t.n_haloes_found);
  EXPECT_EQ(s.noise_levels, t.noise_levels);
  EXPECT_EQ(s.saddle_levels, t.saddle_levels);
}

} // namespace phewtest
