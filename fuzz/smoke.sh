#!/usr/bin/env bash
# CI's fuzz smoke: builds the targets with clang (ASan, UBSan, libFuzzer) into build-fuzz-smoke, runs
# each for a few seconds from its seeds. 21 targets x SECONDS (default 5) plus start-up, once
# built. Any crash, timeout, leak or invariant failure fails the step and names the input.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-5}"
export BUILD_DIR="${BUILD_DIR:-build-fuzz-smoke}"
start=$(date +%s)
# A few seconds a target need no optimiser: at -O0 with line tables the instrumented objects
# compile in about 57% of the CPU time of -O1 (10.5 s against 18.6 s for model_config.cc), which
# is most of the step's time; long runs use build-fuzz at -O1 (docs/fuzzing.md).
CXX=clang++ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON \
  -DSTRATA_SANITIZE=address,undefined -DSTRATA_BENCH=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -gline-tables-only -DNDEBUG" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target strata_fuzz_all
built=$(date +%s)
mkdir -p "$BUILD_DIR/fuzz-logs"
for binary in "$BUILD_DIR"/fuzz/fuzz_*; do
  [[ -f "$binary" && -x "$binary" ]] || continue
  target="${binary##*/fuzz_}"
  log="$BUILD_DIR/fuzz-logs/$target.log"
  if ! fuzz/run.sh "$target" "$SECONDS_PER_TARGET" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz $target found a problem: the input is in $BUILD_DIR/fuzz-findings/$target/" >&2
    exit 1
  fi
  echo "fuzz $target: $(grep -E '^stat::number_of_executed_units' "$log" | tr -s ' ' | cut -d' ' -f2) executions, $(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)"
done
echo "fuzz smoke: build $((built - start)) s, runs $(($(date +%s) - built)) s"
