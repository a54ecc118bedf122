// Links by most-bound particles with orphans (phew_link_tracked, docs/merger-trees.md) on small
// hand-made steps whose answers follow from the rules: equal tracer counts decided by mass, then
// id; two orphans found in one structure, the more recent winning; a tie between descendants
// decided by the most-bound tracer; a best descendant without shared elements; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "phew/phew.h"

namespace {

struct Labels {
  std::vector<int64_t> id, label;
  void add(int64_t first, int64_t last, int64_t l)
  {
    for (int64_t i = first; i <= last; ++i) {
      id.push_back(i);
      label.push_back(l);
    }
  }
  phew_step_labels view() const
  {
    phew_step_labels s{};
    s.n = static_cast<int64_t>(id.size());
    s.id = id.data();
    s.label = label.data();
    return s;
  }
};

struct Entries {
  std::vector<phew_tracked> tracked;
  std::vector<int64_t> ids;
  void add(int64_t id, int64_t step, int64_t age, double mass, std::vector<int64_t> tracers)
  {
    tracked.push_back({id, step, age, mass, static_cast<int64_t>(ids.size()), static_cast<int64_t>(tracers.size())});
    ids.insert(ids.end(), tracers.begin(), tracers.end());
  }
  phew_tracer_set view()
  {
    return phew_tracer_set{static_cast<int64_t>(tracked.size()), tracked.data(), static_cast<int64_t>(ids.size()),
                           ids.data()};
  }
};

struct Tracked {
  phew_context context;
  phew_link_result links{};
  phew_tracer_set orphans{};
  phew_status status;
  Tracked(const Labels &a, const Labels &b, Entries &e, int64_t max_orphan_steps = 3)
  {
    phew_context_init(&context);
    phew_track_params params;
    phew_track_params_init(&params);
    params.max_orphan_steps = max_orphan_steps;
    const phew_step_labels x = a.view(), y = b.view();
    const phew_tracer_set set = e.view();
    status = phew_link_tracked(&context, &x, &y, &set, &params, &links, &orphans);
  }
  ~Tracked()
  {
    phew_link_result_free(&links);
    phew_tracer_set_free(&orphans);
  }
  const phew_link *find(int kind, int64_t p, int64_t step, int64_t d) const
  {
    for (int64_t k = 0; k < links.n_links; ++k) {
      const phew_link &l = links.links[k];
      if (l.kind == kind && l.progenitor_id == p && l.progenitor_step == step && l.descendant_id == d)
        return &l;
    }
    return nullptr;
  }
};

} // namespace

// Earlier: 0 = {0..9}, 1 = {10..19}, 2 = {40, 41}; orphans carried: 5 (step -2, 3 tracers) and
// 6 (step -1, 3 tracers). Later: 0 = {0..19} (0 and 1 merge), 1 = {30..35} (holds both
// orphans' tracers), 2 = {40}, 3 = {41}.
TEST(LinkTracked, TiesOrphansAndFoundAgain)
{
  Labels a, b;
  a.add(0, 9, 0);
  a.add(10, 19, 1);
  a.add(40, 40, 2);
  a.add(41, 41, 2);
  b.add(0, 19, 0);
  b.add(30, 35, 1);
  b.add(40, 40, 2);
  b.add(41, 41, 3);
  Entries e;
  e.add(0, 0, 0, 10.0, {0, 1, 2, 3});
  e.add(1, 0, 0, 10.0, {10, 11, 12, 13});
  e.add(2, 0, 0, 2.0, {40, 41});
  e.add(5, -2, 1, 20.0, {30, 31, 32});
  e.add(6, -1, 2, 5.0, {33, 34, 35});
  Tracked t(a, b, e);
  ASSERT_EQ(t.status, PHEW_OK) << t.context.message;
  // 0 and 1 both put 4 tracers into 0, with equal masses: the smaller id is the main progenitor
  const phew_link *main = t.find(PHEW_LINK_DIRECT, 0, 0, 0), *merged = t.find(PHEW_LINK_DIRECT, 1, 0, 0);
  ASSERT_TRUE(main && merged);
  EXPECT_EQ(main->shared_tracers, 4);
  EXPECT_EQ(main->n_tracers, 4);
  EXPECT_TRUE(main->main_progenitor_tracers && main->main_descendant_tracers);
  EXPECT_TRUE(!merged->main_progenitor_tracers && merged->main_descendant_tracers);
  // 1 is lost into 0: an orphan of age 1 hosted by 0
  const phew_link *lost = t.find(PHEW_LINK_ORPHAN, 1, 0, -1);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->host_id, 0);
  EXPECT_EQ(lost->orphan_steps, 1);
  EXPECT_TRUE(std::isnan(lost->shared_mass_earlier));
  // 2's tracers split one each between 2 and 3: the one holding its most-bound tracer wins
  const phew_link *to2 = t.find(PHEW_LINK_DIRECT, 2, 0, 2), *to3 = t.find(PHEW_LINK_DIRECT, 2, 0, 3);
  ASSERT_TRUE(to2 && to3);
  EXPECT_TRUE(to2->main_descendant_tracers && to2->main_progenitor_tracers);
  EXPECT_FALSE(to3->main_descendant_tracers || to3->main_progenitor_tracers);
  EXPECT_EQ(t.find(PHEW_LINK_ORPHAN, 2, 0, -1), nullptr);
  // 1 (later) has no progenitor: of the orphans with 3 tracers each in it, the more recent wins
  const phew_link *found = t.find(PHEW_LINK_REFOUND, 6, -1, 1);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->orphan_steps, 2);
  EXPECT_EQ(found->shared_tracers, 3);
  EXPECT_EQ(found->descendant_mass, 6.0);
  const phew_link *still = t.find(PHEW_LINK_ORPHAN, 5, -2, -1);
  ASSERT_TRUE(still);
  EXPECT_EQ(still->orphan_steps, 2);
  EXPECT_EQ(still->host_id, 1);
  // carried on: 5 (step -2, age 2), then 1 (step 0, age 1), with their tracers
  ASSERT_EQ(t.orphans.n, 2);
  EXPECT_EQ(t.orphans.tracked[0].id, 5);
  EXPECT_EQ(t.orphans.tracked[0].orphan_steps, 2);
  EXPECT_EQ(t.orphans.tracked[1].id, 1);
  EXPECT_EQ(t.orphans.tracked[1].orphan_steps, 1);
  ASSERT_EQ(t.orphans.n_ids, 7);
  EXPECT_EQ(t.orphans.ids[t.orphans.tracked[1].tracer_offset], 10);
  // rows by descendant (-1 last), then kind
  for (int64_t k = 1; k < t.links.n_links; ++k) {
    const phew_link &p = t.links.links[k - 1], &q = t.links.links[k];
    const uint64_t dp = static_cast<uint64_t>(p.descendant_id), dq = static_cast<uint64_t>(q.descendant_id);
    EXPECT_TRUE(dp < dq || (dp == dq && p.kind <= q.kind)) << "row " << k;
  }
}

