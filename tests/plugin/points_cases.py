"""Particles for the pvbatch tests of the PHEW plugin's point path (test_plugin_points*.py,
test_plugin_pvserver.py): the particle set, an independent numpy reference of the density,
checks of a catalogue against the labelled particles, the command-line tool's particle mode,
and the Programmable Source / Filter scripts that give each rank its share of the particles
and write what each rank gets back.

The particles: a periodic unit box with five Gaussian blobs (one across the x = 0 face, two
close enough to share a saddle) on a uniform background; masses in [1, 2), velocities (a bulk
velocity per blob plus noise) and unique ids that are not the input order.
"""
import glob
import os
import subprocess

import numpy as np

import phew_plugin_testing as pt

N_BACKGROUND = 1200
BLOBS = [  # centre, sigma, count, bulk velocity
    ((0.22, 0.30, 0.30), 0.025, 400, (1.0, 0.0, 0.0)),
    ((0.33, 0.34, 0.31), 0.020, 250, (0.5, 0.5, 0.0)),  # next to the first
    ((0.70, 0.60, 0.55), 0.040, 450, (0.0, -1.0, 0.0)),
    ((0.78, 0.68, 0.60), 0.020, 150, (0.0, -0.5, 0.5)),  # inside the third's outskirts
    ((0.02, 0.75, 0.70), 0.030, 350, (0.0, 0.0, 2.0)),  # across the x = 0 face
    ((0.55, 0.15, 0.85), 0.025, 250, (-1.0, 1.0, 0.0)),
]
THRESHOLD = 3.0  # in units of the mean density (estimated densities)
SADDLE = 6.0
N_DENS = 64
N_NEIGHBOURS = 16
ANSWERS = "points-answers.npz"  # written by test_plugin_points.py into --answers-dir

# The finder's properties of the base case (the particles' own box, periodic; masses,
# velocities; saddle merging) and of its Particle Density.
PERIODIC_BOX = dict(BoxFromDataBounds=0, BoxOrigin=[0.0, 0.0, 0.0], BoxSize=[1.0, 1.0, 1.0],
                    PeriodicX=1, PeriodicY=1, PeriodicZ=1)
BASE = dict(PERIODIC_BOX, Mass=["POINTS", "mass"], Velocity=["POINTS", "vel"], SaddleMerging=1, SaddleThreshold=SADDLE)
DENSITY_BASE = dict(PERIODIC_BOX, Mass=["POINTS", "mass"])


def make_particles(seed=7):
    """positions (N, 3) float64 in [0, 1), masses (N,), velocities (N, 3), ids (N,) int64."""
    rng = np.random.default_rng(seed)
    parts, vels = [], []
    for centre, sigma, count, bulk in BLOBS:
        parts.append(np.asarray(centre) + sigma * rng.standard_normal((count, 3)))
        vels.append(np.asarray(bulk) + 0.1 * rng.standard_normal((count, 3)))
    parts.append(rng.random((N_BACKGROUND, 3)))
    vels.append(0.3 * rng.standard_normal((N_BACKGROUND, 3)))
    order = rng.permutation(sum(len(p) for p in parts))  # blobs and background mixed
    pos = np.mod(np.concatenate(parts), 1.0)[order]
    pos[pos >= 1.0] = 0.0  # np.mod of a tiny negative value may round to 1.0
    vel = np.concatenate(vels)[order]
    mass = 1.0 + rng.random(len(pos))
    ids = rng.permutation(len(pos)).astype(np.int64) * 3 + 5
    return pos, mass, vel, ids


def save_particles(path, pos, mass, vel, ids, rho=None):
    """The particles for share_source (with rho: also the point array "rho")."""
    extra = {} if rho is None else dict(rho=rho)
    np.savez(path, pos=pos, mass=mass, vel=vel, ids=ids, **extra)
    return path


# ---------------------------------------------------------------------------------------------
# Independent reference of the density (scipy's kd-tree for the smoothing lengths, numpy sums)


def m4(r, h):
    q = r / h
    w = np.where(q < 1.0, 1.0 - 1.5 * q ** 2 + 0.75 * q ** 3, np.where(q < 2.0, 0.25 * (2.0 - q) ** 3, 0.0))
    return w / (np.pi * h ** 3)


