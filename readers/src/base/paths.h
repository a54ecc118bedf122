/* Small helpers on paths, for finding a snapshot's files from what the user gives. */
#ifndef PHEW_READERS_PATHS_H
#define PHEW_READERS_PATHS_H

#include <stddef.h>

/* 1 if PATH exists and is a directory, a regular file, anything. */
int path_is_directory(const char *path);
int path_is_file(const char *path);
int path_exists(const char *path);
/* The last component of PATH (no trailing slash) into out. */
void path_base_name(const char *path, char *out, size_t capacity);
/* The folder holding PATH ("." when it has none) into out. */
void path_directory(const char *path, char *out, size_t capacity);
/* 1 if NAME ends with SUFFIX. */
int ends_with(const char *name, const char *suffix);
/* snprintf into out; -1 if it did not fit. */
int path_format(char *out, size_t capacity, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
