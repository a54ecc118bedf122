/* Wall clock and resident memory of the running process, for the benchmark programs
 * (Linux: /proc/self/status and /proc/self/clear_refs). */
#ifndef PHEW_BENCH_CLOCK_H
#define PHEW_BENCH_CLOCK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double seconds_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A "VmXXX:   1234 kB" line of /proc/self/status, in bytes; -1 if unavailable. */
static inline long long proc_status_bytes(const char *key)
{
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long long value = -1;
  const size_t n = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, key, n) && line[n] == ':') {
      value = strtoll(line + n + 1, NULL, 10) * 1024;
      break;
    }
  }
  fclose(f);
  return value;
}

/* Reset the peak RSS (VmHWM) to the current RSS (Linux >= 4.0). */
static inline int reset_peak_rss(void)
{
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f)
    return 0;
  const int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

#endif
