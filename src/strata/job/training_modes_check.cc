#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "strata/job/pipeline_split.h"
#include "strata/job/training_modes_parse.h"
#include "strata/model/op_sac.h"

namespace strata {
namespace {

Error ModeError(const JobSpec& job, std::string field, std::string message, std::string hint) {
  Error e = InvalidInput(std::move(message));
  e.field = std::move(field);
  e.file = job.file;
  e.hint = std::move(hint);
  return e;
}

// torchtitan's op-level SAC on blocks it is modelled for, and megatron-core's --cpu-offloading
// under the rules its TransformerConfig.__post_init__ enforces (megatron/core/transformer/
// transformer_config.py): fewer layers than the model has, no pipeline parallelism, no
// recompute.
Status CheckActivationModes(const JobSpec& job, const ModelConfig& model) {
  if (job.recompute.titan.op) {
    for (const LayerSpec& layer : model.layers) {
      const OpSacBlock block = OpSacPlan(model, layer);
      if (!block.unsupported.empty()) {
        return ModeError(job, "recompute.selective_ac_option", block.unsupported,
                         "use selective_ac_option: N (every N-th layer in full AC) or "
                         "granularity: full");
      }
    }
  }
  const int64_t offload = job.activation_offload.num_layers;
  if (offload == 0) return OkStatus();
  const auto layers = static_cast<int64_t>(model.layers.size());
  if (offload >= layers) {
    return ModeError(job, "activation_offload.num_layers",
                     fmt::format("megatron-core offloads fewer layers than the model has ({}); "
                                 "got {}",
                                 layers, offload),
                     fmt::format("a value from 1 to {}", layers - 1));
  }
  if (job.layout.pp > 1) {
    return ModeError(job, "activation_offload.num_layers",
                     "megatron-core's --cpu-offloading does not support pipeline parallelism",
                     "set parallel.pp: 1 or remove activation_offload");
  }
  if (job.recompute.granularity != RecomputeGranularity::kNone) {
    return ModeError(job, "activation_offload.num_layers",
                     "megatron-core's --cpu-offloading does not work with activation recompute",
                     "set recompute.granularity: none or remove activation_offload");
  }
  return OkStatus();
}

}  // namespace

Status CheckTrainingModes(const JobSpec& job, const ModelConfig& model) {
  if (job.param_dtype == DType::kFp8) {
    return ModeError(job, "precision.params",
                     "FP8 training keeps bf16 (or fp32) parameters and adds FP8 copies; "
                     "'params: fp8' would undercount them",
                     "set precision.params: bf16 and fp8: {recipe: delayed | tensorwise | "
                     "blockwise | mxfp8 | torchao_tensorwise | torchao_rowwise}");
  }
  const ParallelLayout& l = job.layout;
  const ShardingSpec& sh = job.sharding;
  if (sh.replicate > 1) {
    const int64_t dense = l.dp * l.cp;
    if (dense % sh.replicate != 0) {
      return ModeError(job, "sharding.replicate",
                       fmt::format("replicate {} must divide DP x CP = {}", sh.replicate, dense),
                       "HSDP splits the data-parallel ranks into replicate x shard");
    }
    if (model.CountLayers(FfnKind::kMoe) > 0 && l.expert_dp() % sh.replicate != 0) {
      return ModeError(job, "sharding.replicate",
                       fmt::format("replicate {} must divide the expert-data-parallel group "
                                   "({})",
                                   sh.replicate, l.expert_dp()),
                       "lower EP or the replicate degree");
    }
  }
  STRATA_RETURN_IF_ERROR(CheckActivationModes(job, model));
  // PyTorch's ScheduleDualPipeV: "DualPipeV requires at least as many microbatches as stages".
  if (l.pp > 1 && l.schedule() == PipelineSchedule::kDualPipeV &&
      job.num_micro_batches() < 2 * l.pp) {
    return ModeError(job, "parallel.pp_schedule",
                     fmt::format("dualpipev needs at least as many micro batches per step as "
                                 "virtual stages (2 x PP = {}); the job has {}",
                                 2 * l.pp, job.num_micro_batches()),
                     "raise batch.global_batch or lower PP");
  }
  Status split = CheckPipelineSplit(l, static_cast<int64_t>(model.layers.size()),
                                    job.mtp ? model.mtp_layers : 0);
  if (!split.ok()) {
    Error e = split.error();
    e.file = job.file;
    return e;
  }
  return OkStatus();
}

}  // namespace strata
