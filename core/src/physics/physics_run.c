/* phew_structure_physics end to end (physics.h): checks, the particles read, every top-level
 * structure's members on one rank, each structure unbound bottom-up with its properties, the
 * labels back, the spherical-overdensity masses, the catalogue on rank 0. */
#include "cube_root.h"
#include "physics.h"
#include "tracking.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void phew_physics_result_free(phew_physics_result *result)
{
  if (!result)
    return;
  free(result->structures);
  free(result->bound_ids);
  free(result->unbound_ids);
  phew_tracer_set_free(&result->most_bound);
  result->structures = NULL;
  result->bound_ids = result->unbound_ids = NULL;
  result->n_structures = result->n_bound_ids = result->n_unbound_ids = 0;
}

static phew_status check_params(const phew_physics_params *p, call_result *r)
{
  if (!p)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "no physics parameters");
  if (p->potential != PHEW_POTENTIAL_EXACT && p->potential != PHEW_POTENTIAL_SPHERICAL)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "unknown potential method %d (exact 0 or spherical 1)", (int)p->potential);
  if (p->n_mass_bins < 1 || p->n_mass_bins > 1000000)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the number of mass bins must be in 1 .. 1000000 (got %d)",
                     p->n_mass_bins);
  if (isnan(p->profile_r_min) || p->profile_r_min == 0.0 || p->profile_r_min == INFINITY)
    return phew_fail(r, PHEW_ERROR_ARGUMENT,
                     "the inner radius of the mass profile must be positive and finite (got %g; negative: the "
                     "softening)",
                     p->profile_r_min);
  if (isnan(p->softening) || p->softening == INFINITY)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the softening must be finite (got %g; negative: automatic)",
                     p->softening);
  if (!(p->opening_angle > 0.0 && p->opening_angle <= 1.0))
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the opening angle must be in (0, 1] (got %g)", p->opening_angle);
  if (p->direct_max < 0)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the direct-summation limit must be >= 0 (got %lld)",
                     (long long)p->direct_max);
  if (!(p->tolerance >= 0.0 && isfinite(p->tolerance)))
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the tolerance must be finite and >= 0 (got %g)", p->tolerance);
  if (p->max_iterations < 1)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the number of iterations must be at least 1 (got %d)", p->max_iterations);
  if (p->n_most_bound < 0)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the number of most-bound particles must be >= 0 (got %lld)",
                     (long long)p->n_most_bound);
  return PHEW_OK;
}

static phew_status check_call(const phew_input *in, const phew_structures *st, const phew_physics_params *p,
                              call_result *r)
{
  if (!in || in->mesh != PHEW_MESH_POINTS)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the physics of structures needs particles (mesh PHEW_MESH_POINTS)");
  if (!st)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "no structures");
  if (st->n_structures < 0)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the number of structures is negative (%lld)",
                     (long long)st->n_structures);
  if (in->points.n > 0 && !st->label)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "no structure labels for the particles");
  if (in->points.n > 0 && !in->points.velocity)
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the physics of structures needs the particles' velocities");
  for (int64_t i = 0; i < in->points.n; ++i)
    if (st->label[i] < -1 || st->label[i] >= st->n_structures)
      return phew_fail(r, PHEW_ERROR_ARGUMENT,
                       "particle %lld (counted from 0 on this rank) has structure label %lld: labels must be -1 or "
                       "0 .. %lld",
                       (long long)i, (long long)st->label[i], (long long)st->n_structures - 1);
  for (int64_t k = 0; p && p->potential == PHEW_POTENTIAL_SPHERICAL && st->centre && k < 3 * st->n_structures; ++k)
    if (!isfinite(st->centre[k]))
      return phew_fail(r, PHEW_ERROR_ARGUMENT, "structure %lld has no finite centre for the spherical method",
                       (long long)(k / 3));
  return check_params(p, r);
}

/* The softening used: given, or 1/50 of the mean interparticle spacing (of the box, else of
 * the particles' bounds). */
static double softening_of(const points_context *x, const phew_physics_params *p)
{
  if (p->softening >= 0.0)
    return p->softening;
  double volume = 1.0;
  for (int d = 0; d < 3; ++d)
    volume *= x->points->has_box ? x->points->box_size[d] : x->hi[d] - x->lo[d];
  return cube_root(volume / (double)x->n_total) / 50.0;
}

