#include "strata/sim/finalize_grads.h"

#include <algorithm>
#include <string>

#include "strata/model/param_count.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {

TpReplicatedParams TpReplicatedParamsOf(const ModelConfig& c, const LayerSpec& layer) {
  TpReplicatedParams out;
  const LayerParams params = CountLayerParams(c, layer, 0);
  out.norms = static_cast<double>(params.modules[ModuleKind::kNorms]);
  out.router = static_cast<double>(params.modules[ModuleKind::kRouter]);
  const auto h = static_cast<double>(c.hidden_size);
  // The shared expert's sigmoid gate h -> 1 is marked as the router is (shared_experts.py).
  if (layer.ffn == FfnKind::kMoe && c.moe.shared_expert_gate) out.router += h;
  const AttentionConfig& a = c.attention;
  if (layer.mixer == MixerKind::kMla) {
    // linear_q_down_proj and linear_kv_down_proj are TELinear in "duplicated" mode, whole on
    // every TP rank; q_layernorm and kv_layernorm are TENorms (multi_latent_attention.py).
    const auto q = static_cast<double>(c.mla.q_lora_rank);
    const auto kv = static_cast<double>(c.mla.kv_lora_rank);
    out.attention = h * (q + kv + static_cast<double>(c.mla.qk_rope_head_dim)) + q + kv;
  } else if (layer.mixer == MixerKind::kFullAttention ||
             layer.mixer == MixerKind::kSlidingAttention) {
    // The output projection is row-parallel: its bias is whole on every TP rank.
    if (a.bias) out.attention = h;
    if (a.qk_norm) {
      out.qk_norms = a.qk_norm_full_width
                         ? static_cast<double>((a.num_heads + a.num_kv_heads) * a.head_dim)
                         : static_cast<double>(2 * a.head_dim);
    }
  }
  return out;
}

std::vector<int64_t> EmbeddingGroupRanks(const std::vector<StageComposition>& ranks, bool tied) {
  std::vector<int64_t> out;
  for (const StageComposition& r : ranks) {
    if (r.embedding || (tied && r.output) || r.mtp_layers > 0) out.push_back(r.rank);
  }
  return out;  // StageCompositions lists the ranks in order: sorted, each once
}

FinalizeGradParams FinalizeGradParamsOf(const StepTables& t, const StepLayout& s,
                                        const StageComposition& rank,
                                        const std::vector<int64_t>& embedding_group) {
  FinalizeGradParams out;
  const ParallelLayout& l = s.layout;
  const StepTables::StageParams& p = t.stage_params;
  if (p.kind_tp_norms.size() != rank.kind_layers.size()) return out;
  auto trained = [&](ModuleKind k) { return !s.frozen[static_cast<size_t>(k)]; };
  if (l.tp > 1) {
    if (s.megatron_core) {
      const bool sp = l.sequence_parallel;
      for (size_t k = 0; k < rank.kind_layers.size(); ++k) {
        const auto n = static_cast<double>(rank.kind_layers[k]);
        if (sp) {
          out.tp_sum += n * ((trained(ModuleKind::kNorms) ? p.kind_tp_norms[k] : 0.0) +
                             (trained(ModuleKind::kRouter) ? p.kind_tp_router[k] : 0.0) +
                             (trained(ModuleKind::kAttention) ? p.kind_tp_attention[k] : 0.0));
        }
        if (trained(ModuleKind::kAttention)) out.tp_sum += n * p.kind_qk_norms[k];
      }
      if (sp && rank.output && trained(ModuleKind::kNorms)) out.tp_sum += p.final_norm;
      if (rank.mtp_layers > 0 && trained(ModuleKind::kMtp)) {
        out.tp_sum +=
            static_cast<double>(rank.mtp_layers) * ((sp ? p.mtp_tp_marked : 0.0) + p.mtp_qk_norms);
      }
    }
    // The Gated DeltaNet layers whole on every TP rank: the rank's share of them.
    double gdn_all = 0, gdn_own = 0;
    for (size_t k = 0; k < t.layer_kinds.kinds.size(); ++k) {
      if (t.layer_kinds.kinds[k].mixer != MixerKind::kGatedDeltaNet) continue;
      gdn_all += static_cast<double>(t.layer_kinds.count[k]);
      gdn_own += static_cast<double>(rank.kind_layers[k]);
    }
    if (gdn_all > 0) {
      out.tp_average = static_cast<double>(t.traffic.tp_averaged_params) * gdn_own / gdn_all;
    }
    // The vision tower, whole on every TP rank of the first stage: megatron-core frameworks
    // build it from transformers' module inside megatron-core's HuggingFaceModule, whose
    // __setattr__ marks every parameter average_gradients_across_tp_domain
    // (megatron/core/models/huggingface/module.py, core_v0.16.1 = 55ac7082517c; ms-swift's
    // mcore-bridge: mm_gpts/utils.py HuggingFaceVit, mm_gpts/qwen3_5.py Qwen3_5Vit builds
    // transformers' Qwen3_5VisionModel), so finalize_model_grads averages all of it over TP,
    // with or without sequence parallelism: its norms and biases, and its matrices too. An
    // adapter leaves the tower's base frozen.
    if (s.megatron_core && rank.embedding && trained(ModuleKind::kVision) && t.adapter_rank == 0) {
      out.tp_vision = p.vision;
      out.tp_average += p.vision;
    }
  }
  // The ranks of the embedding group each hold a copy of the shared embedding (a V shape puts
  // the first and the last on rank 0: a group of one, nothing to reduce).
  const bool in_group =
      std::find(embedding_group.begin(), embedding_group.end(), rank.rank) != embedding_group.end();
  if (s.megatron_core && l.pp > 1 && embedding_group.size() > 1 && in_group &&
      p.shared_embedding > 0 && trained(ModuleKind::kEmbedding)) {
    out.shared_embedding = p.shared_embedding / static_cast<double>(l.tp);
    out.embedding_group_ranks = static_cast<int64_t>(embedding_group.size());
  }
  return out;
}

