// The merger tree between two steps (phew_link_steps): a worked example with mergers, splits,
// new and vanished structures; random labellings against a reference written here with
// std::map; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "phew/phew.h"

namespace {

struct Step {
  std::vector<int64_t> id, label;
  std::vector<double> mass;
  phew_step_labels view() const
  {
    phew_step_labels s{};
    s.n = static_cast<int64_t>(id.size());
    s.id = id.data();
    s.label = label.data();
    s.mass = mass.empty() ? nullptr : mass.data();
    return s;
  }
};

struct Links {
  phew_context context;
  phew_link_result result{};
  phew_status status = PHEW_OK;
  Links(const Step &a, const Step &b)
  {
    phew_context_init(&context);
    const phew_step_labels x = a.view(), y = b.view();
    status = phew_link_steps(&context, &x, &y, &result);
  }
  ~Links() { phew_link_result_free(&result); }
  const phew_link *find(int64_t p, int64_t d) const
  {
    for (int64_t k = 0; k < result.n_links; ++k)
      if (result.links[k].progenitor_id == p && result.links[k].descendant_id == d)
        return &result.links[k];
    return nullptr;
  }
};

} // namespace

// Earlier: A = {0,1,2,3}, B = {4,5,6}, C = {7}; 8 and 9 in none. Later: D = {0,1,2,4,5} (A and B
// merge), E = {3,8} (a piece of A), F = {9} (new); C's element and B's 6 end in none. Masses:
// element k weighs k + 1 earlier and 2 (k + 1) later.
TEST(LinkSteps, WorkedExampleWithMergerSplitNewAndVanished)
{
  Step a, b;
  const int64_t earlier[10] = {0, 0, 0, 0, 1, 1, 1, 2, -1, -1};
  const int64_t later[10] = {0, 0, 0, 1, 0, 0, -1, -1, 1, 2};
  for (int k = 9; k >= 0; --k) { // any order
    a.id.push_back(k), a.label.push_back(earlier[k]), a.mass.push_back(k + 1.0);
    b.id.push_back(k), b.label.push_back(later[k]), b.mass.push_back(2.0 * (k + 1));
  }
  Links l(a, b);
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  ASSERT_EQ(l.result.n_links, 5);
  // by descendant (-1 last), then progenitor
  const int64_t order[5][2] = {{0, 0}, {1, 0}, {0, 1}, {-1, 2}, {2, -1}};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(l.result.links[k].progenitor_id, order[k][0]) << k;
    EXPECT_EQ(l.result.links[k].descendant_id, order[k][1]) << k;
  }
  const phew_link *ad = l.find(0, 0);
  EXPECT_EQ(ad->progenitor_mass, 1 + 2 + 3 + 4);
  EXPECT_EQ(ad->descendant_mass, 2.0 * (1 + 2 + 3 + 5 + 6));
  EXPECT_EQ(ad->shared_mass_earlier, 1 + 2 + 3);
  EXPECT_EQ(ad->shared_mass_later, 2.0 * (1 + 2 + 3));
  EXPECT_DOUBLE_EQ(ad->progenitor_fraction, 6.0 / 10.0);
  EXPECT_DOUBLE_EQ(ad->descendant_fraction, 12.0 / 34.0);
  EXPECT_EQ(ad->main_progenitor, 0); // B gives D 22 > 12
  EXPECT_EQ(ad->main_descendant, 1); // A gives D 6 > E's 4
  EXPECT_EQ(ad->n_progenitors, 2);   // A and B both go mainly into D: a merger
  EXPECT_EQ(ad->n_descendants, 1);   // only E has A as its main progenitor
  const phew_link *bd = l.find(1, 0);
  EXPECT_EQ(bd->shared_mass_earlier, 5 + 6);
  EXPECT_EQ(bd->progenitor_mass, 5 + 6 + 7);
  EXPECT_EQ(bd->main_progenitor, 1);
  EXPECT_EQ(bd->main_descendant, 1);
  EXPECT_EQ(bd->n_descendants, 1);
  const phew_link *ae = l.find(0, 1);
  EXPECT_EQ(ae->shared_mass_earlier, 4);
  EXPECT_EQ(ae->descendant_mass, 2.0 * (4 + 9));
  EXPECT_EQ(ae->main_progenitor, 1);
  EXPECT_EQ(ae->main_descendant, 0);
  EXPECT_EQ(ae->n_progenitors, 0);    // E is nobody's main descendant
  const phew_link *f = l.find(-1, 2); // new
  EXPECT_EQ(f->descendant_mass, 20);
  EXPECT_EQ(f->progenitor_mass, 0);
  EXPECT_EQ(f->shared_mass_later, 0);
  EXPECT_EQ(f->main_progenitor + f->main_descendant, 0);
  const phew_link *c = l.find(2, -1); // vanished
  EXPECT_EQ(c->progenitor_mass, 8);
  EXPECT_EQ(c->descendant_mass, 0);
  EXPECT_EQ(c->progenitor_fraction, 0);
}

