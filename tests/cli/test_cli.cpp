// Command-line checks: the phew binary on raw fields written at test time.
//  - success: the six output files exist, label files have 8 bytes per cell and hold what a
//    direct library call gives, CSV headers are the column lists, CSV rows are the catalogue;
//  - failure (missing file, wrong size, bad --type, missing or bad options, bad data, an
//    unwritable output): non-zero exit, exactly one line on stderr, no output files left.
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
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
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string &path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string &path)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

long file_size(const std::string &path)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? (long)st.st_size : -1;
}

class Cli : public ::testing::Test {
protected:
  std::string dir;

  void SetUp() override
  {
    std::string templ = std::string(PHEW_CLI_WORK_DIR) + "/cli-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr) << "cannot create a work directory in " << PHEW_CLI_WORK_DIR;
    dir = buf.data();
  }

  void TearDown() override
  {
    if (dir.empty())
      return;
    if (HasFailure()) {
      std::printf("work directory kept: %s\n", dir.c_str());
      return;
    }
    remove_tree(dir);
  }

  static void remove_tree(const std::string &path)
  {
    DIR *d = opendir(path.c_str());
    if (d) {
      while (dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..")
          continue;
        const std::string p = path + "/" + name;
        struct stat st;
        if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
          remove_tree(p);
        else
          unlink(p.c_str());
      }
      closedir(d);
    }
    rmdir(path.c_str());
  }

  std::string path(const std::string &name) const { return dir + "/" + name; }

  // Files in the work directory whose name starts with `prefix`.
  std::vector<std::string> files_starting(const std::string &prefix) const
  {
    std::vector<std::string> found;
    DIR *d = opendir(dir.c_str());
    if (!d)
      return found;
    while (dirent *e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.compare(0, prefix.size(), prefix) == 0)
        found.push_back(name);
    }
    closedir(d);
    return found;
  }

  Outcome run(const std::vector<std::string> &args) const
  {
    Outcome o;
    const std::string out = path(".stdout"), err = path(".stderr");
    const pid_t pid = fork();
    if (pid == 0) {
      const int fo = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int fe = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fo < 0 || fe < 0)
        _exit(126);
      dup2(fo, 1);
      dup2(fe, 2);
      if (chdir(dir.c_str()) != 0)
        _exit(126);
      std::vector<char *> argv;
      argv.push_back(const_cast<char *>(PHEW_CLI_PATH));
      for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      execv(PHEW_CLI_PATH, argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    o.out = slurp(out);
    o.err = slurp(err);
    unlink(out.c_str());
    unlink(err.c_str());
    return o;
  }

  // A smooth random field with many peaks; written as float32 or float64.
  static std::vector<double> field(int64_t nx, int64_t ny, int64_t nz, uint64_t seed)
  {
    std::vector<double> v((size_t)(nx * ny * nz)), w(v.size());
    uint64_t s = seed;
    for (double &x : v) {
      uint64_t z = (s += UINT64_C(0x9E3779B97F4A7C15));
      z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
      z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
      x = (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    }
    const int64_t n[3] = {nx, ny, nz};
    for (int axis = 0; axis < 3; ++axis) {
      const int64_t stride = axis == 0 ? 1 : axis == 1 ? nx : nx * ny;
      for (int64_t c = 0; c < nx * ny * nz; ++c) {
        const int64_t i = axis == 0 ? c % nx : axis == 1 ? (c / nx) % ny : c / (nx * ny);
        const int64_t lo = i == 0 ? c + (n[axis] - 1) * stride : c - stride;
        const int64_t hi = i == n[axis] - 1 ? c - (n[axis] - 1) * stride : c + stride;
        w[(size_t)c] = 0.25 * (v[(size_t)lo] + 2 * v[(size_t)c] + v[(size_t)hi]);
      }
      v.swap(w);
    }
    return v;
  }

  void write_raw(const std::string &name, const std::vector<double> &v, bool f32) const
  {
    std::ofstream out(path(name), std::ios::binary);
    if (f32) {
      std::vector<float> f(v.begin(), v.end());
      out.write(reinterpret_cast<const char *>(f.data()), (std::streamsize)(f.size() * sizeof(float)));
    } else {
      out.write(reinterpret_cast<const char *>(v.data()), (std::streamsize)(v.size() * sizeof(double)));
    }
  }

  // The failure contract: non-zero exit, exactly one line on stderr, nothing named PREFIX*.
  void expect_clean_failure(const std::vector<std::string> &args, const std::string &prefix, const char *what)
  {
    SCOPED_TRACE(what);
    const Outcome o = run(args);
    EXPECT_NE(o.exit_code, 0);
    EXPECT_LT(o.exit_code, 126) << "the program crashed or could not start";
    ASSERT_FALSE(o.err.empty()) << "no message on stderr";
    EXPECT_EQ(o.err.back(), '\n') << "stderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "stderr must be one line: " << o.err;
    const std::vector<std::string> left = files_starting(prefix);
    std::string list;
    for (const std::string &s : left)
      list += s + " ";
    EXPECT_TRUE(left.empty()) << "output left behind: " << list;
  }
};

const char *const kSuffixes[6] = {"-patch.raw", "-clump.raw", "-halo.raw", "-clumps.csv", "-haloes.csv",
                                  "-dendrogram.csv"};

std::vector<std::string> lines_of(const std::string &text)
{
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

std::vector<std::string> split(const std::string &line)
{
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ','))
    cells.push_back(cell);
  return cells;
}

