// strata mfu [JOB] [--model M] [--set k=v] [--tokens-per-s N | --step-time T [--tokens-per-step
// N]]: MFU and HFU of a training run under each FLOP convention, side by side. The job is read
// as every command reads it (job_options.h); with nothing given, the reference case (its job
// file states its own throughput: 2.31M tokens per 120 s step).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/model/sequence_lengths.h"
#include "strata/report/mfu_report.h"
#include "strata/sim/mfu_job.h"

namespace strata::cli {

int RunMfu(int argc, char** argv) {
  CLI::App app{
      "MFU and HFU of a training run under each FLOP convention (no arguments: the "
      "reference case)",
      "strata mfu"};
  JobRequest request;
  AddJobOptions(app, request);
  std::string tokens_per_s, tokens_per_step, step_time, peak_dtype = "bf16", nominal_active;
  OutputOptions out;
  auto* rate = app.add_option("--tokens-per-s", tokens_per_s,
                              "job throughput in tokens/s (= --set throughput.tokens_per_s)");
  auto* per_step = app.add_option("--tokens-per-step", tokens_per_step,
                                  "tokens in one optimizer step (2.31M, 80K, 2310000) "
                                  "(= --set throughput.tokens_per_step)");
  auto* step = app.add_option("--step-time", step_time,
                              "one step's wall time (120s, 950ms) (= --set throughput.step_time)");
  rate->excludes(per_step)->excludes(step);
  per_step->needs(step);
  app.add_option("--peak-dtype", peak_dtype, "dense peak to divide by: bf16 or fp8")
      ->capture_default_str();
  app.add_option("--nominal-active-params", nominal_active,
                 "N for 6N-nominal (default: data/models/catalog.yaml)");
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag);
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  // The throughput flags are --set shortcuts: one job, one parser, one validation.
  if (!tokens_per_s.empty()) request.overrides.push_back("throughput.tokens_per_s=" + tokens_per_s);
  if (!step_time.empty()) request.overrides.push_back("throughput.step_time=" + step_time);
  if (!tokens_per_step.empty()) {
    request.overrides.push_back("throughput.tokens_per_step=" + tokens_per_step);
  }
  auto job = ResolveJobRequest(request);
  if (!job.ok()) return ReportError(job.error());
  MfuOptions options;
  options.peak_dtype = peak_dtype;
  if (!nominal_active.empty()) {
    auto n = ParseTokenCount(nominal_active);  // same suffixes: 3.0e9, 3000M
    if (!n.ok()) return ReportError(Error(n.error()).InField("--nominal-active-params"));
    options.nominal_active_params = static_cast<int64_t>(*n);
  }
  auto report = ComputeJobMfu(*job, options);
  if (!report.ok()) return ReportError(report.error());
  ThroughputSource source;
  source.tokens_per_step = job->throughput->tokens_per_step;
  source.step_time_s = job->throughput->step_time_s;
  const std::string text =
      out.json ? DumpJson(MfuJson(*report, source)) : RenderMfuText(*report, source, out.explain);
  return EmitOutputs(out, text);
}

}  // namespace strata::cli
