// Bad input: every failure returns an error status with a message, leaves the labels filled
// with -1 (when they were given), hands back an empty result, and does not crash.
#include "phew_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace phewtest;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Field small_field()
{
  Field f = smoothed_noise(9, 8, 7, 21, 1);
  return f;
}

void expect_failure(const Run &r, phew_status want, const char *what)
{
  SCOPED_TRACE(what);
  EXPECT_EQ(r.status, want) << "message: " << r.context.message;
  EXPECT_NE(r.status, PHEW_OK);
  EXPECT_GT(std::strlen(r.context.message), 0u) << "an error needs a message";
  EXPECT_LT(std::strlen(r.context.message), sizeof r.context.message);
  EXPECT_EQ(r.result.n_clumps, 0);
  EXPECT_EQ(r.result.n_haloes, 0);
  EXPECT_EQ(r.result.n_nodes, 0);
  EXPECT_EQ(r.result.clumps, nullptr);
  EXPECT_EQ(r.result.haloes, nullptr);
  EXPECT_EQ(r.result.nodes, nullptr);
  int64_t not_minus_one = 0;
  for (size_t c = 0; c < r.patch.size(); ++c)
    not_minus_one += (r.patch[c] != -1) + (r.clump[c] != -1) + (r.halo[c] != -1);
  EXPECT_EQ(not_minus_one, 0) << "after an error the labels must be left filled with -1";
}

TEST(BadInput, NaNInfAndNegativeDensity)
{
  struct Case {
    double value;
    const char *name;
  } cases[] = {{kNaN, "NaN"}, {kInf, "+Inf"}, {-kInf, "-Inf"}, {-1.0, "-1"}, {-1e-30, "-1e-30"}};
  for (const Case &k : cases)
    for (int f32 = 0; f32 < 2; ++f32)
      for (int64_t where : {int64_t(0), int64_t(200), int64_t(503)}) { // corner, inside, last cell
        Field f = small_field();
        if (f32)
          f.to_float32();
        f.rho[(size_t)where] = k.value;
        if (f32)
          f.rho32[(size_t)where] = (float)k.value;
        auto r = run(f, make_params(0.2));
        expect_failure(
            *r, PHEW_ERROR_DATA,
            (std::string(k.name) + (f32 ? " float32" : " float64") + " at cell " + std::to_string(where)).c_str());
      }
}

TEST(BadInput, BadValueBelowTheThresholdIsStillAnError)
{
  Field f = small_field();
  f.rho[10] = -0.5;
  auto r = run(f, make_params(100.0)); // no test cells at all
  expect_failure(*r, PHEW_ERROR_DATA, "negative density below the threshold");
}

TEST(BadInput, Thresholds)
{
  const Field f = small_field();
  // negative density and saddle thresholds are automatic (test_automatic_thresholds.cpp)
  expect_failure(*run(f, make_params(kNaN)), PHEW_ERROR_ARGUMENT, "NaN density threshold");
  expect_failure(*run(f, make_params(kInf)), PHEW_ERROR_ARGUMENT, "infinite density threshold");
  expect_failure(*run(f, make_params(0.3, -1.0)), PHEW_ERROR_ARGUMENT, "negative relevance threshold");
  expect_failure(*run(f, make_params(0.3, 0.0)), PHEW_ERROR_ARGUMENT, "relevance threshold 0");
  expect_failure(*run(f, make_params(0.3, std::nextafter(1.0, 0.0))), PHEW_ERROR_ARGUMENT,
                 "relevance threshold just below 1");
  expect_failure(*run(f, make_params(0.3, kNaN)), PHEW_ERROR_ARGUMENT, "NaN relevance threshold");
  expect_failure(*run(f, make_params(0.3, 2.0, 1, kNaN)), PHEW_ERROR_ARGUMENT, "NaN saddle threshold");
  expect_failure(*run(f, make_params(0.3, 2.0, 1, kInf)), PHEW_ERROR_ARGUMENT, "infinite saddle threshold");
  expect_failure(*run(f, make_params(0.3, 2.0, 0, 0.0, kNaN)), PHEW_ERROR_ARGUMENT, "NaN mass threshold");
  EXPECT_EQ(run(f, make_params(0.3, 1.0))->status, PHEW_OK) << "relevance threshold 1 keeps every peak";
}

TEST(BadInput, ParamsInitDefaults)
{
  phew_params p;
  std::memset(&p, 0x5a, sizeof p);
  phew_params_init(&p);
  EXPECT_EQ(p.density_threshold, PHEW_THRESHOLD_AUTOMATIC);
  EXPECT_EQ(p.relevance_threshold, 2.0);
  EXPECT_EQ(p.saddle_merging, 0);
  EXPECT_EQ(p.saddle_threshold, PHEW_THRESHOLD_AUTOMATIC);
  EXPECT_EQ(p.mass_threshold, 0.0);
  EXPECT_EQ(p.peak_order_seed, 0u);
}

