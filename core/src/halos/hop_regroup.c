/* HOP's second step: boundaries between the groups of the hops, and the regrouping by the
 * three density thresholds (halos.h, phew.h at phew_hop_params).
 *
 * Each rank lists the boundaries its own particles see (per pair of groups the largest) and
 * the peaks of the groups whose maxima it owns (a block of particles per task, each task's
 * list sorted and cut to one per pair before the lists are joined: what threads do first and
 * in any order, the sort then undoes); rank 0 gathers them, regroups, and sends every
 * rank the group each HOP group ends in. The group graph is small (a group per density
 * maximum), so it is regrouped whole, in one place, in an order of its own: the answer does
 * not depend on the ranks. */
#include "halos.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BOUNDARY_BLOCK = 4096 }; /* own particles per task of the boundaries and final keys */

static int64_t boundary_tasks(int64_t n_own) { return (n_own + BOUNDARY_BLOCK - 1) / BOUNDARY_BLOCK; }

/* A HOP group: its key (the global id of its maximum) and the density there. */
typedef struct hop_peak {
  int64_t key;
  double density;
} hop_peak;

/* The boundary of two groups, keys a < b. */
typedef struct hop_boundary {
  int64_t a, b;
  double density;
} hop_boundary;

/* What a HOP group ends in: the key of its final group, or -1. */
typedef struct hop_final {
  int64_t key, final_key;
} hop_final;

static int boundary_order(const void *pa, const void *pb)
{
  const hop_boundary *a = pa, *b = pb;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  if (a->b != b->b)
    return a->b < b->b ? -1 : 1;
  return (a->density < b->density) - (a->density > b->density); /* the largest first */
}

static int peak_order(const void *pa, const void *pb)
{
  const hop_peak *a = pa, *b = pb;
  return (a->key > b->key) - (a->key < b->key);
}

/* Sorted, one per pair of groups: the largest. */
static int64_t boundaries_unique(hop_boundary *e, int64_t n)
{
  if (n == 0)
    return 0;
  qsort(e, (size_t)n, sizeof *e, boundary_order);
  int64_t m = 1;
  for (int64_t k = 1; k < n; ++k)
    if (e[k].a != e[m - 1].a || e[k].b != e[m - 1].b)
      e[m++] = e[k];
  return m;
}

