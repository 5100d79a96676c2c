#!/usr/bin/env bash
# The check of scripts/check_single_copies itself: on a small tree that uses core's functions it
# passes; each planted copy (a local Contains, StartsWith, EndsWith or SplitNul, a lambda copy,
# a fork/exec outside core/subprocess.cc, an ANSI stripper) makes it fail and name the file and line. Uses of the
# functions, prose in comments and tests that start processes do not.
# Usage: tests/lint/check_single_copies_test.sh CHECK_SCRIPT
set -uo pipefail
check="$1"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
failures=0

reset_tree() {
  rm -rf "$tree"/*
  mkdir -p "$tree"/src/strata/core "$tree"/src/strata/hang "$tree"/tests/hang "$tree"/bench
  cat >"$tree/src/strata/core/strings.h" <<'CC'
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}
std::vector<std::string> SplitNul(std::string_view text);
CC
  cat >"$tree/src/strata/core/subprocess.cc" <<'CC'
pid_t Start() {
  const pid_t child = ::fork();
  if (child == 0) ::execv(exe, argv);
  return child;
}
CC
  cat >"$tree/src/strata/hang/uses.cc" <<'CC'
// Contains(text, part) and fork() in prose are not code; neither is system (the word).
bool Sniff(std::string_view head) {
  if (Contains(head, "NCCL") || head.starts_with("Thread ")) return true;
  const bool py = !Contains(head, "x") && head.ends_with(".py");
  for (const std::string& kv : SplitNul(head)) (void)kv;
  return Contains(head, "Traceback") && py;
}
int Ids(const Options& o) { return o.system_id + o.fork_count; }
CC
  cat >"$tree/tests/hang/fake_trainer_test.cc" <<'CC'
TEST(Collect, FakeTrainer) {
  const pid_t child = ::fork();
  if (child == 0) ::execl("/bin/sh", "sh", "-c", "sleep 30", nullptr);
}
CC
}

expect() {  # expect pass|fail NAME [FILE:LINE expected in the message]
  local want="$1" name="$2" where="${3:-}" out rc
  out="$("$check" "$tree" 2>&1)"
  rc=$?
  if [[ "$want" == pass && $rc -ne 0 ]] || [[ "$want" == fail && $rc -eq 0 ]]; then
    echo "FAIL: $name: expected $want, got exit $rc" >&2
    echo "$out" >&2
    failures=$((failures + 1))
  elif [[ -n "$where" && "$out" != *"$where"* ]]; then
    echo "FAIL: $name: the message does not name $where:" >&2
    echo "$out" >&2
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

plant() {  # plant FILE TEXT: a fresh tree with TEXT appended to FILE
  reset_tree
  mkdir -p "$(dirname "$tree/$1")"
  printf '%s\n' "$2" >>"$tree/$1"
}

reset_tree
expect pass "a tree using core's functions"

plant src/strata/hang/uses.cc 'bool Contains(std::string_view s, std::string_view p) { return s.find(p) != s.npos; }'
expect fail "a local Contains" "src/strata/hang/uses.cc:9"
plant src/strata/logs/parser.cc 'static bool StartsWith(const std::string& s, const char* p) {'
expect fail "a static StartsWith" "src/strata/logs/parser.cc:1"
plant src/strata/hang/uses.cc '  inline bool EndsWith(std::string_view s, std::string_view suffix) {'
expect fail "an indented inline EndsWith" "src/strata/hang/uses.cc:9"
plant src/strata/preflight/node.cc 'std::vector<std::string> SplitNul(const std::string& text) {'
expect fail "a local SplitNul" "src/strata/preflight/node.cc:1"
plant src/strata/hang/uses.cc '  auto StartsWith = [](std::string_view s, std::string_view p) { return s.find(p) == 0; };'
expect fail "a lambda copy" "src/strata/hang/uses.cc:9"
plant tests/hang/fake_trainer_test.cc 'bool Contains(const std::string& s, const char* p);'
expect fail "a copy in a test" "tests/hang/fake_trainer_test.cc:5"
plant src/strata/hang/collect.cc '  const pid_t child = ::fork();'
expect fail "a fork outside the runner" "src/strata/hang/collect.cc:1"
plant src/strata/preflight/run.cc '    execve(exe.c_str(), argv.data(), envp.data());'
expect fail "an exec outside the runner" "src/strata/preflight/run.cc:1"
plant bench/hang_bench.cc 'FILE* f = popen("nvidia-smi", "r");'
expect fail "a popen in a benchmark" "bench/hang_bench.cc:1"
plant src/strata/cli/main.cc '  std::system("py-spy dump");'
expect fail "std::system" "src/strata/cli/main.cc:1"
plant src/strata/core/file_io.cc 'pid_t p = fork();'
expect fail "a fork in core outside subprocess.cc" "src/strata/core/file_io.cc:1"
plant src/strata/logs/reader.cc "    if (line[i] == '\\x1b' && line[i + 1] == '[') {"
expect fail "an ANSI stripper of its own" "src/strata/logs/reader.cc:1"

if ((failures > 0)); then
  echo "$failures case(s) failed" >&2
  exit 1
fi
echo "all cases passed"
