#define _POSIX_C_SOURCE 200809L /* open, fstat */
#include "points_io.h"
#include "cli_errors.h"
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const option_of[POINTS_FILES] = {"--points", "--masses",  "--velocities",
                                                    "--ids",    "--density", "--groups"};

void particle_files_init(particle_files *f, const options *o)
{
  const int64_t size = o->type == PHEW_FLOAT32 ? 4 : 8;
  f->path[POINTS_POSITION] = o->positions;
  f->path[POINTS_MASS] = o->masses;
  f->path[POINTS_VELOCITY] = o->velocities;
  f->path[POINTS_ID] = o->ids;
  f->path[POINTS_DENSITY] = o->density;
  f->path[POINTS_GROUPS] = o->groups;
  f->record[POINTS_POSITION] = f->record[POINTS_VELOCITY] = 3 * size;
  f->record[POINTS_MASS] = f->record[POINTS_DENSITY] = size;
  f->record[POINTS_ID] = f->record[POINTS_GROUPS] = 8;
}

/* The size of a regular file; -1 after fail. */
static int64_t size_of(const char *path)
{
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* O_NONBLOCK: a FIFO must not hang us */
  if (fd < 0) {
    fail("cannot open input '%s': %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  int64_t size = -1;
  if (fstat(fd, &st) != 0)
    fail("cannot read the size of '%s': %s", path, strerror(errno));
  else if (S_ISDIR(st.st_mode))
    fail("'%s' is a directory, not a raw file", path);
  else if (!S_ISREG(st.st_mode))
    fail("'%s' is not a regular file", path);
  else
    size = (int64_t)st.st_size;
  close(fd);
  return size;
}

void particle_files_count(const particle_files *f, int64_t *n_total)
{
  /* POS sets the count; no other byte count can overflow: each is at most 8/12 of POS's */
  const int64_t bytes = size_of(f->path[POINTS_POSITION]), record = f->record[POINTS_POSITION];
  if (bytes < 0)
    return;
  if (bytes % record != 0) {
    fail("'%s' has %lld bytes, not a whole number of particles of %lld bytes (x, y, z of --type)",
         f->path[POINTS_POSITION], (long long)bytes, (long long)record);
    return;
  }
  *n_total = bytes / record;
  for (int k = POINTS_POSITION + 1; k < POINTS_FILES; ++k) {
    if (!f->path[k])
      continue;
    const int64_t got = size_of(f->path[k]), want = *n_total * f->record[k];
    if (got < 0)
      return;
    if (got != want) {
      fail("'%s' (%s) has %lld bytes but the %lld particles of '%s' need %lld", f->path[k], option_of[k],
           (long long)got, (long long)*n_total, f->path[POINTS_POSITION], (long long)want);
      return;
    }
  }
}

void particle_files_check(const particle_files *f, int k, int64_t n_total, const char *source)
{
  const int64_t got = size_of(f->path[k]), want = n_total * f->record[k];
  if (got >= 0 && got != want)
    fail("'%s' (%s) has %lld bytes but the %lld particles of '%s' need %lld", f->path[k], option_of[k], (long long)got,
         (long long)n_total, source, (long long)want);
}

void particle_files_share(const procs *p, int64_t n_total, int64_t *first, int64_t *n)
{
  const int64_t base = n_total / p->size, extra = n_total % p->size, r = p->rank;
  *first = base * r + (r < extra ? r : extra);
  *n = base + (r < extra ? 1 : 0);
}

void particle_files_read(const particle_files *f, int k, int64_t first, int64_t n, void *data)
{
  const char *path = f->path[k];
  if (n == 0)
    return;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fail("cannot open input '%s': %s", path, strerror(errno));
    return;
  }
  size_t done = 0;
  const int err = file_read_all(fd, data, (size_t)(n * f->record[k]), first * f->record[k], &done);
  close(fd);
  if (err == -1)
    fail("'%s' ended before all its particles were read (it was changed during the run?)", path);
  else if (err)
    fail("reading '%s' failed: %s", path, strerror(err));
}

void particle_files_write(const char *path, int64_t size, int64_t first, int64_t n, const void *data)
{
  if (n == 0)
    return;
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    fail("cannot write '%s': %s", path, strerror(errno));
    return;
  }
  int err = file_write_all(fd, data, (size_t)(n * size), first * size);
  if (close(fd) != 0 && !err)
    err = errno; /* a delayed write error (NFS, quota) shows up here */
  if (err)
    fail("writing '%s' failed: %s", path, strerror(err));
}

void snapshot_points(const phew_particle_set *set, int periodic, phew_points *pts)
{
  pts->n = set->n;
  pts->type = set->type;
  pts->position = set->position;
  pts->mass = set->mass;
  pts->velocity = set->velocity;
  pts->id = set->id;
  pts->has_box = 1;
  for (int d = 0; d < 3; ++d) {
    pts->box_origin[d] = set->info.box_origin[d];
    pts->box_size[d] = set->info.box_size[d];
    pts->periodic[d] = set->info.periodic[d] || periodic;
  }
}
