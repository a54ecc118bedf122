/* The physics of structures (phew_structure_physics): unbinding and halo properties on any
 * grouping of particles.
 *
 *   cosmology.c        G, H(a), rho_crit(a), Omega_m(a) and Bryan & Norman's Delta_vir
 *   structure_tree.c   the parent table checked, heights, roots and each subtree's range
 *   potential.c        softened potentials of a structure's members: direct sums or an octree
 *                      (octree.h: the tree's pieces, octree.c and octree_walk.c)
 *   potential_spread.c the same bits for a structure spread over the ranks (spread.h: the top
 *                      of the tree, spread_top.c, and the locally essential tree, spread_let.c)
 *   potential_spherical.c  RAMSES's potential of the binned mass profile about a centre
 *   unbind.c           one structure's energies and bulk velocity; candidates to the parent
 *   properties.c       the member-based properties of one structure
 *   overdensity.c      spherical-overdensity masses from all particles about each centre
 *                      (overdensity.h: the walk, overdensity_walk.c; the rows of spread
 *                      structures by every rank together, overdensity_spread.c)
 *   reduce.c           sums and extrema over a structure's members on one rank or spread
 *   members.c          each top-level structure's particles to one rank, or spread over all
 *                      ranks when it is larger than gather_max; and the labels back
 *   membership.c       the bound and unbound particle ids in catalogue order, for writers
 *   physics_run.c      phew_structure_physics end to end
 *   physics_columns.c  the catalogue's columns
 *
 * The rank that holds a top-level structure (members.c) works on all its members in the order
 * of (preorder of their structure, id); a spread one is worked on by every rank together, each
 * with a contiguous share of that order. Sums are exact sums and orderings are by id, so
 * nothing depends on how the particles were spread: the same bits on any number of ranks. */
#ifndef PHEW_PHYSICS_H
#define PHEW_PHYSICS_H

#include "particles.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- reduce.c: over one structure's members, on this rank alone (c NULL) or over c ------------ */
/* The sum rounded to a double (0 below the range of doubles, infinite above). */
double exact_double(const exact_sum *s);
phew_status reduce_exact(comm *c, exact_sum *sums, int64_t n); /* PHEW_ERROR_MEMORY agreed */
void reduce_counts(comm *c, int64_t *counts, int64_t n);
double reduce_max(comm *c, double x);
int reduce_failed(comm *c, int failed);    /* whether any rank failed */
int64_t reduce_before(comm *c, int64_t n); /* the sum of n over the lower ranks (-1: no memory, agreed) */
/* before[k]: the exact sum of own[k] over the lower ranks (0 for NULL), k < n. */
phew_status reduce_exact_before(comm *c, const exact_sum *own, int64_t n, exact_sum *before);
int reduce_parts(const comm *c); /* the ranks taking part: 1 for NULL */
/* out[r] = rank r's item (item_size bytes each, reduce_parts(c) of them). */
void reduce_allgather(comm *c, const void *item, size_t item_size, void *out);

/* ---- cosmology.c ----------------------------------------------------------------------------- */
/* G in Mpc (km/s)^2 / Msun (from the IAU's nominal GM_sun and the parsec). */
#define PHYSICS_G_ASTRO 4.30091727003628e-9

typedef struct physics_units {
  double G;         /* in the energies' units: astronomers' or the caller's */
  double a;         /* scale factor (1 without a cosmology) */
  int comoving;     /* the cosmology is known: the overdensity columns can be computed */
  double rho_crit;  /* critical density at a, in comoving mass per comoving volume
                       (Msun/h / (Mpc/h)^3 times a^3), comoving only */
  double omega_m_a; /* Omega_m(a) */
  double delta_vir; /* Bryan & Norman (1998), relative to rho_crit(a) */
} physics_units;

/* The units of a run; fails (PHEW_ERROR_ARGUMENT) on a cosmology that is not flat LCDM or a
 * scale factor outside (0, 1e3]. */
phew_status physics_units_make(physics_units *u, const phew_physics_params *p, call_result *result);

