/* The public calls' parts: the format from the path, the ranks' agreement, units. */
#ifndef PHEW_READERS_API_H
#define PHEW_READERS_API_H

#include "phew/phew_readers.h"
#include "read_error.h"

/* A public call given NULL for a required argument: PHEW_ERROR_ARGUMENT, with message (the
 * call's name and what must not be NULL) in the context when there is one. */
phew_status refuse_null_arguments(phew_context *context, const char *message);

/* The format PATH is in (options->format unless AUTO); -1 with e set when it cannot tell. */
int detect_format(const char *path, phew_snapshot_format requested, phew_snapshot_format *format, read_error *e);

/* Collective: every rank's e agreed (the worst status, the lowest rank's message); the
 * agreed status. */
phew_status agree_on_error(phew_context *context, read_error *e);

/* Collective, after every rank read its share: first and n_total, and the arrays of a rank
 * without particles shaped as the others' (type, velocity, fields), so that every rank
 * hands the same kind of set to the finders. */
phew_status agree_on_shape(phew_context *context, phew_particle_set *set, read_error *e);

/* Astronomers' units (PHEW_UNITS_ASTRO): the factors from code units for the snapshot's
 * lengths, masses and velocities; -1 (e set) for a snapshot that is not cosmological. */
int astro_factors(const phew_snapshot_info *info, double *length, double *mass, double *velocity, read_error *e);
/* The info's box and unit names in astronomers' units. */
void info_to_astro(phew_snapshot_info *info, double length, double mass, double velocity);

#endif
