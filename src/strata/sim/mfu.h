// Model and hardware FLOPs utilisation: achieved FLOP/s per GPU over the GPU's dense peak.
// MFU counts the model's FLOP (a convention, see flop_conventions.h); HFU adds recompute.
// Formulas with the reference case's numbers: docs/formulas.md, "MFU and HFU".
#ifndef STRATA_SIM_MFU_H_
#define STRATA_SIM_MFU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/model/flop_conventions.h"

namespace strata {

struct MfuThroughput {
  double tokens_per_s = 0;  // whole job
  int64_t gpus = 0;

  double tokens_per_s_per_gpu() const { return tokens_per_s / static_cast<double>(gpus); }
};

/// From tokens per step and step time. Errors on zero or negative values.
Result<MfuThroughput> ThroughputFromStep(double tokens_per_step, Seconds step_time, int64_t gpus);
Result<MfuThroughput> ThroughputFromRate(double tokens_per_s, int64_t gpus);

struct MfuRow {
  FlopConvention convention;
  FlopCount training_per_token;
  FlopPerSecond achieved_per_gpu;  // tokens/s/GPU x FLOP/token
  double mfu = 0;                  // a fraction of the peak, 0..1 (can exceed 1 if inputs are off)
  std::string formula;
};

/// MFU at one attention length (a sequence description gives one or two: see
/// SequenceLengths).
struct MfuPoint {
  std::string label;  // "S = 29,000 (mean)", "E[S^2]/E[S] = ..."
  double attention_tokens = 0;
  std::vector<MfuRow> rows;
  /// The megatron count less what a frozen base does not compute (0 when all trains), and its
  /// MFU: the utilisation of the work the job needs.
  FlopCount trained_per_token;
  double trained_mfu = 0;
  FlopCount hardware_per_token;  // the FLOP the job needs, with recompute added
  double hfu = 0;
  /// Full recompute of every layer, nothing frozen: 4/3 x the megatron count, the shortcut the
  /// course quotes ("the forward runs twice"), which re-runs the output layer too; `hfu` leaves
  /// it out as megatron-core and Narayanan et al. 2021 (eq. 3: 6BsVh for the logits) do. 0
  /// where the shortcut does not apply.
  FlopCount four_thirds_per_token;
  double hfu_four_thirds = 0;
};

struct MfuInputs {
  ModelConfig model;
  SequenceLengths sequence;
  MfuThroughput throughput;
  FlopPerSecond peak_per_gpu;
  std::string gpu_name;
  Recompute recompute = Recompute::kFull;
  double recompute_layer_fraction = 1;  // full recompute: the share of the layers re-run
  std::optional<int64_t> nominal_active_params;
  bool include_mtp = false;
  /// For jobs with frozen modules or adapters: the FLOP per token the job needs beyond the
  /// megatron count (TrainedFlopAdjustmentPerToken, negative); 0 when everything trains.
  double trained_flop_adjustment = 0;
};

struct MfuReport {
  MfuInputs inputs;
  ParamBreakdown params;
  std::vector<MfuPoint> points;
};

/// One point per distinct attention length: E[S^2]/E[S] when exact; the mean and the max (the
/// two bounds of E[S^2]/E[S]) when only mean and max are known.
MfuReport ComputeMfu(const MfuInputs& inputs);

}  // namespace strata

#endif  // STRATA_SIM_MFU_H_
