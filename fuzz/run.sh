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
  gloo_log) seeds=(tests/golden/hang-real/strata-h200-gloo4-broadcast-vs-allreduce
                   tests/golden/hang-real/strata-h200-gloo-rank-never-joins tests/golden/watchdog) ;;
  import_cmdline) seeds=(tests/golden/cli_import) ;;
  import_toml) seeds=(tests/golden/cli_import/torchtitan_llama3_8b tests/golden/cli_import/malformed_toml) ;;
  import_json) seeds=(fuzz/seeds/import_json tests/golden/cli_import/swift_deepspeed_zero2) ;;
  import_yaml) seeds=(fuzz/seeds/import_yaml) ;;
  training_log) seeds=(tests/golden/logs) ;;
  node_state)
    # One seed per node bundle: its files in the order the entry reads them (node_state_entry.cc),
    # split at a line "----8<----"; an absent file is an empty part.
    seeds=("$BUILD_DIR/fuzz-seeds/node_state")
    mkdir -p "${seeds[0]}"
    for node in tests/golden/preflight/*/*/; do
      out="${seeds[0]}/$(basename "$(dirname "$node")")_$(basename "$node")"
      first=1
      for part in node-state.json nvidia-smi.txt gpus.csv compute-apps.csv xid.txt ip-addr.json \
                  ip-route.json ibdev2netdev.txt rdma-link.txt gids.txt shell-env.txt nccl.conf \
                  versions.txt; do
        ((first)) || printf '\n----8<----\n'
        first=0
        [[ -f "$node$part" ]] && cat "$node$part"
      done >"$out"
    done ;;
  *) echo "fuzz/run.sh: unknown target '$target'" >&2; exit 2 ;;
esac
[[ -d "fuzz/regressions/$target" ]] && seeds+=("fuzz/regressions/$target")

corpus="$BUILD_DIR/fuzz-corpus/$target"
findings="$BUILD_DIR/fuzz-findings/$target"
mkdir -p "$corpus" "$findings"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
      -print_final_stats=1 -artifact_prefix="$findings/")
[[ -f "fuzz/dict/$target.dict" ]] && args+=(-dict="fuzz/dict/$target.dict")
# The first directory receives new inputs; the seed directories are only read. ASan keeps 64 MB
# of freed memory in quarantine (not 256) and 5 frames per allocation (not 30): a million
# executions of cluster_yaml averaged 711 a second and peaked at 271 MB instead of 397 a second
# and 1 GB (docs/fuzzing.md, sixth round); use-after-free is still caught within 64 MB.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:quarantine_size_mb=64:malloc_context_size=5}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  exec "$binary" "${args[@]}" "$@" "$corpus" "${seeds[@]}"
