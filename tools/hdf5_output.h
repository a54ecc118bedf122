/* --hdf5 FILE: the run's catalogue as HDF5 (libphew_readers' phew_write_catalogue_hdf5): the
 * tables of the run's kind ("Clumps", "Haloes", "Dendrogram" for PHEW; "Groups" for a halo
 * finder; "Structures" for --groups), the physics columns joined to the structures' table with
 * the membership lists, a "units" attribute per column, and the run record as the root's
 * "run_record" attribute. */
#ifndef PHEW_HDF5_OUTPUT_H
#define PHEW_HDF5_OUTPUT_H

#include "cli_options.h"
#include "cli_procs.h"
#include "run_record.h"

/* Collective, once rank 0 has written the run record into record_path: writes the catalogue
 * into the temporary file of OUTPUT_HDF5. 0, or -1 on every rank after all_ok. */
int hdf5_output_write(const procs *p, const options *o, const run_facts *facts, const char *record_path);

#endif
