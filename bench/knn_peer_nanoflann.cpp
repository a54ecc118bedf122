// The peer of the particle benchmark (issue 9): k-nearest-neighbour queries with nanoflann
// (Debian libnanoflann-dev, header only) on the same positions as bench_particles.
//
//   knn_peer_nanoflann --points FILE [--type float32|float64] [--k 65] [--leaf 10]
//                      [--periodic] [--dump FILE]
//
// Reads raw little-endian x,y,z interleaved positions, converts them to double, builds a
// KDTreeSingleIndexAdaptor (L2_Simple_Adaptor<double>, 3D, leaf size 10 by default) and runs
// knnSearch with k neighbours (the query particle itself included, at distance 0, so k = 65
// is HOP's 64 neighbours plus itself) for every particle, in order, on one thread. Prints
// `name value` lines:
//   particles, k, leaf_size, nanoflann_version;
//   seconds_build (index construction), seconds_query (all queries), seconds_total (both),
//     wall clock; cpu_seconds_build, cpu_seconds_query: the process's CPU time for the same
//     (less sensitive to other load on a shared machine; equal to the wall time when alone);
//   checksum_sum_dist_k: sum over particles of the distance to the k-th nearest (itself first),
//     summed in particle order in double; checksum_sum_dist2_k, checksum_max_dist_k likewise;
//     phew's h with n_dens = k - 1 is half that distance, so sum(2 h) must match;
//   peak_rss_bytes (VmHWM at the end), rss_input_bytes (after reading and converting).
//
// nanoflann has no periodic boxes: the timed run ignores periodicity (neighbours are not
// searched across the faces of the box). For clustered sets most particles are far from the
// faces, so the work is representative; near the faces the answers differ from phew's
// periodic ones. --periodic adds, after the timed run and timed separately, an exact periodic
// cross-check: images of the particles within W of a face (W = the largest k-th distance of
// the timed run, never smaller than the periodic one) are added as ghosts to a second tree
// and every particle is queried again; it prints checksum_periodic_* and seconds_periodic.
// The box is [0, 1)^3 for that check. --dump FILE writes the k-th distance of every particle
// (float64, of the periodic run when --periodic, else of the timed run).
#include <nanoflann.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_clock.h"

namespace {

double cpu_seconds()
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct Cloud {
  const double *p = nullptr;
  size_t n = 0;
  size_t kdtree_get_point_count() const { return n; }
  double kdtree_get_pt(const size_t i, const size_t d) const { return p[3 * i + d]; }
  template <class BBox> bool kdtree_get_bbox(BBox &) const { return false; }
};

using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 3, uint32_t>;

[[noreturn]] void usage(const char *msg)
{
  std::fprintf(stderr,
               "knn_peer_nanoflann: %s\nusage: knn_peer_nanoflann --points FILE [--type float32|float64] "
               "[--k 65] [--leaf 10] [--periodic] [--dump FILE]\n",
               msg);
  std::exit(2);
}

std::vector<double> read_points(const std::string &path, bool f32)
{
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    usage(("cannot open " + path).c_str());
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  const size_t rec = f32 ? 12 : 24;
  if (bytes <= 0 || bytes % rec)
    usage("file size is not a multiple of 3 values");
  const size_t n = (size_t)bytes / rec;
  std::vector<double> p(3 * n);
  if (f32) {
    std::vector<float> tmp(3 * n);
    if (std::fread(tmp.data(), 4, 3 * n, f) != 3 * n)
      usage("short read");
    std::copy(tmp.begin(), tmp.end(), p.begin());
  } else if (std::fread(p.data(), 8, 3 * n, f) != 3 * n) {
    usage("short read");
  }
  std::fclose(f);
  return p;
}

// Distance to the k-th nearest of every query (positions q[0 .. nq)) in the tree.
void query_all(const Tree &tree, const double *q, size_t nq, size_t k, std::vector<double> &dk)
{
  std::vector<uint32_t> idx(k);
  std::vector<double> d2(k);
  dk.resize(nq);
  for (size_t i = 0; i < nq; ++i) {
    const size_t got = tree.knnSearch(q + 3 * i, k, idx.data(), d2.data());
    if (got != k)
      usage("fewer points than k");
    dk[i] = std::sqrt(d2[k - 1]);
  }
}

void print_checksums(const char *prefix, const std::vector<double> &dk)
{
  double s = 0, s2 = 0, mx = 0;
  for (double d : dk) {
    s += d;
    s2 += d * d;
    mx = std::max(mx, d);
  }
  std::printf("%ssum_dist_k %.17g\n%ssum_dist2_k %.17g\n%smax_dist_k %.17g\n", prefix, s, prefix, s2, prefix, mx);
}

} // namespace

