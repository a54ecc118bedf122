#!/usr/bin/env bash
# Install what is missing, build, and run every test, in four stages:
#   format    every C/C++ file formatted as its .clang-format says (scripts/check_format.sh;
#             clang-format 14, scripts/check_format.sh --fix formats)
#   normal    ctest in build/: GoogleTest for the core, command-line checks, MPI runs,
#             pvbatch tests of the plugin (extra arguments go to this ctest, e.g. -L core)
#   sanitize  the core, the CLI and the MPI tests built with ASan and UBSan into
#             build-sanitize/ and run through ctest (scripts/sanitize.sh)
#   fuzz      the libFuzzer harness of phew_find_clumps built with clang into build-fuzz/:
#             every kept input replayed, then PHEW_FUZZ_RUNS executions (default 12000, seed PHEW_FUZZ_SEED=1) of fuzzing,
#             one libFuzzer process per core (scripts/fuzz.sh)
# PHEW_TEST_STAGES="format normal sanitize fuzz" (the default) chooses stages. Every chosen stage
# runs even if an earlier one failed; the command fails if any did. At the end it prints the
# ten slowest tests of the normal and sanitize stages and each stage's time.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=${PHEW_TEST_STAGES:-format normal sanitize fuzz}
start=$SECONDS
bash scripts/setup.sh --tests
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ctest runs tests side by side, and each test's threads (and MPI ranks) share the cores:
# OpenMP threads waiting at a barrier sleep instead of spinning on a core another test needs
# (cli_parallel_np8, 8 ranks of 2 threads on 2 cores: 34 s spinning, 22 s sleeping)
export OMP_WAIT_POLICY=PASSIVE
jobs=$(nproc 2>/dev/null || echo 2)

failed=()
timing=()
declare -A started # stage -> when it started (seconds since the epoch)
run_stage() { # name command...
  local name=$1 t0=$SECONDS
  shift
  if [[ " $stages " != *" $name "* ]]; then
    return 0
  fi
  echo "==== phew test: stage '$name'"
  started[$name]=$(date +%s)
  if ! "$@"; then
    failed+=("$name")
  fi
  timing+=("$name $((SECONDS - t0)) s")
}
normal() { (cd build && ctest --output-on-failure -j"$jobs" "$@"); }
# The ten slowest tests of a stage that ran ctest, from ctest's log of this run (none if its
# ctest did not run, e.g. after a failed build: an older log is not shown).
slowest() { # stage build-dir
  local log=$2/Testing/Temporary/LastTest.log
  [ -n "${started[$1]-}" ] && [ -f "$log" ] && [ "$(stat -c %Y "$log")" -ge "${started[$1]}" ] || return 0
  echo "==== phew test: the ten slowest tests of stage '$1' (seconds)"
  awk '/^[0-9]+\/[0-9]+ Test: /{name=$3} /^Test time =/{printf "%8.1f  %s\n", $4, name}' "$log" | sort -rn | head -10 || true
}
run_stage format bash scripts/check_format.sh
run_stage normal normal "$@"
run_stage sanitize bash scripts/sanitize.sh
run_stage fuzz bash scripts/fuzz.sh

slowest normal build
slowest sanitize build-sanitize
echo "==== phew test: $((SECONDS - start)) s in all (build included); stages: $(IFS=,; echo "${timing[*]-none}")"
if [ ${#failed[@]} -gt 0 ]; then
  echo "==== phew test: FAILED stage(s): ${failed[*]}"
  exit 1
fi
echo "==== phew test: all stages passed"