/* ---- structure_tree.c -------------------------------------------------------------------------- */
typedef struct structure_tree {
  int64_t n;
  int64_t *parent;      /* per structure, -1 at the top */
  int64_t *root;        /* per structure: its top-level structure */
  int32_t *height;      /* per structure */
  int64_t *order;       /* preorder: roots by id, each structure's children by id */
  int64_t *place;       /* per structure: its index in order */
  int64_t *subtree_end; /* per structure: its subtree is order[place .. subtree_end) */
  int32_t max_height;
} structure_tree;

/* Checks the table (parents in range, no structure its own ancestor) and builds the tree. */
phew_status structure_tree_build(structure_tree *t, int64_t n, const int64_t *parent, call_result *result);
void structure_tree_free(structure_tree *t);

/* ---- potential.c -------------------------------------------------------------------------------- */
typedef struct potential_params {
  double eps2;  /* softening squared */
  double theta; /* opening angle */
  int64_t direct_max;
  double g_over_a; /* G / a: potentials are -g_over_a * sum m / sqrt(r^2 + eps^2) */
  int n_threads;
} potential_params;

/* phi[i] for the n particles at position (3 each, unwrapped: plain differences are the
 * separations) with masses (NULL: 1 each), in their order: each phi[i] sums the others in an
 * order fixed by the positions' order. PHEW_ERROR_MEMORY if memory ran out. */
phew_status potential_compute(const double *position, const double *mass, int64_t n, const potential_params *p,
                              double *phi);

/* Collective over c: the potentials of one structure's members spread over the ranks of c (a
 * structure too large for one rank). This rank holds n of them: positions (3 each, unwrapped in
 * one frame common to every rank), masses (NULL: 1 each) and order[i], the member's index in the
 * structure's canonical order (0 .. n_total - 1 over all ranks, each index once). phi[i] has the
 * bits potential_compute gives that member when it is called with all the members in canonical
 * order, for any split over ranks and any thread count. A rank holds its own members and the
 * cells and members of others that its walks open (a locally essential tree), never the whole
 * structure. PHEW_ERROR_MEMORY (agreed on every rank) if memory ran out. */
phew_status potential_spread(comm *c, const double *position, const double *mass, const int64_t *order, int64_t n,
                             const potential_params *p, double *phi);
/* What potential_spread held on this rank (for tests and benchmarks): the members whose walks it
 * ran, and the cells and members of other ranks it imported for them. */
typedef struct spread_stats {
  int64_t members_held, members_imported, cells_imported;
} spread_stats;
/* potential_spread, also filling *stats (if not NULL). Orders out of range fail with
 * PHEW_ERROR_ARGUMENT, and so does an order repeated where one rank sees both (every repeat in
 * direct sums); positions that are not finite fail with PHEW_ERROR_DATA (on every rank). */
phew_status potential_spread_counted(comm *c, const double *position, const double *mass, const int64_t *order,
                                     int64_t n, const potential_params *p, double *phi, spread_stats *stats);

/* ---- potential_spherical.c -------------------------------------------------------------------- */
typedef struct spherical_params {
  int n_bins, log_bins;
  double r_min;    /* inner radius of the log bins */
  double g_over_a; /* G / a */
} spherical_params;

/* phi[i] of the n members (unwrapped positions) from the binned mass profile about centre (in
 * the same frame), relative to phi at distance `border` when that is within the largest
 * distance (INFINITY: no cut). Collective over c when not NULL (the members spread). */
phew_status potential_spherical(comm *c, const double *position, const double *mass, int64_t n, const double *centre,
                                double border, const spherical_params *p, double *phi);

/* ---- members.c ------------------------------------------------------------------------------- */
/* A labelled particle on the rank that holds its top-level structure. */
typedef struct member {
  int64_t id;
  int64_t label; /* as given: its innermost structure */
  int64_t bound; /* as unbound: the innermost structure it is bound to, or -1 */
  double position[3];
  double velocity[3];
  double mass;
  int32_t origin_rank; /* where it was passed, and its index there */
  int32_t pad;
  int64_t origin_index;
} member;

