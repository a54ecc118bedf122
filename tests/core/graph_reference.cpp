// The plain reference PHEW on an explicit graph: see graph_reference.h.
#include "graph_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace graphref {

namespace {

struct Event {
  int64_t child, parent; // local cell indices of peaks
  double saddle;
  int32_t level;
};

// Peaks (local cell indices) grouped under a head peak; neighbour lists of heads with saddles.
struct Merger {
  const Graph &g;
  std::map<int64_t, std::map<int64_t, double>> nb;   // alive head -> neighbour head -> saddle
  std::map<int64_t, int64_t> head;                   // every peak -> its head, -1 if discarded
  std::map<int64_t, std::pair<double, int64_t>> key; // alive head -> key saddle, key neighbour
  std::vector<Event> events;
  int32_t levels = 0;

  explicit Merger(const Graph &graph) : g(graph) {}
  bool higher(int64_t a, int64_t b) const
  {
    if (b < 0)
      return true;
    const double ra = g.rho[(size_t)a], rb = g.rho[(size_t)b];
    return ra > rb || (ra == rb && g.gid[(size_t)a] < g.gid[(size_t)b]);
  }

  void compute_keys()
  {
    key.clear();
    for (const auto &h : nb) {
      double best = -INFINITY;
      int64_t k = -1;
      for (const auto &q : h.second)
        if (q.second > best || (q.second == best && higher(q.first, k))) {
          best = q.second;
          k = q.first;
        }
      key[h.first] = {best, k};
    }
  }

  std::vector<int64_t> alive_decreasing() const
  {
    std::vector<int64_t> v;
    for (const auto &h : nb)
      v.push_back(h.first);
    std::sort(v.begin(), v.end(), [&](int64_t x, int64_t y) { return higher(x, y); });
    return v;
  }

  // crit(head, key saddle): merge into the key neighbour if that is higher; level by level.
  void run(const std::function<bool(int64_t, double)> &crit)
  {
    for (;;) {
      compute_keys();
      const std::vector<int64_t> alive = alive_decreasing();
      std::map<int64_t, int64_t> fin;
      int64_t mergers = 0;
      for (int64_t h : alive) { // decreasing: a key neighbour's final head is known already
        const auto k = key[h];
        if (k.second >= 0 && higher(k.second, h) && crit(h, k.first)) {
          fin[h] = fin.at(k.second);
          ++mergers;
        } else {
          fin[h] = h;
        }
      }
      if (mergers == 0)
        break;
      ++levels;
      for (int64_t h : alive)
        if (fin[h] != h)
          events.push_back({h, fin[h], key[h].first, levels});
      std::map<int64_t, std::map<int64_t, double>> merged;
      for (int64_t h : alive)
        if (fin[h] == h)
          merged[h];
      for (const auto &h : nb)
        for (const auto &q : h.second) {
          const int64_t x = fin.at(h.first), y = fin.at(q.first);
          if (x == y)
            continue;
          auto it = merged[x].find(y);
          if (it == merged[x].end() || q.second > it->second)
            merged[x][y] = q.second;
        }
      nb.swap(merged);
      for (auto &x : head)
        if (x.second >= 0)
          x.second = fin.at(x.second);
    }
    compute_keys();
  }
};

double displacement(double a, double b, double period, int periodic)
{
  double d = a - b;
  if (periodic) {
    if (2.0 * d > period)
      d -= period;
    else if (2.0 * d < -period)
      d += period;
  }
  return d;
}

struct Acc {
  int64_t n = 0;
  long double mass = 0, volume = 0;
  long double moment[3] = {0, 0, 0};
  double min = INFINITY;
  double extent[3] = {0, 0, 0};
};

} // namespace

