// Command-line checks: the phew binary on raw fields written at test time.
//  - success: the six output files exist, label files have 8 bytes per cell and hold what a
//    direct library call gives, CSV headers are the column lists, CSV rows are the catalogue;
//  - failure (missing file, wrong size, bad --type, missing or bad options, bad data, an
//    unwritable output): non-zero exit, exactly one line on stderr, no output files left;
//  - issue 7: sizes that overflow int64, numeric options at the edges of the double range,
//    outputs checked before computing, failures at every step (simulated with the test-only
//    fault shim io_fault_shim.c, a file size limit, directories at output names) and signals
//    leave a previous run's outputs byte for byte as they were and no temporary file.
#include "cli_test_util.h"
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cli_test;

TEST_F(Cli, WritesAllOutputsMatchingTheLibrary)
{
  const int64_t nx = 21, ny = 14, nz = 11;
  const std::vector<double> v = field(nx, ny, nz, 4242);
  struct Variant {
    bool f32;
    bool periodic;
    bool saddle;
    const char *prefix;
    bool int32; // --labels int32 (and --threads 3: the answers do not depend on threads)
  } variants[] = {{true, false, false, "f32", false},
                  {false, true, true, "f64", false},
                  {false, true, true, "i32", true}};
  for (const Variant &k : variants) {
    SCOPED_TRACE(k.prefix);
    write_raw("in.raw", v, k.f32);
    // clang-format off
    std::vector<std::string> args = {"--input", "in.raw", "--dims", std::to_string(nx), std::to_string(ny),
                                     std::to_string(nz), "--type", k.f32 ? "float32" : "float64", "--threshold",
                                     "0.5", "--relevance", "1.05", "--spacing", "0.5", "2", "1.5", "--origin",
                                     "-1", "0", "3", "--output", std::string("out/") + k.prefix};
    // clang-format on
    if (k.periodic)
      args.push_back("--periodic");
    if (k.saddle) {
      args.push_back("--saddle");
      args.push_back("0.52");
    }
    if (k.int32)
      args.insert(args.end(), {"--labels", "int32", "--threads", "3"});
    ASSERT_EQ(mkdir(path("out").c_str(), 0755) == 0 || errno == EEXIST, true);
    const Outcome o = run(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err, "");

    // the same run through the library
    Library lib;
    const size_t n = (size_t)(nx * ny * nz);
    lib.patch.resize(n);
    lib.clump.resize(n);
    lib.halo.resize(n);
    std::vector<float> v32(v.begin(), v.end());
    phew_input in;
    std::memset(&in, 0, sizeof in);
    phew_grid_init_whole(&in.grid, nx, ny, nz);
    const double spacing[3] = {0.5, 2, 1.5}, origin[3] = {-1, 0, 3};
    for (int d = 0; d < 3; ++d) {
      in.grid.periodic[d] = k.periodic;
      in.grid.spacing[d] = spacing[d];
      in.grid.origin[d] = origin[d];
    }
    in.density = k.f32 ? (const void *)v32.data() : (const void *)v.data();
    in.density_type = k.f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
    phew_params p;
    phew_params_init(&p);
    p.density_threshold = 0.5;
    p.relevance_threshold = 1.05;
    p.saddle_merging = k.saddle;
    p.saddle_threshold = 0.52;
    phew_labels labels = {lib.patch.data(), lib.clump.data(), lib.halo.data(), nullptr};
    ASSERT_EQ(phew_find_clumps(&lib.context, &in, &p, &labels, &lib.result), PHEW_OK) << lib.context.message;
    ASSERT_GT(lib.result.n_clumps, 2) << "the test field should have several clumps";

    const std::string base = path(std::string("out/") + k.prefix);
    for (const char *s : kSuffixes)
      ASSERT_TRUE(exists(base + s)) << base + s;
    const std::vector<int64_t> *label_arrays[3] = {&lib.patch, &lib.clump, &lib.halo};
    const size_t width = k.int32 ? 4 : 8;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(file_size(base + kSuffixes[i]), (long)(n * width)) << kSuffixes[i];
      const std::string raw = slurp(base + kSuffixes[i]);
      ASSERT_EQ(raw.size(), n * width);
      std::vector<int64_t> got(n);
      if (k.int32) {
        std::vector<int32_t> narrow(n);
        std::memcpy(narrow.data(), raw.data(), raw.size()); // little-endian, like this machine
        got.assign(narrow.begin(), narrow.end());
      } else {
        std::memcpy(got.data(), raw.data(), raw.size());
      }
      EXPECT_TRUE(got == *label_arrays[i]) << kSuffixes[i] << " differs from the library's labels";
    }
    EXPECT_NE(slurp(base + "-run.json").find(k.int32 ? "\"labels\": \"int32\"" : "\"labels\": \"int64\""),
              std::string::npos);
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(lib.result.columns, &nc),
                      *hc = phew_halo_columns(lib.result.columns, &nh),
                      *dc = phew_node_columns(lib.result.columns, &nn);
    expect_csv(slurp(base + "-clumps.csv"), cc, nc, lib.result.clumps, lib.result.n_clumps, sizeof(phew_object),
               "clumps.csv");
    expect_csv(slurp(base + "-haloes.csv"), hc, nh, lib.result.haloes, lib.result.n_haloes, sizeof(phew_object),
               "haloes.csv");
    expect_csv(slurp(base + "-dendrogram.csv"), dc, nn, lib.result.nodes, lib.result.n_nodes, sizeof(phew_node),
               "dendrogram.csv");
    // header names as users see them
    EXPECT_EQ(lines_of(slurp(base + "-clumps.csv"))[0].rfind("ClumpId,HaloId,", 0), 0u);
    EXPECT_EQ(lines_of(slurp(base + "-haloes.csv"))[0].rfind("HaloId,", 0), 0u);
    EXPECT_EQ(lines_of(slurp(base + "-dendrogram.csv"))[0].rfind("NodeId,ParentId,", 0), 0u);
    // nothing else written next to the outputs (no temporaries)
    int others = 0;
    DIR *d = opendir(path("out").c_str());
    while (dirent *e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.compare(0, std::strlen(k.prefix), k.prefix) == 0 &&
          (name.find(".partial") != std::string::npos || name.find(".previous") != std::string::npos))
        ++others;
    }
    closedir(d);
    EXPECT_EQ(others, 0) << "temporary or backup files left";
  }
}

