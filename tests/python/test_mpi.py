"""The finders with mpi4py communicators: mpi_checks.py under mpirun on 2 and 3 ranks."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("ranks", [2, 3])
def test_distributed_runs_give_the_serial_bytes(ranks):
    if os.environ.get("PHEW_NO_MPI"):
        pytest.skip("this phew was built without MPI: comm= is refused")
    mpiexec = os.environ.get("PHEW_MPIEXEC")
    if not mpiexec:
        pytest.fail("PHEW_MPIEXEC is not set: run these tests through ctest")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ.get("PYTHONPATH", ""), HERE]))
    done = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, os.path.join(HERE, "mpi_checks.py")],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[-2:] == ["ok", "10"]
