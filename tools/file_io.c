#define _POSIX_C_SOURCE 200809L
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Linux moves at most this much per read or write call; larger requests come back partial. */
enum { MAX_CHUNK = 1 << 30 };

int file_write_all(int fd, const void *data, size_t n, int64_t offset)
{
  const char *p = data;
  while (n > 0) {
    const size_t chunk = n < MAX_CHUNK ? n : MAX_CHUNK;
    const ssize_t k = offset < 0 ? write(fd, p, chunk) : pwrite(fd, p, chunk, (off_t)offset);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return errno;
    if (k == 0) /* no progress and no reason given: what a full disk does */
      return ENOSPC;
    p += k;
    n -= (size_t)k;
    if (offset >= 0)
      offset += k;
  }
  return 0;
}

int file_read_all(int fd, void *data, size_t n, int64_t offset, size_t *done)
{
  char *p = data;
  *done = 0;
  while (n > 0) {
    const size_t chunk = n < MAX_CHUNK ? n : MAX_CHUNK;
    const ssize_t k = pread(fd, p, chunk, (off_t)offset);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return errno;
    if (k == 0)
      return -1; /* end of file */
    p += k;
    n -= (size_t)k;
    offset += k;
    *done += (size_t)k;
  }
  return 0;
}

int text_open(text_file *t, const char *path)
{
  t->used = 0;
  t->error = 0;
  t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  return t->fd < 0 ? errno : 0;
}

static void text_flush(text_file *t)
{
  if (!t->error && t->used)
    t->error = file_write_all(t->fd, t->buffer, t->used, -1);
  t->used = 0;
}

void text_printf(text_file *t, const char *format, ...)
{
  enum { ITEM = 4096 };
  if (t->error)
    return;
  if (sizeof t->buffer - t->used < ITEM)
    text_flush(t);
  va_list args;
  va_start(args, format);
  const int k = vsnprintf(t->buffer + t->used, ITEM, format, args);
  va_end(args);
  if (k < 0 || k >= ITEM)
    t->error = EOVERFLOW;
  else
    t->used += (size_t)k;
}

int text_close(text_file *t)
{
  text_flush(t);
  if (close(t->fd) != 0 && !t->error)
    t->error = errno;
  t->fd = -1;
  return t->error;
}