TEST_F(Cli, VerboseAndHelp)
{
  const std::vector<double> v = field(8, 8, 8, 7);
  write_raw("in.raw", v, false);
  const Outcome o = run({"--input", "in.raw", "--dims", "8", "8", "8", "--type", "float64", "--threshold", "0.5",
                         "--output", "res", "--verbose"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("peaks"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(files_starting("res").size(), 7u);
  const Outcome h = run({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("usage"), std::string::npos);
}

// Issue 12: --threshold auto (also the default) and --saddle auto are 10 x the mean density
// and 2.5 x that, as the library computes them; --verbose prints them; the labels equal a
// run with those thresholds given as numbers.
TEST_F(Cli, AutomaticThresholds)
{
  const int64_t nx = 16, ny = 12, nz = 10, n = nx * ny * nz;
  std::vector<double> v = field(nx, ny, nz, 31);
  // blobs far above ten times the mean, two of them close enough to merge
  const double blobs[5][4] = {{3, 3, 3, 60}, {6.5, 3, 3, 50}, {11, 8, 6, 80}, {4, 9, 7, 40}, {12, 3, 2, 70}};
  for (int64_t i = 0; i < n; ++i) {
    const double c[3] = {(double)(i % nx), (double)(i / nx % ny), (double)(i / (nx * ny))};
    for (const auto &b : blobs) {
      const double r2 = (c[0] - b[0]) * (c[0] - b[0]) + (c[1] - b[1]) * (c[1] - b[1]) + (c[2] - b[2]) * (c[2] - b[2]);
      v[(size_t)i] += b[3] * std::exp(-0.5 * r2);
    }
  }
  write_raw("in.raw", v, false);
  const std::vector<std::string> base = {
      "--input",          "in.raw", "--dims",  std::to_string(nx), std::to_string(ny),
      std::to_string(nz), "--type", "float64", "--saddle",         "auto"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const Outcome def = run(with({"--output", "def", "--verbose"}));
  const Outcome aut = run(with({"--threshold", "auto", "--output", "auto"}));
  ASSERT_EQ(def.exit_code, 0) << def.err;
  ASSERT_EQ(aut.exit_code, 0) << aut.err;

  Library lib;
  lib.patch.resize((size_t)n);
  lib.clump.resize((size_t)n);
  lib.halo.resize((size_t)n);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, nx, ny, nz);
  in.density = v.data();
  in.density_type = PHEW_FLOAT64;
  phew_params p;
  phew_params_init(&p); // automatic thresholds
  p.saddle_merging = 1;
  phew_labels labels = {lib.patch.data(), lib.clump.data(), lib.halo.data(), nullptr};
  ASSERT_EQ(phew_find_clumps(&lib.context, &in, &p, &labels, &lib.result), PHEW_OK) << lib.context.message;
  ASSERT_GT(lib.result.n_clumps, 1) << "the test field should have clumps above 10 x its mean";
  long double sum = 0.0L;
  for (double x : v)
    sum += x;
  const double mean = (double)(sum / (long double)n);
  EXPECT_NEAR(lib.result.mean_density, mean, 1e-12 * mean);
  EXPECT_EQ(lib.result.density_threshold_used, 10.0 * lib.result.mean_density);
  EXPECT_EQ(lib.result.saddle_threshold_used, 2.5 * lib.result.density_threshold_used);

  std::vector<int64_t> got((size_t)n);
  const std::string raw = slurp(path("def-clump.raw"));
  ASSERT_EQ(raw.size(), (size_t)n * 8);
  std::memcpy(got.data(), raw.data(), raw.size());
  EXPECT_TRUE(got == lib.clump) << "the default threshold is not the library's automatic one";
  for (const char *s : kSuffixes)
    EXPECT_EQ(slurp(path(std::string("auto") + s)), slurp(path(std::string("def") + s))) << s;
  char line[256];
  std::snprintf(line, sizeof line,
                "thresholds: density %.9g (auto: 10 x the mean density), relevance 2, saddle %.9g (auto: 2.5 x the "
                "density threshold); mean density %.9g\n",
                lib.result.density_threshold_used, lib.result.saddle_threshold_used, lib.result.mean_density);
  EXPECT_NE(def.out.find(line), std::string::npos) << "want: " << line << "got:\n" << def.out;

  char threshold[64], saddle[64];
  std::snprintf(threshold, sizeof threshold, "%.17g", lib.result.density_threshold_used);
  std::snprintf(saddle, sizeof saddle, "%.17g", lib.result.saddle_threshold_used);
  std::vector<std::string> given = {
      "--input",  "in.raw",  "--dims",      std::to_string(nx), std::to_string(ny), std::to_string(nz),
      "--type",   "float64", "--threshold", threshold,          "--saddle",         saddle,
      "--output", "given"};
  ASSERT_EQ(run(given).exit_code, 0);
  for (const char *s : kSuffixes)
    EXPECT_EQ(slurp(path(std::string("given") + s)), slurp(path(std::string("def") + s))) << s;

  // the run records: the thresholds as given ("auto", or the numbers) and as used, the counts
  const std::string automatic = slurp(path("def-run.json")), numbers = slurp(path("given-run.json"));
  char used[256], counts[160];
  std::snprintf(used, sizeof used, "\"density_threshold_used\": %s,\n    \"saddle_threshold_used\": %s,", threshold,
                saddle);
  std::snprintf(counts, sizeof counts, "\"clumps\": %lld,\n    \"haloes\": %lld\n", (long long)lib.result.n_clumps,
                (long long)lib.result.n_haloes);
  for (const std::string &record : {automatic, numbers}) {
    EXPECT_NE(record.find(used), std::string::npos) << record;
    EXPECT_NE(record.find(counts), std::string::npos) << record;
    EXPECT_NE(record.find("\"cells\": " + std::to_string(n) + ",\n"), std::string::npos) << record;
    EXPECT_NE(record.find("\"grid\": \"in.raw\""), std::string::npos) << record;
  }
  EXPECT_NE(automatic.find("\"density_threshold\": \"auto\","), std::string::npos) << automatic;
  EXPECT_NE(numbers.find(std::string("\"density_threshold\": ") + threshold + ","), std::string::npos) << numbers;
}

TEST_F(Cli, SuccessOverwritesAnEarlierRun)
{
  const std::vector<double> v = field(8, 8, 8, 9);
  write_raw("in.raw", v, false);
  const std::vector<std::string> base = {"--input", "in.raw",  "--dims",   "8",   "8",          "8",
                                         "--type",  "float64", "--output", "res", "--threshold"};
  std::vector<std::string> a = base, b = base;
  a.push_back("0.45");
  b.push_back("100"); // nothing above: empty tables, all labels -1
  ASSERT_EQ(run(a).exit_code, 0);
  ASSERT_EQ(run(b).exit_code, 0);
  EXPECT_EQ(lines_of(slurp(path("res-clumps.csv"))).size(), 1u);
  const std::string raw = slurp(path("res-clump.raw"));
  ASSERT_EQ(raw.size(), 512u * 8);
  std::vector<int64_t> got(512);
  std::memcpy(got.data(), raw.data(), raw.size());
  for (int64_t x : got)
    ASSERT_EQ(x, -1);
}

TEST_F(Cli, BadInputFailsCleanly)
{
  const int64_t nx = 10, ny = 9, nz = 8;
  const std::vector<double> v = field(nx, ny, nz, 11);
  write_raw("good64.raw", v, false);
  write_raw("good32.raw", v, true);
  std::vector<double> nan = v;
  nan[17] = std::nan("");
  write_raw("nan.raw", nan, false);
  std::vector<double> neg = v;
  neg[3] = -1.0;
  write_raw("neg.raw", neg, false);
  {
    std::ofstream cut(path("short.raw"), std::ios::binary);
    cut.write(reinterpret_cast<const char *>(v.data()), (std::streamsize)(v.size() * 8 - 8));
    std::ofstream longer(path("long.raw"), std::ios::binary);
    longer.write(reinterpret_cast<const char *>(v.data()), (std::streamsize)(v.size() * 8));
    longer.put('x');
  }
  const std::vector<std::string> dims = {"--dims", "10", "9", "8"};
  auto args = [&](const std::string &input, const std::string &type, std::vector<std::string> extra) {
    std::vector<std::string> a = {"--input", input};
    a.insert(a.end(), dims.begin(), dims.end());
    a.push_back("--type");
    a.push_back(type);
    a.push_back("--output");
    a.push_back("bad");
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::vector<std::string> t = {"--threshold", "0.5"};
  expect_clean_failure(args("missing.raw", "float64", t), "bad", "missing input file");
  expect_clean_failure(args("short.raw", "float64", t), "bad", "file one value short");
  expect_clean_failure(args("long.raw", "float64", t), "bad", "file one byte too long");
  expect_clean_failure(args("good32.raw", "float64", t), "bad", "float32 file read as float64");
  expect_clean_failure(args("good64.raw", "float32", t), "bad", "float64 file read as float32");
  expect_clean_failure(args("good64.raw", "float16", t), "bad", "bad --type");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold"}), "bad", "--threshold without a value");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "abc"}), "bad", "non-numeric threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "nan"}), "bad", "NaN threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "-1"}), "bad", "negative threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "Auto"}), "bad", "threshold 'Auto'");
  expect_clean_failure(args("good64.raw", "float64", {"--saddle", "-1"}), "bad", "negative saddle threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "0.5", "--relevance", "0.5"}), "bad",
                       "relevance below 1");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "0.5", "--relevance", "-2"}), "bad",
                       "negative relevance");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "0.5", "--bogus"}), "bad", "unknown option");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "0.5", "--spacing", "1", "0", "1"}), "bad",
                       "zero spacing");
  expect_clean_failure(args("nan.raw", "float64", t), "bad", "NaN in the data");
  expect_clean_failure(args("neg.raw", "float64", t), "bad", "negative density in the data");
  expect_clean_failure({"--input", "good64.raw", "--dims", "10", "0", "8", "--type", "float64", "--threshold", "0.5",
                        "--output", "bad"},
                       "bad", "zero dimension");
  expect_clean_failure({"--input", "good64.raw", "--dims", "10", "9", "--type", "float64", "--threshold", "0.5",
                        "--output", "bad"},
                       "bad", "two dimensions");
  expect_clean_failure({"--input", "good64.raw", "--dims", "10", "9", "8", "--type", "float64", "--threshold", "0.5"},
                       "bad", "missing --output");
}

