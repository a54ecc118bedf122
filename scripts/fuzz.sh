#!/usr/bin/env bash
# Build the libFuzzer harness of phew_find_clumps (tests/fuzz) with clang into build-fuzz/,
# replay every kept input (ctest: tests/fuzz/corpus and tests/fuzz/regressions), then fuzz
# from the corpus: PHEW_FUZZ_RUNS executions (default 12000) with the seed PHEW_FUZZ_SEED
# (default 1, so that CI runs are reproducible; 0 picks a random seed for exploration), at
# most PHEW_FUZZ_SECONDS seconds (default 300; 0 only replays). The executions are shared by
# one fuzzing process per core (PHEW_FUZZ_WORKERS, default nproc): libFuzzer runs on one core,
# and this stage has nothing else to run beside it. Worker k (from 0) runs its share with the
# seed PHEW_FUZZ_SEED + k (each 0 with seed 0), logged in build-fuzz/fuzz-k.log.
# Inputs that add coverage go to build-fuzz/corpus-new/K (worker K), never into the source tree. A
# crash, a sanitizer report or a broken oracle fails the script; the input is saved in
# build-fuzz/artifacts/: add it to tests/fuzz/regressions/ once understood. Part of
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${PHEW_FUZZ_SECONDS:-300}
runs_wanted=${PHEW_FUZZ_RUNS:-12000}
seed_wanted=${PHEW_FUZZ_SEED:-1}
jobs=$(nproc 2>/dev/null || echo 2)
workers=${PHEW_FUZZ_WORKERS:-$jobs}
if ! [ "$workers" -ge 1 ] 2>/dev/null; then
  echo "phew fuzz: PHEW_FUZZ_WORKERS must be a whole number of at least 1 (got '$workers')" >&2
  exit 2
fi

cmake -S tests/fuzz --preset fuzz # tests/fuzz/CMakePresets.json: build-fuzz/, clang, warnings as errors
cmake --build build-fuzz -j"$jobs"

status=0
(cd build-fuzz && ctest --output-on-failure -j"$jobs") || status=1

if [ "$seconds" -gt 0 ]; then
  mkdir -p build-fuzz/artifacts
  rm -f build-fuzz/fuzz-*.log
  echo "phew fuzz: $runs_wanted executions (and the kept inputs again in each further process) with seed $seed_wanted over $workers process(es), at most $seconds s (logs: build-fuzz/fuzz-*.log)"
  # One process per core, each with its share of the executions and a seed of its own, from
  # the kept corpus into a folder of its own (corpus-new/K), never reading the others' new
  # inputs (-reload=0): the same seed and worker count give the same run. -timeout: an input
  # taking 30 s is a hang; -max_len: a full float64 12^3 field with its header fits.
  # Each worker first runs the inputs it starts from (the kept corpus and its own earlier new
  # ones, about 540) to learn their coverage: every worker after the first runs that many
  # more, so that the mutated inputs add up to what one process running PHEW_FUZZ_RUNS
  # executions tries.
  pids=()
  for ((k = 0; k < workers; k++)); do
    mkdir -p build-fuzz/corpus-new/$k
    kept=$(find tests/fuzz/corpus build-fuzz/corpus-new/$k -type f | wc -l)
    share=$(((runs_wanted + workers - 1 - k) / workers)) # the shares add up to runs_wanted
    [ "$k" -eq 0 ] || share=$((share + kept))
    seed_k=$seed_wanted
    [ "$seed_wanted" -eq 0 ] || seed_k=$((seed_wanted + k))
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      build-fuzz/fuzz_find_clumps -max_total_time="$seconds" -runs="$share" -seed="$seed_k" -timeout=30 -max_len=16384 -reload=0 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/artifacts/ build-fuzz/corpus-new/$k tests/fuzz/corpus \
      > build-fuzz/fuzz-$k.log 2>&1 &
    pids+=($!)
  done
  failed_workers=()
  for ((k = 0; k < workers; k++)); do
    wait "${pids[$k]}" || failed_workers+=("$k")
  done
  # the figures, summed over the workers: executions, time (the longest), new inputs, corpus
  runs=0 secs=0 added=0 seeds=()
  for ((k = 0; k < workers; k++)); do
    log=build-fuzz/fuzz-$k.log
    r=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    t=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    a=$(sed -n 's/^stat::new_units_added: *//p' "$log")
    seeds+=("$(sed -n 's/.*Seed: \([0-9]*\).*/\1/p' "$log" | head -1)")
    runs=$((runs + ${r:-0}))
    added=$((added + ${a:-0}))
    [ "${t:-0}" -le "$secs" ] || secs=$t
  done
  corpus=$(find tests/fuzz/corpus build-fuzz/corpus-new -type f | wc -l)
  echo "phew fuzz: $runs executions in $secs s, seeds ${seeds[*]}, $added new inputs this run, corpus ${corpus} inputs"
  for k in "${failed_workers[@]}"; do
    echo "phew fuzz: FAILED (worker $k, seed ${seeds[$k]}); the report (build-fuzz/fuzz-$k.log):"
    grep -v '^#[0-9]' build-fuzz/fuzz-$k.log | tail -60
    status=1
  done
  if [ ${#failed_workers[@]} -gt 0 ]; then
    echo "phew fuzz: the input is in build-fuzz/artifacts/: $(ls build-fuzz/artifacts | tr '\n' ' ')"
  fi
fi
exit $status