static int64_t group_index(const hop_peak *g, int64_t n, int64_t key)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (g[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && g[lo].key == key ? lo : -1;
}

/* Of two groups (indices, -1: none), the one with the higher peak, then the smaller key. */
static int64_t higher_peak(const hop_peak *g, int64_t p, int64_t q)
{
  if (p < 0)
    return q;
  if (q < 0)
    return p;
  if (g[p].density != g[q].density)
    return g[p].density > g[q].density ? p : q;
  return g[p].key < g[q].key ? p : q;
}

/* A link of the widest-path search: a fringe group and a fringe or proper group. */
typedef struct hop_link {
  int32_t fringe, other;
  double density;
} hop_link;

static int link_order(const void *pa, const void *pb)
{
  const hop_link *a = pa, *b = pb;
  if (a->density != b->density)
    return a->density > b->density ? -1 : 1;
  if (a->fringe != b->fringe)
    return a->fringe < b->fringe ? -1 : 1;
  return (a->other > b->other) - (a->other < b->other);
}

/* The regrouping's working state: the groups (sorted by key), the peak threshold, and per
 * group (index) what the two searches need. */
typedef struct regroup_work {
  const hop_peak *g;
  int64_t n;
  double peak;
  union_find proper, fringe;
  int32_t *best;               /* proper: its final group's peak; fringe roots: the best proper reached */
  int32_t *head, *tail, *next; /* fringe roots: their members not yet given a final group (a list) */
  hop_link *links;             /* per boundary at most one */
  int32_t *touched;            /* the fringe roots the links of one strength touched */
  int64_t *final;              /* the key of each group's final group, or -1 */
} regroup_work;

/* A proper group: its peak at least the peak threshold. */
static int is_proper(const regroup_work *w, int64_t k) { return w->g[k].density >= w->peak; }

/* The working arrays for w->n groups and n_e boundaries: 0, or -1 without memory (then
 * nothing is left to free). */
static int regroup_work_init(regroup_work *w, int64_t n_e)
{
  const int64_t n = w->n;
  w->best = phew_malloc((size_t)n + 1, sizeof *w->best);
  w->head = phew_malloc((size_t)n + 1, sizeof *w->head);
  w->tail = phew_malloc((size_t)n + 1, sizeof *w->tail);
  w->next = phew_malloc((size_t)n + 1, sizeof *w->next);
  w->links = phew_malloc((size_t)n_e + 1, sizeof *w->links);
  w->touched = phew_malloc((size_t)n_e + 1, sizeof *w->touched);
  const int ok = w->best && w->head && w->tail && w->next && w->links && w->touched &&
                 union_find_init(&w->proper, n) == 0;
  if (!ok || union_find_init(&w->fringe, n) != 0) {
    if (ok)
      union_find_free(&w->proper);
    free(w->best), free(w->head), free(w->tail), free(w->next), free(w->links), free(w->touched);
    return -1;
  }
  return 0;
}

static void regroup_work_free(regroup_work *w)
{
  union_find_free(&w->proper);
  union_find_free(&w->fringe);
  free(w->best), free(w->head), free(w->tail), free(w->next), free(w->links), free(w->touched);
}

/* Proper groups joined by boundaries >= saddle; each final group named by its highest peak.
 * final: the proper groups' final groups, -1 for the fringe groups (until they reach one). */
static void join_proper_groups(regroup_work *w, const hop_boundary *e, int64_t n_e, double saddle)
{
  const hop_peak *g = w->g;
  const int64_t n = w->n;
  for (int64_t k = 0; k < n_e; ++k) {
    const int64_t a = group_index(g, n, e[k].a), b = group_index(g, n, e[k].b);
    if (is_proper(w, a) && is_proper(w, b) && e[k].density >= saddle)
      union_find_join(&w->proper, (int32_t)a, (int32_t)b);
  }
  for (int64_t k = 0; k < n; ++k)
    w->best[k] = -1;
  for (int64_t k = 0; k < n; ++k)
    if (is_proper(w, k)) {
      const int32_t r = union_find_root(&w->proper, (int32_t)k);
      w->best[r] = (int32_t)higher_peak(g, w->best[r], k);
    }
  for (int64_t k = 0; k < n; ++k)
    w->final[k] = is_proper(w, k) ? g[w->best[union_find_root(&w->proper, (int32_t)k)]].key : -1;
}

/* The links of the widest-path search into w->links, strongest first; how many: the
 * boundaries >= outer between a fringe group and a proper one, or between two fringe groups
 * both above outer. */
static int64_t fringe_links(regroup_work *w, const hop_boundary *e, int64_t n_e, double outer)
{
  const hop_peak *g = w->g;
  int64_t n_links = 0;
  for (int64_t k = 0; k < n_e; ++k) {
    const int64_t a = group_index(g, w->n, e[k].a), b = group_index(g, w->n, e[k].b);
    if (!(e[k].density >= outer) || (is_proper(w, a) && is_proper(w, b)))
      continue;
    if (!is_proper(w, a) && !is_proper(w, b) && !(g[a].density >= outer && g[b].density >= outer))
      continue;
    w->links[n_links++] = is_proper(w, a) ? (hop_link){(int32_t)b, (int32_t)a, e[k].density}
                                          : (hop_link){(int32_t)a, (int32_t)b, e[k].density};
  }
  qsort(w->links, (size_t)n_links, sizeof *w->links, link_order);
  return n_links;
}

/* The links of one strength, links[k] to links[end - 1]: fringe groups joined (the root
 * keeps the best proper group either reached, and the members of both still without one),
 * proper groups reached. The fringe roots they touched into w->touched; how many. */
static int64_t join_links_of_one_strength(regroup_work *w, int64_t k, int64_t end)
{
  int64_t n_touched = 0;
  for (int64_t l = k; l < end; ++l) {
    const hop_link *L = &w->links[l];
    int32_t a = union_find_root(&w->fringe, L->fringe);
    if (is_proper(w, L->other)) {
      w->best[a] = (int32_t)higher_peak(w->g, w->best[a], L->other);
    } else {
      const int32_t b = union_find_root(&w->fringe, L->other);
      if (a == b)
        continue;
      union_find_join(&w->fringe, a, b);
      const int32_t root = a < b ? a : b, gone = a < b ? b : a;
      w->best[root] = (int32_t)higher_peak(w->g, w->best[root], w->best[gone]);
      if (w->head[gone] >= 0) { /* the members without a proper group, together */
        if (w->head[root] >= 0)
          w->next[w->tail[root]] = w->head[gone];
        else
          w->head[root] = w->head[gone];
        w->tail[root] = w->tail[gone];
      }
      a = root;
    }
    w->touched[n_touched++] = a;
  }
  return n_touched;
}

/* The fringe groups: the links of widest paths, strongest first. All links of one strength
 * join their fringe groups before any fringe group is given the best proper group it then
 * reaches: the strength of its widest path. */
static void regroup_fringe_groups(regroup_work *w, int64_t n_links)
{
  for (int64_t k = 0; k < w->n; ++k) {
    w->head[k] = w->tail[k] = (int32_t)k;
    w->next[k] = -1;
  }
  for (int64_t k = 0; k < n_links;) {
    int64_t end = k;
    while (end < n_links && w->links[end].density == w->links[k].density)
      ++end;
    const int64_t n_touched = join_links_of_one_strength(w, k, end);
    for (int64_t t = 0; t < n_touched; ++t) { /* the members waiting, given the final group */
      const int32_t r = union_find_root(&w->fringe, w->touched[t]);
      if (w->best[r] < 0)
        continue;
      const int64_t to = w->final[w->best[r]];
      for (int32_t m = w->head[r]; m >= 0; m = w->next[m])
        w->final[m] = to;
      w->head[r] = -1;
    }
    k = end;
  }
}

/* The regrouping, on the whole group graph (groups sorted by key, boundaries unique):
 * final[k] = the key of group k's final group, or -1. 0, or -1 without memory. */
static int regroup(const hop_peak *g, int64_t n, const hop_boundary *e, int64_t n_e, double outer, double saddle,
                   double peak, int64_t *final)
{
  regroup_work w;
  memset(&w, 0, sizeof w);
  w.g = g;
  w.n = n;
  w.peak = peak;
  w.final = final;
  if (regroup_work_init(&w, n_e) != 0)
    return -1;
  join_proper_groups(&w, e, n_e, saddle);
  regroup_fringe_groups(&w, fringe_links(&w, e, n_e, outer));
  regroup_work_free(&w);
  return 0;
}

/* One rank's part of the group graph, or (gathered) all of it. */
typedef struct group_graph {
  hop_boundary *e;
  int64_t n_e;
  hop_peak *peaks;
  int64_t n_peaks;
} group_graph;

/* The boundaries and peaks of blocks of own particles: per task its part of the group graph
 * (the boundaries sorted, one per pair), per thread a growing list to collect them in. */
typedef struct boundary_job {
  const particle_set *s;
  const hop_lists *lists;
  const double *rho, *rho_padding;
  const int64_t *key, *key_padding;
  int n_merge;
  group_graph *part;      /* per task */
  hop_boundary **scratch; /* per thread */
  int64_t *capacity;      /* per thread */
  uint8_t *failed;        /* per task: memory ran out */
} boundary_job;

/* The boundaries that the block's particles see with the first n_merge of their lists, into
 * the thread's list (which grows): how many, or -1 if memory ran out. */
static int64_t block_boundaries(boundary_job *job, int thread, int64_t begin, int64_t end)
{
  const particle_set *s = job->s;
  const int64_t n_own = s->n_own, *key = job->key;
  int64_t n_e = 0;
  for (int64_t i = begin; i < end; ++i) {
    const int32_t *list = &job->lists->nearest[(size_t)i * (size_t)job->lists->n_keep];
    for (int k = 0; k < job->n_merge; ++k) {
      const int32_t j = list[k];
      const int64_t kj = j < n_own ? key[j] : job->key_padding[j - n_own];
      if (kj == key[i])
        continue;
      if (n_e == job->capacity[thread]) {
        const int64_t more = 2 * n_e > 1024 ? 2 * n_e : 1024;
        if (phew_grow(&job->scratch[thread], (size_t)more, sizeof **job->scratch) != 0)
          return -1;
        job->capacity[thread] = more;
      }
      const double mean = 0.5 * (job->rho[i] + (j < n_own ? job->rho[j] : job->rho_padding[j - n_own]));
      job->scratch[thread][n_e++] = key[i] < kj ? (hop_boundary){key[i], kj, mean} : (hop_boundary){kj, key[i], mean};
    }
  }
  return n_e;
}

static void boundary_task(void *context, int thread, int64_t task)
{
  boundary_job *job = context;
  const particle_set *s = job->s;
  const int64_t begin = task * BOUNDARY_BLOCK,
                end = begin + BOUNDARY_BLOCK < s->n_own ? begin + BOUNDARY_BLOCK : s->n_own;
  group_graph *part = &job->part[task];
  int64_t n_e = block_boundaries(job, thread, begin, end), n_peaks = 0;
  for (int64_t i = begin; i < end; ++i)
    n_peaks += job->key[i] == s->id[i];
  if (n_e >= 0)
    n_e = boundaries_unique(job->scratch[thread], n_e);
  part->e = n_e >= 0 ? phew_malloc((size_t)n_e + 1, sizeof *part->e) : NULL;
  part->peaks = phew_malloc((size_t)n_peaks + 1, sizeof *part->peaks);
  if (!part->e || !part->peaks) {
    job->failed[task] = 1;
    return;
  }
  if (n_e > 0) /* a thread without boundaries yet has no scratch */
    memcpy(part->e, job->scratch[thread], (size_t)n_e * sizeof *part->e);
  part->n_e = n_e;
  for (int64_t i = begin; i < end; ++i)
    if (job->key[i] == s->id[i])
      part->peaks[part->n_peaks++] = (hop_peak){job->key[i], job->rho[i]};
}

/* The tasks' parts (ok: all there) joined in task order into mine (its arrays to free; the
 * boundaries sorted, one per pair), the parts freed. 0 if memory ran out. */
static int join_parts(group_graph *part, int64_t n_tasks, int ok, group_graph *mine)
{
  int64_t n_e = 0, n_peaks = 0;
  for (int64_t t = 0; t < n_tasks; ++t) {
    n_e += part[t].n_e;
    n_peaks += part[t].n_peaks;
  }
  mine->e = ok ? phew_malloc((size_t)n_e + 1, sizeof *mine->e) : NULL;
  mine->peaks = ok ? phew_malloc((size_t)n_peaks + 1, sizeof *mine->peaks) : NULL;
  ok = mine->e && mine->peaks;
  for (int64_t t = 0; t < n_tasks; ++t) {
    if (ok) {
      memcpy(mine->e + mine->n_e, part[t].e, (size_t)part[t].n_e * sizeof *mine->e);
      memcpy(mine->peaks + mine->n_peaks, part[t].peaks, (size_t)part[t].n_peaks * sizeof *mine->peaks);
      mine->n_e += part[t].n_e;
      mine->n_peaks += part[t].n_peaks;
    }
    free(part[t].e);
    free(part[t].peaks);
  }
  if (ok)
    mine->n_e = boundaries_unique(mine->e, mine->n_e);
  return ok;
}

/* This rank's part of the group graph (mine: its arrays to free): the boundaries its own
 * particles see with the first n_merge of their lists (sorted, per pair of groups the
 * largest), and the peaks of the groups whose maxima it owns. 0 if memory ran out. */
static int list_boundaries(const points_context *x, const particle_set *s, const hop_lists *lists, const double *rho,
                           const double *rho_padding, const int64_t *key, const int64_t *key_padding, group_graph *mine)
{
  const int64_t n_tasks = boundary_tasks(s->n_own);
  const int threads = x->n_threads > 0 ? x->n_threads : 1;
  boundary_job job = {
      .s = s, .lists = lists, .rho = rho, .rho_padding = rho_padding, .key = key, .key_padding = key_padding};
  job.n_merge = lists->n_merge < lists->n_keep ? lists->n_merge : lists->n_keep;
  job.part = phew_calloc((size_t)n_tasks + 1, sizeof *job.part);
  job.scratch = phew_calloc((size_t)threads, sizeof *job.scratch);
  job.capacity = phew_calloc((size_t)threads, sizeof *job.capacity);
  job.failed = phew_calloc((size_t)n_tasks + 1, 1);
  int ok = job.part && job.scratch && job.capacity && job.failed;
  if (ok)
    threads_run(threads, n_tasks, boundary_task, &job);
  for (int64_t t = 0; ok && t < n_tasks; ++t)
    ok = !job.failed[t];
  if (job.part)
    ok = join_parts(job.part, n_tasks, ok, mine);
  for (int t = 0; job.scratch && t < threads; ++t)
    free(job.scratch[t]);
  free(job.part), free(job.scratch), free(job.capacity), free(job.failed);
  return ok;
}

/* Collective: every rank's part of the group graph gathered on rank 0 into all (its arrays
 * to free); mine's arrays are freed once sent. */
static phew_status gather_group_graph(comm *c, group_graph *mine, group_graph *all)
{
  int *from = NULL;
  phew_status status = comm_gather(c, mine->e, mine->n_e, sizeof *mine->e, (void **)&all->e, &all->n_e, &from);
  free(mine->e);
  mine->e = NULL;
  free(from);
  from = NULL;
  if (status == PHEW_OK)
    status = comm_gather(c, mine->peaks, mine->n_peaks, sizeof *mine->peaks, (void **)&all->peaks, &all->n_peaks,
                         &from);
  free(mine->peaks);
  mine->peaks = NULL;
  free(from);
  return status;
}

/* Rank 0: the whole group graph regrouped; *ends (free it) the final group of every HOP
 * group, sorted by key, *n_ends of them. */
static phew_status regroup_on_rank0(const hop_thresholds *t, group_graph *all, hop_final **ends, int64_t *n_ends)
{
  phew_status status = PHEW_OK;
  hop_peak *g = all->peaks;
  const int64_t n_groups = all->n_peaks;
  qsort(g, (size_t)n_groups, sizeof *g, peak_order);
  all->n_e = boundaries_unique(all->e, all->n_e);
  int64_t *final = phew_malloc((size_t)n_groups + 1, sizeof *final);
  *ends = phew_malloc((size_t)n_groups + 1, sizeof **ends);
  if (!final || !*ends || regroup(g, n_groups, all->e, all->n_e, t->outer, t->saddle, t->peak, final) != 0) {
    status = PHEW_ERROR_MEMORY;
  } else {
    for (int64_t k = 0; k < n_groups; ++k)
      (*ends)[k] = (hop_final){g[k].key, final[k]};
    *n_ends = n_groups;
  }
  free(final);
  return status;
}

/* Each own particle above outer in its group's final group (ends are sorted by key), the
 * others in none (-1); a block of particles per task. */
typedef struct final_job {
  const particle_set *s;
  const double *rho;
  const int64_t *key;
  double outer;
  const hop_final *ends;
  int64_t n_ends;
  int64_t *final_key;
} final_job;

static void final_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const final_job *job = context;
  const int64_t begin = task * BOUNDARY_BLOCK;
  const int64_t end = begin + BOUNDARY_BLOCK < job->s->n_own ? begin + BOUNDARY_BLOCK : job->s->n_own;
  for (int64_t i = begin; i < end; ++i) {
    job->final_key[i] = -1;
    if (!(job->rho[i] >= job->outer))
      continue;
    int64_t lo = 0, hi = job->n_ends;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (job->ends[mid].key < job->key[i])
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < job->n_ends && job->ends[lo].key == job->key[i])
      job->final_key[i] = job->ends[lo].final_key;
  }
}

