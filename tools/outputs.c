#define _POSIX_C_SOURCE 200809L
#include "outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Linux's PATH_MAX; longer paths cannot be opened. */
enum { NAME_SIZE = 4096 };

static const char *const suffix[] = {
    "-patch.raw",         "-clump.raw",       "-halo.raw",  "-clumps.csv",      "-haloes.csv",
    "-dendrogram.csv",    "-density.raw",     "-group.raw", "-groups.csv",      "-boxes.csv",
    "-run.json",          "-groups-run.json", "-bound.raw", "-group-bound.raw", "-given-bound.raw",
    "-given-physics.csv", "-given-run.json",  "-tree.csv",  "-tree-run.json",   "" /* --hdf5: a path of its own */};
_Static_assert(sizeof suffix / sizeof suffix[0] == OUTPUT_COUNT, "one suffix per output");
static const char temporary_suffix[] = ".partial", backup_suffix[] = ".previous";

static char final_name[OUTPUT_COUNT][NAME_SIZE];
static char temporary_name[OUTPUT_COUNT][NAME_SIZE];
static char backup_name[OUTPUT_COUNT][NAME_SIZE];
static char directory[NAME_SIZE];
/* The outputs of this run (outputs_init's set); the others are never touched. */
static int in_use[OUTPUT_COUNT];

/* Who may touch the files. IDLE: nothing to clean up. ARMED: temporary files may exist, a
 * signal removes them. COMMITTING: rank 0 is renaming; a signal waits in pending_signal until
 * the renames are done or undone, so it never leaves a mix of old and new files. CLEANING: a
 * signal handler is removing the temporary files. An atomic int, because Open MPI's threads
 * may take the signal while the main thread commits. */
enum { IDLE, ARMED, COMMITTING, CLEANING };
static atomic_int state = IDLE;
/* Atomic too (not only sig_atomic_t): the handler may run in another thread than the commit,
 * and the commit must see a signal whose handler saw COMMITTING (see on_signal). */
static atomic_int pending_signal;

#if ATOMIC_INT_LOCK_FREE != 2
#error "the signal handler needs lock-free atomic ints"
#endif

static void remove_temporaries(void)
{
  for (int k = 0; k < OUTPUT_COUNT; ++k)
    if (in_use[k])
      unlink(temporary_name[k]); /* async-signal-safe; a missing file is fine */
}

/* Dies of sig with its default action, as if nothing had caught it (the parent sees the
 * signal in the exit status). */
static void die_of(int sig)
{
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, NULL);
  raise(sig); /* blocked while in the handler: delivered as soon as it returns */
}

/* Only async-signal-safe calls: unlink, sigaction, raise, and lock-free atomics. */
static void on_signal(int sig)
{
  /* recorded before looking at the state: if this handler sees COMMITTING, the commit's
   * later switch to IDLE comes after this store, so its check of pending_signal sees it */
  atomic_store(&pending_signal, sig);
  int expected = ARMED;
  if (atomic_compare_exchange_strong(&state, &expected, CLEANING))
    remove_temporaries();
  else if (expected == COMMITTING)
    return; /* outputs_commit dies of it once the files are consistent */
  die_of(sig);
}

static void catch_signals(void)
{
  static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k) {
    struct sigaction old, action;
    if (sigaction(signals[k], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
      continue; /* left ignored, as under nohup */
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t j = 0; j < sizeof signals / sizeof signals[0]; ++j)
      sigaddset(&action.sa_mask, signals[j]); /* one handler at a time per thread */
    action.sa_flags = SA_RESTART;
    sigaction(signals[k], &action, NULL);
  }
}

/* Whether output k belongs to the set, the physics files of finders not counted. */
static int in_set(int k, output_set set)
{
  const int group_file = k == OUTPUT_GROUP || k == OUTPUT_GROUPS_CSV;
  const int physics_file = k >= OUTPUT_BOUND;
  if (set == OUTPUTS_GIVEN)
    return k == OUTPUT_GIVEN_BOUND || k == OUTPUT_GIVEN_PHYSICS_CSV || k == OUTPUT_GIVEN_RUN;
  if (set == OUTPUTS_TREE)
    return k == OUTPUT_TREE_CSV || k == OUTPUT_TREE_RUN;
  if (physics_file)
    return 0;
  if (set == OUTPUTS_GROUPS || set == OUTPUTS_GROUPS_DENSITY)
    return group_file || k == OUTPUT_GROUPS_RUN || (k == OUTPUT_DENSITY && set == OUTPUTS_GROUPS_DENSITY);
  if (set == OUTPUTS_AMR)
    return k < OUTPUT_DENSITY || k == OUTPUT_BOXES_CSV || k == OUTPUT_RUN;
  return !group_file && k != OUTPUT_BOXES_CSV && k != OUTPUT_GROUPS_RUN &&
         (k != OUTPUT_DENSITY || set == OUTPUTS_POINTS);
}

