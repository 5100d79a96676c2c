#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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

Status CheckAccountedPipeline(const JobSpec& job, int64_t layers) {
  const ParallelLayout& l = job.layout;
  const char* field =
      l.account_for_embedding ? "parallel.account_for_embedding" : "parallel.account_for_loss";
  if (l.first_stage_layers > 0 || l.last_stage_layers > 0) {
    return ModeError(job, field,
                     "megatron-core takes either the first/last stage layer counts or the "
                     "account-for-embedding/loss split, not both",
                     "remove parallel.first_stage_layers / last_stage_layers or this switch");
  }
  if (l.pp < 2) {
    return ModeError(job, field, "accounting the embedding or loss as a layer needs PP > 1",
                     "remove it");
  }
  if (l.vpp > 1) {
    return ModeError(job, field,
                     "the account-for-embedding/loss split together with VPP > 1 is not modelled",
                     "set parallel.vpp: 1");
  }
  const int64_t extra = (l.account_for_embedding ? 1 : 0) + (l.account_for_loss ? 1 : 0);
  const int64_t total = layers + extra;
  if (total % l.pp != 0 || total / l.pp < 2) {
    return ModeError(job, field,
                     fmt::format("{} layers + {} accounted = {} must split evenly into PP {} "
                                 "stages of at least 2",
                                 layers, extra, total, l.pp),
                     "choose a PP that divides that sum, or first/last stage layer counts");
  }
  return OkStatus();
}

Status CheckUnevenPipeline(const JobSpec& job, int64_t layers) {
  const ParallelLayout& l = job.layout;
  if (!l.uneven_pipeline()) return OkStatus();
  if (l.account_for_embedding || l.account_for_loss) return CheckAccountedPipeline(job, layers);
  const char* field =
      l.first_stage_layers > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
  if (l.pp < 2) {
    return ModeError(job, field, "first/last stage layer counts need PP > 1", "remove them");
  }
  if (l.vpp > 1) {
    return ModeError(job, field, "uneven first/last stages together with VPP > 1 are not modelled",
                     "set parallel.vpp: 1");
  }
  const int64_t given = l.first_stage_layers + l.last_stage_layers;
  const int64_t others = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
  const int64_t rest = layers - given;
  if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0)) {
    return ModeError(
        job, field,
        fmt::format("{} layers minus first {} and last {} leave {} for the {} other stage(s), "
                    "which must share them evenly (at least one layer each)",
                    layers, l.first_stage_layers, l.last_stage_layers, rest, others),
        others == 1 || (l.pp == 2 && l.last_stage_layers > 0)
            ? fmt::format("with PP {}: first + last = {}", l.pp, layers)
            : "choose counts that leave a multiple of the other stages");
  }
  return OkStatus();
}

/// Decoder layers of pipeline stage `stage` (0-based), the one formula behind StageLayerCounts
/// and StageLayerExtremes: the accounted split ((layers + accounted) / PP a stage, the first and
/// last giving a slot to the embedding and the loss), the given first/last counts with the rest
/// shared evenly, or layers / PP.
int64_t StageLayers(const ParallelLayout& l, int64_t layers, int64_t stage) {
  const bool first = stage == 0;
  const bool last = stage == l.pp - 1;
  if (l.account_for_embedding || l.account_for_loss) {
    const int64_t share = (layers + l.account_for_embedding + l.account_for_loss) / l.pp;
    return share - ((first && l.account_for_embedding) ? 1 : 0) -
           ((last && l.account_for_loss) ? 1 : 0);
  }
  if (!l.uneven_pipeline()) return layers / l.pp;
  if (first && l.first_stage_layers > 0) return l.first_stage_layers;
  if (last && l.last_stage_layers > 0) return l.last_stage_layers;
  const int64_t others = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
  const int64_t rest = layers - l.first_stage_layers - l.last_stage_layers;
  return others > 0 ? rest / others : 0;
}

}  // namespace

std::vector<int64_t> StageLayerCounts(const ParallelLayout& l, int64_t layers) {
  std::vector<int64_t> counts(static_cast<size_t>(l.pp), 0);
  for (int64_t s = 0; s < l.pp; ++s) counts[static_cast<size_t>(s)] = StageLayers(l, layers, s);
  return counts;
}

StageExtremes StageLayerExtremes(const ParallelLayout& l, int64_t layers) {
  if (l.pp <= 1) return {layers, 0};
  // The stages between the first and the last all hold the same count.
  const int64_t first = StageLayers(l, layers, 0);
  const int64_t middle = l.pp > 2 ? StageLayers(l, layers, 1) : first;
  return {StageLayers(l, layers, l.pp - 1), std::max(first, middle)};
}

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
  return CheckUnevenPipeline(job, static_cast<int64_t>(model.layers.size()));
}

}  // namespace strata