TEST_F(Cli, UnwritableOutputLeavesNothingBehind)
{
  const std::vector<double> v = field(10, 9, 8, 12);
  write_raw("in.raw", v, false);
  const std::vector<std::string> base = {"--input", "in.raw",  "--dims",      "10",  "9",       "8",
                                         "--type",  "float64", "--threshold", "0.5", "--output"};
  // output into a directory that does not exist
  std::vector<std::string> a = base;
  a.push_back("no/such/dir/res");
  const Outcome o = run(a);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  // the last output cannot be renamed into place (a directory sits there): the files renamed
  // before it must not stay behind either
  ASSERT_EQ(mkdir(path("res-dendrogram.csv").c_str(), 0755), 0);
  std::vector<std::string> b = base;
  b.push_back("res");
  const Outcome q = run(b);
  EXPECT_NE(q.exit_code, 0);
  EXPECT_EQ(std::count(q.err.begin(), q.err.end(), '\n'), 1) << q.err;
  std::vector<std::string> left;
  for (const std::string &s : files_starting("res"))
    if (s != "res-dendrogram.csv")
      left.push_back(s);
  std::string list;
  for (const std::string &s : left)
    list += s + " ";
  EXPECT_TRUE(left.empty()) << "a failed run left output behind: " << list;
}

