/* RAMSES particles: rank r reads the CPU files of its share, [r*ncpu/size, (r+1)*ncpu/size)
 * (shares.h), and keeps the particles of the chosen family, in file order.
 *
 * A part_NNNNN.outCCCCC file holds 8 header records (ncpu, ndim, npart, localseed,
 * nstar_tot, mstar_tot, mstar_lost, nsink), then one record per field of npart values, in
 * the order of part_file_descriptor.txt (or the classic order, ramses_part_layout.c). Two
 * passes: the first walks each file's records and chooses its particles (the family
 * record, or ids and birth times in outputs without one), the second reads each field's
 * record into one scratch buffer and copies the chosen values out, so a rank holds its
 * particles plus one record. */
#include "fortran_records.h"
#include "particle_arrays.h"
#include "ramses_part_layout.h"
#include "shares.h"
#include "values.h"

#include <stdlib.h>
#include <string.h>

/* One CPU file, as the first pass found it. */
typedef struct part_file {
  char path[1400];
  int64_t npart;
  int n_records;
  int64_t offset[PART_MAX_FIELDS], length[PART_MAX_FIELDS]; /* of the data records */
  part_layout layout;                                       /* the descriptor's, or this file's classic layout */
  unsigned char *keep;                                      /* npart flags: of the chosen family */
  int64_t n_kept;
} part_file;

typedef struct part_reader {
  const ramses_info *info;
  int family;
  part_file *files;
  int n_files;
  void *scratch; /* one record of the largest file */
  int64_t scratch_bytes;
} part_reader;

/* The header: ncpu and ndim as the info file says, npart >= 0; then the data records. */
static int walk_file(const part_reader *r, fortran_file *f, part_file *p, read_error *e)
{
  int32_t header[3];
  static const char *what[3] = {"ncpu", "ndim", "npart"};
  for (int k = 0; k < 3; ++k)
    if (fortran_read(f, &header[k], 1, 4, what[k], e) != 0)
      return -1;
  if (header[0] != r->info->ncpu || header[1] != 3 || header[2] < 0)
    return read_fail(e, PHEW_ERROR_DATA, "%s: ncpu %d, ndim %d, npart %d where %s says ncpu %d and ndim 3", p->path,
                     header[0], header[1], header[2], r->info->info_path, r->info->ncpu);
  p->npart = header[2];
  for (int k = 0; k < 5; ++k)
    if (fortran_skip(f, e) != 0)
      return -1;
  for (p->n_records = 0; fortran_tell(f) < f->size; ++p->n_records) {
    if (p->n_records == PART_MAX_FIELDS)
      return read_fail(e, PHEW_ERROR_IO, "%s holds more than %d particle fields", p->path, PART_MAX_FIELDS);
    p->offset[p->n_records] = fortran_tell(f);
    if (fortran_peek(f, &p->length[p->n_records], e) != 0 || fortran_skip(f, e) != 0)
      return -1;
  }
  return 0;
}

/* The file's records against the descriptor (or the classic layout from their sizes). */
static int check_layout(const part_layout *descriptor, part_file *p, read_error *e)
{
  if (!descriptor->from_descriptor) {
    if (p->npart == 0) {
      memset(&p->layout, 0, sizeof p->layout);
      return 0;
    }
    return part_layout_classic(p->length, p->n_records, p->npart, p->path, &p->layout, e);
  }
  p->layout = *descriptor;
  if (p->n_records != descriptor->n_fields)
    return read_fail(e, PHEW_ERROR_IO, "%s holds %d particle fields where part_file_descriptor.txt lists %d", p->path,
                     p->n_records, descriptor->n_fields);
  for (int k = 0; k < p->n_records; ++k)
    if (p->length[k] != p->npart * (int64_t)value_type_size(descriptor->fields[k].type))
      return read_fail(e, PHEW_ERROR_IO,
                       "%s: the record of field %s at byte offset %lld holds %lld bytes, not %lld values of %d bytes",
                       p->path, descriptor->fields[k].name, (long long)p->offset[k], (long long)p->length[k],
                       (long long)p->npart, (int)value_type_size(descriptor->fields[k].type));
  return 0;
}

/* Reads data record k of p (open in f) and converts it to type into out (npart values). */
static int read_field(part_reader *r, fortran_file *f, const part_file *p, int k, phew_value_type type, void *out,
                      read_error *e)
{
  const phew_value_type from = p->layout.fields[k].type;
  if (fortran_seek(f, p->offset[k], 9 + k, e) != 0 ||
      fortran_read(f, r->scratch, p->npart, value_type_size(from), p->layout.fields[k].name, e) != 0)
    return -1;
  copy_kept(r->scratch, from, NULL, p->npart, out, type, 0, 1, 0);
  return 0;
}

/* Outputs without a family field: dark matter has id > 0 and no birth time (0), stars a
 * birth time; other families cannot be told apart there. */
