/* The format of a snapshot from its path (phew_read_options.format = PHEW_FORMAT_AUTO). */
#include "api.h"
#include "gadget.h"
#include "paths.h"
#include "ramses.h"

#include <stdio.h>

const char *phew_snapshot_format_name(phew_snapshot_format format)
{
  switch (format) {
  case PHEW_FORMAT_RAMSES: return "RAMSES";
  case PHEW_FORMAT_GADGET_HDF5: return "GADGET HDF5";
  default: return "automatic";
  }
}

int detect_format(const char *path, phew_snapshot_format requested, phew_snapshot_format *format, read_error *e)
{
  if (!path || !path[0])
    return read_fail(e, PHEW_ERROR_ARGUMENT, "no snapshot path was given");
  if (requested == PHEW_FORMAT_RAMSES || requested == PHEW_FORMAT_GADGET_HDF5) {
    *format = requested;
    return 0;
  }
  if (requested != PHEW_FORMAT_AUTO)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "unknown snapshot format %d", (int)requested);
  if (!path_exists(path))
    return read_fail_errno(e, "open", path);
  if (ramses_recognises(path))
    *format = PHEW_FORMAT_RAMSES;
  else if (gadget_recognises(path))
    *format = PHEW_FORMAT_GADGET_HDF5;
  else
    return read_fail(e, PHEW_ERROR_ARGUMENT,
                     "cannot tell the format of %s: RAMSES outputs are opened by their folder output_NNNNN or "
                     "their info_NNNNN.txt, GADGET-style HDF5 snapshots by snap_NNN.hdf5 or snap_NNN.0.hdf5 "
                     "(or name the format)",
                     path);
  return 0;
}

phew_snapshot_format phew_snapshot_format_of(const char *path)
{
  read_error e;
  read_error_init(&e);
  if (!path || !path_exists(path))
    return PHEW_FORMAT_AUTO;
  if (ramses_recognises(path)) {
    ramses_info info;
    return ramses_locate(path, &info, &e) == 0 ? PHEW_FORMAT_RAMSES : PHEW_FORMAT_AUTO;
  }
  gadget_snapshot snapshot;
  if (gadget_recognises(path) && gadget_open_snapshot(path, &snapshot, &e) == 0)
    return PHEW_FORMAT_GADGET_HDF5;
  return PHEW_FORMAT_AUTO;
}
