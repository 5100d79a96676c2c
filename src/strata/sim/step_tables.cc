#include "strata/sim/step_tables.h"

#include <algorithm>

#include "strata/model/flop_conventions.h"
#include "strata/model/op_sac.h"
#include "strata/sim/finalize_grads.h"
#include "strata/sim/muon_cost.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

constexpr double kActivationBytes = 2;  // bf16 activations

// Merges GEMMs of one kind and shape, so the hot path loops over a handful of groups.
void AddGemm(std::vector<GemmGroup>& groups, GemmKind kind, double flop, double n, double k,
             ModuleKind module) {
  if (flop <= 0) return;
  for (auto& g : groups) {
    if (g.kind == kind && g.n == n && g.k == k && g.module == module) {
      g.flop_per_token += flop;
      return;
    }
  }
  groups.push_back({kind, flop, n, k, module});
}

ModuleKind MixerModule(MixerKind kind) {
  switch (kind) {
    case MixerKind::kGatedDeltaNet:
    case MixerKind::kMamba2:
    case MixerKind::kMamba1:
    case MixerKind::kLightning:
      return ModuleKind::kLinearAttention;
    default:
      return ModuleKind::kAttention;
  }
}

// The width a mixer's projections mostly produce: the representative n of its GEMMs.
double MixerWidth(const ModelConfig& c, MixerKind kind) {
  switch (kind) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention:
      return static_cast<double>(c.attention.num_heads * c.attention.head_dim);
    case MixerKind::kMla:
      return static_cast<double>(c.mla.num_heads * c.mla.v_head_dim);
    case MixerKind::kGatedDeltaNet:
      return static_cast<double>(c.linear_attention.conv_dim());
    case MixerKind::kMamba2:
    case MixerKind::kMamba1:
      return static_cast<double>(c.mamba.in_proj_width());
    case MixerKind::kLightning:
      return static_cast<double>(3 * c.lightning.width());
    case MixerKind::kNone:
      break;
  }
  return static_cast<double>(c.hidden_size);
}

