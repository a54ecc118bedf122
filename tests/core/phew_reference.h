// The grid reference: the plain serial PHEW of graph_reference.h run on a uniform grid's
// 26-neighbour graph (global ids ix + nx * (iy + ny * iz), cell volumes, cell centres, the
// grid's periodic box). Used to check the core's labels, catalogues and dendrogram on random
// fields.
#ifndef PHEW_REFERENCE_H
#define PHEW_REFERENCE_H

#include "graph_reference.h"

namespace phewref {

using graphref::Node;
// As graphref::Result; clump_com_defined / halo_com_defined per object and axis follow the
// grid's rule, in whole cells: the centre of mass is unambiguous (every cell lies within a
// quarter of the box of the peak on a periodic axis, or the axis is not periodic). An object
// spanning more of a periodic box has no well-defined centre of mass; it is not compared.
using graphref::Result;

// The grid's graph (with neighbour lists, or without when only the comparison needs it).
graphref::Graph grid_graph(const phewtest::Field &f, bool with_neighbours = true);

Result find_clumps(const phewtest::Field &f, const phew_params &p);

// Compare a core run with the reference: labels exactly, catalogue (ids, counts, peak and
// saddle densities, relevance exactly; volumes to 1e-15 relative, masses and means to 1e-12
// relative; centres of mass to 1e-9 of the box), dendrogram (as a tree keyed by peak and
// level), statistics.
void expect_matches(const phewtest::Field &f, const phewtest::Run &core, const Result &ref);

} // namespace phewref

#endif
