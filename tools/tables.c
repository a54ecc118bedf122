#include "tables.h"
#include "cli_errors.h"
#include "csv_output.h"
#include "file_io.h"
#include "hdf5_output.h"
#include "outputs.h"
#include "run_record.h"

#include <stdlib.h>
#include <string.h>

int tables_write_csv(int k, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size)
{
  return tables_write_joined(k, columns, n_columns, rows, row_size, NULL, n_rows);
}

int tables_write_joined(int k, const phew_column *columns, int n_columns, const void *rows, size_t row_size,
                        const phew_physics_result *physics, int64_t n_rows)
{
  const char *path = outputs_temporary(k);
  text_file *out = malloc(sizeof *out);
  if (!out) {
    fail("out of memory writing '%s'", path);
    return -1;
  }
  int n_physics = 0;
  const phew_column *physics_columns = phew_structure_columns(&n_physics);
  /* the physics columns after the finder's, without StructureId (the finder's id) */
  const csv_part parts[2] = {{columns, n_columns, rows, row_size},
                             {physics_columns + 1, n_physics - 1, physics ? physics->structures : NULL,
                              sizeof(phew_structure)}};
  int err = text_open(out, path);
  if (err == 0) {
    csv_write_joined(out, parts, physics ? 2 : 1, n_rows);
    err = text_close(out);
    if (err)
      fail("writing '%s' failed: %s", path, strerror(err));
  } else {
    fail("cannot write '%s': %s", path, strerror(err));
  }
  free(out);
  return err ? -1 : 0;
}

/* Rank 0 writes the run record into its temporary file; 0 or -1 after fail. */
static int write_record(int k, const options *o, const run_facts *facts)
{
  const char *path = outputs_temporary(k);
  const int err = run_record_write(path, o, facts);
  if (err)
    fail("writing '%s' failed: %s", path, strerror(err));
  return err ? -1 : 0;
}

/* Collective: rank 0 writes the run record (output k), then the HDF5 catalogue (--hdf5) is
 * written, then rank 0 puts every file in place. */
static int record_and_commit(const procs *p, const options *o, const run_facts *facts, int k)
{
  if (p->rank == 0)
    write_record(k, o, facts);
  if (!all_ok(p) || hdf5_output_write(p, o, facts, outputs_temporary(k)) != 0)
    return -1;
  char message[512];
  if (p->rank == 0 && outputs_commit(message, sizeof message) != 0)
    fail("%s", message);
  return all_ok(p) ? 0 : -1;
}

int tables_write_and_commit(const procs *p, const options *o, const phew_clump_result *r,
                            const phew_snapshot_info *snapshot, int64_t n_boxes, const phew_physics_params *pp,
                            const phew_physics_result *physics)
{
  if (p->rank == 0) {
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(r->columns, &nc), *hc = phew_halo_columns(r->columns, &nh),
                      *dc = phew_node_columns(r->columns, &nn);
    if (tables_write_joined(OUTPUT_CLUMPS_CSV, cc, nc, r->clumps, sizeof *r->clumps, physics, r->n_clumps) == 0 &&
        tables_write_csv(OUTPUT_HALOES_CSV, hc, nh, r->haloes, r->n_haloes, sizeof *r->haloes) == 0)
      tables_write_csv(OUTPUT_DENDROGRAM_CSV, dc, nn, r->nodes, r->n_nodes, sizeof *r->nodes);
  }
  if (!all_ok(p))
    return -1;
  const run_facts facts = {snapshot, r, NULL, n_boxes, pp, physics};
  return record_and_commit(p, o, &facts, OUTPUT_RUN);
}

int groups_write_and_commit(const procs *p, const options *o, const phew_group_result *r,
                            const phew_snapshot_info *snapshot, const phew_physics_params *pp,
                            const phew_physics_result *physics)
{
  if (p->rank == 0) {
    int n;
    const phew_column *columns = phew_group_columns(r->columns, &n);
    tables_write_joined(OUTPUT_GROUPS_CSV, columns, n, r->groups, sizeof *r->groups, physics, r->n_groups);
  }
  if (!all_ok(p))
    return -1;
  const run_facts facts = {snapshot, NULL, r, 0, pp, physics};
  return record_and_commit(p, o, &facts, OUTPUT_GROUPS_RUN);
}

int structures_commit(const procs *p, const options *o, const phew_snapshot_info *snapshot,
                      const phew_physics_params *pp, const phew_physics_result *physics)
{
  const run_facts facts = {snapshot, NULL, NULL, 0, pp, physics};
  return record_and_commit(p, o, &facts, OUTPUT_GIVEN_RUN);
}