Result find_clumps(const Graph &g, const phew_params &p)
{
  Result r;
  const int64_t n = g.n();
  const double thr = p.density_threshold;
  auto rho = [&](int64_t c) { return g.rho[(size_t)c]; };
  auto higher = [&](int64_t a, int64_t b) {
    return rho(a) > rho(b) || (rho(a) == rho(b) && g.gid[(size_t)a] < g.gid[(size_t)b]);
  };
  auto each_nb = [&](int64_t c, const std::function<void(int64_t)> &fn) {
    for (int64_t k = g.offsets[(size_t)c]; k < g.offsets[(size_t)c + 1]; ++k)
      fn(g.neighbours[(size_t)k]);
  };

  // watershed: test cells in decreasing order take the peak of their highest neighbour
  std::vector<int64_t> peak_of((size_t)n, -1); // local index of the peak
  std::vector<int64_t> test;
  for (int64_t c = 0; c < n; ++c)
    if (rho(c) > thr)
      test.push_back(c);
  std::sort(test.begin(), test.end(), higher);
  std::vector<int64_t> peaks;
  for (int64_t c : test) {
    int64_t best = c;
    each_nb(c, [&](int64_t q) {
      if (higher(q, best))
        best = q;
    });
    if (best == c) {
      peak_of[(size_t)c] = c;
      peaks.push_back(c);
    } else {
      peak_of[(size_t)c] = peak_of[(size_t)best];
    }
  }
  r.n_test = (int64_t)test.size();
  r.n_peaks = (int64_t)peaks.size();

  // saddles: for each pair of neighbouring patches the highest mean of a cell pair across
  std::map<std::pair<int64_t, int64_t>, double> saddle;
  for (int64_t c : test)
    each_nb(c, [&](int64_t q) {
      const int64_t a = peak_of[(size_t)c], b = peak_of[(size_t)q];
      if (b < 0 || a == b)
        return;
      const double s = (rho(c) + rho(q)) / 2;
      const auto k = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = saddle.find(k);
      if (it == saddle.end() || s > it->second)
        saddle[k] = s;
    });
  r.n_pairs = (int64_t)saddle.size();

  // noise removal
  Merger noise(g);
  for (int64_t pk : peaks) {
    noise.nb[pk];
    noise.head[pk] = pk;
  }
  for (const auto &s : saddle) {
    noise.nb[s.first.first][s.first.second] = s.second;
    noise.nb[s.first.second][s.first.first] = s.second;
  }
  const double R = p.relevance_threshold;
  noise.run([&](int64_t h, double s) { return rho(h) / s < R; });
  r.noise_levels = noise.levels;
  std::set<int64_t> discarded;
  for (const auto &h : noise.nb)
    if (h.second.empty() && rho(h.first) / thr < R)
      discarded.insert(h.first);
  for (int64_t h : discarded)
    noise.nb.erase(h);
  for (auto &x : noise.head)
    if (x.second >= 0 && discarded.count(x.second))
      x.second = -1;
  r.n_discarded = (int64_t)discarded.size();
  noise.compute_keys();

  // saddle merging
  Merger merge(g);
  merge.nb = noise.nb;
  for (const auto &h : noise.nb)
    merge.head[h.first] = h.first;
  const bool saddle_merging = p.saddle_merging != 0;
  const double S = p.saddle_threshold;
  merge.run([&](int64_t, double s) { return saddle_merging && s > S; });
  r.saddle_levels = merge.levels;

  // catalogue order
  const std::vector<int64_t> clump_heads = noise.alive_decreasing();
  const std::vector<int64_t> halo_heads = merge.alive_decreasing();
  std::map<int64_t, size_t> clump_index, halo_index;
  for (size_t i = 0; i < clump_heads.size(); ++i)
    clump_index[clump_heads[i]] = i;
  for (size_t i = 0; i < halo_heads.size(); ++i)
    halo_index[halo_heads[i]] = i;
  r.n_clumps_found = (int64_t)clump_heads.size();
  r.n_haloes_found = (int64_t)halo_heads.size();

  std::vector<int64_t> cell_clump((size_t)n, -1), cell_halo((size_t)n, -1);
  std::vector<Acc> cacc(clump_heads.size()), hacc(halo_heads.size());
  auto add = [&](Acc &a, int64_t c, int64_t peak) {
    const long double w = (long double)rho(c) * (long double)g.volume[(size_t)c];
    a.n++;
    a.mass += w;
    a.volume += g.volume[(size_t)c];
    for (int d = 0; d < 3; ++d) {
      const double dd = displacement(g.position[(size_t)(3 * c + d)], g.position[(size_t)(3 * peak + d)], g.box_size[d],
                                     g.periodic[d]);
      a.moment[d] += w * (long double)dd;
      a.extent[d] = std::max(a.extent[d], std::fabs(dd));
    }
    a.min = std::min(a.min, rho(c));
  };
  for (int64_t c : test) {
    const int64_t ch = noise.head.at(peak_of[(size_t)c]);
    if (ch < 0)
      continue;
    const int64_t hh = merge.head.at(ch);
    cell_clump[(size_t)c] = (int64_t)clump_index.at(ch);
    cell_halo[(size_t)c] = (int64_t)halo_index.at(hh);
    add(cacc[clump_index.at(ch)], c, ch);
    add(hacc[halo_index.at(hh)], c, hh);
  }

  auto fill = [&](phew_object &o, int64_t peak, const Acc &a, std::pair<double, int64_t> key) {
    std::memset(&o, 0, sizeof o);
    o.peak_id = g.gid[(size_t)peak];
    o.n_cells = a.n;
    o.volume = (double)a.volume;
    o.mass = (double)a.mass;
    o.peak_density = rho(peak);
    o.min_density = a.min;
    o.mean_density = a.n ? (double)(a.mass / a.volume) : 0.0;
    for (int d = 0; d < 3; ++d) {
      const double pos = g.position[(size_t)(3 * peak + d)];
      o.peak_position[d] = pos;
      double c = pos + (double)(a.moment[d] / a.mass);
      if (g.periodic[d]) {
        c = std::fmod(c - g.box_origin[d], g.box_size[d]);
        if (c < 0)
          c += g.box_size[d];
        c += g.box_origin[d];
      }
      o.center_of_mass[d] = c;
    }
    o.key_saddle_density = key.second < 0 ? thr : key.first;
    o.relevance = o.peak_density / o.key_saddle_density;
    o.parent_id = -1;
    o.n_clumps = 1;
  };

  std::vector<phew_object> clumps(clump_heads.size()), haloes(halo_heads.size());
  std::vector<int64_t> clump_final(clump_heads.size(), -1), halo_final(halo_heads.size(), -1);
  int64_t kept = 0;
  for (size_t i = 0; i < clump_heads.size(); ++i) {
    fill(clumps[i], clump_heads[i], cacc[i], noise.key.at(clump_heads[i]));
    if (clumps[i].mass > p.mass_threshold)
      clump_final[i] = kept++;
  }
  kept = 0;
  for (size_t i = 0; i < halo_heads.size(); ++i) {
    fill(haloes[i], halo_heads[i], hacc[i], merge.key.at(halo_heads[i]));
    haloes[i].n_clumps = 0;
    if (haloes[i].mass > p.mass_threshold)
      halo_final[i] = kept++;
  }
  for (size_t i = 0; i < clump_heads.size(); ++i) {
    const size_t h = halo_index.at(merge.head.at(clump_heads[i]));
    clumps[i].id = clump_final[i];
    clumps[i].halo_id = halo_final[h];
    haloes[h].n_clumps++;
  }
  for (const Event &e : merge.events) {
    phew_object &c = clumps[clump_index.at(e.child)];
    c.parent_id = clump_final[clump_index.at(e.parent)];
    c.level = e.level;
    phew_object &h = haloes[halo_index.at(merge.head.at(e.child))];
    h.level = std::max(h.level, e.level);
  }
  for (size_t i = 0; i < halo_heads.size(); ++i) {
    haloes[i].id = halo_final[i];
    haloes[i].halo_id = halo_final[i];
  }
  auto com_defined = [&](const Acc &a) {
    std::array<bool, 3> ok;
    for (int d = 0; d < 3; ++d)
      ok[(size_t)d] = !g.periodic[d] || 4.0 * a.extent[d] < g.box_size[d];
    return ok;
  };
  auto extent = [](const Acc &a) { return std::array<double, 3>{a.extent[0], a.extent[1], a.extent[2]}; };
  for (size_t i = 0; i < clumps.size(); ++i)
    if (clump_final[i] >= 0) {
      r.clumps.push_back(clumps[i]);
      r.clump_com_defined.push_back(com_defined(cacc[i]));
      r.clump_extent.push_back(extent(cacc[i]));
    }
  for (size_t i = 0; i < haloes.size(); ++i)
    if (halo_final[i] >= 0) {
      r.haloes.push_back(haloes[i]);
      r.halo_com_defined.push_back(com_defined(hacc[i]));
      r.halo_extent.push_back(extent(hacc[i]));
    }
  r.patch.assign((size_t)n, -1);
  r.clump.assign((size_t)n, -1);
  r.halo.assign((size_t)n, -1);
  for (int64_t c = 0; c < n; ++c) {
    if (peak_of[(size_t)c] >= 0)
      r.patch[(size_t)c] = g.gid[(size_t)peak_of[(size_t)c]];
    if (cell_clump[(size_t)c] >= 0)
      r.clump[(size_t)c] = clump_final[(size_t)cell_clump[(size_t)c]];
    if (cell_halo[(size_t)c] >= 0)
      r.halo[(size_t)c] = halo_final[(size_t)cell_halo[(size_t)c]];
  }

  // dendrogram: leaves are clumps; a peak receiving mergers on level L gets a node of level L
  struct TNode {
    int64_t peak;
    int32_t level;
    int64_t parent = -1;
    double saddle = 0;
    int64_t clump = -1;
    int64_t n = 0;
    long double mass = 0;
  };
  std::vector<TNode> t;
  std::map<int64_t, size_t> current;
  for (size_t i = 0; i < clump_heads.size(); ++i) {
    TNode x;
    x.peak = clump_heads[i];
    x.level = 0;
    x.clump = (int64_t)i;
    current[clump_heads[i]] = t.size();
    t.push_back(x);
  }
  for (int32_t level = 1; level <= merge.levels; ++level) {
    std::map<int64_t, std::vector<Event>> by_parent;
    for (const Event &e : merge.events)
      if (e.level == level)
        by_parent[e.parent].push_back(e);
    std::map<int64_t, size_t> created;
    for (const auto &q : by_parent) {
      TNode x;
      x.peak = q.first;
      x.level = level;
      const size_t idx = t.size();
      t.push_back(x);
      double top = -INFINITY;
      for (const Event &e : q.second) {
        top = std::max(top, e.saddle);
        t[current.at(e.child)].parent = (int64_t)idx;
        t[current.at(e.child)].saddle = e.saddle;
      }
      t[current.at(q.first)].parent = (int64_t)idx;
      t[current.at(q.first)].saddle = top;
      created[q.first] = idx;
    }
    for (const auto &c : created)
      current[c.first] = c.second;
  }
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].clump >= 0) {
      const Acc &a = cacc[(size_t)t[i].clump];
      for (int64_t j = (int64_t)i; j >= 0; j = t[(size_t)j].parent) {
        t[(size_t)j].n += a.n;
        t[(size_t)j].mass += a.mass;
      }
    }
  std::vector<size_t> order;
  for (size_t i = 0; i < t.size(); ++i) {
    const size_t h = halo_index.at(merge.head.at(t[i].peak));
    if (t[i].parent < 0)
      t[i].saddle = haloes[h].key_saddle_density;
    if (halo_final[h] >= 0)
      order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (t[a].level != t[b].level)
      return t[a].level < t[b].level;
    return higher(t[a].peak, t[b].peak);
  });
  for (size_t i : order) {
    const TNode &x = t[i];
    Node o;
    o.level = x.level;
    o.peak_id = g.gid[(size_t)x.peak];
    o.parent_level = x.parent >= 0 ? t[(size_t)x.parent].level : -1;
    o.parent_peak = x.parent >= 0 ? g.gid[(size_t)t[(size_t)x.parent].peak] : -1;
    o.clump_id = x.clump >= 0 ? clump_final[(size_t)x.clump] : -1;
    o.halo_id = halo_final[halo_index.at(merge.head.at(x.peak))];
    o.peak_density = rho(x.peak);
    o.saddle_density = x.saddle;
    o.n_cells = x.n;
    o.mass = (double)x.mass;
    r.nodes.push_back(o);
  }
  return r;
}

