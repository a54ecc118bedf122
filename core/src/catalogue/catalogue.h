/* From the stages' result to what the caller gets (paper, section 2.6): exact sums over the
 * cells of every structure (properties.c), the catalogue of clumps and haloes with the
 * labels of every cell (catalogue.c), the dendrogram (hierarchy.c, hierarchy.h), the column
 * lists of the tables (columns.c) and where the dendrogram's nodes go in a drawing
 * (dendrogram_layout.c). */
#ifndef PHEW_CATALOGUE_H
#define PHEW_CATALOGUE_H

#include "segmentation.h"

/* ---- per-structure sums and the values derived from them (properties.c) ------------------ */
typedef struct sums {
  int64_t n_cells;
  exact_sum mass;      /* sum of rho (grids: the cell volume is a common factor) or rho * volume */
  exact_sum moment[3]; /* sum of the mass terms times the displacement from the reference cell
                          (grids: in cells; graphs: in the positions' units) */
  exact_sum volume;    /* graphs: sum of cell volumes */
  double min_density;
  /* particles: the sum of m v (with velocities); then, once the centre of mass and the mean
   * velocity are known, the sum of m |v - mean|^2 and the largest squared distance of a
   * member from the centre */
  exact_sum momentum[3];
  exact_sum dispersion;
  double max_distance2;
} sums;

void sums_clear(sums *s);
/* Empty sums of a structure with this peak density, ready for sums_accumulate. */
void sums_start(sums *s, const mesh *m, double peak_density);
void sums_merge(sums *to, const sums *from);

/* One kind of structure to sum cells into: the structure of every peak (-1: none), the cell
 * coordinates of each structure's peak (3 per structure), their sums; grids and AMR also need
 * the number of structures, each one's head peak and the peaks' densities (its terms' bound). */
typedef struct sum_target {
  const int64_t *structure_of_peak;
  const double *reference;
  sums *out;
  int64_t n;
  const int64_t *head;
  const double *peak_density;
} sum_target;

/* The bit lengths of the largest terms a structure of this peak density can have: |term| <
 * 2^bits for its mass, each moment and (AMR) volume; its sums' windows are placed by them. */
typedef struct term_bits {
  int64_t mass, moment[3], volume;
} term_bits;
void sums_term_bits(const mesh *m, double peak_density, term_bits *bits);

/* Add every active test cell to the sums of its structure, for each target, in one pass,
 * ticking rc (on rc's threads for grids and AMR); leaves early (the sums unfinished) when rc
 * says stop. PHEW_ERROR_MEMORY when out of memory. */
phew_status sums_accumulate(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                            int n_targets, run_control *rc);
/* The grids' and AMR's part of it (cell_sums.c): the sums started (sums_start). */
phew_status sums_accumulate_cells(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                                  int n_targets, run_control *rc);
/* Particles, second pass: the spread of every structure about its centre. centre holds 6
 * values per structure (of target.reference's structures): the centre of mass in cell
 * coordinates (unwrapped) and the mean velocity; only n_cells (the members seen),
 * dispersion and max_distance2 of the out sums are written. */
void sums_accumulate_spread(const mesh *m, const int64_t *cell_peak, const sum_target *targets,
                            const double *const *centre, int n_targets);
/* Adds only the second-pass values (dispersion, max_distance2) of from. */
void sums_merge_spread(sums *to, const sums *from);
/* Particles: the centre of mass (cell coordinates, unwrapped) and mean velocity (0 without
 * velocities) of a structure from its first-pass sums. */
void sums_centre(const mesh *m, const sums *s, const double reference[3], double out[6]);
/* The mass in the user's units (grids: times the cell volume), before any range check. */
wide_float sums_mass_value(const mesh *m, const exact_sum *mass);
/* value as a double, or -1 with why saying that the "what" (mass, volume) of the object
 * ("the clump whose peak is cell 12") is beyond the double range, and what to rescale (the
 * density or the cell size; of particles, their masses or positions). */
int sums_to_double(const mesh *m, wide_float value, const char *what, const char *object, double *out, char *why,
                   size_t why_size);
/* Mass, volume, mean density, minimum density, peak position and centre of mass of o; -1
 * (why filled) when the mass or the volume does not fit in a double. */
int sums_values(const mesh *m, const sums *s, const double reference[3], const char *object, phew_object *o, char *why,
                size_t why_size);

/* ---- hierarchy and catalogue (hierarchy.c, catalogue.c) ----------------------------------- */
/* PHEW_CANCELLED (on every rank) when rc says stop while the cells are summed or labelled. */
phew_status catalogue_build(const mesh *m, const field *f, const phew_params *params, peak_comm *pc,
                            const merge_state *noise, const merge_state *saddle, run_control *rc, phew_labels *labels,
                            call_result *result);

#endif