phew_status hop_regroup(const points_context *x, const particle_set *s, const hop_lists *lists, const double *rho,
                        const double *rho_padding, const int64_t *key, const int64_t *key_padding,
                        const hop_thresholds *t, int64_t *final_key)
{
  comm *c = x->c;
  /* this rank's boundaries (per pair of groups the largest) and peaks */
  group_graph mine = {NULL, 0, NULL, 0}, all = {NULL, 0, NULL, 0};
  if (comm_max(c, !list_boundaries(x, s, lists, rho, rho_padding, key, key_padding, &mine))) {
    free(mine.e);
    free(mine.peaks);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the HOP boundaries"), x->result);
  }

  /* the group graph on rank 0, regrouped there; what each HOP group ends in, to every rank */
  phew_status status = gather_group_graph(c, &mine, &all);
  hop_final *ends = NULL;
  int64_t n_ends = 0;
  if (status == PHEW_OK && c->rank == 0)
    status = regroup_on_rank0(t, &all, &ends, &n_ends);
  free(all.e);
  free(all.peaks);
  status = comm_agree(
      c, status == PHEW_OK ? PHEW_OK : phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory regrouping HOP groups"),
      x->result);
  if (status == PHEW_OK)
    status = comm_broadcast(c, (void **)&ends, &n_ends, sizeof *ends);
  if (status != PHEW_OK) {
    free(ends);
    return comm_agree(c, phew_fail(x->result, status, "out of memory regrouping HOP groups"), x->result);
  }
  final_job job = {s, rho, key, t->outer, ends, n_ends, final_key};
  threads_run(x->n_threads, boundary_tasks(s->n_own), final_task, &job);
  free(ends);
  return PHEW_OK;
}
