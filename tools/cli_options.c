/* Parsing the command line. Every rank parses the same arguments, so every rank reaches the
 * same verdict; the first failure is recorded with fail (cli_errors.h). */
#include "cli_options.h"
#include "cli_errors.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void usage(FILE *out)
{
  fputs("usage: phew --input FILE --dims NX NY NZ --type float32|float64 [--threshold T|auto]\n"
        "            [--relevance R] [--saddle S|auto] [--mass-threshold M] [--periodic]\n"
        "            [--spacing DX DY DZ] [--origin OX OY OZ] [--labels int64|int32] [--threads N]\n"
        "            --output PREFIX [--verbose]\n"
        "       phew --points POS --type float32|float64 --box LX LY LZ|auto [--periodic]\n"
        "            [--masses FILE] [--velocities FILE] [--ids FILE] [--density FILE]\n"
        "            [--neighbours K] [--density-neighbours N] [--threshold T|auto] [--relevance R]\n"
        "            [--saddle S|auto] [--mass-threshold M] [--threads N] --output PREFIX [--verbose]\n"
        "       phew --snapshot PATH [--format ramses|gadget-hdf5] [--particle-type N | --family NAME]\n"
        "            [--units code|astro] [--finder phew|fof|hop] [the finder's options] --output PREFIX\n"
        "       phew --snapshot PATH --amr-variable NAME [--threshold T|auto] [--relevance R]\n"
        "            [--saddle S|auto] [--mass-threshold M] [--periodic] [--threads N] --output PREFIX\n"
        "            [--verbose]\n"
        "       phew --points POS --type float32|float64 --box LX LY LZ|auto [--periodic] --finder fof\n"
        "            [--linking-length B | --linking-absolute L] [--min-members N] [--masses FILE]\n"
        "            [--velocities FILE] [--ids FILE] [--threads N] --output PREFIX [--verbose]\n"
        "       phew --points POS --type float32|float64 --box LX LY LZ|auto [--periodic] --finder hop\n"
        "            [--outer D] [--saddle-factor 2.5] [--peak-factor 3] [--hop-neighbours 64]\n"
        "            [--merge-neighbours 4] [--density-neighbours 64] [--density FILE]\n"
        "            [--min-members N] [--masses FILE] [--velocities FILE] [--ids FILE] [--threads N]\n"
        "            --output PREFIX [--verbose]\n"
        "       phew link --output PREFIX [--max-orphan-steps K] [--hdf5 FILE] CATALOGUE0.hdf5 ...\n"
        "\n"
        "A grid: a raw little-endian cube, x fastest. Outputs PREFIX-patch.raw, -clump.raw,\n"
        "-halo.raw (int64 per cell, -1 = none; int32 with --labels int32), PREFIX-clumps.csv,\n"
        "-haloes.csv, -dendrogram.csv.\n"
        "Thresholds are in the density's units. --threshold (default auto): cells above T are\n"
        "test cells; auto is 10 x the mean density (total mass / total volume; particles with a\n"
        "box: total mass / box volume, 10 for estimated densities). --relevance R >= 1 (default\n"
        "2; 1 keeps every peak). --saddle S turns saddle merging on; auto is 2.5 x the density\n"
        "threshold used. --verbose prints the thresholds used and the mean density.\n"
        "Particles: POS holds raw little-endian x,y,z per particle (velocities likewise; masses\n"
        "and a given density one value per particle; all of --type; ids int64), inside the box\n"
        "[0,LX)x[0,LY)x[0,LZ) with --periodic, [0,LX]x[0,LY]x[0,LZ] (the far faces included)\n"
        "without; --box auto: the bounds of the positions over all ranks (no\n"
        "--periodic). Densities are estimated (SPH over N density neighbours, default 64) unless\n"
        "given, in units of the mean density; PHEW runs on the graph of the K nearest\n"
        "neighbours (default 16). Outputs as for a grid, one value per particle in input order,\n"
        "plus PREFIX-density.raw (float64).\n"
        "--threads N: threads per process for every mode, 0 (default): all cores; more than the\n"
        "cores available are capped at them. The answers do not depend on N.\n"
        "--finder fof: Friends-of-Friends, linking length B (default 0.2) times the mean\n"
        "interparticle spacing (box volume / N)^(1/3), or L in the positions' units; groups of at\n"
        "least N particles (default 20). Outputs PREFIX-group.raw (int64 GroupId per particle in\n"
        "input order, -1 = none) and PREFIX-groups.csv.\n"
        "--finder hop: HOP (Eisenstein & Hut) on the SPH density: particles hop to their densest\n"
        "neighbour; groups regrouped with delta_outer D (default 160, units of the mean density),\n"
        "delta_saddle = 2.5 D, delta_peak = 3 D; groups of at least N particles (default 10).\n"
        "Outputs as for fof, plus PREFIX-density.raw (float64).\n"
        "--snapshot: the particles of a RAMSES output (its folder output_NNNNN or info_NNNNN.txt)\n"
        "or of a GADGET-style HDF5 snapshot (GADGET-2/3/4, AREPO, SWIFT; snap_NNN.hdf5 or the\n"
        "first file snap_NNN.0.hdf5 of several); the format from the path unless --format says.\n"
        "Dark matter by default: --particle-type N (HDF5's PartTypeN, default 1) or --family NAME\n"
        "(RAMSES: DM, star, cloud, ...). The box and its periodicity come from the snapshot;\n"
        "--units astro reads comoving Mpc/h, Msun/h and peculiar km/s, code (default) the\n"
        "snapshot's own units. Outputs as for --points, in the snapshot's order of its particles\n"
        "of that kind; each rank reads only its share of the files.\n"
        "--amr-variable NAME (RAMSES): PHEW on the AMR leaf cells with that hydro variable as the\n"
        "density (density, pressure, ...; code units). Outputs PREFIX-patch.raw, -clump.raw,\n"
        "-halo.raw (int64 per cell of every box listed in PREFIX-boxes.csv, box after box, x\n"
        "fastest; -1 for cells a finer box covers) and the three tables. --amr-particles: then the\n"
        "snapshot's particles take their leaf cell's clump and are unbound (PREFIX-bound.raw).\n"
        "Particles with velocities: unbinding and halo properties (bound masses, M200c, Vmax, spin,\n"
        "...) joined to the tables, PREFIX-bound.raw (-group-bound.raw); --no-physics, --no-unbind,\n"
        "--potential exact|spherical, --softening, --cosmology H0 OM OL, --scale-factor,\n"
        "--gravitational-constant, --groups FILE --parents FILE, --most-bound N, --gather-max N,\n"
        "--hdf5 FILE: docs/physics.md. phew link: merger trees from --hdf5 catalogues\n"
        "(docs/merger-trees.md).\n",
        out);
}