// Memory-bound bytes per token of one layer's forward (bf16 elements), by kind of tensor.
// docs/formulas.md, "Step time", "Memory-bound operations".
void AddLayerBytes(const ModelConfig& c, const LayerSpec& spec, StepTables& t) {
  const double h = static_cast<double>(c.hidden_size);
  const double b = kActivationBytes;
  // Two norms (read h, write h) and two residual adds (read 2h, write h).
  t.replicated_bytes_per_token += b * (2 * 2 * h + 2 * 3 * h);
  t.norm_bytes_per_token += b * 2 * 2 * h;
  switch (spec.mixer) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention: {
      const auto& a = c.attention;
      const double q = static_cast<double>(a.num_heads * a.head_dim);
      const double kv = static_cast<double>(a.num_kv_heads * a.head_dim);
      double elems = 2 * (q + kv);  // rotary on q and k: read + write
      t.rotary_bytes_per_token += b * 2 * (q + kv);
      if (a.rope_yarn) t.yarn_rotary_elements_per_token += q + kv;
      // Eager code: the output read and written once more (contiguous()), and, where the code
      // repeats K and V for GQA (FrameworkProfile::eager_gqa_repeat), each read (kv) and written
      // at the query heads' width (q).
      t.attention_copy_bytes_per_token += b * 2 * q;
      if (kv < q) t.gqa_repeat_bytes_per_token += b * 2 * (kv + q);
      if (a.qk_norm) elems += 2 * (q + kv);  // per-head norms on q and k
      if (a.output_gate) elems += 3 * q;     // sigmoid gate: read 2q, write q
      t.split_bytes_per_token += b * elems;
      t.kv_head_bytes_per_token +=
          b * static_cast<double>(a.head_dim) * (a.qk_norm ? 4.0 : 2.0);  // rotary, k norm
      t.query_groups = a.num_kv_heads;
      break;
    }
    case MixerKind::kMla: {
      const auto& m = c.mla;
      const double rope = static_cast<double>(m.num_heads * m.qk_rope_head_dim);
      const double latent = static_cast<double>(m.kv_lora_rank + m.q_lora_rank);
      t.split_bytes_per_token += b * (2 * 2 * rope + 2 * latent);
      break;
    }
    case MixerKind::kGatedDeltaNet: {
      const auto& g = c.linear_attention;
      // Causal conv over q, k, v (read + write) and the gated norm of the output (read o and
      // the gate z, write the result, plus the decay and beta gates).
      t.gdn_bytes_per_token +=
          b * (2 * static_cast<double>(g.conv_dim()) + 4 * static_cast<double>(g.value_dim()));
      break;
    }
    case MixerKind::kLightning:
      // The gated norm of the output (read the output and the gate, write the result).
      t.split_bytes_per_token += b * 3 * static_cast<double>(c.lightning.width());
      break;
    case MixerKind::kMamba2:
    case MixerKind::kMamba1: {
      // Causal conv over x, B, C (read + write) and the gated norm of the scan output (read the
      // output and the gate z, write the result), as for Gated DeltaNet.
      const auto& mb = c.mamba;
      t.split_bytes_per_token +=
          b * (2 * static_cast<double>(mb.conv_dim()) + 3 * static_cast<double>(mb.inner()));
      break;
    }
    case MixerKind::kNone:
      break;  // an MLP-only block of a hybrid
  }
  if (spec.ffn == FfnKind::kNone) return;  // a mixer-only block of a hybrid
  if (spec.ffn == FfnKind::kDense) {
    // SwiGLU: read gate and up (2f), write f.
    t.split_bytes_per_token += b * 3 * static_cast<double>(c.dense_mlp.intermediate_size);
    t.dense_mlp_act_bytes_per_token += b * 3 * static_cast<double>(c.dense_mlp.intermediate_size);
    return;
  }
  const auto& m = c.moe;
  t.split_bytes_per_token +=
      b * 3 *
      static_cast<double>(m.top_k * m.expert_intermediate_size +
                          m.num_shared_experts * m.shared_expert_intermediate_size);
  t.routed_act_bytes_per_token += b * 3 * static_cast<double>(m.top_k * m.expert_intermediate_size);
  if (m.activation_clamp)
    t.clamped_glu_elements_per_token +=
        2 * static_cast<double>(m.top_k * m.expert_intermediate_size);
  if (m.expert_bias) t.expert_bias_elements_per_token += static_cast<double>(m.top_k) * h;
  t.shared_act_bytes_per_token +=
      b * 3 * static_cast<double>(m.num_shared_experts * m.shared_expert_intermediate_size);
  // Router: fp32 logits over E experts written, softmaxed and top-k'd (3 passes of 4 B); the
  // token permutation and its inverse each read h and write top_k x h (or the reverse).
  const double dispatch =
      3 * 4 * static_cast<double>(m.num_experts) + 2 * b * (1 + static_cast<double>(m.top_k)) * h;
  t.replicated_bytes_per_token += dispatch;
  t.moe_dispatch_bytes_per_token += dispatch;
}

// Adapter GEMMs and QLoRA's dequantisation; docs/formulas.md, "Adapters (LoRA, QLoRA, DoRA)".
void AddAdapterCosts(const ModelConfig& c, const AdapterSpec& adapter, StepTables& t) {
  t.adapter_rank = static_cast<double>(adapter.rank);
  AdapterSpec every_linear = adapter;
  every_linear.targets = {"all-linear"};
  // bitsandbytes' dequantize_4bit reads the packed 4-bit weight and its block constants and
  // writes a bf16 copy, which the GEMM then reads as it would an unquantised weight.
  const double dequant_bytes_per_weight = Nf4BitsPerWeight() / 8.0 + 2.0;
  for (const LayerSpec& layer : c.layers) {
    const AdapterLayerCost cost = AdapterCostOfLayer(c, adapter, layer);
    t.adapter_flop_per_token += cost.flop_per_token;
    t.adapter_expert_flop_per_token += cost.routed_flop_per_token;
    t.adapter_flop_per_forward += cost.flop_per_forward;
    t.adapter_gdn_flop_per_token += cost.gdn_flop_per_token;
    t.adapter_gdn_flop_per_forward += cost.gdn_flop_per_forward;
    if (!adapter.quantized_base()) continue;
    // Every copy (each routed expert's weight) is dequantised once a pass.
    for (const AdaptedMatrix& m : AdaptedMatrices(c, every_linear, layer)) {
      const double bytes = dequant_bytes_per_weight * static_cast<double>(m.copies) *
                           static_cast<double>(m.d_in) * static_cast<double>(m.d_out);
      t.dequant_bytes_per_pass += bytes;
      if (m.site == AdapterSite::kGatedDeltaNet) t.dequant_gdn_bytes_per_pass += bytes;
    }
  }
}

