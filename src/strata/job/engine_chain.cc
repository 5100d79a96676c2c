#include "strata/job/engine_chain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/training_modes.h"
#include "strata/model/adapter.h"

namespace strata {

Result<FrameworkEngines> ParseFrameworkEngines(const YAML::Node& frameworks,
                                               const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YamlMap all, YamlMap::Of(frameworks, file, "frameworks"));
  FrameworkEngines out;
  for (const auto& kv : frameworks) {
    const std::string name = kv.first.Scalar();
    STRATA_ASSIGN_OR_RETURN(YamlMap entry, all.Map(name));
    STRATA_ASSIGN_OR_RETURN(out.latest[name], entry.String("latest"));
    if (!entry.Has("runs_as")) continue;
    STRATA_ASSIGN_OR_RETURN(YAML::Node runs_as, entry.Node("runs_as"));
    if (!runs_as.IsMap()) {
      return entry.ErrorAt("runs_as", "expected {sharding mode: framework, ...}");
    }
    static const std::vector<std::string> kModes = {"default", "none",  "zero1",
                                                    "zero2",   "zero3", "fsdp2"};
    for (const auto& m : runs_as) {
      const std::string mode = m.first.Scalar();
      if (std::ranges::find(kModes, mode) == kModes.end()) {
        return entry
            .ErrorAt("runs_as", fmt::format("unknown sharding mode '{}', expected one of: {}", mode,
                                            fmt::join(kModes, ", ")))
            .WithHint(DidYouMeanHint(mode, kModes));
      }
      out.runs_as[name][mode] = m.second.Scalar();
    }
    if (!out.runs_as[name].contains("default")) {
      return entry.ErrorAt("runs_as", "needs a `default:` entry for the other sharding modes");
    }
  }
  for (const auto& [name, modes] : out.runs_as) {
    for (const auto& [mode, target] : modes) {
      if (!out.latest.contains(target)) {
        return InvalidInput(fmt::format("framework {} runs_as {}: no such framework", name, target))
            .InFile(file)
            .InField(fmt::format("frameworks.{}.runs_as.{}", name, mode));
      }
    }
  }
  // A chain visits each framework at most once; a longer walk is a loop.
  for (const auto& [name, modes] : out.runs_as) {
    for (const auto& [mode, first] : modes) {
      std::string at = first;
      for (size_t step = 0;; ++step) {
        const auto next = out.runs_as.find(at);
        if (next == out.runs_as.end()) break;
        if (step > out.runs_as.size()) {
          return InvalidInput(fmt::format("framework {} runs_as loops back on itself", name))
              .InFile(file)
              .InField(fmt::format("frameworks.{}.runs_as.{}", name, mode));
        }
        const auto by_mode = next->second.find(mode);
        at = by_mode != next->second.end() ? by_mode->second : next->second.at("default");
      }
    }
  }
  return out;
}

Result<FrameworkEngines> ParseFrameworkEnginesText(const std::string& text,
                                                   const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node frameworks, top.Node("frameworks"));
  if (!frameworks.IsMap()) return top.ErrorAt("frameworks", "expected {name: {...}, ...}");
  return ParseFrameworkEngines(frameworks, file);
}

bool EngineChain::Runs(std::string_view name) const {
  return std::ranges::find(names, name) != names.end();
}

EngineChain ResolveEngineChain(const FrameworkEngines& engines, const FrameworkSpec& spec,
                               ShardingMode mode) {
  EngineChain chain;
  chain.names = {spec.name};
  chain.mode = std::string(ShardingModeName(mode));
  // The parser refuses loops; the bound keeps a hand-built catalog from looping too.
  for (size_t step = 0; step <= engines.runs_as.size(); ++step) {
    const auto wrapper = engines.runs_as.find(chain.names.back());
    if (wrapper == engines.runs_as.end()) break;
    const auto by_mode = wrapper->second.find(chain.mode);
    const auto fallback = wrapper->second.find("default");
    if (by_mode != wrapper->second.end()) {
      chain.names.push_back(by_mode->second);
    } else if (fallback != wrapper->second.end()) {
      chain.names.push_back(fallback->second);
    } else {
      break;
    }
  }
  if (!chain.wrapped() && !spec.version.empty()) {
    chain.version = spec.version;
    chain.version_assumed = false;
  } else {
    chain.version = engines.LatestOf(chain.engine());
  }
  return chain;
}

std::string FrameworkEngines::LatestOf(const std::string& name) const {
  const auto it = latest.find(name);
  return it == latest.end() ? std::string() : it->second;
}

Result<FrameworkEngines> LoadFrameworkEngines() {
  const std::string path = DataDir() + "/frameworks.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseFrameworkEnginesText(text, path);
}