/* strtod on the whole text. Returns 1 with *value set, 0 when the text is not a finite
 * number (empty, trailing characters, nan, inf), -1 when it is a number beyond the double
 * range (1e999). Tiny values (denormals, or below them: 0) are accepted: strtod flags them
 * with ERANGE but returns the nearest double, which is what the user wrote. */
static int parse_double(const char *text, double *value)
{
  char *end = NULL;
  errno = 0;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || isnan(v))
    return 0;
  if (isinf(v))
    return errno == ERANGE ? -1 : 0;
  *value = v;
  return 1;
}

/* strtoll on the whole text: 1 with *value set, 0 when not an integer, -1 when beyond int64. */
static int parse_int64(const char *text, int64_t *value)
{
  char *end = NULL;
  errno = 0;
  const long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0')
    return 0;
  if (errno == ERANGE)
    return -1;
  *value = v;
  return 1;
}

/* Parses the numeric value of option a; 0 or -1 after fail. */
static int option_double(const char *a, const char *text, double *value, const char *what)
{
  const int r = parse_double(text, value);
  if (r == 1)
    return 0;
  if (r < 0)
    fail("%s value '%s' is out of range (finite numbers go up to about 1.8e308)", a, text);
  else
    fail("%s needs %s (got '%s')", a, what, text);
  return -1;
}

/* Parses an int option with at least `least`; 0 or -1 after fail. */
static int option_int(const char *a, const char *text, int least, int *value)
{
  int64_t v;
  const int r = parse_int64(text, &v);
  if (r == 1 && v >= least && v <= INT_MAX) {
    *value = (int)v;
    return 0;
  }
  if (r == 1 && v > INT_MAX)
    fail("%s value '%s' is out of range (at most %d)", a, text, INT_MAX);
  else
    fail("%s needs an integer of at least %d (got '%s')", a, least, text);
  return -1;
}

/* Options that belong to one mode only: their index in `given` below. */
/* clang-format off */
enum { GIVEN_DIMS, GIVEN_SPACING, GIVEN_ORIGIN, GIVEN_LABELS, GRID_ONLY, GIVEN_BOX = GRID_ONLY, GIVEN_MASSES,
       GIVEN_VELOCITIES, GIVEN_IDS, GIVEN_DENSITY, GIVEN_NEIGHBOURS, GIVEN_DENSITY_NEIGHBOURS, N_GIVEN };
