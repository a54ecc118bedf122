#!/usr/bin/env bash
# Build the libFuzzer harness of phew_find_clumps (tests/fuzz) with clang into build-fuzz/,
# replay every kept input (ctest: tests/fuzz/corpus and tests/fuzz/regressions), then fuzz
# from the corpus: PHEW_FUZZ_RUNS executions (default 12000) with the seed PHEW_FUZZ_SEED
# (default 1, so that CI runs are reproducible; 0 picks a random seed for exploration), at
# most PHEW_FUZZ_SECONDS seconds (default 300; 0 only replays).
# Inputs that add coverage go to build-fuzz/corpus-new/, never into the source tree. A
# crash, a sanitizer report or a broken oracle fails the script; the input is saved in
# build-fuzz/artifacts/: add it to tests/fuzz/regressions/ once understood. Part of
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${PHEW_FUZZ_SECONDS:-300}
runs_wanted=${PHEW_FUZZ_RUNS:-12000}
seed_wanted=${PHEW_FUZZ_SEED:-1}
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S tests/fuzz --preset fuzz # tests/fuzz/CMakePresets.json: build-fuzz/, clang, warnings as errors
cmake --build build-fuzz -j"$jobs"

status=0
(cd build-fuzz && ctest --output-on-failure) || status=1

if [ "$seconds" -gt 0 ]; then
  mkdir -p build-fuzz/corpus-new build-fuzz/artifacts
  echo "phew fuzz: $runs_wanted executions with seed $seed_wanted, at most $seconds s (log: build-fuzz/fuzz.log)"
  # One process on one core; -timeout: an input taking 30 s is a hang; -max_len: a full
  # float64 12^3 field with its header fits.
  fuzz_status=0
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build-fuzz/fuzz_find_clumps -max_total_time="$seconds" -runs="$runs_wanted" -seed="$seed_wanted" -timeout=30 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/ build-fuzz/corpus-new tests/fuzz/corpus \
    > build-fuzz/fuzz.log 2>&1 || fuzz_status=$?
  # the figures: executions, time, corpus
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 executions in \2 s/p' build-fuzz/fuzz.log)
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/fuzz.log)
  added=$(sed -n 's/^stat::new_units_added: *//p' build-fuzz/fuzz.log)
  seed=$(sed -n 's/.*Seed: \([0-9]*\).*/\1/p' build-fuzz/fuzz.log | head -1)
  corpus=$(find tests/fuzz/corpus build-fuzz/corpus-new -type f | wc -l)
  echo "phew fuzz: ${runs:-${units:-?} executions}, seed ${seed:-?}, ${added:-0} new inputs this run, corpus ${corpus} inputs"
  if [ "$fuzz_status" -ne 0 ]; then
    echo "phew fuzz: FAILED (status $fuzz_status); the report:"
    grep -v '^#[0-9]' build-fuzz/fuzz.log | tail -60
    echo "phew fuzz: the input is in build-fuzz/artifacts/: $(ls build-fuzz/artifacts | tr '\n' ' ')"
    status=1
  fi
fi
exit $status
