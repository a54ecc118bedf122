/* Every top-level structure's particles onto one rank, or spread over all, and the bound labels
 * back (physics.h).
 *
 * A top-level structure with more than gather_max members is spread: every rank holds a
 * contiguous share of its members in canonical order (a sort over the ranks), and the ranks
 * work on it together. The others, in id order, are cut into contiguous shares of about equal
 * member counts, one per rank (a structure goes to the rank whose share holds the middle of
 * its members). Which rank computes a structure changes no result: each works on the members
 * in the order of (preorder place of their structure, id). */
#include "physics.h"
#include "radix_sort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void member_set_free(member_set *m)
{
  free(m->m);
  free(m->roots);
  free(m->root_owner);
  memset(m, 0, sizeof *m);
}

/* The n members into `out` by (preorder place of their structure, id): two stable radix sorts
 * of the indices, by id, then by place. 0, or -1 without memory. */
static int canonical_sort(const member *in, int64_t n, const structure_tree *t, int n_threads, member *out)
{
  uint64_t *key = phew_malloc((size_t)n + 1, sizeof *key);
  int32_t *index = phew_malloc((size_t)n + 1, sizeof *index);
  int failed = !key || !index || n > INT32_MAX;
  for (int64_t k = 0; !failed && k < n; ++k) {
    key[k] = (uint64_t)in[k].id; /* ids are >= 0 */
    index[k] = (int32_t)k;
  }
  failed = failed || radix_sort(key, index, n, 0, 64, n_threads) != 0;
  for (int64_t k = 0; !failed && k < n; ++k)
    key[k] = (uint64_t)t->place[in[index[k]].label];
  failed = failed || radix_sort(key, index, n, 0, 64, n_threads) != 0;
  for (int64_t k = 0; !failed && k < n; ++k)
    out[k] = in[index[k]];
  free(key);
  free(index);
  return failed ? -1 : 0;
}

/* Collective: the rank of every structure's top level (or MEMBERS_SPREAD), from the member
 * counts of all ranks. */
static phew_status assign_owners(const points_context *x, const particle_set *s, const structure_tree *t,
                                 const int64_t *label, int64_t gather_max, member_set *out)
{
  comm *c = x->c;
  int64_t *count = phew_calloc((size_t)t->n + 1, sizeof *count);
  out->root_owner = phew_malloc((size_t)t->n + 1, sizeof *out->root_owner);
  if (comm_max(c, !count || !out->root_owner)) {
    free(count);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the structures"), x->result);
  }
  for (int64_t i = 0; i < s->n_own; ++i)
    if (label[i] >= 0)
      ++count[t->root[label[i]]];
  comm_sum_array(c, count, t->n);
  const int64_t limit = gather_max > 0 ? gather_max : (x->n_total + c->size - 1) / c->size;
  int64_t total = 0;
  for (int64_t r = 0; r < t->n; ++r)
    total += t->parent[r] < 0 && count[r] <= limit ? count[r] : 0;
  int64_t before = 0;
  for (int64_t r = 0; r < t->n; ++r) { /* roots in id order */
    if (t->parent[r] >= 0)
      continue;
    if (count[r] > limit) {
      out->root_owner[r] = MEMBERS_SPREAD;
      continue;
    }
    __extension__ __int128 middle = (__int128)2 * before + count[r];
    int64_t owner = total > 0 ? (int64_t)(middle * c->size / ((__int128)2 * total)) : 0;
    out->root_owner[r] = (int32_t)(owner < c->size ? owner : c->size - 1);
    before += count[r];
  }
  for (int64_t k = 0; k < t->n; ++k)
    out->root_owner[k] = out->root_owner[t->root[k]];
  free(count);
  return PHEW_OK;
}

