#include "amr_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace amrref {

// ---- the AMR description -------------------------------------------------------------------

void Amr::add(int32_t level, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz, int32_t owner)
{
  phew_amr_block b;
  std::memset(&b, 0, sizeof b);
  b.level = level;
  b.owner = owner;
  b.lo[0] = x;
  b.lo[1] = y;
  b.lo[2] = z;
  b.dims[0] = nx;
  b.dims[1] = ny;
  b.dims[2] = nz;
  blocks.push_back(b);
}

int Amr::max_level() const
{
  int L = 0;
  for (const phew_amr_block &b : blocks)
    L = std::max(L, (int)b.level);
  return L;
}

int64_t Amr::level_offset(int level) const
{
  int64_t off = 0;
  for (int k = 0; k < level; ++k)
    off += level_dim(k, 0) * level_dim(k, 1) * level_dim(k, 2);
  return off;
}

int64_t Amr::total_cells() const
{
  int64_t n = 0;
  for (size_t b = 0; b < blocks.size(); ++b)
    n += block_cells(b);
  return n;
}

phew_amr Amr::view() const
{
  phew_amr v;
  std::memset(&v, 0, sizeof v);
  for (int d = 0; d < 3; ++d) {
    v.level0_dims[d] = level0_dims[d];
    v.origin[d] = origin[d];
    v.spacing[d] = spacing[d];
    v.periodic[d] = periodic[d];
  }
  v.n_blocks = (int64_t)blocks.size();
  v.blocks = blocks.empty() ? nullptr : blocks.data();
  return v;
}

std::vector<BlockCell> block_cells(const Amr &a)
{
  std::vector<BlockCell> cells;
  for (size_t b = 0; b < a.blocks.size(); ++b) {
    const phew_amr_block &B = a.blocks[b];
    for (int64_t z = 0; z < B.dims[2]; ++z)
      for (int64_t y = 0; y < B.dims[1]; ++y)
        for (int64_t x = 0; x < B.dims[0]; ++x)
          cells.push_back({b, (int)B.level, {B.lo[0] + x, B.lo[1] + y, B.lo[2] + z}});
  }
  return cells;
}

// ---- (a) the leaf-cell graph -----------------------------------------------------------------

namespace {

// Closed intervals [a0, a1] and [b0, b1] on an axis of length n (periodic: also the images of
// b shifted by one period either way) have a point in common.
bool touch(int64_t a0, int64_t a1, int64_t b0, int64_t b1, int64_t n, int periodic)
{
  if (a0 <= b1 && b0 <= a1)
    return true;
  if (!periodic)
    return false;
  return (a0 <= b1 + n && b0 + n <= a1) || (a0 <= b1 - n && b0 - n <= a1);
}

} // namespace

bool LeafGraph::are_neighbours(int64_t a, int64_t b) const
{
  return std::binary_search(neighbours.begin() + offsets[(size_t)a], neighbours.begin() + offsets[(size_t)a + 1], b);
}

LeafGraph build_leaf_graph(const Amr &a)
{
  LeafGraph g;
  const int L = a.max_level();
  const std::vector<BlockCell> cells = block_cells(a);
  g.leaf_of_cell.assign(cells.size(), -1);
  // finest-level integer boxes [lo, hi] (closed) of the leaves
  std::vector<std::array<int64_t, 6>> box;
  for (size_t c = 0; c < cells.size(); ++c) {
    const BlockCell &cell = cells[c];
    // covered: a block of the next level overlaps the cell (its two children per axis)
    bool covered = false;
    for (const phew_amr_block &B : a.blocks) {
      if (B.level != cell.level + 1)
        continue;
      bool overlap = true;
      for (int d = 0; d < 3 && overlap; ++d)
        overlap = 2 * cell.idx[d] < B.lo[d] + B.dims[d] && B.lo[d] < 2 * cell.idx[d] + 2;
      if (overlap) {
        covered = true;
        break;
      }
    }
    if (covered)
      continue;
    const int l = cell.level;
    g.leaf_of_cell[c] = (int64_t)g.gid.size();
    g.cell_of_leaf.push_back((int64_t)c);
    g.gid.push_back(a.global_id(l, cell.idx[0], cell.idx[1], cell.idx[2]));
    g.level.push_back(l);
    g.idx.push_back({cell.idx[0], cell.idx[1], cell.idx[2]});
    double vol = 1.0;
    std::array<int64_t, 6> bx;
    const int64_t s = (int64_t)1 << (L - l);
    for (int d = 0; d < 3; ++d) {
      const double h = a.spacing[d] / (double)((int64_t)1 << l);
      vol *= h;
      g.position.push_back(a.origin[d] + ((double)cell.idx[d] + 0.5) * h);
      bx[(size_t)d] = cell.idx[d] * s;
      bx[(size_t)d + 3] = (cell.idx[d] + 1) * s;
    }
    g.volume.push_back(vol);
    box.push_back(bx);
  }
  const int64_t n = g.n();
  int64_t N[3];
  for (int d = 0; d < 3; ++d) {
    N[d] = a.level0_dims[d] << L;
    g.box_origin[d] = a.origin[d];
    g.box_size[d] = (double)a.level0_dims[d] * a.spacing[d];
    g.periodic[d] = a.periodic[d];
  }
  // buckets: the level-0 cell holding each leaf
  const int64_t s0 = (int64_t)1 << L;
  std::map<std::array<int64_t, 3>, std::vector<int64_t>> bucket;
  std::vector<std::array<int64_t, 3>> home((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d)
      home[(size_t)i][(size_t)d] = box[(size_t)i][(size_t)d] / s0;
    bucket[home[(size_t)i]].push_back(i);
  }
  g.offsets.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    std::set<std::array<int64_t, 3>> near; // touching level-0 cells, wrapped, without repeats
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int64_t dd[3] = {dx, dy, dz};
          std::array<int64_t, 3> h;
          bool ok = true;
          for (int d = 0; d < 3 && ok; ++d) {
            int64_t v = home[(size_t)i][(size_t)d] + dd[d];
            if (v < 0 || v >= a.level0_dims[d]) {
              if (!a.periodic[d])
                ok = false;
              v = (v + a.level0_dims[d]) % a.level0_dims[d];
            }
            h[(size_t)d] = v;
          }
          if (ok)
            near.insert(h);
        }
    std::vector<int64_t> list;
    for (const auto &h : near) {
      auto it = bucket.find(h);
      if (it == bucket.end())
        continue;
      for (int64_t j : it->second) {
        if (j == i)
          continue;
        bool t = true;
        for (int d = 0; d < 3 && t; ++d)
          t = touch(box[(size_t)i][(size_t)d], box[(size_t)i][(size_t)d + 3], box[(size_t)j][(size_t)d],
                    box[(size_t)j][(size_t)d + 3], N[d], a.periodic[d]);
        if (t)
          list.push_back(j);
      }
    }
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    g.neighbours.insert(g.neighbours.end(), list.begin(), list.end());
    g.offsets.push_back((int64_t)g.neighbours.size());
  }
  return g;
}

