/**
 * @class vtkPHEWFriendsOfFriends
 * @brief Friends-of-Friends groups of particles (phew_find_fof_groups).
 *
 * Input: a vtkPointSet (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset whose
 * blocks are point sets; each point is a particle (vtkPHEWPointsInput.h has the rules: order,
 * ghost points, types, the box). Two particles are friends when their distance (the nearest
 * image along periodic axes) is at most the linking length: LinkingLength times the mean
 * interparticle spacing (box volume / number of particles)^(1/3), or LinkingLength itself
 * with LinkingLengthIsAbsolute. Groups are the connected components; those with at least
 * MinimumMembers particles are numbered in catalogue order (decreasing number of particles,
 * equal counts by the smallest particle id).
 *
 * Output port 0: a shallow copy of the input plus the point array GroupId (-1: in no group).
 * Output port 1: the group catalogue (vtkTable; columns as the CLI's PREFIX-groups.csv:
 * GroupId, NumberOfParticles, Mass, CenterOfMassX/Y/Z, Radius, MinParticleId, and with a
 * Velocity array MeanVelocityX/Y/Z and VelocityDispersion), complete on the first process.
 * Output port 2: the Markers (vtkPolyData), one vertex per group with the Groups columns as
 * point data (shared), at its centre of mass; with the halo properties at its physics centre
 * (CenterX/Y/Z, where finite) with GlyphRadius = R200c (0 where NaN), for sphere glyphs
 * (vtkPHEWMarkers.h). Complete on the first process, empty on the others.
 *
 * Optional point arrays: Mass (input array 0), Velocity (1, three components), Id (2, unique
 * global ids; without it the position in the global order). In parallel (pvbatch or pvserver
 * under mpiexec) each process passes its points; the result is the same, bit for bit, for any
 * number of processes. A problem seen by any process stops all of them with one message.
 */
#ifndef vtkPHEWFriendsOfFriends_h
#define vtkPHEWFriendsOfFriends_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkPHEWAlgorithm.h"

struct phew_group_result;

class PHEWFILTERS_EXPORT vtkPHEWFriendsOfFriends : public vtkPHEWAlgorithm
{
public:
  static vtkPHEWFriendsOfFriends* New();
  vtkTypeMacro(vtkPHEWFriendsOfFriends, vtkPHEWAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// The output ports.
  enum
  {
    LABELS_PORT = 0,
    GROUPS_PORT = 1,
    MARKERS_PORT = 2,
    NUMBER_OF_PORTS = 3
  };

  ///@{
  /// The linking length: relative to the mean interparticle spacing (default 0.2), or a
  /// length in the points' units with LinkingLengthIsAbsolute.
  vtkSetMacro(LinkingLength, double);
  vtkGetMacro(LinkingLength, double);
  vtkSetMacro(LinkingLengthIsAbsolute, bool);
  vtkGetMacro(LinkingLengthIsAbsolute, bool);
  vtkBooleanMacro(LinkingLengthIsAbsolute, bool);
  ///@}

  ///@{
  /// Groups with fewer particles get GroupId -1 (default 20; 1 keeps every particle).
  vtkSetMacro(MinimumMembers, int);
  vtkGetMacro(MinimumMembers, int);
  ///@}

  // The box, periodic axes and threads: vtkPHEWAlgorithm.

protected:
  vtkPHEWFriendsOfFriends();
  ~vtkPHEWFriendsOfFriends() override;

  const char* GetFilterLabel() override { return "Friends-of-Friends"; }
  /// GroupId on the points.
  void ConfigurePointOptions(phew_adaptors::PointOptions& options) override;
  /// phew_find_fof_groups with this filter's parameters.
  int RunCore(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::InputAdaptor& adaptor) override;
  /// The Groups table (port 1) and the Markers (port 2).
  std::string FillOutputs(phew_adaptors::Context& context, vtkDataObject* labelled,
    vtkInformationVector* outputVector) override;
  void DescribeParameters(std::vector<std::string>& entries) override;
  void ReleaseResult() override;

  /// The Markers port: a vtkPolyData.
  int FillOutputPortInformation(int port, vtkInformation* info) override;

  phew_group_result* Result; // of the last run, until its outputs are made (owned)

  double LinkingLength = 0.2;
  bool LinkingLengthIsAbsolute = false;
  int MinimumMembers = 20;

private:
  vtkPHEWFriendsOfFriends(const vtkPHEWFriendsOfFriends&) = delete;
  void operator=(const vtkPHEWFriendsOfFriends&) = delete;
};

#endif
