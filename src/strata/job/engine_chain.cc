#include "strata/job/engine_chain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/release.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/training_modes.h"
#include "strata/model/adapter.h"

namespace strata {

namespace {

// `gdn_module: NAME`, or {module: NAME, megatron_core_from: RELEASE, megatron_core_models: [..],
// context_parallel_from: RELEASE, packed_sequences_from: RELEASE}.
Result<GdnModuleRule> ParseGdnModule(YamlMap& entry) {
  static const std::vector<std::string> kModules = {"megatron-core", "transformers"};
  GdnModuleRule rule;
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, entry.Node("gdn_module"));
  std::string where = "gdn_module";
  if (node.IsScalar()) {
    rule.module = node.Scalar();
  } else {
    STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("gdn_module"));
    STRATA_ASSIGN_OR_RETURN(rule.module, m.String("module"));
    if (m.Has("megatron_core_from")) {
      STRATA_ASSIGN_OR_RETURN(rule.megatron_core_from, m.String("megatron_core_from"));
      STRATA_ASSIGN_OR_RETURN(YAML::Node models, m.Node("megatron_core_models"));
      if (!models.IsSequence() || models.size() == 0) {
        return m.ErrorAt("megatron_core_models", "expected a list of model types");
      }
      for (const auto& t : models) rule.megatron_core_models.push_back(t.Scalar());
    }
    if (m.Has("context_parallel_from")) {
      STRATA_ASSIGN_OR_RETURN(rule.context_parallel_from, m.String("context_parallel_from"));
    }
    if (m.Has("packed_sequences_from")) {
      STRATA_ASSIGN_OR_RETURN(rule.packed_sequences_from, m.String("packed_sequences_from"));
    }
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    where = "gdn_module.module";
  }
  if (std::ranges::find(kModules, rule.module) == kModules.end()) {
    return entry.ErrorAt(where, fmt::format("unknown module '{}', expected {}", rule.module,
                                            fmt::join(kModules, " or ")));
  }
  return rule;
}

// `gqa_repeat: {ops: N, until: RELEASE}` (until optional: every release repeats).
Result<GqaRepeatRule> ParseGqaRepeat(YamlMap& entry) {
  GqaRepeatRule rule;
  STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("gqa_repeat"));
  STRATA_ASSIGN_OR_RETURN(rule.ops, m.Number("ops"));
  if (rule.ops < 0) return m.ErrorAt("ops", fmt::format("expected ops >= 0, got {}", rule.ops));
  if (m.Has("until")) {
    STRATA_ASSIGN_OR_RETURN(rule.until, m.String("until"));
  }
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return rule;
}

// `moe_adapter_layout: {fused_experts_from: RELEASE, source: ...}`.
Result<std::string> ParseMoeAdapterLayout(YamlMap& entry) {
  STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("moe_adapter_layout"));
  STRATA_ASSIGN_OR_RETURN(std::string from, m.String("fused_experts_from"));
  if (!m.Has("source")) return m.ErrorAt("source", "expected the source of the value");
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys({"source"}));
  return from;
}

// `reduce_bucket: {elements: N, auto: hidden^2, zero3: auto, source: ...}` (elements or auto may
// be left out, not both; zero3 is optional).
Result<ReduceBucketRule> ParseReduceBucket(YamlMap& entry) {
  ReduceBucketRule rule;
  STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("reduce_bucket"));
  if (m.Has("elements")) {
    STRATA_ASSIGN_OR_RETURN(rule.elements, m.Number("elements"));
    if (!(rule.elements >= 0) || rule.elements > 1e15) {
      return m.ErrorAt("elements", "expected 0 or more elements (DeepSpeed's reduce_bucket_size)");
    }
    rule.has_elements = true;
  }
  if (m.Has("auto")) {
    STRATA_ASSIGN_OR_RETURN(std::string a, m.String("auto"));
    if (a != "hidden^2") {
      return m.ErrorAt("auto", fmt::format("unknown fill '{}', expected hidden^2", a));
    }
    rule.auto_hidden_squared = true;
  }
  if (m.Has("zero3")) {
    STRATA_ASSIGN_OR_RETURN(std::string z, m.String("zero3"));
    if (z != "auto") {
      return m.ErrorAt("zero3", fmt::format("unknown value '{}', expected auto (what the "
                                            "framework's shipped ZeRO-3 config writes)",
                                            z));
    }
    rule.zero3_auto = true;
  }
  if (!rule.has_elements && !rule.auto_hidden_squared) {
    return m.ErrorAt("elements", "expected elements, auto or both");
  }
  // Every value in data/ carries its source.
  if (!m.Has("source")) return m.ErrorAt("source", "expected the source of the value");
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys({"source"}));
  return rule;
}

