#include "strata/report/straggler_lead_text.h"

#include <fmt/format.h>

namespace strata::profile {

std::string StragglerLeadText(const StragglerMargin& m, bool communication,
                              const LeadWords& words) {
  const char* figure = communication ? "exposed communication" : "span";
  std::string lead = fmt::format("{} {} than {} ({})", words.duration(m.lead_ns),
                                 communication ? "less" : "longer", words.rank(m.runner_up),
                                 words.duration(m.runner_up_ns));
  if (!m.noise_ns) {
    return lead + fmt::format(
                      ", but {} one step of these ranks: no step-to-step spread of their {} to "
                      "tell that lead from noise{}",
                      words.one_step_source, figure, words.one_step_advice);
  }
  return lead + fmt::format(", {} the {} that {}'s {} moves over its {} steps",
                            m.clear ? "more than" : "within", words.duration(*m.noise_ns),
                            words.rank(m.noise_index), figure, m.noise_steps);
}

}  // namespace strata::profile