phew_input graph_input(const Graph &g)
{
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = g.n();
  in.graph.global_id = g.gid.data();
  in.graph.offsets = g.offsets.data();
  in.graph.neighbours = g.neighbours.data();
  in.graph.volume = g.volume.data();
  in.graph.position = g.position.data();
  for (int d = 0; d < 3; ++d) {
    in.graph.box_origin[d] = g.box_origin[d];
    in.graph.box_size[d] = g.box_size[d];
    in.graph.periodic[d] = g.periodic[d];
  }
  in.density = g.rho.data();
  in.density_type = PHEW_FLOAT64;
  return in;
}

// ---- comparing a core run with the reference -------------------------------------------------

namespace {

::testing::AssertionResult labels_equal(const char *what, const std::vector<int64_t> &core,
                                        const std::vector<int64_t> &ref, const Graph &g)
{
  if (core.size() != ref.size())
    return ::testing::AssertionFailure() << what << ": sizes differ";
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < core.size(); ++i)
    if (core[i] != ref[i]) {
      if (first < 0)
        first = (int64_t)i;
      ++bad;
    }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << core.size() << " cell(s) differ, first cell "
                                       << first << " (global id " << g.gid[(size_t)first] << ", density "
                                       << g.rho[(size_t)first] << "): core " << core[(size_t)first] << ", reference "
                                       << ref[(size_t)first];
}

