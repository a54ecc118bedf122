// Shared helpers of the core's GoogleTest suite: a density field with its grid, a wrapper
// that runs phew_find_clumps and owns the labels and the result, neighbour iteration in the
// total order the core uses, seeded random fields, and consistency checks between the
// per-cell labels and the catalogue.
#ifndef PHEW_TEST_UTIL_H
#define PHEW_TEST_UTIL_H

#include "phew/phew.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace phewtest {

// A whole grid on one process. rho holds the values exactly as the core sees them (for a
// float32 field, the float values converted to double).
struct Field {
  int64_t n[3] = {0, 0, 0};
  int periodic[3] = {0, 0, 0};
  double origin[3] = {0.0, 0.0, 0.0};
  double spacing[3] = {1.0, 1.0, 1.0};
  bool f32 = false;
  std::vector<double> rho;
  std::vector<float> rho32;

  Field() = default;
  Field(int64_t nx, int64_t ny, int64_t nz, double fill = 0.0);

  int64_t size() const { return n[0] * n[1] * n[2]; }
  int64_t id(int64_t x, int64_t y, int64_t z) const { return x + n[0] * (y + n[1] * z); }
  void coords(int64_t id, int64_t c[3]) const
  {
    c[0] = id % n[0];
    c[1] = (id / n[0]) % n[1];
    c[2] = id / (n[0] * n[1]);
  }
  double &at(int64_t x, int64_t y, int64_t z) { return rho[(size_t)id(x, y, z)]; }
  double at(int64_t x, int64_t y, int64_t z) const { return rho[(size_t)id(x, y, z)]; }
  void set_periodic(bool p) { periodic[0] = periodic[1] = periodic[2] = p ? 1 : 0; }
  // Round every value to float and hand the core a float32 array from now on.
  void to_float32();
  double cell_volume() const { return spacing[0] * spacing[1] * spacing[2]; }
};

// a is higher than b: density, then lower global id.
inline bool higher(const Field &f, int64_t a, int64_t b)
{
  const double ra = f.rho[(size_t)a], rb = f.rho[(size_t)b];
  return ra > rb || (ra == rb && a < b);
}

// Calls fn(q) for each of the (up to) 26 neighbours q != c of cell c, wrapping periodic axes.
// On a periodic axis of one or two cells a neighbour may come more than once.
template <class Fn> void for_each_neighbour(const Field &f, int64_t c, Fn fn)
{
  int64_t x[3];
  f.coords(c, x);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy && !dz)
          continue;
        const int d[3] = {dx, dy, dz};
        int64_t y[3];
        bool ok = true;
        for (int a = 0; a < 3 && ok; ++a) {
          y[a] = x[a] + d[a];
          if (y[a] < 0 || y[a] >= f.n[a]) {
            if (!f.periodic[a])
              ok = false;
            else
              y[a] = (y[a] + f.n[a]) % f.n[a];
          }
        }
        if (!ok)
          continue;
        const int64_t q = f.id(y[0], y[1], y[2]);
        if (q != c)
          fn(q);
      }
}

// Highest neighbour of c in the total order, or c itself if c is a peak.
int64_t highest_neighbour(const Field &f, int64_t c);

// The labels and the result of one phew_find_clumps call, with the context it ran in (its
// message says why a failed call failed); frees the result.
struct Run {
  phew_status status = PHEW_OK;
  phew_context context;
  phew_clump_result result{};
  std::vector<int64_t> patch, clump, halo;
  Run() { phew_context_init(&context); }
  Run(const Run &) = delete;
  Run &operator=(const Run &) = delete;
  ~Run() { phew_clump_result_free(&result); }
  int64_t n_clumps() const { return result.n_clumps; }
  int64_t n_haloes() const { return result.n_haloes; }
  const phew_object &clump_row(int64_t i) const { return result.clumps[i]; }
  const phew_object &halo_row(int64_t i) const { return result.haloes[i]; }
};

// Sets more of the input and of the context of a run (callbacks, communicator, threads) before
// the call.
using Adjust = std::function<void(phew_input &, phew_context &)>;

// phew_find_clumps on any input with n cells: labels start at sentinel (arrays of one element
// when n is 0) and come back per cell. `adjust` may set more of the input and the context.
std::unique_ptr<Run> run_input(const phew_input &in, const phew_params &p, size_t n, int64_t sentinel = -7,
                               const Adjust &adjust = nullptr);
// Label arrays are filled with `sentinel` before the call so unwritten cells show.
std::unique_ptr<Run> run(const Field &f, const phew_params &p, int64_t sentinel = -7, const Adjust &adjust = nullptr);

// The same field handed to the core as an explicit graph (phew_graph): the 26-neighbour
// stencil written out, cell volumes, centres and the periodic box, local cells stored in an
// order shuffled by `shuffle_seed` (0: grid order). Labels are returned in grid order.
// `adjust` may set more of the input and the context (callbacks) before the run.
std::unique_ptr<Run> run_graph(const Field &f, const phew_params &p, uint64_t shuffle_seed, int64_t sentinel = -7,
                               const Adjust &adjust = nullptr);

phew_params make_params(double threshold, double relevance = 2.0, int saddle_merging = 0, double saddle_threshold = 0.0,
                        double mass_threshold = 0.0);

// ---- seeded random fields -------------------------------------------------------------------
struct SplitMix {
  uint64_t state;
  explicit SplitMix(uint64_t seed) : state(seed) {}
  uint64_t next();
  double uniform() { return (double)(next() >> 11) * 0x1.0p-53; } // [0, 1)
  double normal();
};

Field white_noise(int64_t nx, int64_t ny, int64_t nz, uint64_t seed);
// White noise smoothed by `passes` three-point box filters along each axis (wrapping, so the
// field is also smooth across the box edges when used periodically).
Field smoothed_noise(int64_t nx, int64_t ny, int64_t nz, uint64_t seed, int passes);
// Values of f replaced by floor(levels * rho): many exact ties and plateaus.
void quantize(Field &f, int levels);
// The q-quantile of the values.
double quantile(const Field &f, double q);

// ---- checks ---------------------------------------------------------------------------------
// Brute force: cells above the threshold higher than all their neighbours.
std::vector<int64_t> brute_force_peaks(const Field &f, double threshold);
// Connected components (26-connectivity, periodic as the field) of the cells above the
// threshold, by breadth-first search; -1 for other cells. Returns the number of components.
int64_t connected_components(const Field &f, double threshold, std::vector<int64_t> &component);
// Two labellings define the same partition of the cells (and -1 on the same cells).
::testing::AssertionResult same_partition(const std::vector<int64_t> &a, const std::vector<int64_t> &b);
// The labels and the catalogue of a successful run agree with each other and with the field:
// compact ids, cell counts, masses, minimum/mean densities, peak cells, catalogue order.
void check_consistency(const Field &f, const phew_params &p, const Run &r);
// Two runs give bit-identical labels, catalogues and dendrograms.
void expect_identical(const Run &a, const Run &b);
// The statistics of peaks, saddles, noise removal and merging agree (not n_cells, n_test_cells).
void expect_same_merging_stats(const phew_stats &s, const phew_stats &t);

std::string describe(const phew_object &o);

} // namespace phewtest

#endif