// Issue 7, case 1: sizes whose cell or byte count overflows int64 are refused with a clear
// message before the input is read (the 8-byte input would otherwise give a size mismatch,
// and a read error is armed on it), and nothing is created.
TEST_F(Cli, OverflowingDimsFailBeforeAnyRead)
{
  {
    std::ofstream eight(path("eight.raw"), std::ios::binary);
    eight.write("\0\0\0\0\0\0\0\0", 8);
  }
  struct Case {
    std::vector<std::string> dims;
    const char *type, *message;
  } cases[] = {
      {{"1", "3", "6148914691236517206"},
       "float64",
       "phew: error: --dims 1 3 6148914691236517206 is too large: the number of cells overflows a 64-bit integer\n"},
      {{"4294967297", "4294967295", "1"},
       "float64",
       "phew: error: --dims 4294967297 4294967295 1 is too large: the number of cells overflows a 64-bit integer\n"},
      {{"9223372036854775807", "9223372036854775807", "9223372036854775807"},
       "float32",
       "phew: error: --dims 9223372036854775807 9223372036854775807 9223372036854775807 is too large: the number "
       "of cells overflows a 64-bit integer\n"},
      // the cells fit, the bytes do not: 2^61 float32 cells are 2^63 bytes of input
      {{"1", "2", "1152921504606846976"},
       "float32",
       "phew: error: --dims 1 2 1152921504606846976 is too large: 2305843009213693952 cells of 8 bytes overflow a "
       "64-bit byte count\n"},
      // 2^60 float32 input bytes fit, but the label files need 2^63
      {{"1", "1", "1152921504606846976"},
       "float32",
       "phew: error: --dims 1 1 1152921504606846976 is too large: 1152921504606846976 cells of 8 bytes overflow a "
       "64-bit byte count\n"},
      {{"1", "1", "99999999999999999999"},
       "float64",
       "phew: error: --dims value '99999999999999999999' is out of range (at most 9223372036854775807)\n"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    std::vector<std::string> args = {"--input", "eight.raw", "--dims"};
    args.insert(args.end(), c.dims.begin(), c.dims.end());
    for (const char *a : {"--type", c.type, "--threshold", "0", "--output", "big"})
      args.push_back(a);
    const Outcome o = run_with_faults(args, "read:eight.raw:EIO");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.err, c.message);
    EXPECT_TRUE(files_starting("big").empty());
  }
}

