#include "strata/plan/framework_scope.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

namespace strata::plan {
namespace {

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool* Slot(DimensionSet& d, const std::string& name) {
  return name == "tp"    ? &d.tp
         : name == "pp"  ? &d.pp
         : name == "vpp" ? &d.vpp
         : name == "cp"  ? &d.cp
         : name == "ep"  ? &d.ep
                         : &d.etp;
}

std::string Upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(ch - 'a' + 'A');
  return s;
}

/// `entry` for a job of release `version` and model type `model_type`.
void Apply(ModeScope& ms, const ParallelSupport& entry, const std::string& engine,
           const std::string& version, const std::string& model_type, bool moe) {
  ms.known = true;
  ms.engine = engine;
  ms.source = entry.source;
  ms.dimensions = DimensionSet{false, false, false, false, false, false, entry.etp_one_or_tp};
  for (const std::string& d : entry.runs) *Slot(ms.dimensions, d) = true;
  std::vector<std::string> notes;
  const auto expert_only = [&](const std::string& d) { return !moe && (d == "ep" || d == "etp"); };
  for (const auto& [d, release] : entry.from) {
    if (ReleaseAtLeast(version, release) || expert_only(d)) continue;
    *Slot(ms.dimensions, d) = false;
    notes.push_back(
        fmt::format("{} needs {} {} or later (the job's {})", Upper(d), engine, release, version));
  }
  if (!entry.tp_models.empty() && ms.dimensions.tp && !Listed(entry.tp_models, model_type)) {
    ms.dimensions.tp = false;
    notes.push_back(fmt::format("TP: no tensor-parallel plan known for model type '{}' (known: {})",
                                model_type, fmt::join(entry.tp_models, ", ")));
  }
  bool outside_runs = false;
  for (const std::string& d : ParallelDimensionNames()) {
    if (*Slot(ms.dimensions, d) || expert_only(d)) continue;
    ms.excluded.push_back(Upper(d));
    outside_runs |= !Listed(entry.runs, d);
  }
  if (ms.dimensions.etp && entry.etp_one_or_tp && moe) {
    ms.limits.push_back("ETP only 1 or equal to TP");
  }
  if (outside_runs || !ms.limits.empty()) notes.push_back(entry.why);
  std::erase(notes, std::string());
  ms.why = fmt::format("{}", fmt::join(notes, "; "));
}

ModeScope Resolve(const FrameworkCatalog& catalog, const JobSpec& job,
                  const std::string& model_type, bool moe, ShardingMode mode) {
  ModeScope ms;
  ms.mode = mode;
  const std::string& name = job.framework.name;
  if (!job.framework.given) {
    ms.why = fmt::format("the job names no framework ({} assumed): every dimension searched", name);
    return ms;
  }
  // The first framework on the chain that states what it runs under this mode decides.
  const EngineChain chain = ResolveEngineChain(catalog.engines, job.framework, mode);
  const std::string& mode_name = chain.mode;
  for (size_t i = 0; i < chain.names.size(); ++i) {
    const auto entry = catalog.frameworks.find(chain.names[i]);
    if (entry == catalog.frameworks.end()) break;
    const FrameworkEntry* f = &entry->second;
    if (f->parallel.empty()) continue;
    auto it = f->parallel.find(mode_name);
    if (it == f->parallel.end()) it = f->parallel.find("default");
    if (it != f->parallel.end()) {
      const std::string version = i == 0 && !job.framework.version.empty()
                                      ? job.framework.version
                                      : catalog.engines.LatestOf(f->name);
      Apply(ms, it->second, f->name, version, model_type, moe);
      ms.dimensions.query_groups = QueryGroupSplitOf(chain);
      // mcore-bridge's LoraParallelLinear raises on expert layers under ETP > 1
      // (modelscope/mcore-bridge@f020e47: src/mcore_bridge/tuners/lora.py).
      if (job.adapter.on() && moe && ms.dimensions.etp && chain.Runs("megatron-core")) {
        ms.dimensions.etp = false;
        ms.excluded.emplace_back("ETP");
        std::erase(ms.limits, std::string("ETP only 1 or equal to TP"));
        ms.why += std::string(ms.why.empty() ? "" : "; ") +
                  "ETP: megatron-core's LoRA (mcore-bridge) refuses expert tensor parallelism";
      }
      return ms;
    }
    if (i + 1 == chain.names.size()) {  // the engine itself, with nothing for this mode
      std::vector<std::string> runs;
      for (const auto& [m, e] : f->parallel) runs.push_back(m);
      ms.known = true;
      ms.runs_mode = false;
      ms.engine = f->name;
      ms.why = fmt::format("{} runs sharding {} only", f->name, fmt::join(runs, ", "));
      return ms;
    }
  }
  ms.why = fmt::format(
      "data/frameworks.yaml states nothing of what {} runs under sharding {}: every dimension "
      "searched",
      name, mode_name);
  return ms;
}

}  // namespace

bool FrameworkScope::unrestricted() const {
  if (!named) return false;
  return std::all_of(modes.begin(), modes.end(), [](const ModeScope& m) {
    return m.known && m.runs_mode && m.excluded.empty() && m.limits.empty();
  });
}

FrameworkScope ResolveScope(const FrameworkCatalog& catalog, const JobSpec& job,
                            const std::string& model_type, bool moe,
                            const std::vector<ShardingMode>& modes) {
  FrameworkScope scope;
  scope.framework = job.framework.name;
  scope.named = job.framework.given;
  for (ShardingMode m : modes) {
    ModeScope ms = Resolve(catalog, job, model_type, moe, m);
    // What the mode's pipeline engine launches (none known when the job names no framework),
    // as `step` and `memory` check it for the job's own layout.
    ms.dimensions.looped = ResolvePipelineRule(catalog.engines, job.framework, m).rule.looped;
    // And what it refuses with the job's EP all-to-all overlap, as `step` checks the job's own.
    if (job.overlap.moe_a2a) {
      const ChainMoeA2aOverlapRule r = ResolveMoeA2aOverlapRule(catalog.engines, job.framework, m);
      ms.dimensions.moe_a2a_refuses = MoeA2aRefusalsAt(r.rule, r.release);
      ms.dimensions.moe_recomputed = job.recompute.modules.moe;
    }
    scope.modes.push_back(std::move(ms));
  }
  return scope;
}

std::vector<std::string> ScopeLines(const FrameworkScope& scope) {
  std::vector<std::string> lines;
  if (!scope.named) {
    if (!scope.modes.empty()) lines.push_back(scope.modes.front().why);
    return lines;
  }
  for (const ModeScope& m : scope.modes) {
    const std::string head = fmt::format(
        "{}, sharding {}{}", scope.framework, ShardingModeName(m.mode),
        m.engine.empty() || m.engine == scope.framework ? "" : " (through " + m.engine + ")");
    if (!m.known) {
      lines.push_back(fmt::format("{}: {}", head, m.why));
    } else if (!m.runs_mode) {
      lines.push_back(fmt::format("{}: not searched: {}", head, m.why));
    } else if (!m.excluded.empty() || !m.limits.empty()) {
      std::vector<std::string> parts = m.limits;
      if (!m.excluded.empty()) {
        parts.insert(parts.begin(), fmt::format("{} not searched", fmt::join(m.excluded, ", ")));
      }
      lines.push_back(fmt::format("{}: {}: {}", head, fmt::join(parts, "; "), m.why));
    }
  }
  return lines;
}

}  // namespace strata::plan
