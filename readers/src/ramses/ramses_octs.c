/* A CPU file's own octs from amr_NNNNN.outCCCCC and their cells' hydro variables from
 * hydro_NNNNN.outCCCCC (ramses_octs.h).
 *
 * The amr file: a header (ncpu, ndim, nx ny nz, nlevelmax, ngridmax, nboundary,
 * ngrid_current, boxlen, noutput iout ifout, tout, aout, t, dtold, dtnew, nstep, three
 * energies, the cosmology, aexp and friends, mass_sph, headl, taill, numbl(ncpu, nlevelmax),
 * numbtot, with boundaries headb, tailb, numbb, then the free list, the ordering's name and
 * its domain records, and the coarse cells' son, flag1 and cpu_map), then per level and per
 * domain (the ncpu CPUs, then the boundaries) numbl or numbb grids of 37 records each:
 * ind_grid, next, prev, xg (3), father, nbor (6), son (8), cpu_map (8), flag1 (8). A CPU file
 * holds its own grids (domain = the CPU) and copies of its neighbours'; only its own are read.
 * The hydro file: ncpu, nvar, ndim, nlevelmax, nboundary, gamma, then per level and domain a
 * record ilevel, a record ncache, and ncache values for each cell (8) and variable (nvar). */
#include "fortran_records.h"
#include "paths.h"
#include "ramses_octs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct amr_header {
  int32_t ncpu, nlevelmax, nboundary;
  int32_t *numbl; /* numbl(icpu, ilevel) at [(ilevel - 1) * ncpu + icpu - 1] */
  int32_t *numbb; /* numbb(ibound, ilevel) likewise, nboundary per level */
} amr_header;

static int read_ints(fortran_file *f, int32_t *values, int64_t n, const char *what, read_error *e)
{
  return fortran_read(f, values, n, sizeof *values, what, e);
}

static int skip(fortran_file *f, int n, read_error *e)
{
  for (int k = 0; k < n; ++k)
    if (fortran_skip(f, e) != 0)
      return -1;
  return 0;
}

/* The first seven records, checked against the info file. */
static int read_sizes(const ramses_info *info, fortran_file *f, amr_header *h, read_error *e)
{
  int32_t ncpu, ndim, nx[3], ngridmax, ngrid;
  if (read_ints(f, &ncpu, 1, "ncpu", e) || read_ints(f, &ndim, 1, "ndim", e) || read_ints(f, nx, 3, "nx", e) ||
      read_ints(f, &h->nlevelmax, 1, "nlevelmax", e) || read_ints(f, &ngridmax, 1, "ngridmax", e) ||
      read_ints(f, &h->nboundary, 1, "nboundary", e) || read_ints(f, &ngrid, 1, "ngrid_current", e))
    return -1;
  h->ncpu = ncpu;
  if (ncpu != info->ncpu || ndim != 3 || h->nlevelmax < info->levelmax || h->nboundary < 0)
    return read_fail(e, PHEW_ERROR_DATA, "%s: ncpu %d, ndim %d, nlevelmax %d do not match %s", f->path, ncpu, ndim,
                     h->nlevelmax, info->info_path);
  if (nx[0] != 1 || nx[1] != 1 || nx[2] != 1)
    return read_fail(e, PHEW_ERROR_DATA, "%s: a coarse grid of %d x %d x %d cells; only nx = ny = nz = 1 is read",
                     f->path, nx[0], nx[1], nx[2]);
  return 0;
}

