// Cancel requests (phew_context.cancel): a run asked to stop returns PHEW_CANCELLED with every
// label -1 and an empty result, whether asked at a stage boundary or inside the watershed's
// or the catalogue's loops; a callback that never asks changes nothing; particles stop
// between their stages.
#include "phew_test_util.h"
extern "C" {
#include "threads.h" // threads_set_core_limit: 4 threads on any machine
}

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace phewtest;

namespace {

// Counts the callback's calls, with the progress reported just before each; asks to stop
// from call number `stop_at` on (0: never).
struct Asker {
  int calls = 0;
  int stop_at = 0;
  double last_progress = -1.0;
  std::string last_stage;
  std::vector<std::string> stage_at_call;
  std::vector<double> progress_at_call;
};

int ask(void *data)
{
  Asker *a = static_cast<Asker *>(data);
  ++a->calls;
  a->stage_at_call.push_back(a->last_stage);
  a->progress_at_call.push_back(a->last_progress);
  return a->stop_at > 0 && a->calls >= a->stop_at;
}

void note_progress(double fraction, const char *stage, void *data)
{
  Asker *a = static_cast<Asker *>(data);
  a->last_progress = fraction;
  a->last_stage = stage ? stage : "";
}

struct GridRun {
  phew_status status;
  phew_context context;
  phew_clump_result result;
  std::vector<int64_t> patch, clump, halo;
  GridRun() { phew_context_init(&context); }
  ~GridRun() { phew_clump_result_free(&result); }
};

// The grid's loops run on `threads` threads (0: all cores): their ticks come in waves on the
// calling thread, the same calls for any count.
void run_grid(const Field &f, Asker *asker, GridRun &r, int labels_active_only = 0, int threads = 0)
{
  r.context.n_threads = threads;
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, f.n[0], f.n[1], f.n[2]);
  in.density = f.rho.data();
  in.density_type = PHEW_FLOAT64;
  in.labels_active_only = labels_active_only;
  if (asker) {
    r.context.cancel = ask;
    r.context.cancel_data = asker;
    r.context.progress = note_progress;
    r.context.progress_data = asker;
  }
  r.patch.assign((size_t)f.size(), 7);
  r.clump.assign(r.patch.size(), 7);
  r.halo.assign(r.patch.size(), 7);
  phew_labels labels = {r.patch.data(), r.clump.data(), r.halo.data(), nullptr};
  phew_params p = make_params(quantile(f, 0.6), 1.0, 1, quantile(f, 0.9));
  r.status = phew_find_clumps(&r.context, &in, &p, &labels, &r.result);
}

void expect_stopped(const GridRun &r)
{
  EXPECT_EQ(r.status, PHEW_CANCELLED);
  EXPECT_NE(std::strstr(r.context.message, "stopped on request"), nullptr) << r.context.message;
  EXPECT_EQ(r.result.n_clumps, 0);
  EXPECT_EQ(r.result.n_haloes, 0);
  EXPECT_EQ(r.result.n_nodes, 0);
  for (size_t i = 0; i < r.clump.size(); ++i) {
    ASSERT_EQ(r.patch[i], -1) << i;
    ASSERT_EQ(r.clump[i], -1) << i;
    ASSERT_EQ(r.halo[i], -1) << i;
  }
}

TEST(Cancel, AtTheFirstStageBoundary)
{
  Field f = smoothed_noise(24, 20, 16, 3, 2);
  Asker asker;
  asker.stop_at = 1;
  GridRun r;
  run_grid(f, &asker, r);
  expect_stopped(r);
  EXPECT_EQ(asker.calls, 1);
  EXPECT_EQ(asker.last_stage, "watershed");
}

// While it lives, 4 threads run as 4 on a machine with fewer cores.
struct AnyCoreCount {
  AnyCoreCount() { threads_set_core_limit(8); }
  ~AnyCoreCount() { threads_set_core_limit(0); }
};

