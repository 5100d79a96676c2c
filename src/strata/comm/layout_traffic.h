// The communication a parallel layout issues: which group talks, with which collective, how many
// bytes per call and how often (per layer, per micro batch, per step). Pure arithmetic on the
// model's shapes and the layout; comm/traffic_pricing.h puts each item on the bandwidth map.
// Formulas with the reference job substituted: docs/formulas.md, "Layout traffic".
#ifndef STRATA_COMM_LAYOUT_TRAFFIC_H_
#define STRATA_COMM_LAYOUT_TRAFFIC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/comm/collective.h"
#include "strata/core/detail.h"
#include "strata/core/units.h"
#include "strata/job/parallel_layout.h"
#include "strata/job/placement.h"
#include "strata/model/model_config.h"

namespace strata {

/// The few model sizes the traffic depends on.
struct ModelTrafficShape {
  int64_t hidden_size = 0;
  int64_t layers = 0;  // decoder layers (MTP not included)
  int64_t moe_layers = 0;
  int64_t dense_ffn_layers = 0;          // layers with a dense MLP (not MoE)
  int64_t full_attention_layers = 0;     // softmax or MLA layers (context parallel exchanges K, V)
  int64_t kv_width = 0;                  // per token, K and V together, elements
  int64_t kv_heads = 1;                  // the heads kv_width is made of (TP splits them)
  int64_t softmax_attention_layers = 0;  // full and sliding-window softmax layers (not MLA)
  int64_t query_groups = 0;              // their KV heads
  int64_t qkv_width = 0;                 // their fused QKV projection's output (+ gate), per token
  int64_t q_width = 0;  // attention's queries (and its output), per token, elements
  int64_t q_heads = 1;  // the heads q_width is made of (TP splits them)
  int64_t top_k = 0;
  int64_t non_expert_params = 0;  // replicated across DP (text non-expert + vision + MTP)
  int64_t expert_params = 0;      // routed experts, sharded by EP x ETP
  /// Trained parameters every TP rank holds whole and whose gradients megatron-core averages
  /// over TP once a step (average_gradients_across_tp_domain: transformers' Gated DeltaNet
  /// inside megatron-core, and the adapters on it). Set with the framework (sim/step_job.cc).
  int64_t tp_averaged_params = 0;
  /// Non-expert parameters every TP rank holds whole (transformers' Gated DeltaNet inside
  /// megatron-core), counted in non_expert_params too. Set with the framework.
  int64_t tp_whole_params = 0;
  /// The parameters the optimizer updates (what the data-parallel groups reduce and, under a
  /// distributed optimizer, gather back): frozen modules and an adapter's base left out. Whole
  /// model, as non_expert_params and expert_params; unset, all of those are trained. The job's
  /// setup (sim/step_job.cc) sets them to the memory ledger's count.
  std::optional<int64_t> trainable_non_expert_params;
  std::optional<int64_t> trainable_expert_params;

  /// One rank's share under `l`, before data-parallel sharding: non-expert parameters split
  /// over TP (those held whole on every TP rank not) and PP; experts over EP x ETP and PP.
  double NonExpertPerRank(const ParallelLayout& l) const;
  double ExpertPerRank(const ParallelLayout& l) const;
  /// The same for the trained parameters only (the TP-averaged ones are whole on each rank).
  double TrainableNonExpertPerRank(const ParallelLayout& l) const;
  double TrainableExpertPerRank(const ParallelLayout& l) const;
};

/// From a parsed config; `with_mtp` counts the MTP block as trained.
ModelTrafficShape TrafficShapeOf(const ModelConfig& config, bool with_mtp);

/// One pipeline rank's own decoder layers, by what their collectives depend on: a model with
/// several layer kinds (first_k_dense, hybrids) gives each stage a different mix.
struct StageLayerMix {
  int64_t layers = 0;
  int64_t moe_layers = 0;
  int64_t dense_ffn_layers = 0;
  int64_t full_attention_layers = 0;
  int64_t softmax_attention_layers = 0;
};

struct TrafficInputs {
  ParallelLayout layout;
  /// The stage whose layers the per-layer collectives count; unset: the model's layers / PP
  /// (every stage alike).
  std::optional<StageLayerMix> stage;
  /// The stage's own parameters over the model's mean per stage, non-expert and expert: what
  /// its data-parallel groups reduce and gather is its own (the embedding's stage, the output
  /// layer's, the MTP block's hold more). 1: every stage alike.
  double non_expert_param_weight = 1;
  double expert_param_weight = 1;
  int64_t micro_batch = 1;          // samples per micro batch
  double tokens_per_sample = 4096;  // the mean sample length (traffic is an average)
  int64_t micro_batches_per_step = 1;
  int64_t activation_bytes = 2;       // bf16 activations
  int64_t param_bytes = 2;            // bf16 weights (the all-gather of the distributed optimizer)
  int64_t grad_bytes = 4;             // gradient buffer dtype (fp32 by default in megatron-core)
  bool distributed_optimizer = true;  // reduce-scatter grads + all-gather params, not all-reduce
  bool full_recompute = false;        // the forward's collectives run again in the backward
  double recompute_layer_fraction = 1;  // under full recompute: the share of the layers re-run
  /// Selective recompute of the moe module (megatron-core --recompute-modules moe): MoELayer
  /// checkpoints route, dispatch, experts and combine together, so the backward re-runs the
  /// dispatch and combine all-to-alls (and the ETP gathers) of every MoE layer.
  bool moe_recompute = false;
  /// Megatron's sequence-parallel linear layers (megatron-core's own and Transformer Engine's)
  /// save only their rank's shard of a column-parallel layer's input and all-gather it again in
  /// backward for the weight gradient; torchtitan's DTensor layers save the gathered input.
  bool sp_regathers_input = true;
};

enum class TrafficFrequency { kPerLayerPerMicroBatch, kPerMicroBatch, kPerStep };
std::string ToString(TrafficFrequency f);  // "per layer per micro batch", ...

struct TrafficItem {
  GroupKind group = GroupKind::kTp;
  std::string purpose;  // "MoE token dispatch + combine"
  CollectiveOp op = CollectiveOp::kAllReduce;
  Bytes size;  // nccl-tests' size of one call
  TrafficFrequency frequency = TrafficFrequency::kPerStep;
  double calls_per_unit = 1;  // calls per layer / per micro batch / per step, as frequency says
  double calls_per_step = 1;  // all calls of one step on one rank (layers are per pipeline stage)
};

/// The items with a group larger than one rank (TP1 issues no TP traffic). kNumbersOnly leaves
/// their purposes empty.
std::vector<TrafficItem> LayoutTraffic(const ModelTrafficShape& model, const TrafficInputs& in,
                                       Detail detail = Detail::kExplained);

}  // namespace strata

#endif  // STRATA_COMM_LAYOUT_TRAFFIC_H_