/* The member record of particle i of s. */
static member member_of(const particle_set *s, const int64_t *label, int64_t i, int rank)
{
  member m;
  memset(&m, 0, sizeof m);
  m.id = s->id[i];
  m.label = m.bound = label[i];
  memcpy(m.position, s->position + 3 * i, sizeof m.position);
  memcpy(m.velocity, s->velocity + 3 * i, sizeof m.velocity);
  m.mass = s->mass ? s->mass[i] : 1.0;
  m.origin_rank = rank;
  m.origin_index = i;
  return m;
}

/* Collective: the labelled particles as members on the ranks of their top-level structures
 * (those of spread ones stay here). The records are written once, straight into their
 * destination's share of one buffer; on one rank that buffer is what arrives (an exchange
 * would only copy it). */
static int destination(const int32_t *root_owner, int64_t label, const comm *c)
{
  return root_owner[label] == MEMBERS_SPREAD ? c->rank : root_owner[label];
}

static phew_status deliver(const points_context *x, const particle_set *s, const int64_t *label,
                           const int32_t *root_owner, inbox *in)
{
  comm *c = x->c;
  memset(in, 0, sizeof *in);
  int *count = phew_calloc((size_t)c->size, sizeof *count);
  int64_t *cursor = phew_calloc((size_t)c->size + 1, sizeof *cursor);
  if (comm_max(c, !count || !cursor)) {
    free(count);
    free(cursor);
    return PHEW_ERROR_MEMORY;
  }
  int64_t n = 0;
  for (int64_t i = 0; i < s->n_own; ++i)
    if (label[i] >= 0) {
      ++count[destination(root_owner, label[i], c)];
      ++n;
    }
  member *buffer = n <= INT32_MAX ? phew_malloc((size_t)n + 1, sizeof *buffer) : NULL;
  for (int r = 0; buffer && r < c->size; ++r)
    cursor[r + 1] = cursor[r] + count[r];
  for (int64_t i = 0; buffer && i < s->n_own; ++i)
    if (label[i] >= 0)
      buffer[cursor[destination(root_owner, label[i], c)]++] = member_of(s, label, i, c->rank);
  phew_status status = PHEW_OK;
  if (c->size == 1) {
    in->n = n;
    in->item_size = sizeof *buffer;
    in->items = (unsigned char *)buffer;
    status = buffer ? PHEW_OK : PHEW_ERROR_MEMORY;
  } else {
    for (int r = 0; !buffer && r < c->size; ++r)
      count[r] = -1; /* this rank failed: the exchange fails everywhere */
    status = comm_exchange_grouped(c, buffer, count, sizeof *buffer, in);
    free(buffer);
  }
  free(count);
  free(cursor);
  return status;
}

/* A member of a spread structure with its canonical key, for the sort over the ranks. */
typedef struct keyed_member {
  uint64_t place, id;
  member m;
} keyed_member;

/* Collective: the members of spread structures among the n of `in` dealt over the ranks in
 * canonical order (comm_sort), the others kept: *out holds this rank's members (any order). */
static phew_status share_spread(comm *c, const structure_tree *t, const int32_t *root_owner, inbox *in)
{
  const member *m = (const member *)in->items;
  keyed_member *spread = phew_malloc((size_t)in->n + 1, sizeof *spread);
  if (comm_max(c, !spread)) {
    free(spread);
    return PHEW_ERROR_MEMORY;
  }
  int64_t n_spread = 0, n_kept = 0;
  for (int64_t k = 0; k < in->n; ++k) {
    if (root_owner[m[k].label] == MEMBERS_SPREAD)
      spread[n_spread++] = (keyed_member){(uint64_t)t->place[m[k].label], (uint64_t)m[k].id, m[k]};
    else
      ((member *)in->items)[n_kept++] = m[k];
  }
  inbox dealt;
  phew_status status = comm_sort(c, spread, n_spread, sizeof *spread, &dealt);
  free(spread);
  if (status == PHEW_OK && phew_grow(&in->items, (size_t)(n_kept + dealt.n) + 1, sizeof(member)))
    status = PHEW_ERROR_MEMORY;
  for (int64_t k = 0; status == PHEW_OK && k < dealt.n; ++k)
    ((member *)in->items)[n_kept + k] = ((const keyed_member *)dealt.items)[k].m;
  in->n = n_kept + dealt.n;
  inbox_free(&dealt);
  return comm_max(c, status != PHEW_OK) ? PHEW_ERROR_MEMORY : PHEW_OK;
}

