/* This process's block of a raw cube. Each process opens the file on its own and reads or
 * writes its active box with pread/pwrite, runs of x rows that are contiguous both in the
 * file and in memory at a time (the whole cube at once when serial). Every run is its own
 * byte range, so ranks never overwrite each other's bytes, and no file operation is
 * collective, so a rank that fails cannot leave the others waiting; success is agreed
 * afterwards (procs_all_ok). POSIX calls rather than MPI-IO so that a failure reports its
 * errno (Open MPI's MPI-IO reports a full disk as a short count and prints a line of its own).
 * The ghost cells come from their owners through phew_exchange_ghosts, which also handles
 * the periodic wrap (alone, a rank wraps onto its own cells). */
#define _POSIX_C_SOURCE 200809L
#include "block_io.h"
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One run of bytes between the file and memory; returns 0, an errno, or -1 (end of file). */
static int transfer(int fd, char *memory, int64_t file_at, int64_t bytes, int writing)
{
  size_t done = 0;
  if (bytes == 0)
    return 0;
  return writing ? file_write_all(fd, memory, (size_t)bytes, file_at)
                 : file_read_all(fd, memory, (size_t)bytes, file_at, &done);
}

/* Reads or writes the active box of g between the file fd and values (the stored box), rows
 * that follow each other in the file and in memory as one run. Returns 0, an errno, or -1
 * when the file ended early (reads). Offsets fit in int64: the caller checked the whole
 * cube's byte count. */
static int box_io(int fd, const phew_grid *g, size_t value_size, char *values, int writing)
{
  const int64_t *n = g->global_dims, *a = g->active_offset, *ad = g->active_dims;
  const int64_t *s = g->stored_offset, *sd = g->stored_dims;
  const int64_t size = (int64_t)value_size, row = ad[0] * size;
  int64_t run_file = 0, run_memory = 0, run_bytes = 0;
  for (int64_t z = a[2]; z < a[2] + ad[2]; ++z)
    for (int64_t y = a[1]; y < a[1] + ad[1]; ++y) {
      const int64_t file_at = ((z * n[1] + y) * n[0] + a[0]) * size;
      const int64_t memory_at = (((z - s[2]) * sd[1] + (y - s[1])) * sd[0] + (a[0] - s[0])) * size;
      if (run_bytes > 0 && file_at == run_file + run_bytes && memory_at == run_memory + run_bytes) {
        run_bytes += row;
        continue;
      }
      const int err = transfer(fd, values + run_memory, run_file, run_bytes, writing);
      if (err)
        return err;
      run_file = file_at;
      run_memory = memory_at;
      run_bytes = row;
    }
  return transfer(fd, values + run_memory, run_file, run_bytes, writing);
}

/* This rank's part of a read or a write; returns 0 or -1 with message filled. */
static int active_io(const char *path, const phew_grid *g, size_t value_size, void *values, int writing, char *message,
                     size_t message_size)
{
  const int64_t *ad = g->active_dims;
  if (ad[0] < 1 || ad[1] < 1 || ad[2] < 1)
    return 0; /* this rank owns no cells */
  const int fd = open(path, (writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    snprintf(message, message_size, writing ? "cannot write '%s': %s" : "cannot open input '%s': %s", path,
             strerror(errno));
    return -1;
  }
  int err = box_io(fd, g, value_size, values, writing);
  if (close(fd) != 0 && !err)
    err = errno; /* a delayed write error (NFS, quota) shows up here */
  if (err == -1)
    snprintf(message, message_size, "'%s' ended before all its cells were read (it was changed during the run?)", path);
  else if (err)
    snprintf(message, message_size, writing ? "writing '%s' failed: %s" : "reading '%s' failed: %s", path,
             strerror(err));
  return err ? -1 : 0;
}

int block_read(const procs *p, const char *path, const phew_grid *g, size_t value_size, void *values, char *message,
               size_t message_size)
{
  const int ok = active_io(path, g, value_size, values, 0, message, message_size) == 0;
  if (!procs_all_ok(p, ok, message, message_size))
    return -1;
  phew_context context = procs_context(p, 0);
  const phew_status s = phew_exchange_ghosts(&context, g, values, value_size);
  if (s != PHEW_OK) { /* the same status and message on every rank */
    snprintf(message, message_size, "filling the ghost cells of '%s' failed: %s", path, context.message);
    return -1;
  }
  return 0;
}

/* One label file written on its own thread. */
typedef struct label_write {
  const char *path;
  const phew_grid *g;
  size_t value_size;
  void *values;
  char message[512];
  int failed;
} label_write;

static void *write_one(void *arg)
{
  label_write *w = arg;
  /* int32: narrowed in place, front to back (entry i moves down to byte 4 i from 8 i) */
  if (w->value_size == 4) {
    const int64_t *wide = w->values;
    int32_t *narrow = w->values;
    for (int64_t i = 0, n = w->g->stored_dims[0] * w->g->stored_dims[1] * w->g->stored_dims[2]; i < n; ++i)
      narrow[i] = (int32_t)wide[i];
  }
  /* the label format is little-endian, which is what this machine stores */
  w->failed = active_io(w->path, w->g, w->value_size, w->values, 1, w->message, sizeof w->message) != 0;
  return NULL;
}

int block_write_labels(const procs *p, const char *const paths[3], const phew_grid *g, int64_t *const labels[3],
                       int int32, char *message, size_t message_size)
{
  /* the three files at once: their writes (and narrowing) overlap instead of queueing */
  label_write w[3];
  pthread_t thread[3];
  int started[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    w[k] = (label_write){paths[k], g, int32 ? 4 : 8, labels[k], "", 0};
    started[k] = k > 0 && pthread_create(&thread[k], NULL, write_one, &w[k]) == 0;
  }
  for (int k = 0; k < 3; ++k)
    if (!started[k])
      write_one(&w[k]); /* the first file, or any whose thread did not start */
  int ok = 1;
  for (int k = 0; k < 3; ++k) {
    if (started[k])
      pthread_join(thread[k], NULL);
    if (ok && w[k].failed) {
      snprintf(message, message_size, "%s", w[k].message);
      ok = 0;
    }
  }
  return procs_all_ok(p, ok, message, message_size) ? 0 : -1;
}
