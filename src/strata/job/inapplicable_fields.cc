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
    // The rules data/frameworks.yaml dates by release (hf-trainer's expert loop until 5.0 and its
    // MoE adapter layout from 5.0) are compared with the job's own release, so a release after
    // `latest` still takes those of them dated after `latest`; what the file does not record is
    // `latest`'s. Saying "latest's behaviour is used" was wrong for such a job.
    out.push_back(fmt::format(
        "framework.version {} is newer than the latest {} release data/frameworks.yaml knows "
        "({}): the rules the file dates by release apply at {}; anything else that changed after "
        "{} is not known and stays {}'s",
        f.version, f.name, latest, f.version, latest, latest));
  }
  return out;
}

}  // namespace strata