// Muon's Newton-Schulz iterations on the hidden matrices (StepTables::muon_ns_flop_*), whole
// model, each matrix at its full shape, in each framework's layout.
void AddMuonCosts(const ModelConfig& c, StepTables& t) {
  for (const LayerSpec& layer : c.layers) {
    for (const MuonMatrix& w : MuonMatricesOf(c, layer)) {
      const double flop = w.copies * NewtonSchulzFlop(w.d_in, w.d_out);
      if (w.UsedBy(true)) t.muon_ns_flop_megatron_core += flop;
      if (w.UsedBy(false)) t.muon_ns_flop_separate += flop;
      // Both layouts hold the same parameters: count megatron-core's.
      if (w.UsedBy(true)) t.muon_matrix_params += w.copies * w.d_in * w.d_out;
    }
  }
}

// The tables of a part of the model (one kind of layer, the MTP block) on the job's inputs: no
// MTP of its own, no images, no MFU ceiling check (the whole model's tables hold those).
StepTables BuildPartTables(const StepTableInputs& in, const ModelConfig& part) {
  StepTableInputs part_in = in;
  part_in.model = &part;
  part_in.mtp = false;
  part_in.mfu_ceilings = nullptr;
  part_in.image_tokens = 0;
  return BuildStepTables(part_in);
}

}  // namespace

