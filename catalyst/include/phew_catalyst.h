/* phew_catalyst: hand a running simulation's density grid and particles to ParaView Catalyst
 * pipelines (Python scripts that run the phew filters and write what they find), from C,
 * C++ or Fortran (module phew_catalyst, fortran/phew_catalyst.f90).
 *
 *   phew_catalyst *a;
 *   const char *scripts[] = {"clumps.py"};
 *   if (phew_catalyst_initialize(&a, 1, scripts, &comm) != 0)
 *     fprintf(stderr, "%s\n", phew_catalyst_message(a));   (a is still valid: finalize it)
 *   for each step:
 *     phew_catalyst_grid g;  phew_catalyst_grid_init(&g);  ... fill it ...
 *     if (phew_catalyst_execute(a, step, time, &g, NULL) != 0)
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
 *   "grid"       vtkImageData, this rank's block of cells, cell array named grid->name
 *                (the whole extent is the global mesh; the filters build their ghost cells)
 *   "particles"  vtkPolyData, this rank's particles as points (no vertex cells, so that no
 *                memory is added: show them with the Point Gaussian representation), point
 *                arrays "Mass", "Velocity" and "ParticleId" when given
 * Both carry field data "PeriodicBox" (origin x, y, z, size x, y, z; sizes 0 where an axis
 * is not periodic) so that scripts can set the filters' box and periodicity from the data.
 *
 * The environment variable PHEW_PLUGIN, unless already set, names the phew ParaView plugin
 * this library was built with, for the scripts' LoadPlugin. */
#ifndef PHEW_CATALYST_H
#define PHEW_CATALYST_H

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

/* Status of every call: the same on every rank. */
enum {
  PHEW_CATALYST_OK = 0,
  PHEW_CATALYST_ERROR_ARGUMENT = 1, /* a description that does not make sense (sizes, pointers) */
  PHEW_CATALYST_ERROR_SCRIPT = 2,   /* a script is missing, does not load, or raised */
  PHEW_CATALYST_ERROR_PIPELINE = 3, /* a filter or writer of a pipeline reported an error */
  PHEW_CATALYST_ERROR_MPI = 4       /* MPI is not initialised, or the communicator is unusable */
};

enum { PHEW_CATALYST_FLOAT32 = 0, PHEW_CATALYST_FLOAT64 = 1 };

/* This rank's block of a uniform mesh of cells. */
typedef struct phew_catalyst_grid {
  int64_t global_dims[3]; /* cells of the whole mesh along x, y, z */
  int64_t offset[3];      /* first cell of this rank's block */
  int64_t dims[3];        /* cells of this rank's block (0 on an axis: no cells here) */
  double origin[3];       /* corner of cell (0, 0, 0) */
  double spacing[3];      /* cell size */
  int periodic[3];
  int type;            /* PHEW_CATALYST_FLOAT32 or PHEW_CATALYST_FLOAT64 */
  const void *density; /* dims[0] * dims[1] * dims[2] values, x fastest, no ghost cells */
  const char *name;    /* the cell array's name; NULL: "density" */
} phew_catalyst_grid;

/* This rank's particles. */
typedef struct phew_catalyst_particles {
  int64_t n;
  int type;             /* of position, mass and velocity: PHEW_CATALYST_FLOAT32 or _FLOAT64 */
  const void *position; /* 3 per particle, x y z */
  const void *mass;     /* 1 per particle, or NULL */
  const void *velocity; /* 3 per particle, or NULL */
  const int64_t *id;    /* 1 per particle, unique over all ranks, or NULL */
  double box_origin[3]; /* the periodic box (read when an axis is periodic) */
  double box_size[3];
  int periodic[3];
} phew_catalyst_particles;

/* Zero everything, float64, name NULL. */
PHEW_CATALYST_API void phew_catalyst_grid_init(phew_catalyst_grid *grid);
PHEW_CATALYST_API void phew_catalyst_particles_init(phew_catalyst_particles *particles);

/* Start Catalyst on the communicator (the address of an MPI_Comm; NULL: MPI_COMM_WORLD; MPI
 * must be initialised) with n_scripts Catalyst Python scripts (version 1 or 2; a version 2
 * script starts with the line "# script-version: 2"). *adaptor is set even on failure (NULL
 * only when memory ran out), so that the message can be read; finalise it in any case. */
PHEW_CATALYST_API int phew_catalyst_initialize(phew_catalyst **adaptor, int n_scripts, const char *const *scripts,
                                               const void *mpi_comm);

/* Whether any pipeline wants data at this step, for simulations that prepare their arrays
 * only then (phew_catalyst_execute asks this itself). Collective; 1 or 0. */
PHEW_CATALYST_API int phew_catalyst_wants(phew_catalyst *adaptor, int64_t step, double time);

/* Run the pipelines that want this step on the grid and/or the particles (either may be NULL
 * on every rank; a rank with no cells or no particles passes dims 0 or n 0). */
PHEW_CATALYST_API int phew_catalyst_execute(phew_catalyst *adaptor, int64_t step, double time,
                                            const phew_catalyst_grid *grid, const phew_catalyst_particles *particles);

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
