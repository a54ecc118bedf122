// Command-line checks of the particle mode (--points), on clustered sets written at test time:
//  - success: the seven output files exist with one value per particle; the label files, the
//    density file and the three tables equal what phew_find_clumps with PHEW_MESH_POINTS
//    gives on the same data (float32 and float64, periodic or not, masses, velocities, ids,
//    a given density, other neighbour counts and thresholds); the blobs the set was made of
//    are found; every PeakPatchId is the id of a particle that is its own peak;
//  - failure (each bad input of issue 9: a file whose size does not match, a NaN position, a
//    position outside the box, fewer particles than neighbours, a bad --type, no --box, and
//    options of the other mode): status 1, exactly one line on stderr starting
//    "phew: error:", no output of the run, and a previous run's seven files as they were;
//  - the seventh file is committed with the others: a failure while writing it or renaming
//    it into place keeps the previous run's files;
//  - --finder fof: PREFIX-group.raw and PREFIX-groups.csv equal phew_find_fof_groups on the
//    same data, PHEW's files of the same prefix stay, and the other finder's options are
//    refused with one line.
#include "cli_test_util.h"
#include "phew/phew.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace cli_test;

class CliPoints : public Cli {};

const char *const kPointSuffixes[7] = {"-patch.raw",  "-clump.raw",      "-halo.raw",   "-clumps.csv",
                                       "-haloes.csv", "-dendrogram.csv", "-density.raw"};

