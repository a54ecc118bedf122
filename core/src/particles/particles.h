/* The particle path: from the particles each rank passes to the graph PHEW runs on.
 *
 *   points_input.c    checks, global ids, the particles as float64 (a particle_set)
 *   domain.c          subvolumes balanced by particle count; particles to their owners and
 *                     the answers back
 *   padding.c         copies of neighbouring subvolumes' particles, as wide as each own
 *                     particle's neighbourhood needs; neighbours and density of own particles
 *   particle_graph.c  the symmetrised graph of nearest neighbours, with ghost particles
 *   points_run.c      the path up to the densities and the graph (points_prepare), which
 *                     phew_find_clumps (api/), phew_estimate_density (estimate_density.c)
 *                     and the halo finders (halos/) start with
 *
 * The neighbours themselves (kd-tree, kNN, SPH density) are in neighbours.h. */
#ifndef PHEW_PARTICLES_H
#define PHEW_PARTICLES_H

#include "neighbours.h"

#include <math.h>

/* The particles a rank holds: its own first, then padding copies of other ranks' particles. */
typedef struct particle_set {
  int64_t n_own; /* own particles: [0, n_own) */
  int64_t n;     /* with the padding: [n_own, n) */
  int64_t capacity;
  double *position; /* 3 per particle */
  int64_t *id;      /* global ids */
  double *mass;     /* NULL when every particle has mass 1 (the same on every rank) */
  int32_t *owner;   /* rank owning each padding particle (index i - n_own); NULL without padding */
  double *h;        /* smoothing lengths, when known (padding: from the owners) */
  /* own particles only */
  double *velocity;      /* 3 per particle, or NULL */
  double *density;       /* given densities, or NULL */
  int32_t *origin_rank;  /* where each own particle was passed (NULL: on this rank) */
  int64_t *origin_index; /* (NULL: here, in this order) */
} particle_set;

void particle_set_free(particle_set *s);
/* Room for n particles in every array the set has (padding arrays included). */
phew_status particle_set_reserve(particle_set *s, int64_t n);

/* What every rank knows about the particles and the parameters. */
typedef struct points_context {
  const phew_context *context; /* the caller's: threads, progress, cancel */
  comm *c;
  const phew_points *points;
  particle_box box;
  double lo[3], hi[3]; /* the domain: the box on periodic axes, else the particles' bounds */
  int64_t n_total;     /* particles on all ranks */
  int has_mass, has_velocity, has_density;
  int carries_velocity; /* s->velocity is read with the particles (not for PHEW: points_velocities) */
  int n_keep;           /* neighbours listed per particle (0: none) */
  int n_ordered;        /* of which the first n_ordered are in order, the rest a set (0: all
                           in order; HOP needs only its merge neighbours in order) */
  int k_search;         /* neighbours a search finds, itself counted */
  int n_threads;
  double mean_density; /* total mass / box volume, or 1 without a box */
  double slack;        /* absolute margin of the padding's distance tests: a few ulps of the
                          largest coordinate or box length (their rounding is absolute) */
  call_result *result;
} points_context;

/* A position wrapped into the box along periodic axes (there the domain's lo is the box's
 * origin); other axes keep it. */
static inline double points_wrap(const points_context *x, int axis, double v)
{
  if (!x->box.periodic[axis])
    return v;
  const double length = x->box.size[axis];
  double r = fmod(v - x->lo[axis], length);
  if (r < 0.0)
    r += length;
  return x->lo[axis] + r;
}

/* What the particles are read for: the neighbour searches and the density they need. */
typedef enum points_use {
  POINTS_DENSITY, /* the density alone (estimated) */
  POINTS_PHEW,    /* PHEW: the density (given or estimated) and the neighbour graph */
  POINTS_FOF,     /* Friends-of-Friends: positions only (a given density is ignored) */
  POINTS_HOP      /* HOP: the density (given or estimated) and the nearest lists, which keep
                     their padding (input->points.n_neighbours others per particle) */
} points_use;

/* Collective: checks the caller's particles and makes this rank's particle_set of them (own
 * particles in the order passed, global ids, float64); fills the context. */
phew_status points_read(points_context *x, const phew_input *in, points_use use, particle_set *s);
/* Collective: the own particles' velocities (s->velocity) from where they were passed, for a
 * set read without them (POINTS_PHEW leaves them out until its densities are known: the run's
 * peak memory is then 24 bytes per particle lower). Nothing to do without velocities. */
phew_status points_velocities(points_context *x, const phew_input *in, particle_set *s);

/* Subvolumes: one box per rank, balanced by particle count (recursive bisection). */
typedef struct subvolume {
  double lo[3], hi[3];
} subvolume;

/* Collective: the subvolumes of all ranks (c->size of them). */
phew_status domain_split(const points_context *x, const particle_set *s, subvolume *parts);
/* Collective: every particle goes to the rank whose subvolume holds it; s then holds this
 * rank's own particles, with their origins. */
