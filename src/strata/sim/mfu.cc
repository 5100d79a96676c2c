#include "strata/sim/mfu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"
#include "strata/sim/straggler.h"

namespace strata {

namespace {

Status CheckGpus(int64_t gpus) {
  if (gpus <= 0) return InvalidInput("the GPU count must be positive, got " + std::to_string(gpus));
  return OkStatus();
}

MfuPoint Evaluate(const MfuInputs& in, const ParamBreakdown& params, std::string label,
                  double attention_tokens) {
  MfuPoint point;
  point.label = std::move(label);
  point.attention_tokens = attention_tokens;
  const double tokens_per_gpu = in.throughput.tokens_per_s_per_gpu();
  const ConventionInputs conv{attention_tokens, in.nominal_active_params, in.include_mtp};
  FlopCount megatron;
  for (auto& c : TrainingFlopsPerToken(in.model, params, conv)) {
    MfuRow row;
    row.convention = c.convention;
    row.training_per_token = c.training_per_token;
    row.achieved_per_gpu = FlopPerSecond::Of(tokens_per_gpu * c.training_per_token.count());
    row.mfu = row.achieved_per_gpu / in.peak_per_gpu;
    row.formula = std::move(c.formula);
    if (c.convention == FlopConvention::kMegatron) megatron = c.training_per_token;
    point.rows.push_back(std::move(row));
  }
  const ForwardFlops fwd = CountForwardFlops(in.model, attention_tokens, AttentionMask::kCausal);
  point.hardware_per_token =
      HardwareFlopsPerToken(megatron, fwd, in.recompute, in.recompute_layer_fraction,
                            1.0 + (in.include_mtp ? static_cast<double>(in.model.mtp_layers) : 0));
  if (in.trained_flop_adjustment != 0) {
    // Recompute re-runs the forward, frozen or not: only the model part shrinks.
    point.trained_per_token = megatron + FlopCount::Of(in.trained_flop_adjustment);
    point.trained_mfu =
        FlopPerSecond::Of(tokens_per_gpu * point.trained_per_token.count()) / in.peak_per_gpu;
    point.hardware_per_token = point.hardware_per_token + FlopCount::Of(in.trained_flop_adjustment);
  }
  point.hfu =
      FlopPerSecond::Of(tokens_per_gpu * point.hardware_per_token.count()) / in.peak_per_gpu;
  if (in.recompute == Recompute::kFull && in.recompute_layer_fraction >= 1 &&
      in.trained_flop_adjustment == 0) {
    point.four_thirds_per_token = FlopCount::Of(megatron.count() * 4.0 / 3.0);
    point.hfu_four_thirds =
        FlopPerSecond::Of(tokens_per_gpu * point.four_thirds_per_token.count()) / in.peak_per_gpu;
  }
  return point;
}

}  // namespace

Result<MfuThroughput> ThroughputFromStep(double tokens_per_step, Seconds step_time, int64_t gpus) {
  STRATA_RETURN_IF_ERROR(CheckGpus(gpus));
  if (!(tokens_per_step > 0) || !std::isfinite(tokens_per_step)) {
    return InvalidInput(fmt::format("tokens per step must be positive, got {}", tokens_per_step));
  }
  if (!(step_time.s() > 0) || !std::isfinite(step_time.s())) {
    return InvalidInput(fmt::format("the step time must be positive, got {} s", step_time.s()));
  }
  return MfuThroughput{tokens_per_step / step_time.s(), gpus};
}

Result<MfuThroughput> ThroughputFromRate(double tokens_per_s, int64_t gpus) {
  STRATA_RETURN_IF_ERROR(CheckGpus(gpus));
  if (!(tokens_per_s > 0) || !std::isfinite(tokens_per_s)) {
    return InvalidInput(fmt::format("tokens per second must be positive, got {}", tokens_per_s));
  }
  return MfuThroughput{tokens_per_s, gpus};
}

MfuReport ComputeMfu(const MfuInputs& inputs) {
  MfuReport report;
  report.inputs = inputs;
  report.params = CountParams(inputs.model);
  const SequenceLengths& seq = inputs.sequence;
  if (seq.exact) {
    const bool fixed = seq.mean_square_tokens == seq.mean_tokens * seq.mean_tokens;
    report.points.push_back(Evaluate(inputs, report.params,
                                     fixed ? "S = " + GroupDigits(seq.mean_tokens)
                                           : "E[S^2]/E[S] = " + GroupDigits(seq.AttentionTokens()) +
                                                 " (mean " + GroupDigits(seq.mean_tokens) + ")",
                                     seq.AttentionTokens()));
  } else {
    // Only mean and max known: E[S^2]/E[S] lies between them; report both bounds, and between
    // them the length `strata step` prices.
    report.points.push_back(Evaluate(
        inputs, report.params, "S = " + GroupDigits(seq.mean_tokens) + " (mean)", seq.mean_tokens));
    // The length `strata step` prices: E[S^2]/E[S] of the lengths it ASSUMES (uniform on
    // [2 mean - max, max], LengthDistribution::FromSequence), so that `mfu` at the step's
    // throughput reproduces the step's MFU and HFU.
    const LengthDistribution assumed = LengthDistribution::FromSequence(seq);
    if (assumed.assumed) {
      const double tokens = assumed.moment[2] / assumed.moment[1];
      const double lo = std::max(1.0, 2.0 * seq.mean_tokens - seq.max_tokens);
      report.points.push_back(Evaluate(
          inputs, report.params,
          fmt::format("E[S^2]/E[S] = {} (ASSUMED uniform lengths on [{}, {}], as `step` prices)",
                      GroupDigits(tokens), GroupDigits(lo),
                      GroupDigits(2.0 * seq.mean_tokens - lo)),
          tokens));
    }
    report.points.push_back(Evaluate(
        inputs, report.params, "S = " + GroupDigits(seq.max_tokens) + " (max)", seq.max_tokens));
  }
  return report;
}

}  // namespace strata