// Whether megatron-core's module takes packed sequences at the job's release (the job's when it
// names megatron-core with a version, else the latest known), and why not.
void SetPackedSequences(const FrameworkEngines& engines, const EngineChain& chain,
                        const FrameworkSpec& spec, GdnPlacement& out) {
  if (out.module != "megatron-core") return;
  const auto own = engines.gdn.find("megatron-core");
  if (own == engines.gdn.end() || own->second.packed_sequences_from.empty()) return;
  const bool given = spec.name == "megatron-core" && !spec.version.empty();
  const std::string release = given ? spec.version : engines.LatestOf("megatron-core");
  if (release.empty() || ReleaseAtLeast(release, own->second.packed_sequences_from)) return;
  out.packed_sequences = false;
  out.no_packed_sequences = fmt::format(
      "megatron-core {}'s GatedDeltaNet refuses packed sequences (its forward raises "
      "NotImplementedError(\"GDN does not support packed sequence for now.\") when given "
      "packed_seq_params; from {} on it runs them){}",
      release, own->second.packed_sequences_from,
      given ? ""
            : fmt::format("; megatron-core {} ASSUMED, the latest data/frameworks.yaml knows{}",
                          release, chain.wrapped() ? "" : ": set framework.version"));
}

// Whether the module `out` names runs under context parallelism, and why not. megatron-core's
// release is the job's when it names megatron-core with a version, else the latest known.
void SetContextParallel(const FrameworkEngines& engines, const EngineChain& chain,
                        const FrameworkSpec& spec, const std::string& at,
                        const std::string& assumed, GdnPlacement& out) {
  if (out.module == "transformers") {
    out.context_parallel = false;
    out.no_context_parallel = fmt::format(
        "{} builds Gated DeltaNet from transformers' module, which has no context parallelism "
        "(a recurrent scan over the tokens it is given: no state crosses CP ranks){}",
        at, assumed);
    return;
  }
  if (out.module != "megatron-core") return;
  const auto own = engines.gdn.find("megatron-core");
  if (own == engines.gdn.end() || own->second.context_parallel_from.empty()) return;
  const bool given = spec.name == "megatron-core" && !spec.version.empty();
  const std::string release = given ? spec.version : engines.LatestOf("megatron-core");
  if (release.empty() || ReleaseAtLeast(release, own->second.context_parallel_from)) return;
  out.context_parallel = false;
  out.no_context_parallel = fmt::format(
      "megatron-core {}'s GatedDeltaNet refuses context parallelism (TransformerConfig asserts "
      "context_parallel_size == 1; from {} on it runs CP){}",
      release, own->second.context_parallel_from,
      given ? ""
            : fmt::format("; megatron-core {} ASSUMED, the latest data/frameworks.yaml knows{}",
                          release, chain.wrapped() ? "" : ": set framework.version"));
}

constexpr std::pair<ShardingRuntime, std::string_view> kRuntimes[] = {
    {ShardingRuntime::kDeepSpeed, "deepspeed"},
    {ShardingRuntime::kFsdp1, "fsdp1"},
    {ShardingRuntime::kFsdp2, "fsdp2"},
    {ShardingRuntime::kMegatronFsdp, "megatron-fsdp"},
    {ShardingRuntime::kMegatron, "megatron"}};

// One runtime value of `key`: under zero3 the sharded-parameter runtimes, under zero1/2 also
// megatron-core's distributed optimizer.
Result<ShardingRuntime> ParseRuntimeValue(YamlMap& entry, const char* key, const YAML::Node& node,
                                          bool zero3) {
  const char* allowed =
      zero3 ? "deepspeed, fsdp1, fsdp2 or megatron-fsdp" : "deepspeed, fsdp1, fsdp2 or megatron";
  const std::string value = node.IsScalar() ? node.Scalar() : std::string();
  const ShardingRuntime r = ShardingRuntimeNamed(value);
  const bool fits = zero3 ? r != ShardingRuntime::kUnstated && r != ShardingRuntime::kMegatron
                          : r != ShardingRuntime::kUnstated && r != ShardingRuntime::kMegatronFsdp;
  if (fits) return r;
  return entry.ErrorAt(key, fmt::format("unknown {} '{}', expected {}", key, value, allowed));
}