phew_status domain_redistribute(const points_context *x, const subvolume *parts, particle_set *s);
/* Collective: per own particle, n_values doubles or int64s (value_size bytes in all) travel
 * back to where it was passed; out has one entry per particle passed here. */
phew_status domain_return(const points_context *x, const particle_set *s, const void *values, size_t value_size,
                          void *out, int64_t n_passed);

/* Collective: points_read, then (on several ranks) the subvolumes (*parts, one per rank;
 * free it) and every particle to its owner, then spatial_order (not for FoF, which sorts
 * the particles by cell itself). */
phew_status points_distribute(points_context *x, const phew_input *in, points_use use, particle_set *s,
                              subvolume **parts);

/* Collective: the own particles in space-filling-curve order (origin_index keeps where each
 * was passed). */
phew_status spatial_order(const points_context *x, particle_set *s);

/* Squared distance from a point to a subvolume, nearest image on periodic axes. */
double subvolume_distance2(const particle_box *box, const subvolume *v, const double *p);

/* The neighbours of the own particles, exact. */
typedef struct neighbour_result {
  double *h;        /* per own particle (when the density is estimated) */
  int32_t *nearest; /* n_keep per own particle: particle_set indices */
  int n_keep;
  int rounds;    /* padding rounds (1: the first width sufficed) */
  kd_tree *tree; /* the last search's tree, of every particle the set then held: the
                    density reuses it unless its padding adds particles */
  double seconds_tree, seconds_search;
} neighbour_result;

/* Collective: pads this rank's subvolume with copies of other ranks' particles until every
 * own particle's neighbourhood is inside it, and finds the neighbours. s gets the padding. */
phew_status padding_neighbours(const points_context *x, const subvolume *parts, particle_set *s, neighbour_result *r);
/* Collective: pads this rank's subvolume with every particle of the others within `width`
 * of it (nearest image on periodic axes), with its owner. sent (per own particle, or NULL):
 * 1 where the particle went to another rank as padding. */
phew_status padding_width(const points_context *x, const subvolume *parts, particle_set *s, double width,
                          uint8_t *sent);
/* Collective: densities of the own particles (units: mass per volume); s->h must hold the
 * own particles' smoothing lengths. The padding of s gains what the density needs; the
 * neighbours' padding keeps its place (the graph refers to it), with h 0 where its kernel
 * reaches no own particle. *reuse: the neighbour search's tree (of s's particles before the
 * density's padding), or NULL; used if that padding adds no particle, else a tree is built;
 * taken either way. lists (or NULL): the own particles' nearest lists, when they hold their balls
 * (sph_density_listed). */
phew_status padding_density(const points_context *x, const subvolume *parts, particle_set *s, kd_tree **reuse,
                            const density_lists *lists, double *rho, double *seconds);

/* The graph PHEW runs on: own particles first (in particle_set order), then ghosts. */
typedef struct particle_graph {
  phew_graph g;
  int32_t *neighbours; /* 32-bit lists (g.neighbours stays NULL) */
  int64_t *offsets;
  int64_t *global_id;
  unsigned char *ghost;
  int32_t *owner;
  double *position;
  double *mass; /* NULL: 1 each */
  double *volume;
  int shares_cells; /* no ghosts: global_id, position and mass are the particle set's */
} particle_graph;

/* Collective: the symmetrised graph of the n_keep nearest other particles. On one rank it
 * points into s's arrays: s must outlive it and keep them. The graph's rows are built in the
 * memory of r->nearest (the lists and the graph never both held): r->nearest is taken (NULL
 * after the call, whatever the outcome). */
phew_status particle_graph_build(const points_context *x, const particle_set *s, neighbour_result *r,
                                 particle_graph *pg);
void particle_graph_free(particle_graph *pg);

/* What the particle path makes on a rank, up to the densities (find_clumps_points.c). */
typedef struct points_run {
  comm c;
  points_context x;
  particle_set s;
  subvolume *parts;
  neighbour_result nr;
  particle_graph pg;
  double *rho;   /* per own particle; in units of the mean density when estimated */
  int n_ordered; /* set before points_prepare: points_context.n_ordered */
  double seconds[PHEW_PARTICLE_STAGE_COUNT];
} points_run;

/* Collective (run zeroed, run->c initialised): the particles read and distributed, their
 * neighbours and densities. POINTS_PHEW then builds the graph (and drops the lists and the
 * padding); POINTS_HOP keeps the nearest lists (run->nr.nearest) and the padding they refer to. */
phew_status points_prepare(points_run *run, const phew_context *context, const phew_input *in, points_use use,
                           call_result *result);
/* The stage times (maximum over ranks) and threads into result->stats. Collective. */
void points_run_stats(points_run *run, call_result *result);
void points_run_free(points_run *run);

#endif
