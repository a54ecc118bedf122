#include "phew_reference.h"

#include <algorithm>
#include <cmath>

namespace phewref {

using phewtest::Field;

graphref::Graph grid_graph(const Field &f, bool with_neighbours)
{
  graphref::Graph g;
  const int64_t n = f.size();
  g.rho = f.rho;
  g.gid.resize((size_t)n);
  g.volume.assign((size_t)n, f.cell_volume());
  g.position.resize((size_t)(3 * n));
  for (int d = 0; d < 3; ++d) {
    g.box_origin[d] = f.origin[d];
    g.box_size[d] = (double)f.n[d] * f.spacing[d];
    g.periodic[d] = f.periodic[d];
  }
  g.offsets.push_back(0);
  std::vector<int64_t> list;
  for (int64_t c = 0; c < n; ++c) {
    g.gid[(size_t)c] = c;
    int64_t x[3];
    f.coords(c, x);
    for (int d = 0; d < 3; ++d)
      g.position[(size_t)(3 * c + d)] = f.origin[d] + ((double)x[d] + 0.5) * f.spacing[d];
    if (!with_neighbours)
      continue;
    list.clear();
    phewtest::for_each_neighbour(f, c, [&](int64_t q) {
      if (q != c)
        list.push_back(q);
    });
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    g.neighbours.insert(g.neighbours.end(), list.begin(), list.end());
    g.offsets.push_back((int64_t)g.neighbours.size());
  }
  return g;
}

Result find_clumps(const Field &f, const phew_params &p)
{
  Result r = graphref::find_clumps(grid_graph(f), p);
  // the centre of mass is defined when the object's extent from the peak, in whole cells, is
  // under a quarter of the grid on every periodic axis
  auto defined = [&](const std::vector<std::array<double, 3>> &extent, std::vector<std::array<bool, 3>> &ok) {
    for (size_t i = 0; i < extent.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        const int64_t cells = std::llround(extent[i][(size_t)d] / f.spacing[d]);
        ok[i][(size_t)d] = !f.periodic[d] || 4 * cells < f.n[d];
      }
  };
  defined(r.clump_extent, r.clump_com_defined);
  defined(r.halo_extent, r.halo_com_defined);
  return r;
}

void expect_matches(const Field &f, const phewtest::Run &core, const Result &ref)
{
  ASSERT_EQ(core.status, PHEW_OK) << core.context.message;
  graphref::expect_matches(grid_graph(f, false), core.result, core.patch, core.clump, core.halo, ref, 1e-15);
}

} // namespace phewref