int main(int argc, char **argv)
{
  std::string path, dump;
  bool f32 = true, periodic = false;
  long k = 65, leaf = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--points")
      path = next();
    else if (a == "--type") {
      const std::string t = next();
      if (t != "float32" && t != "float64")
        usage("--type is float32 or float64");
      f32 = t == "float32";
    } else if (a == "--k")
      k = std::atol(next());
    else if (a == "--leaf")
      leaf = std::atol(next());
    else if (a == "--periodic")
      periodic = true;
    else if (a == "--dump")
      dump = next();
    else
      usage(("unknown option " + a).c_str());
  }
  if (path.empty())
    usage("--points is required");
  if (k < 1 || leaf < 1)
    usage("--k and --leaf must be positive");

  std::vector<double> p = read_points(path, f32);
  const size_t n = p.size() / 3;
  if (n < (size_t)k)
    usage("fewer points than k");
  const long long rss_input = proc_status_bytes("VmRSS");

  Cloud cloud;
  cloud.p = p.data();
  cloud.n = n;
  const double c0 = cpu_seconds(), t0 = seconds_now();
  std::vector<double> dk;
  double t1, t2, c1, c2;
  {
    Tree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams((size_t)leaf));
    t1 = seconds_now();
    c1 = cpu_seconds();
    query_all(tree, p.data(), n, (size_t)k, dk);
    t2 = seconds_now();
    c2 = cpu_seconds();
  }
  std::printf("particles %zu\nk %ld\nleaf_size %ld\nnanoflann_version 0x%x\n", n, k, leaf, NANOFLANN_VERSION);
  std::printf("seconds_build %.6f\nseconds_query %.6f\nseconds_total %.6f\n", t1 - t0, t2 - t1, t2 - t0);
  std::printf("cpu_seconds_build %.6f\ncpu_seconds_query %.6f\n", c1 - c0, c2 - c1);
  print_checksums("checksum_", dk);

  if (periodic) {
    const double t3 = seconds_now();
    const double w = *std::max_element(dk.begin(), dk.end());
    if (w >= 0.5)
      usage("--periodic: the k-th distance reaches half the box");
    std::vector<double> all(p);
    for (size_t i = 0; i < n; ++i) {
      const double *x = &p[3 * i];
      int lo[3], hi[3]; // image shifts to try per axis
      for (int d = 0; d < 3; ++d) {
        lo[d] = x[d] < w ? 1 : 0;         // image at x + 1
        hi[d] = x[d] >= 1.0 - w ? -1 : 0; // image at x - 1
      }
      for (int sx = hi[0]; sx <= lo[0]; ++sx)
        for (int sy = hi[1]; sy <= lo[1]; ++sy)
          for (int sz = hi[2]; sz <= lo[2]; ++sz)
            if (sx || sy || sz) {
              all.push_back(x[0] + sx);
              all.push_back(x[1] + sy);
              all.push_back(x[2] + sz);
            }
    }
    Cloud ghosts;
    ghosts.p = all.data();
    ghosts.n = all.size() / 3;
    std::vector<double> dkp;
    {
      Tree tree(3, ghosts, nanoflann::KDTreeSingleIndexAdaptorParams((size_t)leaf));
      query_all(tree, p.data(), n, (size_t)k, dkp);
    }
    std::printf("periodic_ghosts %zu\nperiodic_width %.17g\nseconds_periodic %.6f\n", ghosts.n - n, w,
                seconds_now() - t3);
    print_checksums("checksum_periodic_", dkp);
    dk.swap(dkp);
  }
  if (!dump.empty()) {
    FILE *f = std::fopen(dump.c_str(), "wb");
    if (!f || std::fwrite(dk.data(), 8, n, f) != n || std::fclose(f) != 0)
      usage(("cannot write " + dump).c_str());
  }
  std::printf("rss_input_bytes %lld\npeak_rss_bytes %lld\n", rss_input, proc_status_bytes("VmHWM"));
  return 0;
}