// With max_orphan_steps 2 the orphan of age 2 that is not found is dropped; with 0 nothing is
// followed, and the orphans carried in are not found again either.
TEST(LinkTracked, OrphansAreDroppedAfterTheirSteps)
{
  Labels a, b;
  a.add(0, 9, 0);
  b.add(0, 9, 0);
  b.add(30, 32, 1);
  Entries e;
  e.add(0, 0, 0, 10.0, {0, 1});
  e.add(7, -3, 2, 3.0, {50, 51}); // its tracers are nowhere
  e.add(8, -1, 1, 3.0, {30, 31}); // found again in 1
  Tracked two(a, b, e, 2);
  ASSERT_EQ(two.status, PHEW_OK) << two.context.message;
  EXPECT_EQ(two.find(PHEW_LINK_ORPHAN, 7, -3, -1), nullptr);
  EXPECT_NE(two.find(PHEW_LINK_REFOUND, 8, -1, 1), nullptr);
  EXPECT_EQ(two.orphans.n, 0);
  Tracked none(a, b, e, 0);
  ASSERT_EQ(none.status, PHEW_OK);
  EXPECT_EQ(none.orphans.n, 0);
  EXPECT_EQ(none.find(PHEW_LINK_ORPHAN, 7, -3, -1), nullptr);
}

// Tracers that were not the structure's own elements: its best descendant gets a row with no
// shared mass.
TEST(LinkTracked, BestDescendantWithoutSharedElements)
{
  Labels a, b;
  a.add(0, 3, 0);
  b.add(50, 51, 0);
  Entries e;
  e.add(0, 0, 0, 4.0, {50, 51});
  Tracked t(a, b, e);
  ASSERT_EQ(t.status, PHEW_OK) << t.context.message;
  const phew_link *l = t.find(PHEW_LINK_DIRECT, 0, 0, 0);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->shared_mass_earlier, 0.0);
  EXPECT_EQ(l->shared_tracers, 2);
  EXPECT_TRUE(l->main_descendant_tracers && l->main_progenitor_tracers);
  EXPECT_EQ(t.orphans.n, 0);
}

TEST(LinkTracked, BadTracerSetsAreRefused)
{
  Labels a, b;
  a.add(0, 3, 0);
  b.add(0, 3, 0);
  Entries unordered;
  unordered.add(1, 0, 0, 1.0, {0});
  unordered.add(0, 0, 0, 1.0, {1});
  Tracked t(a, b, unordered);
  EXPECT_EQ(t.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(t.context.message).find("out of order"), std::string::npos) << t.context.message;
  EXPECT_EQ(t.links.n_links, 0);
  Entries outside;
  outside.add(0, 0, 0, 1.0, {0});
  outside.tracked[0].n_tracers = 5;
  Tracked u(a, b, outside);
  EXPECT_EQ(u.status, PHEW_ERROR_ARGUMENT);
  Entries fine;
  fine.add(0, 0, 0, 1.0, {0});
  Tracked v(a, b, fine, -1);
  EXPECT_EQ(v.status, PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(v.context.message).find("max_orphan_steps"), std::string::npos);
}