// `zero3_runtime: NAME` (required of an engine, an entry without runs_as) and
// `zero12_runtime: NAME` or {zero1: NAME, zero2: NAME} (optional): whose code runs the sharding
// of those modes. A wrapper that leaves one out takes the chain's next statement.
Status ParseShardingRuntimes(YamlMap& entry, const std::string& name, FrameworkEngines& out) {
  if (!entry.Has("zero3_runtime")) {
    if (!entry.Has("runs_as")) {
      return entry.ErrorAt("zero3_runtime",
                           "missing: an engine (an entry without runs_as) says whose ZeRO-3 it "
                           "runs under sharding.mode zero3: deepspeed, fsdp1, fsdp2 or "
                           "megatron-fsdp");
    }
  } else {
    STRATA_ASSIGN_OR_RETURN(YAML::Node node, entry.Node("zero3_runtime"));
    STRATA_ASSIGN_OR_RETURN(out.sharding_runtime[name]["zero3"],
                            ParseRuntimeValue(entry, "zero3_runtime", node, true));
  }
  if (!entry.Has("zero12_runtime")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, entry.Node("zero12_runtime"));
  if (!node.IsMap()) {
    for (const char* mode : {"zero1", "zero2"}) {
      STRATA_ASSIGN_OR_RETURN(out.sharding_runtime[name][mode],
                              ParseRuntimeValue(entry, "zero12_runtime", node, false));
    }
    return OkStatus();
  }
  for (const auto& m : node) {
    const std::string mode = m.first.Scalar();
    if (mode != "zero1" && mode != "zero2") {
      return entry.ErrorAt(
          "zero12_runtime",
          fmt::format("unknown sharding mode '{}', expected zero1 or zero2", mode));
    }
    STRATA_ASSIGN_OR_RETURN(out.sharding_runtime[name][mode],
                            ParseRuntimeValue(entry, "zero12_runtime", m.second, false));
  }
  return OkStatus();
}

}  // namespace

std::string_view ShardingRuntimeName(ShardingRuntime runtime) {
  for (const auto& [r, name] : kRuntimes) {
    if (r == runtime) return name;
  }
  return "unstated";
}

ShardingRuntime ShardingRuntimeNamed(std::string_view name) {
  for (const auto& [r, n] : kRuntimes) {
    if (n == name) return r;
  }
  return ShardingRuntime::kUnstated;
}

bool ShardingRuntimeRuns(ShardingRuntime runtime, ShardingMode mode) {
  using R = ShardingRuntime;
  switch (mode) {
    case ShardingMode::kNone:
      return false;
    case ShardingMode::kZero1:
      return runtime == R::kDeepSpeed || runtime == R::kMegatron;
    case ShardingMode::kZero2:
      return runtime == R::kDeepSpeed || runtime == R::kMegatron || runtime == R::kFsdp1 ||
             runtime == R::kFsdp2;
    case ShardingMode::kZero3:
      return runtime == R::kDeepSpeed || runtime == R::kMegatronFsdp || runtime == R::kFsdp1 ||
             runtime == R::kFsdp2;
    case ShardingMode::kFsdp2:
      return runtime == R::kMegatronFsdp || runtime == R::kFsdp1 || runtime == R::kFsdp2;
  }
  return false;
}

ShardingRuntime ResolveShardingRuntime(const FrameworkEngines& engines, const EngineChain& chain) {
  if (chain.mode == "none") return ShardingRuntime::kUnstated;
  if (chain.mode == "fsdp2") {
    return chain.Runs("megatron-core") ? ShardingRuntime::kMegatronFsdp : ShardingRuntime::kFsdp2;
  }
  for (const std::string& name : chain.names) {
    const auto entry = engines.sharding_runtime.find(name);
    if (entry == engines.sharding_runtime.end()) continue;
    const auto it = entry->second.find(chain.mode);
    if (it != entry->second.end()) return it->second;
  }
  return ShardingRuntime::kUnstated;
}

ShardingRuntime ResolveJobShardingRuntime(const FrameworkEngines& engines, const JobSpec& spec,
                                          ShardingMode mode) {
  // The job's sharding.runtime wins wherever it can run the mode (a layout search may try
  // another mode than the job's own: there the framework's answer stands).
  const ShardingRuntime given = spec.sharding.runtime;
  if (given != ShardingRuntime::kUnstated && ShardingRuntimeRuns(given, mode)) return given;
  return ResolveShardingRuntime(engines, ResolveEngineChain(engines, spec.framework, mode));
}