/* The first member at or after `from` whose structure's place is >= place. */
static int64_t first_at_place(const member *m, int64_t from, int64_t to, const structure_tree *t, int64_t place)
{
  while (from < to) {
    const int64_t mid = from + (to - from) / 2;
    if (t->place[m[mid].label] < place)
      from = mid + 1;
    else
      to = mid;
  }
  return from;
}

typedef struct physics_job {
  const points_context *x;
  const phew_structures *st;
  const member *root; /* the members of the top-level structure being worked on */
  int64_t root_n;
  const structure_tree *t;
  const physics_units *u;
  const phew_physics_params *p;
  double softening;
  int64_t n_candidates;
  double *energy; /* per member of the member set: its specific energy where bound, else NaN */
} physics_job;

static void empty_row(phew_structure *row)
{
  memset(row, 0, sizeof *row);
  const double nan = NAN;
  row->member_mass = row->bound_mass = row->bound_mass_inclusive = 0.0;
  row->bound_fraction = row->centre_potential = row->velocity_dispersion = nan;
  for (int d = 0; d < 3; ++d)
    row->centre[d] = row->center_of_mass[d] = row->bulk_velocity[d] = row->angular_momentum[d] = row->major_axis[d] =
        nan;
  row->m200c = row->r200c = row->m500c = row->r500c = row->m200m = row->r200m = row->mvir = row->rvir = nan;
  row->vmax = row->rmax = row->spin_peebles = row->spin_bullock = nan;
  row->axis_ratio_ba = row->axis_ratio_ca = row->c200c = nan;
  row->centre_id = -1;
}

/* The spherical method's centre: given, else the members' centre of mass (exact sums), in the
 * members' unwrapped frame. */
static phew_status spherical_centre(const physics_job *job, comm *c, const member *m, int64_t n, int64_t s,
                                    const double *position, const double *reference, double centre[3])
{
  if (job->st->centre) {
    for (int d = 0; d < 3; ++d)
      centre[d] = reference[d] + particle_delta(&job->x->box, d, job->st->centre[3 * s + d], reference[d]);
    return PHEW_OK;
  }
  exact_sum sum[4];
  for (int k = 0; k < 4; ++k)
    exact_sum_clear(&sum[k]);
  for (int64_t k = 0; k < n; ++k) {
    exact_sum_add(&sum[3], m[k].mass);
    for (int d = 0; d < 3; ++d)
      exact_sum_add_product(&sum[d], m[k].mass, position[3 * k + d]);
  }
  const phew_status status = reduce_exact(c, sum, 4);
  for (int d = 0; d < 3; ++d)
    centre[d] = exact_double(&sum[d]) / exact_double(&sum[3]);
  return status;
}

/* The spherical method: the centre, the border (the nearest particle of another structure of
 * the same top-level structure, for substructure with the saddle cut) and the potentials. */
static phew_status spherical_potential(const physics_job *job, comm *c, const member *m, int64_t n, int64_t s,
                                       const double *position, const double *mass, const double *reference, double *phi)
{
  const particle_box *box = &job->x->box;
  double centre[3] = {0.0, 0.0, 0.0};
  phew_status status = spherical_centre(job, c, m, n, s, position, reference, centre);
  double border2 = INFINITY;
  if (job->p->saddle_cut && job->t->parent[s] >= 0)
    for (int64_t k = 0; k < job->root_n; ++k) {
      const member *o = &job->root[k];
      if (o >= m && o < m + n)
        continue; /* a member of the structure */
      const double dx = particle_delta(box, 0, o->position[0], centre[0]),
                   dy = particle_delta(box, 1, o->position[1], centre[1]),
                   dz = particle_delta(box, 2, o->position[2], centre[2]);
      const double r2 = (dx * dx + dy * dy) + dz * dz;
      border2 = r2 < border2 ? r2 : border2;
    }
  border2 = -reduce_max(c, -border2);
  const spherical_params sp = {job->p->n_mass_bins, job->p->log_bins,
                               job->p->profile_r_min > 0.0 ? job->p->profile_r_min : job->softening,
                               job->u->G / job->u->a};
  if (status == PHEW_OK)
    status = potential_spherical(c, position, mass, n, centre, sqrt(border2), &sp, phi);
  return status;
}

/* The member with the smallest id (over the ranks of c): the frame's reference. */
typedef struct reference_pick {
  int64_t id;
  double position[3];
} reference_pick;

