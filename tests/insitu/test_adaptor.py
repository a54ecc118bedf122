"""The Catalyst adaptor (catalyst/include/phew_catalyst.h) driven by adaptor_probe under mpiexec:
no copies, clumps found in situ equal on 1 and 2 ranks and on a communicator of its own, and
every failure (missing script, script that does not load, script that raises at one step, NaN
in the density, a grid block with ghost cells) reported on every rank with the same status and
message, without a hang.

    python3 test_adaptor.py --probe adaptor_probe --mpiexec mpiexec --source-dir SRC --work-dir DIR
                            [--fortran-probe adaptor_probe_fortran]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from insitu_checks import check, finish  # noqa: E402

RUNS = []  # one entry per run, to name its logs


def run(args, ranks, command, env_extra=None, timeout=300):
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "PHEW_PICTURES": "0"})
    env.update(env_extra or {})
    # the probe's report lines are read from its per-rank logs: mpiexec may cut one rank's
    # output into pieces and interleave them with another's
    RUNS.append(len(RUNS))
    log = os.path.join(args.work_dir, "probe_log_%d" % len(RUNS))
    env["PROBE_LOG"] = log
    full = [args.mpiexec, "--oversubscribe", "--mca", "pml", "ob1", "-np", str(ranks)] + command
    done = subprocess.run(full, cwd=args.work_dir, env=env, capture_output=True, text=True, timeout=timeout)
    reports = ""
    for rank in range(ranks):
        if os.path.exists("%s.%d" % (log, rank)):
            with open("%s.%d" % (log, rank)) as f:
                reports += f.read()
            os.remove("%s.%d" % (log, rank))
    return done.returncode, reports or done.stdout, done.stderr  # the Fortran probe keeps no logs


def statuses(stdout):
    """{(rank, step): (status, message)}; step -1 is the initialisation."""
    found = {}
    for line in stdout.splitlines():
        # search, not match: another process's output may share the line's start
        m = re.search(r"rank (\d+) (?:step (\d+)|init) status (-?\d+) message (.*)", line)
        if m:
            step = int(m.group(2)) if m.group(2) is not None else -1
            found[(int(m.group(1)), step)] = (int(m.group(3)), m.group(4))
    return found


def same_on_every_rank(found, ranks, step):
    answers = {found.get((r, step)) for r in range(ranks)}
    return len(answers) == 1 and None not in answers, answers.pop() if len(answers) == 1 else None


def same_catalogue(a, b, tolerance=1e-12):
    """The same rows, integers equal and reals within a relative tolerance (Fortran's exp may
    round the last bit of the field otherwise than C's)."""
    if not a or not b:
        return False
    rows_a, rows_b = a.strip().splitlines(), b.strip().splitlines()
    if len(rows_a) != len(rows_b) or rows_a[0] != rows_b[0]:
        return False
    for ra, rb in zip(rows_a[1:], rows_b[1:]):
        for x, y in zip(ra.split(","), rb.split(",")):
            if "." in x or "e" in x or "." in y:
                if abs(float(x) - float(y)) > tolerance * max(abs(float(x)), abs(float(y)), 1e-300):
                    return False
            elif x != y:
                return False
    return True


def probe_maxima(n=16):
    """The local maxima (over the 26 neighbours, periodic) of adaptor_probe's density."""
    import math

    def rho(x, y, z):
        a = ((x - 4.5) * (x - 4.5) + (y - 5.5) * (y - 5.5) + (z - 5.5) * (z - 5.5)) / 4.0
        b = ((x - 11.5) * (x - 11.5) + (y - 10.5) * (y - 10.5) + (z - 9.5) * (z - 9.5)) / 3.0
        return 0.2 + 50.0 * math.exp(-a) + 30.0 * math.exp(-b)

    field = {(x, y, z): rho(x, y, z) for x in range(n) for y in range(n) for z in range(n)}
    maxima = []
    for (x, y, z), v in field.items():
        around = [field[((x + i) % n, (y + j) % n, (z + k) % n)]
                  for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1) if (i, j, k) != (0, 0, 0)]
        if v > max(around):
            maxima.append(v)
    return maxima


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", required=True)
    parser.add_argument("--fortran-probe")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    scripts = os.path.join(args.source_dir, "tests", "insitu", "scripts")
    clumps = os.path.join(args.source_dir, "catalyst", "scripts", "clumps.py")
    clump_env = {"PHEW_THRESHOLD": "1", "PHEW_RELEVANCE": "2", "PHEW_SADDLE": "0"}

    # 1. no copies, arrays untouched, on 1 and 2 ranks and on a split communicator
    for ranks, extra in ((1, {}), (2, {}), (2, {"PROBE_COMM": "split"})):
        marks = os.path.join(args.work_dir, "marks%d%s" % (ranks, "split" if extra else ""))
        os.makedirs(marks)
        code, out, err = run(args, ranks, [args.probe, "2", os.path.join(scripts, "check_no_copy.py")],
                             dict(extra, PROBE_MARKS=marks))
        found = statuses(out)
        what = "%d rank(s)%s" % (ranks, " on a communicator of its own" if extra else "")
        check(code == 0 and all(found.get((r, s), (9,))[0] == 0 for r in range(ranks) for s in (0, 1)),
              "no copies, %s: every call succeeded (exit %d)" % (what, code))
        expected = sorted("checked_rank%d_step%d" % (r, s) for r in range(ranks) for s in (0, 1))
        check(sorted(os.listdir(marks)) == expected, "no copies, %s: every rank checked its arrays at both steps" % what)
        check(out.count("arrays unchanged") == ranks, "no copies, %s: the simulation's arrays are unchanged" % what)
        if code != 0:
            print(err[-3000:])

    # 2. clumps in situ: the same catalogue on 1 and 2 ranks, two blobs -> two clumps
    tables = {}
    for ranks in (1, 2):
        out_dir = os.path.join(args.work_dir, "clumps%d" % ranks)
        env = dict(clump_env, PHEW_INSITU_OUTPUT=out_dir)
        code, out, err = run(args, ranks, [args.probe, "1", clumps], env)
        path = os.path.join(out_dir, "clumps_000000.csv")
        check(code == 0 and os.path.exists(path), "clumps.py on the probe's grid, %d rank(s) (exit %d)" % (ranks, code))
        tables[ranks] = open(path).read() if os.path.exists(path) else ""
        if code != 0:
            print(err[-3000:])
    rows = tables[1].strip().splitlines()
    check(len(rows) == 3, "two blobs give two clumps (%d rows)" % (len(rows) - 1))
    check(tables[1] == tables[2] and tables[1] != "", "the catalogue is the same, byte for byte, on 1 and 2 ranks")
    if len(rows) == 3:
        peaks = sorted(float(r.split(",")[8]) for r in rows[1:])
        expected = sorted(probe_maxima())
        check(peaks == expected, "the peak densities are the field's two maxima (%s, expected %s)" % (peaks, expected))

    # 3. a script that does not exist: initialisation fails on every rank with the same message
    code, out, err = run(args, 2, [args.probe, "1", os.path.join(scripts, "no_such_script.py")])
    same, answer = same_on_every_rank(statuses(out), 2, -1)
    check(code == 0 and same and answer[0] == 2 and "no_such_script.py" in answer[1] and "cannot be read" in answer[1],
          "a missing script: status 2 and the same message on every rank (%s)" % (answer,))

    # 4. a script that raises while it loads: status 2 at its first step on every rank, then
    #    "no pipeline" (it is never run again), and no crash
    code, out, err = run(args, 2, [args.probe, "2", os.path.join(scripts, "raise_at_load.py")])
    found = statuses(out)
    same0, answer0 = same_on_every_rank(found, 2, 0)
    same1, answer1 = same_on_every_rank(found, 2, 1)
    check(code == 0 and same0 and answer0[0] == 2 and "broken on purpose" in answer0[1]
          and "raise_at_load.py" in answer0[1],
          "a script that raises while loading: status 2, its line and exception on every rank (%s)" % (answer0,))
    check(same1 and answer1[0] == 2 and "no pipeline" in answer1[1], "... and it is not run again (%s)" % (answer1,))

    # 5. a script that raises at step 1 only: status 3 there on every rank, steps 0 and 2 fine
    code, out, err = run(args, 2, [args.probe, "3", os.path.join(scripts, "raise_at_step.py")])
    found = statuses(out)
    answers = [same_on_every_rank(found, 2, s) for s in range(3)]
    check(code == 0 and all(a[0] for a in answers) and [a[1][0] for a in answers] == [0, 3, 0]
          and "step 1 fails on purpose" in answers[1][1][1],
          "a script that raises at one step: status 3 there, on every rank, and the next step runs (%s)"
          % ([a[1] for a in answers],))

    # 6. a NaN in the density (on the last rank only): the filter refuses it, status 3 and its
    #    message on every rank; the next step (density repaired) finds the clumps again
    out_dir = os.path.join(args.work_dir, "nan")
    env = dict(clump_env, PHEW_INSITU_OUTPUT=out_dir, PROBE_NAN_STEP="1")
    code, out, err = run(args, 2, [args.probe, "3", clumps], env)
    found = statuses(out)
    answers = [same_on_every_rank(found, 2, s) for s in range(3)]
    check(code == 0 and all(a[0] for a in answers) and [a[1][0] for a in answers] == [0, 3, 0],
          "a NaN density: status 3 at that step on every rank, the others fine (%s)" % ([a[1] for a in answers],),
          "stdout:\n" + out + "\nstderr:\n" + err)
    check(answers[1][0] and ("NaN" in answers[1][1][1] or "nan" in answers[1][1][1]),
          "... and the message names the NaN (%s)" % (answers[1][1][1] if answers[1][0] else None,))
    good = os.path.join(out_dir, "clumps_000002.csv")
    check(os.path.exists(good) and open(good).read() == tables[1], "... and the step after gives the same clumps as before")
    links = os.path.join(out_dir, "clump_links_000002.csv")
    rows = open(links).read().splitlines() if os.path.exists(links) else []
    check(not os.path.exists(os.path.join(out_dir, "clump_links_000001.csv")) and len(rows) == 3
          and all(row.split(",")[3] == "0" and row.split(",")[12] == "1" for row in rows[1:]),
          "... and the merger tree leaves the failed step out: step 2's clumps link to step 0's (%s)" % rows[1:])

    # 7. a grid block with ghost cells (stored box larger than the active box): refused before
    #    any pipeline runs, status 1 and the same message on every rank
    out_dir = os.path.join(args.work_dir, "ghosts")
    env = dict(clump_env, PHEW_INSITU_OUTPUT=out_dir, PROBE_GHOSTS="1")
    code, out, err = run(args, 2, [args.probe, "1", clumps], env)
    same, answer = same_on_every_rank(statuses(out), 2, 0)
    check(code == 0 and same and answer[0] == 1 and "no ghost cells" in answer[1]
          and not os.path.exists(os.path.join(out_dir, "clumps_000000.csv")),
          "a grid with ghost cells: status 1, the same message on every rank, no pipeline run (%s)" % (answer,),
          "stdout:\n" + out + "\nstderr:\n" + err)

    # 8. Fortran: the module drives the same grid (its own slab split) to the same catalogue
    if args.fortran_probe:
        for ranks in (1, 2):
            out_dir = os.path.join(args.work_dir, "fortran%d" % ranks)
            env = dict(clump_env, PHEW_INSITU_OUTPUT=out_dir)
            code, out, err = run(args, ranks, [args.fortran_probe, clumps], env)
            path = os.path.join(out_dir, "clumps_000000.csv")
            text = open(path).read() if os.path.exists(path) else None
            check(code == 0 and "fortran status 0" in out and same_catalogue(text, tables[1]),
                  "Fortran, %d rank(s): status 0 and the C probe's catalogue (exit %d)" % (ranks, code))
            if code != 0 or text != tables[1]:
                print(out[-2000:], err[-3000:], text)
        code, out, err = run(args, 2, [args.fortran_probe, os.path.join(scripts, "no_such_script.py")])
        check(code == 0 and out.count("fortran init status 2") == 2 and "cannot be read" in out,
              "Fortran: a missing script gives status 2 and the message on both ranks")

    finish()


if __name__ == "__main__":
    main()
