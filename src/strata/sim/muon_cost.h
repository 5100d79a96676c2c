// Muon's Newton-Schulz iterations (optimizer.name muon) on one pipeline rank: each rank
// orthogonalises its own stage's matrices, so the slowest stage's ends the step.
//
// Every implementation runs num_ns_steps = 5 iterations of A = X X^T; B = b A + c A A;
// X = a X + B X on the m x n momentum (m <= n, transposed when taller): 2 m^2 n + 2 m^3 +
// 2 m^2 n = 4 m^2 n + 2 m^3 FLOP an iteration (Keller Jordan's Muon,
// zeropower_via_newtonschulz5; MoonshotAI/Moonlight@c2ad5b20 examples/toy_train.py:49-76).
//
// Which weights, and in which shape:
// - megatron-core (NVIDIA/Megatron-LM core_v0.16.1 = 55ac7082517c,
//   megatron/core/optimizer/muon.py:249-258; main d98e8a64 emerging_optimizers.py:140-147):
//   every 2-D parameter but the embedding and the output layer (`not
//   is_embedding_or_output_parameter and len(shape) == 2`). That takes in the MoE router's
//   weight (TopKRouter.weight, num_experts x h: moe/router.py:53), MLA's linear_q_down_proj,
//   linear_q_up_proj (or linear_q_proj), linear_kv_down_proj, linear_kv_up_proj and
//   linear_proj, the shared-expert gate and the MTP block's. Each linear is orthogonalised in
//   the shape it is stored: linear_fc1 is one fused gate+up matrix (2 f x h: nothing splits
//   it), and linear_qkv is the one fused weight that is split first (muon_split_qkv, default
//   true: muon.py:136-159 takes each query group's [q, k, v] rows apart, so q (heads x d),
//   k and v (groups x d) are orthogonalised as three matrices; main's _get_qkv_split_shapes,
//   emerging_optimizers.py:150-164, takes [q, gate, k, v] with attention_output_gate). MLA's
//   weights are not split ("TODO(deyuf): support MLA", muon.py:248): each is one matrix.
//   muon_tp_mode defaults to "blockwise" (optimizer_config.py:278): each TP rank
//   orthogonalises its own shard, a column-parallel weight's d_out / TP rows or a row-parallel
//   weight's d_in / TP columns (routed experts over ETP), with no TP traffic; a weight every
//   TP rank holds whole (the router, MLA's down projections built 'duplicated':
//   multi_latent_attention.py:408-409 and 453-454, a replicated Gated DeltaNet, the
//   shared-expert gate) whole. The LayerWiseDistributedOptimizer gives each DP x CP rank whole
//   parameters, sorted by size and dealt in a ping-pong order (layer_wise_optimizer.py
//   shard_params): about 1 / (DP x CP) of the stage's dense matrices, 1 / expert-DP of its
//   experts.
// - Moonlight's Muon on transformers' modules (toy_train.py:293-302): every parameter of 2 or
//   more dimensions but embed_tokens and lm_head, so each nn.Linear on its own (q_proj, k_proj,
//   v_proj, gate_proj, up_proj; DeepSeek-V3's q_a_proj, q_b_proj, kv_a_proj_with_mqa,
//   kv_b_proj, o_proj) and the MoE gate's weight (MoEGate.weight, n_routed_experts x h), each
//   gathered whole: no TP split. The routed experts are read as transformers 4.x's per-expert
//   nn.Linear (model/adapter.cc's rule).
// Norms, biases and the router's score-correction bias are 1-D: AdamW's in both.
#ifndef STRATA_SIM_MUON_COST_H_
#define STRATA_SIM_MUON_COST_H_

#include <cstdint>
#include <vector>

#include "strata/model/model_config.h"

namespace strata {

struct KernelEfficiency;

/// One weight Muon orthogonalises, at its whole (unsharded) shape, held `copies` times (each
/// routed expert its own).
struct MuonMatrix {
  double d_in = 0, d_out = 0, copies = 1;
  enum class Split { kNone, kOutput, kInput } split = Split::kNone;  // over TP (ETP: experts)
  bool expert = false;
  bool gated_deltanet = false;  // whole on every TP rank when the layer is replicated
  /// Whose optimizer sees the weight in this shape: megatron-core's fused linears (linear_fc1
  /// whole, linear_qkv split into its q, k, v pieces), the other frameworks' separate modules
  /// (q_proj, k_proj, v_proj, gate_proj, up_proj), or both (every other weight).
  enum class Layout { kEvery, kMegatronCore, kSeparateModules } layout = Layout::kEvery;
  bool UsedBy(bool megatron_core) const {
    return layout == Layout::kEvery || (layout == Layout::kMegatronCore) == megatron_core;
  }
};

/// The Muon weights of one decoder layer of `layer`'s kind, in both frameworks' shapes (each
/// matrix's `layout` says whose): its attention's (softmax or MLA) or Gated DeltaNet's
/// projections, its MLP's or its MoE's (router, routed and shared experts, shared-expert gate).
std::vector<MuonMatrix> MuonMatricesOf(const ModelConfig& model, const LayerSpec& layer);

/// 5 iterations of 4 m^2 n + 2 m^3 FLOP on an m x n matrix (m <= n).
double NewtonSchulzFlop(double rows, double cols);

/// One rank's Newton-Schulz seconds over the `matrices` the framework orthogonalises (each
/// copy once; megatron_core: its fused layout and its blockwise TP split over `tp` / `etp`),
/// dense and routed experts apart, at the bf16 dense peak x GemmEfficiency(m, m, n) of the
/// shard each rank orthogonalises.
struct MuonSeconds {
  double non_expert = 0, expert = 0;
  double non_expert_flop = 0, expert_flop = 0;  // the shards' FLOP behind them
};
MuonSeconds NewtonSchulzSeconds(const std::vector<MuonMatrix>& matrices, double peak_flop_per_s,
                                const KernelEfficiency& efficiency, bool megatron_core, int64_t tp,
                                int64_t etp, bool gdn_replicated);

}  // namespace strata

#endif  // STRATA_SIM_MUON_COST_H_