// A split: one progenitor, two descendants that each come only from it; equal shares go to
// the smaller id.
TEST(LinkSteps, SplitAndEqualShares)
{
  Step a, b;
  for (int k = 0; k < 8; ++k) {
    a.id.push_back(100 + k), a.label.push_back(5);
    b.id.push_back(100 + k), b.label.push_back(k < 4 ? 7 : 3);
  }
  Links l(a, b); // no masses: 1 each
  ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
  ASSERT_EQ(l.result.n_links, 2);
  const phew_link *to3 = l.find(5, 3), *to7 = l.find(5, 7);
  ASSERT_TRUE(to3 && to7);
  EXPECT_EQ(to3->main_descendant, 1); // 4 = 4: the smaller id, 3
  EXPECT_EQ(to7->main_descendant, 0);
  EXPECT_EQ(to3->main_progenitor + to7->main_progenitor, 2);
  EXPECT_EQ(to3->n_descendants, 2); // a split
  EXPECT_EQ(to3->n_progenitors, 1);
  EXPECT_EQ(to7->n_progenitors, 0);
  EXPECT_EQ(to3->progenitor_fraction, 0.5);
  EXPECT_EQ(to3->descendant_fraction, 1.0);
}

// Random labellings, ids in random order and partly missing from one step, against a plain
// reference: masses are small integers, so every sum is exact in doubles as well.
TEST(LinkSteps, RandomLabellingsMatchAMapReference)
{
  std::mt19937_64 rng(20261126);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 3000), n_a = 1 + static_cast<int>(rng() % 12),
              n_b = 1 + static_cast<int>(rng() % 12);
    Step a, b;
    std::map<int64_t, std::pair<int64_t, double>> ea, eb;
    std::set<int64_t> used;
    for (int k = 0; k < n; ++k) {
      const int64_t id = static_cast<int64_t>(rng() % 1000000007);
      if (!used.insert(id).second)
        continue;
      const int64_t la = static_cast<int64_t>(rng() % (n_a + 1)) - 1, lb = static_cast<int64_t>(rng() % (n_b + 1)) - 1;
      const double ma = static_cast<double>(rng() % 50), mb = static_cast<double>(rng() % 50);
      if (rng() % 10)
        a.id.push_back(id), a.label.push_back(la), a.mass.push_back(ma), ea[id] = {la, ma};
      if (rng() % 10)
        b.id.push_back(id), b.label.push_back(lb), b.mass.push_back(mb), eb[id] = {lb, mb};
    }
    // reference
    std::map<int64_t, double> whole_a, whole_b;
    std::map<std::pair<int64_t, int64_t>, std::pair<double, double>> shared;
    for (auto &[id, v] : ea)
      if (v.first >= 0)
        whole_a[v.first] += v.second;
    for (auto &[id, v] : eb)
      if (v.first >= 0)
        whole_b[v.first] += v.second;
    for (auto &[id, v] : ea) {
      auto it = eb.find(id);
      if (v.first < 0 || it == eb.end() || it->second.first < 0)
        continue;
      auto &s = shared[{v.first, it->second.first}];
      s.first += v.second, s.second += it->second.second;
    }
    std::map<int64_t, int64_t> main_d, main_p; // progenitor -> main descendant, and back
    for (auto &[pd, s] : shared) {
      auto [p, d] = pd;
      if (!main_d.count(p) || s.first > shared[{p, main_d[p]}].first)
        main_d[p] = d;
      if (!main_p.count(d) || s.second > shared[{main_p[d], d}].second)
        main_p[d] = p;
    }
    std::set<std::tuple<uint64_t, int64_t>> expected_rows;
    for (auto &[pd, s] : shared)
      expected_rows.insert({static_cast<uint64_t>(pd.second), pd.first});
    for (auto &[p, m] : whole_a)
      if (!main_d.count(p))
        expected_rows.insert({static_cast<uint64_t>(-1), p});
    for (auto &[d, m] : whole_b)
      if (!main_p.count(d))
        expected_rows.insert({static_cast<uint64_t>(d), -1});

    Links l(a, b);
    ASSERT_EQ(l.status, PHEW_OK) << l.context.message;
    ASSERT_EQ(static_cast<size_t>(l.result.n_links), expected_rows.size()) << "trial " << trial;
    size_t k = 0;
    for (auto &[d, p] : expected_rows) { // the same rows in the same order
      const phew_link &x = l.result.links[k++];
      ASSERT_EQ(static_cast<uint64_t>(x.descendant_id), d);
      ASSERT_EQ(x.progenitor_id, p);
      EXPECT_EQ(x.progenitor_mass, p >= 0 ? whole_a[p] : 0.0);
      EXPECT_EQ(x.descendant_mass, x.descendant_id >= 0 ? whole_b[x.descendant_id] : 0.0);
      if (p < 0 || x.descendant_id < 0)
        continue;
      const auto s = shared[{p, x.descendant_id}];
      EXPECT_EQ(x.shared_mass_earlier, s.first);
      EXPECT_EQ(x.shared_mass_later, s.second);
      EXPECT_DOUBLE_EQ(x.progenitor_fraction, whole_a[p] > 0 ? s.first / whole_a[p] : 0.0);
      EXPECT_DOUBLE_EQ(x.descendant_fraction, whole_b[x.descendant_id] > 0 ? s.second / whole_b[x.descendant_id] : 0.0);
      EXPECT_EQ(x.main_descendant, main_d[p] == x.descendant_id ? 1 : 0);
      EXPECT_EQ(x.main_progenitor, main_p[x.descendant_id] == p ? 1 : 0);
      int64_t merging = 0, splitting = 0;
      for (auto &[q, d2] : main_d)
        merging += d2 == x.descendant_id;
      for (auto &[d2, q] : main_p)
        splitting += q == p;
      EXPECT_EQ(x.n_progenitors, merging);
      EXPECT_EQ(x.n_descendants, splitting);
    }
  }
}