TEST(Cancel, InsideTheWatershedLoop)
{
  // Call 1 is the stage boundary, calls 2.. the loop's ticks (one per z plane of 16).
  const AnyCoreCount cores;
  Field f = smoothed_noise(24, 20, 16, 3, 2);
  for (int threads : {1, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Asker asker;
    asker.stop_at = 6;
    GridRun r;
    run_grid(f, &asker, r, 0, threads);
    expect_stopped(r);
    EXPECT_EQ(asker.calls, 6) << "asked again after the stop";
    EXPECT_EQ(asker.last_stage, "watershed");
    EXPECT_GT(asker.last_progress, 0.0) << "stopped before the loop";
    EXPECT_LT(asker.last_progress, 0.5) << "stopped after the watershed stage";
  }
}

TEST(Cancel, AtEachLaterStage)
{
  Field f = smoothed_noise(24, 20, 16, 3, 2);
  Asker count;
  GridRun all;
  run_grid(f, &count, all);
  ASSERT_EQ(all.status, PHEW_OK) << all.context.message;
  // a stage boundary is the first call under a new stage name
  const std::vector<std::string> later = {"saddles", "noise removal", "saddle merging", "properties"};
  for (const std::string &stage : later) {
    int boundary = 0;
    for (size_t k = 1; k < count.stage_at_call.size() && !boundary; ++k)
      if (count.stage_at_call[k] == stage && count.stage_at_call[k - 1] != stage)
        boundary = (int)k + 1;
    ASSERT_GT(boundary, 0) << stage << " was never asked";
    Asker asker;
    asker.stop_at = boundary;
    GridRun r;
    run_grid(f, &asker, r);
    SCOPED_TRACE("stopped at call " + std::to_string(boundary) + " (" + stage + ")");
    expect_stopped(r);
    EXPECT_EQ(asker.calls, boundary);
  }
}

TEST(Cancel, InsideTheCatalogueLoops)
{
  // After its boundary (one call) the properties stage ticks once per z plane (16) while it
  // sums the cells, then while it labels them: every 65536 cells (here once), or per z plane
  // when the labels are written over the active cells alone (in place: a stop half way
  // leaves them half written, and the run must still come back empty).
  const AnyCoreCount cores;
  Field f = smoothed_noise(24, 20, 16, 3, 2);
  for (int combination = 0; combination < 4; ++combination) {
    const int active_only = combination % 2, threads = combination < 2 ? 1 : 4;
    SCOPED_TRACE("labels_active_only " + std::to_string(active_only) + ", threads " + std::to_string(threads));
    Asker count;
    GridRun all;
    run_grid(f, &count, all, active_only, threads);
    ASSERT_EQ(all.status, PHEW_OK) << all.context.message;
    int boundary = 0;
    while (boundary < count.calls && count.stage_at_call[(size_t)boundary] != "properties")
      ++boundary;
    ++boundary; // the call number of the stage boundary
    const int label_ticks = active_only ? 16 : 1;
    ASSERT_EQ(count.calls, boundary + 16 + label_ticks) << "the properties stage's ticks";
    const double sums_from = count.progress_at_call[(size_t)boundary - 1];
    const double labels_from = count.progress_at_call[(size_t)boundary + 16];
    EXPECT_GT(labels_from, count.progress_at_call[(size_t)boundary + 15]) << "the labels start after the sums";
    EXPECT_GT(count.progress_at_call[(size_t)boundary + 1], sums_from);
    // a plane inside the sums, the first label tick, one half way through the labels
    std::vector<int> stops = {boundary + 5, boundary + 17};
    if (active_only)
      stops.push_back(boundary + 16 + 9);
    for (int stop_at : stops) {
      Asker asker;
      asker.stop_at = stop_at;
      GridRun r;
      run_grid(f, &asker, r, active_only, threads);
      SCOPED_TRACE("stopped at call " + std::to_string(stop_at));
      expect_stopped(r);
      EXPECT_EQ(asker.calls, stop_at) << "asked again after the stop";
      EXPECT_EQ(asker.last_stage, "properties");
    }
  }
}

TEST(Cancel, GraphsInsideEveryLoop)
{
  // 73728 cells: the graph's loops tick at cells 0 and 65536 (watershed, sums, labels). A stop
  // at any call leaves the run empty; progress never goes back.
  Field f = smoothed_noise(48, 48, 32, 4, 2);
  const phew_params p = make_params(quantile(f, 0.6), 1.0, 1, quantile(f, 0.9));
  Asker count;
  auto ask_with = [](Asker *a) {
    return [a](phew_input &, phew_context &context) {
      context.cancel = ask;
      context.cancel_data = a;
      context.progress = note_progress;
      context.progress_data = a;
    };
  };
  auto all = run_graph(f, p, 3, -7, ask_with(&count));
  ASSERT_EQ(all->status, PHEW_OK) << all->context.message;
  ASSERT_GT(all->n_clumps(), 1);
  EXPECT_EQ(count.calls, 5 + 3 * 2) << "five stages, two ticks in each of three loops";
  for (size_t k = 1; k < count.progress_at_call.size(); ++k)
    EXPECT_GE(count.progress_at_call[k], count.progress_at_call[k - 1]) << "progress went back at call " << k + 1;
  for (int stop_at = 1; stop_at <= count.calls; ++stop_at) {
    Asker asker;
    asker.stop_at = stop_at;
    auto r = run_graph(f, p, 3, -7, ask_with(&asker));
    SCOPED_TRACE("stopped at call " + std::to_string(stop_at) + " (" + count.stage_at_call[(size_t)stop_at - 1] + ")");
    EXPECT_EQ(r->status, PHEW_CANCELLED);
    EXPECT_EQ(r->n_clumps(), 0);
    EXPECT_EQ(asker.calls, stop_at) << "asked again after the stop";
    for (size_t i = 0; i < r->clump.size(); ++i)
      ASSERT_EQ(r->clump[i], -1) << i;
  }
}

TEST(Cancel, NeverAskedChangesNothing)
{
  Field f = smoothed_noise(24, 20, 16, 3, 2);
  Asker asker; // never stops
  GridRun with, without;
  run_grid(f, &asker, with);
  run_grid(f, nullptr, without);
  ASSERT_EQ(with.status, PHEW_OK) << with.context.message;
  ASSERT_EQ(without.status, PHEW_OK) << without.context.message;
  EXPECT_EQ(asker.calls, 5 + 16 + 16 + 1)
      << "the five stages, 16 planes by the watershed and the sums, one by the labels";
  for (size_t k = 1; k < asker.progress_at_call.size(); ++k)
    EXPECT_GE(asker.progress_at_call[k], asker.progress_at_call[k - 1]) << "progress went back at call " << k + 1;
  EXPECT_GT(with.result.n_clumps, 1);
  EXPECT_EQ(with.result.n_clumps, without.result.n_clumps);
  EXPECT_EQ(with.result.n_nodes, without.result.n_nodes);
  EXPECT_EQ(with.clump, without.clump);
  EXPECT_EQ(with.halo, without.halo);
  EXPECT_EQ(with.patch, without.patch);
  EXPECT_EQ(asker.last_progress, 1.0);
}

TEST(Cancel, ParticlesStopBetweenStages)
{
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int64_t n = 2000;
  std::vector<double> pos((size_t)(3 * n));
  for (double &x : pos)
    x = u(rng);
  for (int stop_at = 1; stop_at <= 3; ++stop_at) {
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_POINTS;
    phew_points_init(&in.points);
    in.points.n = n;
    in.points.position = pos.data();
    in.points.has_box = 1;
    for (int d = 0; d < 3; ++d) {
      in.points.box_size[d] = 1.0;
      in.points.periodic[d] = 1;
    }
    Asker asker;
    asker.stop_at = stop_at;
    phew_context context;
    phew_context_init(&context);
    context.cancel = ask;
    context.cancel_data = &asker;
    std::vector<int64_t> patch((size_t)n, 7), clump((size_t)n, 7), halo((size_t)n, 7);
    std::vector<double> rho((size_t)n, 7.0);
    phew_labels labels = {patch.data(), clump.data(), halo.data(), rho.data()};
    phew_params p;
    phew_params_init(&p);
    phew_clump_result result;
    SCOPED_TRACE("stopped at call " + std::to_string(stop_at));
    EXPECT_EQ(phew_find_clumps(&context, &in, &p, &labels, &result), PHEW_CANCELLED) << context.message;
    EXPECT_EQ(result.n_clumps, 0);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(clump[(size_t)i], -1);
    phew_clump_result_free(&result);
  }
}

} // namespace
