// What megatron-core's finalize_model_grads all-reduces on one pipeline rank once a step, after
// the rank's data-parallel gradient sync and before its optimizer (megatron-core 0.16,
// megatron/core/distributed/finalize_model_grads.py): over TP, the SUM of the gradients of the
// parameters every TP rank holds whole and marks sequence_parallel (layer norms, the router,
// MLA's duplicated down-projections and their norms, a row-parallel output bias) or names
// q_layernorm / k_layernorm (_allreduce_non_tensor_model_parallel_grads), and apart the AVG of
// those marked average_gradients_across_tp_domain (transformers' modules inside megatron-core:
// the Gated DeltaNet, the vision tower); over the embedding group, the first and the last pipeline
// rank (parallel_state.default_embedding_ranks), the gradient of the word embedding the output
// layer (tied) or an MTP block shares (_allreduce_word_embedding_grads).
#ifndef STRATA_SIM_FINALIZE_GRADS_H_
#define STRATA_SIM_FINALIZE_GRADS_H_

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
  double tp_sum = 0;            // over TP, SUM
  double tp_average = 0;        // over TP, AVG (tp_vision of it: the vision tower's)
  double tp_vision = 0;         // the vision tower's share of tp_average
  double shared_embedding = 0;  // over the embedding group: one TP rank's slice
};
FinalizeGradParams FinalizeGradParamsOf(const StepTables& tables, const StepLayout& layout,
                                        const StageComposition& rank);

/// Those all-reduces priced on the job's placement: once a step, on the critical path (nothing
/// runs beside them). The embedding group's all-reduce runs on two ranks, across nodes when
/// the pipeline group spans nodes.
Result<std::vector<PricedTraffic>> PriceFinalizeGrads(const FinalizeGradParams& params,
                                                      const StepLayout& layout,
                                                      const std::vector<GroupPlacement>& groups,
                                                      const CollectiveModel& comm, Detail detail,
                                                      PricingCache* cache);

}  // namespace strata

#endif  // STRATA_SIM_FINALIZE_GRADS_H_
