"""Imported by Python at start-up under tests/sanitize/python3.in (it puts this folder first on
PYTHONPATH): restore the environment that script changed for the interpreter alone, so that
the programs the test starts (mpiexec, the phew tool) run with the sanitizer options ctest set,
leak detection included."""
import os

for _name in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONPATH"):
    _saved = os.environ.pop("PHEW_SANITIZE_SAVED_" + _name, None)
    if _saved:
        os.environ[_name] = _saved
    else:
        os.environ.pop(_name, None)

# Debian's own sitecustomize (the apport hook), which this file shadows.
try:
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()
