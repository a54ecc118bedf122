/**
 * Markers for glyphs: one vertex per catalogue row with the catalogue's columns as point data
 * (shared with the table, not copied). BuildVertices makes them for one table (the Groups of
 * Friends-of-Friends and HOP); Build for the PHEW Clump Finder: one vertex per clump at its
 * peak and one per halo at its centre of mass.
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
class vtkPolyData;
class vtkTable;

namespace phew_markers
{
/// The position columns of the catalogues.
extern const char* const PEAK[3];           // PeakX, PeakY, PeakZ
extern const char* const CENTRE_OF_MASS[3]; // CenterOfMassX, CenterOfMassY, CenterOfMassZ

/// `vertices` (emptied first): one vertex per row of `table`, every column as point data and
/// `scalars` the active scalars. A row's vertex is at its physics centre (CenterX/Y/Z) when
/// the table has the physics' columns (CenterX/Y/Z and R200c) and that centre is finite, else
/// at the row's `position` columns; with the physics, GlyphRadius = R200c (0 where NaN). A
/// table without the `position` columns (no run) gives no vertices.
void BuildVertices(
  vtkTable* table, const char* const position[3], const char* scalars, vtkPolyData* vertices);

/// The Clump Finder's multiblock: "Clump Peaks" from `clumps` (BuildVertices at the peaks)
/// and "Halo Centres" from `haloes` (at the centres of mass, or the head clump's centre).
void Build(vtkTable* clumps, vtkTable* haloes, vtkMultiBlockDataSet* markers);
}

#endif