/* This rank's top-level structures and their members. */
typedef struct member_set {
  int64_t n;
  member *m; /* in (place of the label's structure, id) order */
  int64_t n_roots;
  int64_t *roots;      /* the top-level structures this rank holds or shares, by place */
  int32_t *root_owner; /* per structure (indexed by id): the rank holding its top level, or
                          MEMBERS_SPREAD: every rank holds a contiguous share of its members */
} member_set;

#define MEMBERS_SPREAD (-1)

/* Collective: the members of every top-level structure onto one rank (contiguous shares of the
 * roots by member count), or, for those with more than gather_max members, spread over the
 * ranks in contiguous shares of the canonical order; in canonical order on every rank. label:
 * per particle of s (own ones). */
phew_status members_gather(const points_context *x, const particle_set *s, const structure_tree *t,
                           const int64_t *label, int64_t gather_max, member_set *out);
/* Collective: each member's `bound` label and its energy (energy[k] for m->m[k]; NULL: none)
 * back to where its particle was passed (either output may be NULL). */
phew_status members_return(const points_context *x, const member_set *m, const double *energy, int64_t *bound_label,
                           double *bound_energy, int64_t n_passed);
void member_set_free(member_set *m);

/* ---- membership.c ---------------------------------------------------------------------------- */
/* Collective, after the unbinding: out's membership lists (this rank's share) and the rows'
 * offsets and unbound counts (rows: this rank's structures). */
phew_status membership_lists(comm *c, const member_set *ms, const structure_tree *t, phew_structure *rows,
                             int64_t n_rows, phew_physics_result *out);

/* ---- unbind.c ------------------------------------------------------------------------------- */
typedef struct unbind_params {
  int unbind;
  double tolerance;
  int max_iterations;
} unbind_params;

/* One structure, all its members m[0 .. n) (those whose bound label is the structure itself are
 * its candidates; the others are bound to its substructure), with their potentials: candidates
 * that stay unbound get `parent` as their bound label. *iterations: the number of bulk velocity
 * estimates; *n_candidates counts the candidates. Collective over c when not NULL (m: this
 * rank's share of the members). */
phew_status unbind_structure(comm *c, member *m, int64_t n, const double *phi, int64_t structure, int64_t parent,
                             const unbind_params *p, int *iterations, int64_t *n_candidates);
/* energy[k] = 0.5 |v_k - bulk|^2 + phi[k] for the members bound to `structure` itself (the
 * unbinding's specific energy, with the catalogue's bulk velocity); the others are untouched. */
void bound_energies(const member *m, int64_t n, const double *phi, int64_t structure, const double bulk[3],
                    double *energy);

/* ---- properties.c ----------------------------------------------------------------------------- */
/* The member-based fields of row (everything but the spherical-overdensity columns, c200c and
 * spin_bullock): m[0 .. n) are the structure's members after its unbinding, position the
 * unwrapped positions, phi their potentials. A member is bound when its bound label is the
 * structure or in its subtree (not `parent`, not -1). Collective over c when not NULL. */
phew_status properties_of_members(comm *c, const member *m, int64_t n, const double *position, const double *phi,
                                  int64_t structure, const structure_tree *t, const physics_units *u, double softening,
                                  const points_context *x, phew_structure *row);

/* The concentration c of an NFW halo with Vmax / V200 = ratio (NaN below 1). */
double nfw_concentration(double ratio);

/* ---- overdensity.c -------------------------------------------------------------------------- */
/* Collective: the spherical-overdensity columns of every row (rows: this rank's, each with its
 * centre; all particles of s are counted), then c200c and spin_bullock. The rows of spread
 * structures (root_owner[t->root[id]] == MEMBERS_SPREAD, on rank 0) are walked by every rank. */
phew_status overdensity_masses(const points_context *x, const particle_set *s, const physics_units *u,
                               const structure_tree *t, const int32_t *root_owner, phew_structure *rows,
                               int64_t n_rows);

#endif
