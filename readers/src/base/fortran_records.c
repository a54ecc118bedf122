/* Fortran unformatted sequential records, every marker checked (fortran_records.h). */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include "fortran_records.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int fortran_open(fortran_file *f, const char *path, read_error *e)
{
  memset(f, 0, sizeof *f);
  f->path = path;
  f->record = 1;
  struct stat st;
  if (stat(path, &st) != 0)
    return read_fail_errno(e, "open", path);
  if (!S_ISREG(st.st_mode))
    return read_fail(e, PHEW_ERROR_IO, "%s is not a regular file", path);
  f->size = (int64_t)st.st_size;
  f->stream = fopen(path, "rb");
  if (!f->stream)
    return read_fail_errno(e, "open", path);
  return 0;
}

void fortran_close(fortran_file *f)
{
  if (f->stream)
    fclose(f->stream);
  f->stream = NULL;
}

static int read_marker(fortran_file *f, int64_t at, int32_t *marker, read_error *e)
{
  unsigned char b[4];
  if (at + 4 > f->size || fseeko(f->stream, (off_t)at, SEEK_SET) != 0 || fread(b, 1, 4, f->stream) != 4)
    return read_fail(e, PHEW_ERROR_IO,
                     "%s is truncated: record %lld at byte offset %lld runs past the end of the file (%lld bytes)",
                     f->path, (long long)f->record, (long long)f->offset, (long long)f->size);
  *marker = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
  return 0;
}

static int foreign(const fortran_file *f, read_error *e, const char *why)
{
  return read_fail(e, PHEW_ERROR_IO,
                   "%s: record %lld at byte offset %lld %s: not a Fortran unformatted file as RAMSES writes "
                   "it (little-endian, 4-byte record markers), or the file is damaged",
                   f->path, (long long)f->record, (long long)f->offset, why);
}

/* Walks the subrecords of the record at f->offset: their data offsets and lengths go to
 * visit (NULL: none); the total length to *length, the offset past the record to *end. */
typedef int (*subrecord_fn)(fortran_file *f, int64_t data_at, int64_t bytes, void *user, read_error *e);

static int walk(fortran_file *f, subrecord_fn visit, void *user, int64_t *length, int64_t *end, read_error *e)
{
  int64_t at = f->offset, total = 0;
  for (int first = 1;; first = 0) {
    int32_t lead = 0, trail = 0;
    if (read_marker(f, at, &lead, e) != 0)
      return -1;
    const int64_t bytes = lead < 0 ? -(int64_t)lead : lead;
    if (at + 8 + bytes > f->size)
      return read_fail(e, PHEW_ERROR_IO,
                       "%s is truncated: record %lld at byte offset %lld holds %lld bytes but the file ends at %lld",
                       f->path, (long long)f->record, (long long)f->offset, (long long)(total + bytes),
                       (long long)f->size);
    if (read_marker(f, at + 4 + bytes, &trail, e) != 0)
      return -1;
    const int64_t trail_bytes = trail < 0 ? -(int64_t)trail : trail;
    if (trail_bytes != bytes || (trail < 0) == first)
      return foreign(f, e, "has markers that disagree");
    if (visit && visit(f, at + 4, bytes, user, e) != 0)
      return -1;
    total += bytes;
    at += 8 + bytes;
    if (lead >= 0)
      break;
  }
  *length = total;
  *end = at;
  return 0;
}

int fortran_peek(fortran_file *f, int64_t *length, read_error *e)
{
  int64_t end;
  return walk(f, NULL, NULL, length, &end, e);
}

int fortran_skip(fortran_file *f, read_error *e)
{
  int64_t length = 0, end = 0;
  if (walk(f, NULL, NULL, &length, &end, e) != 0)
    return -1;
  f->offset = end;
  f->record += 1;
  return 0;
}

typedef struct copy_target {
  unsigned char *to;
  int64_t capacity, done;
} copy_target;

static int copy_subrecord(fortran_file *f, int64_t data_at, int64_t bytes, void *user, read_error *e)
{
  copy_target *t = user;
  const int64_t n = bytes < t->capacity - t->done ? bytes : t->capacity - t->done;
  if (n > 0 && (fseeko(f->stream, (off_t)data_at, SEEK_SET) != 0 ||
                fread(t->to + t->done, 1, (size_t)n, f->stream) != (size_t)n))
    return read_fail_errno(e, "read", f->path);
  t->done += n;
  return 0;
}

int fortran_read(fortran_file *f, void *values, int64_t count, size_t size, const char *what, read_error *e)
{
  int64_t length = 0, end = 0;
  if (walk(f, NULL, NULL, &length, &end, e) != 0)
    return -1;
  if (length != count * (int64_t)size)
    return read_fail(e, PHEW_ERROR_IO,
                     "%s: record %lld at byte offset %lld (%s) holds %lld bytes where %lld values of %d bytes "
                     "were expected (%lld bytes): another layout or a damaged file",
                     f->path, (long long)f->record, (long long)f->offset, what, (long long)length, (long long)count,
                     (int)size, (long long)(count * (int64_t)size));
  copy_target t = {values, length, 0};
  if (walk(f, copy_subrecord, &t, &length, &end, e) != 0)
    return -1;
  f->offset = end;
  f->record += 1;
  return 0;
}

int fortran_read_text(fortran_file *f, char *text, size_t capacity, read_error *e)
{
  int64_t length = 0, end = 0;
  copy_target t = {(unsigned char *)text, (int64_t)capacity - 1, 0};
  if (walk(f, copy_subrecord, &t, &length, &end, e) != 0)
    return -1;
  text[t.done] = '\0';
  f->offset = end;
  f->record += 1;
  return 0;
}

int64_t fortran_tell(const fortran_file *f) { return f->offset; }

int fortran_seek(fortran_file *f, int64_t offset, int64_t record, read_error *e)
{
  if (offset < 0 || offset > f->size)
    return read_fail(e, PHEW_ERROR_IO, "%s: offset %lld is outside the file", f->path, (long long)offset);
  f->offset = offset;
  f->record = record;
  return 0;
}
