/* Fortran unformatted sequential files (RAMSES's outputs): each record is its length in a
 * 4-byte little-endian marker, the bytes, and the length again. Records of 2 GiB or more
 * are split into subrecords as gfortran writes them (a negative leading marker: more
 * follow). Every marker is checked; a record that runs past the end of the file, or whose
 * two markers disagree, is reported with the file's name and the record's byte offset. */
#ifndef PHEW_READERS_FORTRAN_RECORDS_H
#define PHEW_READERS_FORTRAN_RECORDS_H

#include "read_error.h"

#include <stdint.h>
#include <stdio.h>

typedef struct fortran_file {
  FILE *stream;
  const char *path; /* the caller's string, for messages */
  int64_t size;     /* of the file, in bytes */
  int64_t offset;   /* of the next record's first marker */
  int64_t record;   /* the next record's number, from 1 */
} fortran_file;

/* Opens PATH; 0, or -1 with the reason in e (a missing file is PHEW_ERROR_IO). */
int fortran_open(fortran_file *f, const char *path, read_error *e);
void fortran_close(fortran_file *f);

/* The next record's length in bytes (its markers checked), without moving past it. */
int fortran_peek(fortran_file *f, int64_t *length, read_error *e);
/* Moves past the next record. */
int fortran_skip(fortran_file *f, read_error *e);
/* Reads the next record, which must hold count values of size bytes, into values; WHAT
 * names it in the message when it does not. */
int fortran_read(fortran_file *f, void *values, int64_t count, size_t size, const char *what, read_error *e);
/* Reads the next record into text (at most capacity - 1 bytes, the rest skipped), as a
 * NUL-terminated string. */
int fortran_read_text(fortran_file *f, char *text, size_t capacity, read_error *e);
/* Offset of the next record, and back to one found before (fortran_tell's value). */
int64_t fortran_tell(const fortran_file *f);
int fortran_seek(fortran_file *f, int64_t offset, int64_t record, read_error *e);

#endif