/* The header up to the first level's grids; numbl and numbb kept. */
static int read_header(const ramses_info *info, fortran_file *f, amr_header *h, read_error *e)
{
  int32_t nout[3];
  if (read_sizes(info, f, h, e) != 0 || skip(f, 1, e) || read_ints(f, nout, 3, "noutput", e) || skip(f, 10, e))
    return -1;
  const int64_t n_cpu_levels = (int64_t)h->ncpu * h->nlevelmax, n_bound_levels = (int64_t)h->nboundary * h->nlevelmax;
  h->numbl = malloc((size_t)n_cpu_levels * sizeof *h->numbl);
  h->numbb = malloc((size_t)(n_bound_levels > 0 ? n_bound_levels : 1) * sizeof *h->numbb);
  if (!h->numbl || !h->numbb)
    return read_fail_memory(e, "the grid counts", (double)(n_cpu_levels + n_bound_levels) * 4.0);
  if (skip(f, 2, e) || read_ints(f, h->numbl, n_cpu_levels, "numbl", e) || skip(f, 1, e))
    return -1;
  if (h->nboundary > 0 && (skip(f, 2, e) || read_ints(f, h->numbb, n_bound_levels, "numbb", e)))
    return -1;
  char ordering[129];
  if (skip(f, 1, e) || fortran_read_text(f, ordering, sizeof ordering, e))
    return -1;
  /* the domain decomposition: 5 records for bisection, else the Hilbert keys' bounds */
  return skip(f, (strncmp(ordering, "bisection", 9) == 0 ? 5 : 1) + 3, e);
}

static int64_t grids_of(const amr_header *h, int ilevel, int ibound)
{
  return ibound <= h->ncpu ? h->numbl[(int64_t)(ilevel - 1) * h->ncpu + ibound - 1]
                           : h->numbb[(int64_t)(ilevel - 1) * h->nboundary + ibound - h->ncpu - 1];
}

/* The own grids of one level: their centres xg into oct indices. */
static int read_positions(fortran_file *f, int ilevel, oct_level *level, read_error *e)
{
  const int64_t n = level->n;
  double *xg = malloc((size_t)n * sizeof *xg);
  level->ijk = malloc((size_t)(3 * n) * sizeof *level->ijk);
  if (!xg || !level->ijk) {
    free(xg);
    return read_fail_memory(e, "the grids' positions", (double)n * 32.0);
  }
  const double scale = ldexp(1.0, ilevel - 1); /* octs per box length on this level */
  int ok = skip(f, 3, e) == 0;                 /* ind_grid, next, prev */
  for (int d = 0; ok && d < 3; ++d) {
    ok = fortran_read(f, xg, n, sizeof *xg, "xg", e) == 0;
    for (int64_t k = 0; ok && k < n; ++k)
      level->ijk[3 * k + d] = (int64_t)floor(xg[k] * scale); /* the centre is at index + 1/2 */
  }
  free(xg);
  return ok && skip(f, 1 + 6 + 8 + 8 + 8, e) == 0 ? 0 : -1; /* father, nbor, son, cpu_map, flag1 */
}

/* The amr file: every level's own grids (levels below levelmin skipped). */
static int read_amr(const ramses_info *info, const char *path, int cpu, cpu_octs *octs, amr_header *h, read_error *e)
{
  fortran_file f;
  if (fortran_open(&f, path, e) != 0)
    return -1;
  int ok = read_header(info, &f, h, e) == 0;
  for (int ilevel = 1; ok && ilevel <= h->nlevelmax; ++ilevel)
    for (int ibound = 1; ok && ibound <= h->ncpu + h->nboundary; ++ibound) {
      const int64_t n = grids_of(h, ilevel, ibound);
      if (n <= 0)
        continue;
      if (ibound != cpu || ilevel < info->levelmin || ilevel > info->levelmax) {
        ok = skip(&f, 37, e) == 0;
        continue;
      }
      oct_level *level = &octs->levels[ilevel - info->levelmin];
      level->n = n;
      ok = read_positions(&f, ilevel, level, e) == 0;
    }
  fortran_close(&f);
  return ok ? 0 : -1;
}