static int choose_classic(part_reader *r, fortran_file *f, part_file *p, read_error *e)
{
  const int id = part_layout_find(&p->layout, "identity"), birth = part_layout_find(&p->layout, "birth_time");
  if ((r->family != 1 && r->family != 2) || (r->family == 2 && birth < 0))
    return read_fail(e, PHEW_ERROR_ARGUMENT,
                     "%s has no family field: only dark matter%s can be told apart there, not family %s", p->path,
                     birth < 0 ? "" : " and stars", ramses_family_name(r->family));
  int64_t *ids = malloc((size_t)p->npart * sizeof *ids);
  double *born = birth >= 0 ? malloc((size_t)p->npart * sizeof *born) : NULL;
  if (!ids || (birth >= 0 && !born))
    read_fail_memory(e, "the particle ids", (double)p->npart * 16.0);
  else if (read_field(r, f, p, id, PHEW_VALUE_INT64, ids, e) == 0 &&
           (birth < 0 || read_field(r, f, p, birth, PHEW_VALUE_FLOAT64, born, e) == 0))
    for (int64_t i = 0; i < p->npart; ++i)
      p->keep[i] = ids[i] > 0 && (born ? (born[i] != 0.0) == (r->family == 2) : 1);
  free(ids);
  free(born);
  return e->status == PHEW_OK ? 0 : -1;
}

/* keep[i]: particle i is of the chosen family. */
static int choose(part_reader *r, fortran_file *f, part_file *p, read_error *e)
{
  p->keep = malloc(p->npart > 0 ? (size_t)p->npart : 1);
  if (!p->keep)
    return read_fail_memory(e, "the particle flags", (double)p->npart);
  if (p->npart == 0)
    return 0;
  const int family = part_layout_find(&p->layout, "family");
  if (family < 0 && choose_classic(r, f, p, e) != 0)
    return -1;
  if (family >= 0) {
    if (read_field(r, f, p, family, PHEW_VALUE_INT8, p->keep, e) != 0)
      return -1;
    for (int64_t i = 0; i < p->npart; ++i)
      p->keep[i] = (int8_t)p->keep[i] == r->family;
  }
  for (int64_t i = 0; i < p->npart; ++i)
    p->n_kept += p->keep[i];
  return 0;
}

/* The first pass over one file: its records, its layout, its chosen particles. */
static int first_pass(part_reader *r, const part_layout *descriptor, int cpu, part_file *p, read_error *e)
{
  if (ramses_file_name(r->info, "part", cpu, p->path, sizeof p->path) != 0)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "the path of %s is too long", r->info->folder);
  fortran_file f;
  if (fortran_open(&f, p->path, e) != 0)
    return -1;
  int ok = walk_file(r, &f, p, e) == 0 && check_layout(descriptor, p, e) == 0;
  for (int k = 0; ok && k < p->n_records; ++k)
    if (p->length[k] > r->scratch_bytes) {
      void *grown = realloc(r->scratch, (size_t)p->length[k]);
      ok = grown != NULL;
      if (!ok)
        read_fail_memory(e, "one particle record", (double)p->length[k]);
      else
        r->scratch = grown, r->scratch_bytes = p->length[k];
    }
  ok = ok && choose(r, &f, p, e) == 0;
  fortran_close(&f);
  return ok ? 0 : -1;
}

static const struct {
  const char *name;
  int array; /* 0 position, 1 velocity, 2 mass, 3 id */
  int component;
} roles[] = {{"position_x", 0, 0}, {"position_y", 0, 1}, {"position_z", 0, 2}, {"velocity_x", 1, 0},
             {"velocity_y", 1, 1}, {"velocity_z", 1, 2}, {"mass", 2, 0},       {"identity", 3, 0}};
enum { N_ROLES = sizeof roles / sizeof roles[0] };

static int role_of(const char *name)
{
  for (int k = 0; k < N_ROLES; ++k)
    if (strcmp(name, roles[k].name) == 0)
      return k;
  return -1;
}

/* Where field `name` goes in the set: array, type, stride and component; NULL: nowhere. */
static void *destination(phew_particle_set *set, const char *name, phew_value_type *type, int *stride, int *component)
{
  const int k = role_of(name);
  if (k < 0) {
    for (int f = 0; f < set->n_fields; ++f)
      if (strcmp(set->fields[f].name, name) == 0) {
        *type = set->fields[f].type, *stride = 1, *component = 0;
        return set->fields[f].values;
      }
    return NULL;
  }
  void *arrays[4] = {set->position, set->velocity, set->mass, set->id};
  *type = roles[k].array == 3 ? PHEW_VALUE_INT64 : scalar_value_type(set->type);
  *stride = roles[k].array < 2 ? 3 : 1;
  *component = roles[k].component;
  return arrays[roles[k].array];
}

