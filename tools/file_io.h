/* Plain POSIX reads and writes for the tool, each returning the errno of the call that failed,
 * so that messages can say the real reason (a full disk, a read error, a file that shrank).
 * stdio and MPI-IO are not used for data: stdio hides the errno of buffered writes, and
 * Open MPI's MPI-IO turns a failed write into a short count and prints its own line. */
#ifndef PHEW_FILE_IO_H
#define PHEW_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes n bytes at offset (or at the current position when offset < 0), retrying partial
 * transfers and interrupted calls. Returns 0 or the errno of the failure (ENOSPC when the
 * system wrote nothing without saying why). */
int file_write_all(int fd, const void *data, size_t n, int64_t offset);

/* Reads n bytes at offset. Returns 0, the errno of a failed read, or -1 when the file ended
 * first (*done then says how many bytes were there). */
int file_read_all(int fd, void *data, size_t n, int64_t offset, size_t *done);

/* A text file written through a buffer, for the CSV tables; the first error sticks. */
typedef struct text_file {
  int fd;
  int error; /* 0 or the errno of the first failure */
  size_t used;
  char buffer[1 << 16];
} text_file;

/* Opens path for writing, truncating it. Returns 0 or errno. */
int text_open(text_file *t, const char *path);
/* printf-style output (one formatted item must fit in 4096 bytes; the tables' do). */
void text_printf(text_file *t, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Flushes and closes. Returns 0 or the errno of the first failure (write or close). */
int text_close(text_file *t);

#endif
