// An independent, deliberately plain serial implementation of the rules libphew implements
// (the paper's serial algorithm, sections 2.2 to 2.7) on an explicit graph of cells, sharing
// nothing with core/src: sort the test cells and copy labels from the highest neighbour, a
// std::map of saddles per pair of peaks, level-by-level noise removal and saddle merging with
// std::map neighbour lists, catalogue order, mass threshold, long double sums. It gives per-cell
// PeakPatchId / ClumpId / HaloId, the clump and halo catalogues and the dendrogram.
//
// The grid reference (phew_reference.h) runs it on a grid's 26-neighbour graph, the AMR
// reference (amr_reference.h) on the leaf cells of a hierarchy.
#ifndef PHEW_GRAPH_REFERENCE_H
#define PHEW_GRAPH_REFERENCE_H

#include "phew_test_util.h"

#include <array>

namespace graphref {

// Cells with densities, global ids (ties of density go to the lower id), volumes, centres and
// neighbour lists (CSR over local indices), in a box that may be periodic per axis.
struct Graph {
  std::vector<double> rho;
  std::vector<int64_t> gid;
  std::vector<int64_t> offsets, neighbours; // CSR, local indices
  std::vector<double> volume;
  std::vector<double> position; // 3 per cell
  double box_origin[3] = {0, 0, 0}, box_size[3] = {1, 1, 1};
  int periodic[3] = {0, 0, 0};
  int64_t n() const { return (int64_t)rho.size(); }
};

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
  std::vector<int64_t> patch, clump, halo; // per graph cell; patch holds the peak's global id
  std::vector<phew_object> clumps, haloes;
  // Per object and axis: the centre of mass (nearest image of every cell relative to the
  // peak) is unambiguous: every cell lies within a quarter of the box of the peak on a
  // periodic axis, or the axis is not periodic. An object spanning more of a periodic box has
  // no well-defined centre of mass; it is not compared.
  std::vector<std::array<bool, 3>> clump_com_defined, halo_com_defined;
  // Per object and axis: the largest |displacement| of a cell from the peak (nearest image).
  std::vector<std::array<double, 3>> clump_extent, halo_extent;
  std::vector<Node> nodes; // kept nodes, by level then peak order
  int64_t n_test = 0, n_peaks = 0, n_pairs = 0, n_discarded = 0, n_clumps_found = 0, n_haloes_found = 0;
  int32_t noise_levels = 0, saddle_levels = 0;
};

Result find_clumps(const Graph &g, const phew_params &p);

// A core run (labels per graph cell) against the reference: labels exactly, statistics,
// catalogues (ids, counts, peak ids and densities, saddles, relevance exactly; volumes to
// volume_tolerance relative, masses and mean densities to 1e-12; centres to 1e-9 of the box,
// where defined), dendrogram keyed by (peak, level), masses to 1e-12. Only g's densities, ids
// and box are used (not its neighbour lists).
void expect_matches(const Graph &g, const phew_clump_result &core, const std::vector<int64_t> &patch,
                    const std::vector<int64_t> &clump, const std::vector<int64_t> &halo, const Result &ref,
                    double volume_tolerance);

// The core's explicit-graph input for g (pointers into g).
phew_input graph_input(const Graph &g);

} // namespace graphref

#endif
