/**
 * What the 3D view draws of a labelled dataset: the clumps alone, as polydata.
 *
 *  - images and AMR blocks: the outer faces of the cells with ClumpId >= 0, one quad per face
 *    between a clump cell and a cell outside every clump (or the edge of the block), facing
 *    out. Faces between two clumps are inside their union and are not drawn. With point
 *    data each point is the centre of a cell of one spacing. Ghost cells (vtkGhostType
 *    DUPLICATECELL) draw nothing but still hide the faces they touch.
 *  - particles (point sets, or composites of them): one vertex per particle with ClumpId >= 0.
 *
 * Cell data (images, AMR) or point data (particles): ClumpId (the active scalars), HaloId,
 * PeakPatchId and the density array under its own name, copied from the labelled cell or
 * particle. Each rank draws its own piece.
 */
#ifndef vtkPHEWClumpGeometry_h
#define vtkPHEWClumpGeometry_h

class vtkDataObject;
class vtkPolyData;

namespace phew_clump_geometry
{
/// Fill `geometry` from `labels` (the Labels output: image data, overlapping AMR or point
/// sets). densityName is the density array to copy (may be empty: none).
void Build(vtkDataObject* labels, const char* densityName, vtkPolyData* geometry);
}

#endif