static const char *const mode_option[N_GIVEN] = {"--dims",  "--spacing",   "--origin", "--labels",
                                                 "--box",   "--masses",    "--velocities",
                                                 "--ids",   "--density",   "--neighbours",
                                                 "--density-neighbours"};
/* clang-format on */

/* The option's slot in `given`, or -1 for an option both modes take. */
static int mode_slot(const char *a)
{
  for (int k = 0; k < N_GIVEN; ++k)
    if (!strcmp(a, mode_option[k]))
      return k;
  return -1;
}

/* Options of some finders only: their index in `finder_given` below, and the finders (bits
 * 1 << finder) each applies to. */
/* clang-format off */
enum { PHEW_THRESHOLD, PHEW_RELEVANCE, PHEW_SADDLE, PHEW_MASS_THRESHOLD, PHEW_NEIGHBOURS, GIVEN_DENSITY_NEIGHBOURS_F,
       GIVEN_DENSITY_F, FOF_LINKING, FOF_ABSOLUTE, GIVEN_MIN_MEMBERS, HOP_OUTER, HOP_SADDLE_FACTOR, HOP_PEAK_FACTOR,
       HOP_NEIGHBOURS, HOP_MERGE_NEIGHBOURS, N_FINDER_GIVEN };
enum { BY_PHEW = 1 << FINDER_PHEW, BY_FOF = 1 << FINDER_FOF, BY_HOP = 1 << FINDER_HOP };
static const struct {
  const char *name;
  int finders;
} finder_option[N_FINDER_GIVEN] = {
    {"--threshold", BY_PHEW},           {"--relevance", BY_PHEW},         {"--saddle", BY_PHEW},
    {"--mass-threshold", BY_PHEW},      {"--neighbours", BY_PHEW},        {"--density-neighbours", BY_PHEW | BY_HOP},
    {"--density", BY_PHEW | BY_HOP},    {"--linking-length", BY_FOF},     {"--linking-absolute", BY_FOF},
    {"--min-members", BY_FOF | BY_HOP}, {"--outer", BY_HOP},              {"--saddle-factor", BY_HOP},
    {"--peak-factor", BY_HOP},          {"--hop-neighbours", BY_HOP},     {"--merge-neighbours", BY_HOP}};
/* clang-format on */
static const char *const finder_name[] = {"phew", "fof", "hop", "given"};

static int finder_slot(const char *a)
{
  for (int k = 0; k < N_FINDER_GIVEN; ++k)
    if (!strcmp(a, finder_option[k].name))
      return k;
  return -1;
}

/* The finder's options: none of another finder's, the halo finders on particles only. */
static int check_finder(const options *o, const int *finder_given)
{
  if (o->finder != FINDER_PHEW && !o->points) {
    fail("--finder %s applies to particles (--points, --snapshot), not to a grid (--input)", finder_name[o->finder]);
    return 1;
  }
  for (int k = 0; k < N_FINDER_GIVEN; ++k)
    if (finder_given[k] && !(finder_option[k].finders & (1 << o->finder))) {
      char which[64] = "";
      for (int f = 0; f <= FINDER_HOP; ++f)
        if (finder_option[k].finders & (1 << f))
          snprintf(which + strlen(which), sizeof which - strlen(which), "%s--finder %s", which[0] ? " or " : "",
                   finder_name[f]);
      fail("%s applies to %s, not to --finder %s", finder_option[k].name, which, finder_name[o->finder]);
      return 1;
    }
  if (finder_given[FOF_LINKING] && finder_given[FOF_ABSOLUTE]) {
    fail("--linking-length (relative) and --linking-absolute cannot be used together");
    return 1;
  }
  return 0;
}

/* What the options set beyond o while they are read. */
typedef struct parse_state {
  int64_t min_members;
  int have_type;
  int snapshot_options; /* --format, --particle-type, --family or --units was given */
} parse_state;