void expect_rel(double core, double ref, double tol, const char *what)
{
  EXPECT_NEAR(core, ref, tol * std::fabs(ref)) << what;
}

void expect_objects(const Graph &g, const char *what, const phew_object *core, int64_t n_core,
                    const std::vector<phew_object> &ref, const std::vector<std::array<bool, 3>> &com_defined,
                    double volume_tolerance)
{
  ASSERT_EQ(n_core, (int64_t)ref.size()) << "number of " << what;
  for (int64_t i = 0; i < n_core; ++i) {
    const phew_object &a = core[i], &b = ref[(size_t)i];
    SCOPED_TRACE(std::string(what) + " " + std::to_string(i) + "\n core      " + phewtest::describe(a) +
                 "\n reference " + phewtest::describe(b));
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.halo_id, b.halo_id);
    EXPECT_EQ(a.parent_id, b.parent_id);
    EXPECT_EQ(a.level, b.level);
    EXPECT_EQ(a.peak_id, b.peak_id);
    EXPECT_EQ(a.n_cells, b.n_cells);
    EXPECT_EQ(a.n_clumps, b.n_clumps);
    expect_rel(a.volume, b.volume, volume_tolerance, "volume");
    expect_rel(a.mass, b.mass, 1e-12, "mass");
    EXPECT_EQ(a.peak_density, b.peak_density);
    for (int d = 0; d < 3; ++d) {
      EXPECT_DOUBLE_EQ(a.peak_position[d], b.peak_position[d]) << "axis " << d;
      if (!com_defined[(size_t)i][(size_t)d])
        continue;
      const double box = g.box_size[d];
      double diff = std::fabs(a.center_of_mass[d] - b.center_of_mass[d]);
      if (g.periodic[d])
        diff = std::min(diff, std::fabs(diff - box));
      EXPECT_LE(diff, 1e-9 * box) << "centre of mass, axis " << d << ": core " << a.center_of_mass[d] << ", reference "
                                  << b.center_of_mass[d];
    }
    EXPECT_EQ(a.min_density, b.min_density);
    expect_rel(a.mean_density, b.mean_density, 1e-12, "mean density (mass / volume)");
    EXPECT_EQ(a.key_saddle_density, b.key_saddle_density);
    EXPECT_EQ(a.relevance, b.relevance);
  }
}

} // namespace

