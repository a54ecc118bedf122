/* A small JSON writer for the run record (PREFIX-run.json): nested objects and arrays,
 * commas and indentation kept by the writer, strings escaped, NaN and infinities as null. */
#ifndef PHEW_JSON_WRITER_H
#define PHEW_JSON_WRITER_H

#include "file_io.h"

#include <stdint.h>

enum { JSON_MAX_DEPTH = 8 };

typedef struct json_writer {
  text_file *out;
  int depth;
  int count[JSON_MAX_DEPTH]; /* values written so far at each open level */
} json_writer;

void json_begin(json_writer *w, text_file *out); /* opens the top-level object */
void json_end(json_writer *w);                   /* closes it, with a final newline */

/* Members of the current object (key != NULL) or elements of the current array (key NULL). */
void json_open_object(json_writer *w, const char *key);
void json_open_array(json_writer *w, const char *key);
void json_close(json_writer *w, char bracket);                        /* '}' or ']' */
void json_string(json_writer *w, const char *key, const char *value); /* NULL: null */
void json_number(json_writer *w, const char *key, double value);      /* %.17g, exact */
void json_integer(json_writer *w, const char *key, int64_t value);
void json_boolean(json_writer *w, const char *key, int value);
void json_numbers(json_writer *w, const char *key, const double *values, int n); /* one line */
void json_booleans(json_writer *w, const char *key, const int *values, int n);   /* one line */

#endif