def reference_density(pos, mass=None, box=(1.0, 1.0, 1.0), periodic=True, n_dens=N_DENS, volume=None):
    """HOP's symmetrised SPH density: h_i = half the distance to the (n_dens + 1)-th nearest
    particle (itself counted first), rho_i = sum_j m_j [W(r_ij, h_i) + W(r_ij, h_j)] / 2 over
    all j, in units of the total mass over the box volume (`volume`, default the box's). The
    pairs come from scipy's kd-tree (W(r, h) is 0 from r = 2h on), the sums from numpy."""
    from scipy.spatial import cKDTree
    pos = np.asarray(pos, dtype=np.float64)
    mass = np.ones(len(pos)) if mass is None else np.asarray(mass, dtype=np.float64)
    box = np.asarray(box, dtype=np.float64)
    tree = cKDTree(pos, boxsize=box if periodic else None)
    dist, _ = tree.query(pos, k=n_dens + 1)
    h = 0.5 * dist[:, n_dens]
    # pairs (i, j) with r_ij <= 2 h_i: W(r_ij, h_i) counts for rho_i, W(r_ij, h_i) of the
    # pair seen from j counts for rho_j (the sum is symmetric)
    balls = tree.query_ball_point(pos, r=2.0 * h * (1 + 1e-12))
    i = np.repeat(np.arange(len(pos)), [len(b) for b in balls])
    j = np.concatenate([np.asarray(b, dtype=np.int64) for b in balls])
    d = pos[i] - pos[j]
    if periodic:
        d -= box * np.round(d / box)
    r = np.sqrt(np.sum(d * d, axis=1))
    w = m4(r, h[i])
    rho = np.zeros(len(pos))
    np.add.at(rho, i, 0.5 * mass[j] * w)  # W(r_ij, h_i) in rho_i
    np.add.at(rho, j, 0.5 * mass[i] * w)  # W(r_ji, h_i) in rho_j
    volume = float(np.prod(box)) if volume is None else volume
    return rho / (mass.sum() / volume)


# ---------------------------------------------------------------------------------------------
# A catalogue against the labelled particles


def nearest_image(d, box, periodic):
    return d - box * np.round(d / box) if periodic else d


def check_catalogue(check, label, table, labels, density, pos, mass, vel, ids, box=(1.0, 1.0, 1.0), periodic=True,
                    id_column="ClumpId", threshold=THRESHOLD):
    """Every row of a clump or halo table against the particles labelled with its id: count,
    mass, peak particle (id, density, position, its own labels), densest member, minimum
    density, centre of mass, radius, mean velocity and dispersion; particles at or below the
    threshold are unlabelled. Returns the number of rows."""
    box = np.asarray(box, dtype=np.float64)
    rows = pt.table_as_lists(table)
    member_of = labels[id_column]
    mass = np.ones(len(pos)) if mass is None else mass
    check.check(bool(np.all(labels["PeakPatchId"][density <= threshold] == -1)),
                "%s: particles at or below the threshold are in peak patches" % label)
    check.check(bool(np.all(labels["PeakPatchId"][density > threshold] >= 0)),
                "%s: particles above the threshold are outside every peak patch" % label)
    given_ids = ids if ids is not None else np.arange(len(pos))
    for row, object_id in enumerate(rows.get(id_column, [])):
        what = "%s: %s %d" % (label, id_column, object_id)
        check.check(object_id == row, "%s is in row %d" % (what, row))
        members = member_of == object_id
        n = int(members.sum())
        check.check(n == rows["NumberOfParticles"][row], "%s: %d particles labelled, NumberOfParticles %d"
                    % (what, n, rows["NumberOfParticles"][row]))
        if n == 0:
            continue
        m = mass[members].sum()
        check.check(abs(m - rows["Mass"][row]) <= 1e-12 * m, "%s: Mass %r, members' mass %r" % (what, rows["Mass"][row], m))
        peak = np.nonzero(given_ids == rows["PeakId"][row])[0]
        if not check.check(len(peak) == 1, "%s: PeakId %d is no particle's id" % (what, rows["PeakId"][row])):
            continue
        p = peak[0]
        check.check(bool(members[p]), "%s: its peak particle is not a member" % what)
        check.check(density[p] == rows["PeakDensity"][row], "%s: PeakDensity %r, the peak particle's %r"
                    % (what, rows["PeakDensity"][row], density[p]))
        check.check(labels["PeakPatchId"][p] == rows["PeakId"][row], "%s: the peak particle's PeakPatchId is %d"
                    % (what, labels["PeakPatchId"][p]))
        check.check(density[members].max() == density[p], "%s: a member is denser than the peak" % what)
        check.check(density[members].min() == rows["MinDensity"][row], "%s: MinDensity %r, members' minimum %r"
                    % (what, rows["MinDensity"][row], density[members].min()))
        peak_xyz = [rows["PeakX"][row], rows["PeakY"][row], rows["PeakZ"][row]]
        check.check(np.array_equal(pos[p], peak_xyz), "%s: PeakX/Y/Z %s, the particle is at %s" % (what, peak_xyz, pos[p]))
        offsets = nearest_image(pos[members] - pos[p], box, periodic)
        com = pos[p] + (mass[members, None] * offsets).sum(axis=0) / m
        if periodic:
            com = np.mod(com, box)
        got = np.array([rows["CenterOfMassX"][row], rows["CenterOfMassY"][row], rows["CenterOfMassZ"][row]])
        check.check(bool(np.all(np.abs(nearest_image(got - com, box, periodic)) <= 1e-12)),
                    "%s: centre of mass %s, expected %s" % (what, got, com))
        radius = np.sqrt((nearest_image(pos[members] - com, box, periodic) ** 2).sum(axis=1)).max()
        check.check(abs(radius - rows["Radius"][row]) <= 1e-12, "%s: Radius %r, expected %r"
                    % (what, rows["Radius"][row], radius))
        if vel is not None:
            mean = (mass[members, None] * vel[members]).sum(axis=0) / m
            got = np.array([rows["MeanVelocityX"][row], rows["MeanVelocityY"][row], rows["MeanVelocityZ"][row]])
            check.check(bool(np.all(np.abs(got - mean) <= 1e-12 * (1 + np.abs(mean)))),
                        "%s: mean velocity %s, expected %s" % (what, got, mean))
            dispersion = np.sqrt((mass[members] * ((vel[members] - mean) ** 2).sum(axis=1)).sum() / m)
            check.check(abs(dispersion - rows["VelocityDispersion"][row]) <= 1e-12 * (1 + dispersion),
                        "%s: VelocityDispersion %r, expected %r" % (what, rows["VelocityDispersion"][row], dispersion))
    return len(rows.get(id_column, []))