// Issue 7, case 1: a directory given as the input is named as such (it used to "have
// 9223372036854775807 bytes"); a missing input gives the system's reason.
// --labels int32 is refused where the ids may not fit, and outside the grid mode.
TEST_F(Cli, Int32LabelsOnlyWhereTheIdsFit)
{
  {
    std::ofstream eight(path("eight.raw"), std::ios::binary);
    eight.write("\0\0\0\0\0\0\0\0", 8);
  }
  struct Case {
    std::vector<std::string> extra;
    const char *message;
  } cases[] = {
      {{"--dims", "2048", "1024", "1025", "--labels", "int32"},
       "phew: error: --labels int32: the grid has 2048 x 1024 x 1025 cells, more than int32 ids can name; leave "
       "--labels out (int64)\n"},
      {{"--dims", "2", "2", "2", "--labels", "int16"}, "phew: error: --labels must be int64 or int32 (got 'int16')\n"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    std::vector<std::string> args = {"--input",     "eight.raw", "--type",   "float32",
                                     "--threshold", "0",         "--output", "big"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const Outcome o = run_with_faults(args, "read:eight.raw:EIO");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.err, c.message);
    EXPECT_TRUE(files_starting("big").empty());
  }
  const Outcome o = run(
      {"--points", "eight.raw", "--type", "float32", "--box", "1", "1", "1", "--labels", "int32", "--output", "big"});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "phew: error: --labels applies to a grid (--input), not to particles (--points)\n");
}

TEST_F(Cli, DirectoryAsInputIsNamed)
{
  ASSERT_EQ(mkdir(path("cube.raw").c_str(), 0755), 0);
  const std::vector<std::string> rest = {"--dims",  "2",           "2", "2",        "--type",
                                         "float64", "--threshold", "0", "--output", "out"};
  std::vector<std::string> a = {"--input", "cube.raw"}, b = {"--input", "missing.raw"};
  a.insert(a.end(), rest.begin(), rest.end());
  b.insert(b.end(), rest.begin(), rest.end());
  const Outcome o = run(a);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "phew: error: 'cube.raw' is a directory, not a raw file\n");
  const Outcome m = run(b);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(m.err, "phew: error: cannot open input 'missing.raw': No such file or directory\n");
  EXPECT_TRUE(files_starting("out").empty());
}