std::string header(const phew_column *c, int n)
{
  std::string h;
  for (int i = 0; i < n; ++i)
    h += (i ? "," : "") + std::string(c[i].name);
  return h;
}

// The CSV holds one row per catalogue entry, each value equal to the library's.
void expect_csv(const std::string &text, const phew_column *cols, int n_cols, const void *rows, int64_t n_rows,
                size_t row_size, const char *what)
{
  SCOPED_TRACE(what);
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ((int64_t)lines.size(), n_rows + 1);
  EXPECT_EQ(lines[0], header(cols, n_cols));
  for (int64_t r = 0; r < n_rows; ++r) {
    const std::vector<std::string> cells = split(lines[(size_t)r + 1]);
    ASSERT_EQ((int)cells.size(), n_cols) << "row " << r;
    const void *row = (const char *)rows + (size_t)r * row_size;
    for (int c = 0; c < n_cols; ++c) {
      if (cols[c].type == PHEW_COLUMN_DOUBLE) {
        const double want = phew_column_as_double(&cols[c], row);
        const double got = std::strtod(cells[(size_t)c].c_str(), nullptr);
        if (std::isinf(want))
          EXPECT_TRUE(std::isinf(got)) << cols[c].name << " row " << r;
        else
          EXPECT_EQ(got, want) << cols[c].name << " row " << r << ": " << cells[(size_t)c];
      } else {
        EXPECT_EQ(std::strtoll(cells[(size_t)c].c_str(), nullptr, 10), phew_column_as_int64(&cols[c], row))
            << cols[c].name << " row " << r;
      }
    }
  }
}

struct Library {
  std::vector<int64_t> patch, clump, halo;
  phew_result result{};
  ~Library() { phew_result_free(&result); }
};

TEST_F(Cli, WritesAllOutputsMatchingTheLibrary)
{
  const int64_t nx = 21, ny = 14, nz = 11;
  const std::vector<double> v = field(nx, ny, nz, 4242);
  struct Variant {
    bool f32;
    bool periodic;
    bool saddle;
    const char *prefix;
  } variants[] = {{true, false, false, "f32"}, {false, true, true, "f64"}};
  for (const Variant &k : variants) {
    SCOPED_TRACE(k.prefix);
    write_raw("in.raw", v, k.f32);
    std::vector<std::string> args = {"--input", "in.raw", "--dims", std::to_string(nx), std::to_string(ny),
                                     std::to_string(nz), "--type", k.f32 ? "float32" : "float64", "--threshold",
                                     "0.5", "--relevance", "1.05", "--spacing", "0.5", "2", "1.5", "--origin",
                                     "-1", "0", "3", "--output", std::string("out/") + k.prefix};
    if (k.periodic)
      args.push_back("--periodic");
    if (k.saddle) {
      args.push_back("--saddle");
      args.push_back("0.52");
    }
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
    phew_labels labels = {lib.patch.data(), lib.clump.data(), lib.halo.data()};
    ASSERT_EQ(phew_find_clumps(&in, &p, &labels, &lib.result), PHEW_OK) << lib.result.message;
    ASSERT_GT(lib.result.n_clumps, 2) << "the test field should have several clumps";

    const std::string base = path(std::string("out/") + k.prefix);
    for (const char *s : kSuffixes)
      ASSERT_TRUE(exists(base + s)) << base + s;
    const std::vector<int64_t> *label_arrays[3] = {&lib.patch, &lib.clump, &lib.halo};
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(file_size(base + kSuffixes[i]), (long)(n * 8)) << kSuffixes[i];
      const std::string raw = slurp(base + kSuffixes[i]);
      ASSERT_EQ(raw.size(), n * 8);
      std::vector<int64_t> got(n);
      std::memcpy(got.data(), raw.data(), raw.size()); // little-endian, like this machine
      EXPECT_TRUE(got == *label_arrays[i]) << kSuffixes[i] << " differs from the library's labels";
    }
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(&nc), *hc = phew_halo_columns(&nh), *dc = phew_node_columns(&nn);
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
      if (name.compare(0, std::strlen(k.prefix), k.prefix) == 0 && name.find(".partial") != std::string::npos)
        ++others;
    }
    closedir(d);
    EXPECT_EQ(others, 0) << "temporary files left";
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
  EXPECT_EQ(files_starting("res").size(), 6u);
  const Outcome h = run({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("usage"), std::string::npos);
}

TEST_F(Cli, SuccessOverwritesAnEarlierRun)
{
  const std::vector<double> v = field(8, 8, 8, 9);
  write_raw("in.raw", v, false);
  const std::vector<std::string> base = {"--input", "in.raw", "--dims", "8", "8", "8", "--type", "float64",
                                         "--output", "res", "--threshold"};
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
  expect_clean_failure(args("good64.raw", "float64", {}), "bad", "missing --threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold"}), "bad", "--threshold without a value");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "abc"}), "bad", "non-numeric threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "nan"}), "bad", "NaN threshold");
  expect_clean_failure(args("good64.raw", "float64", {"--threshold", "-1"}), "bad", "negative threshold");
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
  const std::vector<std::string> base = {"--input", "in.raw", "--dims", "10", "9", "8", "--type", "float64",
                                         "--threshold", "0.5", "--output"};
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

} // namespace
