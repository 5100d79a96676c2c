#include "strata/job/job_json.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/job/pipeline_split.h"
#include "strata/job/training_modes.h"

namespace strata {

void AddLayoutJson(Json& j, const ParallelLayout& l, bool experts) {
  j["tp"] = l.tp;
  j["pp"] = l.pp;
  j["vpp"] = l.vpp;
  j["first_stage_layers"] = l.first_stage_layers;
  j["last_stage_layers"] = l.last_stage_layers;
  j["account_for_embedding"] = l.account_for_embedding;
  j["account_for_loss"] = l.account_for_loss;
  if (l.pp > 1) j["pp_schedule"] = std::string(PipelineScheduleName(l));
  if (l.stage_split != StageSplitRule::kMegatron) j["stage_split"] = "torchtitan";
  if (l.pipeline_layout) j["pipeline_layout"] = l.pipeline_layout->text;
  j["cp"] = l.cp;
  if (l.cp > 1) j["cp_comm_type"] = std::string(NameOf(kCpCommTypes, l.cp_comm_type));
  j["ep"] = l.ep;
  j["etp"] = l.etp;
  j["dp"] = l.dp;
  j["expert_dp"] = experts ? Json(l.expert_dp()) : Json(nullptr);
  j["sequence_parallel"] = l.sequence_parallel;
}

Json JobToJson(const ResolvedJob& job) {
  const JobSpec& s = job.spec;
  const ParallelLayout& l = s.layout;
  Json doc = {{"file", s.file},
              {"cluster", job.cluster.name},
              {"model", job.model.name},
              {"gpu", job.gpu().name},
              {"gpus", l.world()}};
  AddLayoutJson(doc, l, job.model.HasLayers(FfnKind::kMoe));
  doc.update(Json{{"micro_batch", s.micro_batch},
                  {"global_batch", s.global_batch},
                  {"max_tokens", static_cast<int64_t>(s.sequence.max_tokens)},
                  {"recompute", RecomputeGranularityName(s.recompute.granularity)},
                  {"param_dtype", DTypeName(s.param_dtype)},
                  {"grad_dtype", DTypeName(s.grad_dtype)},
                  {"distributed_optimizer", s.optimizer.distributed},
                  {"cross_entropy", CrossEntropyImplName(s.cross_entropy)},
                  {"sharding", ShardingModeName(s.sharding.mode)},
                  {"fp8_recipe", Fp8RecipeName(s.fp8.recipe)}});
  // Only when set, so the JSON of jobs without them is unchanged.
  if (s.recompute.titan.on()) {
    doc["selective_ac_option"] =
        s.recompute.titan.op ? std::string("op") : std::to_string(s.recompute.titan.every_n_layers);
  }
  if (s.activation_offload.on()) doc["activation_offload_layers"] = s.activation_offload.num_layers;
  return doc;
}

}  // namespace strata