static phew_status reference_of(comm *c, const member *m, int64_t n, double position[3])
{
  reference_pick own = {INT64_MAX, {0.0, 0.0, 0.0}};
  for (int64_t k = 0; k < n; ++k)
    if (m[k].id < own.id) {
      own.id = m[k].id;
      memcpy(own.position, m[k].position, sizeof own.position);
    }
  reference_pick *all = phew_malloc((size_t)reduce_parts(c), sizeof *all);
  if (reduce_failed(c, !all)) {
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  reduce_allgather(c, &own, sizeof own, all);
  own = all[0];
  for (int r = 1; r < reduce_parts(c); ++r)
    own = all[r].id < own.id ? all[r] : own;
  memcpy(position, own.position, sizeof own.position);
  free(all);
  return PHEW_OK;
}

/* The exact potential: direct sums or the octree on this rank, or spread over c (each member
 * with its index in the structure's canonical order: the shares of the lower ranks first). */
static phew_status exact_potential(const physics_job *job, comm *c, int64_t n, const double *position,
                                   const double *mass, double *phi)
{
  const potential_params pp = {job->softening * job->softening, job->p->opening_angle, job->p->direct_max,
                               job->u->G / job->u->a, job->x->n_threads};
  if (!c)
    return potential_compute(position, mass, n, &pp, phi);
  const int64_t before = reduce_before(c, n);
  int64_t *order = phew_malloc((size_t)n + 1, sizeof *order);
  if (reduce_failed(c, before < 0 || !order)) {
    free(order);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < n; ++k)
    order[k] = before + k;
  const phew_status status = potential_spread(c, position, mass, order, n, &pp, phi);
  free(order);
  return status;
}

/* The unbinding of one structure with its potentials, then its properties and energies. */
static phew_status unbind_and_describe(physics_job *job, comm *c, member *m, int64_t n, int64_t s,
                                       const double *position, const double *phi, double *energy, phew_structure *row)
{
  const structure_tree *t = job->t;
  const int unbind = job->p->unbind && (job->p->unbind_top || t->parent[s] >= 0);
  const unbind_params up = {unbind, job->p->tolerance, job->p->max_iterations};
  int64_t candidates = 0;
  phew_status status = unbind_structure(c, m, n, phi, s, t->parent[s], &up, &row->iterations, &candidates);
  if (!c || c->rank == 0)
    job->n_candidates += candidates; /* a spread structure's count once */
  if (status == PHEW_OK)
    status = properties_of_members(c, m, n, position, phi, s, t, job->u, job->softening, job->x, row);
  if (status == PHEW_OK && isfinite(row->bulk_velocity[0]))
    bound_energies(m, n, phi, s, row->bulk_velocity, energy);
  return status;
}

/* One structure (collective over c when it is spread, c NULL otherwise): its members
 * unwrapped about the member with the smallest id, their potentials, the unbinding and the
 * properties. */
static phew_status one_structure(physics_job *job, comm *c, member *m, int64_t n, int64_t s, double *energy,
                                 phew_structure *row)
{
  const structure_tree *t = job->t;
  empty_row(row);
  row->id = s;
  row->parent_id = t->parent[s];
  row->height = t->height[s];
  int64_t n_all = n;
  reduce_counts(c, &n_all, 1);
  if (n_all == 0)
    return PHEW_OK;
  double *position = phew_malloc((size_t)n + 1, 3 * sizeof *position), *phi = phew_malloc((size_t)n + 1, sizeof *phi);
  double *mass = phew_malloc((size_t)n + 1, sizeof *mass);
  double reference[3];
  phew_status status = reduce_failed(c, !position || !phi || !mass) ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (status == PHEW_OK)
    status = reference_of(c, m, n, reference);
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k) {
    mass[k] = m[k].mass;
    for (int d = 0; d < 3; ++d)
      position[3 * k + d] = reference[d] + particle_delta(&job->x->box, d, m[k].position[d], reference[d]);
  }
  if (status == PHEW_OK && job->p->potential == PHEW_POTENTIAL_SPHERICAL)
    status = spherical_potential(job, c, m, n, s, position, mass, reference, phi);
  else if (status == PHEW_OK)
    status = exact_potential(job, c, n, position, mass, phi);
  if (status == PHEW_OK)
    status = unbind_and_describe(job, c, m, n, s, position, phi, energy, row);
  free(position);
  free(phi);
  free(mass);
  return status;
}

typedef struct height_place {
  int32_t height;
  int64_t place;
} height_place;

static int by_height(const void *pa, const void *pb)
{
  const height_place *a = pa, *b = pb;
  if (a->height != b->height)
    return a->height < b->height ? -1 : 1;
  return a->place < b->place ? -1 : (a->place > b->place);
}