Graph make_graph(const LeafGraph &lg, const std::vector<double> &rho_cells)
{
  Graph g;
  for (int64_t i = 0; i < lg.n(); ++i)
    g.rho.push_back(rho_cells[(size_t)lg.cell_of_leaf[(size_t)i]]);
  g.gid = lg.gid;
  g.offsets = lg.offsets;
  g.neighbours = lg.neighbours;
  g.volume = lg.volume;
  g.position = lg.position;
  for (int d = 0; d < 3; ++d) {
    g.box_origin[d] = lg.box_origin[d];
    g.box_size[d] = lg.box_size[d];
    g.periodic[d] = lg.periodic[d];
  }
  return g;
}

// ---- running the core -------------------------------------------------------------------------

std::unique_ptr<CoreRun> run_amr(const Amr &a, const std::vector<double> &rho_cells, const phew_params &p, bool f32,
                                 int64_t sentinel, const phewtest::Adjust &adjust)
{
  const size_t n = rho_cells.size();
  std::vector<float> rho32(f32 ? (n ? n : 1) : 0);
  for (size_t i = 0; f32 && i < n; ++i)
    rho32[i] = (float)rho_cells[i];
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_AMR;
  in.amr = a.view();
  double dummy = 0.0;
  in.density = f32 ? (const void *)rho32.data() : (n ? (const void *)rho_cells.data() : (const void *)&dummy);
  in.density_type = f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  return phewtest::run_input(in, p, n, sentinel, adjust);
}

std::unique_ptr<CoreRun> run_graph(const Graph &g, const phew_params &p, int64_t sentinel)
{
  return phewtest::run_input(graphref::graph_input(g), p, (size_t)g.n(), sentinel);
}

::testing::AssertionResult covered_cells_unlabelled(const LeafGraph &lg, const CoreRun &r)
{
  if (r.patch.size() != lg.leaf_of_cell.size())
    return ::testing::AssertionFailure() << "label arrays have " << r.patch.size() << " cells, the blocks "
                                         << lg.leaf_of_cell.size();
  int64_t bad = 0, first = -1;
  for (size_t c = 0; c < lg.leaf_of_cell.size(); ++c)
    if (lg.leaf_of_cell[c] < 0 && (r.patch[c] != -1 || r.clump[c] != -1 || r.halo[c] != -1)) {
      if (first < 0)
        first = (int64_t)c;
      ++bad;
    }
  if (!bad)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " covered cell(s) have labels other than -1, first block cell "
                                       << first << ": " << r.patch[(size_t)first] << " " << r.clump[(size_t)first]
                                       << " " << r.halo[(size_t)first];
}

void to_leaves(const LeafGraph &lg, const CoreRun &r, std::vector<int64_t> &patch, std::vector<int64_t> &clump,
               std::vector<int64_t> &halo)
{
  patch.assign((size_t)lg.n(), -9);
  clump.assign((size_t)lg.n(), -9);
  halo.assign((size_t)lg.n(), -9);
  for (int64_t i = 0; i < lg.n(); ++i) {
    const size_t c = (size_t)lg.cell_of_leaf[(size_t)i];
    if (c < r.patch.size()) {
      patch[(size_t)i] = r.patch[c];
      clump[(size_t)i] = r.clump[c];
      halo[(size_t)i] = r.halo[c];
    }
  }
}

} // namespace amrref