/* The hydro file's header, checked against the amr file's. */
static int hydro_header(fortran_file *f, const amr_header *h, int32_t *nvar, read_error *e)
{
  int32_t ncpu, ndim, nlevelmax, nboundary;
  if (read_ints(f, &ncpu, 1, "ncpu", e) || read_ints(f, nvar, 1, "nvar", e) || read_ints(f, &ndim, 1, "ndim", e) ||
      read_ints(f, &nlevelmax, 1, "nlevelmax", e) || read_ints(f, &nboundary, 1, "nboundary", e) || skip(f, 1, e))
    return -1;
  if (ncpu != h->ncpu || ndim != 3 || nlevelmax != h->nlevelmax || nboundary != h->nboundary || *nvar < 1)
    return read_fail(e, PHEW_ERROR_DATA,
                     "%s: ncpu %d, ndim %d, nlevelmax %d, nboundary %d, nvar %d do not match "
                     "its amr file",
                     f->path, ncpu, ndim, nlevelmax, nboundary, *nvar);
  return 0;
}

/* One level's own grids: the chosen variables (slot[ivar] >= 0) of its 8 cells. */
static int read_cells(fortran_file *f, oct_level *level, const int *slot, int nvar, int n_variables, read_error *e)
{
  const int64_t n = level->n;
  level->values = malloc((size_t)(n_variables > 0 ? n_variables : 1) * 8 * (size_t)n * sizeof *level->values);
  if (!level->values)
    return read_fail_memory(e, "the cells' values", (double)n_variables * 8.0 * (double)n * 8.0);
  for (int c = 0; c < 8; ++c)
    for (int v = 0; v < nvar; ++v) {
      const int ok = slot[v] < 0 ? fortran_skip(f, e) == 0
                                 : fortran_read(f, level->values + ((int64_t)slot[v] * 8 + c) * n, n, sizeof(double),
                                                "a hydro variable", e) == 0;
      if (!ok)
        return -1;
    }
  return 0;
}

static int read_hydro(const ramses_info *info, const char *path, int cpu, const int *variables, int n_variables,
                      const amr_header *h, cpu_octs *octs, read_error *e)
{
  fortran_file f;
  if (fortran_open(&f, path, e) != 0)
    return -1;
  int32_t nvar = 0;
  int ok = hydro_header(&f, h, &nvar, e) == 0;
  int *slot = ok ? malloc((size_t)nvar * sizeof *slot) : NULL;
  ok = ok && slot != NULL;
  for (int v = 0; ok && v < nvar; ++v)
    slot[v] = -1;
  for (int k = 0; ok && k < n_variables; ++k)
    if (variables[k] >= 0 && variables[k] < nvar)
      slot[variables[k]] = k;
    else
      ok = read_fail(e, PHEW_ERROR_ARGUMENT, "%s has %d variables, not variable %d", path, nvar, variables[k] + 1) == 0;
  for (int ilevel = 1; ok && ilevel <= h->nlevelmax; ++ilevel)
    for (int ibound = 1; ok && ibound <= h->ncpu + h->nboundary; ++ibound) {
      int32_t level_and_count[2];
      ok = read_ints(&f, &level_and_count[0], 1, "ilevel", e) == 0 &&
           read_ints(&f, &level_and_count[1], 1, "ncache", e) == 0;
      const int64_t n = grids_of(h, ilevel, ibound);
      if (ok && (level_and_count[0] != ilevel || level_and_count[1] != n))
        ok = read_fail(e, PHEW_ERROR_DATA, "%s: level %d, domain %d holds %d grids where its amr file has %lld", path,
                       ilevel, ibound, level_and_count[1], (long long)n) == 0;
      if (!ok || n <= 0)
        continue;
      if (ibound == cpu && ilevel >= info->levelmin && ilevel <= info->levelmax)
        ok = read_cells(&f, &octs->levels[ilevel - info->levelmin], slot, nvar, n_variables, e) == 0;
      else
        ok = skip(&f, 8 * nvar, e) == 0;
    }
  if (!slot && e->status == PHEW_OK)
    read_fail_memory(e, "the variables' slots", 0.0);
  free(slot);
  fortran_close(&f);
  return e->status == PHEW_OK ? 0 : -1;
}

