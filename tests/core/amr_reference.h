// An independent reference for AMR hierarchies (issue 8), sharing nothing with core/src:
//
//  (a) build_leaf_graph: the leaf cells of a block-structured AMR description (refinement
//      ratio 2) and their neighbour relation, by brute force: two leaf cells are neighbours
//      when their closed boxes touch (face, edge or corner, any level difference), tested on
//      exact integer coordinates at the finest level, with periodic axes wrapping the whole
//      domain. Candidate pairs come from a plain bucketing by level-0 cell (two touching
//      cells lie in the same or in touching level-0 cells). Global ids, volumes and centres
//      follow phew.h.
//  (b) find_clumps: the plain serial PHEW on an explicit graph of graph_reference.h, run on
//      the leaf graph (make_graph), giving per-cell PeakPatchId / ClumpId / HaloId, the clump
//      and halo catalogues and the dendrogram.
//
// Plus helpers to run the core on the same inputs (PHEW_MESH_AMR from the block description,
// PHEW_MESH_GRAPH from the explicit graph) and to compare a core run with the reference.
#ifndef PHEW_AMR_REFERENCE_H
#define PHEW_AMR_REFERENCE_H

#include "graph_reference.h"

namespace amrref {

// ---- the AMR description -------------------------------------------------------------------
struct Amr {
  int64_t level0_dims[3] = {1, 1, 1};
  double origin[3] = {0.0, 0.0, 0.0};
  double spacing[3] = {1.0, 1.0, 1.0};
  int periodic[3] = {0, 0, 0};
  std::vector<phew_amr_block> blocks;

  void add(int32_t level, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz, int32_t owner = 0);
  int max_level() const;
  int64_t level_dim(int level, int axis) const { return level0_dims[axis] << level; }
  // offset(l): the number of cells of all coarser levels, as if each covered the domain
  int64_t level_offset(int level) const;
  int64_t global_id(int level, int64_t ix, int64_t iy, int64_t iz) const
  {
    return level_offset(level) + ix + level_dim(level, 0) * (iy + level_dim(level, 1) * iz);
  }
  int64_t block_cells(size_t b) const { return blocks[b].dims[0] * blocks[b].dims[1] * blocks[b].dims[2]; }
  int64_t total_cells() const; // all blocks, covered cells included
  phew_amr view() const;
};

// One cell of a block (covered or not), in block list order, x fastest inside a block.
struct BlockCell {
  size_t block;
  int level;
  int64_t idx[3]; // index on its level
};
std::vector<BlockCell> block_cells(const Amr &a);

// ---- (a) the leaf-cell graph -----------------------------------------------------------------
struct LeafGraph {
  // per leaf, in block list order (x fastest in a block, covered cells skipped)
  std::vector<int64_t> gid;
  std::vector<int> level;
  std::vector<std::array<int64_t, 3>> idx;
  std::vector<double> volume;
  std::vector<double> position;             // 3 per leaf
  std::vector<int64_t> offsets, neighbours; // CSR over leaves, each list sorted and unique
  std::vector<int64_t> leaf_of_cell;        // per block cell: leaf index, -1 when covered
  std::vector<int64_t> cell_of_leaf;        // per leaf: block cell index
  double box_origin[3], box_size[3];
  int periodic[3];
  int64_t n() const { return (int64_t)gid.size(); }
  bool are_neighbours(int64_t a, int64_t b) const;
};
LeafGraph build_leaf_graph(const Amr &a);

// ---- (b) plain PHEW on an explicit graph: the graph reference ---------------------------------
using graphref::Graph;
using graphref::Node;
using graphref::Result;
using graphref::find_clumps;
// the leaf graph with densities: rho_cells holds one value per block cell (all blocks)
Graph make_graph(const LeafGraph &g, const std::vector<double> &rho_cells);

// ---- running the core -------------------------------------------------------------------------
using CoreRun = phewtest::Run;
// PHEW_MESH_AMR on one process: rho_cells holds every block cell (labels come back the same way).
// f32: the values are handed over as float (the caller rounds them beforehand if it compares).
std::unique_ptr<CoreRun> run_amr(const Amr &a, const std::vector<double> &rho_cells, const phew_params &p,
                                 bool f32 = false, int64_t sentinel = -7, const phewtest::Adjust &adjust = nullptr);
// PHEW_MESH_GRAPH with the explicit graph; labels per graph cell.
std::unique_ptr<CoreRun> run_graph(const Graph &g, const phew_params &p, int64_t sentinel = -7);

// Labels of block cells mapped to leaves (and covered cells checked to be -1).
::testing::AssertionResult covered_cells_unlabelled(const LeafGraph &lg, const CoreRun &r);
void to_leaves(const LeafGraph &lg, const CoreRun &from_cells, std::vector<int64_t> &patch, std::vector<int64_t> &clump,
               std::vector<int64_t> &halo);

// A core run (labels per graph cell) against the reference: labels exactly, statistics,
// catalogues (ids, counts, peak ids and densities, saddles, relevance exactly; masses, volumes
// and mean densities to 1e-12; centres to 1e-9 of the box), dendrogram keyed by (peak, level).
inline void expect_matches(const Graph &g, const phew_clump_result &core, const std::vector<int64_t> &patch,
                           const std::vector<int64_t> &clump, const std::vector<int64_t> &halo, const Result &ref)
{
  graphref::expect_matches(g, core, patch, clump, halo, ref, 1e-12);
}

using phewtest::describe;

} // namespace amrref

#endif