// Runs phew_find_clumps on a grid made by `edit` from a valid 9x8x7 grid; labels sized for
// the valid grid (the largest the call may touch).
std::unique_ptr<Run> run_grid(void (*edit)(phew_grid &), const Field &f)
{
  std::unique_ptr<Run> r(new Run);
  const size_t n = (size_t)f.size();
  r->patch.assign(n, -7);
  r->clump.assign(n, -7);
  r->halo.assign(n, -7);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, f.n[0], f.n[1], f.n[2]);
  edit(in.grid);
  in.density = f.rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_labels labels = {r->patch.data(), r->clump.data(), r->halo.data(), nullptr};
  const phew_params p = make_params(0.3);
  r->status = phew_find_clumps(&r->context, &in, &p, &labels, &r->result);
  return r;
}

TEST(BadInput, GridDimensionsAndGeometry)
{
  const Field f = small_field();
  struct Case {
    void (*edit)(phew_grid &);
    const char *name;
  } cases[] = {
      {[](phew_grid &g) { g.global_dims[0] = g.stored_dims[0] = g.active_dims[0] = 0; }, "zero x dimension"},
      {[](phew_grid &g) { g.global_dims[2] = g.stored_dims[2] = g.active_dims[2] = 0; }, "zero z dimension"},
      {[](phew_grid &g) { g.global_dims[1] = g.stored_dims[1] = g.active_dims[1] = -3; }, "negative dimension"},
      {[](phew_grid &g) { g.spacing[1] = 0.0; }, "zero spacing"},
      {[](phew_grid &g) { g.spacing[0] = -1.0; }, "negative spacing"},
      {[](phew_grid &g) { g.spacing[2] = std::numeric_limits<double>::quiet_NaN(); }, "NaN spacing"},
      {[](phew_grid &g) { g.origin[0] = std::numeric_limits<double>::infinity(); }, "infinite origin"},
      {[](phew_grid &g) { g.active_dims[0] = g.global_dims[0] + 1; }, "active box larger than the grid"},
      {[](phew_grid &g) { g.stored_offset[1] = -1; }, "ghost layer beyond a non-periodic edge"},
  };
  for (const Case &k : cases) {
    auto r = run_grid(k.edit, f);
    SCOPED_TRACE(k.name);
    EXPECT_EQ(r->status, PHEW_ERROR_ARGUMENT) << r->context.message;
    EXPECT_GT(std::strlen(r->context.message), 0u);
    EXPECT_EQ(r->result.n_clumps, 0);
    EXPECT_EQ(r->result.clumps, nullptr);
  }
  // zero dimensions: there are no cells, nothing to label, and still an error
  Field empty;
  empty.n[0] = 0;
  empty.n[1] = 5;
  empty.n[2] = 5;
  auto r = run(empty, make_params(0.3));
  EXPECT_EQ(r->status, PHEW_ERROR_ARGUMENT);
  EXPECT_GT(std::strlen(r->context.message), 0u);
}

TEST(BadInput, GridErrorsLeaveTheLabelsAtMinusOne)
{
  // a geometry error on a grid that has cells: the caller's label arrays must still be reset
  const Field f = small_field();
  auto r = run_grid([](phew_grid &g) { g.spacing[1] = 0.0; }, f);
  expect_failure(*r, PHEW_ERROR_ARGUMENT, "zero spacing");
}