/* --snapshot: the options of raw particle files are not for it, and its own need it. */
static int check_snapshot(const options *o, const int *given, const parse_state *st)
{
  static const int raw_only[] = {GIVEN_BOX, GIVEN_MASSES, GIVEN_VELOCITIES, GIVEN_IDS, GIVEN_DENSITY};
  if (!o->snapshot && st->snapshot_options) {
    fail("--format, --particle-type, --family, --units, --amr-variable and --amr-particles apply to --snapshot");
    return 1;
  }
  if (o->amr_particles && !o->amr_variable) {
    fail("--amr-particles gives the particles the clumps found on the AMR cells: give --amr-variable too");
    return 1;
  }
  for (int k = 0; o->amr && k < N_GIVEN; ++k)
    if (given[k]) {
      fail("%s does not apply to PHEW on AMR cells (--amr-variable)", mode_option[k]);
      return 1;
    }
  if (o->amr && o->finder != FINDER_PHEW) {
    fail("--amr-variable runs PHEW on the AMR cells; --finder %s runs on particles (leave --amr-variable out)",
         o->finder == FINDER_FOF ? "fof" : "hop");
    return 1;
  }
  for (size_t k = 0; o->snapshot && k < sizeof raw_only / sizeof raw_only[0]; ++k)
    if (given[raw_only[k]]) {
      fail("%s applies to raw particle files (--points), not to --snapshot", mode_option[raw_only[k]]);
      return 1;
    }
  if (o->snapshot && st->have_type) {
    fail("--type applies to raw files (--input, --points): a snapshot says its own types");
    return 1;
  }
  if (o->snapshot && !o->output) {
    fail("--snapshot and --output are required (see phew --help)");
    return 1;
  }
  return 0;
}

/* After the loop: the mode, options of the other mode, the required ones. 0 or 1 after fail. */
static int check_mode(options *o, const int *given, const parse_state *st)
{
  if ((o->input != NULL) + (o->positions != NULL) + (o->snapshot != NULL) > 1) {
    fail("--input (a grid), --points (particles) and --snapshot (a simulation's particles) cannot be used together");
    return 1;
  }
  if (!o->input && !o->positions && !o->snapshot) {
    fail("--input (a grid), --points (particles) or --snapshot (a simulation's particles) is required (see phew "
         "--help)");
    return 1;
  }
  o->amr = o->snapshot != NULL && o->amr_variable != NULL;
  o->points = o->positions != NULL || (o->snapshot != NULL && !o->amr);
  for (int k = 0; k < N_GIVEN && !o->amr; ++k)
    if (given[k] && (k < GRID_ONLY) == o->points) {
      if (o->points)
        fail("%s applies to a grid (--input), not to particles (%s)", mode_option[k],
             o->snapshot ? "--snapshot" : "--points");
      else
        fail("%s applies to particles (--points), not to a grid (--input)", mode_option[k]);
      return 1;
    }
  if (check_snapshot(o, given, st))
    return 1;
  if (o->input && (!o->output || !given[GIVEN_DIMS] || !st->have_type)) {
    fail("--input, --output, --dims and --type are required (see phew --help)");
    return 1;
  }
  /* every label is a cell id or smaller, or -1 */
  int64_t cells = 0;
  if (o->labels_int32 && (phew_checked_product(o->dims, 3, &cells) != 0 || cells > INT32_MAX)) {
    fail("--labels int32: the grid has %lld x %lld x %lld cells, more than int32 ids can name; leave --labels out "
         "(int64)",
         (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2]);
    return 1;
  }
  if (o->positions && (!o->output || !given[GIVEN_BOX] || !st->have_type)) {
    fail("--points, --output, --box and --type are required (see phew --help)");
    return 1;
  }
  return 0;
}

/* 1 (after fail) if option a lacks the k values it needs (left remain). */
static int lacks_values(const char *a, int left, int k)
{
  if (left >= k)
    return 0;
  fail("%s needs %d value(s)", a, k);
  return 1;
}

/* Each group reads the option argv[*i] if it is one of its own, moving *i past its values:
 * 0 if taken, 1 after fail, -1 if not its option. */
static int file_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  (void)st;
  const char *a = argv[*i];
  const char **target = !strcmp(a, "--input")        ? &o->input
                        : !strcmp(a, "--points")     ? &o->positions
                        : !strcmp(a, "--snapshot")   ? &o->snapshot
                        : !strcmp(a, "--output")     ? &o->output
                        : !strcmp(a, "--masses")     ? &o->masses
                        : !strcmp(a, "--velocities") ? &o->velocities
                        : !strcmp(a, "--ids")        ? &o->ids
                        : !strcmp(a, "--density")    ? &o->density
                        : !strcmp(a, "--hdf5")       ? &o->hdf5
                                                     : NULL;
  if (!target)
    return -1;
  if (lacks_values(a, left, 1))
    return 1;
  *target = argv[++*i];
  return 0;
}