Result<FrameworkEngines> ParseFrameworkEngines(const YAML::Node& frameworks,
                                               const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YamlMap all, YamlMap::Of(frameworks, file, "frameworks"));
  FrameworkEngines out;
  for (const auto& kv : frameworks) {
    const std::string name = kv.first.Scalar();
    STRATA_ASSIGN_OR_RETURN(YamlMap entry, all.Map(name));
    STRATA_ASSIGN_OR_RETURN(out.latest[name], entry.String("latest"));
    if (entry.Has("gdn_module")) {
      STRATA_ASSIGN_OR_RETURN(out.gdn[name], ParseGdnModule(entry));
    }
    if (entry.Has("gqa_repeat")) {
      STRATA_ASSIGN_OR_RETURN(out.gqa_repeat[name], ParseGqaRepeat(entry));
    }
    if (entry.Has("pipeline")) {
      STRATA_ASSIGN_OR_RETURN(out.pipeline[name], ParsePipelineRule(entry, name));
    }
    if (entry.Has("reduce_bucket")) {
      STRATA_ASSIGN_OR_RETURN(out.reduce_bucket[name], ParseReduceBucket(entry));
    }
    if (entry.Has("moe_adapter_layout")) {
      STRATA_ASSIGN_OR_RETURN(out.fused_experts_from[name], ParseMoeAdapterLayout(entry));
    }
    if (entry.Has("moe_a2a_overlap")) {
      STRATA_ASSIGN_OR_RETURN(out.moe_a2a_overlap[name], ParseMoeA2aOverlapRule(entry, name));
    }
    if (entry.Has("fsdp2_units")) {
      STRATA_ASSIGN_OR_RETURN(std::string units, entry.String("fsdp2_units"));
      if (units != "root" && units != "separate" && units != "root_output") {
        return entry.ErrorAt(
            "fsdp2_units",
            fmt::format("unknown layout '{}', expected root, root_output or separate", units));
      }
      out.fsdp2_units[name] = units == "root"          ? FsdpUnits::kRoot
                              : units == "root_output" ? FsdpUnits::kRootOutput
                                                       : FsdpUnits::kSeparate;
    }
    if (entry.Has("accumulation_sync")) {
      STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("accumulation_sync"));
      STRATA_ASSIGN_OR_RETURN(std::string after, m.String("after"));
      if (after != "every_micro_batch" && after != "last_micro_batch") {
        return m.ErrorAt("after", fmt::format("unknown value '{}', expected every_micro_batch or "
                                              "last_micro_batch",
                                              after));
      }
      // Every value in data/ carries its source.
      if (!m.Has("source")) return m.ErrorAt("source", "expected the source of the value");
      STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys({"source"}));
      out.sync_each_micro_batch[name] = after == "every_micro_batch";
    }
    STRATA_RETURN_IF_ERROR(ParseShardingRuntimes(entry, name, out));
    if (entry.Has("checkpoint_format")) {
      STRATA_ASSIGN_OR_RETURN(out.checkpoint_format[name], ParseCheckpointFormatRule(entry));
    }
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