TEST(BadInput, NullPointers)
{
  Field f = small_field();
  const size_t n = (size_t)f.size();
  std::vector<int64_t> a(n, -7), b(n, -7), c(n, -7);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, f.n[0], f.n[1], f.n[2]);
  in.density = f.rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_labels labels = {a.data(), b.data(), c.data(), nullptr};
  const phew_params p = make_params(0.3);
  phew_context context;
  phew_context_init(&context);
  phew_clump_result res;

  auto check = [&](phew_status s, const char *what, bool labels_given) {
    SCOPED_TRACE(what);
    EXPECT_EQ(s, PHEW_ERROR_ARGUMENT);
    EXPECT_GT(std::strlen(context.message), 0u);
    EXPECT_EQ(res.n_clumps, 0);
    EXPECT_EQ(res.clumps, nullptr);
    if (labels_given) {
      int64_t bad = 0;
      for (size_t i = 0; i < n; ++i)
        bad += (a[i] != -1) + (b[i] != -1) + (c[i] != -1);
      EXPECT_EQ(bad, 0) << "labels not reset to -1";
    }
    phew_clump_result_free(&res);
    std::fill(a.begin(), a.end(), -7);
    std::fill(b.begin(), b.end(), -7);
    std::fill(c.begin(), c.end(), -7);
  };

  check(phew_find_clumps(&context, nullptr, &p, &labels, &res), "NULL input", false);
  check(phew_find_clumps(&context, &in, nullptr, &labels, &res), "NULL params", false);
  check(phew_find_clumps(&context, &in, &p, nullptr, &res), "NULL labels", false);
  EXPECT_NE(phew_find_clumps(&context, &in, &p, &labels, nullptr), PHEW_OK) << "NULL result";
  in.density = nullptr;
  check(phew_find_clumps(&context, &in, &p, &labels, &res), "NULL density", true);
  in.density = f.rho.data();
  phew_labels partial = {a.data(), nullptr, c.data(), nullptr};
  check(phew_find_clumps(&context, &in, &p, &partial, &res), "NULL clump_id", false);
  partial = {nullptr, b.data(), c.data(), nullptr};
  check(phew_find_clumps(&context, &in, &p, &partial, &res), "NULL peak_patch_id", false);
  partial = {a.data(), b.data(), nullptr, nullptr};
  check(phew_find_clumps(&context, &in, &p, &partial, &res), "NULL halo_id", false);
  in.density_type = (phew_scalar_type)7;
  check(phew_find_clumps(&context, &in, &p, &labels, &res), "unknown density type", true);
  in.density_type = PHEW_FLOAT64;
  // and a valid call afterwards still works
  ASSERT_EQ(phew_find_clumps(&context, &in, &p, &labels, &res), PHEW_OK) << context.message;
  EXPECT_STREQ(context.message, "");
  phew_clump_result_free(&res);
}

#ifndef PHEW_TESTS_WITH_MPI // only meaningful for a libphew built without MPI
TEST(BadInput, MpiCommunicatorWithoutMpi)
{
  ASSERT_FALSE(phew_has_mpi());
  Field f = small_field();
  int fake_comm = 0;
  const size_t n = (size_t)f.size();
  std::vector<int64_t> a(n), b(n), c(n);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, f.n[0], f.n[1], f.n[2]);
  in.density = f.rho.data();
  in.density_type = PHEW_FLOAT64;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &fake_comm;
  phew_labels labels = {a.data(), b.data(), c.data(), nullptr};
  const phew_params p = make_params(0.3);
  phew_clump_result res;
  EXPECT_EQ(phew_find_clumps(&context, &in, &p, &labels, &res), PHEW_ERROR_MPI);
  EXPECT_GT(std::strlen(context.message), 0u);
  phew_clump_result_free(&res);
}
#endif

TEST(BadInput, ResultFreeIsIdempotent)
{
  const Field f = small_field();
  auto r = run(f, make_params(0.3));
  ASSERT_EQ(r->status, PHEW_OK);
  phew_clump_result_free(&r->result);
  EXPECT_EQ(r->result.clumps, nullptr);
  EXPECT_EQ(r->result.n_clumps, 0);
  phew_clump_result_free(&r->result); // and again in ~Run
  phew_clump_result_free(nullptr);
}

TEST(BadInput, StatusAndStageStrings)
{
  for (int s = PHEW_OK; s <= PHEW_ERROR_IO; ++s) {
    ASSERT_NE(phew_status_string((phew_status)s), nullptr);
    EXPECT_GT(std::strlen(phew_status_string((phew_status)s)), 0u);
  }
  EXPECT_NE(phew_status_string((phew_status)99), nullptr);
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k)
    EXPECT_GT(std::strlen(phew_stage_name(k)), 0u);
  EXPECT_NE(phew_stage_name(-1), nullptr);
  EXPECT_NE(phew_stage_name(PHEW_STAGE_COUNT), nullptr);
}

TEST(BadInput, ColumnsNameTheLabelArrays)
{
  int n = 0;
  const phew_column *c = phew_clump_columns(0, &n);
  ASSERT_GT(n, 0);
  EXPECT_STREQ(c[0].name, PHEW_ARRAY_CLUMP_ID);
  const phew_column *h = phew_halo_columns(0, &n);
  ASSERT_GT(n, 0);
  EXPECT_STREQ(h[0].name, PHEW_ARRAY_HALO_ID);
  phew_object o;
  std::memset(&o, 0, sizeof o);
  o.id = 42;
  o.mass = 2.5;
  const phew_column *cols = phew_clump_columns(0, &n);
  bool saw_mass = false;
  for (int i = 0; i < n; ++i)
    if (!std::strcmp(cols[i].name, "Mass")) {
      saw_mass = true;
      EXPECT_EQ(phew_column_as_double(&cols[i], &o), 2.5);
    }
  EXPECT_TRUE(saw_mass);
  EXPECT_EQ(phew_column_as_int64(&cols[0], &o), 42);
  EXPECT_EQ(phew_column_as_double(&cols[0], &o), 42.0);
}

} // namespace
