// The sentence that weighs a straggler's lead against the ranks' step-to-step swing, shared by
// `strata profile` (one trace, ms, ranks by name) and `profile --job` (several traces, s, ranks
// by label): one wording, each report's own unit and rank names.
#ifndef STRATA_REPORT_STRAGGLER_LEAD_TEXT_H_
#define STRATA_REPORT_STRAGGLER_LEAD_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "strata/profile/profile.h"

namespace strata::profile {

struct LeadWords {
  std::function<std::string(int64_t ns)> duration;  // a duration with its unit: "1.637 ms"
  std::function<std::string(size_t index)> rank;    // the rank behind an index into the ranks
  std::string_view one_step_source;                 // "the trace holds" / "the traces hold"
  std::string_view one_step_advice;                 // appended to the one-step sentence
};

/// "1.637 ms less than rank 2 (3.217 ms), more than the 0.500 ms that rank 3's exposed
/// communication moves over its 4 steps", or, with one step, why no straggler can be told from
/// noise. `communication`: the figure is exposed communication (the straggler has the least);
/// otherwise the span without communication (the straggler has the longest).
std::string StragglerLeadText(const StragglerMargin& margin, bool communication,
                              const LeadWords& words);

}  // namespace strata::profile

#endif  // STRATA_REPORT_STRAGGLER_LEAD_TEXT_H_
