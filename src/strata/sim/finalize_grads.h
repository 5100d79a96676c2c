// What megatron-core's finalize_model_grads all-reduces on one pipeline rank once a step, after
// the rank's data-parallel gradient sync and before its optimizer (megatron-core 0.16,
// megatron/core/distributed/finalize_model_grads.py): over TP, the SUM of the gradients of the
// parameters every TP rank holds whole and marks sequence_parallel (layer norms, the router,
// MLA's duplicated down-projections and their norms, a row-parallel output bias) or names
// q_layernorm / k_layernorm (_allreduce_non_tensor_model_parallel_grads), and apart the AVG of
// those marked average_gradients_across_tp_domain (transformers' modules inside megatron-core:
// the Gated DeltaNet, the vision tower); over the embedding group, the gradient of the word
// embedding the output layer (tied) or an MTP block shares (_allreduce_word_embedding_grads).
// The embedding group is pretrain_gpt.py's get_embedding_ranks (EmbeddingGroupRanks below).
#ifndef STRATA_SIM_FINALIZE_GRADS_H_
#define STRATA_SIM_FINALIZE_GRADS_H_

#include <cstdint>
#include <vector>

#include "strata/comm/traffic_pricing.h"
#include "strata/model/model_config.h"
#include "strata/sim/stage_composition.h"

namespace strata {

struct StepTables;
struct StepLayout;

/// One decoder layer's parameters that every TP rank holds whole, by how megatron-core finds
/// them (TransformerEngine layers; its router, TENorm and duplicated TELinear mark
/// sequence_parallel): `norms`, `router` and `attention` (MLA's q and kv down-projections and
/// their norms; the output projection's bias) are reduced under sequence parallelism only,
/// `qk_norms` by name whenever the model has them.
struct TpReplicatedParams {
  double norms = 0, router = 0, attention = 0, qk_norms = 0;
};
TpReplicatedParams TpReplicatedParamsOf(const ModelConfig& config, const LayerSpec& layer);

/// The parameters whose gradients one rank all-reduces in finalize_model_grads: trained ones
/// only (a frozen module has no gradient), per the rank's own layers and stage.
struct FinalizeGradParams {
  double tp_sum = 0;                  // over TP, SUM
  double tp_average = 0;              // over TP, AVG (tp_vision of it: the vision tower's)
  double tp_vision = 0;               // the vision tower's share of tp_average
  double shared_embedding = 0;        // over the embedding group: one TP rank's slice
  int64_t embedding_group_ranks = 0;  // the pipeline ranks of that group (0: none)
};

/// megatron-core's _EMBEDDING_GLOBAL_RANKS as pretrain_gpt.py forms it (get_embedding_ranks,
/// passed to initialize_model_parallel; NVIDIA/Megatron-LM core_v0.16.1 = 55ac7082517c):
/// the first pipeline rank, the last when the output layer is tied to the embedding, and
/// every rank that builds an MTP layer (multi_token_prediction.get_mtp_ranks: the layout
/// string's `m` stages, the last rank without a layout), sorted, each once. One rank: nothing
/// to reduce. Untied with the MTP block on a stage of its own ("...|m|L"), the group is the
/// first and the MTP rank: the output rank holds no copy of the embedding.
std::vector<int64_t> EmbeddingGroupRanks(const std::vector<StageComposition>& ranks, bool tied);

FinalizeGradParams FinalizeGradParamsOf(const StepTables& tables, const StepLayout& layout,
                                        const StageComposition& rank,
                                        const std::vector<int64_t>& embedding_group);

/// Those all-reduces priced on the job's placement: once a step, on the critical path (nothing
/// runs beside them). The embedding group's all-reduce runs on its ranks (two or three), one
/// a node when the pipeline group spans nodes.
Result<std::vector<PricedTraffic>> PriceFinalizeGrads(const FinalizeGradParams& params,
                                                      const StepLayout& layout,
                                                      const std::vector<GroupPlacement>& groups,
                                                      const CollectiveModel& comm, Detail detail,
                                                      PricingCache* cache);

}  // namespace strata

#endif  // STRATA_SIM_FINALIZE_GRADS_H_