/* The physics files a finder's run adds. */
static int physics_file_of(int k, output_set set)
{
  if (set == OUTPUTS_POINTS || set == OUTPUTS_AMR) /* AMR: --amr-particles */
    return k == OUTPUT_BOUND;
  if (set == OUTPUTS_GROUPS || set == OUTPUTS_GROUPS_DENSITY)
    return k == OUTPUT_GROUP_BOUND;
  return 0;
}

int outputs_init(const char *prefix, output_set set, int physics, const char *hdf5, char *message, size_t message_size)
{
  if (hdf5 && strlen(hdf5) + sizeof backup_suffix > NAME_SIZE) {
    snprintf(message, message_size, "--hdf5 path is too long: %zu characters", strlen(hdf5));
    return -1;
  }
  size_t longest_suffix = 0;
  for (int k = 0; k < OUTPUT_COUNT; ++k)
    longest_suffix = strlen(suffix[k]) > longest_suffix ? strlen(suffix[k]) : longest_suffix;
  const size_t longest = strlen(prefix) + longest_suffix + sizeof backup_suffix;
  if (longest > NAME_SIZE) {
    snprintf(message, message_size, "output prefix is too long: %zu characters, at most %d fit in a path",
             strlen(prefix), NAME_SIZE - 1 - (int)(longest_suffix + strlen(backup_suffix)));
    return -1;
  }
  for (int k = 0; k < OUTPUT_COUNT; ++k) {
    in_use[k] = k == OUTPUT_HDF5 ? hdf5 != NULL : in_set(k, set) || (physics && physics_file_of(k, set));
    const char *base = k == OUTPUT_HDF5 ? (hdf5 ? hdf5 : "") : prefix, *tail = k == OUTPUT_HDF5 ? "" : suffix[k];
    snprintf(final_name[k], NAME_SIZE, "%s%s", base, tail);
    snprintf(temporary_name[k], NAME_SIZE, "%s%s%s", base, tail, temporary_suffix);
    snprintf(backup_name[k], NAME_SIZE, "%s%s%s", base, tail, backup_suffix);
  }
  /* the directory the files go into: what comes before the last '/' */
  const char *slash = strrchr(prefix, '/');
  if (!slash)
    snprintf(directory, NAME_SIZE, ".");
  else if (slash == prefix)
    snprintf(directory, NAME_SIZE, "/");
  else
    snprintf(directory, NAME_SIZE, "%.*s", (int)(slash - prefix), prefix);
  atomic_store(&state, ARMED);
  catch_signals();
  return 0;
}

const char *outputs_temporary(int k) { return temporary_name[k]; }

/* Checks that the output directory can take new files. Returns 0 or -1 with message. */
static int check_directory(char *message, size_t message_size)
{
  struct stat st;
  if (stat(directory, &st) != 0) {
    if (errno == ENOENT)
      snprintf(message, message_size, "output directory '%s' does not exist", directory);
    else
      snprintf(message, message_size, "cannot use output directory '%s': %s", directory, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(message, message_size, "output directory '%s' is not a directory", directory);
    return -1;
  }
  if (access(directory, W_OK | X_OK) != 0) {
    snprintf(message, message_size, "cannot write into output directory '%s': %s", directory, strerror(errno));
    return -1;
  }
  return 0;
}

/* Checks that an existing file at name (if any) can be replaced by an output file. */
static int check_replaceable(const char *name, const char *role, char *message, size_t message_size)
{
  struct stat st;
  if (lstat(name, &st) != 0) {
    if (errno == ENOENT)
      return 0;
    snprintf(message, message_size, "cannot use %s '%s': %s", role, name, strerror(errno));
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(message, message_size, "%s '%s' is a directory, not a file", role, name);
    return -1;
  }
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    snprintf(message, message_size, "%s '%s' exists and is not a regular file", role, name);
    return -1;
  }
  /* a file the user cannot write (or an immutable one: EPERM even for root) is not replaced */
  if (S_ISREG(st.st_mode) && access(name, W_OK) != 0) {
    snprintf(message, message_size, "cannot replace %s '%s': %s", role, name, strerror(errno));
    return -1;
  }
  return 0;
}

