/* phew_catalyst: hand a running simulation's density grid and particles to ParaView Catalyst
 * pipelines (Python scripts that run the phew filters and write what they find), from C,
 * C++ or Fortran (module phew_catalyst, fortran/phew_catalyst.f90).
 *
 * The grid and the particles are described with the core's own types (phew/phew.h):
 * phew_grid for this rank's block of cells, phew_points for its particles, phew_scalar_type
 * (PHEW_FLOAT32, PHEW_FLOAT64) for their arrays, so that a simulation that calls libphew
 * directly and one that goes through Catalyst fill the same structures.
 *
 *   phew_catalyst *a;
 *   const char *scripts[] = {"clumps.py"};
 *   if (phew_catalyst_initialize(&a, 1, scripts, &comm) != 0)
 *     fprintf(stderr, "%s\n", phew_catalyst_message(a));   (a is still valid: finalize it)
 *   for each step:
 *     phew_grid g;  phew_grid_init_whole(&g, nx, ny, nz);  ... this rank's block, see below ...
 *     if (phew_catalyst_execute(a, step, time, &g, rho, PHEW_FLOAT64, NULL, NULL) != 0)
 *       ... phew_catalyst_message(a) says why; go on or stop, as the simulation decides ...
 *   phew_catalyst_finalize(a);       (before MPI_Finalize)
 *
 * Every function is collective over the communicator given at initialisation and returns the
 * same status on every rank, with the same message: a failure on one rank (a script that
 * does not load or raises, a filter that refuses the data, such as a NaN density) is reported
 * on all of them, and no rank is left waiting.
 *
 * No copies: the VTK arrays the pipelines see wrap the simulation's own arrays. They are read
 * only during phew_catalyst_execute and must stay valid and unchanged until it returns; the
 * adaptor drops its references before returning, and nothing is ever written to them or freed.
 * The pipelines' own outputs (labels, tables) are theirs.
 *
 * What the scripts see, by channel name (the producer of a Catalyst v2 script is
 * TrivialProducer(registrationName=NAME)):
 *   "grid"       vtkImageData, this rank's block of cells, cell array named density_name
 *                (the whole extent is the global mesh; the filters build their ghost cells)
 *   "particles"  vtkPolyData, this rank's particles as points (no vertex cells, so that no
 *                memory is added: show them with the Point Gaussian representation), point
 *                arrays "Mass", "Velocity" and "ParticleId" when given
 * Both carry field data "PeriodicBox" (origin x, y, z, size x, y, z; sizes 0 where an axis
 * is not periodic) so that scripts can set the filters' box and periodicity from the data.
 *
 * The environment variable PHEW_PLUGIN, unless already set, names the phew ParaView plugin
 * this library was built with, for the scripts' LoadPlugin.
 *
 * Linking: the adaptor's CMake target (phew::catalyst) brings libphew with it, for
 * phew_grid_init_whole and phew_points_init, and so does pkg-config (phew_catalyst.pc
 * requires phew). */
#ifndef PHEW_CATALYST_H
#define PHEW_CATALYST_H

#include <phew/phew.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PHEW_CATALYST_API __attribute__((visibility("default")))
#else
#define PHEW_CATALYST_API
#endif

typedef struct phew_catalyst phew_catalyst;

/* Status of every call: the same on every rank. The adaptor's own codes: they name failures
 * (scripts, Catalyst's pipelines) that the core's phew_status does not have. */
enum {
  PHEW_CATALYST_OK = 0,
  PHEW_CATALYST_ERROR_ARGUMENT = 1, /* a description that does not make sense (sizes, pointers) */
  PHEW_CATALYST_ERROR_SCRIPT = 2,   /* a script is missing, does not load, or raised */
  PHEW_CATALYST_ERROR_PIPELINE = 3, /* a filter or writer of a pipeline reported an error */
  PHEW_CATALYST_ERROR_MPI = 4       /* MPI is not initialised, or the communicator is unusable */
};

