#include "strata/job/inapplicable_fields.h"

#include <fmt/format.h>

#include "strata/core/release.h"
#include "strata/model/param_count.h"

namespace strata {

std::vector<std::string> InapplicableFields(const JobSpec& spec, const ModelConfig& model,
                                            const FrameworkEngines& engines) {
  std::vector<std::string> out;
  const ModuleParams params = CountParams(model).AllModules();
  for (const std::string& name : spec.frozen) {
    for (ModuleKind kind : AllModuleKinds()) {
      if (ModuleKindName(kind) == name && params[kind] == 0) {
        out.push_back(
            fmt::format("frozen: {} has no {} parameters, so freezing '{}' changes "
                        "nothing",
                        model.name, name, name));
      }
    }
  }
  if (spec.sharding.prefetch_layers_given && !spec.sharding.shards_weights()) {
    out.push_back(
        fmt::format("sharding.prefetch_layers applies to zero3 and fsdp2, which gather "
                    "weights layer by layer; under {} it changes nothing",
                    ShardingModeName(spec.sharding.mode)));
  }
  const FrameworkSpec& f = spec.framework;
  const std::string latest = engines.LatestOf(f.name);
  if (!f.version.empty() && !latest.empty() && ReleaseAtLeast(f.version, latest) &&
      !ReleaseAtLeast(latest, f.version)) {
    out.push_back(
        fmt::format("framework.version {} is newer than the latest {} release "
                    "data/frameworks.yaml knows ({}): {}'s behaviour is used",
                    f.version, f.name, latest, latest));
  }
  return out;
}

}  // namespace strata
