// OpenRLHF's per-step status dicts ("Global step N: {'policy_loss': ..., 'timing/generation':
// 2.95, ...}", logged by its PPO trainers) read per phase, and put beside what `strata rl`
// predicts for the RL job that ran. The phases and what each timer covers are OpenRLHF's
// (OpenRLHF/OpenRLHF@3c3be623:openrlhf/trainer/ppo_trainer.py, train_step and fit):
//   timing/generation       the rollout (vLLM generate_samples)
//   timing/make_experience  the forward passes that score the rollout: the actor's log-probs,
//                           the reference's, the critic's values and the reward
//   timing/ppo_train        the actor's (and the critic's) PPO updates
//   timing/broadcast        the weight sync to vLLM
//   timing/step_total       the sum of the above (synchronous trainer) or the wall clock of the
//                           iteration (ppo_trainer_async.py, where the parts overlap)
// The timing keys exist from OpenRLHF 4908e6ee (2026-03-19); older dicts carry only the losses
// and lengths. Formulas: docs/rl.md ("Reading OpenRLHF's log").
#ifndef STRATA_RL_OPENRLHF_LOG_H_
#define STRATA_RL_OPENRLHF_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/rl/rl_step.h"
#include "strata/rl/verl_log.h"

namespace strata {

/// The metrics of one step that the comparison reads; nullopt when the dict lacks one.
struct OpenRlhfStepMetrics {
  int64_t step = 0;
  int64_t line = 0;  // 1-based line where the step's dict begins
  std::optional<double> generation_s;
  std::optional<double> make_experience_s;
  std::optional<double> ppo_train_s;
  std::optional<double> broadcast_s;
  std::optional<double> step_total_s;
  std::optional<double> response_mean_tokens;  // rollout/response_length_mean, else response_length
};

struct OpenRlhfLog {
  std::vector<OpenRlhfStepMetrics> steps;  // in log order
  std::vector<std::string> notes;          // dicts read only in part, with their line numbers
};

/// Reads OpenRLHF's console log. A dict wrapped over several lines (as pasted into an issue) is
/// joined up to its closing brace; an elision ("...") inside it is skipped and noted. Errors: no
/// "Global step N: {" line at all.
Result<OpenRlhfLog> ParseOpenRlhfLog(std::string_view text);

/// True when `text` holds an OpenRLHF "Global step N: {" line: what `strata rl --log` reads it as.
bool LooksLikeOpenRlhfLog(std::string_view text);

struct OpenRlhfComparison {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t steps = 0;
  std::vector<VerlPhaseRow> rows;    // one per OpenRLHF key; the row type is shared with verl's
  std::vector<std::string> caveats;  // when a row's sum is not what OpenRLHF's timer measures
  /// What the measured-lengths column replaced in the job, or why there is no such column.
  std::string measured_lengths_note;
};

/// The log's phases beside the configured placement's prediction (the caller checks that it
/// is valid).
OpenRlhfComparison CompareOpenRlhfLog(const RlEvaluation& e, const OpenRlhfLog& log);

}  // namespace strata

#endif  // STRATA_RL_OPENRLHF_LOG_H_