Status ResolveAdapterTargets(JobSpec& spec, const FrameworkEngines& engines,
                             const ModelConfig* model) {
  if (!spec.adapter.on() || !spec.framework.given) return OkStatus();
  const EngineChain chain = ResolveEngineChain(engines, spec.framework, spec.sharding.mode);
  std::vector<std::string>& targets = spec.adapter.targets;
  auto refuse = [&](const std::string& message, const std::string& hint,
                    const char* field = "adapter.targets") -> Status {
    Error e = InvalidInput(message);
    e.field = field;
    e.file = spec.file;
    e.hint = hint;
    return e;
  };
  auto names = [&](const std::vector<std::string>& list) {
    return std::ranges::find_first_of(targets, list) != targets.end();
  };
  const bool moe = model != nullptr && model->HasLayers(FfnKind::kMoe);
  if (chain.Runs("megatron-core")) {
    const auto all = std::ranges::find(targets, "all-linear");
    if (all != targets.end()) {
      std::vector<std::string> expanded =
          model != nullptr ? MegatronAllLinear(*model) : MegatronFusedTargetNames();
      for (const std::string& name : targets) {
        if (name != "all-linear") expanded.push_back(name);  // the router, from all-router
      }
      targets = std::move(expanded);
    }
    for (const std::string& name : targets) {
      const std::string_view fused = FusedTargetOf(name);
      if (fused == "router") {
        return refuse(fmt::format("'{}' is transformers' name of the MoE router; {} with sharding "
                                  "{} trains megatron-core's layers, whose router is 'router'",
                                  name, spec.framework.name, chain.mode),
                      "name router (what ms-swift's all-router adds)");
      }
      if (!fused.empty()) {
        return refuse(fmt::format("'{}': {} with sharding {} trains megatron-core's layers, whose "
                                  "linears are fused; '{}' is part of '{}'",
                                  name, spec.framework.name, chain.mode, name, fused),
                      "name linear_qkv, linear_proj, linear_fc1, linear_fc2 (or all-linear)");
      }
      if (name == "shared_expert_gate") {
        return refuse(fmt::format("'{}': megatron-core's shared-expert gate is a parameter "
                                  "(SharedExpertMLP.gate_weight), not a linear layer",
                                  name),
                      "leave it out; linear_fc1 and linear_fc2 cover the shared experts");
      }
    }
    if (spec.adapter.kind == AdapterKind::kDora) {
      return refuse(fmt::format("dora: {} with sharding {} trains megatron-core's layers, whose "
                                "LoRA (mcore-bridge's LoraParallelLinear) does not support DoRA",
                                spec.framework.name, chain.mode),
                    "use lora, or a framework running HF code with PEFT", "adapter.kind");
    }
    if (moe && spec.layout.etp > 1 && names({"linear_fc1", "linear_fc2"})) {
      return refuse(fmt::format("etp {}: mcore-bridge's LoRA on routed experts refuses expert "
                                "tensor parallelism ('Currently, LoRA does not support ETP.')",
                                spec.layout.etp),
                    "set parallel.etp: 1", "parallel.etp");
    }
    return OkStatus();
  }
  for (const std::string& name : targets) {
    if (std::ranges::find(MegatronTargetNames(), name) != MegatronTargetNames().end()) {
      return refuse(fmt::format("'{}' is megatron-core's {}; {} with sharding {} trains "
                                "{}'s code, where PEFT adapts the separate linears",
                                name, name == "router" ? "TopKRouter" : "fused module",
                                spec.framework.name, chain.mode, chain.engine()),
                    "name q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, gate "
                    "(the router) (or all-linear)");
    }
  }
  // transformers 4.x holds Qwen3-MoE's and Qwen3-Next's experts as an nn.ModuleList of
  // nn.Linear, which PEFT reaches by name; other layouts (3-D expert parameters, other names)
  // are not modelled.
  const bool reaches_experts = names({"all-linear", "gate_proj", "up_proj", "down_proj"});
  if (moe && reaches_experts && model->model_type != "qwen3_moe" &&
      model->model_type != "qwen3_next") {
    return refuse(fmt::format("{} (model_type {}) has MoE layers; strata models PEFT adapters on "
                              "routed experts in transformers 4.x's layout of qwen3_moe and "
                              "qwen3_next only (an nn.ModuleList of gate/up/down_proj nn.Linear)",
                              model->name, model->model_type),
                  "target attention only (q_proj, k_proj, v_proj, o_proj), or train through "
                  "megatron-core (framework ms-swift with megatron)");
  }
  return OkStatus();
}

}  // namespace strata