// Issue 7, case 6: every numeric option takes any finite value strtod reads completely,
// denormals included (strtod flags them with ERANGE), and calls a value beyond the double
// range out of range rather than "not finite".
TEST_F(Cli, NumericOptionsTakeDenormalsAndRefuseOverflow)
{
  write_raw("in.raw", field(8, 8, 8, 5), false);
  const std::vector<std::string> base = {"--input", "in.raw", "--dims",  "8",        "8",
                                         "8",       "--type", "float64", "--output", "res"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // accepted: the smallest denormal as threshold, mass threshold, saddle and origin (relevance: 1)
  // a denormal threshold is the threshold: every cell of this positive field is above it
  ASSERT_EQ(run(with({"--threshold", "4.9e-324"})).exit_code, 0);
  const std::string patch_bytes = slurp(path("res-patch.raw"));
  for (const std::vector<std::string> &extra :
       {std::vector<std::string>{"--threshold", "4.9e-324", "--spacing", "1", "1", "1"},
        std::vector<std::string>{"--threshold", "0.5", "--mass-threshold", "4.9e-324"},
        std::vector<std::string>{"--threshold", "0.5", "--relevance", "1", "--saddle", "4.9e-324"},
        std::vector<std::string>{"--threshold", "0.5", "--origin", "4.9e-324", "-4.9e-324", "1e-320"}}) {
    SCOPED_TRACE(extra[extra.size() - 1]);
    const Outcome o = run(with(extra));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err, "");
    EXPECT_EQ(files_starting("res").size(), 7u);
  }
  struct Bad {
    std::vector<std::string> extra;
    const char *message;
  } bad[] = {
      {{"--threshold", "1e999"},
       "phew: error: --threshold value '1e999' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "0.5", "--relevance", "-1e400"},
       "phew: error: --relevance value '-1e400' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "0.5", "--saddle", "1e309"},
       "phew: error: --saddle value '1e309' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "0.5", "--mass-threshold", "2e308"},
       "phew: error: --mass-threshold value '2e308' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "0.5", "--spacing", "1", "1e999", "1"},
       "phew: error: --spacing value '1e999' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "0.5", "--origin", "0", "0", "-1e999"},
       "phew: error: --origin value '-1e999' is out of range (finite numbers go up to about 1.8e308)\n"},
      {{"--threshold", "inf"}, "phew: error: --threshold needs a number >= 0 or auto (got 'inf')\n"},
      {{"--threshold", "0.5x"}, "phew: error: --threshold needs a number >= 0 or auto (got '0.5x')\n"},
      {{"--threshold", ""}, "phew: error: --threshold needs a number >= 0 or auto (got '')\n"},
      {{"--threshold", "-0.5"}, "phew: error: --threshold needs a number >= 0 or auto (got '-0.5')\n"},
      {{"--threshold", "0.5", "--relevance", "0.5"},
       "phew: error: the relevance threshold must be >= 1 (got 0.5): a peak's relevance, peak density / key "
       "saddle density, is at least 1; 1 keeps every peak\n"},
      {{"--threshold", "0.5", "--spacing", "1", "nan", "1"},
       "phew: error: --spacing needs three finite numbers (got 'nan')\n"},
  };
  const std::map<std::string, std::string> before = snapshot("res");
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.message);
    const Outcome o = run(with(b.extra));
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.err, b.message);
    EXPECT_TRUE(snapshot("res") == before) << "a refused run changed the outputs";
  }
  std::vector<int64_t> patch(512);
  ASSERT_EQ(patch_bytes.size(), 512u * 8);
  std::memcpy(patch.data(), patch_bytes.data(), patch_bytes.size());
  EXPECT_EQ(std::count(patch.begin(), patch.end(), (int64_t)-1), 0)
      << "with a denormal threshold every cell is a test cell";
}

// Issue 7, case 2a: the outputs are checked before anything is computed. The input has a read
// error armed on it (fault shim): the message must be about the outputs, so the input was
// never read.
TEST_F(Cli, OutputsAreCheckedBeforeComputing)
{
  write_raw("in.raw", field(10, 9, 8, 12), false);
  ASSERT_EQ(mkdir(path("out").c_str(), 0755), 0);
  {
    std::ofstream f(path("plain"));
    f << "a file, not a directory";
  }
  auto args = [&](const std::string &prefix) {
    return std::vector<std::string>{"--input", "in.raw",  "--dims",      "10",  "9",        "8",
                                    "--type",  "float64", "--threshold", "0.5", "--output", prefix};
  };
  const std::string long_prefix(5000, 'p');
  const std::string long_name = "out/" + std::string(300, 'n');
  ASSERT_EQ(mkdir(path("out/res-clumps.csv").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(path("out/tmp-halo.raw.partial").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(path("out/bak-clump.raw.previous").c_str(), 0755), 0);
  struct Case {
    std::string prefix, rules, message;
  } cases[] = {
      {long_prefix, "", "phew: error: output prefix is too long: 5000 characters, at most 4068 fit in a path\n"},
      {"no/such/dir/res", "", "phew: error: output directory 'no/such/dir' does not exist\n"},
      {"plain/res", "", "phew: error: output directory 'plain' is not a directory\n"},
      {"out/res", "", "phew: error: output 'out/res-clumps.csv' is a directory, not a file\n"},
      {"out/tmp", "", "phew: error: temporary file 'out/tmp-halo.raw.partial' is a directory, not a file\n"},
      {"out/bak", "", "phew: error: backup name 'out/bak-clump.raw.previous' is a directory, not a file\n"},
      {long_name, "", "phew: error: cannot use output '" + long_name + "-patch.raw': File name too long\n"},
      // what access() says for an immutable file (chattr +i), even to root
      {"out/imm", "access:out/imm-haloes.csv:EPERM",
       "phew: error: cannot replace output 'out/imm-haloes.csv': Operation not permitted\n"},
      // the directory is not writable (a read-only file system)
      {"out/ro", "access:out:EROFS", "phew: error: cannot write into output directory 'out': Read-only file system\n"},
  };
  {
    std::ofstream f(path("out/imm-haloes.csv"));
    f << "old\n";
  }
  const std::map<std::string, std::string> before = snapshot("out");
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    const std::string rules = "read:in.raw:EIO" + (c.rules.empty() ? "" : ";" + c.rules);
    const Outcome o = run_with_faults(args(c.prefix), rules);
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.err, c.message);
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1);
    EXPECT_TRUE(snapshot("out") == before) << "the failed check changed or left files";
    EXPECT_TRUE(files_starting("pp").empty() && files_starting("no").empty());
  }
}

