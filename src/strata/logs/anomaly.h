// What the analyser flags in a training log, each with the line that shows it. Thresholds are
// rules of thumb (../shared/reference/formats/logs-and-node-state.md, section 1.7), kept in one
// struct so a user can change them and the text can print them.
#ifndef STRATA_LOGS_ANOMALY_H_
#define STRATA_LOGS_ANOMALY_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

enum class AnomalyKind {
  kStall,           // the wall-clock gap between two step lines is far above the median step
  kLossSpike,       // loss well above the rolling median
  kNanInf,          // loss or grad norm is nan or inf
  kGradNormSpike,   // grad norm far above its rolling median
  kThroughputDrop,  // step time up (throughput down) by more than the threshold
  kMemoryCreep,     // per-GPU memory keeps growing after the first steps
  kSkippedStep,     // the framework skipped steps (nan/overflow) or reports skipped iterations
  kRestart,         // the step counter went back: the job restarted from a checkpoint
  kHang,            // no step after the last one, and the log ends in errors or goes silent
};
std::string_view AnomalyKindName(AnomalyKind kind);  // "stall", "loss_spike", ...

struct Anomaly {
  AnomalyKind kind = AnomalyKind::kStall;
  int rank = -1;     // the launcher's rank prefix, -1 when the line had none
  int64_t line = 0;  // 1-based line in the log
  int64_t step = 0;
  double lost_s = 0;    // wall time it cost, when known (stalls, restarts)
  std::string message;  // what was seen, with the numbers and the threshold
};

struct AnomalyThresholds {
  double stall_factor = 3.0;            // gap > 3 x the median step time
  double drop_fraction = 0.30;          // throughput more than 30% below the median
  double loss_spike_factor = 1.5;       // loss > 1.5 x the rolling median ...
  double loss_spike_mads = 6.0;         // ... and > median + 6 robust standard deviations
  double grad_norm_factor = 10.0;       // grad norm > 10 x its rolling median
  double memory_creep_fraction = 0.05;  // memory 5% above its level after warm-up
  double memory_creep_min_gib = 1.0;    // ... and at least 1 GiB above it
  int64_t warmup_steps = 2;             // steps 1..2 compile and allocate: not judged
  int min_window = 3;                   // values in a rolling window before it judges
};

}  // namespace strata

#endif  // STRATA_LOGS_ANOMALY_H_
