"""ctest fixture of test_plugin_small_images.py: writes the small and flat images
(small_images.py) into --work-dir once, runs the command-line tool on each (the serial answer
the filter must give on any number of ranks), and checks every answer against
datasets/phew_numpy.py, the independent numpy implementation (per-cell PeakPatchId, ClumpId
and HaloId, catalogue order, cell counts, halo depths).

    pvbatch small_images_answers.py --plugin PHEW.so --cli phew --source-dir SRC --work-dir DIR
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "parallel"))  # compare_numpy: the numpy reference check

import compare_numpy
import phew_plugin_testing as pt
import small_images as si

args = pt.parse_args(need_cli=True)
check = pt.Checker("small_images_answers")
cases = [case for case in si.build_cases() if case.base is None]
started = {}
AHEAD = 16  # tools running at once (each spends most of its time starting MPI)
for number, case in enumerate(cases):
    started[case.label] = si.write_image_and_start_tool(case, args.work_dir, args.cli)
    if number >= AHEAD:
        finished = cases[number - AHEAD]
        pt.finish_cli(started.pop(finished.label))
for label, handle in started.items():
    pt.finish_cli(handle)
for case in cases:
    case.rho = case.values(args.work_dir)  # what compare_numpy reads
    compare_numpy.compare(case, case.prefix(args.work_dir), args.source_dir, check, case.label)
print("%d images and answers in %s" % (len(cases), args.work_dir), flush=True)
check.finish()