// Issue 7, cases 2b and 6: a run that fails at any step after the outputs were prepared
// leaves the previous run's six files byte for byte as they were and nothing else, and says
// the system's reason. The failures are real (a directory at an output name, NaN data, a file
// size limit) or simulated at a chosen call by the test-only fault shim.
TEST_F(Cli, FailedRunKeepsPreviousOutputs)
{
  write_raw("in.raw", field(10, 9, 8, 12), false);
  std::vector<double> nan = field(10, 9, 8, 12);
  nan[100] = std::nan("");
  write_raw("nan.raw", nan, false);
  auto args = [&](const std::string &input, const std::string &threshold) {
    return std::vector<std::string>{"--input", input,     "--dims",      "10",      "9",        "8",
                                    "--type",  "float64", "--threshold", threshold, "--output", "res"};
  };
  const Outcome first = run(args("in.raw", "0.45"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::map<std::string, std::string> previous = snapshot("res");
  ASSERT_EQ(previous.size(), 7u);
  struct Case {
    std::string input, rules, message;
  } cases[] = {
      // the last steps: the six renames into place, after three (or none) of them succeeded
      {"in.raw", "rename:res-haloes.csv.partial:EIO",
       "phew: error: cannot rename 'res-haloes.csv.partial' to 'res-haloes.csv': Input/output error\n"},
      {"in.raw", "rename:res-patch.raw.partial:EXDEV",
       "phew: error: cannot rename 'res-patch.raw.partial' to 'res-patch.raw': Invalid cross-device link\n"},
      {"in.raw", "rename:res-dendrogram.csv.partial:EPERM",
       "phew: error: cannot rename 'res-dendrogram.csv.partial' to 'res-dendrogram.csv': Operation not "
       "permitted\n"},
      // moving a previous file aside fails after four were moved (an immutable file: EPERM)
      {"in.raw", "rename:res-haloes.csv:EPERM",
       "phew: error: cannot move the previous 'res-haloes.csv' aside to 'res-haloes.csv.previous': Operation not "
       "permitted\n"},
      // a full disk, a quota, while writing a label file or a table
      {"in.raw", "write:res-clump.raw.partial:ENOSPC",
       "phew: error: writing 'res-clump.raw.partial' failed: No space left on device\n"},
      {"in.raw", "write:res-halo.raw.partial:EDQUOT",
       "phew: error: writing 'res-halo.raw.partial' failed: Disk quota exceeded\n"},
      {"in.raw", "write:res-clumps.csv.partial:ENOSPC",
       "phew: error: writing 'res-clumps.csv.partial' failed: No space left on device\n"},
      {"in.raw", "write:res-dendrogram.csv.partial:EIO",
       "phew: error: writing 'res-dendrogram.csv.partial' failed: Input/output error\n"},
      // the fourth temporary file cannot be created (an inode quota): the three made are removed
      {"in.raw", "open:res-clumps.csv.partial:EDQUOT",
       "phew: error: cannot create 'res-clumps.csv.partial': Disk quota exceeded\n"},
      // a read error on the input
      {"in.raw", "read:in.raw:EIO", "phew: error: reading 'in.raw' failed: Input/output error\n"},
      // the core refuses the data
      {"nan.raw", "", ""},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.rules.empty() ? c.input : c.rules);
    const Outcome o = run_with_faults(args(c.input, "0.55"), c.rules);
    EXPECT_EQ(o.exit_code, 1);
    if (!c.message.empty()) {
      EXPECT_EQ(o.err, c.message);
    }
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_TRUE(snapshot("res") == previous) << "the previous outputs were not kept as they were";
  }

  // a real full-file-system error from the kernel: a file size limit (EFBIG) below the size of
  // a label file (128^3 cells: 16 MiB; the limit leaves room for Open MPI's own files)
  const int64_t n = 128;
  std::vector<double> big((size_t)(n * n * n));
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = (double)((i * 2654435761u) % 1000) / 1000.0;
  write_raw("big.raw", big, true);
  Launch limited;
  limited.file_size_limit = 12ll << 20;
  const Outcome o = run({"--input", "big.raw", "--dims", "128", "128", "128", "--type", "float32", "--threshold", "0.5",
                         "--output", "res"},
                        limited);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "phew: error: writing 'res-patch.raw.partial' failed: File too large\n");
  EXPECT_TRUE(snapshot("res") == previous) << "the previous outputs were not kept as they were";

  // if even putting a previous file back fails, the message says where it is, intact
  const Outcome r = run_with_faults(args("in.raw", "0.55"), "rename:res-halo.raw.partial:EIO;"
                                                            "rename:res-patch.raw.previous:EIO");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "phew: error: cannot rename 'res-halo.raw.partial' to 'res-halo.raw': Input/output error; the "
                   "previous 'res-patch.raw' is kept as 'res-patch.raw.previous'\n");
  std::map<std::string, std::string> kept = snapshot("res");
  ASSERT_EQ(kept.count("res-patch.raw.previous"), 1u);
  kept["res-patch.raw"] = kept["res-patch.raw.previous"];
  kept.erase("res-patch.raw.previous");
  EXPECT_TRUE(kept == previous);
  ASSERT_EQ(rename(path("res-patch.raw.previous").c_str(), path("res-patch.raw").c_str()), 0);

  // the issue's own case: a directory where the haloes table was; the other five stay
  ASSERT_EQ(unlink(path("res-haloes.csv").c_str()), 0);
  ASSERT_EQ(mkdir(path("res-haloes.csv").c_str(), 0755), 0);
  const std::map<std::string, std::string> with_directory = snapshot("res");
  const Outcome d = run(args("in.raw", "0.55"));
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_EQ(d.err, "phew: error: output 'res-haloes.csv' is a directory, not a file\n");
  EXPECT_TRUE(snapshot("res") == with_directory);
}