/* --format, --particle-type, --family, --units: how --snapshot is read. */
static int snapshot_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  const char *a = argv[*i];
  if (!strcmp(a, "--amr-particles")) {
    o->amr_particles = 1;
    st->snapshot_options = 1;
    return 0;
  }
  if (strcmp(a, "--format") && strcmp(a, "--particle-type") && strcmp(a, "--family") && strcmp(a, "--units") &&
      strcmp(a, "--amr-variable"))
    return -1;
  st->snapshot_options = 1;
  if (lacks_values(a, left, 1))
    return 1;
  const char *v = argv[++*i];
  if (!strcmp(a, "--amr-variable")) {
    o->amr_variable = v;
    return 0;
  }
  if (!strcmp(a, "--particle-type"))
    return option_int(a, v, 0, &o->read.particle_type) != 0;
  if (!strcmp(a, "--family")) {
    o->read.family = v;
    return 0;
  }
  if (!strcmp(a, "--format")) {
    if (!strcmp(v, "ramses") || !strcmp(v, "gadget-hdf5")) {
      o->read.format = !strcmp(v, "ramses") ? PHEW_FORMAT_RAMSES : PHEW_FORMAT_GADGET_HDF5;
      return 0;
    }
    fail("--format must be ramses or gadget-hdf5 (got '%s')", v);
    return 1;
  }
  if (!strcmp(v, "code") || !strcmp(v, "astro")) {
    o->read.units = !strcmp(v, "code") ? PHEW_UNITS_CODE : PHEW_UNITS_ASTRO;
    return 0;
  }
  fail("--units must be code or astro (got '%s')", v);
  return 1;
}

static int dims_option(char **argv, int *i, options *o)
{
  for (int d = 0; d < 3; ++d) {
    const int r = parse_int64(argv[++*i], &o->dims[d]);
    if (r < 0) {
      fail("--dims value '%s' is out of range (at most %lld)", argv[*i], (long long)INT64_MAX);
      return 1;
    }
    if (r == 0 || o->dims[d] < 1) {
      fail("--dims needs three positive integers (got '%s')", argv[*i]);
      return 1;
    }
  }
  return 0;
}

static int grid_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  const char *a = argv[*i];
  if (!strcmp(a, "--dims"))
    return lacks_values(a, left, 3) || dims_option(argv, i, o);
  if (!strcmp(a, "--type")) {
    if (lacks_values(a, left, 1))
      return 1;
    const char *t = argv[++*i];
    if (!strcmp(t, "float32"))
      o->type = PHEW_FLOAT32;
    else if (!strcmp(t, "float64"))
      o->type = PHEW_FLOAT64;
    else {
      fail("--type must be float32 or float64 (got '%s')", t);
      return 1;
    }
    st->have_type = 1;
    return 0;
  }
  if (!strcmp(a, "--labels")) {
    if (lacks_values(a, left, 1))
      return 1;
    const char *t = argv[++*i];
    if (strcmp(t, "int32") && strcmp(t, "int64")) {
      fail("--labels must be int64 or int32 (got '%s')", t);
      return 1;
    }
    o->labels_int32 = !strcmp(t, "int32");
    return 0;
  }
  if (!strcmp(a, "--spacing") || !strcmp(a, "--origin")) {
    if (lacks_values(a, left, 3))
      return 1;
    double *target = !strcmp(a, "--spacing") ? o->spacing : o->origin;
    for (int d = 0; d < 3; ++d)
      if (option_double(a, argv[++*i], &target[d], "three finite numbers") != 0)
        return 1;
    return 0;
  }
  if (!strcmp(a, "--box")) {
    if (left >= 1 && !strcmp(argv[*i + 1], "auto")) {
      o->box_from_bounds = 1;
      ++*i;
      return 0;
    }
    if (lacks_values(a, left, 3))
      return 1;
    for (int d = 0; d < 3; ++d) {
      if (option_double(a, argv[++*i], &o->box[d], "three positive numbers") != 0)
        return 1;
      if (!(o->box[d] > 0.0)) {
        fail("--box needs three positive numbers (got '%s')", argv[*i]);
        return 1;
      }
    }
    return 0;
  }
  return -1;
}

