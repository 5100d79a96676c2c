#include "strata/job/job_json.h"

#include <cstdint>
#include <string>

#include "strata/job/training_modes.h"

namespace strata {

Json JobToJson(const ResolvedJob& job) {
  const JobSpec& s = job.spec;
  const ParallelLayout& l = s.layout;
  Json doc = {{"file", s.file},
              {"cluster", job.cluster.name},
              {"model", job.model.name},
              {"gpu", job.gpu.name},
              {"gpus", l.world()},
              {"tp", l.tp},
              {"pp", l.pp},
              {"vpp", l.vpp},
              {"cp", l.cp},
              {"ep", l.ep},
              {"etp", l.etp},
              {"dp", l.dp},
              {"expert_dp", l.expert_dp()},
              {"sequence_parallel", l.sequence_parallel},
              {"micro_batch", s.micro_batch},
              {"global_batch", s.global_batch},
              {"max_tokens", static_cast<int64_t>(s.sequence.max_tokens)},
              {"recompute", RecomputeGranularityName(s.recompute.granularity)},
              {"param_dtype", DTypeName(s.param_dtype)},
              {"grad_dtype", DTypeName(s.grad_dtype)},
              {"distributed_optimizer", s.optimizer.distributed},
              {"cross_entropy", CrossEntropyImplName(s.cross_entropy)},
              {"sharding", ShardingModeName(s.sharding.mode)},
              {"fp8_recipe", Fp8RecipeName(s.fp8.recipe)}};
  // Only when set, so the JSON of jobs without them is unchanged.
  if (s.recompute.titan.on()) {
    doc["selective_ac_option"] =
        s.recompute.titan.op ? std::string("op") : std::to_string(s.recompute.titan.every_n_layers);
  }
  if (s.activation_offload.on()) doc["activation_offload_layers"] = s.activation_offload.num_layers;
  return doc;
}

}  // namespace strata
