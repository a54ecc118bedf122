// The command-line tests' shared pieces: the Cli fixture (a work directory per test, the tool
// started in it with extra environment or a file size limit, snapshots of files by prefix,
// the failure contract), small file helpers, and the CSV check against a library catalogue.
// Used by test_cli.cpp (grids) and test_cli_points.cpp (particles).
#ifndef PHEW_CLI_TEST_UTIL_H
#define PHEW_CLI_TEST_UTIL_H

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

namespace cli_test {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string &path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool exists(const std::string &path)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

inline long file_size(const std::string &path)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? (long)st.st_size : -1;
}

// How to start the tool: extra environment (e.g. the fault shim) and a file size limit.
struct Launch {
  std::vector<std::pair<std::string, std::string>> env;
  long long file_size_limit = -1; // RLIMIT_FSIZE in bytes, SIGXFSZ ignored (writes get EFBIG)
};

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

  // Starts the tool in the work directory, stdout and stderr into files; returns its pid.
  pid_t start(const std::vector<std::string> &args, const Launch &launch = Launch()) const
  {
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
      for (const auto &e : launch.env)
        setenv(e.first.c_str(), e.second.c_str(), 1);
      if (launch.file_size_limit >= 0) {
        signal(SIGXFSZ, SIG_IGN); // stays ignored across exec
        const rlimit limit = {(rlim_t)launch.file_size_limit, (rlim_t)launch.file_size_limit};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
          _exit(126);
      }
      std::vector<char *> argv;
      argv.push_back(const_cast<char *>(PHEW_CLI_PATH));
      for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      execv(PHEW_CLI_PATH, argv.data());
      _exit(127);
    }
    return pid;
  }

  // Waits for a started tool; exit_code is 128 + the signal when it was killed.
  Outcome finish(pid_t pid) const
  {
    Outcome o;
    int status = 0;
    waitpid(pid, &status, 0);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    const std::string out = path(".stdout"), err = path(".stderr");
    o.out = slurp(out);
    o.err = slurp(err);
    unlink(out.c_str());
    unlink(err.c_str());
    return o;
  }

  Outcome run(const std::vector<std::string> &args, const Launch &launch = Launch()) const
  {
    return finish(start(args, launch));
  }

  // The tool with the test-only fault shim preloaded (io_fault_shim.c) and these rules.
  Outcome run_with_faults(const std::vector<std::string> &args, const std::string &rules) const
  {
    Launch launch;
    launch.env = {{"LD_PRELOAD", PHEW_IO_FAULT_SHIM}, {"PHEW_IO_FAULTS", rules}};
    return run(args, launch);
  }

  // Every entry of the work directory whose name starts with prefix: a file's bytes, or
  // "<directory>". Two equal snapshots mean nothing was changed, added or left behind.
  std::map<std::string, std::string> snapshot(const std::string &prefix) const
  {
    std::map<std::string, std::string> files;
    for (const std::string &name : files_starting(prefix)) {
      struct stat st;
      if (lstat(path(name).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        files[name] = "<directory>";
      else
        files[name] = slurp(path(name));
    }
    return files;
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

inline const char *const kSuffixes[6] = {"-patch.raw",  "-clump.raw",  "-halo.raw",
                                         "-clumps.csv", "-haloes.csv", "-dendrogram.csv"};

inline std::vector<std::string> lines_of(const std::string &text)
{
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split(const std::string &line)
{
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ','))
    cells.push_back(cell);
  return cells;
}

inline std::string header(const phew_column *c, int n)
{
  std::string h;
  for (int i = 0; i < n; ++i)
    h += (i ? "," : "") + std::string(c[i].name);
  return h;
}

// The CSV holds one row per catalogue entry, each value equal to the library's.
inline void expect_csv(const std::string &text, const phew_column *cols, int n_cols, const void *rows, int64_t n_rows,
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
  phew_context context;
  phew_clump_result result{};
  Library() { phew_context_init(&context); }
  ~Library() { phew_clump_result_free(&result); }
};

} // namespace cli_test

#endif
