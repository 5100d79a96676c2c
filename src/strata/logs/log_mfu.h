// Throughput and MFU recomputed from a log's steady state and the job, with the functions
// `strata mfu` uses (sim/mfu.h, model/flop_conventions.h), next to what the framework printed,
// and the reason when the two differ: the FLOP convention (6N), the padded length, the peak.
#ifndef STRATA_LOGS_LOG_MFU_H_
#define STRATA_LOGS_LOG_MFU_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/logs/rank_state.h"
#include "strata/model/model_config.h"
#include "strata/sim/mfu.h"

namespace strata {

/// What the recomputation needs from the job (model, GPUs, sequence lengths, batch).
struct LogJob {
  ModelConfig model;
  std::string gpu_name;
  FlopPerSecond peak_per_gpu;
  int64_t gpus = 0;
  double seq_mean_tokens = 0;  // E[S]; the max when the job gives no mean
  double seq_max_tokens = 0;
  double global_batch = 0;  // samples per step, when the log does not print it
  Recompute recompute = Recompute::kNone;
  double recompute_layer_fraction = 1;  // full recompute: the share of the layers re-run
  std::optional<int64_t> nominal_active_params;
  bool include_mtp = false;
  /// Where the job came from when it is not a job file ("the torchtitan log header: ...").
  std::string source;
  /// An RL job's prompt cap (its lengths.prompt_max), 0 otherwise: bounds a verl log's samples
  /// when the log prints response_length/max but no prompt_length/max.
  double prompt_cap_tokens = 0;
  /// Where seq_mean_tokens and seq_max_tokens came from when the log gave them ("" = the job).
  std::string lengths_source;
  /// Other GPUs' dense bf16 peaks, to recognise an MFU computed against the wrong peak.
  std::vector<std::pair<std::string, FlopPerSecond>> other_peaks;
};

/// One number the framework printed, beside ours.
struct PrintedVsOurs {
  std::string quantity;  // "TFLOP/s per GPU", "tokens/s per GPU", "MFU"
  double printed = 0;
  double ours = 0;      // same unit as printed (MFU as a fraction)
  bool agrees = false;  // within the tolerance
  std::string reason;   // why they differ (or "agrees ...")
};

struct LogMfu {
  double tokens_per_step = 0;
  std::string tokens_source;  // where tokens per step came from, in words
  double step_time_s = 0;
  std::string step_time_source;
  /// The step time since the slowdown the log ends in (RankSummary::EndsSlow), when the step
  /// time above is the steady one before it; then the present throughput and MFU are the same
  /// tokens per step over this time.
  std::optional<double> now_step_time_s;
  int64_t now_since_step = 0;
  MfuReport report;  // points: S = mean (and S = max when the lengths vary)
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;  // Megatron convention at the mean length, a fraction
  FlopPerSecond achieved_per_gpu;
  std::vector<PrintedVsOurs> printed;
};

/// Relative tolerance under which a printed number "agrees" with a recomputed one: the log
/// rounds to 3-4 digits and averages over an interval.
inline constexpr double kPrintedTolerance = 0.03;

/// How far a device's memory as CUDA reports it (torch.cuda.get_device_properties().total_memory,
/// what torchtitan's memory percentage divides by) may lie from the catalog's datasheet figure
/// (decimal GB) and still be that part: the driver keeps a little and datasheets round. The T4
/// of pytorch/torchtitan PR #3393 ("CUDA capacity: Tesla T4 with 14.56GiB memory") reports
/// 15.63e9 bytes of a 16 GB card, 0.98x. A factor of 1.15 either way holds such offsets and
/// still tells a 16 GB card from a 40 GB one; a device is called another only outside it.
inline constexpr double kDeviceMemoryFactor = 1.15;

/// A framework that prints both TFLOP/s and MFU tells the peak it divides by: printed TFLOP/s /
/// printed MFU. Says which catalog GPUs have that dense bf16 peak (within 2%), or that none has;
/// and, for torchtitan, when that peak is the A100's (its fallback for a device it does not
/// know), the log's memory share gives the device's size (RankSummary::device_gib_min) and no
/// GPU with that peak has it, that the peak is the fallback, not the device's.
std::optional<std::string> DescribeImpliedPeak(const RankSummary& run,
                                               const std::vector<GpuSpec>& gpus);

/// A verl log prints its samples' lengths (prompt_length/mean + response_length/mean, and the
/// maxima): they replace the job's, which describe another run (an SFT job's, or the RL job's
/// assumptions). The max is the log's prompt + response maxima, else the RL job's prompt cap +
/// the log's response max, else the mean alone. Does nothing for a log without them.
void UseLogLengths(const RankSummary& run, LogJob& job);

/// Errors when the run has no step time and no rate to derive one from.
Result<LogMfu> RecomputeLogMfu(const RankSummary& run, const LogJob& job);

}  // namespace strata

#endif  // STRATA_LOGS_LOG_MFU_H_
