// What a training framework can run, by sharding mode: the parallel dimensions beyond DP it
// offers (data/frameworks.yaml, `parallel:`), the first release of each where it came late, and
// the models whose tensor-parallel plan it knows. Data only: the planner (plan/framework_scope.h)
// resolves it for a job and searches nothing else.
#ifndef STRATA_SIM_FRAMEWORK_PARALLELISM_H_
#define STRATA_SIM_FRAMEWORK_PARALLELISM_H_

#include <map>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"

namespace strata {

/// One `parallel:` entry of a framework: the dimensions (tp pp vpp cp ep etp) that may exceed 1.
struct ParallelSupport {
  std::vector<std::string> runs;
  std::map<std::string, std::string> from;  // dimension -> first release that runs it
  std::vector<std::string> tp_models;       // TP only for these HF model types; empty: any
  bool etp_one_or_tp = false;               // ETP is 1 or equal to TP, nothing else
  std::string why;                          // why the dimensions left out are out
  std::string source;
};

/// The dimension names `runs:` accepts, in layout order.
const std::vector<std::string>& ParallelDimensionNames();

/// Parses a framework's `parallel:` map (sharding mode name or `default` -> entry).
Result<std::map<std::string, ParallelSupport>> ParseParallelSupport(YamlMap& framework);

}  // namespace strata

#endif  // STRATA_SIM_FRAMEWORK_PARALLELISM_H_