/* Removes the temporary files of the first n outputs (the ones this run created). */
static void remove_created(int n)
{
  for (int k = 0; k < n; ++k)
    if (in_use[k])
      unlink(temporary_name[k]);
}

int outputs_prepare(char *message, size_t message_size)
{
  if (check_directory(message, message_size) != 0)
    return -1;
  for (int k = 0; k < OUTPUT_COUNT; ++k)
    if (in_use[k] && (check_replaceable(final_name[k], "output", message, message_size) != 0 ||
                      check_replaceable(temporary_name[k], "temporary file", message, message_size) != 0 ||
                      check_replaceable(backup_name[k], "backup name", message, message_size) != 0))
      return -1;
  for (int k = 0; k < OUTPUT_COUNT; ++k) {
    if (!in_use[k])
      continue;
    /* a new file of our own (O_EXCL), not one reached through a link left at that name by
     * an earlier run that was killed */
    unlink(temporary_name[k]);
    const int fd = open(temporary_name[k], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || close(fd) != 0) {
      snprintf(message, message_size, "cannot create '%s': %s", temporary_name[k], strerror(errno));
      remove_created(fd < 0 ? k : k + 1);
      return -1;
    }
  }
  return 0;
}

void outputs_discard(void) { remove_temporaries(); }

void outputs_done(void) { atomic_store(&state, IDLE); }

/* Appends to message (which holds the first failure) the text of a further one. */
static void append(char *message, size_t message_size, const char *format, const char *a, const char *b)
{
  const size_t used = strlen(message);
  if (used + 1 < message_size)
    snprintf(message + used, message_size - used, format, a, b);
}

int outputs_commit(char *message, size_t message_size)
{
  int expected = ARMED;
  if (!atomic_compare_exchange_strong(&state, &expected, COMMITTING)) {
    snprintf(message, message_size, "interrupted by a signal"); /* its handler is removing the files */
    return -1;
  }
  int moved[OUTPUT_COUNT] = {0}, placed[OUTPUT_COUNT] = {0}, ok = 1;
  /* first every previous file aside (a rename keeps it intact), then every new one in place */
  for (int k = 0; ok && k < OUTPUT_COUNT; ++k) {
    struct stat st;
    if (!in_use[k] || lstat(final_name[k], &st) != 0)
      continue; /* nothing there before */
    if (rename(final_name[k], backup_name[k]) != 0) {
      snprintf(message, message_size, "cannot move the previous '%s' aside to '%s': %s", final_name[k], backup_name[k],
               strerror(errno));
      ok = 0;
    } else {
      moved[k] = 1;
    }
  }
  for (int k = 0; ok && k < OUTPUT_COUNT; ++k) {
    if (!in_use[k])
      continue;
    if (rename(temporary_name[k], final_name[k]) != 0) {
      snprintf(message, message_size, "cannot rename '%s' to '%s': %s", temporary_name[k], final_name[k],
               strerror(errno));
      ok = 0;
    } else {
      placed[k] = 1;
    }
  }
  for (int k = 0; k < OUTPUT_COUNT; ++k) {
    if (!in_use[k])
      continue;
    if (ok) {
      if (moved[k])
        unlink(backup_name[k]);
      continue;
    }
    /* undo: what was there before goes back, what was not is removed */
    if (moved[k]) {
      if (rename(backup_name[k], final_name[k]) != 0)
        append(message, message_size, "; the previous '%s' is kept as '%s'", final_name[k], backup_name[k]);
    } else if (placed[k]) {
      unlink(final_name[k]);
    }
    unlink(temporary_name[k]);
  }
  atomic_store(&state, IDLE);
  const int sig = atomic_load(&pending_signal);
  if (sig)
    die_of(sig); /* the files are consistent now: all new, or all as before */
  return ok ? 0 : -1;
}
