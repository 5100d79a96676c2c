// The per-model half of the step-time model: everything that depends on the model, the GPU and
// the data (sequence lengths) but not on the parallel layout, computed once. The planner builds
// these tables once per model and then evaluates millions of layouts against them
// (step_model.h), so nothing here is recomputed per layout and nothing in the hot path formats
// text. FLOP come from the model's one FLOP accounting (model/flops.h); the shapes recorded
// here only choose each GEMM's efficiency. Formulas: docs/formulas.md, "Step time".
#ifndef STRATA_SIM_STEP_TABLES_H_
#define STRATA_SIM_STEP_TABLES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/comm/layout_traffic.h"
#include "strata/core/units.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/job_spec.h"
#include "strata/model/adapter.h"
#include "strata/model/flops.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "strata/sim/framework_overhead.h"
#include "strata/sim/framework_profile.h"
#include "strata/sim/mfu_ceiling.h"
#include "strata/sim/muon_cost.h"
#include "strata/sim/stage_composition.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/straggler.h"

namespace strata {

enum class GemmKind { kDense, kExpert, kRouter, kLogits };

/// GEMMs of one kind that share a representative shape, summed over the model's layers.
struct GemmGroup {
  GemmKind kind = GemmKind::kDense;
  double flop_per_token = 0;  // forward, whole model, before any parallel split
  double n = 0;               // output width of the representative weight (before TP / ETP)
  double k = 0;               // its reduction dimension
  /// The parameters' module kind: frozen ones need no weight gradient, and selective recompute
  /// re-runs the named modules' GEMMs.
  ModuleKind module = ModuleKind::kAttention;
};

struct StepTables {
  std::string model_name;
  std::string gpu_name;
  FlopPerSecond peak;      // dense bf16 peak of one GPU
  FlopPerSecond fp8_peak;  // dense FP8 peak; zero where the GPU has none
  BytesPerSecond hbm;      // HBM bandwidth of one GPU
  KernelEfficiency efficiency;

  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t vocab = 0;
  int64_t num_experts = 0;
  int64_t top_k = 0;