/* Collective over c (a spread top-level structure): per structure of the subtree [first, last)
 * of places, how many ranks hold some of its members (NULL without memory, agreed). */
static int64_t *holders_of(comm *c, const member_set *ms, const structure_tree *t, int64_t first, int64_t last)
{
  int64_t *holders = phew_calloc((size_t)(last - first) + 1, sizeof *holders);
  if (reduce_failed(c, !holders)) {
    free(holders);
    return NULL;
  }
  for (int64_t k = first; k < last; ++k) {
    const int64_t b = first_at_place(ms->m, 0, ms->n, t, k);
    holders[k - first] = first_at_place(ms->m, b, ms->n, t, t->subtree_end[t->order[k]]) > b;
  }
  comm_sum_array(c, holders, last - first);
  return holders;
}

/* Every structure of the top-level structure `root`, by height (then preorder). With c (the
 * structure is spread), a structure whose members one rank holds all of is worked on by that
 * rank alone (the same code and bits, no messages; not with the saddle cut, whose border looks
 * at the whole top-level structure), the others by every rank together, rank 0 keeping their
 * rows. */
static phew_status one_tree(physics_job *job, comm *c, member_set *ms, int64_t root, phew_structure *rows,
                            int64_t *n_rows)
{
  const structure_tree *t = job->t;
  const int64_t first = t->place[root], last = t->subtree_end[root];
  height_place *order = phew_malloc((size_t)(last - first), sizeof *order);
  int64_t *holders = c ? holders_of(c, ms, t, first, last) : NULL;
  if (reduce_failed(c, !order || (c && !holders))) {
    free(order);
    free(holders);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = first; k < last; ++k) {
    order[k - first].height = t->height[t->order[k]];
    order[k - first].place = k;
  }
  qsort(order, (size_t)(last - first), sizeof *order, by_height);
  const int64_t begin = first_at_place(ms->m, 0, ms->n, t, first), end = first_at_place(ms->m, begin, ms->n, t, last);
  job->root = ms->m + begin;
  job->root_n = end - begin;
  const int whole_tree_border = job->p->potential == PHEW_POTENTIAL_SPHERICAL && job->p->saddle_cut;
  phew_status status = PHEW_OK, alone = PHEW_OK;
  for (int64_t k = 0; status == PHEW_OK && k < last - first; ++k) {
    const int64_t s = t->order[order[k].place];
    const int64_t b = first_at_place(ms->m, begin, end, t, t->place[s]);
    const int64_t e = first_at_place(ms->m, b, end, t, t->subtree_end[s]);
    const int64_t h = holders ? holders[order[k].place - first] : 0;
    if (c && (h > 1 || whole_tree_border)) { /* together; a failure alone stops every rank here */
      status = reduce_failed(c, alone != PHEW_OK)
                   ? PHEW_ERROR_MEMORY
                   : one_structure(job, c, ms->m + b, e - b, s, job->energy + b, &rows[*n_rows]);
      *n_rows += c->rank == 0;
    } else if (alone == PHEW_OK && (!c || e > b || (h == 0 && c->rank == 0))) {
      alone = one_structure(job, NULL, ms->m + b, e - b, s, job->energy + b, &rows[(*n_rows)++]);
    }
  }
  if (c && status == PHEW_OK && reduce_failed(c, alone != PHEW_OK))
    status = PHEW_ERROR_MEMORY;
  free(order);
  free(holders);
  return c ? status : alone;
}

static int by_id(const void *pa, const void *pb)
{
  const phew_structure *a = pa, *b = pb;
  return a->id < b->id ? -1 : (a->id > b->id);
}

