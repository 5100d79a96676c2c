// strata profile TRACE...: where the GPU time of each rank and step went, measured from PyTorch
// profiler traces (plain or gzip Chrome-trace JSON, one file per rank, or directories of them).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/json_output.h"
#include "strata/profile/profile.h"
#include "strata/report/profile_report.h"

namespace strata::cli {

int RunProfile(int argc, char** argv) {
  CLI::App app{
      "Measured step breakdown from PyTorch profiler (Kineto) traces: per rank and per "
      "ProfilerStep#N, GPU busy and idle time, dense and grouped GEMM, attention, "
      "linear attention, memory-bound kernels, NCCL (overlapped and exposed) and other "
      "communication, memcpy, memset.\n"
      "Exit codes: 0 read, 2 bad usage or a file that is not a trace, 3 traces read but no GPU "
      "event in any of them.",
      "strata profile"};
  std::vector<std::string> paths;
  OutputOptions out;
  std::string rules;
  app.add_option("traces", paths, "trace files (.json, .json.gz), one per rank, or directories");
  AddOutputOptions(app, out, kJsonFlag, "", "the breakdown");
  app.add_option("--rules", rules,
                 "kernel classification rules (default: data/profile/kernel_classes.yaml)");
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  auto files = profile::ExpandTracePaths(paths);
  if (!files.ok()) return ReportError(files.error());
  auto classifier = profile::KernelClassifier::Load(rules);
  if (!classifier.ok()) return ReportError(classifier.error());
  auto report = profile::ProfileTraces(*files, *classifier);
  if (!report.ok()) return ReportError(report.error());
  // The default rules by their place in the tree, so output does not depend on the checkout.
  if (rules.empty()) report->rules_file = "data/profile/kernel_classes.yaml";
  for (const std::string& w : report->warnings) Warn(w);
  const std::string text =
      out.json ? DumpJson(profile::ProfileJson(*report)) : profile::ProfileText(*report);
  if (int code = EmitOutputs(out, text); code != kExitOk) return code;
  for (const profile::RankProfile& r : report->ranks) {
    if (r.whole_trace.gpu_events > 0) return kExitOk;
  }
  return kExitNoVerdict;  // read, but nothing on the GPU to break down: never "all clear"
}

}  // namespace strata::cli
