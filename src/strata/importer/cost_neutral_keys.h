// The keys of an imported launch that have no effect on a step's time or memory
// (data/import_cost_neutral_keys.yaml): loss coefficients, the optimiser's schedule, sampling,
// validation, logging, paths, run length. `strata import` lists every key it ignores; its
// one-line summary names the ones that may change a step first and counts these apart, so a
// user reads what the prediction may miss, not a learning rate.
#ifndef STRATA_IMPORTER_COST_NEUTRAL_KEYS_H_
#define STRATA_IMPORTER_COST_NEUTRAL_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct CostNeutralGroup {
  std::string name;                   // "optimiser schedule"
  std::string why;                    // why it costs a step nothing
  std::vector<std::string> patterns;  // shell globs on the key, `*` matching dots too
};

struct CostNeutralKeys {
  std::vector<CostNeutralGroup> groups;
  /// The group whose pattern matches `key`, or nullptr when the key may change a step.
  const CostNeutralGroup* Match(std::string_view key) const;
};

/// The shipped file, data/import_cost_neutral_keys.yaml (under DataDir()): what `strata import`
/// reads.
Result<CostNeutralKeys> LoadCostNeutralKeys();
/// The file at `path`, in the shipped file's format. Every error names the file, the field
/// (`groups[2].why`, `groups[0].patterns[3]`) and its line: a file that cannot be read, YAML that
/// does not parse (a truncated file), a group without its name, its why or its patterns, a
/// pattern that is not a non-empty string, and a field the format does not have.
Result<CostNeutralKeys> LoadCostNeutralKeys(const std::string& path);

}  // namespace strata

#endif  // STRATA_IMPORTER_COST_NEUTRAL_KEYS_H_