static int phew_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  (void)st;
  const char *a = argv[*i];
  if (!strcmp(a, "--threshold") || !strcmp(a, "--saddle")) {
    if (lacks_values(a, left, 1))
      return 1;
    double v = PHEW_THRESHOLD_AUTOMATIC;
    if (strcmp(argv[++*i], "auto") != 0) {
      /* negative numbers mean "automatic" to the core: here only "auto" says it */
      if (option_double(a, argv[*i], &v, "a number >= 0 or auto") != 0)
        return 1;
      if (v < 0.0) {
        fail("%s needs a number >= 0 or auto (got '%s')", a, argv[*i]);
        return 1;
      }
    }
    if (!strcmp(a, "--threshold")) {
      o->params.density_threshold = v;
    } else {
      o->params.saddle_merging = 1;
      o->params.saddle_threshold = v;
    }
    return 0;
  }
  if (!strcmp(a, "--relevance") || !strcmp(a, "--mass-threshold")) {
    if (lacks_values(a, left, 1))
      return 1;
    double *target = !strcmp(a, "--relevance") ? &o->params.relevance_threshold : &o->params.mass_threshold;
    return option_double(a, argv[++*i], target, "a finite number") != 0;
  }
  if (!strcmp(a, "--neighbours") || !strcmp(a, "--density-neighbours") || !strcmp(a, "--threads")) {
    if (lacks_values(a, left, 1))
      return 1;
    int *target = !strcmp(a, "--neighbours")           ? &o->n_neighbours
                  : !strcmp(a, "--density-neighbours") ? &o->n_density_neighbours
                                                       : &o->n_threads;
    return option_int(a, argv[++*i], target == &o->n_threads ? 0 : 1, target) != 0;
  }
  return -1;
}

/* A positive number into *target. */
static int positive_option(const char *a, const char *text, double *target)
{
  if (option_double(a, text, target, "a positive number") != 0)
    return 1;
  if (!(*target > 0.0)) {
    fail("%s needs a positive number (got '%s')", a, text);
    return 1;
  }
  return 0;
}

static int halo_finder_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  const char *a = argv[*i];
  const int finder = !strcmp(a, "--finder"),
            linking = !strcmp(a, "--linking-length") || !strcmp(a, "--linking-absolute");
  const int min_members = !strcmp(a, "--min-members");
  double *factor = !strcmp(a, "--outer")           ? &o->hop.outer
                   : !strcmp(a, "--saddle-factor") ? &o->hop.saddle_factor
                   : !strcmp(a, "--peak-factor")   ? &o->hop.peak_factor
                                                   : NULL;
  int *count = !strcmp(a, "--hop-neighbours")     ? &o->hop.n_hop
               : !strcmp(a, "--merge-neighbours") ? &o->hop.n_merge
                                                  : NULL;
  if (!finder && !linking && !min_members && !factor && !count)
    return -1;
  if (lacks_values(a, left, 1))
    return 1;
  const char *v = argv[++*i];
  if (finder) {
    for (int f = FINDER_PHEW; f <= FINDER_HOP; ++f)
      if (!strcmp(v, finder_name[f])) {
        o->finder = f;
        return 0;
      }
    fail("--finder must be phew, fof or hop (got '%s')", v);
    return 1;
  }
  if (linking) {
    o->fof.absolute = !strcmp(a, "--linking-absolute");
    return positive_option(a, v, &o->fof.linking_length);
  }
  if (min_members) {
    if (parse_int64(v, &st->min_members) != 1 || st->min_members < 1) {
      fail("--min-members needs an integer of at least 1 (got '%s')", v);
      return 1;
    }
    return 0;
  }
  if (factor)
    return positive_option(a, v, factor);
  return option_int(a, v, count == &o->hop.n_hop ? 1 : 0, count) != 0;
}

/* What the physics options set beyond o (checked after the loop). */
typedef struct physics_given {
  int any;        /* a physics option other than --no-physics */
  int no_physics; /* --no-physics */
  int finder;     /* --finder */
} physics_given;

static physics_given physics_seen;

/* --cosmology H0 OMEGA_M OMEGA_L (H0 in km/s/Mpc). */
static int cosmology_option(char **argv, int *i, options *o)
{
  double v[3];
  for (int k = 0; k < 3; ++k)
    if (option_double("--cosmology", argv[++*i], &v[k], "three numbers: H0 (km/s/Mpc), Omega_m and Omega_Lambda"))
      return 1;
  o->physics_params.cosmology.comoving = 1;
  o->physics_params.cosmology.hubble = v[0] / 100.0;
  o->physics_params.cosmology.omega_m = v[1];
  o->physics_params.cosmology.omega_lambda = v[2];
  o->cosmology_given = 1;
  return 0;
}

