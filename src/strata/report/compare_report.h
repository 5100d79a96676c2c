// `strata compare`: the same training run under several systems (job files, or one job with
// --set variants) side by side: per-GPU memory peak, step time, days to train N tokens, and why
// they differ, in bandwidth-map terms (which traffic runs on which link, in seconds per step).
// The numbers are the memory ledger's and the step model's; this only lines them up.
#ifndef STRATA_REPORT_COMPARE_REPORT_H_
#define STRATA_REPORT_COMPARE_REPORT_H_

#include <string>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/core/result.h"
#include "strata/eval/evaluation.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

/// One system's traffic on one level of the bandwidth map, per step on one rank, before overlap.
struct LinkLoad {
  std::string level;  // "RoCE 4 x 200Gb/s", "NVSwitch (NVLink4)", "PCIe Gen5 x16"
  double seconds = 0;
  double bytes = 0;  // nccl-tests sizes x calls (collectives), copied bytes (offload)
};

struct ComparedSystem {
  std::string label;   // the job file's name or "job --set k=v"
  std::string system;  // "TP1 PP1 EP8 DP40 (expert-DP 5), zero1, bf16"
  StepSetup setup;
  StepResult step;
  MemoryLedger ledger;
  double steps = 0;             // optimizer steps to train the tokens
  double days = 0;              // steps x step time / 86,400 s
  std::vector<LinkLoad> links;  // slowest first
};

/// A step part whose exposed time differs from the baseline's, with the links it runs on.
struct CompareCause {
  StepPart part = StepPart::kForward;
  double baseline_s = 0;  // exposed, per step
  double other_s = 0;
  std::string baseline_level;  // "" when the part has no traffic in that system
  std::string other_level;
};

struct CompareReport {
  double tokens = 0;                    // to train
  std::vector<ComparedSystem> systems;  // the first is the baseline
  /// causes[i] for systems[i] against systems[0] (causes[0] is empty), largest first.
  std::vector<std::vector<CompareCause>> causes;
};

/// Evaluates every job (ledger and step model) and lines them up. `labels` names them (same
/// size as `jobs`). Fails with the job's label when one cannot be evaluated.
Result<CompareReport> CompareSystems(const Workspace& workspace,
                                     const std::vector<ResolvedJob>& jobs,
                                     const std::vector<std::string>& labels, double tokens);

/// "TP1 PP1 EP8 DP40 (expert-DP 5), zero1, bf16".
std::string SystemSummary(const ResolvedJob& job);

/// The paragraph that says why system `i` differs from the baseline: the ratio of days and the
/// largest exposed differences with their links.
std::string CompareParagraph(const CompareReport& report, size_t i);

std::string RenderCompareText(const CompareReport& report, bool explain);
Json CompareToJson(const CompareReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_COMPARE_REPORT_H_