static int by_bound_mass(const void *pa, const void *pb)
{
  const phew_structure *a = *(const phew_structure *const *)pa, *b = *(const phew_structure *const *)pb;
  if (a->bound_mass_inclusive != b->bound_mass_inclusive)
    return a->bound_mass_inclusive > b->bound_mass_inclusive ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* Collective: the rows of every rank on rank 0, in id order, with their mass ranks. */
static phew_status catalogue(comm *c, phew_structure *rows, int64_t n_rows, phew_physics_result *out)
{
  void *gathered = NULL;
  int64_t n = 0;
  int *counts = NULL;
  phew_status status = comm_gather(c, rows, n_rows, sizeof *rows, &gathered, &n, &counts);
  free(counts);
  if (status != PHEW_OK || c->rank != 0) {
    free(gathered);
    return status;
  }
  phew_structure *all = gathered;
  qsort(all, (size_t)n, sizeof *all, by_id);
  phew_structure **rank = phew_malloc((size_t)n + 1, sizeof *rank);
  if (!rank) {
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < n; ++k)
    rank[k] = &all[k];
  qsort(rank, (size_t)n, sizeof *rank, by_bound_mass);
  for (int64_t k = 0; k < n; ++k)
    rank[k]->mass_rank = k;
  free(rank);
  out->structures = all;
  out->n_structures = n;
  return PHEW_OK;
}

/* What one call holds on a rank. */
typedef struct physics_state {
  comm c;
  points_context x;
  particle_set s;
  structure_tree t;
  member_set ms;
  physics_units u;
  phew_structure *rows; /* this rank's structures */
  int64_t n_rows;
  physics_job job;
  int communicating; /* the communicator works: every rank reaches the collective calls */
} physics_state;

/* Collective: the checks, the units, the hierarchy, the particles read. */
static phew_status prepare(physics_state *w, const phew_context *context, const phew_input *in,
                           const phew_structures *st, const phew_physics_params *p, call_result *r)
{
  w->c.size = 1;
  phew_status status = comm_init(&w->c, context, r);
  if (status != PHEW_OK)
    return status;
  w->communicating = 1;
  w->x.context = context;
  w->x.c = &w->c;
  w->x.result = r;
  status = comm_agree(&w->c, check_call(in, st, p, r), r);
  if (status == PHEW_OK)
    status = comm_agree(&w->c, physics_units_make(&w->u, p, r), r);
  if (status == PHEW_OK)
    status = comm_agree(&w->c, structure_tree_build(&w->t, st->n_structures, st->parent, r), r);
  if (status == PHEW_OK)
    status = points_read(&w->x, in, POINTS_FOF, &w->s);
  return status;
}

/* Collective: every top-level structure of this rank, bottom-up, with its rows. */
static phew_status unbind_all(physics_state *w, const phew_structures *st, const phew_physics_params *p, call_result *r)
{
  w->job = (physics_job){&w->x, st, NULL, 0, &w->t, &w->u, p, softening_of(&w->x, p), 0, NULL};
  w->job.energy = phew_malloc((size_t)w->ms.n + 1, sizeof *w->job.energy);
  for (int64_t k = 0; w->job.energy && k < w->ms.n; ++k)
    w->job.energy[k] = NAN;
  int64_t n_held = 0;
  for (int64_t k = 0; k < w->ms.n_roots; ++k)
    n_held += w->t.subtree_end[w->ms.roots[k]] - w->t.place[w->ms.roots[k]];
  w->rows = phew_malloc((size_t)n_held + 1, sizeof *w->rows);
  phew_status status = w->rows && w->job.energy ? PHEW_OK : PHEW_ERROR_MEMORY;
  for (int64_t k = 0; status == PHEW_OK && k < w->ms.n_roots; ++k)
    if (w->ms.root_owner[w->ms.roots[k]] != MEMBERS_SPREAD)
      status = one_tree(&w->job, NULL, &w->ms, w->ms.roots[k], w->rows, &w->n_rows);
  status = comm_agree(&w->c, status == PHEW_OK ? PHEW_OK : phew_fail(r, status, "out of memory for the unbinding"), r);
  /* then the spread ones, by every rank together (their failures are agreed as they come) */
  for (int64_t k = 0; status == PHEW_OK && k < w->ms.n_roots; ++k)
    if (w->ms.root_owner[w->ms.roots[k]] == MEMBERS_SPREAD)
      status = one_tree(&w->job, &w->c, &w->ms, w->ms.roots[k], w->rows, &w->n_rows);
  return comm_agree(&w->c, status == PHEW_OK ? PHEW_OK : phew_fail(r, status, "out of memory for the unbinding"), r);
}

/* Collective: the tracers of every structure from the members' bound labels and energies. */
static phew_status most_bound(physics_state *w, int64_t n_most_bound, phew_physics_result *out, call_result *r)
{
  const int64_t n = w->ms.n;
  int64_t *id = phew_malloc((size_t)n + 1, sizeof *id), *label = phew_malloc((size_t)n + 1, sizeof *label);
  double *mass = phew_malloc((size_t)n + 1, sizeof *mass);
  phew_status status = id && label && mass ? PHEW_OK : phew_fail(r, PHEW_ERROR_MEMORY, "out of memory for the tracers");
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k) {
    id[k] = w->ms.m[k].id;
    label[k] = w->ms.m[k].bound;
    mass[k] = w->ms.m[k].mass;
  }
  status = comm_agree(&w->c, status, r);
  if (status == PHEW_OK) {
    const phew_step_labels l = {n, id, label, mass, w->job.energy};
    status = tracking_most_bound(&w->c, &l, 0, n_most_bound, &out->most_bound, r);
  }
  free(id);
  free(label);
  free(mass);
  return status;
}

