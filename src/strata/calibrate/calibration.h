// Calibration files: the measured-over-predicted ratio of each component of one traced job
// (`strata profile --job --write-calibration`), with where it came from, and how `strata step
// --calibration` carries it to other layouts of the same job: by scaling the loaded kernel
// efficiencies (GEMM, attention, memory-bound), so the step model's formulas price the new
// layout's shapes with the measured rates. Communication, routing skew and idle time are measured
// but not carried: they depend on the cluster and the layout, not on the kernels.
#ifndef STRATA_CALIBRATE_CALIBRATION_H_
#define STRATA_CALIBRATE_CALIBRATION_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/calibrate/trace_comparison.h"
#include "strata/core/json_output.h"
#include "strata/core/result.h"
#include "strata/eval/workspace.h"
#include "strata/job/resolved_job.h"

namespace strata::calibrate {

inline constexpr int kCalibrationVersion = 1;

struct CalibratedRate {
  std::string key;  // a ComponentMapping key: "dense_gemm", "attention", ...
  double measured_s = 0;
  double predicted_s = 0;
  std::optional<double> ratio;
  std::optional<double> model_tflop;      // the model's FLOP for the component per step
  std::optional<double> measured_tflops;  // model_tflop / measured_s
};

struct Calibration {
  // Provenance.
  std::string strata_version;
  std::string created;              // UTC, ISO 8601
  std::vector<std::string> traces;  // file names (no directories)
  std::string job_file;             // the job's file name ("" for --set alone)
  // The GPU the traces ran on: the device name the slowest rank's trace records
  // (torch.cuda.get_device_name(), "NVIDIA H800") and the data/gpus.yaml entry it matches by
  // name or alias ("H800"). Empty when unknown: a file written before strata recorded them
  // (provenance without trace_gpu), a trace without deviceProperties, a device the catalog does
  // not list. The measured rates belong to this GPU, whatever job they were compared with.
  std::string trace_device;
  std::string trace_gpu;
  // False when a trace was cut (a profiler stopped mid-write): its steps may miss events past
  // the cut. `profile --write-calibration` writes such a file only with --allow-cut-trace.
  // Files without the field read as complete.
  bool complete = true;
  // False when the traces held GEMM kernels whose names do not say dense or expert
  // (gemm_dense_or_expert): then the dense_gemm and expert_gemm rates carry no ratio, and the
  // all_gemm rate (all GEMM measured / all GEMM predicted) is applied to both. Files without the
  // field read as split.
  bool gemm_split_known = true;
  // What the ratios were measured on: a calibration applies to the same model on the same GPU.
  std::string model;
  std::string gpu;
  std::string cluster;
  int64_t tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
  double measured_step_s = 0;
  double predicted_step_s = 0;
  std::vector<CalibratedRate> rates;  // ComponentMappings' order, then all_gemm if present

  const CalibratedRate* Find(std::string_view key) const;
};

/// The calibration of `comparison`, made from `e`'s job. `created` as given (the CLI passes the
/// date, or SOURCE_DATE_EPOCH's, so that output can be reproduced).
Calibration MakeCalibration(const TraceComparison& comparison, const Evaluation& e,
                            std::string created);

/// The keys of the rates `ApplyCalibration` would apply (a plausible ratio of a carried
/// component); empty when the calibration changes nothing.
std::vector<std::string> UsableRates(const Calibration& c);

Json CalibrationJson(const Calibration& c);
/// Parses a calibration file's text; errors name `file` and the field.
Result<Calibration> ParseCalibration(const std::string& text, const std::string& file);
/// Reads and parses `path`.
Result<Calibration> LoadCalibration(const std::string& path);
/// Writes CalibrationJson atomically (a temporary file, then a rename).
Status WriteCalibration(const Calibration& c, const std::string& path);

/// What a calibrated evaluation says about itself: where the calibration came from, what was
/// scaled and what was not carried over.
struct AppliedCalibration {
  std::string file;
  std::vector<std::string> traces;
  std::string job_file;
  std::string created;
  std::vector<std::string> applied;  // "dense GEMM efficiency x 0.80 (measured 1.25x ...)"
  std::vector<std::string> not_carried;
  std::vector<std::string> warnings;  // said on stderr too: a cut trace's rates, nothing applied
  std::string trace_gpu;              // the catalog GPU the rates were measured on; "" when unknown
  std::string trace_device;
  /// Said when the GPU the rates were measured on is unknown (the rates are applied as the job
  /// GPU's, unchecked); empty when it is known and is the job's.
  std::string gpu_warning;
};

/// Scales `workspace.efficiency` for `job`'s GPU by the calibration's ratios: GEMM efficiency
/// (gemm_large) by 1 / the dense GEMM ratio, the grouped-GEMM factor so that expert GEMMs move
/// by their own ratio, attention forward and backward by 1 / the attention ratio, Gated DeltaNet
/// by 1 / its ratio, HBM efficiency by 1 / the memory-bound ratio. Errors (naming `file` and the
/// field): a calibration of another model or GPU, or one whose traces ran on another catalog GPU
/// than the job's (`provenance.trace_gpu`): measured rates of one GPU model are not carried to
/// another, scaled or not. A calibration that does not say its traces' GPU is applied, with
/// `gpu_warning` saying so.
Result<AppliedCalibration> ApplyCalibration(const Calibration& c, const std::string& file,
                                            const ResolvedJob& job, Workspace& workspace);

}  // namespace strata::calibrate

#endif  // STRATA_CALIBRATE_CALIBRATION_H_
