/**
 * Markers for glyphs: one vertex per clump at its peak and one per halo at its centre of
 * mass, with the catalogue's columns as point data (shared with the tables, not copied).
 * A multiblock of two polydata blocks, "Clump Peaks" and "Halo Centres"; the scalars are
 * ClumpId and HaloId. Built from the Clumps and Haloes tables, so complete on rank 0 and
 * empty blocks elsewhere.
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
