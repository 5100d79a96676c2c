#include "strata/sim/framework_parallelism.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "strata/core/did_you_mean.h"
#include "strata/job/training_modes.h"

namespace strata {
namespace {

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The keys a `parallel:` map accepts: every sharding mode's name and `default`.
std::vector<std::string> ModeKeys() {
  std::vector<std::string> keys;
  for (ShardingMode m : {ShardingMode::kNone, ShardingMode::kZero1, ShardingMode::kZero2,
                         ShardingMode::kZero3, ShardingMode::kFsdp2}) {
    keys.emplace_back(ShardingModeName(m));
  }
  keys.emplace_back("default");
  return keys;
}

Result<std::vector<std::string>> NameList(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, map.Node(key));
  if (!node.IsSequence()) return map.ErrorAt(key, "expected a list of names");
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(item.Scalar());
  return out;
}

Result<ParallelSupport> ParseOne(YamlMap& m) {
  ParallelSupport s;
  const std::vector<std::string>& dims = ParallelDimensionNames();
  STRATA_ASSIGN_OR_RETURN(s.runs, NameList(m, "runs"));
  for (const std::string& d : s.runs) {
    if (!Listed(dims, d)) {
      return m
          .ErrorAt("runs", fmt::format("unknown dimension '{}', expected some of: {}", d,
                                       fmt::join(dims, ", ")))
          .WithHint(DidYouMeanHint(d, dims));
    }
  }
  if (m.Has("from")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap from, m.Map("from"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node node, m.Node("from"));
    for (const auto& kv : node) {
      const std::string d = kv.first.Scalar();
      if (!Listed(s.runs, d)) {
        return from.ErrorAt(d, fmt::format("'{}' is not in this entry's runs: list", d));
      }
      STRATA_ASSIGN_OR_RETURN(s.from[d], from.String(d));
    }
  }
  if (m.Has("tp_models")) {
    STRATA_ASSIGN_OR_RETURN(s.tp_models, NameList(m, "tp_models"));
    if (!Listed(s.runs, "tp")) return m.ErrorAt("tp_models", "tp is not in this entry's runs:");
  }
  if (m.Has("etp_one_or_tp")) {
    STRATA_ASSIGN_OR_RETURN(s.etp_one_or_tp, m.Bool("etp_one_or_tp"));
  }
  // Whatever the entry leaves out must be explained: the planner prints the reason.
  const bool all =
      s.runs.size() == dims.size() && s.from.empty() && s.tp_models.empty() && !s.etp_one_or_tp;
  if (!all || m.Has("why")) {
    STRATA_ASSIGN_OR_RETURN(s.why, m.String("why"));
  }
  STRATA_ASSIGN_OR_RETURN(s.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return s;
}

}  // namespace

const std::vector<std::string>& ParallelDimensionNames() {
  static const std::vector<std::string> names = {"tp", "pp", "vpp", "cp", "ep", "etp"};
  return names;
}

Result<std::map<std::string, ParallelSupport>> ParseParallelSupport(YamlMap& framework) {
  std::map<std::string, ParallelSupport> out;
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, framework.Node("parallel"));
  STRATA_ASSIGN_OR_RETURN(YamlMap parallel, framework.Map("parallel"));
  const std::vector<std::string> keys = ModeKeys();
  for (const auto& kv : node) {
    const std::string mode = kv.first.Scalar();
    if (!Listed(keys, mode)) {
      return parallel
          .ErrorAt(mode, fmt::format("unknown sharding mode '{}', expected one of: {}", mode,
                                     fmt::join(keys, ", ")))
          .WithHint(DidYouMeanHint(mode, keys));
    }
    STRATA_ASSIGN_OR_RETURN(YamlMap entry, parallel.Map(mode));
    STRATA_ASSIGN_OR_RETURN(out[mode], ParseOne(entry));
  }
  STRATA_RETURN_IF_ERROR(parallel.CheckNoUnknownKeys());
  return out;
}

}  // namespace strata