/* Collective: the counts and the catalogue on rank 0. */
static phew_status finish(physics_state *w, phew_physics_result *out, call_result *r)
{
  int64_t unbound = 0;
  for (int64_t k = 0; k < w->ms.n; ++k)
    unbound += w->ms.m[k].bound < 0;
  out->n_candidates = comm_sum(&w->c, w->job.n_candidates);
  out->n_unbound = comm_sum(&w->c, unbound);
  out->softening_used = w->job.softening;
  out->gravitational_constant_used = w->u.G;
  return comm_agree(&w->c, catalogue(&w->c, w->rows, w->n_rows, out), r);
}

/* The stages in order, each timed (seconds of this rank; the maximum is taken at the end). */
static phew_status run(const phew_context *context, const phew_input *in, const phew_structures *st,
                       const phew_physics_params *p, int64_t *bound_label, double *bound_energy,
                       phew_physics_result *out, call_result *r)
{
  physics_state w;
  memset(&w, 0, sizeof w);
  const double start = phew_seconds();
  double members = 0.0, unbinding = 0.0, overdensity = 0.0, listing = 0.0, clock = 0.0;
  phew_status status = prepare(&w, context, in, st, p, r);
#define TIMED(seconds, call)           \
  if (status == PHEW_OK) {             \
    clock = phew_seconds();            \
    status = (call);                   \
    seconds += phew_seconds() - clock; \
  }
  TIMED(members, members_gather(&w.x, &w.s, &w.t, st->label, p->gather_max, &w.ms))
  TIMED(unbinding, unbind_all(&w, st, p, r))
  TIMED(members, members_return(&w.x, &w.ms, w.job.energy, bound_label, bound_energy, in->points.n))
  TIMED(listing, comm_agree(&w.c,
                            membership_lists(&w.c, &w.ms, &w.t, w.rows, w.n_rows, out) == PHEW_OK
                                ? PHEW_OK
                                : phew_fail(r, PHEW_ERROR_MEMORY, "out of memory for the membership lists"),
                            r))
  TIMED(overdensity, overdensity_masses(&w.x, &w.s, &w.u, &w.t, w.ms.root_owner, w.rows, w.n_rows))
  if (p->n_most_bound > 0) /* no tracers asked for (the CLI without --hdf5, the plugin): no pass */
    TIMED(listing, most_bound(&w, p->n_most_bound, out, r))
  TIMED(listing, finish(&w, out, r))
#undef TIMED
  if (w.communicating) { /* the maxima over ranks (collective: every failure was agreed) */
    out->seconds_members = comm_max_double(&w.c, members);
    out->seconds_unbinding = comm_max_double(&w.c, unbinding);
    out->seconds_overdensity = comm_max_double(&w.c, overdensity);
    out->seconds_catalogue = comm_max_double(&w.c, listing);
    out->seconds = comm_max_double(&w.c, phew_seconds() - start);
  }
  free(w.rows);
  free(w.job.energy);
  member_set_free(&w.ms);
  structure_tree_free(&w.t);
  particle_set_free(&w.s);
  return status;
}

phew_status phew_structure_physics(phew_context *context, const phew_input *input, const phew_structures *structures,
                                   const phew_physics_params *params, int64_t *bound_label, double *bound_energy,
                                   phew_physics_result *result)
{
  if (!context || !result) {
    if (result)
      memset(result, 0, sizeof *result);
    return call_refused(context, "phew_structure_physics");
  }
  memset(result, 0, sizeof *result);
  result->softening_used = result->gravitational_constant_used = NAN;
  call_result r;
  call_result_start(&r);
  const phew_status status = run(context, input, structures, params, bound_label, bound_energy, result, &r);
  if (status != PHEW_OK) {
    phew_physics_result_free(result);
    const int64_t n = input && input->mesh == PHEW_MESH_POINTS ? input->points.n : 0;
    for (int64_t i = 0; i < n; ++i) {
      if (bound_label)
        bound_label[i] = -1;
      if (bound_energy)
        bound_energy[i] = NAN;
    }
  }
  call_result_report(&r, status, context);
  return status;
}
