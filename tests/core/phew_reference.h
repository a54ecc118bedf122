// An independent, deliberately plain serial implementation of the rules libphew implements
// (the paper's serial algorithm, sections 2.2 to 2.7): sort the test cells and copy labels
// from the highest neighbour, a std::map of saddles per pair of peaks, level-by-level
// merging with std::map neighbour lists, long double sums. Used to check the core's labels,
// catalogues and dendrogram on random fields.
#ifndef PHEW_REFERENCE_H
#define PHEW_REFERENCE_H

#include "phew_test_util.h"

#include <array>
#include <cstdint>
#include <vector>

namespace phewref {

struct Node {
  int32_t level;
  int64_t peak_id;
  int32_t parent_level; // -1 for roots
  int64_t parent_peak;  // -1 for roots
  int64_t clump_id;
  int64_t halo_id;
  double peak_density;
  double saddle_density;
  int64_t n_cells;
  double mass;
};

struct Result {
  std::vector<int64_t> patch, clump, halo;
  std::vector<phew_object> clumps, haloes;
  // Per object and axis: the centre of mass is unambiguous (every cell lies within a quarter
  // of the box of the peak on a periodic axis, or the axis is not periodic). An object
  // spanning more of a periodic box has no well-defined centre of mass; it is not compared.
  std::vector<std::array<bool, 3>> clump_com_defined, halo_com_defined;
  std::vector<Node> nodes; // kept nodes, by level then peak order
  int64_t n_test = 0, n_peaks = 0, n_pairs = 0, n_discarded = 0, n_clumps_found = 0, n_haloes_found = 0;
  int32_t noise_levels = 0, saddle_levels = 0;
};

Result find_clumps(const phewtest::Field &f, const phew_params &p);

// Compare a core run with the reference: labels exactly, catalogue (ids, counts, peak and
// saddle densities, relevance exactly; masses and means to 1e-12 relative; centres of mass to
// 1e-9 of the box), dendrogram (as a tree keyed by peak and level), statistics.
void expect_matches(const phewtest::Field &f, const phewtest::Run &core, const Result &ref);

} // namespace phewref

#endif
