// strata mfu: MFU and HFU of a training run under each FLOP convention, side by side.
// With no arguments: the reference case (Qwen3.6-35B-A3B SFT on 40 H20, 2.31M tokens per
// 120 s step, 29K mean / 49,152 max tokens, full recompute).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/units.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/model/model_catalog.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"
#include "strata/sim/mfu.h"
#include "strata/sim/mfu_report.h"

namespace strata::cli {

namespace {

struct MfuOptions {
  std::string model = kReferenceModelName;
  std::string gpu = "H20";
  int64_t gpus = 40;
  std::string peak_dtype = "bf16";
  std::string tokens_per_step = "2.31M";
  std::string step_time = "120s";
  std::string tokens_per_s;
  std::string seq;
  std::string seq_mean = "29K";
  std::string seq_max = "49152";
  std::string seq_histogram;
  std::string recompute = "full";
  std::string nominal_active;
  bool include_mtp = false;
  bool json = false;
  bool explain = false;
  std::string output;
};

Result<Recompute> ParseRecompute(const std::string& text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  return InvalidInput("unknown recompute '" + text + "'")
      .InField("--recompute")
      .WithHint("expected one of: none, selective, full");
}

Result<SequenceLengths> Sequence(const MfuOptions& o, bool seq_given) {
  if (!o.seq_histogram.empty()) return LoadSequenceHistogram(o.seq_histogram);
  if (seq_given) {
    auto s = ParseTokenCount(o.seq);
    if (!s.ok()) return Error(s.error()).InField("--seq");
    return SequenceLengths::Fixed(*s);
  }
  auto mean = ParseTokenCount(o.seq_mean);
  if (!mean.ok()) return Error(mean.error()).InField("--seq-mean");
  auto max = ParseTokenCount(o.seq_max);
  if (!max.ok()) return Error(max.error()).InField("--seq-max");
  if (*max < *mean) {
    return InvalidInput("the max length (" + o.seq_max + ") is below the mean (" + o.seq_mean + ")")
        .InField("--seq-max");
  }
  return SequenceLengths::MeanMax(*mean, *max);
}

Result<MfuInputs> BuildInputs(const MfuOptions& o, bool seq_given, bool rate_given,
                              ThroughputSource& source) {
  MfuInputs in;
  STRATA_ASSIGN_OR_RETURN(in.model, LoadModelConfig(o.model));
  STRATA_ASSIGN_OR_RETURN(GpuSpec gpu, FindGpu(o.gpu));
  in.gpu_name = gpu.name;
  if (o.peak_dtype == "bf16") {
    in.peak_per_gpu = gpu.bf16_dense;
  } else if (o.peak_dtype == "fp8") {
    if (!gpu.has_fp8()) {
      return InvalidInput(gpu.name + " has no FP8 tensor cores")
          .InField("--peak-dtype")
          .WithHint("use --peak-dtype bf16");
    }
    in.peak_per_gpu = gpu.fp8_dense;
  } else {
    return InvalidInput("unknown peak dtype '" + o.peak_dtype + "'")
        .InField("--peak-dtype")
        .WithHint("expected one of: bf16, fp8");
  }
  if (o.gpus <= 0) {
    return InvalidInput("the GPU count must be positive, got " + std::to_string(o.gpus))
        .InField("--gpus");
  }
  if (rate_given) {
    auto rate = ParseTokenCount(o.tokens_per_s);
    if (!rate.ok()) return Error(rate.error()).InField("--tokens-per-s");
    STRATA_ASSIGN_OR_RETURN(in.throughput, ThroughputFromRate(*rate, o.gpus));
  } else {
    auto tokens = ParseTokenCount(o.tokens_per_step);
    if (!tokens.ok()) return Error(tokens.error()).InField("--tokens-per-step");
    auto step = ParseSeconds(o.step_time);
    if (!step.ok()) return Error(step.error()).InField("--step-time");
    STRATA_ASSIGN_OR_RETURN(in.throughput, ThroughputFromStep(*tokens, *step, o.gpus));
    source.tokens_per_step = *tokens;
    source.step_time_s = step->s();
  }
  STRATA_ASSIGN_OR_RETURN(in.sequence, Sequence(o, seq_given));
  STRATA_ASSIGN_OR_RETURN(in.recompute, ParseRecompute(o.recompute));
  in.include_mtp = o.include_mtp;
  if (!o.nominal_active.empty()) {
    auto n = ParseTokenCount(o.nominal_active);  // same suffixes: 3.0e9, 3000M
    if (!n.ok()) return Error(n.error()).InField("--nominal-active-params");
    in.nominal_active_params = static_cast<int64_t>(*n);
  } else {
    STRATA_ASSIGN_OR_RETURN(auto entry, FindCatalogModel(in.model.name));
    if (entry) in.nominal_active_params = entry->nominal_active_params;
  }
  return in;
}

}  // namespace

int RunMfu(int argc, char** argv) {
  CLI::App app{
      "MFU and HFU of a training run under each FLOP convention (no arguments: the "
      "reference case)",
      "strata mfu"};
  MfuOptions o;
  app.add_option("model", o.model, "config.json path or catalog name")->capture_default_str();
  app.add_option("--gpu", o.gpu, "GPU type from data/gpus.yaml")->capture_default_str();
  app.add_option("--gpus", o.gpus, "number of GPUs in the job")->capture_default_str();
  app.add_option("--peak-dtype", o.peak_dtype, "dense peak to divide by: bf16 or fp8")
      ->capture_default_str();
  auto* per_step = app.add_option("--tokens-per-step", o.tokens_per_step,
                                  "tokens in one optimizer step (2.31M, 80K, 2310000)")
                       ->capture_default_str();
  auto* step = app.add_option("--step-time", o.step_time, "one step's wall time (120s, 950ms)")
                   ->capture_default_str();
  auto* rate = app.add_option("--tokens-per-s", o.tokens_per_s,
                              "job throughput in tokens/s (instead of tokens per step / time)");
  rate->excludes(per_step)->excludes(step);
  // One of a pair alone would silently mix with the reference case's default for the other.
  per_step->needs(step);
  step->needs(per_step);
  auto* seq =
      app.add_option("--seq", o.seq, "one sequence length for every sample (4096, 32K, 48Ki)");
  auto* mean =
      app.add_option("--seq-mean", o.seq_mean, "mean sample length")->capture_default_str();
  auto* max = app.add_option("--seq-max", o.seq_max, "max sample length")->capture_default_str();
  auto* hist = app.add_option("--seq-histogram", o.seq_histogram,
                              "file of 'length count' lines: exact E[S^2]/E[S]");
  seq->excludes(mean)->excludes(max)->excludes(hist);
  hist->excludes(mean)->excludes(max);
  mean->needs(max);
  max->needs(mean);
  app.add_option("--recompute", o.recompute, "none, selective or full")->capture_default_str();
  app.add_option("--nominal-active-params", o.nominal_active,
                 "N for 6N-nominal (default: data/models/catalog.yaml)");
  app.add_flag("--include-mtp", o.include_mtp, "the MTP blocks are built and trained");
  app.add_flag("--json", o.json, "JSON for scripts");
  app.add_flag("--explain", o.explain, "print each formula with the numbers substituted");
  app.add_option("-o,--output", o.output, "write to this file (atomically) instead of stdout");
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  ThroughputSource source;
  auto inputs = BuildInputs(o, seq->count() > 0, rate->count() > 0, source);
  if (!inputs.ok()) return ReportError(inputs.error());
  const MfuReport report = ComputeMfu(*inputs);
  const std::string text =
      o.json ? DumpJson(MfuJson(report, source)) : RenderMfuText(report, source, o.explain);
  return EmitOutput(text, o.output);
}

}  // namespace strata::cli
