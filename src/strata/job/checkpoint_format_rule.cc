#include "strata/job/checkpoint_format_rule.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <optional>
#include <vector>

namespace strata {
namespace {

struct FormatName {
  SavedFormat format;
  std::string_view name;
};
constexpr FormatName kFormats[] = {
    {SavedFormat::kTorchDist, "torch_dist"}, {SavedFormat::kDcp, "dcp"},
    {SavedFormat::kDeepSpeed, "deepspeed"},  {SavedFormat::kHfSafetensors, "hf_safetensors"},
    {SavedFormat::kVerlFsdp, "verl_fsdp"},   {SavedFormat::kAccelerateFsdp, "accelerate_fsdp"}};
constexpr const char* kFormatList =
    "torch_dist, dcp, deepspeed, hf_safetensors, verl_fsdp or accelerate_fsdp";
constexpr const char* kRuntimeList =
    "default, none, deepspeed, fsdp1, fsdp2, megatron or megatron-fsdp";

Result<SavedFormat> FormatOf(YamlMap& entry, const YAML::Node& node, const std::string& where) {
  const std::string value = node.IsScalar() ? node.Scalar() : std::string();
  for (const auto& [f, name] : kFormats) {
    if (name == value) return f;
  }
  return entry.ErrorAt("checkpoint_format", fmt::format("unknown format '{}'{}, expected {}", value,
                                                        where, kFormatList));
}

}  // namespace

std::string_view SavedFormatName(SavedFormat format) {
  for (const auto& [f, name] : kFormats) {
    if (f == format) return name;
  }
  return "unstated";
}

Result<CheckpointFormatRule> ParseCheckpointFormatRule(YamlMap& entry) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, entry.Node("checkpoint_format"));
  CheckpointFormatRule rule;
  auto fill = [&](SavedFormat f) {
    for (ShardingRuntime r :
         {ShardingRuntime::kUnstated, ShardingRuntime::kDeepSpeed, ShardingRuntime::kFsdp1,
          ShardingRuntime::kFsdp2, ShardingRuntime::kMegatronFsdp, ShardingRuntime::kMegatron}) {
      rule.emplace(r, f);  // keeps a runtime stated on its own
    }
  };
  if (!node.IsMap()) {
    STRATA_ASSIGN_OR_RETURN(SavedFormat f, FormatOf(entry, node, ""));
    fill(f);
    return rule;
  }
  std::optional<SavedFormat> all;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "source") continue;
    if (key == "default") {
      STRATA_ASSIGN_OR_RETURN(all, FormatOf(entry, kv.second, " for default"));
      continue;
    }
    const ShardingRuntime r =
        key == "none" ? ShardingRuntime::kUnstated : ShardingRuntimeNamed(key);
    if (r == ShardingRuntime::kUnstated && key != "none") {
      return entry.ErrorAt("checkpoint_format",
                           fmt::format("unknown runtime '{}', expected {}", key, kRuntimeList));
    }
    STRATA_ASSIGN_OR_RETURN(rule[r], FormatOf(entry, kv.second, fmt::format(" for {}", key)));
  }
  if (all) fill(*all);
  return rule;
}

CheckpointFormatDefault ResolveCheckpointFormatRule(
    const std::map<std::string, CheckpointFormatRule>& rules, const std::vector<std::string>& chain,
    ShardingRuntime runtime) {
  for (const std::string& name : chain) {
    const auto it = rules.find(name);
    if (it == rules.end()) continue;
    const auto f = it->second.find(runtime);
    if (f == it->second.end()) continue;
    return {f->second,
            fmt::format("{}'s checkpoint_format under {} (data/frameworks.yaml)", name,
                        runtime == ShardingRuntime::kUnstated ? "no sharding runtime"
                                                              : ShardingRuntimeName(runtime))};
  }
  return {};
}

}  // namespace strata