# ---------------------------------------------------------------------------------------------
# The command-line tool's particle mode (phew --points)


def cli_has_points(cli):
    try:
        out = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=60,
                             env=pt.env_without_mpi_launcher())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--points" in out.stdout + out.stderr


def run_cli_points(cli, prefix, pos, threshold, dtype=np.float64, mass=None, vel=None, ids=None, density=None,
                   box=(1.0, 1.0, 1.0), periodic=True, saddle=None, n_neighbours=None, n_dens=None):
    """Writes the particle files and runs `phew --points`; returns (labels with Density,
    tables) as pt.read_cli_outputs does, plus the density."""
    def raw(name, values, kind):
        path = "%s-%s.raw" % (prefix, name)
        np.ascontiguousarray(values, dtype=np.dtype(kind).newbyteorder("<")).tofile(path)
        return path
    command = [cli, "--points", raw("pos", pos, dtype), "--type", "float32" if dtype == np.float32 else "float64",
               "--box"] + [repr(float(b)) for b in box] + ["--threshold", repr(float(threshold)), "--output", prefix]
    if periodic:
        command.append("--periodic")
    if mass is not None:
        command += ["--masses", raw("mass", mass, dtype)]
    if vel is not None:
        command += ["--velocities", raw("vel", vel, dtype)]
    if ids is not None:
        command += ["--ids", raw("ids", ids, np.int64)]
    if density is not None:
        command += ["--density", raw("given", density, dtype)]
    if saddle is not None:
        command += ["--saddle", repr(float(saddle))]
    if n_neighbours is not None:
        command += ["--neighbours", str(n_neighbours)]
    if n_dens is not None:
        command += ["--density-neighbours", str(n_dens)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=pt.env_without_mpi_launcher())
    if done.returncode != 0:
        raise RuntimeError("phew failed (%d): %s\n%s" % (done.returncode, " ".join(command), done.stderr))
    labels, tables = pt.read_cli_outputs(prefix)
    labels["Density"] = np.fromfile(prefix + "-density.raw", dtype="<f8")
    return labels, tables


# ---------------------------------------------------------------------------------------------
# Shares of the particles per rank, and what each rank gets back (scripts of Programmable
# Source / Filter; they run on every rank, in the namespace of the test script, with
# numpy_interface's all, any, max, min, sum... imported into it: the scripts and the test
# scripts use none of these builtins). Each point carries its index in the file
# ("InputIndex") so that the collected labels can be put back in the file's order.