int ramses_read_octs(const ramses_info *info, int cpu, const int *variables, int n_variables, cpu_octs *octs,
                     read_error *e)
{
  memset(octs, 0, sizeof *octs);
  octs->n_levels = info->levelmax - info->levelmin + 1;
  octs->levels = calloc((size_t)(octs->n_levels > 0 ? octs->n_levels : 1), sizeof *octs->levels);
  if (!octs->levels)
    return read_fail_memory(e, "the levels", (double)octs->n_levels * sizeof *octs->levels);
  char amr[1400], hydro[1400];
  if (ramses_file_name(info, "amr", cpu, amr, sizeof amr) != 0 ||
      ramses_file_name(info, "hydro", cpu, hydro, sizeof hydro) != 0)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "the path of %s is too long", info->folder);
  amr_header h = {0, 0, 0, NULL, NULL};
  int ok = read_amr(info, amr, cpu, octs, &h, e) == 0;
  if (ok && n_variables > 0)
    ok = read_hydro(info, hydro, cpu, variables, n_variables, &h, octs, e) == 0;
  free(h.numbl);
  free(h.numbb);
  return ok ? 0 : -1;
}

void cpu_octs_free(cpu_octs *octs)
{
  for (int l = 0; octs->levels && l < octs->n_levels; ++l) {
    free(octs->levels[l].ijk);
    free(octs->levels[l].values);
  }
  free(octs->levels);
  memset(octs, 0, sizeof *octs);
}

/* hydro_file_descriptor.txt: "# version: 1", then "ivar, name, type" lines (the older
 * "variable #N: name" lines too). */
static int descriptor_names(FILE *f, char (*names)[64], int capacity, int *n_names)
{
  char line[512], name[64];
  int index;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
      continue;
    if ((sscanf(line, " %d , %63[^, \t\r\n]", &index, name) == 2 ||
         sscanf(line, " variable # %d : %63s", &index, name) == 2) &&
        index == *n_names + 1 && *n_names < capacity)
      snprintf(names[(*n_names)++], 64, "%s", name);
    else
      return -1;
  }
  return 0;
}

int ramses_hydro_names(const ramses_info *info, char (*names)[64], int capacity, int *n_names, read_error *e)
{
  *n_names = 0;
  char path[1400];
  if (path_format(path, sizeof path, "%s/hydro_file_descriptor.txt", info->folder) == 0 && path_is_file(path)) {
    FILE *f = fopen(path, "r");
    if (!f)
      return read_fail_errno(e, "open", path);
    const int bad = descriptor_names(f, names, capacity, n_names);
    fclose(f);
    return bad ? read_fail(e, PHEW_ERROR_IO, "%s: a line is not \"number, name, type\" in order", path) : 0;
  }
  /* no descriptor: the classic order, as many as the first hydro file holds */
  if (ramses_file_name(info, "hydro", 1, path, sizeof path) != 0 || !path_is_file(path))
    return 0;
  fortran_file f;
  int32_t header[2];
  if (fortran_open(&f, path, e) != 0)
    return -1;
  const int ok = fortran_read(&f, &header[0], 1, 4, "ncpu", e) == 0 &&
                 fortran_read(&f, &header[1], 1, 4, "nvar", e) == 0;
  fortran_close(&f);
  static const char *classic[] = {"density", "velocity_x", "velocity_y", "velocity_z", "pressure"};
  for (int v = 0; ok && v < header[1] && v < capacity; ++v)
    if (v < 5)
      snprintf(names[(*n_names)++], 64, "%s", classic[v]);
    else
      snprintf(names[(*n_names)++], 64, "scalar_%02d", v - 4);
  return ok ? 0 : -1;
}
