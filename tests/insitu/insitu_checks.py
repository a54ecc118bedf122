"""The checks of the in-situ test drivers (test_adaptor.py, test_simulation.py): each prints
ok or FAIL, and finish() exits with 1 if any failed."""
import sys

FAILURES = []


def check(condition, what, evidence=None):
    """Prints the check; a failed one also prints the evidence (the run's output) it was read from."""
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        FAILURES.append(what)
        if evidence:
            print("      what the run printed:\n      " + "\n      ".join(evidence.splitlines()[-60:]), flush=True)
    return condition


def finish():
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("all checks passed")
