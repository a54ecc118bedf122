/* This process's block of a raw cube. With MPI: each rank opens the file on its own
 * (MPI_COMM_SELF) and reads or writes its active box one x row at a time with
 * MPI_File_read_at / MPI_File_write_at. Every row is one contiguous byte range and no file
 * operation is collective, so ranks never overwrite each other's bytes and a rank that fails
 * cannot leave the others waiting; success is agreed afterwards (procs_all_ok). The ghost
 * cells come from their owners through phew_exchange_ghosts, which also handles the
 * periodic wrap. */
#include "block_io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef PHEW_CLI_WITH_MPI
#include <limits.h>
#include <mpi.h>

/* "<format with the path>: <MPI's text for err>" */
static void mpi_message(char *message, size_t message_size, const char *format, const char *path, int err)
{
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(err, text, &length);
  const int used = snprintf(message, message_size, format, path);
  if (used >= 0 && (size_t)used < message_size)
    snprintf(message + used, message_size - (size_t)used, ": %s", text);
}

/* Reads or writes every x row of the active box; values holds the stored box. Returns an MPI
 * error code, or -1 when a read came back short. */
static int rows_io(MPI_File file, const phew_grid *g, size_t value_size, void *values, int writing)
{
  const int64_t *n = g->global_dims, *a = g->active_offset, *ad = g->active_dims;
  const int64_t *s = g->stored_offset, *sd = g->stored_dims;
  const int row_bytes = (int)((size_t)ad[0] * value_size);
  for (int64_t z = a[2]; z < a[2] + ad[2]; ++z)
    for (int64_t y = a[1]; y < a[1] + ad[1]; ++y) {
      const MPI_Offset at = (MPI_Offset)((z * n[1] + y) * n[0] + a[0]) * (MPI_Offset)value_size;
      char *row = (char *)values + (size_t)(((z - s[2]) * sd[1] + (y - s[1])) * sd[0] + (a[0] - s[0])) * value_size;
      MPI_Status status;
      const int err = writing ? MPI_File_write_at(file, at, row, row_bytes, MPI_BYTE, &status)
                              : MPI_File_read_at(file, at, row, row_bytes, MPI_BYTE, &status);
      if (err != MPI_SUCCESS)
        return err;
      int done = 0;
      MPI_Get_count(&status, MPI_BYTE, &done);
      if (done != row_bytes)
        return -1;
    }
  return MPI_SUCCESS;
}

/* This rank's part of a read or a write; returns 0 or -1 with message filled. */
static int active_io(const char *path, const phew_grid *g, size_t value_size, void *values, int writing,
                     char *message, size_t message_size)
{
  const int64_t *ad = g->active_dims;
  if (ad[0] < 1 || ad[1] < 1 || ad[2] < 1)
    return 0; /* this rank owns no cells */
  if ((size_t)ad[0] * value_size > (size_t)INT_MAX) {
    snprintf(message, message_size, "rows of %lld cells are too long for this tool's MPI-IO", (long long)ad[0]);
    return -1;
  }
  MPI_File file;
  int err = MPI_File_open(MPI_COMM_SELF, path, writing ? MPI_MODE_WRONLY : MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  if (err != MPI_SUCCESS) {
    mpi_message(message, message_size, writing ? "cannot write '%s'" : "cannot open input '%s'", path, err);
    return -1;
  }
  err = rows_io(file, g, value_size, values, writing);
  const int closed = MPI_File_close(&file);
  if (err == -1)
    snprintf(message, message_size, "short read on '%s'", path);
  else if (err != MPI_SUCCESS || closed != MPI_SUCCESS)
    mpi_message(message, message_size, writing ? "writing '%s' failed" : "reading '%s' failed", path,
                err != MPI_SUCCESS ? err : closed);
  return err == MPI_SUCCESS && closed == MPI_SUCCESS ? 0 : -1;
}

int block_read(const procs *p, const char *path, const phew_grid *g, size_t value_size, void *values,
               char *message, size_t message_size)
{
  const int ok = active_io(path, g, value_size, values, 0, message, message_size) == 0;
  if (!procs_all_ok(p, ok, message, message_size))
    return -1;
  char why[512];
  const phew_status s = phew_exchange_ghosts(g, values, value_size, p->mpi_comm, why, sizeof why);
  if (s != PHEW_OK) { /* the same status and message on every rank */
    snprintf(message, message_size, "filling the ghost cells of '%s' failed: %s", path, why);
    return -1;
  }
  return 0;
}

int block_write_labels(const procs *p, const char *path, const phew_grid *g, const int64_t *labels,
                       char *message, size_t message_size)
{
  /* the label format is little-endian, which is what this machine stores */
  const int ok = active_io(path, g, sizeof *labels, (void *)labels, 1, message, message_size) == 0;
  return procs_all_ok(p, ok, message, message_size) ? 0 : -1;
}

#else /* serial: the block is the whole cube */

static size_t stored_cells(const phew_grid *g)
{
  return (size_t)(g->stored_dims[0] * g->stored_dims[1] * g->stored_dims[2]);
}

int block_read(const procs *p, const char *path, const phew_grid *g, size_t value_size, void *values,
               char *message, size_t message_size)
{
  (void)p;
  FILE *in = fopen(path, "rb");
  if (!in) {
    snprintf(message, message_size, "cannot open input '%s': %s", path, strerror(errno));
    return -1;
  }
  const size_t n = stored_cells(g);
  const int ok = fread(values, value_size, n, in) == n;
  fclose(in);
  if (!ok)
    snprintf(message, message_size, "short read on '%s'", path);
  return ok ? 0 : -1;
}

int block_write_labels(const procs *p, const char *path, const phew_grid *g, const int64_t *labels,
                       char *message, size_t message_size)
{
  (void)p;
  FILE *out = fopen(path, "wb");
  if (!out) {
    snprintf(message, message_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  /* the label format is little-endian, which is what this machine stores */
  const size_t n = stored_cells(g);
  const int ok = fwrite(labels, sizeof *labels, n, out) == n;
  if (fclose(out) != 0 || !ok) {
    snprintf(message, message_size, "writing '%s' failed", path);
    return -1;
  }
  return 0;
}

#endif