TEST(LinkSteps, EmptyStepsGiveNoLinks)
{
  Step a, b;
  Links l(a, b);
  EXPECT_EQ(l.status, PHEW_OK);
  EXPECT_EQ(l.result.n_links, 0);
}

TEST(LinkSteps, BadInputIsRefusedWithAMessage)
{
  Step good;
  good.id = {1, 2};
  good.label = {0, 0};
  {
    Step twice = good;
    twice.id = {1, 1};
    Links l(good, twice);
    EXPECT_EQ(l.status, PHEW_ERROR_DATA);
    EXPECT_NE(std::string(l.context.message).find("passed twice in the later step"), std::string::npos)
        << l.context.message;
    EXPECT_EQ(l.result.links, nullptr);
  }
  {
    Step nan = good;
    nan.mass = {1.0, std::nan("")};
    Links l(nan, good);
    EXPECT_EQ(l.status, PHEW_ERROR_DATA);
    EXPECT_NE(std::string(l.context.message).find("finite"), std::string::npos) << l.context.message;
  }
  {
    Step bad_label = good;
    bad_label.label = {0, -2};
    Links l(good, bad_label);
    EXPECT_EQ(l.status, PHEW_ERROR_DATA);
  }
  {
    Step negative_id = good;
    negative_id.id = {-5, 2};
    Links l(negative_id, good);
    EXPECT_EQ(l.status, PHEW_ERROR_DATA);
  }
  phew_context context;
  phew_context_init(&context);
  phew_link_result result{};
  const phew_step_labels s = good.view();
  EXPECT_EQ(phew_link_steps(&context, nullptr, &s, &result), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("missing"), std::string::npos);
  phew_link_result_free(&result);
}
