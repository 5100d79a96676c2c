// torchtitan's per-op selective activation checkpointing (`[activation_checkpoint] mode =
// "selective"`, `selective_ac_option = "op"`), as the ordered list of matrix multiplies of one
// transformer block and which of them keep their output.
//
// The save list (torchtitan/models/llama3/infra/parallelize.py, `_op_sac_save_list`) holds
// aten.mm, the SDPA kernels (flash, efficient, cuDNN, math), _c10d_functional.reduce_scatter_tensor
// and aten.max. The policy (torchtitan/distributed/activation_checkpoint.py, `_apply_op_sac`)
// counts the block's aten.mm calls in forward order and saves the 1st, 3rd, 5th, ...: every
// second one is recomputed. An mm whose weight shape matches
// `per_op_sac_force_recompute_mm_shapes_by_fqns` (default ["moe.router.gate"]) is recomputed and
// not counted. Routed experts run aten._grouped_mm, which is not on the list: recomputed. Every
// other op (norms, rotary, SiLU, residual adds, TP all-gathers, EP all-to-alls) is recomputed.
// The block's input is kept by the checkpoint wrapper.
#ifndef STRATA_MODEL_OP_SAC_H_
#define STRATA_MODEL_OP_SAC_H_

#include <string>
#include <vector>

#include "strata/model/model_config.h"

namespace strata {

struct OpSacMatmul {
  std::string name;           // torchtitan's module: "attention.wq", "feed_forward.w1", ...
  double in_width = 0;        // k: the reduction dimension (before any TP split)
  double out_width = 0;       // n: output values per token (before any TP split)
  bool row_parallel = false;  // under TP its output is a partial sum, h wide on every token,
                              // reduce-scattered right after (the reduce-scatter is saved)
  bool counted = true;        // counts towards the every-other-mm rule (not the router)
  bool saved = false;         // its output is kept for backward
  double flop_per_token() const { return 2 * in_width * out_width; }
};

struct OpSacBlock {
  /// Empty when the block's mixer is not softmax attention (torchtitan's models: Llama 3/4,
  /// Qwen3, DeepSeek-V3's MLA is not modelled); `unsupported` says why.
  std::vector<OpSacMatmul> matmuls;  // forward order
  std::string unsupported;
};

/// The block's matrix multiplies in forward order with the save rule applied: attention wq,
/// wk, wv, wo (the output gate, where the config has one, widens wq as HF fuses it); a dense
/// MLP's w1, w3, w2 (w1, w2 for a plain MLP); an MoE's router (forced recompute), then its
/// shared experts' w1, w3, w2 and the shared-expert gate. Routed experts are not listed.
OpSacBlock OpSacPlan(const ModelConfig& model, const LayerSpec& layer);

/// Recomputed over all forward FLOP of the listed matmuls of every layer of the model (0 when
/// there are none): the share of the dense GEMM time op-level SAC re-runs in backward.
double OpSacRecomputedMatmulFraction(const ModelConfig& model);

}  // namespace strata

#endif  // STRATA_MODEL_OP_SAC_H_
