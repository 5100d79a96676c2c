// `strata logs`: a training log fed line by line as the reader does (lines cut at the reader's
// limit), the summary and every step as JSON, DescribeImpliedPeak and the MFU recomputed against
// the reference job for each rank, as `strata logs --job` does.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "entries/fuzz_entries.h"
#include "strata/core/file_io.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_job.h"
#include "strata/logs/log_json.h"
#include "strata/logs/log_mfu.h"
#include "strata/logs/log_reader.h"

namespace strata::fuzz {
namespace {

std::string Analyse(std::string_view input, const Result<LogJob>& job,
                    const Result<std::vector<GpuSpec>>& gpus) {
  Json steps = Json::array();
  LogAnalyzer::Callbacks callbacks;
  callbacks.on_step = [&](int rank, const StepRecord& step) {
    steps.push_back(StepToJson(rank, step));
  };
  LogAnalyzer analyzer(callbacks);
  int64_t lines = 0;
  while (!input.empty()) {
    const size_t nl = input.find('\n');
    const std::string_view line = input.substr(0, nl);
    analyzer.FeedLine(line.substr(0, std::min(line.size(), kMaxLogLineBytes)));
    ++lines;
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  }
  analyzer.Finish();
  const LogSummary& summary = analyzer.Summary();
  Require(summary.lines == lines, "logs: every line fed is counted");
  Require(summary.recognised_lines <= summary.lines, "logs: no more lines recognised than read");
  Require(summary.anomalies.size() <= kMaxKeptAnomalies, "logs: kept anomalies are bounded");
  std::optional<Json> mfu_json;
  for (const RankSummary& rank : summary.ranks) {
    if (!job.ok()) break;
    if (gpus.ok()) static_cast<void>(DescribeImpliedPeak(rank, *gpus));
    if (auto mfu = RecomputeLogMfu(rank, *job); mfu.ok()) {
      mfu_json = LogMfuToJson(*mfu, *job);
      CheckJsonOutput(*mfu_json);
    }
  }
  return CheckJsonOutput(LogReportToJson("fuzz.log", summary, steps, mfu_json, ""));
}

}  // namespace

void TrainingLog(std::string_view input) {
  static const Result<LogJob> job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  static const Result<std::vector<GpuSpec>> gpus = LoadGpuCatalog(DataDir() + "/gpus.yaml");
  RequireSame(Analyse(input, job, gpus), Analyse(input, job, gpus),
              "logs: analysing twice gives one report");
}

}  // namespace strata::fuzz
