#!/usr/bin/env bash
# Renders the reference report in a real browser (Debian's chromium, headless) and checks what a
# reader would see: the page loads without a console error, each of the four figures is there
# and draws something, and the numbers drawn in the figures are the numbers of the tables beside
# them (in the DOM the browser built, not in the file strata wrote). The screenshot is kept. A
# second page adds a training log, two ranks' profiler traces and a hang (the figures --log,
# --trace and --hang draw) and is checked the same way.
# Usage: browser_check.sh STRATA_BINARY OUT_DIR
set -euo pipefail
strata="$1"
out="$2"
mkdir -p "$out"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
"$strata" report -o "$out/report.html"
mkdir -p "$out/report-all"
"$strata" report --top 5 -o "$out/report-all/report.html" \
  --log "$repo/tests/golden/logs/reference-megatron-swift/input.log" \
  --trace "$repo/../shared/reference/traces/hta-recsys-sampled-2rank-a100" \
  --hang "$repo/tests/golden/hang/reference-oom-teardown/input"

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "browser_check: chromium is not installed (scripts/setup installs it)" >&2
  exit 1
fi
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
       --user-data-dir="$out/profile" --enable-logging=stderr --v=0)
# check_page DIR "FIGURE IDS" WINDOW_HEIGHT: the checks below on DIR/report.html.
check_page() {
  local out="$1" ids="$2" height="$3" fail=0
  page="file://$(cd "$out" && pwd)/report.html"
  timeout 120 "$browser" "${flags[@]}" --window-size=1200,"$height" --screenshot="$out/report.png" \
    "$page" 2>"$out/console.log" >/dev/null || true
  timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" >"$out/dom.html" 2>>"$out/console.log"

  fail=0
  if grep -E 'CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|Failed to load' "$out/console.log"; then
    echo "browser_check: the page logged errors (above; $out/console.log)" >&2
    fail=1
  fi
  if [[ ! -s "$out/report.png" ]] || (($(stat -c %s "$out/report.png") < 20000)); then
    echo "browser_check: no screenshot, or an empty one ($out/report.png)" >&2
    fail=1
  fi
  # Each figure: present in the DOM and drawing shapes.
  for id in $ids; do
    shapes=$(awk -v id="$id" '
      index($0, "<figure data-figure=\"" id "\"") { inside = 1 }
      inside && /<(rect|circle|line) / { n++ }
      inside && /<\/figure>/ { inside = 0 }
      END { print n + 0 }' "$out/dom.html")
    if ((shapes < 3)); then
      echo "browser_check: figure $id is missing or empty ($shapes shapes)" >&2
      fail=1
    fi
  done
  # The numbers: every data-key/data-value pair drawn inside an <svg> equals the pair of a table
  # cell, and the other way round.
  pairs() {
    awk -v want="$1" '
      /<svg/ { in_svg = 1 } /<\/svg>/ { in_svg = 0 }
      /<table/ { in_table = 1 } /<\/table>/ { in_table = 0 }
      {
        line = $0
        while (match(line, /data-key="[^"]*" data-value="[^"]*"/)) {
          pair = substr(line, RSTART, RLENGTH)
          if ((want == "svg" && in_svg) || (want == "table" && in_table)) print pair
          line = substr(line, RSTART + RLENGTH)
        }
      }' "$out/dom.html" | sort -u
  }
  pairs svg >"$out/svg-numbers.txt"
  pairs table >"$out/table-numbers.txt"
  if ! diff "$out/svg-numbers.txt" "$out/table-numbers.txt" >"$out/numbers.diff"; then
    echo "browser_check: figures and tables disagree ($out/numbers.diff):" >&2
    head -20 "$out/numbers.diff" >&2
    fail=1
  fi
  if (($(wc -l <"$out/svg-numbers.txt") < 20)); then
    echo "browser_check: fewer than 20 numbers drawn" >&2
    fail=1
  fi
  if ((fail == 0)); then
    echo "browser_check: figures $ids: $(wc -l <"$out/svg-numbers.txt") numbers drawn and tabled alike; screenshot $out/report.png"
  fi
  return "$fail"
}

status=0
check_page "$out" "memory step map plan" 4000 || status=1
check_page "$out/report-all" "memory step map plan log trace hang" 7000 || status=1
exit "$status"