  std::vector<GemmGroup> gemms;
  double attention_flop_per_token = 0;  // core attention forward, all layers, causal
  // The part of it from sliding-window layers, and the keys one of their queries attends
  // (min(window, attention_tokens)): flash attention's efficiency follows the attended span.
  double windowed_attention_flop_per_token = 0;
  double attention_window_tokens = 0;
  // Unfused attention (attention.kernel unfused): the score elements one token's query row fills
  // (heads x the sequence it sits in, E[S^2]/E[S]), summed over the attention layers; the head
  // dimension of the two batched GEMMs; the dropout that adds a pass over the scores.
  bool unfused_attention = false;
  double score_row_tokens =
      0;  // S of one score row: the packed length even when packed (no varlen)
  double score_elements_per_token = 0;
  double score_head_dim = 0;   // q.k width per head (QK^T's reduction)
  double score_value_dim = 0;  // v width per head (AV's output width); MLA's differs
  double attention_dropout = 0;
  double gdn_flop_per_token = 0;  // Gated DeltaNet state forward, all GDN layers
  // Mamba-1/2 and lightning-attention state forward, all layers (one assumed rate).
  double other_linear_flop_per_token = 0;
  // Gated DeltaNet's shape, for its PyTorch fallback: layers, value heads of one layer, and
  // the chunk the kernels split a sequence into (data/memory_overheads.yaml).
  int64_t gdn_layers = 0;
  double gdn_value_heads = 0;
  double gdn_chunk_tokens = 64;
  // Whether every TP rank runs the whole Gated DeltaNet layer (transformers' module inside
  // megatron-core: the resolved job's GdnPlacement): its GEMMs, state kernels and memory-bound
  // passes are then not split over TP. gdn_bytes_per_token: those passes, forward, all layers.
  bool gdn_replicated = false;
  double gdn_bytes_per_token = 0;
  // The vision tower: GEMM FLOP per patch, forward; patches per image token (merge^2); its
  // width (the GEMMs' n and k); image tokens per sample (sequence.image_tokens).
  double vision_flop_per_patch = 0;
  double vision_patches_per_image_token = 0;
  double vision_hidden = 0;
  double image_tokens_per_sample = 0;
  // Memory-bound bytes per token, forward, all layers. "Replicated" tensors are hidden-wide
  // (norms, residual adds, MoE permutation): TP ranks each hold all tokens unless sequence
  // parallelism splits them. "Split" tensors are TP-sharded (activations, rotary, gates).
  double replicated_bytes_per_token = 0;
  double split_bytes_per_token = 0;
  // Of split_bytes_per_token: what one KV head of every softmax layer moves (rotary and the
  // k norm), and the KV heads; above them, TP ranks each work on one head
  // (AttentionConfig::KvHeadsOverTp), max(kv, TP) heads over the TP group.
  double kv_head_bytes_per_token = 0;
  int64_t query_groups = 0;
  double loss_bytes_per_vocab_entry = 0;  // cross entropy, forward + backward, per token x V
  // Parts of the two above that selective recompute (--recompute-modules) re-runs by module:
  // the norms' (replicated), the router and token permutation's (replicated), and the SwiGLU
  // activations of the dense MLPs, the routed experts and the shared experts (split).
  double norm_bytes_per_token = 0;
  double moe_dispatch_bytes_per_token = 0;
  double dense_mlp_act_bytes_per_token = 0;
  double routed_act_bytes_per_token = 0;
  double shared_act_bytes_per_token = 0;
  // Parts the eager module code moves more of (FrameworkProfile::eager_*): rotary on q and k
  // (split), and the layout copies of eager attention code (split): the attention output made
  // contiguous before its projection, and GQA's K and V repeated to the query heads (code that
  // does not pass enable_gqa to SDPA).
  double rotary_bytes_per_token = 0;
  double attention_copy_bytes_per_token = 0;
  double gqa_repeat_bytes_per_token = 0;
  // Elements per token, all layers, that model-specific module code passes over outside the
  // fused kernels (FrameworkProfile::model_code): the experts' fc1 outputs (top_k x 2 f) where
  // the GLU's inputs are clamped; the experts' outputs (top_k x h) where each expert carries an
  // output bias; q and k (heads x head_dim each) where the rotary is YaRN's.
  double clamped_glu_elements_per_token = 0;
  double expert_bias_elements_per_token = 0;
  double yarn_rotary_elements_per_token = 0;
  // Adapters (model/adapter.h), all layers: forward FLOP per token of their thin GEMMs, their
  // rank (the GEMMs' narrow side), DoRA's weight-norm FLOP per forward; and QLoRA's
  // dequantisation of every base linear weight before its GEMM, bytes per pass over the layers
  // (bitsandbytes' MatMul4Bit dequantises in forward and again in backward).
  double adapter_flop_per_token = 0;  // all adapters, the routed experts' included
  /// The routed experts' adapters: top_k x 2 r (d_in + d_out) per matrix, thin grouped GEMMs
  /// over each local expert's tokens.
  double adapter_expert_flop_per_token = 0;
  double adapter_rank = 0;
  double adapter_flop_per_forward = 0;
  double dequant_bytes_per_pass = 0;
  /// Muon (optimizer.name muon; Keller Jordan's Muon, Moonlight arXiv 2502.16982, megatron-core's
  /// TensorParallelMuon): num_ns_steps = 5 Newton-Schulz iterations on every hidden matrix, each
  /// A = X X^T, B = b A + c A A, X = a X + B X: 4 m^2 n + 2 m^3 FLOP for an m x n matrix
  /// (m <= n), at the full (un-split) shape, once a step. Whole model, in megatron-core's shapes
  /// (fused linear_fc1, linear_qkv split into q, k, v) and in the separate modules' of the other
  /// frameworks (sim/muon_cost.h); and the matrices' parameters (the same in both: Muon keeps one
  /// momentum for them, AdamW two moments for the rest: embeddings, the output layer, norms,
  /// biases).
  double muon_ns_flop_megatron_core = 0, muon_ns_flop_separate = 0;
  double muon_matrix_params = 0;
  /// The Gated DeltaNet projections' share of the three above (adapter FLOP per token and per
  /// forward, dequantised bytes): whole on every TP rank where the layer is (gdn_replicated).
  double adapter_gdn_flop_per_token = 0;
  double adapter_gdn_flop_per_forward = 0;
  double dequant_gdn_bytes_per_pass = 0;
  // MLA's up-projections (mla_up_proj): their share of the attention modules' projection FLOP.
  double mla_up_proj_fraction = 0;

  LengthDistribution lengths;   // of the samples
  double mean_tokens = 0;       // E[S]
  double attention_tokens = 0;  // E[S^2] / E[S]: what a token's attention sees on average

  /// torchtitan's op-level SAC (model/op_sac.h): the recomputed share of the block matmuls'
  /// FLOP, and the forward FLOP per token it re-runs (those matmuls and the routed experts).
  double op_sac_matmul_recompute_fraction = 0;
  double op_sac_recompute_flop_per_token = 0;