static int any_spread(const structure_tree *t, const int32_t *root_owner)
{
  for (int64_t r = 0; r < t->n; ++r)
    if (root_owner[r] == MEMBERS_SPREAD)
      return 1;
  return 0;
}

phew_status members_gather(const points_context *x, const particle_set *s, const structure_tree *t,
                           const int64_t *label, int64_t gather_max, member_set *out)
{
  comm *c = x->c;
  memset(out, 0, sizeof *out);
  phew_status status = assign_owners(x, s, t, label, gather_max, out);
  if (status != PHEW_OK)
    return status;
  inbox in;
  status = deliver(x, s, label, out->root_owner, &in);
  if (status == PHEW_OK && any_spread(t, out->root_owner))
    status = share_spread(c, t, out->root_owner, &in);
  if (status == PHEW_OK) {
    out->n = in.n;
    out->m = phew_malloc((size_t)in.n + 1, sizeof *out->m);
    out->roots = phew_malloc((size_t)t->n + 1, sizeof *out->roots);
    if (out->m && out->roots) {
      if (canonical_sort((const member *)in.items, in.n, t, x->n_threads, out->m) != 0)
        status = PHEW_ERROR_MEMORY;
      for (int64_t k = 0; k < t->n; ++k) {
        const int64_t r = t->order[k];
        if (t->parent[r] < 0 && (out->root_owner[r] == c->rank || out->root_owner[r] == MEMBERS_SPREAD))
          out->roots[out->n_roots++] = r;
      }
    } else {
      status = PHEW_ERROR_MEMORY;
    }
  }
  inbox_free(&in);
  status = comm_agree(c, status == PHEW_OK ? PHEW_OK : phew_fail(x->result, status, "out of memory for the members"),
                      x->result);
  if (status != PHEW_OK)
    member_set_free(out);
  return status;
}

typedef struct returned_label {
  int64_t index, bound;
  double energy;
} returned_label;

phew_status members_return(const points_context *x, const member_set *m, const double *energy, int64_t *bound_label,
                           double *bound_energy, int64_t n_passed)
{
  comm *c = x->c;
  for (int64_t i = 0; i < n_passed; ++i) {
    if (bound_label)
      bound_label[i] = -1;
    if (bound_energy)
      bound_energy[i] = NAN;
  }
  if (c->size == 1) { /* every member came from this rank: no exchange */
    for (int64_t k = 0; k < m->n; ++k) {
      const member *e = &m->m[k];
      if (bound_label)
        bound_label[e->origin_index] = e->bound;
      if (bound_energy && energy && e->bound >= 0)
        bound_energy[e->origin_index] = energy[k];
    }
    return PHEW_OK;
  }
  outbox o;
  outbox_init(&o, c, sizeof(returned_label));
  for (int64_t k = 0; k < m->n; ++k) {
    const returned_label r = {m->m[k].origin_index, m->m[k].bound, energy ? energy[k] : NAN};
    outbox_put(&o, m->m[k].origin_rank, &r);
  }
  inbox in;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  const returned_label *r = (const returned_label *)in.items;
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k) {
    if (bound_label)
      bound_label[r[k].index] = r[k].bound;
    if (bound_energy)
      bound_energy[r[k].index] = r[k].bound >= 0 ? r[k].energy : NAN;
  }
  inbox_free(&in);
  return comm_agree(c, status == PHEW_OK ? PHEW_OK : phew_fail(x->result, status, "out of memory for the labels"),
                    x->result);
}
