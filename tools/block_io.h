/* Reading and writing this process's block of a raw cube (x fastest, little-endian, no
 * header). Every process reads and writes only its own active cells, with pread/pwrite at
 * their places in the file (serial, the block is the whole cube); the ghost cells come from
 * their owners. */
#ifndef PHEW_BLOCK_IO_H
#define PHEW_BLOCK_IO_H

#include "cli_procs.h"
#include "phew/phew.h"

#include <stddef.h>
#include <stdint.h>

/* Collective. Fills values (value_size bytes per stored cell of g): the active box from the
 * file at path, the ghost cells from the ranks that own them. Returns 0, or -1 on every rank
 * with the same message. */
int block_read(const procs *p, const char *path, const phew_grid *g, size_t value_size, void *values, char *message,
               size_t message_size);

/* Collective. Writes the active cells of three label arrays (one value per stored cell of g)
 * at their places in the files at paths, which must exist (rank 0 creates them), the three
 * at once; int32: as 4-byte integers, the arrays narrowed in place (their values must fit).
 * Returns 0, or -1 on every rank with the same message (the first file's failure first). */
int block_write_labels(const procs *p, const char *const paths[3], const phew_grid *g, int64_t *const labels[3],
                       int int32, char *message, size_t message_size);

#endif
