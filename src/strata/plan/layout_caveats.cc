#include "strata/plan/layout_caveats.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace strata::plan {

std::vector<LayoutCaveat> LayoutCaveatsOf(const std::vector<ComparedLayout>& compared,
                                          int64_t gpus_per_node,
                                          const std::vector<StepLayoutError>& errors) {
  std::vector<LayoutCaveat> out;
  for (const ComparedLayout& c : compared) {
    const std::string family = StepLayoutFamilyOf(c.layout, gpus_per_node);
    const StepLayoutError* error = FindStepLayoutError(errors, family);
    if (error == nullptr) continue;
    auto same = [&](const LayoutCaveat& k) { return k.error.family == family; };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) {
      out.push_back({*error, {c}});
    } else {
      it->layouts.push_back(c);
    }
  }
  return out;
}

std::string LayoutCaveatText(const LayoutCaveat& caveat) {
  std::vector<std::string> which;
  for (const ComparedLayout& c : caveat.layouts) which.push_back(c.role + " " + c.name);
  const StepLayoutError& e = caveat.error;
  return fmt::format(
      "caveat: {} ({}): on the {} fit rows of that layout family the step model's median "
      "error is {:+.1f}% ({} than measured; data/step_layout_error.yaml, docs/step-validation.md)",
      StepLayoutFamilyText(e.family), fmt::join(which, "; "), e.rows, 100 * e.median_error,
      e.median_error < 0 ? "predicted faster" : "predicted slower");
}

}  // namespace strata::plan