/* The second pass over one file: each field's record, its chosen values copied out at `at`. */
static int second_pass(part_reader *r, const part_file *p, phew_particle_set *set, int64_t at, read_error *e)
{
  fortran_file f;
  if (fortran_open(&f, p->path, e) != 0)
    return -1;
  for (int k = 0; k < p->layout.n_fields && e->status == PHEW_OK; ++k) {
    phew_value_type to;
    int stride, component;
    void *out = destination(set, p->layout.fields[k].name, &to, &stride, &component);
    const phew_value_type from = p->layout.fields[k].type;
    if (out && fortran_seek(&f, p->offset[k], 9 + k, e) == 0 &&
        fortran_read(&f, r->scratch, p->npart, value_type_size(from), p->layout.fields[k].name, e) == 0)
      copy_kept(r->scratch, from, p->keep, p->npart, out, to, at, stride, component);
  }
  fortran_close(&f);
  return e->status == PHEW_OK ? 0 : -1;
}

/* The layout every file with particles shares (the descriptor's, or the first file's
 * classic one, which the others must repeat); NULL when no file holds a particle. */
static const part_layout *common_layout(const part_reader *r, read_error *e)
{
  const part_layout *common = NULL;
  for (int k = 0; k < r->n_files; ++k) {
    const part_file *p = &r->files[k];
    if (p->npart == 0)
      continue;
    if (!common)
      common = &p->layout;
    else if (memcmp(common, &p->layout, sizeof *common) != 0) {
      read_fail(e, PHEW_ERROR_IO, "%s holds other particle fields than %s", p->path, r->files[0].path);
      return NULL;
    }
  }
  return common;
}

/* The set's arrays: position, mass and id always, velocity if the files have it, and with
 * all_fields the other fields. Float64 unless every float field is float32. */
static int allocate_set(const part_layout *layout, int all_fields, int64_t n, phew_particle_set *set, read_error *e)
{
  int has_velocity = 0, any_double = layout == NULL;
  for (int k = 0; layout && k < layout->n_fields; ++k) {
    const int role = role_of(layout->fields[k].name);
    has_velocity |= role >= 3 && role <= 5;
    any_double |= role >= 0 && role < 7 && layout->fields[k].type == PHEW_VALUE_FLOAT64;
  }
  for (int k = 0; layout && k < N_ROLES; ++k)
    if (part_layout_find(layout, roles[k].name) < 0 && (k < 3 || k >= 6))
      return read_fail(e, PHEW_ERROR_IO, "the particle files have no field %s", roles[k].name);
  if (particle_arrays_allocate(set, n, any_double ? PHEW_FLOAT64 : PHEW_FLOAT32, has_velocity, e) != 0)
    return -1;
  for (int k = 0; all_fields && layout && k < layout->n_fields; ++k)
    if (role_of(layout->fields[k].name) < 0 &&
        !particle_arrays_add_field(set, layout->fields[k].name, 1, layout->fields[k].type, e))
      return -1;
  return 0;
}

static void reader_free(part_reader *r)
{
  for (int k = 0; k < r->n_files; ++k)
    free(r->files[k].keep);
  free(r->files);
  free(r->scratch);
}

int ramses_read_particles(const ramses_info *info, const phew_read_options *options, int rank, int size,
                          phew_particle_set *set, read_error *e)
{
  part_reader r = {info, ramses_family_number(options->family ? options->family : "DM"), NULL, 0, NULL, 0};
  if (r.family == -1000)
    return read_fail(e, PHEW_ERROR_ARGUMENT,
                     "unknown RAMSES particle family \"%s\": DM, star, cloud, debris, other, undefined, gas_tracer, "
                     "DM_tracer, star_tracer, cloud_tracer, debris_tracer, other_tracer, or a number",
                     options->family);
  part_layout descriptor;
  if (part_layout_read_descriptor(info, &descriptor, e) != 0)
    return -1;
  int64_t first_cpu, n_cpus;
  share_of(info->ncpu, rank, size, &first_cpu, &n_cpus);
  r.files = calloc(n_cpus > 0 ? (size_t)n_cpus : 1, sizeof *r.files);
  if (!r.files)
    return read_fail_memory(e, "the list of particle files", (double)n_cpus * (double)sizeof *r.files);
  r.n_files = (int)n_cpus;
  int64_t n = 0;
  for (int k = 0; k < r.n_files && e->status == PHEW_OK; ++k)
    if (first_pass(&r, &descriptor, (int)first_cpu + k + 1, &r.files[k], e) == 0)
      n += r.files[k].n_kept;
  const part_layout *layout = e->status == PHEW_OK ? common_layout(&r, e) : NULL;
  if (e->status == PHEW_OK)
    allocate_set(descriptor.from_descriptor ? &descriptor : layout, options->all_fields, n, set, e);
  for (int64_t k = 0, at = 0; k < r.n_files && e->status == PHEW_OK; at += r.files[k++].n_kept)
    if (r.files[k].n_kept > 0)
      second_pass(&r, &r.files[k], set, at, e);
  reader_free(&r);
  return e->status == PHEW_OK ? 0 : -1;
}
