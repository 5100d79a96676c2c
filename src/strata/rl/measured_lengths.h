// An RL job priced again at the lengths its run's log measured. A job states its mean prompt and
// response lengths as assumptions (no launch script gives them: they are what the policy writes,
// and they drift over a run); the run's log prints them (verl's prompt_length/mean and
// response_length/mean, OpenRLHF's response length). The job priced at the measured means puts
// strata's engines beside the measurement apart from the length guess: a phase still off at the
// log's lengths is the model's error, not the assumption's. Formulas: docs/rl.md ("Reading
// verl's log").
#ifndef STRATA_RL_MEASURED_LENGTHS_H_
#define STRATA_RL_MEASURED_LENGTHS_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/eval/workspace.h"
#include "strata/rl/openrlhf_log.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rl_step.h"
#include "strata/rl/verl_log.h"

namespace strata {

/// Means over the log's steps, in tokens; nullopt where the log prints none.
struct MeasuredLengths {
  std::optional<double> prompt_mean;
  std::optional<double> response_mean;
};

/// The job at the measured means, or why there is none.
struct LengthsRepricing {
  std::optional<RlEvaluation> evaluation;
  /// What was replaced and what was kept ("response mean 1,267 tokens where the job assumes
  /// 4,096; ..."), or, without an evaluation, why the job was not priced again.
  std::string note;
};

/// Relative difference under which a measured mean is the job's own (verl prints the means of a
/// step's batch; a job written from that log carries them rounded).
inline constexpr double kSameLengthTolerance = 0.01;

/// The job with its prompt and response means replaced by the measured ones; the caps
/// (prompt_max, response_max: the run's max lengths) and the response shape are the job's. The
/// shape falls back to capped_exponential where it cannot have the measured mean under the cap
/// (a uniform ending at the cap needs a mean of at least half of it), said in the note. No
/// evaluation when the log measured no length, when its means are the job's, when a mean is not
/// below its cap (the run's cap is not the job's), or when the job at those lengths cannot run.
LengthsRepricing RepriceAtMeasuredLengths(const Workspace& workspace, const RlSpec& spec,
                                          const MeasuredLengths& measured);

/// Fills each row's measured-lengths prediction and error from the row of the same key in `at`
/// (the comparison of the same log with the repriced job, which drops its errors on the same
/// grounds as the first). The rows that are the lengths the repricing took from the log are left
/// empty: they are its input, not a prediction.
void AddMeasuredLengthsColumn(std::vector<VerlPhaseRow>& rows, const std::vector<VerlPhaseRow>& at);

/// CompareVerlLog, and the same comparison at the log's measured lengths beside it.
VerlComparison CompareVerlLogAtMeasuredLengths(const Workspace& workspace, const RlEvaluation& e,
                                               const VerlLog& log,
                                               std::optional<VerlVersion> version_flag);

/// CompareOpenRlhfLog, and the same comparison at the log's measured response mean beside it.
OpenRlhfComparison CompareOpenRlhfLogAtMeasuredLengths(const Workspace& workspace,
                                                       const RlEvaluation& e,
                                                       const OpenRlhfLog& log);

}  // namespace strata

#endif  // STRATA_RL_MEASURED_LENGTHS_H_
