"""pvbatch test: scripts/demo.py runs and writes what it promises.

Runs the demo (under xvfb-run when given, so that clumps.png is rendered) on the project's
sample dataset, or on a synthetic cube while datasets/sample.vti does not exist, then checks:
the three CSV files are byte-identical to the command-line tool's on the same data and
parameters, labelled.vti reads back (Binary data mode) with labels equal to the tool's, and
clumps.png is a picture of the requested size with many colours.

    pvbatch test_demo.py --plugin PHEW.so --cli phew --source-dir SRC --work-dir DIR
                         [--pvbatch PATH] [--xvfb-run PATH]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkIOImage import vtkPNGReader

import phew_plugin_testing as pt

parser = argparse.ArgumentParser()
for name in ("--plugin", "--cli", "--source-dir", "--work-dir"):
    parser.add_argument(name, required=True)
parser.add_argument("--pvbatch", default="pvbatch")
parser.add_argument("--xvfb-run", default=None)
args = parser.parse_args()
os.makedirs(args.work_dir, exist_ok=True)
check = pt.Checker("demo")

sys.path.insert(0, os.path.join(args.source_dir, "scripts"))
import demo  # noqa: E402  (its main() runs only as a script)

sample = os.path.join(args.source_dir, "datasets", "sample.vti")
if os.path.exists(sample):
    # The demo's own defaults, as scripts/demo.sh runs it.
    vti = sample
    params = {"threshold": demo.DEFAULT_THRESHOLD, "relevance": demo.DEFAULT_RELEVANCE,
              "saddle": demo.DEFAULT_SADDLE, "mass": demo.DEFAULT_MASS_THRESHOLD, "periodic": demo.DEFAULT_PERIODIC}
    demo_options = []
else:
    print("note: %s does not exist; running the demo on a synthetic cube" % sample, flush=True)
    dims = (48, 44, 40)
    rho = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.02, seed=5).astype(np.float32)
    vti = pt.write_vti(os.path.join(args.work_dir, "synthetic.vti"),
                       pt.make_image(rho, "CELLS", spacing=(0.1, 0.1, 0.1)))
    params = None

image = servermanager.Fetch(XMLImageDataReader(FileName=[vti]))
values = numpy_support.vtk_to_numpy(image.GetCellData().GetArray("density"))
extent, spacing, origin = image.GetExtent(), image.GetSpacing(), image.GetOrigin()
cube = values.reshape(extent[5] - extent[4], extent[3] - extent[2], extent[1] - extent[0])
if params is None:
    # A threshold between the median and the maximum, saddle merging on.
    params = {"threshold": float(np.percentile(values, 90)), "relevance": 1.5,
              "saddle": float(np.percentile(values, 98)), "mass": 0.0, "periodic": False}
    demo_options = ["--threshold", repr(params["threshold"]), "--relevance", repr(params["relevance"]),
                    "--saddle", repr(params["saddle"]), "--mass-threshold", "0", "--no-periodic"]
if params["threshold"] is None:
    params["threshold"] = float(values.astype(np.float64).mean())  # what the demo does then

output = os.path.join(args.work_dir, "output")
command = [args.pvbatch, os.path.join(args.source_dir, "scripts", "demo.py"), "--plugin", args.plugin,
           "--input", vti, "--output", output] + demo_options


def run_demo(command):
    """Runs a demo script (under xvfb-run when given, else with --no-picture)."""
    if not args.xvfb_run:
        command = command + ["--no-picture"]
    for attempt in range(5):
        full = command
        if args.xvfb_run:
            # -noreset: an X server resets when its last client leaves, and a render window that
            # connects during the reset fails (VTK aborts; seen in CI under load). xvfb-run -a
            # searches for a free display from -n; two runs at once may still race: retried.
            display = str(100 + (os.getpid() * 7 + attempt * 131) % 800)
            full = [args.xvfb_run, "-a", "-n", display, "-s", "-screen 0 1280x1024x24 -noreset"] + command
        print(" ".join(full), flush=True)
        run = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        print(run.stdout, flush=True)
        if run.returncode == 0 or "bad X server connection" not in run.stdout:
            return run
    return run


run = run_demo(command)
if not check.check(run.returncode == 0, "the demo failed with exit code %d" % run.returncode):
    check.finish()

# The tool on the same data and parameters.
if cube.dtype not in (np.float32, np.float64):
    cube = cube.astype(np.float64)
corner = [origin[d] + extent[2 * d] * spacing[d] for d in range(3)]
cli_labels, _ = pt.run_cli(args.cli, cube, os.path.join(args.work_dir, "cli"), params["threshold"],
                           relevance=params["relevance"], saddle=params["saddle"], mass=params["mass"],
                           periodic=params["periodic"], spacing=spacing, origin=corner)
for name in ("clumps", "haloes", "dendrogram"):
    mine = os.path.join(output, name + ".csv")
    theirs = os.path.join(args.work_dir, "cli-%s.csv" % name)
    if check.check(os.path.exists(mine), "the demo wrote no %s.csv" % name):
        with open(mine) as a, open(theirs) as b:
            text_a, text_b = a.read(), b.read()
        check.check(text_a == text_b, "%s.csv differs from the tool's CSV" % name)
        check.check(text_a.count("\n") > 1, "%s.csv has no rows" % name)

labelled_path = os.path.join(output, "labelled.vti")
if check.check(os.path.exists(labelled_path), "the demo wrote no labelled.vti"):
    with open(labelled_path, "rb") as f:
        head = f.read(4096)
    check.check(b'format="appended"' not in head and b"AppendedData" not in head,
                "labelled.vti is in appended mode, which Debian's ParaView cannot read")
    labelled = servermanager.Fetch(XMLImageDataReader(FileName=[labelled_path]))
    for name in pt.LABEL_ARRAYS:
        array = labelled.GetCellData().GetArray(name)
        if check.check(array is not None, "labelled.vti has no cell array %s" % name):
            check.check(np.array_equal(numpy_support.vtk_to_numpy(array).astype(np.int64), cli_labels[name]),
                        "labelled.vti: %s differs from the tool" % name)
    density = labelled.GetCellData().GetArray("density")
    check.check(density is not None and np.array_equal(numpy_support.vtk_to_numpy(density), values),
                "labelled.vti does not carry the input density unchanged")

if args.xvfb_run:
    png = os.path.join(output, "clumps.png")
    if check.check(os.path.exists(png), "the demo wrote no clumps.png"):
        reader = vtkPNGReader()
        reader.SetFileName(png)
        reader.Update()
        picture = reader.GetOutput()
        check.check(picture.GetDimensions()[:2] == (1200, 900), "clumps.png is %s, not 1200x900"
                    % (picture.GetDimensions()[:2],))
        pixels = numpy_support.vtk_to_numpy(picture.GetPointData().GetScalars())
        colours = len(np.unique(pixels[:, :3], axis=0))
        check.check(colours > 200, "clumps.png has only %d colours" % colours)
else:
    print("note: no xvfb-run; clumps.png not checked", flush=True)

# scripts/demo_amr.py on datasets/amr_sample.vthb, as scripts/demo.sh runs it: 7 clumps and 5
# haloes (the counts test_plugin_amr_reference.py checks independently), a labelled hierarchy
# that reads back with labels on every leaf and -1 on covered cells, and a picture.
amr_sample = os.path.join(args.source_dir, "datasets", "amr_sample.vthb")
amr_output = os.path.join(args.work_dir, "output-amr")
run = run_demo([args.pvbatch, os.path.join(args.source_dir, "scripts", "demo_amr.py"), "--plugin", args.plugin,
                "--input", amr_sample, "--output", amr_output])
if check.check(run.returncode == 0, "demo_amr failed with exit code %d" % run.returncode):
    rows = {}
    for name in ("clumps", "haloes", "dendrogram"):
        with open(os.path.join(amr_output, name + ".csv")) as f:
            rows[name] = f.read().count("\n") - 1
    check.check((rows["clumps"], rows["haloes"]) == (7, 5), "demo_amr: %d clumps and %d haloes, not 7 and 5"
                % (rows["clumps"], rows["haloes"]))
    amr_reader = XMLUniformGridAMRReader(FileName=[os.path.join(amr_output, "labelled.vthb")])
    amr_reader.DefaultNumberOfLevels = 0
    amr_reader.UpdatePipeline()
    amr = amr_reader.GetClientSideObject().GetOutputDataObject(0)
    labelled_leaves = covered_ok = blocks = 0
    for level in range(amr.GetNumberOfLevels()):
        for index in range(amr.GetNumberOfDataSets(level)):
            block = amr.GetDataSet(level, index)
            blocks += 1
            clump = block.GetCellData().GetArray("ClumpId")
            ghost = block.GetCellData().GetArray("vtkGhostType")
            if not check.check(clump is not None, "labelled.vthb block %d/%d has no ClumpId" % (level, index)):
                continue
            ids = numpy_support.vtk_to_numpy(clump)
            covered = (numpy_support.vtk_to_numpy(ghost) & 8) != 0 if ghost is not None else np.zeros(ids.shape, bool)
            covered_ok += int((ids[covered] == -1).all())
            labelled_leaves += int((ids[~covered] >= 0).sum())
    check.check(covered_ok == blocks, "labelled.vthb: covered cells with a ClumpId in %d block(s)" % (blocks - covered_ok))
    check.check(labelled_leaves > 1000, "labelled.vthb: only %d leaf cells in clumps" % labelled_leaves)
    if args.xvfb_run:
        png = os.path.join(amr_output, "clumps.png")
        if check.check(os.path.exists(png), "demo_amr wrote no clumps.png"):
            reader = vtkPNGReader()
            reader.SetFileName(png)
            reader.Update()
            pixels = numpy_support.vtk_to_numpy(reader.GetOutput().GetPointData().GetScalars())
            check.check(len(np.unique(pixels[:, :3], axis=0)) > 200, "demo_amr's clumps.png has few colours")

# scripts/demo_particles.py on datasets/particles_sample, as scripts/demo.sh runs it: the
# tables byte for byte those of `phew --points` on the same raw files and parameters, the
# labelled particles equal to the tool's labels and densities, one halo per host of the truth
# file (6), and a picture.
particles = os.path.join(args.source_dir, "datasets", "particles_sample")
points_output = os.path.join(args.work_dir, "output-particles")
run = run_demo([args.pvbatch, os.path.join(args.source_dir, "scripts", "demo_particles.py"), "--plugin", args.plugin,
                "--input", particles, "--output", points_output])
if check.check(run.returncode == 0, "demo_particles failed with exit code %d" % run.returncode):
    prefix = os.path.join(args.work_dir, "cli-particles")
    tool = subprocess.run([args.cli, "--points", particles + "-pos.raw", "--velocities", particles + "-vel.raw",
                           "--type", "float32", "--box", "1", "1", "1", "--periodic", "--threshold", "80",
                           "--relevance", "3", "--saddle", "200", "--output", prefix],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if check.check(tool.returncode == 0, "phew --points failed: %s" % tool.stdout):
        for name in ("clumps", "haloes", "dendrogram"):
            with open(os.path.join(points_output, name + ".csv")) as a, open("%s-%s.csv" % (prefix, name)) as b:
                check.check(a.read() == b.read(), "demo_particles: %s.csv differs from the tool's" % name)
        with open(os.path.join(points_output, "haloes.csv")) as f:
            check.check(f.read().count("\n") - 1 == 6, "demo_particles: not one halo per host (6)")
        labelled = servermanager.Fetch(XMLPolyDataReader(FileName=[os.path.join(points_output, "labelled.vtp")]))
        for name, suffix, dtype in (("PeakPatchId", "patch", "<i8"), ("ClumpId", "clump", "<i8"),
                                    ("HaloId", "halo", "<i8"), ("Density", "density", "<f8")):
            array = labelled.GetPointData().GetArray(name)
            want = np.fromfile("%s-%s.raw" % (prefix, suffix), dtype=dtype)
            check.check(array is not None and numpy_support.vtk_to_numpy(array).tobytes() == want.tobytes(),
                        "labelled.vtp: %s differs from the tool's" % name)
    if args.xvfb_run:
        png = os.path.join(points_output, "clumps.png")
        if check.check(os.path.exists(png), "demo_particles wrote no clumps.png"):
            reader = vtkPNGReader()
            reader.SetFileName(png)
            reader.Update()
            pixels = numpy_support.vtk_to_numpy(reader.GetOutput().GetPointData().GetScalars())
            check.check(len(np.unique(pixels[:, :3], axis=0)) > 200, "demo_particles' clumps.png has few colours")

check.finish()
