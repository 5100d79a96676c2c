#!/usr/bin/env bash
# Runs one fuzz target for a bounded time, seeded from the goldens and data/ (read-only: new
# inputs go to $BUILD_DIR/fuzz-corpus/<target>), with the format's dictionary. Findings
# (crash-*, timeout-*, oom-*) are written to $BUILD_DIR/fuzz-findings/<target>/; keep each, once
# fixed, in fuzz/regressions/<target>/ so ctest replays it.
# Usage: fuzz/run.sh <target> <seconds> [more libFuzzer flags]    (build: see docs/fuzzing.md)
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1
seconds=$2
shift 2
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
binary="$BUILD_DIR/fuzz/fuzz_$target"
[[ -x "$binary" ]] || { echo "fuzz/run.sh: no $binary; build it first (docs/fuzzing.md)" >&2; exit 2; }

case "$target" in
  pyspy_text | pyspy_json) seeds=(tests/golden/pyspy) ;;
  flight_recorder | pickle) seeds=(tests/golden/flight_recorder) ;;
  watchdog_log | log_signals) seeds=(tests/golden/watchdog) ;;
  nccl_ras) seeds=(tests/golden/nccl_ras) ;;
  bundle_manifest) seeds=(tests/golden/hang) ;;
  evidence) seeds=(tests/golden/hang tests/golden/pyspy tests/golden/watchdog tests/golden/nccl_ras) ;;
  model_config) seeds=(data/models tests/golden/cli_model) ;;
  job_yaml) seeds=(data/jobs tests/job/data tests/golden/cli_memory) ;;
  cluster_yaml) seeds=(data/clusters tests/golden/cli_map) ;;
  seq_histogram) seeds=(data/sequence_histograms) ;;
  unit_strings) seeds=(fuzz/seeds/unit_strings) ;;
  *) echo "fuzz/run.sh: unknown target '$target'" >&2; exit 2 ;;
esac
[[ -d "fuzz/regressions/$target" ]] && seeds+=("fuzz/regressions/$target")

corpus="$BUILD_DIR/fuzz-corpus/$target"
findings="$BUILD_DIR/fuzz-findings/$target"
mkdir -p "$corpus" "$findings"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
      -print_final_stats=1 -artifact_prefix="$findings/")
[[ -f "fuzz/dict/$target.dict" ]] && args+=(-dict="fuzz/dict/$target.dict")
# The first directory receives new inputs; the seed directories are only read.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  exec "$binary" "${args[@]}" "$@" "$corpus" "${seeds[@]}"