// splitmix64: uniform and normal deviates, the same on every machine.
struct Random {
  uint64_t s;
  double uniform()
  {
    uint64_t z = (s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  double normal()
  {
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

// A particle set: every value already exactly representable in the type it is written as.
struct Particles {
  double box[3] = {10, 8, 12};
  std::vector<double> pos, mass, vel, density; // 3, 1, 3, 1 per particle
  std::vector<int64_t> id;                     // unique, not in input order
  std::vector<std::array<double, 3>> centres;  // of the blobs
  int64_t n() const { return (int64_t)(pos.size() / 3); }
};

// Value as written with this type.
double as_type(double x, bool f32) { return f32 ? (double)(float)x : x; }

// Blobs (Gaussian, 600 particles each; the last one around the corner (0, 0, 0), across the
// periodic boundary) on a uniform background, wrapped into the box.
Particles clustered(uint64_t seed, bool f32, int n_blob = 600, int n_background = 500)
{
  Particles p;
  Random r{seed};
  p.centres = {{2, 2, 2}, {7, 5, 9}, {5, 2, 7.5}, {0, 0, 0}};
  auto add = [&](double x, double y, double z, double vx) {
    const double xyz[3] = {x, y, z};
    for (int d = 0; d < 3; ++d) {
      double v = as_type(std::fmod(std::fmod(xyz[d], p.box[d]) + p.box[d], p.box[d]), f32);
      if (v >= p.box[d]) // rounded up to the box size: wrap
        v = 0.0;
      p.pos.push_back(v);
      p.vel.push_back(as_type((d == 0 ? vx : 0.0) + r.normal(), f32));
    }
    p.mass.push_back(as_type(0.5 + r.uniform(), f32));
    // a given density: 1 plus a bump of height 100 on each blob (periodic distances), noisy
    double rho = 1.0 + r.uniform();
    for (const auto &c : p.centres) {
      double r2 = 0.0;
      for (int d = 0; d < 3; ++d) {
        const double at = p.pos[p.pos.size() - 3 + (size_t)d], delta = std::fabs(at - c[(size_t)d]);
        r2 += std::pow(std::min(delta, p.box[d] - delta), 2);
      }
      rho += 100.0 * std::exp(-r2 / (2 * 0.35 * 0.35));
    }
    p.density.push_back(as_type(rho, f32));
  };
  for (size_t b = 0; b < p.centres.size(); ++b)
    for (int i = 0; i < n_blob; ++i)
      add(p.centres[b][0] + 0.35 * r.normal(), p.centres[b][1] + 0.35 * r.normal(), p.centres[b][2] + 0.35 * r.normal(),
          10.0 * (double)b);
  for (int i = 0; i < n_background; ++i)
    add(p.box[0] * r.uniform(), p.box[1] * r.uniform(), p.box[2] * r.uniform(), 0.0);
  // ids: a permutation of 3 * index + 5, so that ids and input order differ
  p.id.resize((size_t)p.n());
  for (int64_t i = 0; i < p.n(); ++i)
    p.id[(size_t)i] = 3 * i + 5;
  for (int64_t i = p.n() - 1; i > 0; --i)
    std::swap(p.id[(size_t)i], p.id[(size_t)(r.uniform() * (double)(i + 1))]);
  return p;
}

// One run's settings: the same for the tool and the library call.
struct Settings {
  bool f32 = false, periodic = true, masses = false, velocities = false, ids = false, density = false;
  int neighbours = 16, density_neighbours = 64, threads = 0;
  double threshold = 2.0, relevance = 2.0, mass_threshold = 0.0;
  bool saddle = false;
  bool physics = false; // with velocities: the physics of structures too (else --no-physics)
  double saddle_threshold = 0.0;
};

template <class T> void write_values(const std::string &path, const std::vector<T> &v)
{
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(v.data()), (std::streamsize)(v.size() * sizeof(T)));
}

void write_typed(const std::string &path, const std::vector<double> &v, bool f32)
{
  if (f32)
    write_values(path, std::vector<float>(v.begin(), v.end()));
  else
    write_values(path, v);
}

std::string number(double x)
{
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Writes the set's files into dir and returns the tool's arguments (without --output).
std::vector<std::string> write_and_args(const std::string &dir, const Particles &p, const Settings &s)
{
  std::vector<std::string> a = {"--points", "pos.raw", "--type", s.f32 ? "float32" : "float64", "--box"};
  for (double b : p.box)
    a.push_back(number(b));
  write_typed(dir + "/pos.raw", p.pos, s.f32);
  if (s.masses) {
    write_typed(dir + "/masses.raw", p.mass, s.f32);
    a.insert(a.end(), {"--masses", "masses.raw"});
  }
  if (s.velocities) {
    write_typed(dir + "/vel.raw", p.vel, s.f32);
    a.insert(a.end(), {"--velocities", "vel.raw"});
    if (!s.physics) // these tests compare PHEW's outputs with the library's phew_find_clumps
      a.push_back("--no-physics");
  }
  if (s.ids) {
    write_values(dir + "/ids.raw", p.id);
    a.insert(a.end(), {"--ids", "ids.raw"});
  }
  if (s.density) {
    write_typed(dir + "/dens.raw", p.density, s.f32);
    a.insert(a.end(), {"--density", "dens.raw"});
  }
  if (s.periodic)
    a.push_back("--periodic");
  a.insert(a.end(),
           {"--neighbours", std::to_string(s.neighbours), "--density-neighbours", std::to_string(s.density_neighbours),
            "--threads", std::to_string(s.threads), "--threshold", number(s.threshold), "--relevance",
            number(s.relevance), "--mass-threshold", number(s.mass_threshold)});
  if (s.saddle)
    a.insert(a.end(), {"--saddle", number(s.saddle_threshold)});
  return a;
}

struct PointsLibrary : Library {
  std::vector<double> density;
};

// The same run through the library, on one thread (the answer does not depend on it); the box
// [0, p.box), or origin and size when given.
void run_library(const Particles &p, const Settings &s, PointsLibrary &lib, const double *origin = nullptr,
                 const double *size = nullptr)
{
  const size_t n = (size_t)p.n();
  lib.patch.resize(n);
  lib.clump.resize(n);
  lib.halo.resize(n);
  lib.density.resize(n);
  const std::vector<float> pos32(p.pos.begin(), p.pos.end()), mass32(p.mass.begin(), p.mass.end()),
      vel32(p.vel.begin(), p.vel.end()), dens32(p.density.begin(), p.density.end());
  auto pick = [&](const std::vector<float> &f, const std::vector<double> &d) {
    return s.f32 ? (const void *)f.data() : (const void *)d.data();
  };
  phew_input in;
  std::memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = p.n();
  in.points.type = s.f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  in.points.position = pick(pos32, p.pos);
  in.points.mass = s.masses ? pick(mass32, p.mass) : nullptr;
  in.points.velocity = s.velocities ? pick(vel32, p.vel) : nullptr;
  in.points.id = s.ids ? p.id.data() : nullptr;
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_origin[d] = origin ? origin[d] : 0.0;
    in.points.box_size[d] = size ? size[d] : p.box[d];
    in.points.periodic[d] = s.periodic;
  }
  in.points.n_neighbours = s.neighbours;
  in.points.n_density_neighbours = s.density_neighbours;
  lib.context.n_threads = 1;
  in.density = s.density ? pick(dens32, p.density) : nullptr;
  in.density_type = in.points.type;
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = s.threshold;
  params.relevance_threshold = s.relevance;
  params.mass_threshold = s.mass_threshold;
  params.saddle_merging = s.saddle;
  params.saddle_threshold = s.saddle_threshold;
  phew_labels labels = {lib.patch.data(), lib.clump.data(), lib.halo.data(), lib.density.data()};
  ASSERT_EQ(phew_find_clumps(&lib.context, &in, &params, &labels, &lib.result), PHEW_OK) << lib.context.message;
}

template <class T> std::vector<T> read_values(const std::string &path)
{
  const std::string raw = slurp(path);
  std::vector<T> v(raw.size() / sizeof(T));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(T)); // little-endian, like this machine
  return v;
}

// Index of the particle nearest to c (periodic distance when periodic).
size_t nearest_to(const Particles &p, const std::array<double, 3> &c, bool periodic)
{
  size_t best = 0;
  double best_d2 = INFINITY;
  for (size_t i = 0; i < (size_t)p.n(); ++i) {
    double d2 = 0;
    for (int k = 0; k < 3; ++k) {
      double d = std::fabs(p.pos[3 * i + (size_t)k] - c[(size_t)k]);
      if (periodic)
        d = std::min(d, p.box[k] - d);
      d2 += d * d;
    }
    if (d2 < best_d2) {
      best_d2 = d2;
      best = i;
    }
  }
  return best;
}

TEST_F(CliPoints, OutputsEqualTheLibrary)
{
  struct Variant {
    const char *name;
    Settings s;
  };
  std::vector<Variant> variants(3);
  variants[0].name = "f64_periodic_masses_velocities_saddle";
  variants[0].s.masses = variants[0].s.velocities = variants[0].s.saddle = true;
  variants[0].s.saddle_threshold = 5.0;
  variants[1].name = "f32_open_ids_8_32_neighbours";
  variants[1].s.f32 = variants[1].s.ids = true;
  variants[1].s.periodic = false;
  variants[1].s.neighbours = 8;
  variants[1].s.density_neighbours = 32;
  variants[1].s.relevance = 1.5;
  variants[1].s.mass_threshold = 20.0;
  variants[1].s.threads = 2;
  variants[2].name = "f64_given_density_masses";
  variants[2].s.density = variants[2].s.masses = true;
  variants[2].s.threshold = 30.0; // the bumps reach 100: relevance above 3
  variants[2].s.threads = 1;
  for (const Variant &v : variants) {
    SCOPED_TRACE(v.name);
    const Settings &s = v.s;
    const Particles p = clustered(77, s.f32);
    std::vector<std::string> args = write_and_args(dir, p, s);
    args.insert(args.end(), {"--output", v.name});
    const Outcome o = run(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err, "");
    EXPECT_EQ(o.out, "");

    PointsLibrary lib;
    run_library(p, s, lib);
    ASSERT_FALSE(HasFatalFailure());
    const std::string base = path(v.name);
    const size_t n = (size_t)p.n();
    EXPECT_EQ(files_starting(v.name).size(), 8u) << "the seven outputs, the run record and nothing else";
    for (const char *suffix : kPointSuffixes)
      ASSERT_TRUE(exists(base + suffix)) << suffix;
    const std::vector<int64_t> *want[3] = {&lib.patch, &lib.clump, &lib.halo};
    std::vector<int64_t> got[3];
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(file_size(base + kPointSuffixes[k]), (long)(n * 8)) << kPointSuffixes[k];
      got[k] = read_values<int64_t>(base + kPointSuffixes[k]);
      EXPECT_TRUE(got[k] == *want[k]) << kPointSuffixes[k] << " differs from the library's labels";
    }
    EXPECT_EQ(file_size(base + "-density.raw"), (long)(n * 8));
    const std::string density = slurp(base + "-density.raw");
    ASSERT_EQ(density.size(), n * 8);
    EXPECT_EQ(std::memcmp(density.data(), lib.density.data(), n * 8), 0)
        << "density.raw differs from labels.density of the library";
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(lib.result.columns, &nc);
    const phew_column *hc = phew_halo_columns(lib.result.columns, &nh);
    const phew_column *dc = phew_node_columns(lib.result.columns, &nn);
    expect_csv(slurp(base + "-clumps.csv"), cc, nc, lib.result.clumps, lib.result.n_clumps, sizeof(phew_object),
               "clumps.csv");
    expect_csv(slurp(base + "-haloes.csv"), hc, nh, lib.result.haloes, lib.result.n_haloes, sizeof(phew_object),
               "haloes.csv");
    expect_csv(slurp(base + "-dendrogram.csv"), dc, nn, lib.result.nodes, lib.result.n_nodes, sizeof(phew_node),
               "dendrogram.csv");

    // what the set was made of, independently of the library
    const std::string clump_header = lines_of(slurp(base + "-clumps.csv"))[0];
    EXPECT_NE(clump_header.find(",NumberOfParticles,"), std::string::npos) << clump_header;
    EXPECT_NE(clump_header.find(",Radius"), std::string::npos) << clump_header;
    EXPECT_EQ(clump_header.find("MeanVelocityX") != std::string::npos, s.velocities) << clump_header;
    std::vector<int64_t> blob_halo;
    for (const auto &c : p.centres) {
      const size_t i = nearest_to(p, c, s.periodic);
      if (!s.periodic && c[0] == 0) // the corner blob is cut in eight without the wrap
        continue;
      EXPECT_GE(got[1][i], 0) << "the particle at the centre of blob (" << c[0] << ", " << c[1] << ", " << c[2]
                              << ") is in no clump";
      blob_halo.push_back(got[2][i]);
    }
    std::sort(blob_halo.begin(), blob_halo.end());
    EXPECT_TRUE(std::adjacent_find(blob_halo.begin(), blob_halo.end()) == blob_halo.end()) << "two blobs share a halo";
    // PeakPatchId is the id of a particle whose own PeakPatchId is itself (its patch's peak)
    std::map<int64_t, size_t> index_of;
    for (size_t i = 0; i < n; ++i)
      index_of[s.ids ? p.id[i] : (int64_t)i] = i;
    int64_t test_particles = 0;
    for (size_t i = 0; i < n; ++i) {
      const int64_t peak = got[0][i];
      if (peak < 0)
        continue;
      ++test_particles;
      ASSERT_EQ(index_of.count(peak), 1u) << "particle " << i << " has PeakPatchId " << peak << ", no particle's id";
      EXPECT_EQ(got[0][index_of[peak]], peak) << "the peak of particle " << i << " is not its own peak";
    }
    EXPECT_GT(test_particles, 1000);
    EXPECT_LT(test_particles, (int64_t)n);
  }
}

TEST_F(CliPoints, VerboseNamesTheParticleStages)
{
  Settings s;
  const Particles p = clustered(5, false, 300, 200);
  std::vector<std::string> args = write_and_args(dir, p, s);
  args.insert(args.end(), {"--output", "res", "--verbose"});
  const Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("particles " + std::to_string(p.n()) + ", test particles "), std::string::npos) << o.out;
  for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
    EXPECT_NE(o.out.find(std::string("  ") + phew_particle_stage_name(k) + " "), std::string::npos)
        << phew_particle_stage_name(k) << "\n"
        << o.out;
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k)
    EXPECT_NE(o.out.find(std::string("  ") + phew_stage_name(k) + " "), std::string::npos) << phew_stage_name(k);
  EXPECT_NE(o.out.find("padding: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ranks 1, "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" thread(s) each"), std::string::npos) << o.out;
  EXPECT_EQ(files_starting("res").size(), 8u);
  const Outcome h = run({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("--points POS"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("--density-neighbours"), std::string::npos) << h.out;
}

// --box auto: the box is the bounds of the positions (origin the lowest coordinate, size the
// smallest that reaches the highest, computed here), so the labels and density equal the
// library's run with that box; --periodic is refused with it.
TEST_F(CliPoints, BoxAutoIsTheBoundsOfThePositions)
{
  Settings s;
  s.periodic = false;
  const Particles p = clustered(7, false, 300, 200);
  std::vector<std::string> args = write_and_args(dir, p, s);
  const auto box = std::find(args.begin(), args.end(), "--box");
  ASSERT_NE(box, args.end());
  args.erase(box + 1, box + 4);
  args.insert(box + 1, "auto");
  args.insert(args.end(), {"--output", "auto", "--verbose"});
  const Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, size[3];
  double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < (size_t)p.n(); ++i)
    for (size_t d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], p.pos[3 * i + d]);
      hi[d] = std::max(hi[d], p.pos[3 * i + d]);
    }
  for (int d = 0; d < 3; ++d) {
    size[d] = hi[d] - lo[d];
    while (lo[d] + size[d] < hi[d])
      size[d] = std::nextafter(size[d], INFINITY);
  }
  char expected[256];
  std::snprintf(expected, sizeof expected, "origin %.17g %.17g %.17g, size %.17g %.17g %.17g", lo[0], lo[1], lo[2],
                size[0], size[1], size[2]);
  EXPECT_NE(o.out.find(expected), std::string::npos) << expected << "\n" << o.out;
  // The library with that box: the same answer.
  PointsLibrary lib;
  run_library(p, s, lib, lo, size);
  ASSERT_GT(lib.result.n_clumps, 1);
  EXPECT_EQ(read_values<int64_t>(dir + "/auto-clump.raw"), lib.clump);
  EXPECT_EQ(read_values<int64_t>(dir + "/auto-patch.raw"), lib.patch);
  EXPECT_EQ(read_values<double>(dir + "/auto-density.raw"), lib.density);
  args.push_back("--periodic");
  const Outcome periodic = run(args);
  EXPECT_EQ(periodic.exit_code, 1);
  EXPECT_NE(periodic.err.find("--box auto: periodic axes need the periodic box"), std::string::npos) << periodic.err;
}

