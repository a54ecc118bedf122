#include "json_writer.h"

#include <math.h>

static void escaped(text_file *out, const char *s)
{
  text_printf(out, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
    if (*c == '"' || *c == '\\')
      text_printf(out, "\\%c", *c);
    else if (*c < 0x20)
      text_printf(out, "\\u%04x", *c);
    else
      text_printf(out, "%c", *c);
  }
  text_printf(out, "\"");
}

/* The comma and line break before a value, and its key. */
static void start_value(json_writer *w, const char *key)
{
  text_printf(w->out, "%s\n%*s", w->count[w->depth]++ ? "," : "", 2 * w->depth, "");
  if (key) {
    escaped(w->out, key);
    text_printf(w->out, ": ");
  }
}

void json_begin(json_writer *w, text_file *out)
{
  w->out = out;
  w->depth = 1; /* the members of the top-level object */
  w->count[1] = 0;
  text_printf(out, "{");
}

void json_end(json_writer *w) { text_printf(w->out, "\n}\n"); }

static void open_level(json_writer *w, const char *key, char bracket)
{
  start_value(w, key);
  text_printf(w->out, "%c", bracket);
  if (w->depth + 1 < JSON_MAX_DEPTH)
    w->count[++w->depth] = 0;
}

void json_open_object(json_writer *w, const char *key) { open_level(w, key, '{'); }

void json_open_array(json_writer *w, const char *key) { open_level(w, key, '['); }

void json_close(json_writer *w, char bracket)
{
  const int empty = w->count[w->depth] == 0;
  --w->depth;
  if (empty)
    text_printf(w->out, "%c", bracket);
  else
    text_printf(w->out, "\n%*s%c", 2 * w->depth, "", bracket);
}

void json_string(json_writer *w, const char *key, const char *value)
{
  start_value(w, key);
  if (value)
    escaped(w->out, value);
  else
    text_printf(w->out, "null");
}

static void number(text_file *out, double value)
{
  if (isfinite(value))
    text_printf(out, "%.17g", value);
  else
    text_printf(out, "null");
}

void json_number(json_writer *w, const char *key, double value)
{
  start_value(w, key);
  number(w->out, value);
}

void json_integer(json_writer *w, const char *key, int64_t value)
{
  start_value(w, key);
  text_printf(w->out, "%lld", (long long)value);
}

void json_boolean(json_writer *w, const char *key, int value)
{
  start_value(w, key);
  text_printf(w->out, "%s", value ? "true" : "false");
}

void json_numbers(json_writer *w, const char *key, const double *values, int n)
{
  start_value(w, key);
  text_printf(w->out, "[");
  for (int i = 0; i < n; ++i) {
    text_printf(w->out, "%s", i ? ", " : "");
    number(w->out, values[i]);
  }
  text_printf(w->out, "]");
}

void json_booleans(json_writer *w, const char *key, const int *values, int n)
{
  start_value(w, key);
  text_printf(w->out, "[");
  for (int i = 0; i < n; ++i)
    text_printf(w->out, "%s%s", i ? ", " : "", values[i] ? "true" : "false");
  text_printf(w->out, "]");
}