# mode "contiguous": rank r holds the r-th of n consecutive runs of the particles, in order.
# mode "scattered": rank r holds the particles i with (7 i + 3) mod n == r, in reverse order.
# mode "rank0_empty": rank 0 holds nothing, ranks 1..n-1 consecutive runs (one rank: all).
# partitions 2: the share is split in two partitions of a vtkPartitionedDataSet.
SHARE_SCRIPT = """
def _phew_share(algorithm):
    import numpy
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkPolyData
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    controller = vtkMultiProcessController.GetGlobalController()
    rank = controller.GetLocalProcessId() if controller else 0
    n = controller.GetNumberOfProcesses() if controller else 1
    data = numpy.load({path!r})
    total = len(data['pos'])
    mode = {mode!r}
    if mode == 'contiguous':
        mine = numpy.array_split(numpy.arange(total), n)[rank]
    elif mode == 'scattered':
        index = numpy.arange(total)
        mine = index[(7 * index + 3) % n == rank][::-1]
    elif n == 1:
        mine = numpy.arange(total)
    elif rank == 0:
        mine = numpy.arange(0)
    else:
        mine = numpy.array_split(numpy.arange(total), n - 1)[rank - 1]

    def polydata(which):
        out = vtkPolyData()
        points = vtkPoints()
        points.SetData(numpy_support.numpy_to_vtk(numpy.ascontiguousarray(data['pos'][which]), deep=1))
        out.SetPoints(points)
        arrays = [('mass', data['mass'][which]), ('vel', data['vel'][which]), ('ids', data['ids'][which]),
                  ('InputIndex', which.astype(numpy.int64))]
        if 'rho' in data.files:  # a given density (test_plugin_hop.py)
            arrays.append(('rho', data['rho'][which]))
        for name, values in arrays:
            array = numpy_support.numpy_to_vtk(numpy.ascontiguousarray(values), deep=1)
            array.SetName(name)
            out.GetPointData().AddArray(array)
        return out

    output = algorithm.GetOutput()
    if {partitions} == 2:
        half = len(mine) // 2
        output.SetPartition(0, polydata(mine[:half]))
        output.SetPartition(1, polydata(mine[half:]))
    else:
        output.ShallowCopy(polydata(mine))
_phew_share(self)
"""

COLLECT_SCRIPT = """
def _phew_collect(algorithm):
    import numpy
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet, vtkPointSet
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    controller = vtkMultiProcessController.GetGlobalController()
    rank = controller.GetLocalProcessId() if controller else 0
    data = algorithm.GetInput()
    algorithm.GetOutput().ShallowCopy(data)
    leaves = []
    if isinstance(data, vtkCompositeDataSet):
        it = data.NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            leaves.append(it.GetCurrentDataObject())
            it.GoToNextItem()
    else:
        leaves.append(data)
    found = dict(kind=numpy.array(data.GetClassName()), leaves=numpy.array([leaf.GetClassName() for leaf in leaves]))
    for name in {names!r}:
        arrays = [leaf.GetPointData().GetArray(name) for leaf in leaves]
        if arrays and None not in arrays:
            found[name] = numpy.concatenate([numpy_support.vtk_to_numpy(a) for a in arrays])
    numpy.savez({prefix!r} + '-r%d.npz' % rank, **found)
_phew_collect(self)
"""

COLLECTED = ("InputIndex", "PeakPatchId", "ClumpId", "HaloId", "Density", "GroupId")


def share_source(ProgrammableSource, path, mode, partitions=1):
    return ProgrammableSource(OutputDataSetType="vtkPartitionedDataSet" if partitions == 2 else "vtkPolyData",
                              Script=SHARE_SCRIPT.format(path=path, mode=mode, partitions=partitions))


def collect_filter(ProgrammableFilter, finder, directory, tag):
    prefix = os.path.join(directory, tag)
    for stale in glob.glob(prefix + "-r*.npz"):
        os.remove(stale)
    return ProgrammableFilter(Input=finder, OutputDataSetType="Same as Input",
                              Script=COLLECT_SCRIPT.format(names=list(COLLECTED), prefix=prefix))