void expect_matches(const Graph &g, const phew_clump_result &core, const std::vector<int64_t> &patch,
                    const std::vector<int64_t> &clump, const std::vector<int64_t> &halo, const Result &ref,
                    double volume_tolerance)
{
  EXPECT_TRUE(labels_equal("PeakPatchId", patch, ref.patch, g));
  EXPECT_TRUE(labels_equal("ClumpId", clump, ref.clump, g));
  EXPECT_TRUE(labels_equal("HaloId", halo, ref.halo, g));
  const phew_stats &s = core.stats;
  EXPECT_EQ(s.n_cells, g.n());
  EXPECT_EQ(s.n_test_cells, ref.n_test);
  EXPECT_EQ(s.n_peaks, ref.n_peaks);
  EXPECT_EQ(s.n_saddle_pairs, ref.n_pairs);
  EXPECT_EQ(s.n_noise_discarded, ref.n_discarded);
  EXPECT_EQ(s.n_clumps_found, ref.n_clumps_found);
  EXPECT_EQ(s.n_haloes_found, ref.n_haloes_found);
  EXPECT_EQ(s.noise_levels, ref.noise_levels);
  EXPECT_EQ(s.saddle_levels, ref.saddle_levels);
  expect_objects(g, "clump", core.clumps, core.n_clumps, ref.clumps, ref.clump_com_defined, volume_tolerance);
  expect_objects(g, "halo", core.haloes, core.n_haloes, ref.haloes, ref.halo_com_defined, volume_tolerance);

  ASSERT_EQ(core.n_nodes, (int64_t)ref.nodes.size()) << "number of dendrogram nodes";
  std::map<std::pair<int64_t, int32_t>, const Node *> want;
  for (const Node &x : ref.nodes)
    want[{x.peak_id, x.level}] = &x;
  int failures = 0;
  for (int64_t i = 0; i < core.n_nodes && failures < 10; ++i) {
    const phew_node &a = core.nodes[i];
    EXPECT_EQ(a.id, i);
    auto it = want.find({a.peak_id, a.level});
    if (it == want.end()) {
      ADD_FAILURE() << "core node " << i << " (peak " << a.peak_id << ", level " << a.level
                    << ") is not in the reference";
      ++failures;
      continue;
    }
    const Node &b = *it->second;
    const int64_t parent_peak = a.parent_id >= 0 ? core.nodes[a.parent_id].peak_id : -1;
    const int32_t parent_level = a.parent_id >= 0 ? core.nodes[a.parent_id].level : -1;
    const bool ok = parent_peak == b.parent_peak && parent_level == b.parent_level && a.clump_id == b.clump_id &&
                    a.halo_id == b.halo_id && a.peak_density == b.peak_density &&
                    a.saddle_density == b.saddle_density && a.n_cells == b.n_cells &&
                    std::fabs(a.mass - b.mass) <= 1e-12 * std::fabs(b.mass);
    if (!ok) {
      ADD_FAILURE() << "node " << i << " (peak " << a.peak_id << ", level " << a.level << "): core parent ("
                    << parent_peak << ", " << parent_level << ") clump " << a.clump_id << " halo " << a.halo_id
                    << " saddle " << a.saddle_density << " cells " << a.n_cells << " mass " << a.mass
                    << "; reference parent (" << b.parent_peak << ", " << b.parent_level << ") clump " << b.clump_id
                    << " halo " << b.halo_id << " saddle " << b.saddle_density << " cells " << b.n_cells << " mass "
                    << b.mass;
      ++failures;
    }
  }
}

} // namespace graphref
