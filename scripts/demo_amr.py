"""PHEW demo on AMR: find clumps in datasets/amr_sample.vthb (vtkOverlappingAMR, 4 levels) with
the ParaView plugin, save the catalogues, the labelled hierarchy and a picture.

    xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \\
        pvbatch scripts/demo_amr.py --plugin build/lib/PHEW/PHEW.so \\
            --input datasets/amr_sample.vthb --output output/amr [--no-picture]

Writes into the output directory: clumps.csv, haloes.csv, dendrogram.csv (as scripts/demo.py),
labelled.vthb (+ its folder: the hierarchy with PeakPatchId, ClumpId, HaloId on every block,
-1 on covered cells) and clumps.png. The parameters suit the sample (datasets/README.md):
threshold 3, relevance 2, saddle merging at 20, periodic; expected 7 clumps and 5 haloes.
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402  (its tables, CSV writer and picture helpers)

THRESHOLD, RELEVANCE, SADDLE = 3.0, 2.0, 20.0


def render(view, finder, reader, n_clumps, n_haloes, path, size):
    # The blocks of the hierarchy, as outlines: where it refines.
    boxes = Show(reader, view)
    boxes.SetRepresentationType("Outline")
    ColorBy(boxes, None)
    boxes.DiffuseColor = boxes.AmbientColor = [0.55, 0.6, 0.7]
    boxes.Opacity = 0.35
    demo.show_clumps(demo.clump_cells(finder, "CELLS", n_clumps), view, "CELLS", n_clumps)
    demo.show_title(Text(Text="PHEW on AMR (4 levels): %d clumps, %d haloes\n"
                              "density threshold %g, relevance %g, saddle %g; boxes: AMR blocks"
                              % (n_clumps, n_haloes, THRESHOLD, RELEVANCE, SADDLE)), view)
    demo.show_from_corner(view, 1.3)
    SaveScreenshot(path, view, ImageResolution=size)


def main():
    parser = argparse.ArgumentParser(description="PHEW clump finding on AMR (run with pvbatch)")
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--input", required=True, help="a .vthb (vtkOverlappingAMR) with a cell array 'density'")
    parser.add_argument("--output", required=True)
    parser.add_argument("--no-picture", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    LoadPlugin(args.plugin, remote=False, ns=globals())
    # the view (and its X connection) first, as scripts/demo.py does
    size = [1200, 900]
    view = None if args.no_picture else demo.make_view(size)
    reader = XMLUniformGridAMRReader(FileName=[os.path.abspath(args.input)])
    reader.DefaultNumberOfLevels = 0  # every level (the reader's default loads level 0 only)
    finder = PHEWClumpFinder(Input=reader, Density=["CELLS", "density"])
    finder.DensityThreshold = THRESHOLD
    finder.RelevanceThreshold = RELEVANCE
    finder.SaddleMerging = 1
    finder.SaddleThreshold = SADDLE
    finder.Periodic = 1
    finder.UpdatePipeline()
    counts = {}
    for port, name in demo.TABLES:
        table = servermanager.Fetch(finder, idx=port)
        demo.write_csv(table, os.path.join(args.output, name))
        counts[name] = table.GetNumberOfRows()
    if counts["clumps.csv"] == 0:
        sys.exit("demo_amr: no clumps (see the error above)")
    writer = XMLUniformGridAMRWriter(Input=OutputPort(finder, 0), FileName=os.path.join(args.output, "labelled.vthb"),
                                     DataMode="Binary")
    writer.UpdatePipeline()
    Delete(writer)
    print("PHEW demo on %s: %d clumps, %d haloes, %d dendrogram nodes"
          % (args.input, counts["clumps.csv"], counts["haloes.csv"], counts["dendrogram.csv"]))
    if not args.no_picture:
        render(view, finder, reader, counts["clumps.csv"], counts["haloes.csv"], os.path.join(args.output, "clumps.png"),
               size)
    print("  wrote %s" % ", ".join(sorted(os.listdir(args.output))))


if __name__ == "__main__":
    main()
