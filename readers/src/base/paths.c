/* Path helpers (paths.h). */
#define _POSIX_C_SOURCE 200809L
#include "paths.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int path_is_directory(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int path_is_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int path_exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

static size_t trimmed_length(const char *path)
{
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/')
    --n;
  return n;
}

void path_base_name(const char *path, char *out, size_t capacity)
{
  const size_t n = trimmed_length(path);
  size_t start = n;
  while (start > 0 && path[start - 1] != '/')
    --start;
  snprintf(out, capacity, "%.*s", (int)(n - start), path + start);
}

void path_directory(const char *path, char *out, size_t capacity)
{
  size_t n = trimmed_length(path);
  while (n > 0 && path[n - 1] != '/')
    --n;
  if (n == 0)
    snprintf(out, capacity, ".");
  else
    snprintf(out, capacity, "%.*s", (int)(n > 1 ? n - 1 : 1), path);
}

int ends_with(const char *name, const char *suffix)
{
  const size_t n = strlen(name), m = strlen(suffix);
  return n >= m && strcmp(name + n - m, suffix) == 0;
}

int path_format(char *out, size_t capacity, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(out, capacity, format, args);
  va_end(args);
  return n < 0 || (size_t)n >= capacity ? -1 : 0;
}
