// How far measured steps of runs like a job's landed from the step model's prediction: per kind
// of run (family), the lowest and highest measured / predicted ratio over the fit rows of the
// step corpora (docs/step-validation.md, docs/step-validation-frameworks.md,
// docs/step-validation-cards.md), read from data/step_error_band.yaml. The held-out rows never
// enter a band; docs/step-error-band.md counts how many of them the band holds. The step's
// counterpart of the memory ledger's band (memory/error_band.h). Beside the bands, the same file
// records where each model's measured runs landed, per GPU (all rows: a record, not a fit).
#ifndef STRATA_SIM_STEP_ERROR_BAND_H_
#define STRATA_SIM_STEP_ERROR_BAND_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct ResolvedJob;

/// The kinds of run a band is kept for. MoE runs split by routing, which moves the measured
/// step most: forced balance (the benchmark recipes' moe_router_force_load_balancing, a job's
/// `moe.routing_imbalance: 1`) or natural routing (a trained router on real data).
inline constexpr std::string_view kStepFamilies[] = {"dense", "moe_forced_balance",
                                                     "moe_natural_routing"};

/// The family of a run: a model with routed experts or not, and forced balance or not.
std::string_view StepFamilyOf(bool moe, bool forced_balance);
/// The family of a job: its model's experts, and a stated routing imbalance of 1.
std::string_view StepFamily(const ResolvedJob& job);

struct StepErrorBand {
  std::string family;
  double low = 1;   // the lowest measured / predicted step over the family's fit rows
  double high = 1;  // the highest
  int64_t rows = 0;
  std::string low_row, high_row;  // the rows that set them
};

/// Where the corpora's measured runs of one model on one GPU landed: the lowest and highest
/// measured / predicted step over all of them, fit and held out. Not a band (nothing is derived
/// from it or tuned on it): the record a user of that model sees beside the prediction.
struct ModelStepRuns {
  std::string model;  // catalog name (data/models)
  std::string gpu;    // catalog name (data/gpus.yaml)
  double low = 1;
  double high = 1;
  int64_t rows = 0;
  std::string low_row, high_row;
};

/// The error file: a band per kind of run, and the record of each model's runs.
struct StepErrorData {
  std::vector<StepErrorBand> bands;
  std::vector<ModelStepRuns> model_runs;  // sorted by model, then GPU
};

/// One measured row of a step corpus.
struct StepBandRow {
  std::string id;
  std::string split;   // "fit" or "held_out"
  std::string family;  // StepFamilyOf
  double predicted_s = 0;
  double measured_s = 0;
  std::string model;  // catalog names of the row's model and GPU
  std::string gpu;
  std::string layout;  // its expert-parallel family (sim/step_layout_error.h); "" without EP
};

/// The band of `family` over the fit rows of that family in `rows` (none: rows 0).
StepErrorBand DeriveStepErrorBand(std::string_view family, const std::vector<StepBandRow>& rows);

/// Every (model, GPU) pair of `rows`, fit and held out, sorted by model then GPU.
std::vector<ModelStepRuns> DeriveModelStepRuns(const std::vector<StepBandRow>& rows);

/// Parses the YAML text; `file` names it in errors.
Result<StepErrorData> ParseStepErrorBands(const std::string& text, const std::string& file);
/// Reads data/step_error_band.yaml (via DataDir()).
Result<StepErrorData> LoadStepErrorBands();
/// The band of `family`, or nullptr when the file has none.
const StepErrorBand* FindStepErrorBand(const std::vector<StepErrorBand>& bands,
                                       std::string_view family);
/// The records of `model`'s runs, those on `gpu` first, then the other GPUs in file order.
std::vector<ModelStepRuns> FindModelStepRuns(const std::vector<ModelStepRuns>& runs,
                                             std::string_view model, std::string_view gpu);

}  // namespace strata

#endif  // STRATA_SIM_STEP_ERROR_BAND_H_
