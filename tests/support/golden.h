// Golden-file comparison: tests/golden/<parser>/<case>/expected.* hold canonical output.
// UPDATE_GOLDEN=1 rewrites them; reviewers read the diff.
#ifndef STRATA_TESTS_SUPPORT_GOLDEN_H_
#define STRATA_TESTS_SUPPORT_GOLDEN_H_

#include <string>
#include <vector>

namespace strata::testing {

/// Absolute path of a file under tests/ (e.g. "golden/pyspy/basic/input.txt").
std::string TestPath(const std::string& relative);

/// Absolute path of the strata binary of this build (what RunCli executes).
std::string StrataBinary();

/// The file's contents; fails the current test (and returns "") when it cannot be read.
std::string ReadTestFile(const std::string& relative);

/// Compares `actual` with the golden file; with UPDATE_GOLDEN=1 writes it instead.
/// Returns true when they match (or were updated). Reports a diff-like message on mismatch.
bool MatchesGolden(const std::string& relative, const std::string& actual);

/// Sub-directories of tests/<relative> (the cases of one golden suite), sorted.
std::vector<std::string> GoldenCases(const std::string& relative);

/// Runs the strata binary with args; captures stdout, stderr and the exit code.
struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CliResult RunCli(const std::vector<std::string>& args);

/// Runs every case of tests/golden/<suite>/: each case directory holds `args` (one argument per
/// line, "{golden}" standing for the case directory, so goldens do not depend on where the
/// checkout lies) and expected.out (stdout, "--- stderr", stderr, "--- exit code N").
/// A case may instead hold an `edit` file (support/golden_edit.h): its input is another case's
/// with a few lines edited, written to a temporary folder; "{edited}" in `args` stands for that
/// file, and its folder is printed as "{golden}" (the file keeps the name of the input it edits).
/// Fails when the suite has fewer than `min_cases` cases.
void RunCliGoldenSuite(const std::string& suite, size_t min_cases = 1);

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_GOLDEN_H_
