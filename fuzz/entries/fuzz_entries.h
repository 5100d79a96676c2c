// The fuzz targets' entry points, shared by the libFuzzer drivers (clang, STRATA_FUZZ=ON) and the
// replay test that feeds every input kept under fuzz/regressions/<target>/ to the same function
// in the normal build. An entry parses its input, renders what it parsed as JSON and as text, and
// checks invariants; a violated invariant or an escaping exception aborts (a finding).
#ifndef STRATA_FUZZ_ENTRIES_FUZZ_ENTRIES_H_
#define STRATA_FUZZ_ENTRIES_FUZZ_ENTRIES_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/json_output.h"

namespace strata::fuzz {

using Entry = void (*)(std::string_view input);

struct Target {
  std::string_view name;  // fuzz_<name> is the libFuzzer binary; regressions/<name>/ its inputs
  Entry entry;
};

const std::vector<Target>& Targets();
const Target* FindTarget(std::string_view name);

// --- invariants: each aborts with a message naming what failed -------------------------------

/// Aborts with "fuzz invariant violated: <what>" unless `ok`.
void Require(bool ok, std::string_view what);

/// The JSON output a command would print: valid UTF-8, parses back as JSON. Returns the text.
std::string CheckJsonOutput(const Json& json);

/// Text output a command would print: after the CLI's sanitising it is valid UTF-8.
void CheckTextOutput(const std::string& text);

/// A parse that succeeded twice must give the same result: compares two renderings.
void RequireSame(const std::string& first, const std::string& second, std::string_view what);

// --- the entries, one per parser or loader -----------------------------------------------------
void PySpyText(std::string_view input);
void PySpyJson(std::string_view input);
void FlightRecorder(std::string_view input);
void Pickle(std::string_view input);
void WatchdogLog(std::string_view input);
void LogSignals(std::string_view input);
void NcclRas(std::string_view input);
void BundleManifest(std::string_view input);
void Evidence(std::string_view input);
void HfModelConfig(std::string_view input);
void JobYaml(std::string_view input);
void ClusterYaml(std::string_view input);
void SeqHistogram(std::string_view input);
void UnitStrings(std::string_view input);
void GlooLog(std::string_view input);
void ImportCmdline(std::string_view input);
void ImportToml(std::string_view input);
void ImportJson(std::string_view input);
void ImportYaml(std::string_view input);
void TrainingLog(std::string_view input);
void NodeState(std::string_view input);

}  // namespace strata::fuzz

#endif  // STRATA_FUZZ_ENTRIES_FUZZ_ENTRIES_H_