const GqaRepeatRule* GqaRepeatOf(const FrameworkEngines& engines, const EngineChain& chain) {
  const auto it = engines.gqa_repeat.find(chain.engine());
  if (it == engines.gqa_repeat.end()) return nullptr;
  const GqaRepeatRule& rule = it->second;
  if (!rule.until.empty() && ReleaseAtLeast(chain.version, rule.until)) return nullptr;
  return &rule;
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

GdnPlacement ResolveGdnPlacement(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                 ShardingMode mode, const std::string& model_type) {
  const EngineChain chain = ResolveEngineChain(engines, spec, mode);
  GdnPlacement out;
  for (const std::string& name : chain.names) {
    const auto it = engines.gdn.find(name);
    if (it == engines.gdn.end()) continue;
    const GdnModuleRule& rule = it->second;
    const bool given = name == spec.name && !spec.version.empty();
    const std::string release = given ? spec.version : engines.LatestOf(name);
    const std::string at = release.empty() ? name : fmt::format("{} {}", name, release);
    const std::string assumed =
        given || release.empty() ? std::string()
                                 : fmt::format(
                                       "; {} ASSUMED, the latest data/frameworks.yaml knows: set "
                                       "framework.version",
                                       release);
    const bool listed =
        std::ranges::find(rule.megatron_core_models, model_type) != rule.megatron_core_models.end();
    // The release rule is about the framework's Megatron path; its HF path runs HF's module.
    const bool newer = chain.Runs("megatron-core") && !rule.megatron_core_from.empty() && listed &&
                       ReleaseAtLeast(release, rule.megatron_core_from);
    out.module = newer ? "megatron-core" : rule.module;
    // Only megatron-core splits a layer over TP; HF code under another engine runs without TP.
    out.replicated_over_tp = out.module == "transformers" && chain.Runs("megatron-core");
    if (out.replicated_over_tp) {
      out.rule = fmt::format(
          "Gated DeltaNet replicated over TP ({} builds it from transformers' module inside "
          "megatron-core{}{}): every TP rank holds and runs the whole layer, its gradients "
          "averaged over TP",
          at, assumed,
          listed ? fmt::format("; megatron-core's for {} from {} {}", model_type, name,
                               rule.megatron_core_from)
                 : "");
    } else if (out.module == "megatron-core") {
      out.rule = fmt::format(
          "Gated DeltaNet split over TP ({} builds megatron-core's GatedDeltaNet{}): its heads, "
          "projections and state over the TP ranks",
          at, assumed);
    }
    SetContextParallel(engines, chain, spec, at, assumed, out);
    SetPackedSequences(engines, chain, spec, out);
    return out;
  }
  return out;
}

ChainPipelineRule ResolvePipelineRule(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                      ShardingMode mode) {
  // A job that names no framework may be any framework's: its schedule and micro batches are
  // taken as written (the step prices PyTorch's rounds where megatron-core's groups cannot run).
  if (!spec.given) return {};
  const EngineChain chain = ResolveEngineChain(engines, spec, mode);
  for (const std::string& name : chain.names) {
    const auto it = engines.pipeline.find(name);
    if (it == engines.pipeline.end()) continue;
    const bool given = name == spec.name && !spec.version.empty();
    return {it->second, given ? spec.version : engines.LatestOf(name)};
  }
  return {};
}

ReduceBucketDefault ResolveReduceBucket(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                        ShardingMode mode) {
  const EngineChain chain = ResolveEngineChain(engines, spec, mode);
  for (const std::string& name : chain.names) {
    const auto it = engines.reduce_bucket.find(name);
    if (it == engines.reduce_bucket.end()) continue;
    if (mode == ShardingMode::kZero3 && it->second.zero3_auto) {
      // Its ZeRO-3 config says "auto": the first "auto" filler on the chain writes hidden^2.
      for (const std::string& filler : chain.names) {
        const auto f = engines.reduce_bucket.find(filler);
        if (f == engines.reduce_bucket.end() || !f->second.auto_hidden_squared) continue;
        return {0, true,
                fmt::format("{}'s ZeRO-3 config says \"auto\", which {} fills with "
                            "hidden_size^2 (data/frameworks.yaml)",
                            name, filler)};
      }
    }
    if (!it->second.has_elements) continue;
    return {it->second.elements, false,
            fmt::format("{}'s reduce_bucket_size (data/frameworks.yaml)", name)};
  }
  return {};
}

ChainMoeA2aOverlapRule ResolveMoeA2aOverlapRule(const FrameworkEngines& engines,
                                                const FrameworkSpec& spec, ShardingMode mode) {
  const EngineChain chain = ResolveEngineChain(engines, spec, mode);
  for (const std::string& name : chain.names) {
    const auto it = engines.moe_a2a_overlap.find(name);
    if (it == engines.moe_a2a_overlap.end()) continue;
    const bool given = spec.given && name == spec.name && !spec.version.empty();
    return {it->second, given ? spec.version : engines.LatestOf(name)};
  }
  return {};
}

namespace {

// The first framework on the job's chain under fsdp2 with an entry in `by_name` (one of
// FrameworkEngines' maps of a data/frameworks.yaml key), with the sentence naming it.
template <typename T>
std::optional<std::pair<T, std::string>> FirstOnFsdp2Chain(const FrameworkEngines& engines,
                                                           const FrameworkSpec& spec,
                                                           const std::map<std::string, T>& by_name,
                                                           std::string_view key) {
  if (!spec.given) return std::nullopt;
  const EngineChain chain = ResolveEngineChain(engines, spec, ShardingMode::kFsdp2);
  for (const std::string& name : chain.names) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    return std::pair{it->second, fmt::format("{}'s {} (data/frameworks.yaml)", name, key)};
  }
  return std::nullopt;
}

}  // namespace

