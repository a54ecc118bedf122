/* A test-only LD_PRELOAD library that makes chosen file operations of the phew tool fail, so
 * that the tests can reach failures a healthy machine never shows (a full disk in the middle
 * of a label write, a rename that fails after five others succeeded, a read error, a signal
 * arriving during a write or during the final renames) deterministically and without test
 * hooks in the product.
 *
 * PHEW_IO_FAULTS holds rules separated by ';', each "OP:SUFFIX:ACTION":
 *   OP      write  - write, pwrite, writev, pwritev (and their 64 variants) on a file
 *           read   - read, pread, readv, preadv on a file
 *           rename - rename / renameat / renameat2, matched on the OLD path (so that
 *                    moving X aside, X.partial into place and X.previous back differ)
 *           access - access (the tool's "can this file be replaced" check)
 *           open   - open / openat (and their 64 variants), matched on the path given
 *   SUFFIX  the rule applies when the file's path (for write and read: /proc/self/fd/N) ends
 *           with it
 *   ACTION  an errno name (ENOSPC, EIO, EFBIG, EDQUOT, EPERM, EACCES, EXDEV, EROFS): the call
 *           fails with it; or SIGTERM / SIGINT: that signal is raised in the calling process,
 *           then the call proceeds (what a kill landing exactly there does); or PAUSE: the
 *           call waits up to 30 seconds (less if a signal handler runs in this thread), then
 *           proceeds, so that a test can send a signal from outside while the tool is held
 *           exactly there (e.g. SIGTERM to mpirun while one rank writes its labels).
 * With PHEW_IO_FAULTS_RANK=R the rules apply only in the process whose OMPI_COMM_WORLD_RANK
 * is R (one rank of an mpirun job). Calls that match no rule go to the C library unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { OP_WRITE, OP_READ, OP_RENAME, OP_ACCESS, OP_OPEN };

/* The PAUSE action (below every minus signal number). */
enum { ACTION_PAUSE = -1000 };

/* The action of the first rule for op whose suffix ends path: 0 none, > 0 an errno,
 * ACTION_PAUSE, or else minus a signal number. */
static int rule_for(int op, const char *path)
{
  const char *rules = getenv("PHEW_IO_FAULTS"), *only_rank = getenv("PHEW_IO_FAULTS_RANK");
  if (!rules || !path)
    return 0;
  if (only_rank) {
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, only_rank) != 0)
      return 0;
  }
  const char *ops[] = {"write", "read", "rename", "access", "open"};
  const size_t path_len = strlen(path);
  char rule[1024];
  for (const char *r = rules; *r;) {
    const char *end = strchr(r, ';');
    const size_t len = end ? (size_t)(end - r) : strlen(r);
    if (len < sizeof rule) {
      memcpy(rule, r, len);
      rule[len] = '\0';
      char *op_end = strchr(rule, ':');
      char *suffix_end = op_end ? strrchr(rule, ':') : NULL;
      if (op_end && suffix_end > op_end) {
        *op_end = '\0';
        *suffix_end = '\0';
        const char *suffix = op_end + 1, *action = suffix_end + 1;
        const size_t suffix_len = strlen(suffix);
        if (!strcmp(rule, ops[op]) && suffix_len <= path_len && !strcmp(path + path_len - suffix_len, suffix)) {
          static const struct {
            const char *name;
            int value;
          } known[] = {{"ENOSPC", ENOSPC},    {"EIO", EIO},        {"EFBIG", EFBIG},       {"EDQUOT", EDQUOT},
                       {"EPERM", EPERM},      {"EACCES", EACCES},  {"EXDEV", EXDEV},       {"EROFS", EROFS},
                       {"SIGTERM", -SIGTERM}, {"SIGINT", -SIGINT}, {"PAUSE", ACTION_PAUSE}};
          for (size_t k = 0; k < sizeof known / sizeof known[0]; ++k)
            if (!strcmp(action, known[k].name))
              return known[k].value;
        }
      }
    }
    r += len;
    if (*r == ';')
      ++r;
  }
  return 0;
}

/* The action for an operation on descriptor fd (its path through /proc/self/fd). */
static int rule_for_fd(int op, int fd)
{
  if (!getenv("PHEW_IO_FAULTS"))
    return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0)
    return 0;
  path[n] = '\0';
  return rule_for(op, path);
}

/* Applies an action: returns 1 if the call must fail (errno set), 0 if it goes ahead. */
static int act(int action)
{
  if (action > 0) {
    errno = action;
    return 1;
  }
  const int saved = errno;
  if (action == ACTION_PAUSE) {
    const struct timespec pause = {30, 0};
    nanosleep(&pause, NULL); /* EINTR ends it early: the tool decides what happens next */
  } else if (action < 0) {
    raise(-action);
  }
  errno = saved;
  return 0;
}

/* The C library's function, looked up once per function rather than at every call: dlsym takes
 * the loader's lock, and the processes this is preloaded into (mpirun too, in tests/parallel)
 * may write from signal handlers. */
#define NEXT(name)                                        \
  ({                                                      \
    static __typeof__(&name) next_;                       \
    if (!next_)                                           \
      next_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name); \
    next_;                                                \
  })

ssize_t write(int fd, const void *buf, size_t n)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(pwrite)(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t offset)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(pwrite64)(fd, buf, n, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int count)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(writev)(fd, iov, count);
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(pwritev)(fd, iov, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off64_t offset)
{
  if (act(rule_for_fd(OP_WRITE, fd)))
    return -1;
  return NEXT(pwritev64)(fd, iov, count, offset);
}

ssize_t read(int fd, void *buf, size_t n)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(read)(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t offset)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(pread)(fd, buf, n, offset);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t offset)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(pread64)(fd, buf, n, offset);
}

ssize_t readv(int fd, const struct iovec *iov, int count)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(readv)(fd, iov, count);
}

ssize_t preadv(int fd, const struct iovec *iov, int count, off_t offset)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(preadv)(fd, iov, count, offset);
}

ssize_t preadv64(int fd, const struct iovec *iov, int count, off64_t offset)
{
  if (act(rule_for_fd(OP_READ, fd)))
    return -1;
  return NEXT(preadv64)(fd, iov, count, offset);
}

int rename(const char *from, const char *to)
{
  if (act(rule_for(OP_RENAME, from)))
    return -1;
  return NEXT(rename)(from, to);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to)
{
  if (act(rule_for(OP_RENAME, from)))
    return -1;
  return NEXT(renameat)(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags)
{
  if (act(rule_for(OP_RENAME, from)))
    return -1;
  return NEXT(renameat2)(from_dir, from, to_dir, to, flags);
}

int access(const char *path, int mode)
{
  if (act(rule_for(OP_ACCESS, path)))
    return -1;
  return NEXT(access)(path, mode);
}

/* open's mode argument is there only when a file may be created. */
static mode_t mode_of(int flags, va_list args)
{
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(args, unsigned) : 0;
}

int open(const char *path, int flags, ...)
{
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_of(flags, args);
  va_end(args);
  if (act(rule_for(OP_OPEN, path)))
    return -1;
  return NEXT(open)(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_of(flags, args);
  va_end(args);
  if (act(rule_for(OP_OPEN, path)))
    return -1;
  return NEXT(open64)(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_of(flags, args);
  va_end(args);
  if (act(rule_for(OP_OPEN, path)))
    return -1;
  return NEXT(openat)(dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...)
{
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_of(flags, args);
  va_end(args);
  if (act(rule_for(OP_OPEN, path)))
    return -1;
  return NEXT(openat64)(dir, path, flags, mode);
}
