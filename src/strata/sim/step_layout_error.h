// How far the step model missed the measured steps of each expert-parallel layout family: the
// median signed error, (predicted - measured) / measured, over the fit rows of the three step
// corpora (docs/step-validation.md, docs/step-validation-frameworks.md,
// docs/step-validation-cards.md) whose layout is of that family, read from
// data/step_layout_error.yaml. The validation misses some families in one direction (an EP
// group inside one NVLink domain predicted too fast, one across domains too slow); the planner
// prints that error beside a winner or compared layout of such a family. A family is kept only
// on at least kMinLayoutErrorRows fit rows: a median of fewer says nothing.
#ifndef STRATA_SIM_STEP_LAYOUT_ERROR_H_
#define STRATA_SIM_STEP_LAYOUT_ERROR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/parallel_layout.h"
#include "strata/sim/step_error_band.h"

namespace strata {

inline constexpr int64_t kMinLayoutErrorRows = 3;

struct StepLayoutError {
  std::string family;       // StepLayoutFamilyOf: "ep8_in_node", "ep32_cross_node"
  double median_error = 0;  // (predicted - measured) / measured, median over the fit rows
  int64_t rows = 0;         // the fit rows it rests on
};

/// The expert-parallel family of a layout on nodes (NVLink domains) of `gpus_per_node`:
/// "ep<EP>_in_node" when each EP group's ranks (megatron-core's rank order, job/placement.h)
/// sit in one domain, "ep<EP>_cross_node" when they span several; "" without EP (EP 1) or
/// when the layout cannot be placed.
std::string StepLayoutFamilyOf(const ParallelLayout& layout, int64_t gpus_per_node);

/// "EP8 inside one NVLink domain" / "EP32 across NVLink domains"; the family itself when it is
/// not of that form.
std::string StepLayoutFamilyText(std::string_view family);

/// Every family with at least kMinLayoutErrorRows fit rows in `rows`, sorted by family.
std::vector<StepLayoutError> DeriveStepLayoutErrors(const std::vector<StepBandRow>& rows);

/// Parses the YAML text; `file` names it in errors.
Result<std::vector<StepLayoutError>> ParseStepLayoutErrors(const std::string& text,
                                                           const std::string& file);
/// Reads data/step_layout_error.yaml (via DataDir()).
Result<std::vector<StepLayoutError>> LoadStepLayoutErrors();
/// The entry of `family`, or nullptr.
const StepLayoutError* FindStepLayoutError(const std::vector<StepLayoutError>& errors,
                                           std::string_view family);

}  // namespace strata

#endif  // STRATA_SIM_STEP_LAYOUT_ERROR_H_