static int physics_option(char **argv, int *i, int left, options *o, parse_state *st)
{
  (void)st;
  const char *a = argv[*i];
  phew_physics_params *pp = &o->physics_params;
  if (!strcmp(a, "--no-physics")) {
    physics_seen.no_physics = 1;
    return 0;
  }
  int *flag = !strcmp(a, "--no-unbind")        ? &pp->unbind
              : !strcmp(a, "--keep-top-level") ? &pp->unbind_top
              : !strcmp(a, "--linear-bins")    ? &pp->log_bins
              : !strcmp(a, "--saddle-cut")     ? &pp->saddle_cut
                                               : NULL;
  if (flag) { /* each turns a default off, but --saddle-cut turns the cut on */
    physics_seen.any = 1;
    *flag = flag == &pp->saddle_cut;
    return 0;
  }
  if (!strcmp(a, "--cosmology")) /* the units of the input, also without the physics */
    return lacks_values(a, left, 3) || cosmology_option(argv, i, o);
  static const char *const valued[] = {"--potential",
                                       "--softening",
                                       "--opening-angle",
                                       "--direct-max",
                                       "--unbind-tolerance",
                                       "--unbind-iterations",
                                       "--gravitational-constant",
                                       "--scale-factor",
                                       "--groups",
                                       "--parents",
                                       "--mass-bins",
                                       "--profile-r-min",
                                       "--most-bound",
                                       "--gather-max"};
  int k = 0;
  while (k < (int)(sizeof valued / sizeof valued[0]) && strcmp(a, valued[k]))
    ++k;
  if (k == (int)(sizeof valued / sizeof valued[0]))
    return -1;
  physics_seen.any |= k != 7; /* --scale-factor goes with --cosmology */
  if (lacks_values(a, left, 1))
    return 1;
  const char *v = argv[++*i];
  double number = 0.0;
  switch (k) {
  case 0:
    if (!strcmp(v, "exact") || !strcmp(v, "spherical")) {
      pp->potential = !strcmp(v, "exact") ? PHEW_POTENTIAL_EXACT : PHEW_POTENTIAL_SPHERICAL;
      return 0;
    }
    fail("--potential must be exact or spherical (got '%s')", v);
    return 1;
  case 1:
    if (option_double(a, v, &number, "a number >= 0") != 0)
      return 1;
    if (number < 0.0) {
      fail("--softening needs a number >= 0 (got '%s')", v);
      return 1;
    }
    pp->softening = number;
    return 0;
  case 2:
    if (positive_option(a, v, &pp->opening_angle) != 0)
      return 1;
    if (pp->opening_angle > 1.0) {
      fail("--opening-angle must be at most 1 (got '%s')", v);
      return 1;
    }
    return 0;
  case 3:
    if (parse_int64(v, &pp->direct_max) != 1 || pp->direct_max < 0) {
      fail("--direct-max needs an integer >= 0 (got '%s')", v);
      return 1;
    }
    return 0;
  case 4:
    if (option_double(a, v, &pp->tolerance, "a number >= 0") != 0)
      return 1;
    if (pp->tolerance < 0.0) {
      fail("--unbind-tolerance needs a number >= 0 (got '%s')", v);
      return 1;
    }
    return 0;
  case 5: return option_int(a, v, 1, &pp->max_iterations) != 0;
  case 6: o->gravitational_constant_given = 1; return positive_option(a, v, &pp->gravitational_constant);
  case 7: o->scale_factor_given = 1; return positive_option(a, v, &pp->cosmology.scale_factor);
  case 8: o->groups = v; return 0;
  case 9: o->parents = v; return 0;
  case 10: return option_int(a, v, 1, &pp->n_mass_bins) != 0;
  case 11: return positive_option(a, v, &pp->profile_r_min);
  case 12:
    if (parse_int64(v, &pp->n_most_bound) != 1 || pp->n_most_bound < 0) {
      fail("--most-bound needs an integer >= 0 (got '%s')", v);
      return 1;
    }
    return 0;
  default:
    if (parse_int64(v, &pp->gather_max) != 1 || pp->gather_max < 0) {
      fail("--gather-max needs an integer >= 0 (got '%s')", v);
      return 1;
    }
    return 0;
  }
}