Fsdp2UnitsDefault ResolveFsdp2Units(const FrameworkEngines& engines, const FrameworkSpec& spec) {
  const auto found = FirstOnFsdp2Chain(engines, spec, engines.fsdp2_units, "fsdp2_units");
  if (!found) return {};
  return {found->first, found->second};
}

AccumulationSyncDefault ResolveAccumulationSync(const FrameworkEngines& engines,
                                                const FrameworkSpec& spec) {
  const auto found =
      FirstOnFsdp2Chain(engines, spec, engines.sync_each_micro_batch, "accumulation_sync");
  if (!found) return {};
  return {found->first, found->second};
}

std::optional<ReduceBucketAuto> ResolveReduceBucketAuto(const FrameworkEngines& engines,
                                                        const FrameworkSpec& spec,
                                                        ShardingMode mode, int64_t hidden_size) {
  const EngineChain chain = ResolveEngineChain(engines, spec, mode);
  for (const std::string& name : chain.names) {
    const auto it = engines.reduce_bucket.find(name);
    if (it == engines.reduce_bucket.end() || !it->second.auto_hidden_squared) continue;
    const auto h = static_cast<double>(hidden_size);
    return ReduceBucketAuto{h * h, name};
  }
  return std::nullopt;
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
  spec.adapter.fused_experts = false;  // this resolution's answer, not an earlier one's
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
  const auto from = engines.fused_experts_from.find(chain.engine());
  const bool fused_layout = moe && from != engines.fused_experts_from.end() &&
                            !chain.version.empty() && ReleaseAtLeast(chain.version, from->second);
  const bool reaches_experts = names({"all-linear", "gate_proj", "up_proj", "down_proj"});
  if (fused_layout) {
    // transformers 5 (huggingface/transformers#42697): the routed experts are one module with
    // gate_up_proj and down_proj as 3-D nn.Parameter, the router a TopKRouter holding a bare
    // weight (src/transformers/models/qwen3_5_moe/modeling_qwen3_5_moe.py at 5fd974e,
    // Qwen3_5MoeExperts, Qwen3_5MoeTopKRouter). PEFT matches target names as suffixes of module
    // names and adapts nn.Linear (huggingface/peft@5d602fd src/peft/tuners/tuners_utils.py,
    // check_target_module_exists, _maybe_include_all_linear_layers), so all-linear and
    // gate/up/down_proj reach the shared expert's nn.Linear only, and 'gate' names the
    // TopKRouter, which LoRA refuses ("Target module ... is not supported",
    // src/peft/tuners/lora/model.py). For model types transformers converts from v4 checkpoints
    // (conversion_mapping.py, _MODEL_TO_CONVERSION_PATTERN: qwen3_moe, qwen3_next, mixtral,
    // deepseek_v3, ...) PEFT 0.19+ rewrites those names into adapters on the 3-D parameters
    // (src/peft/utils/transformers_weight_conversion.py, _convert_peft_config_moe: gate_up_proj
    // at rank 2r), a layout strata does not model; qwen3_5_moe is not in that map.
    if (std::ranges::find(targets, "gate") != targets.end()) {
      return refuse(fmt::format("'gate': under {} {} the MoE router of {} is a TopKRouter (a bare "
                                "weight), not an nn.Linear; PEFT's LoRA refuses it",
                                chain.engine(), chain.version, model->name),
                    "leave the router out (all-linear does)");
    }
    if (model->model_type == "qwen3_5_moe") {
      spec.adapter.fused_experts = true;
      return OkStatus();
    }
    if (reaches_experts) {
      return refuse(
          fmt::format("{} (model_type {}) has MoE layers; under {} {} its routed experts are 3-D "
                      "parameters, which PEFT 0.19+ adapts by converting transformers 4.x's names "
                      "(gate_up_proj at rank 2r), a layout strata does not model; it models "
                      "{}'s MoE adapters on qwen3_5_moe, and 4.x's on qwen3_moe and qwen3_next",
                      model->name, model->model_type, chain.engine(), chain.version, from->second),
          "target attention only (q_proj, k_proj, v_proj, o_proj), set framework.version below " +
              from->second + ", or train through megatron-core (framework ms-swift with megatron)");
    }
    return OkStatus();
  }
  // transformers 4.x holds Qwen3-MoE's and Qwen3-Next's experts as an nn.ModuleList of
  // nn.Linear, which PEFT reaches by name; other layouts (3-D expert parameters, other names)
  // are not modelled.
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
