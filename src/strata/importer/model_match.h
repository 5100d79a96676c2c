// Finds the strata model for what a launch command names: a Hub id ("Qwen/Qwen3-30B-A3B"), a
// local checkpoint directory ("Qwen3-30B-A3B-Base-mcore") or a torchtitan flavor.
#ifndef STRATA_IMPORTER_MODEL_MATCH_H_
#define STRATA_IMPORTER_MODEL_MATCH_H_

#include <string>

#include "strata/core/result.h"

namespace strata {

struct ModelMatch {
  std::string model;  // catalog name or config.json path, for the job's `model:`
  std::string how;    // "catalog name after dropping -Base, -mcore"
};

/// A catalog name, matched case-insensitively after dropping the organisation and checkpoint
/// suffixes (-Instruct, -Base, -mcore, ...); else a config.json beside `name` when it is a
/// directory that exists. An error lists the catalog when nothing matches.
Result<ModelMatch> MatchModel(const std::string& name);

}  // namespace strata

#endif  // STRATA_IMPORTER_MODEL_MATCH_H_
