#include "strata/logs/log_mfu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"
#include "strata/core/units.h"
#include "strata/model/sequence_lengths.h"

namespace strata {

namespace {

struct Candidate {
  std::string reason;
  double value = 0;
};

const MfuRow* Row(const MfuPoint& point, FlopConvention c) {
  for (const auto& row : point.rows) {
    if (row.convention == c) return &row;
  }
  return nullptr;
}

// The candidate closest to `printed`; "agrees" when ours is within tolerance.
PrintedVsOurs Explain(std::string quantity, double printed, double ours,
                      const std::vector<Candidate>& candidates) {
  PrintedVsOurs p{std::move(quantity), printed, ours, false, ""};
  auto rel = [&](double v) { return v > 0 ? std::fabs(printed / v - 1) : INFINITY; };
  if (rel(ours) <= kPrintedTolerance) {
    p.agrees = true;
    p.reason = fmt::format("agrees within {:.0f}% ({:+.1f}%)", 100 * kPrintedTolerance,
                           100 * (printed / ours - 1));
    return p;
  }
  const Candidate* best = nullptr;
  for (const auto& c : candidates) {
    if (rel(c.value) <= kPrintedTolerance && (!best || rel(c.value) < rel(best->value))) best = &c;
  }
  if (best) {
    // In the quantity's own unit: MFU as a percentage, as the log and our figure print it.
    const std::string gives = p.quantity == "MFU" ? fmt::format("{:.2f}%", 100 * best->value)
                                                  : fmt::format("{:.4g}", best->value);
    p.reason =
        fmt::format("{:+.0f}% vs ours: {} (that gives {}, {:+.1f}%)", 100 * (printed / ours - 1),
                    best->reason, gives, 100 * (printed / best->value - 1));
  } else {
    p.reason = fmt::format(
        "{:+.0f}% vs ours, and no known convention explains it (6N, padded length, attention "
        "length, another GPU's peak): check the job's batch, lengths and GPU count",
        100 * (printed / ours - 1));
  }
  return p;
}

}  // namespace

std::optional<std::string> DescribeImpliedPeak(const RankSummary& run,
                                               const std::vector<GpuSpec>& gpus) {
  auto tflops = run.printed_tflops_per_gpu.Mean();
  auto mfu = run.printed_mfu.Mean();
  if (!tflops || !mfu || *mfu <= 0) return std::nullopt;
  const double implied = *tflops * 1e12 / *mfu;
  std::string names, sizes;
  bool size_fits = false, a100_peak = false;
  const double gib = 1073741824.0;
  for (const GpuSpec& g : gpus) {
    if (std::fabs(implied / g.bf16_dense.flop_per_s() - 1) > 0.02) continue;
    names += (names.empty() ? "" : " / ") + g.name;
    sizes += fmt::format("{}{:.0f} GB", sizes.empty() ? "" : " / ", g.memory.value() / 1e9);
    a100_peak = a100_peak || g.name.starts_with("A100");
    if (run.device_gib_min && run.device_gib_max &&
        *run.device_gib_max * gib * kDeviceMemoryFactor >= g.memory.value() &&
        *run.device_gib_min * gib <= g.memory.value() * kDeviceMemoryFactor) {
      size_fits = true;
    }
  }
  std::string out = fmt::format("printed TFLOP/s / printed MFU = {:.4g} / {:.4g}% = {}: {}",
                                *tflops, 100 * *mfu, FormatTflops(FlopPerSecond::Of(implied)),
                                names.empty() ? "no GPU in data/gpus.yaml has that dense bf16 peak"
                                              : "the dense bf16 peak of the " + names);
  // torchtitan names a device's peak by a substring of its name and divides by the A100's for
  // any device it does not know (pytorch/torchtitan@b5bcd76c torchtitan/tools/utils.py:141-259,
  // get_peak_flops: "Peak flops undefined for: <device>, fallback to A100"). Only that peak is
  // called a fallback: an H100 of a size the catalog lacks (94.99 GiB, PR #1625) still gets the
  // H100's own peak.
  if (run.format == LogFormat::kTorchtitan && a100_peak && run.device_gib_min &&
      run.device_gib_max && *run.device_gib_min <= *run.device_gib_max && !size_fits) {
    out += fmt::format(
        "; but the log's memory figure (GiB and its share of the device) gives a {:.2f} GiB "
        "device, which none of them is ({}, each within {:.2f}x): the printed MFU is against "
        "torchtitan's fallback peak for a device it does not know, not the device's "
        "(pytorch/torchtitan@b5bcd76c torchtitan/tools/utils.py:258-259, \"Peak flops undefined "
        "for: <device>, fallback to A100\")",
        (*run.device_gib_min + *run.device_gib_max) / 2, sizes, kDeviceMemoryFactor);
  }
  return out;
}

void UseLogLengths(const RankSummary& run, LogJob& job) {
  const std::optional<double> mean = run.sample_mean_tokens.Mean();
  if (!mean || *mean <= 0) return;
  const std::string was =
      fmt::format("the job's {} mean / {} max", GroupDigits(job.seq_mean_tokens),
                  GroupDigits(job.seq_max_tokens));
  job.seq_mean_tokens = *mean;
  std::string max_source;
  if (run.sample_max_tokens >= *mean) {
    job.seq_max_tokens = run.sample_max_tokens;
    max_source = "max = prompt_length/max + response_length/max, the largest of the records";
  } else if (job.prompt_cap_tokens > 0 && run.response_max_tokens > 0 &&
             job.prompt_cap_tokens + run.response_max_tokens >= *mean) {
    job.seq_max_tokens = job.prompt_cap_tokens + run.response_max_tokens;
    max_source = fmt::format(
        "max = the RL job's prompt cap {} + the log's response_length/max {} (the log prints no "
        "prompt_length/max)",
        GroupDigits(job.prompt_cap_tokens), GroupDigits(run.response_max_tokens));
  } else {
    job.seq_max_tokens = *mean;
    max_source = "no max: the log prints no prompt_length/max, so MFU is given at the mean only";
  }
  job.lengths_source = fmt::format(
      "the log's own sample lengths, not {}: mean = prompt_length/mean + response_length/mean "
      "= {} tokens (mean over {} record{}); {}",
      was, GroupDigits(*mean), static_cast<int64_t>(run.sample_mean_tokens.weight),
      run.sample_mean_tokens.weight == 1 ? "" : "s", max_source);
}

Result<LogMfu> RecomputeLogMfu(const RankSummary& run, const LogJob& job) {
  LogMfu out;
  const double gbs = run.global_batch.Mean().value_or(job.global_batch);
  const std::string gbs_source = run.global_batch.Mean() ? "log" : "job";
  // Step time: the framework's own, else from samples/s (DeepSpeed), else the clock. An RL
  // log's step time is the trainer's update (verl's timing_s/update_actor); its iteration, the
  // rollout included, is never one (logs/other_lines.cc, ParseVerlLine).
  const bool verl = run.format == LogFormat::kVerl;
  const std::optional<double> iteration = run.rl_iteration_s.Mean();
  if (auto t = run.step_time_s.Mean()) {
    out.step_time_s = *t;
    out.step_time_source =
        verl ? fmt::format(
                   "verl's timing_s/update_actor, the actor's update: forward, backward and "
                   "optimizer over the iteration's tokens, ppo_epochs times, with any offload "
                   "reloads; mean over steady steps. Not timing_s/step{}, the whole RL "
                   "iteration: rollout, reward, log-prob passes, update, weight sync",
                   iteration ? fmt::format(" ({:.2f} s)", *iteration) : "")
        : run.format == LogFormat::kDeepSpeed
            ? "DeepSpeed's wall-clock breakdown, forward + backward + step (backward_inner and "
              "backward_allreduce lie inside backward): the engine's timed phases of the step, "
              "not what runs between them (data loading); mean over steady steps"
        : run.interval_step_times > 0
            ? "the log's clock between records over the steps between them (its train_speed "
              "or tqdm s/it is an average over many steps, not a step's own time), mean over "
              "steady steps: warm-up, stalls, drops excluded"
            : "the log's step times, mean over steady steps: warm-up, stalls, drops excluded";
    if (auto now = run.slow_step_time_s.Mean(); now && run.EndsSlow() && !verl && !iteration) {
      out.now_step_time_s = *now;
      out.now_since_step = run.slow_since_step;
      out.step_time_source += fmt::format(", before the slowdown at step {}", run.slow_since_step);
    }
  } else if (verl && run.step_time_records > 0) {
    return InvalidInput(
               fmt::format("verl's log gives {} record{} of timing_s/update_actor, all in the "
                           "warm-up (steps 1 to {}: compilation and first allocations), so no "
                           "steady actor update to take throughput and MFU over",
                           run.step_time_records, run.step_time_records == 1 ? "" : "s",
                           run.warmup_steps))
        .WithHint("a log that runs past the warm-up steps gives the steady update");
  } else if (iteration || verl) {
    return InvalidInput(
               fmt::format(
                   "verl's log gives no timing_s/update_actor, the actor's update where the "
                   "trainer's FLOP run{}: timing_s/step is the whole RL iteration (rollout "
                   "generation, reward, log-prob passes, update, weight sync), and no throughput "
                   "or "
                   "MFU of the trainer is taken over it",
                   iteration ? fmt::format(" (its RL iteration: {:.2f} s)", *iteration) : ""))
        .WithHint(
            "the actor's update (timing_s/update_actor) is the trainer's step; `strata rl --log` "
            "puts each of verl's timers beside strata's RL step");
  } else if (auto sps = run.samples_per_s.Mean(); sps && gbs > 0) {
    out.step_time_s = gbs / *sps;
    out.step_time_source =
        fmt::format("global batch {} ({}) / {:.4g} samples/s (log)", gbs, gbs_source, *sps);
  } else if (auto wall = run.WallSeconds();
             wall && run.steps_advanced > 0 && run.numbered_records == 0) {
    out.step_time_s = *wall / static_cast<double>(run.steps_advanced);
    out.step_time_source = "wall time / steps (log clock)";
  } else {
    return InvalidInput(
               "the log gives no step time past the warm-up steps, and no samples/s or clock to "
               "derive one from")
        .WithHint("a step time is needed to recompute throughput and MFU");
  }
  // Tokens per step: printed by the log, else batch x mean length (the job's lengths).
  if (auto tokens = run.tokens.Mean()) {
    out.tokens_per_step = *tokens;
    out.tokens_source = verl ? "verl's perf/total_num_tokens: the prompt and response tokens of "
                               "the iteration's batch, trained once; ppo_epochs 1 assumed, "
                               "verl's default, as the log does not print it"
                             : "tokens per step printed in the log";
  } else if (gbs > 0) {
    out.tokens_per_step = gbs * job.seq_mean_tokens;
    out.tokens_source = fmt::format("global batch {} ({}) x mean length {} tokens (job)", gbs,
                                    gbs_source, GroupDigits(job.seq_mean_tokens));
  } else if (auto tps = run.printed_tokens_per_s_per_gpu.Mean()) {
    out.tokens_per_step = *tps * static_cast<double>(job.gpus) * out.step_time_s;
    out.tokens_source = "tokens/s per GPU printed in the log x GPUs x step time";
  } else {
    return InvalidInput("the log gives no global batch or token count, and the job none either")
        .WithHint("set the job's batch.global_batch (--set batch.global_batch=N)");
  }
  MfuInputs in;
  in.model = job.model;
  in.sequence = job.seq_mean_tokens < job.seq_max_tokens
                    ? SequenceLengths::MeanMax(job.seq_mean_tokens, job.seq_max_tokens)
                    : SequenceLengths::Fixed(job.seq_max_tokens);
  STRATA_ASSIGN_OR_RETURN(
      in.throughput,
      ThroughputFromStep(out.tokens_per_step, Seconds::Of(out.step_time_s), job.gpus));
  in.peak_per_gpu = job.peak_per_gpu;
  in.gpu_name = job.gpu_name;
  in.recompute = job.recompute;
  in.recompute_layer_fraction = job.recompute_layer_fraction;
  in.nominal_active_params = job.nominal_active_params;
  in.include_mtp = job.include_mtp;
  out.report = ComputeMfu(in);
  out.tokens_per_s_per_gpu = in.throughput.tokens_per_s_per_gpu();
  const MfuPoint& mean_point = out.report.points.front();
  const MfuPoint& max_point = out.report.points.back();
  const MfuRow* megatron = Row(mean_point, FlopConvention::kMegatron);
  if (megatron == nullptr) return InvalidInput("no Megatron FLOP count for this model");
  out.mfu = megatron->mfu;
  out.achieved_per_gpu = megatron->achieved_per_gpu;

  const double tps = out.tokens_per_s_per_gpu;
  const double padded = job.seq_max_tokens / job.seq_mean_tokens;
  const double peak = job.peak_per_gpu.flop_per_s();
  // The same throughput under the conventions frameworks use, in FLOP/s per GPU.
  std::vector<Candidate> flops;
  auto add_row = [&](const MfuPoint& point, FlopConvention c, double token_scale, std::string why) {
    if (const MfuRow* row = Row(point, c)) {
      flops.push_back({std::move(why), tps * token_scale * row->training_per_token.count()});
    }
  };
  add_row(mean_point, FlopConvention::kSixNNominal, 1,
          "the framework counts 6N with N the advertised active parameters (6N-nominal)");
  add_row(mean_point, FlopConvention::kSixNActive, 1,
          "the framework counts 6N (active matmul parameters, no attention)");
  add_row(mean_point, FlopConvention::kPalm, 1, "the framework counts PaLM's 6N + 12LHQS");
  if (padded > 1) {
    add_row(max_point, FlopConvention::kMegatron, padded,
            fmt::format("the framework uses the padded length ({} tokens per sample, not the "
                        "mean {}): megatron's seq_length",
                        GroupDigits(job.seq_max_tokens), GroupDigits(job.seq_mean_tokens)));
    add_row(max_point, FlopConvention::kMegatron, 1,
            fmt::format("the framework's attention term uses {} tokens (E[S^2]/E[S] lies above "
                        "the mean when lengths vary)",
                        GroupDigits(job.seq_max_tokens)));
  }
  if (auto printed = run.printed_tflops_per_gpu.Mean()) {
    std::vector<Candidate> in_tflops;
    in_tflops.reserve(flops.size());
    for (const auto& c : flops) in_tflops.push_back({c.reason, c.value / 1e12});
    out.printed.push_back(
        Explain("TFLOP/s per GPU", *printed, megatron->achieved_per_gpu.tflop_per_s(), in_tflops));
  }
  if (auto printed = run.printed_tokens_per_s_per_gpu.Mean()) {
    std::vector<Candidate> c;
    if (padded > 1) {
      c.push_back({fmt::format("the framework counts padded tokens ({} per sample, not {})",
                               GroupDigits(job.seq_max_tokens), GroupDigits(job.seq_mean_tokens)),
                   tps * padded});
    }
    if (verl && iteration && *iteration > 0) {
      c.push_back({fmt::format("verl divides by timing_s/step ({:.2f} s), the whole RL iteration "
                               "with the rollout, not by the actor's update",
                               *iteration),
                   out.tokens_per_step / *iteration / static_cast<double>(job.gpus)});
    }
    out.printed.push_back(Explain("tokens/s per GPU", *printed, tps, c));
  }
  if (auto printed = run.printed_mfu.Mean()) {
    std::vector<Candidate> c;
    c.reserve(flops.size());
    for (const auto& f : flops) c.push_back({f.reason, f.value / peak});
    // GPUs that share a peak (H100 SXM, H800, H200) are named together.
    std::vector<std::pair<std::string, double>> peaks;
    for (const auto& [name, other] : job.other_peaks) {
      // A plain local for the lambda: clang 14 (the fuzz build) cannot capture a binding.
      const double other_flops = other.flop_per_s();
      if (std::fabs(other_flops / peak - 1) < 0.01) continue;
      auto same = std::find_if(peaks.begin(), peaks.end(), [&](const auto& p) {
        return std::fabs(p.second / other_flops - 1) < 0.005;
      });
      if (same == peaks.end()) {
        peaks.emplace_back(name, other_flops);
      } else {
        same->first += " / " + name;
      }
    }
    for (const auto& [names, other] : peaks) {
      c.push_back({fmt::format("the framework divides by the {} peak ({}), not the {} ({})", names,
                               FormatTflops(FlopPerSecond::Of(other)), job.gpu_name,
                               FormatTflops(job.peak_per_gpu)),
                   megatron->achieved_per_gpu.flop_per_s() / other});
    }
    out.printed.push_back(Explain("MFU", *printed, out.mfu, c));
  }
  return out;
}

}  // namespace strata
