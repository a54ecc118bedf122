/* read_dump: phew_read_particles on every rank, then each rank's share written out for the
 * Python tests to compare with their own readings of the files.
 *
 *   read_dump PATH OUTDIR [--format ramses|gadget-hdf5] [--units code|astro]
 *             [--particle-type N] [--family NAME] [--all-fields]
 *   read_dump PATH OUTDIR --amr [--variable NAME ...] [--units code|astro]
 *
 * With --amr, phew_read_amr instead (every hydro variable unless some are named): rank r
 * writes OUTDIR/amr<r>.txt (the levels' spacings, the variables, then one line per box:
 * level, held, rank, lo, hi) and OUTDIR/amr<r>_values.bin (its held boxes' values, in box
 * order, as the set holds them).
 *
 * Rank r writes OUTDIR/rank<r>.txt ("key value" lines: first, n, n_total, type, the fields,
 * the metadata) and OUTDIR/rank<r>_<array>.bin (position, velocity, mass, id and every field
 * as stored in the set). A failure: rank 0 prints "error: MESSAGE" on stderr, every rank
 * exits 1 (the message is the same on every rank). Started by mpiexec it runs on
 * MPI_COMM_WORLD, else on this process alone. */
#include "phew/phew_readers.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t size_of(phew_value_type type)
{
  static const size_t sizes[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
  return sizes[type];
}

static void write_array(const char *dir, int rank, const char *name, const void *values, size_t bytes)
{
  char path[2048];
  snprintf(path, sizeof path, "%s/rank%d_%s.bin", dir, rank, name);
  FILE *f = fopen(path, "wb");
  if (!f || (bytes > 0 && fwrite(values, 1, bytes, f) != bytes)) {
    fprintf(stderr, "read_dump: cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

static void write_info(FILE *f, const phew_snapshot_info *i)
{
  fprintf(f, "code %s\nformat %d\nn_files %d\ncosmological %d\n", i->code, (int)i->format, i->n_files, i->cosmological);
  fprintf(f, "time %.17g\nscale_factor %.17g\nredshift %.17g\nhubble %.17g\n", i->time, i->scale_factor, i->redshift,
          i->hubble);
  fprintf(f, "omega_matter %.17g\nomega_lambda %.17g\nomega_baryon %.17g\n", i->omega_matter, i->omega_lambda,
          i->omega_baryon);
  for (int d = 0; d < 3; ++d)
    fprintf(f, "box_origin_%d %.17g\nbox_size_%d %.17g\nperiodic_%d %d\n", d, i->box_origin[d], d, i->box_size[d], d,
            i->periodic[d]);
  fprintf(f, "units %d\nlength_unit %s\nmass_unit %s\nvelocity_unit %s\n", (int)i->units, i->length_unit, i->mass_unit,
          i->velocity_unit);
  fprintf(f, "code_length_cm %.17g\ncode_mass_g %.17g\ncode_velocity_cm_s %.17g\n", i->code_length_cm, i->code_mass_g,
          i->code_velocity_cm_s);
}

static void dump(const char *dir, int rank, const phew_particle_set *s)
{
  char path[2048];
  snprintf(path, sizeof path, "%s/rank%d.txt", dir, rank);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "read_dump: cannot write %s\n", path);
    exit(2);
  }
  const size_t real = s->type == PHEW_FLOAT32 ? 4 : 8, n = (size_t)s->n;
  fprintf(f, "first %lld\nn %lld\nn_total %lld\ntype %s\nvelocity %d\n", (long long)s->first, (long long)s->n,
          (long long)s->n_total, s->type == PHEW_FLOAT32 ? "float32" : "float64", s->velocity != NULL);
  for (int k = 0; k < s->n_fields; ++k)
    fprintf(f, "field %s %d %d\n", s->fields[k].name, s->fields[k].components, (int)s->fields[k].type);
  write_info(f, &s->info);
  fclose(f);
  write_array(dir, rank, "position", s->position, 3 * n * real);
  if (s->velocity)
    write_array(dir, rank, "velocity", s->velocity, 3 * n * real);
  write_array(dir, rank, "mass", s->mass, n * real);
  write_array(dir, rank, "id", s->id, n * 8);
  for (int k = 0; k < s->n_fields; ++k)
    write_array(dir, rank, s->fields[k].name, s->fields[k].values,
                n * (size_t)s->fields[k].components * size_of(s->fields[k].type));
}

static void dump_amr(const char *dir, int rank, const phew_amr_set *s)
{
  char path[2048];
  snprintf(path, sizeof path, "%s/amr%d.txt", dir, rank);
  FILE *f = fopen(path, "w");
  snprintf(path, sizeof path, "%s/amr%d_values.bin", dir, rank);
  FILE *v = fopen(path, "wb");
  if (!f || !v) {
    fprintf(stderr, "read_dump: cannot write in %s\n", dir);
    exit(2);
  }
  fprintf(f, "n_levels %d\nn_boxes %lld\nn_leaf_cells %lld\n", s->hierarchy.n_levels, (long long)s->hierarchy.n_boxes,
          (long long)s->n_leaf_cells);
  for (int l = 0; l < s->hierarchy.n_levels; ++l)
    fprintf(f, "spacing %d %.17g\n", l, s->hierarchy.levels[l].spacing[0]);
  for (int k = 0; k < s->n_variables; ++k)
    fprintf(f, "variable %s\n", s->variable_names[k]);
  write_info(f, &s->info);
  for (int64_t b = 0; b < s->hierarchy.n_boxes; ++b) {
    const phew_amr_box *x = &s->hierarchy.boxes[b];
    fprintf(f, "box %d %d %d %lld %lld %lld %lld %lld %lld\n", x->level, x->held, s->box_rank[b], (long long)x->lo[0],
            (long long)x->lo[1], (long long)x->lo[2], (long long)x->hi[0], (long long)x->hi[1], (long long)x->hi[2]);
    const size_t cells = (size_t)((x->hi[0] - x->lo[0] + 1) * (x->hi[1] - x->lo[1] + 1) * (x->hi[2] - x->lo[2] + 1));
    if (x->held && s->n_variables > 0 &&
        fwrite(s->values[b], sizeof(double), cells * (size_t)s->n_variables, v) != cells * (size_t)s->n_variables) {
      fprintf(stderr, "read_dump: cannot write the values\n");
      exit(2);
    }
  }
  fclose(f);
  fclose(v);
}

static int amr_mode = 0, n_variables = 0;
static const char *variables[16];

static int parse(int argc, char **argv, phew_read_options *o)
{
  phew_read_options_init(o);
  for (int i = 3; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "--all-fields"))
      o->all_fields = 1;
    else if (!strcmp(a, "--amr"))
      amr_mode = 1;
    else if (!strcmp(a, "--variable") && ++i && n_variables < 16)
      variables[n_variables++] = v;
    else if (!strcmp(a, "--format") && ++i)
      o->format = !strcmp(v, "ramses") ? PHEW_FORMAT_RAMSES : !strcmp(v, "gadget-hdf5") ? PHEW_FORMAT_GADGET_HDF5 : 99;
    else if (!strcmp(a, "--units") && ++i)
      o->units = !strcmp(v, "astro") ? PHEW_UNITS_ASTRO : PHEW_UNITS_CODE;
    else if (!strcmp(a, "--particle-type") && ++i)
      o->particle_type = atoi(v);
    else if (!strcmp(a, "--family") && ++i)
      o->family = v;
    else
      return -1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  phew_read_options o;
  if (argc < 3 || parse(argc, argv, &o) != 0) {
    fprintf(stderr, "usage: read_dump PATH OUTDIR [options]\n");
    return 2;
  }
  const int launched = getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_RANK") != NULL;
  MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0;
  phew_context context;
  phew_context_init(&context);
  if (launched) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(world, &rank);
    context.mpi_comm = &world;
  }
  phew_status s;
  if (amr_mode) {
    phew_amr_set amr;
    s = phew_read_amr(&context, argv[1], &o, n_variables ? variables : NULL, n_variables, &amr);
    if (s == PHEW_OK)
      dump_amr(argv[2], rank, &amr);
    phew_amr_set_free(&amr);
  } else {
    phew_particle_set set;
    s = phew_read_particles(&context, argv[1], &o, &set);
    if (s == PHEW_OK)
      dump(argv[2], rank, &set);
    phew_particle_set_free(&set);
  }
  if (s != PHEW_OK && rank == 0)
    fprintf(stderr, "error: %s\n", context.message);
  if (launched)
    MPI_Finalize();
  return s == PHEW_OK ? 0 : 1;
}
