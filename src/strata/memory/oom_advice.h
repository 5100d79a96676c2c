// When a job does not fit: the cheapest single changes that make it fit, each tried by
// re-running the layout checks and the whole ledger on the changed job.
#ifndef STRATA_MEMORY_OOM_ADVICE_H_
#define STRATA_MEMORY_OOM_ADVICE_H_

#include <functional>
#include <string>
#include <vector>

#include "strata/job/job_validation.h"
#include "strata/memory/ledger.h"
#include "strata/memory/memory_constants.h"

namespace strata {

struct MemoryFix {
  std::string change;                  // "bf16 gradient buffer"
  std::vector<std::string> overrides;  // the --set arguments that make the change
  std::string cost;                    // what it costs in step time or accuracy
  Bytes peak;                          // the peak after the change
  bool fits = false;
};

/// Whether the job's framework can run a changed job (its parallel dimensions): decided above
/// memory, where the frameworks' reach is known (eval/evaluation.cc); empty: any.
using RunnableCheck = std::function<bool(const JobSpec& changed)>;

/// Candidate changes in order of cost (cheapest first), each evaluated; those that are valid
/// layouts the framework can run (`runnable`) are returned, fitting ones first, at most
/// `max_fixes`.
std::vector<MemoryFix> SuggestMemoryFixes(const Job& job, const MemoryConstants& constants,
                                          size_t max_fixes = 4, const RunnableCheck& runnable = {});

}  // namespace strata

#endif  // STRATA_MEMORY_OOM_ADVICE_H_