StepTables BuildStepTables(const StepTableInputs& in) {
  const ModelConfig& c = *in.model;
  StepTables t;
  t.model_name = c.name;
  t.gpu_name = in.gpu->name;
  t.peak = in.gpu->bf16_dense;
  t.fp8_peak = in.gpu->fp8_dense;
  t.hbm = in.gpu->hbm_bandwidth;
  // A variant (`base: H100 SXM`) keeps its catalog part's calibration, at its own power limit.
  const GpuSpec& gpu = *in.gpu;
  t.efficiency = in.efficiency->For(gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name);
  t.efficiency.sustained_clock =
      PowerLimitedClock(t.efficiency.sustained_clock, gpu.tdp_watts, gpu.catalog_tdp_watts,
                        in.efficiency->power_clock_exponent);
  t.layers = static_cast<int64_t>(c.layers.size());
  t.hidden = c.hidden_size;
  t.vocab = c.vocab_size;
  t.num_experts = c.moe.num_experts;
  t.top_k = c.moe.top_k;

  t.lengths = in.packed ? LengthDistribution::Fixed(in.sequence.max_tokens)
                        : LengthDistribution::FromSequence(in.sequence);
  t.mean_tokens = t.lengths.moment[1];
  t.attention_tokens = t.lengths.moment[2] / t.lengths.moment[1];
  // The unfused kernel has no variable-length form: packed samples fill the whole packed row.
  t.score_row_tokens = t.attention_tokens;
  if (in.packed && in.packed_attention_tokens > 0) t.attention_tokens = in.packed_attention_tokens;

  t.forward = CountForwardFlops(c, t.attention_tokens, AttentionMask::kCausal);
  t.megatron_flop_per_token = MegatronTrainingFlopsPerToken(c, t.attention_tokens, in.mtp).count();
  if (in.mfu_ceilings != nullptr) {
    const std::string& part = gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name;
    if (const MfuCeiling* m = FindMfuCeiling(*in.mfu_ceilings, part, "bf16")) {
      t.mfu_ceiling_bf16 = m->mfu;
      t.mfu_ceiling_bf16_source = m->source;
    }
    if (const MfuCeiling* m = FindMfuCeiling(*in.mfu_ceilings, part, "fp8")) {
      t.mfu_ceiling_fp8 = m->mfu;
      t.mfu_ceiling_fp8_source = m->source;
    }
  }
  if (in.adapter.on()) AddAdapterCosts(c, in.adapter, t);
  AddMuonCosts(c, t);
  const double h = static_cast<double>(c.hidden_size);
  double attention_projection_flop = 0, mla_up_flop = 0;
  for (const LayerFlops& layer : t.forward.layers) {
    AddGemm(t.gemms, GemmKind::kDense, layer.projections.count(), MixerWidth(c, layer.spec.mixer),
            h, MixerModule(layer.spec.mixer));
    attention_projection_flop +=
        MixerModule(layer.spec.mixer) == ModuleKind::kAttention ? layer.projections.count() : 0.0;
    if (layer.spec.mixer == MixerKind::kMla) {
      // The up-projections from the latents: q (when q is compressed) to heads x (nope + rope),
      // kv to heads x (nope + v); 2 FLOP per multiply-add.
      const auto& a = c.mla;
      const auto heads = static_cast<double>(a.num_heads);
      mla_up_flop += 2 * (static_cast<double>(a.q_lora_rank) * heads *
                              static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim) +
                          static_cast<double>(a.kv_lora_rank) * heads *
                              static_cast<double>(a.qk_nope_head_dim + a.v_head_dim));
    }
    t.attention_flop_per_token += layer.core_attention.count();
    if (layer.spec.mixer == MixerKind::kSlidingAttention && c.attention.sliding_window > 0) {
      t.windowed_attention_flop_per_token += layer.core_attention.count();
      t.attention_window_tokens =
          std::min(static_cast<double>(c.attention.sliding_window), t.attention_tokens);
    }
    if (layer.spec.mixer == MixerKind::kFullAttention ||
        layer.spec.mixer == MixerKind::kSlidingAttention) {
      // The unfused kernel fills the whole S x S matrix and masks it afterwards (a sliding
      // window too): a token's query row holds S scores per head.
      t.score_elements_per_token += static_cast<double>(c.attention.num_heads) * t.score_row_tokens;
      t.score_head_dim = static_cast<double>(c.attention.head_dim);
      t.score_value_dim = t.score_head_dim;
    } else if (layer.spec.mixer == MixerKind::kMla) {
      t.score_elements_per_token += static_cast<double>(c.mla.num_heads) * t.score_row_tokens;
      t.score_head_dim = static_cast<double>(c.mla.qk_nope_head_dim + c.mla.qk_rope_head_dim);
      t.score_value_dim = static_cast<double>(c.mla.v_head_dim);
    }
    if (layer.spec.mixer == MixerKind::kGatedDeltaNet) {
      t.gdn_flop_per_token += layer.linear_state.count();
      ++t.gdn_layers;
      t.gdn_value_heads = static_cast<double>(c.linear_attention.num_value_heads);
    } else {
      t.other_linear_flop_per_token += layer.linear_state.count();
    }
    if (layer.spec.ffn == FfnKind::kNone) {
      // a mixer-only block of a hybrid: no feed-forward GEMMs
    } else if (layer.spec.ffn == FfnKind::kDense) {
      AddGemm(t.gemms, GemmKind::kDense, layer.ffn.count(),
              static_cast<double>(c.dense_mlp.intermediate_size), h, ModuleKind::kDenseMlp);
    } else {
      // flops.cc counts routed and shared experts together: split them by their widths.
      const auto& m = c.moe;
      const double routed = static_cast<double>(m.top_k * m.expert_intermediate_size);
      const double shared =
          static_cast<double>(m.num_shared_experts * m.shared_expert_intermediate_size);
      const double share = routed / (routed + shared);
      AddGemm(t.gemms, GemmKind::kExpert, layer.ffn.count() * share,
              static_cast<double>(m.expert_intermediate_size), h, ModuleKind::kRoutedExperts);
      AddGemm(t.gemms, GemmKind::kDense, layer.ffn.count() * (1 - share),
              static_cast<double>(m.shared_expert_intermediate_size), h,
              ModuleKind::kSharedExperts);
      AddGemm(t.gemms, GemmKind::kRouter, layer.router.count(), static_cast<double>(m.num_experts),
              h, ModuleKind::kRouter);
    }
    AddLayerBytes(c, layer.spec, t);
  }
  AddGemm(t.gemms, GemmKind::kLogits, t.forward.logits.count(), static_cast<double>(c.vocab_size),
          h, ModuleKind::kHead);
  if (c.vision.present) {
    t.vision_flop_per_patch = t.forward.vision_per_patch.count();
    t.vision_patches_per_image_token =
        static_cast<double>(c.vision.spatial_merge_size * c.vision.spatial_merge_size);
    t.vision_hidden = static_cast<double>(c.vision.hidden_size);
    t.image_tokens_per_sample = in.image_tokens;
  }
  if (attention_projection_flop > 0)
    t.mla_up_proj_fraction = mla_up_flop / attention_projection_flop;
  // Cross entropy over the vocabulary: the fused kernel reads the bf16 logits and writes their
  // gradient in place (3 passes of 2 B); megatron-core's native one also writes and reads an
  // fp32 softmax (2 x 4 B more).
  t.loss_bytes_per_vocab_entry = in.cross_entropy == CrossEntropyImpl::kFused ? 6 : 14;
  t.unfused_attention = in.attention.kernel == AttentionKernel::kUnfused;
  t.attention_dropout = in.attention.dropout;
  t.traffic = TrafficShapeOf(c, in.mtp);
  // torchtitan's op-level SAC (model/op_sac.h): the share of the listed matmuls' FLOP it
  // re-runs, and for HFU the forward FLOP it re-runs (those matmuls and every routed expert).
  t.op_sac_matmul_recompute_fraction = OpSacRecomputedMatmulFraction(c);
  double expert_flop = 0;
  for (const GemmGroup& g : t.gemms) {
    if (g.kind == GemmKind::kExpert) expert_flop += g.flop_per_token;
  }
  double recomputed_matmuls = 0;
  for (const LayerSpec& layer : c.layers) {
    for (const OpSacMatmul& m : OpSacPlan(c, layer).matmuls) {
      if (!m.saved) recomputed_matmuls += m.flop_per_token();
    }
  }
  t.op_sac_recompute_flop_per_token = recomputed_matmuls + expert_flop;
  t.mtp_layers = in.mtp ? c.mtp_layers : 0;
  t.layer_kinds = LayerKindsOf(c.layers);
  // The MTP blocks live on one stage (megatron-core builds them after the decoder, on the stage
  // with the output layer): a model that builds them is priced stage by stage even when its
  // decoder layers are all of one kind.
  if (!t.layer_kinds.uniform() || t.mtp_layers > 0) {
    // Each kind's layers alone, without the output layer and the vision tower (the stage that
    // holds them adds them back): StageTables weighs these by the stage's counts.
    for (size_t k = 0; k < t.layer_kinds.kinds.size(); ++k) {
      ModelConfig only = c;
      only.layers.assign(static_cast<size_t>(t.layer_kinds.count[k]), t.layer_kinds.kinds[k]);
      only.vision.present = false;
      StepTables kind = BuildPartTables(in, only);
      std::erase_if(kind.gemms, [](const GemmGroup& g) { return g.kind == GemmKind::kLogits; });
      t.kind_sums.push_back(std::make_shared<const StepTables>(std::move(kind)));
    }
  }
  // Every model, one kind or several: a stage's optimizer updates its own parameters.
  {
    const ParamBreakdown params = CountParams(c);
    StepTables::StageParams& sp = t.stage_params;
    for (const LayerSpec& kind : t.layer_kinds.kinds) {
      const LayerParams layer = CountLayerParams(c, kind, 0);
      sp.kind_non_expert.push_back(static_cast<double>(layer.non_expert()));
      sp.kind_expert.push_back(static_cast<double>(layer.expert()));
      const TpReplicatedParams tp = TpReplicatedParamsOf(c, kind);
      sp.kind_tp_norms.push_back(tp.norms);
      sp.kind_tp_router.push_back(tp.router);
      sp.kind_tp_attention.push_back(tp.attention);
      sp.kind_qk_norms.push_back(tp.qk_norms);
      sp.kind_muon.push_back(MuonMatricesOf(c, kind));
    }
    sp.final_norm = static_cast<double>(params.final_norm);
    sp.shared_embedding = c.tie_word_embeddings || t.mtp_layers > 0
                              ? static_cast<double>(c.vocab_size * c.hidden_size)
                              : 0.0;
    sp.tied_embedding = c.tie_word_embeddings;
    sp.vision = static_cast<double>(params.vision.total);
    sp.embedding = static_cast<double>(params.text[ModuleKind::kEmbedding] + params.vision.total);
    sp.output = static_cast<double>(params.text[ModuleKind::kHead] + params.final_norm);
    sp.tied_copy = c.tie_word_embeddings ? static_cast<double>(c.vocab_size * c.hidden_size) : 0;
    if (t.mtp_layers > 0) {
      const auto n = static_cast<double>(c.mtp_layers);
      sp.mtp_non_expert = static_cast<double>(params.mtp.total - params.mtp.expert) / n;
      sp.mtp_expert = static_cast<double>(params.mtp.expert) / n;
      // megatron-core's MultiTokenPredictionLayer: enorm and hnorm before eh_proj, its
      // transformer layer (the model's attention, the last layer's feed-forward), a final norm.
      const LayerSpec mtp{c.mla.kv_lora_rank > 0 ? MixerKind::kMla : MixerKind::kFullAttention,
                          c.layers.empty() ? FfnKind::kDense : c.layers.back().ffn};
      const TpReplicatedParams tp = TpReplicatedParamsOf(c, mtp);
      sp.mtp_tp_marked =
          tp.norms + tp.router + tp.attention + 3.0 * static_cast<double>(c.hidden_size);
      sp.mtp_qk_norms = tp.qk_norms;
      // Muon's weights of one MTP block: its decoder layer's and eh_proj (2 h -> h,
      // column-parallel: multi_token_prediction.py builds it with gather_output=False).
      sp.mtp_muon = MuonMatricesOf(c, mtp);
      MuonMatrix& eh = sp.mtp_muon.emplace_back();
      eh.d_in = 2 * static_cast<double>(c.hidden_size);
      eh.d_out = static_cast<double>(c.hidden_size);
      eh.split = MuonMatrix::Split::kOutput;
    }
  }
  if (t.mtp_layers > 0) {
    // megatron-core's MultiTokenPredictionLayer (DeepSeek-V3's MTP module): the embedding and
    // the decoder's hidden state, each normed, concatenated and projected 2 h -> h (eh_proj),
    // one transformer layer (the model's attention, the last layer's feed-forward: flops.cc),
    // then the shared output layer and its own cross entropy.
    ModelConfig only = c;
    const LayerSpec mtp{c.mla.kv_lora_rank > 0 ? MixerKind::kMla : MixerKind::kFullAttention,
                        c.layers.empty() ? FfnKind::kDense : c.layers.back().ffn};
    only.layers.assign(static_cast<size_t>(t.mtp_layers), mtp);
    only.vision.present = false;
    only.mtp_layers = 0;
    StepTables blocks = BuildPartTables(in, only);
    blocks.kind_sums.clear();
    const double n = static_cast<double>(t.mtp_layers);
    for (GemmGroup& g : blocks.gemms) {
      if (g.kind == GemmKind::kLogits) g.flop_per_token *= n;  // one output layer per block
    }
    AddGemm(blocks.gemms, GemmKind::kDense, n * 2 * (2 * h * h), h, 2 * h, ModuleKind::kMtp);
    t.mtp_sums = std::make_shared<const StepTables>(std::move(blocks));
  }
  return t;
}