  double megatron_flop_per_token = 0;  // the MFU convention (model/flop_conventions.h)
  /// The best published MFU on this GPU (data/mfu_ceiling.yaml), of the bf16 dense peak, with
  /// bf16 and with FP8 GEMMs; 0 where none is published.
  double mfu_ceiling_bf16 = 0;
  double mfu_ceiling_fp8 = 0;
  std::string mfu_ceiling_bf16_source;
  std::string mfu_ceiling_fp8_source;
  ForwardFlops forward;       // for HFU (recompute) and --explain
  ModelTrafficShape traffic;  // what comm/layout_traffic.h needs
  /// The decoder layers by kind (stage_composition.h) and, when there is more than one kind,
  /// each kind's own tables: the layer sums above over that kind's layers only (no output
  /// layer, no vision tower), from which a pipeline stage's sums are rebuilt (StageTables).
  LayerKinds layer_kinds;
  /// Where the parameters sit, for a stage's own data-parallel sync and optimizer step: one
  /// layer of each kind, the embedding stage's (embedding, vision tower), the output stage's
  /// (output layer, final norm; a tied head's copy apart, built on the output stage at PP > 1),
  /// and one MTP block's; non-expert and routed-expert parameters apart.
  struct StageParams {
    std::vector<double> kind_non_expert, kind_expert;
    double embedding = 0, output = 0, tied_copy = 0;
    double mtp_non_expert = 0, mtp_expert = 0;
    /// What every TP rank holds whole and megatron-core all-reduces over TP once a step
    /// (finalize_grads.h), one layer of each kind: its norms, its router, the attention's
    /// parameters marked sequence_parallel (MLA's duplicated down-projections and their norms,
    /// a row-parallel output bias), and its q/k norms apart (reduced by name, with or without
    /// sequence parallelism). The output stage's final norm and one MTP block's the same way.
    std::vector<double> kind_tp_norms, kind_tp_router, kind_tp_attention, kind_qk_norms;
    double final_norm = 0;
    double mtp_tp_marked = 0, mtp_qk_norms = 0;
    /// The word embedding the output layer (tied) or an MTP block shares with the first stage:
    /// vocabulary x hidden, 0 when nothing shares it.
    double shared_embedding = 0;
    bool tied_embedding = false;  // the output layer is the embedding (tie_word_embeddings)
    /// The vision tower's parameters, whole on the first stage (finalize_grads.h).
    double vision = 0;
    /// Muon's weights (muon_cost.h) of one layer of each kind and of one MTP block: a rank
    /// orthogonalises its own stage's.
    std::vector<std::vector<MuonMatrix>> kind_muon;
    std::vector<MuonMatrix> mtp_muon;
  } stage_params;
  std::vector<std::shared_ptr<const StepTables>> kind_sums;
  int64_t mtp_layers = 0;  // the MTP blocks the job builds (where a stage holds them)
  /// The MTP blocks' own tables, all of them together (set when the job builds them): each
  /// block's decoder layer, its projection eh_proj (2 h -> h) and its output layer, whose
  /// FLOP and cross entropy StageTables adds to the stage that holds the block.
  std::shared_ptr<const StepTables> mtp_sums;
  /// The software that runs the job (off: the kernels alone) and the model's counts it needs:
  /// set by PrepareStep (step_job.h), or by a caller with ResolveFramework + CountFrameworkModel.
  FrameworkProfile framework;
  FrameworkModelCounts framework_counts;
};

struct StepTableInputs {
  const ModelConfig* model = nullptr;
  SequenceLengths sequence;
  bool packed = false;  // every micro batch holds max_tokens (packing): no length spread
  /// With packing, the length attention sees when the samples' mean (and spread) are known
  /// (PackedAttentionTokens); 0 = the packed length.
  double packed_attention_tokens = 0;
  const GpuSpec* gpu = nullptr;
  const KernelEfficiencyFile* efficiency = nullptr;
  bool mtp = false;
  CrossEntropyImpl cross_entropy = CrossEntropyImpl::kFused;
  AttentionSpec attention;
  const std::vector<MfuCeiling>* mfu_ceilings = nullptr;  // none: no ceiling check
  double image_tokens = 0;                                // per sample (sequence.image_tokens)
  AdapterSpec adapter;                                    // LoRA / QLoRA / DoRA (none: off)
};

StepTables BuildStepTables(const StepTableInputs& in);

/// The tables of one pipeline stage of a model with several layer kinds: `whole`'s settings,
/// its layer sums rebuilt from the stage's own layers (each kind's sums x the stage's share of
/// that kind), the output layer and the loss only on the output stage, the MTP blocks' layer,
/// projection, output layer and loss on the stage that holds them, and the vision tower only on
/// the embedding stage. Every step-time term is linear in these sums, so the stage's
/// times are its own layers' times.
StepTables StageTables(const StepTables& whole, const StageComposition& stage);

}  // namespace strata

#endif  // STRATA_SIM_STEP_TABLES_H_
