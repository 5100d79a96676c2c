// Muon's Newton-Schulz iterations (optimizer.name muon) on one pipeline rank: each rank
// orthogonalises its own stage's matrices, so the slowest stage's ends the step.
//
// Every implementation runs num_ns_steps = 5 iterations of A = X X^T; B = b A + c A A;
// X = a X + B X on the m x n momentum (m <= n, transposed when taller): 2 m^2 n + 2 m^3 +
// 2 m^2 n = 4 m^2 n + 2 m^3 FLOP an iteration (Keller Jordan's Muon,
// zeropower_via_newtonschulz5; Moonlight, arXiv 2502.16982). megatron-core 0.16
// (NVIDIA/Megatron-LM core_v0.16.1 = 55ac7082517c, megatron/core/optimizer/muon.py):
// - every 2-D parameter but the embedding and the output layer is Muon's
//   (get_megatron_muon_optimizer: `not is_embedding_or_output_parameter and len(shape) == 2`),
//   the MTP block's included; strata leaves the router to AdamW as the memory ledger does;
// - muon_tp_mode defaults to "blockwise" (optimizer_config.py, arguments.py --muon-tp-mode):
//   TensorParallelMuon.orthogonalize passes partition_dim None, so each TP rank orthogonalises
//   its own shard, a column-parallel weight's d_out / TP rows or a row-parallel weight's
//   d_in / TP columns (routed experts over ETP), with no TP traffic; a weight every TP rank
//   holds whole (a replicated Gated DeltaNet, the shared-expert gate) whole;
// - muon_split_qkv defaults to true: the fused QKV weight is orthogonalised as its q, k and v
//   parts, as the separate q/k/v matrices below are;
// - the LayerWiseDistributedOptimizer gives each DP x CP rank whole parameters, sorted by size
//   and dealt in a ping-pong order (layer_wise_optimizer.py shard_params): about 1 / (DP x CP)
//   of the stage's dense matrices, 1 / expert-DP of its experts.
// Other frameworks' Muon (Moonlight's distributed Muon) gathers each matrix whole: no TP split.
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
};

/// The Muon weights of one decoder layer of `layer`'s kind (the decoder's linear layers as
/// PEFT's all-linear lists them, the router left out).
std::vector<MuonMatrix> MuonMatricesOf(const ModelConfig& model, const LayerSpec& layer);

/// 5 iterations of 4 m^2 n + 2 m^3 FLOP on an m x n matrix (m <= n).
double NewtonSchulzFlop(double rows, double cols);

/// One rank's Newton-Schulz seconds over `matrices` (each copy once), dense and routed
/// experts apart: at the bf16 dense peak x GemmEfficiency(m, m, n) of the shard each rank
/// orthogonalises (split over `tp` / `etp` when `blockwise`).
struct MuonSeconds {
  double non_expert = 0, expert = 0;
  double non_expert_flop = 0, expert_flop = 0;  // the shards' FLOP behind them
};
MuonSeconds NewtonSchulzSeconds(const std::vector<MuonMatrix>& matrices, double peak_flop_per_s,
                                const KernelEfficiency& efficiency, bool blockwise, int64_t tp,
                                int64_t etp, bool gdn_replicated);

}  // namespace strata

#endif  // STRATA_SIM_MUON_COST_H_