/* After the loop: whether the physics runs, and its options' rules. 0 or 1 after fail. */
static int check_physics(options *o, const int *given, const int *finder_given)
{
  const int velocities = given[GIVEN_VELOCITIES] || o->snapshot;
  const int physical_units = !o->snapshot || o->read.units == PHEW_UNITS_ASTRO || o->gravitational_constant_given;
  const int particles = o->points || o->amr_particles;
  if ((physics_seen.any || o->groups || o->cosmology_given) && !particles) {
    fail("the physics of structures (--groups, --no-unbind, --potential, ...) applies to particles (--points, "
         "--snapshot, --amr-particles)");
    return 1;
  }
  if (o->amr_particles && (physics_seen.no_physics || !physical_units)) {
    fail(physics_seen.no_physics ? "--amr-particles runs the physics of structures on the particles: leave out "
                                   "--no-physics"
                                 : "--amr-particles needs the physics' units: --units astro, or "
                                   "--gravitational-constant");
    return 1;
  }
  if (physics_seen.no_physics && (physics_seen.any || o->groups)) {
    fail("--no-physics turns the physics of structures off: leave out its options (--groups, --potential, ...)");
    return 1;
  }
  if (o->parents && !o->groups) {
    fail("--parents gives the hierarchy of --groups: give --groups too");
    return 1;
  }
  if (o->groups) {
    for (int k = 0; k < N_FINDER_GIVEN; ++k)
      if (finder_given[k]) {
        fail("--groups runs the physics on a given grouping: no finder runs, so %s does not apply",
             finder_option[k].name);
        return 1;
      }
    if (physics_seen.finder) {
      fail("--groups and --finder cannot be used together: --groups is the grouping");
      return 1;
    }
    if (!velocities || !physical_units) {
      fail(!velocities ? "--groups needs the particles' velocities (--velocities)"
                       : "--groups on a snapshot in code units needs --gravitational-constant, or --units astro");
      return 1;
    }
    o->finder = FINDER_GIVEN;
  }
  if (o->cosmology_given && o->snapshot) {
    fail("--cosmology applies to raw particles (--points): a snapshot gives its own cosmology");
    return 1;
  }
  if (o->scale_factor_given && !o->cosmology_given && !o->snapshot) {
    fail("--scale-factor needs --cosmology");
    return 1;
  }
  if (o->cosmology_given && o->gravitational_constant_given) {
    fail("--gravitational-constant is for data without a cosmology: with --cosmology G is known");
    return 1;
  }
  o->physics = particles && !physics_seen.no_physics && velocities && physical_units;
  if (physics_seen.any && !o->physics) {
    fail(!velocities ? "the physics options need the particles' velocities (--velocities)"
                     : "the physics of a snapshot in code units needs --gravitational-constant, or --units astro");
    return 1;
  }
  return 0;
}

int parse_options(int argc, char **argv, options *o)
{
  memset(o, 0, sizeof *o);
  phew_params_init(&o->params);
  for (int d = 0; d < 3; ++d)
    o->spacing[d] = 1.0;
  o->n_neighbours = 16;
  o->n_density_neighbours = 64;
  phew_fof_params_init(&o->fof);
  phew_hop_params_init(&o->hop);
  phew_read_options_init(&o->read);
  phew_physics_params_init(&o->physics_params);
  memset(&physics_seen, 0, sizeof physics_seen);
  parse_state st = {0, 0, 0};
  int given[N_GIVEN] = {0}, finder_given[N_FINDER_GIVEN] = {0};
  static int (*const groups[])(char **, int *, int, options *, parse_state *) = {file_option,     grid_option,
                                                                                 phew_option,     halo_finder_option,
                                                                                 snapshot_option, physics_option};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int slot = mode_slot(a), finder_option_slot = finder_slot(a);
    if (slot >= 0)
      given[slot] = 1;
    if (finder_option_slot >= 0)
      finder_given[finder_option_slot] = 1;
    if (!strcmp(a, "--finder"))
      physics_seen.finder = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 2;
    if (!strcmp(a, "--periodic")) {
      o->periodic = 1;
      continue;
    }
    if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
      continue;
    }
    int taken = -1;
    for (size_t g = 0; taken < 0 && g < sizeof groups / sizeof groups[0]; ++g)
      taken = groups[g](argv, &i, argc - i - 1, o, &st);
    if (taken < 0)
      fail("unknown option '%s' (see phew --help)", a);
    if (taken != 0)
      return 1;
  }
  if (finder_given[GIVEN_MIN_MEMBERS])
    o->fof.min_members = o->hop.min_members = st.min_members;
  return check_mode(o, given, &st) || check_physics(o, given, finder_given) || check_finder(o, finder_given);
}