/* Start Catalyst on the communicator (the address of an MPI_Comm; NULL: MPI_COMM_WORLD; MPI
 * must be initialised) with n_scripts Catalyst Python scripts (version 1 or 2; a version 2
 * script starts with the line "# script-version: 2"). *adaptor is set even on failure (NULL
 * only when memory ran out), so that the message can be read; finalise it in any case. */
PHEW_CATALYST_API int phew_catalyst_initialize(phew_catalyst **adaptor, int n_scripts, const char *const *scripts,
                                               const void *mpi_comm);

/* Whether any pipeline wants data at this step, for simulations that prepare their arrays
 * only then (phew_catalyst_execute asks this itself). Collective; 1 or 0. */
PHEW_CATALYST_API int phew_catalyst_wants(phew_catalyst *adaptor, int64_t step, double time);

/* Run the pipelines that want this step on the grid and/or the particles. Either may be NULL,
 * on every rank alike (the same channels everywhere); a rank with no cells or no particles
 * passes an empty block (active_dims 0 on an axis) or n 0.
 *
 * grid: this rank's block of a uniform mesh of cells, in global cell indices (global_dims,
 *   active_offset, active_dims, origin: the corner of cell (0, 0, 0), spacing > 0, periodic).
 *   The adaptor takes no ghost cells: the stored box must be the active box
 *   (stored_offset == active_offset, stored_dims == active_dims), else PHEW_CATALYST_ERROR_ARGUMENT.
 *   phew_grid_init_whole(&g, nx, ny, nz) sets the whole mesh on one rank (origin 0, spacing 1,
 *   not periodic); for a block set stored_offset and active_offset to its first cell and
 *   stored_dims and active_dims to its cells. phew_grid_block and phew_grid_decompose give a
 *   balanced block with ghost layers: copy active_offset and active_dims into stored_offset
 *   and stored_dims before passing it (and pass only the active cells' densities). At most
 *   2^31 - 2 cells along an axis (VTK's extents).
 * density: active_dims[0] * active_dims[1] * active_dims[2] values of density_type
 *   (PHEW_FLOAT32 or PHEW_FLOAT64), x fastest; NULL only for an empty block.
 * density_name: the cell array's name; NULL: "density".
 * particles: this rank's particles (phew_points_init, then n, type, position and whichever of
 *   mass, velocity, id the simulation has; id unique over all ranks): position, mass and
 *   velocity of particles->type; has_box with box_origin and box_size, and periodic (which
 *   needs the box). n_neighbours and n_density_neighbours are not used by the adaptor (the
 *   scripts' filters have their own). */
PHEW_CATALYST_API int phew_catalyst_execute(phew_catalyst *adaptor, int64_t step, double time, const phew_grid *grid,
                                            const void *density, phew_scalar_type density_type,
                                            const char *density_name, const phew_points *particles);

/* Why the last call failed ("" after a success). Valid until the next call. */
PHEW_CATALYST_API const char *phew_catalyst_message(const phew_catalyst *adaptor);

/* Seconds spent in the last phew_catalyst_execute: in all, and inside the pipelines (the
 * scripts: filters and writers). The difference is the adaptor's own cost. */
PHEW_CATALYST_API void phew_catalyst_timing(const phew_catalyst *adaptor, double *total, double *pipelines);

/* Stop Catalyst and free the adaptor; collective; call it before MPI_Finalize. NULL is fine. */
PHEW_CATALYST_API void phew_catalyst_finalize(phew_catalyst *adaptor);

/* For Fortran (module phew_catalyst): the scripts one after another, each ended by a NUL, and
 * a Fortran communicator handle (converted with MPI_Comm_f2c). */
PHEW_CATALYST_API int phew_catalyst_initialize_f(phew_catalyst **adaptor, int n_scripts, const char *scripts,
                                                 int fortran_comm);

#ifdef __cplusplus
}
#endif

#endif
