/**
 * Markers for glyphs: one vertex per clump at its peak and one per halo at its centre of
 * mass, with the catalogue's columns as point data (shared with the tables, not copied).
 * A multiblock of two polydata blocks, "Clump Peaks" and "Halo Centres"; the scalars are
 * ClumpId and HaloId. Built from the Clumps and Haloes tables, so complete on rank 0 and
 * empty blocks elsewhere.
 *
 * When the physics of structures ran (the Clumps table has CenterX/Y/Z and R200c), a marker
 * sits at its structure's physics centre instead (the bound particle of lowest potential), and
 * both blocks get GlyphRadius = R200c (0 where R200c is NaN: no bound particle, or no
 * cosmology), for sphere glyphs of radius R200c. A halo's structure is its head clump (the
 * clump with the halo's PeakId, with all its substructure); the Halo Centres block also gets
 * that clump's R200c. A marker whose centre is NaN (no bound particle) keeps the old position.
 */
#ifndef vtkPHEWMarkers_h
#define vtkPHEWMarkers_h

class vtkMultiBlockDataSet;
class vtkTable;

namespace phew_markers
{
void Build(vtkTable* clumps, vtkTable* haloes, vtkMultiBlockDataSet* markers);
}

#endif