def read_collected(directory, tag, n_ranks, total):
    """{name: array over the file's particles} from the ranks' files (NaN / -2 where no rank
    reported a particle), the number of times each particle was reported, and per rank the
    (data kind, leaf kinds, number of points)."""
    prefix = os.path.join(directory, tag)
    out = {name: np.full(total, np.nan if name == "Density" else -2, dtype=np.float64 if name == "Density" else np.int64)
           for name in COLLECTED[1:]}
    seen = np.zeros(total, dtype=np.int64)
    kinds = []
    for rank in range(n_ranks):
        path = "%s-r%d.npz" % (prefix, rank)
        if not os.path.exists(path):
            kinds.append(None)
            continue
        with np.load(path) as data:
            kinds.append((str(data["kind"]), [str(k) for k in data["leaves"]],
                          len(data["InputIndex"]) if "InputIndex" in data.files else 0))
            if "InputIndex" not in data.files:
                continue
            where = data["InputIndex"]
            np.add.at(seen, where, 1)
            for name in COLLECTED[1:]:
                if name in data.files:
                    out[name][where] = data[name]
    return out, seen, kinds


def load_answers(answers_dir):
    """The one-process answers of test_plugin_points.py: {"base": {name: array}, "ids": ...}."""
    answers = {}
    with np.load(os.path.join(answers_dir, ANSWERS)) as data:
        answers["base"] = {key[len("base_"):]: data[key] for key in data.files}
    with np.load(os.path.join(answers_dir, "points-answers-ids.npz")) as data:
        answers["ids"] = {key: data[key] for key in data.files}
    return answers


def compare_with_answers(pv, check, label, reference, mode, work_dir, answers_dir, n_ranks, partitions=1,
                         density_only=False, **extra):
    """Runs the finder (or Particle Density) of pv (the caller's paraview.simple namespace, with
    the plugin loaded) on the shares of `mode` and compares every particle and the tables with
    the one-process answers `reference` ("base" or "ids")."""
    from paraview import servermanager
    particles = os.path.join(answers_dir, "particles.npz")
    with np.load(particles) as data:
        total = len(data["pos"])
    answers = load_answers(answers_dir)[reference]
    shares = share_source(pv["ProgrammableSource"], particles, mode, partitions)
    if density_only:
        proxy = pv["ParticleDensity"](Input=shares, **DENSITY_BASE)
    else:
        proxy = pv["PHEWClumpFinder"](Input=shares, **dict(BASE, **extra))
        proxy.DensityThreshold = THRESHOLD
    errors = pt.ErrorCatcher(proxy)
    collect = collect_filter(pv["ProgrammableFilter"], proxy, work_dir, label)
    collect.UpdatePipeline()
    collect.GetDataInformation()  # gathered from every rank: all have written their files
    if check.check(not errors.messages, "%s: the filter reported: %s" % (label, errors.text())):
        got, seen, kinds = read_collected(work_dir, label, n_ranks, total)
        check.check(bool(np.all(seen == 1)), "%s: %d particles came back %s times"
                    % (label, int(np.count_nonzero(seen != 1)), sorted(set(seen.tolist()))))
        want_kind = "vtkPartitionedDataSet" if partitions == 2 else "vtkPolyData"
        check.check([k[0] if k else None for k in kinds] == [want_kind] * n_ranks, "%s: outputs %s" % (label, kinds))
        names = ("Density",) if density_only else pt.LABEL_ARRAYS + ("Density",)
        for name in names:
            want = answers[name]
            check.check(got[name].dtype == want.dtype and got[name].tobytes() == want.tobytes(),
                        "%s: %s differs from the one-process run for %d particles" % (
                            label, name, int(np.count_nonzero(got[name] != want))))
        if density_only:
            check.check([bool(np.all(got[name] == -2)) for name in pt.LABEL_ARRAYS] == [True] * 3,
                        "%s: Particle Density wrote labels" % label)
        else:
            for port, suffix in pt.TABLE_PORTS:
                written = os.path.join(work_dir, "%s-%s.csv" % (label, suffix))
                pt.write_table_csv(servermanager.Fetch(proxy, idx=port), written)
                with open(written) as f:
                    mine = f.read()
                with open(os.path.join(answers_dir, "%s-%s.csv" % (reference, suffix))) as f:
                    theirs = f.read()
                check.check(mine == theirs, "%s: the %s table differs from the one-process run's" % (label, suffix))
                rows = pv["OutputPort"](proxy, port).GetDataInformation().GetNumberOfRows()
                check.check(rows == theirs.count("\n") - 1, "%s: the ranks hold %d %s rows together, expected %d"
                            % (label, rows, suffix, theirs.count("\n") - 1))
        print("%s: compared, points per rank %s" % (label, [k[2] if k else None for k in kinds]), flush=True)
    pv["Delete"](collect)
    pv["Delete"](proxy)
    pv["Delete"](shares)
