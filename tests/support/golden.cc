#include "support/golden.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "support/golden_edit.h"

namespace strata::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string TestPath(const std::string& relative) {
  return std::string(STRATA_TEST_DIR) + "/" + relative;
}

std::string StrataBinary() { return STRATA_BINARY; }

std::string ReadTestFile(const std::string& relative) {
  const std::string path = TestPath(relative);
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "missing test file " << path;
    return "";
  }
  return Slurp(path);
}

bool MatchesGolden(const std::string& relative, const std::string& actual) {
  const std::string path = TestPath(relative);
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return true;
  }
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "missing golden " << path << " (run with UPDATE_GOLDEN=1 to create it)";
    return false;
  }
  const std::string expected = Slurp(path);
  if (expected == actual) return true;
  // Point at the first differing line: goldens are long.
  std::istringstream e(expected), a(actual);
  std::string el, al;
  int line = 1;
  while (true) {
    const bool he = static_cast<bool>(std::getline(e, el));
    const bool ha = static_cast<bool>(std::getline(a, al));
    if (!he && !ha) break;
    if (!he || !ha || el != al) {
      ADD_FAILURE() << path << ":" << line
                    << ": golden differs\n  expected: " << (he ? el : "<eof>")
                    << "\n  actual:   " << (ha ? al : "<eof>")
                    << "\n(UPDATE_GOLDEN=1 rewrites it; review the diff)";
      return false;
    }
    ++line;
  }
  ADD_FAILURE() << path << ": golden differs (line endings?)";
  return false;
}

std::vector<std::string> GoldenCases(const std::string& relative) {
  std::vector<std::string> cases;
  const std::string dir = TestPath(relative);
  if (!std::filesystem::is_directory(dir)) return cases;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory()) cases.push_back(entry.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

CliResult RunCli(const std::vector<std::string>& args) {
  // Files rather than pipes: no deadlock when the child writes a lot to both streams.
  char out_tmpl[] = "/tmp/strata_cli_outXXXXXX";
  char err_tmpl[] = "/tmp/strata_cli_errXXXXXX";
  const int out_fd = mkstemp(out_tmpl);
  const int err_fd = mkstemp(err_tmpl);
  CliResult result;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char*> argv;
    std::string binary = StrataBinary();
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& s : copy) argv.push_back(s.data());
    argv.push_back(nullptr);
    setenv("NO_COLOR", "1", 1);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  close(out_fd);
  close(err_fd);
  result.out = Slurp(out_tmpl);
  result.err = Slurp(err_tmpl);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return result;
}

namespace {

// `edited`: the path of the case's edited input ("" when the case has no edit file).
std::vector<std::string> CaseArgs(const std::string& dir, const std::string& edited) {
  std::vector<std::string> args;
  std::istringstream in(ReadTestFile(dir + "/args"));
  std::string line;
  while (std::getline(in, line)) {
    const auto pos = line.find("{golden}");
    if (pos != std::string::npos) line.replace(pos, 8, TestPath(dir));
    const auto at = line.find("{edited}");
    if (at != std::string::npos) {
      if (edited.empty()) {
        ADD_FAILURE() << TestPath(dir) << "/args: {edited} in a case with no edit file";
      }
      line.replace(at, 8, edited);
    }
    if (!line.empty()) args.push_back(line);
  }
  return args;
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t pos; (pos = text.find(from)) != std::string::npos;)
    text.replace(pos, from.size(), to);
}

}  // namespace

void RunCliGoldenSuite(const std::string& suite, size_t min_cases) {
  const auto cases = GoldenCases("golden/" + suite);
  ASSERT_GE(cases.size(), min_cases) << suite;
  for (const auto& name : cases) {
    const std::string dir = "golden/" + suite + "/" + name;
    const std::string abs = TestPath(dir);
    std::optional<EditedInput> edited;
    if (HasEdit(abs)) {
      edited.emplace(abs);
      // The edit did not apply (the failure names it): never run the unedited input.
      if (edited->path().empty()) continue;
    }
    const CliResult r = RunCli(CaseArgs(dir, edited ? edited->path() : ""));
    std::string actual =
        r.out + "--- stderr\n" + r.err + "--- exit code " + std::to_string(r.exit_code) + "\n";
    // The edited input is printed as if it stood in the case directory, under its own name.
    if (edited) ReplaceAll(actual, edited->dir(), "{golden}");
    ReplaceAll(actual, abs, "{golden}");
    EXPECT_TRUE(MatchesGolden(dir + "/expected.out", actual)) << dir;
  }
}

}  // namespace strata::testing