// Issue 7, case 2b: with nothing there before, a failure at the renames leaves nothing.
TEST_F(Cli, FailedRenameWithoutPreviousOutputsLeavesNothing)
{
  write_raw("in.raw", field(10, 9, 8, 12), false);
  const Outcome o = run_with_faults({"--input", "in.raw", "--dims", "10", "9", "8", "--type", "float64", "--threshold",
                                     "0.5", "--output", "res"},
                                    "rename:res-haloes.csv.partial:EIO");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, "phew: error: cannot rename 'res-haloes.csv.partial' to 'res-haloes.csv': Input/output error\n");
  EXPECT_TRUE(files_starting("res").empty());
}

// Issue 7, case 2c: SIGTERM and SIGINT sent to a running tool (a 128^3 field, about a second
// of work; the signal goes as soon as the temporary files exist, before the input is read)
// kill it by that signal, remove every temporary file and leave the previous outputs as
// they were.
TEST_F(Cli, SignalsRemoveTemporaryFiles)
{
  write_raw("small.raw", field(10, 9, 8, 3), false);
  const Outcome first = run({"--input", "small.raw", "--dims", "10", "9", "8", "--type", "float64", "--threshold",
                             "0.45", "--output", "res"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::map<std::string, std::string> previous = snapshot("res");
  ASSERT_EQ(previous.size(), 7u);
  const int64_t n = 128;
  std::vector<double> big((size_t)(n * n * n));
  uint64_t state = 99;
  for (double &x : big) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = (double)(state >> 11) * 0x1.0p-53;
  }
  write_raw("big.raw", big, true);
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    const pid_t pid = start({"--input", "big.raw", "--dims", "128", "128", "128", "--type", "float32", "--threshold",
                             "0.5", "--output", "res"});
    const std::string partial = path("res-patch.raw.partial");
    for (int i = 0; i < 20000 && !exists(partial); ++i)
      usleep(500);
    ASSERT_TRUE(exists(partial)) << "the tool never created its temporary files";
    kill(pid, sig);
    const Outcome o = finish(pid);
    EXPECT_EQ(o.exit_code, 128 + sig) << "the tool was not killed by the signal (it finished?) " << o.err;
    EXPECT_TRUE(snapshot("res") == previous) << "temporary files left or previous outputs changed";
  }
}

// Issue 7, case 2c: a signal at each later step, delivered exactly there by the fault shim:
// while a label file or a table is written the previous outputs stay; during the final
// renames the renames are completed first (the six new files, no mix), then the tool dies of
// the signal. Never a temporary or backup file left.
TEST_F(Cli, SignalAtEachStepLeavesOneConsistentSet)
{
  write_raw("in.raw", field(10, 9, 8, 12), false);
  auto args = [&](const std::string &threshold, const std::string &prefix) {
    return std::vector<std::string>{"--input", "in.raw",  "--dims",      "10",      "9",        "8",
                                    "--type",  "float64", "--threshold", threshold, "--output", prefix};
  };
  ASSERT_EQ(run(args("0.45", "res")).exit_code, 0);
  const std::map<std::string, std::string> previous = snapshot("res");
  ASSERT_EQ(run(args("0.55", "new")).exit_code, 0);
  std::map<std::string, std::string> fresh; // the new run's files under the name "res"
  for (const auto &f : snapshot("new"))
    fresh["res" + f.first.substr(3)] = f.second;
  ASSERT_TRUE(fresh != previous);
  struct Case {
    const char *rules;
    int sig;
    bool completes;
  } cases[] = {
      {"write:res-clump.raw.partial:SIGTERM", SIGTERM, false},
      {"write:res-haloes.csv.partial:SIGINT", SIGINT, false},
      {"rename:res-clumps.csv.partial:SIGTERM", SIGTERM, true},
      {"rename:res-dendrogram.csv:SIGINT", SIGINT, true},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.rules);
    const Outcome o = run_with_faults(args("0.55", "res"), c.rules);
    EXPECT_EQ(o.exit_code, 128 + c.sig) << o.err;
    EXPECT_TRUE(snapshot("res") == (c.completes ? fresh : previous));
    if (c.completes) { // back to the previous outputs for the next case
      ASSERT_EQ(run(args("0.45", "res")).exit_code, 0);
      ASSERT_TRUE(snapshot("res") == previous);
    }
  }
}

} // namespace
