// What one pipeline rank holds: how many decoder layers of each kind (the model's distinct
// mixer + feed-forward pairs: DeepSeek-V3's first_k_dense dense layers and its MoE layers, a
// hybrid's Gated DeltaNet and full-attention layers, sliding and global attention), and
// whether it holds the embedding, the output layer and the MTP block. The step model prices a
// stage from these counts (step_model.h), not from the stage's share of an average layer.
#ifndef STRATA_SIM_STAGE_COMPOSITION_H_
#define STRATA_SIM_STAGE_COMPOSITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/job/parallel_layout.h"
#include "strata/model/model_config.h"

namespace strata {

/// The model's decoder layers grouped by kind: the distinct (mixer, feed-forward) pairs in the
/// order they first appear, and each layer's kind.
struct LayerKinds {
  std::vector<LayerSpec> kinds;
  std::vector<int64_t> count;    // layers of each kind, whole model
  std::vector<uint8_t> kind_of;  // per decoder layer: its index in `kinds`
  bool uniform() const { return kinds.size() <= 1; }
};
LayerKinds LayerKindsOf(const std::vector<LayerSpec>& layers);

struct StageComposition {
  int64_t rank = 0;
  int64_t layers = 0;                // decoder layers on the rank
  std::vector<int64_t> kind_layers;  // of those, per LayerKinds::kinds
  // The counts the traffic and the framework's host costs need.
  int64_t moe_layers = 0;
  int64_t dense_ffn_layers = 0;
  int64_t full_attention_layers = 0;     // softmax (full or sliding) and MLA: CP exchanges K, V
  int64_t softmax_attention_layers = 0;  // full and sliding-window softmax (not MLA)
  bool embedding = false;
  bool output = false;     // the output layer and the loss
  int64_t mtp_layers = 0;  // MTP blocks built on the rank
  bool operator==(const StageComposition& o) const {
    return kind_layers == o.kind_layers && embedding == o.embedding && output == o.output &&
           mtp_layers == o.mtp_layers;
  }
};

/// Every pipeline rank's composition (size PP; one entry with everything at PP 1), from the
/// layout's split (even, first/last counts, accounted, a layout string, torchtitan's) and its
/// virtual stages placed in a loop or a V. Assumes the split passed CheckPipelineSplit.
/// `mtp_layers`: the MTP blocks built, on the output rank unless a layout string places them.
std::vector<StageComposition> StageCompositions(const ParallelLayout& layout,
                                                const LayerKinds& kinds, int64_t mtp_layers);

/// "3 dense + 2 MoE layers, the embedding": the kinds named by what differs between them (the
/// feed-forward, the mixer, or both), then the embedding, the MTP block and the output layer.
std::string CompositionText(const StageComposition& stage, const LayerKinds& kinds);

}  // namespace strata

#endif  // STRATA_SIM_STAGE_COMPOSITION_H_