Result<std::vector<PricedTraffic>> PriceFinalizeGrads(const FinalizeGradParams& params,
                                                      const StepLayout& s,
                                                      const std::vector<GroupPlacement>& groups,
                                                      const CollectiveModel& comm, Detail detail,
                                                      PricingCache* cache) {
  std::vector<PricedTraffic> out;
  const auto grad = static_cast<double>(s.grad_bytes);
  auto add = [&](GroupKind group, const GroupShape& shape, const char* what,
                 double count) -> Status {
    if (count <= 0) return OkStatus();
    PricedTraffic& p = out.emplace_back();
    p.item.group = group;
    p.item.purpose = detail == Detail::kExplained ? std::string(what) : std::string();
    p.item.op = CollectiveOp::kAllReduce;
    p.item.size = Bytes::Count(count * grad);
    p.item.frequency = TrafficFrequency::kPerStep;
    STRATA_RETURN_IF_ERROR(PriceInto(p.cost, comm, p.item.op, p.item.size, shape, detail, cache));
    p.time_per_step = p.cost.time;
    p.size_per_step = p.item.size;
    return OkStatus();
  };
  if (params.tp_sum > 0 || params.tp_average > 0) {
    const GroupPlacement* tp = FindGroup(groups, GroupKind::kTp);
    if (tp == nullptr) return InvalidInput("no placement for the tp group");
    STRATA_RETURN_IF_ERROR(add(GroupKind::kTp, ShapeOf(*tp),
                               "gradients of the norms, router and other layers' parameters "
                               "replicated over TP, summed",
                               params.tp_sum));
    STRATA_RETURN_IF_ERROR(add(GroupKind::kTp, ShapeOf(*tp),
                               "gradients of the layers replicated over TP, averaged",
                               params.tp_average));
  }
  if (params.shared_embedding > 0) {
    const GroupPlacement* pp = FindGroup(groups, GroupKind::kPp);
    if (pp == nullptr) return InvalidInput("no placement for the pp group");
    // The group's pipeline ranks: one a node when the pipeline group spans nodes.
    const int64_t n = std::max<int64_t>(2, params.embedding_group_ranks);
    const GroupShape group = pp->intra_node() ? GroupShape{n, 1, n} : GroupShape{n, n, 1};
    STRATA_RETURN_IF_ERROR(add(GroupKind::kPp, group,
                               "word-embedding gradients shared by the stages that hold a copy "
                               "(embedding group)",
                               params.shared_embedding));
  }
  return out;
}

}  // namespace strata