TEST_F(CliPoints, BadInputFailsWithOneLineAndKeepsPreviousOutputs)
{
  Settings s;
  s.masses = s.velocities = s.ids = true;
  s.periodic = false;
  const Particles p = clustered(9, false, 200, 100);
  std::vector<std::string> good = write_and_args(dir, p, s);
  good.insert(good.end(), {"--output", "res"});
  const Outcome first = run(good);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::map<std::string, std::string> previous = snapshot("res");
  ASSERT_EQ(previous.size(), 8u);

  // bad files next to the good ones
  const std::string whole = slurp(path("pos.raw"));
  auto write_bytes = [&](const std::string &name, const std::string &bytes) {
    std::ofstream out(path(name), std::ios::binary);
    out.write(bytes.data(), (std::streamsize)bytes.size());
  };
  write_bytes("pos_plus_byte.raw", whole + "x");
  write_bytes("pos_short.raw", whole.substr(0, whole.size() - 8));
  write_bytes("masses_short.raw", slurp(path("masses.raw")).substr(0, (size_t)(p.n() - 1) * 8));
  write_bytes("vel_long.raw", slurp(path("vel.raw")) + std::string(24, '\0'));
  write_bytes("ids_short.raw", slurp(path("ids.raw")).substr(0, (size_t)(p.n() - 1) * 8));
  write_bytes("dens_short.raw", std::string((size_t)(p.n() - 1) * 8, '\0'));
  auto with_position = [&](const std::string &name, size_t i, double x) {
    std::vector<double> q = p.pos;
    q[i] = x;
    write_values(path(name), q);
  };
  with_position("pos_nan.raw", 3 * 250 + 1, std::nan(""));
  with_position("pos_beyond.raw", 3 * 17 + 2, 12.5);     // z beyond the box (0, 12)
  with_position("pos_on_edge.raw", 3 * 40, 10.0);        // x == LX: outside a periodic box
  with_position("pos_negative.raw", 3 * 41 + 1, -1e-9);  // y below 0
  write_bytes("pos_40.raw", whole.substr(0, 40 * 24));   // 40 particles, 65 needed
  write_bytes("pos_100.raw", whole.substr(0, 100 * 24)); // 100 particles
  std::vector<double> negative_mass = p.mass;
  negative_mass[3] = -1.0;
  write_values(path("masses_negative.raw"), negative_mass);
  ASSERT_EQ(mkdir(path("pos_directory.raw").c_str(), 0755), 0);

  // the good command with one option's values replaced, removed ("<remove>") or added
  auto replaced = [&](const std::string &option, const std::vector<std::string> &values) {
    std::vector<std::string> a;
    bool found = false;
    for (size_t i = 0; i < good.size(); ++i) {
      if (good[i] == option) {
        found = true;
        const size_t n_old = option == "--box" ? 3 : option == "--periodic" ? 0 : 1;
        if (!values.empty() && values[0] != "<remove>") {
          a.push_back(option);
          a.insert(a.end(), values.begin(), values.end());
        }
        i += n_old;
      } else {
        a.push_back(good[i]);
      }
    }
    if (!found) {
      a.push_back(option);
      a.insert(a.end(), values.begin(), values.end());
    }
    return a;
  };
  const std::vector<std::string> remove = {"<remove>"};
  // positions alone (no masses, velocities, ids), with extra options
  auto only_positions = [&](const std::string &pos, const std::vector<std::string> &extra) {
    std::vector<std::string> a = {"--points", pos,  "--type",      "float64", "--box",    "10",
                                  "8",        "12", "--threshold", "2",       "--output", "res"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  struct Case {
    std::vector<std::string> args;
    const char *what, *says;
  } cases[] = {
      {replaced("--points", {"pos_plus_byte.raw"}), "positions: one byte too many", "pos_plus_byte.raw"},
      {replaced("--points", {"pos_short.raw"}), "positions: one value short", "pos_short.raw"},
      {replaced("--masses", {"masses_short.raw"}), "masses: one particle short", "masses_short.raw"},
      {replaced("--velocities", {"vel_long.raw"}), "velocities: one particle too many", "vel_long.raw"},
      {replaced("--ids", {"ids_short.raw"}), "ids: one particle short", "ids_short.raw"},
      {replaced("--density", {"dens_short.raw"}), "density: one particle short", "dens_short.raw"},
      {replaced("--points", {"missing.raw"}), "positions: no such file", "missing.raw"},
      {replaced("--points", {"pos_directory.raw"}), "positions: a directory", "directory"},
      {replaced("--points", {"pos_nan.raw"}), "a NaN position", "not finite"},
      {replaced("--points", {"pos_beyond.raw"}), "z beyond the box", "outside the box"},
      {replaced("--points", {"pos_negative.raw"}), "y below the box", "outside the box"},
      {only_positions("pos_on_edge.raw", {"--periodic"}), "x on the upper face of a periodic box", "outside the box"},
      {replaced("--masses", {"masses_negative.raw"}), "a negative mass", "mass"},
      {only_positions("pos_40.raw", {}), "40 particles, 64 density neighbours", "fewer"},
      {only_positions("pos_100.raw", {"--neighbours", "120", "--density-neighbours", "8"}),
       "100 particles, 120 neighbours", "fewer"},
      {replaced("--type", {"float16"}), "bad --type", "--type"},
      // float32: twice the particles, which the masses and velocities match, but not the ids
      {replaced("--type", {"float32"}), "float64 files read as float32", "ids.raw"},
      {replaced("--box", remove), "no --box", "--box"},
      {replaced("--box", {"10", "0", "12"}), "a flat box", "--box"},
      {replaced("--box", {"10", "-8", "12"}), "a negative box", "--box"},
      {replaced("--neighbours", {"0"}), "no neighbours", "--neighbours"},
      {replaced("--threads", {"-1"}), "negative threads", "--threads"},
      {replaced("--dims", {"10", "10", "10"}), "--dims with --points", "--dims"},
      {replaced("--spacing", {"1", "1", "1"}), "--spacing with --points", "--spacing"},
      {replaced("--input", {"pos.raw"}), "--input and --points", "--input"},
      {{"--input", "pos.raw", "--dims", "10", "10", "10", "--type", "float64", "--threshold", "1", "--box", "1", "1",
        "1", "--output", "res"},
       "--box with a grid",
       "--box"},
      {{"--type", "float64", "--threshold", "1", "--box", "1", "1", "1", "--output", "res"},
       "neither --points nor --input",
       "--points"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    const Outcome o = run(c.args);
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "stderr must be one line: " << o.err;
    EXPECT_EQ(o.err.rfind("phew: error: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << "the message should mention '" << c.says << "': " << o.err;
    EXPECT_EQ(o.out, "");
    EXPECT_TRUE(snapshot("res") == previous) << "a refused run changed the previous outputs or left files";
  }
}

// The seventh file is part of the all-or-nothing set: a full disk while writing it, or a
// failed rename of it (the last one), keeps the previous run's files as they were; a signal
// during its rename completes the new set first.
TEST_F(CliPoints, DensityFileIsCommittedWithTheOthers)
{
  Settings s;
  const Particles p = clustered(13, false, 200, 100);
  std::vector<std::string> args = write_and_args(dir, p, s);
  auto with = [&](const std::string &prefix, const std::string &threshold) {
    std::vector<std::string> a = args;
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == "--threshold")
        a[i + 1] = threshold;
    a.insert(a.end(), {"--output", prefix});
    return a;
  };
  ASSERT_EQ(run(with("res", "2")).exit_code, 0);
  const std::map<std::string, std::string> previous = snapshot("res");
  ASSERT_EQ(previous.size(), 8u);
  struct Case {
    const char *rules, *message;
  } cases[] = {
      {"write:res-density.raw.partial:ENOSPC", "phew: error: writing 'res-density.raw.partial' failed: No space left "
                                               "on device\n"},
      {"rename:res-density.raw.partial:EIO",
       "phew: error: cannot rename 'res-density.raw.partial' to 'res-density.raw': Input/output error\n"},
      {"rename:res-density.raw:EPERM", "phew: error: cannot move the previous 'res-density.raw' aside to "
                                       "'res-density.raw.previous': Operation not permitted\n"},
      {"open:res-density.raw.partial:EDQUOT", "phew: error: cannot create 'res-density.raw.partial': Disk quota "
                                              "exceeded\n"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.rules);
    const Outcome o = run_with_faults(with("res", "3"), c.rules);
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.err, c.message);
    EXPECT_TRUE(snapshot("res") == previous) << "the previous outputs were not kept as they were";
  }
  ASSERT_EQ(run(with("new", "3")).exit_code, 0);
  std::map<std::string, std::string> fresh; // the new run's files under the name "res"
  for (const auto &f : snapshot("new"))
    fresh["res" + f.first.substr(3)] = f.second;
  ASSERT_TRUE(fresh != previous);
  const Outcome o = run_with_faults(with("res", "3"), "rename:res-density.raw.partial:SIGTERM");
  EXPECT_EQ(o.exit_code, 128 + SIGTERM) << o.err;
  EXPECT_TRUE(snapshot("res") == fresh) << "a signal during the renames must complete the new set";
}

} // namespace

namespace {

// --finder fof: the two files equal what phew_find_fof_groups gives on the same data (relative
// and absolute linking lengths, with and without velocities), a PHEW run's files with the same
// prefix stay as they were, and the options of the other finder are refused with one line.
TEST_F(CliPoints, FriendsOfFriendsEqualsTheLibrary)
{
  const Particles p = clustered(21, false, 300, 300);
  Settings s;
  s.masses = s.velocities = s.ids = true;
  // a PHEW run first: its seven files must survive the FoF runs with the same prefix
  std::vector<std::string> phew_run = write_and_args(dir, p, s);
  phew_run.insert(phew_run.end(), {"--output", "res"});
  // the files and the box, without PHEW's options
  const std::vector<std::string> base = {"--points",       "pos.raw",        "--masses",  "masses.raw",
                                         "--velocities",   "vel.raw",        "--ids",     "ids.raw",
                                         "--type",         "float64",        "--box",     number(p.box[0]),
                                         number(p.box[1]), number(p.box[2]), "--periodic"};
  ASSERT_EQ(run(phew_run).exit_code, 0);
  const std::map<std::string, std::string> phew_files = snapshot("res");
  ASSERT_EQ(phew_files.size(), 8u);
  struct Variant {
    std::vector<std::string> extra;
    double length;
    int absolute;
    int64_t min_members;
  } variants[] = {{{}, 0.2, 0, 20},
                  {{"--linking-absolute", "0.09", "--min-members", "3"}, 0.09, 1, 3},
                  {{"--linking-length", "0.35", "--min-members", "1", "--threads", "2"}, 0.35, 0, 1}};
  for (const Variant &v : variants) {
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--finder", "fof", "--output", "res"});
    a.insert(a.end(), v.extra.begin(), v.extra.end());
    const Outcome o = run(a);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    // the library on the same values
    phew_input in;
    std::memset(&in, 0, sizeof in);
    in.mesh = PHEW_MESH_POINTS;
    phew_points_init(&in.points);
    in.points.n = p.n();
    in.points.type = PHEW_FLOAT64;
    in.points.position = p.pos.data();
    in.points.mass = p.mass.data();
    in.points.velocity = p.vel.data();
    in.points.id = p.id.data();
    in.points.has_box = 1;
    for (int d = 0; d < 3; ++d) {
      in.points.box_size[d] = p.box[d];
      in.points.periodic[d] = 1;
    }
    phew_fof_params f;
    phew_fof_params_init(&f);
    f.linking_length = v.length;
    f.absolute = v.absolute;
    f.min_members = v.min_members;
    std::vector<int64_t> group((size_t)p.n());
    phew_context context;
    phew_context_init(&context);
    phew_group_result r;
    ASSERT_EQ(phew_find_fof_groups(&context, &in, &f, group.data(), &r), PHEW_OK) << context.message;
    const std::string raw = slurp(path("res-group.raw"));
    ASSERT_EQ(raw.size(), group.size() * 8);
    EXPECT_EQ(0, std::memcmp(raw.data(), group.data(), raw.size()));
    const std::string table = slurp(path("res-groups.csv"));
    EXPECT_EQ(table.rfind("GroupId,NumberOfParticles,Mass,CenterOfMassX", 0), 0u) << table.substr(0, 80);
    EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), r.n_groups + 1);
    EXPECT_GE(r.n_groups, 4) << "the four blobs";
    phew_group_result_free(&r);
    for (const auto &kv : phew_files) // the PHEW files of the same prefix are untouched
      EXPECT_EQ(slurp(path(kv.first)), kv.second) << kv.first;
  }
  const std::map<std::string, std::string> previous = snapshot("res");
  struct Case {
    std::vector<std::string> extra;
    const char *says;
  } cases[] = {{{"--finder", "fof", "--threshold", "2"}, "--threshold"},
               {{"--finder", "fof", "--neighbours", "8"}, "--neighbours"},
               {{"--finder", "fof", "--linking-length", "0.2", "--linking-absolute", "0.1"}, "together"},
               {{"--finder", "fof", "--linking-length", "-0.2"}, "--linking-length"},
               {{"--finder", "fof", "--linking-absolute", "0"}, "--linking-absolute"},
               {{"--finder", "fof", "--min-members", "0"}, "--min-members"},
               {{"--finder", "fof", "--min-members", "many"}, "--min-members"},
               {{"--finder", "hopscotch"}, "--finder"},
               {{"--threshold", "2", "--linking-length", "0.2"}, "--linking-length"}};
  for (const Case &c : cases) {
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--output", "res"});
    a.insert(a.end(), c.extra.begin(), c.extra.end());
    SCOPED_TRACE(c.says);
    const Outcome o = run(a);
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << o.err;
    EXPECT_TRUE(snapshot("res") == previous) << "a refused run changed the outputs";
  }
}

} // namespace
