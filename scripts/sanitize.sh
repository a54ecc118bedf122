#!/usr/bin/env bash
# Build the core, the CLI, the core's GoogleTest suite, the CLI tests and the MPI tests with
# AddressSanitizer and UndefinedBehaviorSanitizer into build-sanitize/ and run them through
# ctest. Every report is fatal (-fno-sanitize-recover=all, halt_on_error), so it fails its
# test. ctest itself reads the sanitizer options and Open MPI's leak suppressions from
# tests/sanitize/ (see ctest_env.cmake.in and lsan.supp), so `ctest` in build-sanitize/ gives
# the same checks. Extra arguments go to ctest. Part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# GCC: its shared ASan runtime can be preloaded into Python, which loads this build's libphew
# with ctypes in the parallel CLI tests (tests/sanitize/python3.in). No ParaView: pvbatch
# cannot load a sanitized plugin, and the plugin is not part of this stage.
cmake --preset sanitize # CMakePresets.json: build-sanitize/, GCC, ASan + UBSan, warnings as errors
cmake --build --preset sanitize -j"$jobs"

# Labels core (GoogleTest, core MPI runs), cli (CLI checks, CLI under mpirun) and mpi; not
# the check that core/ configures and builds alone, which is a plain build of its own. The
# tool under mpirun on 3 and 4 ranks only (cli_parallel, its errors and outputs on 3, the
# particles on 2 and 3): under the sanitizers each run takes seconds on two cores, and this
# stage looks for memory errors, not answers (the normal stage runs every rank count). 3
# ranks take every path of 1 and 2 (rank 0, a failure on the last rank or on rank 0, a
# boundary two ranks store, the agreement) and one more (ranks neither failing nor 0); the
# tool in one process runs in the GoogleTest CLI checks. The same filter is the test preset
# "sanitize" (CMakePresets.json).
cd build-sanitize
if ! ctest --output-on-failure -j"$jobs" -L 'core|cli|mpi' \
  -E '^(core_builds_alone_without_mpi|cli_parallel_np[1268]|cli_parallel_errors_np[128]|cli_parallel_outputs_np1|cli_points_np1)$' "$@"; then
  # The tests run without symbolization (tests/sanitize/ctest_env.cmake.in: it made every
  # leak check slow), so their reports give library+offset only: the failed tests once more
  # with it, for stacks with function, file and line in the log.
  echo "phew sanitize: the failed tests again, with symbolized stacks"
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}symbolize=1" ctest --output-on-failure -j"$jobs" --rerun-failed || true
  exit 1
fi