StepTables StageTables(const StepTables& whole, const StageComposition& stage) {
  StepTables t = whole;
  t.gemms.clear();
  for (double* f : {&t.attention_flop_per_token,       &t.windowed_attention_flop_per_token,
                    &t.score_elements_per_token,       &t.gdn_flop_per_token,
                    &t.other_linear_flop_per_token,    &t.gdn_bytes_per_token,
                    &t.replicated_bytes_per_token,     &t.split_bytes_per_token,
                    &t.kv_head_bytes_per_token,        &t.norm_bytes_per_token,
                    &t.moe_dispatch_bytes_per_token,   &t.dense_mlp_act_bytes_per_token,
                    &t.routed_act_bytes_per_token,     &t.shared_act_bytes_per_token,
                    &t.rotary_bytes_per_token,         &t.attention_copy_bytes_per_token,
                    &t.clamped_glu_elements_per_token, &t.expert_bias_elements_per_token,
                    &t.yarn_rotary_elements_per_token, &t.adapter_flop_per_token,
                    &t.adapter_expert_flop_per_token,  &t.adapter_flop_per_forward,
                    &t.dequant_bytes_per_pass,         &t.adapter_gdn_flop_per_token,
                    &t.adapter_gdn_flop_per_forward,   &t.dequant_gdn_bytes_per_pass}) {
    *f = 0;
  }
  t.gdn_layers = 0;
  t.layers = stage.layers;
  // `share` of `kind`'s sums: every layer of a kind (every MTP block) is the same layer.
  auto add = [&t](const StepTables& kind, double share) {
    for (const GemmGroup& g : kind.gemms) {
      AddGemm(t.gemms, g.kind, g.flop_per_token * share, g.n, g.k, g.module);
    }
    t.attention_flop_per_token += kind.attention_flop_per_token * share;
    t.windowed_attention_flop_per_token += kind.windowed_attention_flop_per_token * share;
    t.score_elements_per_token += kind.score_elements_per_token * share;
    t.gdn_flop_per_token += kind.gdn_flop_per_token * share;
    t.other_linear_flop_per_token += kind.other_linear_flop_per_token * share;
    t.gdn_bytes_per_token += kind.gdn_bytes_per_token * share;
    t.replicated_bytes_per_token += kind.replicated_bytes_per_token * share;
    t.split_bytes_per_token += kind.split_bytes_per_token * share;
    t.kv_head_bytes_per_token += kind.kv_head_bytes_per_token * share;
    t.norm_bytes_per_token += kind.norm_bytes_per_token * share;
    t.moe_dispatch_bytes_per_token += kind.moe_dispatch_bytes_per_token * share;
    t.dense_mlp_act_bytes_per_token += kind.dense_mlp_act_bytes_per_token * share;
    t.routed_act_bytes_per_token += kind.routed_act_bytes_per_token * share;
    t.shared_act_bytes_per_token += kind.shared_act_bytes_per_token * share;
    t.rotary_bytes_per_token += kind.rotary_bytes_per_token * share;
    t.attention_copy_bytes_per_token += kind.attention_copy_bytes_per_token * share;
    t.clamped_glu_elements_per_token += kind.clamped_glu_elements_per_token * share;
    t.expert_bias_elements_per_token += kind.expert_bias_elements_per_token * share;
    t.yarn_rotary_elements_per_token += kind.yarn_rotary_elements_per_token * share;
    t.adapter_flop_per_token += kind.adapter_flop_per_token * share;
    t.adapter_expert_flop_per_token += kind.adapter_expert_flop_per_token * share;
    t.adapter_flop_per_forward += kind.adapter_flop_per_forward * share;
    t.dequant_bytes_per_pass += kind.dequant_bytes_per_pass * share;
    t.adapter_gdn_flop_per_token += kind.adapter_gdn_flop_per_token * share;
    t.adapter_gdn_flop_per_forward += kind.adapter_gdn_flop_per_forward * share;
    t.dequant_gdn_bytes_per_pass += kind.dequant_gdn_bytes_per_pass * share;
  };
  for (size_t k = 0; k < whole.kind_sums.size(); ++k) {
    const int64_t n = stage.kind_layers[k];
    if (n == 0) continue;
    const StepTables& kind = *whole.kind_sums[k];
    add(kind, static_cast<double>(n) / static_cast<double>(whole.layer_kinds.count[k]));
    t.gdn_layers += kind.gdn_layers * n / whole.layer_kinds.count[k];
  }
  // The MTP blocks the stage holds: their layer, eh_proj and output layer (the output GEMM
  // below is the decoder's own).
  if (stage.mtp_layers > 0 && whole.mtp_sums != nullptr && whole.mtp_layers > 0) {
    add(*whole.mtp_sums,
        static_cast<double>(stage.mtp_layers) / static_cast<double>(whole.mtp_layers));
  }
  if (stage.output) {
    for (const GemmGroup& g : whole.gemms) {
      if (g.kind == GemmKind::kLogits) t.gemms.push_back(g);
    }
  }
  // One cross entropy over the vocabulary for the output layer and one per MTP block.
  t.loss_bytes_per_vocab_entry = whole.loss_bytes_per_vocab_entry *
                                 static_cast<double>((stage.output ? 1 : 0) + stage.mtp_layers);
  if (!stage.embedding) t.image_tokens_per_sample = 0;
  // The framework's host costs count the stage's own layers (framework_overhead.h).
  t.framework_counts.layers = static_cast<double>(stage.layers);
  t.framework_counts.moe_layers = static_cast<double>(stage.moe_layers);
  return t;
}

}  // namespace strata
