#include "strata/memory/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "strata/core/release.h"
#include "strata/job/pipeline_schedule.h"
#include "strata/memory/error_band.h"
#include "strata/memory/static_memory.h"
#include "strata/model/adapter.h"
#include "strata/model/op_sac.h"

namespace strata {
namespace {

/// Activations are kept in the compute dtype: bf16 unless the parameters are fp32.
double ActivationBytes(const Job& job) { return job.spec.param_dtype == DType::kFp32 ? 4.0 : 2.0; }

/// Tensors outside the TP regions (norm inputs, residual stream) are split over TP only under
/// sequence parallelism.
double ReplicatedDivisor(const Job& job) {
  return job.spec.layout.sequence_parallel ? static_cast<double>(job.spec.layout.tp) : 1.0;
}

std::string LayerKindLabel(const LayerSpec& spec) {
  return fmt::format("{}+{}", MixerKindName(spec.mixer), FfnKindName(spec.ffn));
}

}  // namespace

LossChoice ChooseLoss(const Job& job, const MemoryConstants& constants) {
  const CrossEntropyConstants& ce = constants.cross_entropy;
  LossChoice out;
  const EngineChain chain =
      ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
  const std::string& version = chain.version;
  out.engine = version.empty() ? chain.engine() : fmt::format("{} {}", chain.engine(), version);
  // verl's FSDP workers compute the log-probs themselves on HF code; its megatron workers use
  // megatron-core's vocab-parallel kernel (below).
  const bool torch_engine =
      std::ranges::find(ce.torch_engines, chain.engine()) != ce.torch_engines.end();
  const bool own_fused_logprobs =
      torch_engine && std::ranges::any_of(chain.names, [&](const std::string& f) {
        return std::ranges::find(ce.fused_logprob_frameworks, f) !=
               ce.fused_logprob_frameworks.end();
      });
  if (job.spec.cross_entropy == CrossEntropyImpl::kFused || own_fused_logprobs) {
    out.kernel = LossKernel::kFused;
    out.bytes = {2, 2};
    return out;
  }
  if (!torch_engine) {
    out.kernel = LossKernel::kMegatron;
    out.bytes = ce.megatron;
    return out;
  }
  const auto from = ce.compiled_from.find(chain.engine());
  const bool compiled = job.spec.framework.compile && from != ce.compiled_from.end() &&
                        ReleaseAtLeast(version, from->second);
  const bool loss_parallel =
      job.spec.layout.tp > 1 &&
      std::ranges::find(ce.loss_parallel_engines, chain.engine()) != ce.loss_parallel_engines.end();
  if (compiled) {
    out.kernel = LossKernel::kTorchCompiled;
    out.bytes = ce.torch_compiled;
  } else if (loss_parallel) {
    out.kernel = LossKernel::kTorchLossParallel;
    out.bytes = ce.torch_loss_parallel;
  } else {
    out.kernel = LossKernel::kTorchEager;
    out.bytes = ce.torch_eager;
  }
  return out;
}

bool RunsHfEagerLayers(const Job& job, const MemoryConstants& constants) {
  if (job.spec.framework.liger_kernel) return false;
  const EngineChain chain =
      ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
  if (chain.Runs("megatron-core")) return false;
  return std::ranges::any_of(chain.names, [&](const std::string& engine) {
    return std::ranges::find(constants.hf_eager_engines, engine) !=
           constants.hf_eager_engines.end();
  });
}

bool RunsTitanEagerLayers(const Job& job, const MemoryConstants& constants) {
  if (job.spec.framework.compile) return false;
  const EngineChain chain =
      ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
  if (chain.Runs("megatron-core")) return false;
  return std::ranges::any_of(chain.names, [&](const std::string& engine) {
    return std::ranges::find(constants.titan_eager_engines, engine) !=
           constants.titan_eager_engines.end();
  });
}

double TokensPerRank(const Job& job) {
  return job.spec.sequence.max_tokens * static_cast<double>(job.spec.micro_batch) /
         static_cast<double>(job.spec.layout.cp);
}

namespace {

/// What a Transformer Engine FP8 recipe keeps of the GEMM inputs megatron-core's TE layers save
/// for the weight gradient (data/memory_overheads.yaml, te_fp8_activations).
struct TeFp8Saving {
  bool on = false;
  double bytes = 0;  // per element of a saved GEMM input: the FP8 byte and the recipe's scales
  /// linear_proj (and the shared experts' linear_fc1) keep an FP8 copy of an input that the
  /// attention (the router) keeps in bf16 anyway: delayed scaling, or megatron-core before
  /// save_original_input_from.
  bool copies_kept_inputs = false;
};

TeFp8Saving TeFp8SavingOf(const Job& job, const MemoryConstants& constants) {
  TeFp8Saving out;
  const Fp8Spec& fp8 = job.spec.fp8;
  const TeFp8ActivationConstants& te = constants.te_fp8;
  if (!fp8.transformer_engine()) return out;
  const EngineChain chain =
      ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
  const auto engine =
      std::ranges::find_if(te.engines, [&](const std::string& name) { return chain.Runs(name); });
  if (engine == te.engines.end()) return out;
  const auto scale = te.scale_bytes_per_element.find(std::string(Fp8RecipeName(fp8.recipe)));
  if (scale == te.scale_bytes_per_element.end()) return out;
  const std::string version =
      chain.engine() == *engine ? chain.version : constants.engines.LatestOf(*engine);
  out.on = true;
  out.bytes = te.fp8_bytes_per_element + scale->second;
  out.copies_kept_inputs =
      fp8.recipe == Fp8Recipe::kDelayed || !ReleaseAtLeast(version, te.save_original_input_from);
  return out;
}

// Values per token saved for backward, after docs/formulas.md "Activations": the residual-stream
// tensors (norm inputs and outputs) are `replicated`, the tensors inside the TP region `sharded`.
// `rm`: the modules re-run in backward instead of keeping what they saved.
LayerActivationBytes PerToken(const Job& job, const MemoryConstants& constants,
                              const LayerSpec& layer, const RecomputeModules& rm, bool hf_eager,
                              bool titan_eager) {
  const ModelConfig& m = job.model;
  const auto tp = static_cast<double>(job.spec.layout.tp);
  const auto etp = static_cast<double>(job.spec.layout.etp);
  const double rep_div = ReplicatedDivisor(job);
  const double a = ActivationBytes(job);
  const auto h = static_cast<double>(m.hidden_size);
  double replicated = 0, sharded = 0, fp32_replicated = 0, fp32_sharded = 0;
  // Whole on every TP rank, every token of the sequence: a Gated DeltaNet that the framework
  // replicates over TP (transformers' module inside megatron-core, job/engine_chain.h).
  double whole = 0, fp32_whole = 0;
  // GEMM inputs Transformer Engine keeps quantized under an FP8 recipe (te.bytes per value);
  // in bf16 (or under any other FP8 path) they are counted with the tensors above.
  const TeFp8Saving te = TeFp8SavingOf(job, constants);
  double te_replicated = 0, te_sharded = 0;
  auto gemm_input = [&](double& bf16_values, double& te_values, double values) {
    (te.on ? te_values : bf16_values) += values;
  };
  LayerActivationBytes out;

  // What core attention keeps for backward unless selective recompute re-runs it (core_attn):
  // flash attention an fp32 log-sum-exp per head; the unfused kernel the S x S scores in HBM,
  // the softmax output and, with dropout, its output and a 1-byte mask (Korthikanti et al.
  // 2022: 5 a s^2 b bytes per layer): S per head per token, S the longest sample.
  auto core_attention_state = [&](double heads) {
    if (rm.core_attn) return;
    if (job.spec.attention.kernel != AttentionKernel::kUnfused) {
      fp32_sharded += 4.0 * heads;
      return;
    }
    const double row = heads * static_cast<double>(job.spec.sequence.max_tokens);
    const bool dropout = job.spec.attention.dropout > 0;
    sharded += row * (dropout ? 2 : 1);
    if (dropout) fp32_sharded += row;  // bytes: one per score
  };
  // megatron-core's Transformer Engine layer specs (the default --transformer-impl) fuse the
  // norm in front of attention and Gated DeltaNet into their first projection
  // (TELayerNormColumnParallelLinear: input_layernorm is IdentityOp; MLA keeps its own norm
  // unless mla_down_proj_fusion, off by default), and the one in front of a
  // dense MLP into linear_fc1 (pre_mlp_layernorm IdentityOp); an MoE layer keeps a separate
  // pre-MLP norm, which the router reads. `layernorm` recompute only touches a norm that is not
  // IdentityOp (TransformerLayer.__init__), and a recomputed dense MLP's checkpoint input is
  // the fused norm's input, so the norm output inside linear_fc1 goes with the MLP. Sources:
  // NVIDIA/Megatron-LM d98e8a64, megatron/core/models/gpt/gpt_layer_specs.py,
  // experimental_attention_variant_module_specs.py, transformer/transformer_layer.py.
  const bool fused_mixer_norm = layer.mixer == MixerKind::kFullAttention ||
                                layer.mixer == MixerKind::kSlidingAttention ||
                                layer.mixer == MixerKind::kGatedDeltaNet;
  // TE's LayerNormLinear keeps the fused norm's output as linear_qkv's FP8 input; the MLA, Gated
  // DeltaNet and other mixers' inputs under FP8 are not modelled (counted in bf16).
  const bool attention =
      layer.mixer == MixerKind::kFullAttention || layer.mixer == MixerKind::kSlidingAttention;
  if (layer.mixer != MixerKind::kNone) {
    // mixer norm: input (+ output, unless a separate norm is recomputed)
    replicated += h;
    if (attention) {
      gemm_input(replicated, te_replicated, h);
    } else if (!(rm.layernorm && !fused_mixer_norm)) {
      replicated += h;
    }
  }
  switch (layer.mixer) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention: {
      const AttentionConfig& at = m.attention;
      const auto q = static_cast<double>(at.num_heads * at.head_dim);
      // K and V over the TP group: one head per rank when TP exceeds the query groups.
      const auto kv = static_cast<double>(at.KvHeadsOverTp(job.spec.layout.tp) * at.head_dim);
      sharded += q + 2 * kv;              // q, k, v into flash attention
      if (at.qk_norm) sharded += q + kv;  // q and k before their norms
      if (at.output_gate)
        sharded += 2 * q;  // the attention output (the gate's multiply keeps
                           // it) and the gate
      // linear_proj's input: flash attention's output, or the gated one under an output gate.
      // Where TE keeps an FP8 copy of it (copies_kept_inputs), the copy stands beside the bf16
      // output flash attention keeps, or replaces it when linear_proj alone keeps that input
      // (the gated product; core attention recomputed).
      if (te.copies_kept_inputs) {
        te_sharded += q;
        if (!at.output_gate && !rm.core_attn) sharded += q;
      } else {
        sharded += q;
      }
      core_attention_state(static_cast<double>(at.num_heads));
      break;
    }
    case MixerKind::kMla: {
      const MlaConfig& mla = m.mla;
      const auto heads = static_cast<double>(mla.num_heads);
      const auto qk = static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
      const auto v = static_cast<double>(mla.v_head_dim);
      // q, k, v (re-run from the latents under mla_up_proj), attention output
      sharded += heads * ((rm.mla_up_proj ? 0.0 : 2 * qk + v) + v);
      replicated += static_cast<double>(mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_head_dim);
      core_attention_state(heads);
      break;
    }
    case MixerKind::kGatedDeltaNet: {
      const LinearAttentionConfig& la = m.linear_attention;
      const auto heads = static_cast<double>(la.num_value_heads);
      const auto chunk = static_cast<double>(constants.gdn_chunk_tokens);
      // Replicated over TP, the module runs on the sequence gathered from the sequence-parallel
      // region (mcore-bridge's Qwen3NextGatedDeltaNet.forward), and its first nn.Linear keeps
      // that gathered input for backward; split, megatron-core's column-parallel in_proj keeps
      // the norm's output (counted with the residual stream).
      const bool whole_layer = job.gdn.replicated_over_tp && job.spec.layout.tp > 1;
      double& values = whole_layer ? whole : sharded;
      double& fp32_values = whole_layer ? fp32_whole : fp32_sharded;
      if (whole_layer && job.spec.layout.sequence_parallel) whole += h;
      // conv input and output (q, k, v), z, core output, gated-norm output, WY matrix A.
      values += 2 * static_cast<double>(la.conv_dim()) + 3 * static_cast<double>(la.value_dim()) +
                heads * chunk;
      fp32_values += 2 * 4.0 * heads;  // decay g and beta
      // One recurrent state per chunk: heads x d_k x d_v in fp32, live while the layer runs;
      // backward holds it and its gradient.
      const double state = heads / (whole_layer ? 1.0 : tp) *
                           static_cast<double>(la.key_head_dim * la.value_head_dim) *
                           static_cast<double>(constants.gdn_state_bytes_per_element) / chunk;
      out.forward_transient += state;
      out.backward_transient += 2 * state;
      break;
    }
    case MixerKind::kLightning: {
      const LightningConfig& l = m.lightning;
      const auto chunk = static_cast<double>(constants.gdn_chunk_tokens);
      // qkv, the output gate, the core output and the gated-norm output.
      sharded += 6 * static_cast<double>(l.width());
      // One d x d state per head per chunk, kept as the GDN state is.
      const double state = static_cast<double>(l.num_heads) / tp *
                           static_cast<double>(l.head_dim * l.head_dim) *
                           static_cast<double>(constants.gdn_state_bytes_per_element) / chunk;
      out.forward_transient += state;
      out.backward_transient += 2 * state;
      break;
    }
    case MixerKind::kMamba2:
    case MixerKind::kMamba1: {
      const MambaConfig& mb = m.mamba;
      const auto chunk = static_cast<double>(constants.gdn_chunk_tokens);
      // in_proj output (z, x, B, C, dt), conv output, scan output and gated-norm output.
      sharded += static_cast<double>(mb.in_proj_width() + mb.conv_dim() + 2 * mb.inner());
      // The SSM state per chunk: heads x head_dim x d_state, in the same precision as the GDN
      // state (the chunked scans keep one state per chunk boundary).
      const double state = static_cast<double>(mb.num_heads) / tp *
                           static_cast<double>(mb.head_dim * mb.state_size) *
                           static_cast<double>(constants.gdn_state_bytes_per_element) / chunk;
      out.forward_transient += state;
      out.backward_transient += 2 * state;
      break;
    }
    case MixerKind::kNone:
      break;
  }

  // Feed-forward norm: input and output. A dense MLP's norm is fused into linear_fc1: a
  // recomputed MLP keeps only the norm input (its checkpoint input) and `layernorm` leaves it
  // alone. An MoE layer's separate norm drops its output under `layernorm`, unless the whole
  // MoE block is recomputed and keeps that output as its checkpoint input. A mixer-only block of
  // a hybrid has none.
  if (layer.ffn == FfnKind::kDense) {
    replicated += h;
    if (!rm.mlp) gemm_input(replicated, te_replicated, h);  // linear_fc1's input
  } else if (layer.ffn == FfnKind::kMoe) {
    replicated += rm.layernorm && !rm.moe ? h : 2 * h;
  }
  if (layer.ffn == FfnKind::kNone) {
    // A mixer-only block of a hybrid.
  } else if (layer.ffn == FfnKind::kDense) {
    const auto f = static_cast<double>(m.dense_mlp.intermediate_size);
    if (!rm.mlp) {
      sharded += 2 * f;                    // gate+up output, the SwiGLU's bf16 input
      gemm_input(sharded, te_sharded, f);  // activation output, linear_fc2's input
    }
  } else if (rm.moe) {
    // The whole MoE block re-runs in backward; only its input is kept (counted above).
  } else {
    const MoeConfig& moe = m.moe;
    const auto k = static_cast<double>(moe.top_k);
    const auto f = static_cast<double>(moe.expert_intermediate_size);
    const double fs =
        static_cast<double>(moe.num_shared_experts * moe.shared_expert_intermediate_size);
    fp32_replicated += 4.0 * static_cast<double>(moe.num_experts);  // router logits in fp32
    // Every token is replicated top_k times: expert input, fc1 output (+ activation), and the
    // expert output kept to differentiate the routing probabilities. The busiest EP rank gets
    // `moe_routing_imbalance` times the mean share of those copies.
    const double busiest = job.spec.layout.ep > 1 ? job.spec.moe_routing_imbalance : 1.0;
    // Under TE FP8 the expert input and the activation output are GroupedLinear's FP8 inputs
    // (fc1's, fc2's); fc1's output and the expert output stay bf16.
    replicated += busiest * k * (h + 2 * f / etp);
    gemm_input(replicated, te_replicated, busiest * k * h);
    if (!rm.moe_act) gemm_input(replicated, te_replicated, busiest * k * f / etp);
    if (!rm.shared_experts && fs > 0) {
      sharded += 2 * fs;
      gemm_input(sharded, te_sharded, fs);  // the shared experts' linear_fc2 input
      // Their linear_fc1 input is the norm output the router keeps; an FP8 copy of it too.
      if (te.on && te.copies_kept_inputs) te_replicated += h;
    }
    if (moe.shared_expert_gate) replicated += h;
    const double dispatch = busiest * a * k * h *
                            static_cast<double>(constants.moe_dispatch_transient_copies) / rep_div;
    out.forward_transient += dispatch;
    out.backward_transient += dispatch;
  }
  out.te_fp8 = te.bytes * (te_replicated / rep_div + te_sharded / tp);
  out.saved = a * (replicated / rep_div + sharded / tp + whole) + fp32_replicated / rep_div +
              fp32_sharded / tp + fp32_whole + out.te_fp8;
  // HF transformers' eager modules (data/memory_overheads.yaml, hf_eager_layer, counted from
  // modeling_qwen2.py): RMSNorm keeps its fp32 upcast input (4 B) where the count has the
  // activation-dtype input, and the normalized value in the activation dtype for its weight's
  // gradient when the weight trains (not under an adapter); the MLP keeps act_fn(gate) as a
  // fourth intermediate-wide tensor beside gate, up and their product.
  if (hf_eager) {
    const double norms =
        (layer.mixer != MixerKind::kNone ? 1.0 : 0.0) + (layer.ffn != FfnKind::kNone ? 1.0 : 0.0);
    const double per_norm = (4.0 - a) * h + (job.spec.adapter.on() ? 0.0 : a * h);
    out.hf_eager = norms * per_norm / rep_div;
    if (layer.ffn == FfnKind::kDense && !rm.mlp) {
      out.hf_eager += a * static_cast<double>(m.dense_mlp.intermediate_size) / tp;
    }
    out.saved += out.hf_eager;
  }
  // torchtitan's eager modules (data/memory_overheads.yaml, torchtitan_eager_layer, counted
  // from its llama3 model.py): FeedForward keeps silu(w1 x) as a fourth intermediate-wide tensor,
  // and in releases that repeat K and V for GQA (data/frameworks.yaml, gqa_repeat: before 0.2.2)
  // SDPA keeps the K and V that repeat_kv expanded to every query head where the count has the
  // KV heads; later releases pass enable_gqa and SDPA keeps the KV heads' K and V.
  if (titan_eager) {
    if (layer.ffn == FfnKind::kDense && !rm.mlp) {
      out.titan_eager += a * static_cast<double>(m.dense_mlp.intermediate_size) / tp;
    }
    const EngineChain chain =
        ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
    const bool repeats_kv = GqaRepeatOf(constants.engines, chain) != nullptr;
    if (repeats_kv && layer.mixer == MixerKind::kFullAttention && !rm.core_attn) {
      const AttentionConfig& at = m.attention;
      const auto q = static_cast<double>(at.num_heads * at.head_dim);
      const auto kv = static_cast<double>(at.KvHeadsOverTp(job.spec.layout.tp) * at.head_dim);
      if (q > kv) out.titan_eager += a * 2 * (q - kv) / tp;
    }
    out.saved += out.titan_eager;
  }
  // Adapters keep their r-wide A x (and, with dropout, the dropped input and its mask); the
  // input of each adapted layer is already counted above, as full training keeps it for the
  // weight gradient, and A needs it for its own.
  // On routed experts each token keeps top_k copies, on the busiest EP rank `busiest` times the
  // mean, split over ETP, as the experts' own activations above.
  if (job.spec.adapter.on()) {
    const AdapterLayerCost adapter = AdapterCostOfLayer(m, job.spec.adapter, layer);
    // Those on a Gated DeltaNet every TP rank runs whole are whole, as the layer's own are.
    const bool gdn_whole = job.gdn.replicated_over_tp && job.spec.layout.tp > 1;
    const double gdn =
        gdn_whole ? a * adapter.gdn_saved_elements_per_token + adapter.gdn_mask_bytes_per_token
                  : 0.0;
    const double dense =
        a * (adapter.saved_elements_per_token - adapter.routed_saved_elements_per_token) +
        adapter.mask_bytes_per_token - adapter.routed_mask_bytes_per_token - gdn;
    const double routed =
        a * adapter.routed_saved_elements_per_token + adapter.routed_mask_bytes_per_token;
    const double busiest = job.spec.layout.ep > 1 ? job.spec.moe_routing_imbalance : 1.0;
    out.saved += dense / tp + gdn + busiest * routed / etp / rep_div;
  }
  return out;
}

}  // namespace

LayerActivationBytes LayerActivationsPerToken(const Job& job, const MemoryConstants& constants,
                                              const LayerSpec& layer) {
  // Selective recompute re-runs the modules megatron-core's --recompute-modules names
  // (default core_attn) instead of keeping what they saved; see RecomputeModules.
  const bool selective = job.spec.recompute.granularity == RecomputeGranularity::kSelective;
  const bool hf_eager = RunsHfEagerLayers(job, constants);
  const bool titan_eager = RunsTitanEagerLayers(job, constants);
  RecomputeModules none;
  none.core_attn = false;
  // torchtitan's selective options (TitanSelectiveAc) re-run no megatron-core module.
  if (!selective || job.spec.recompute.titan.on()) {
    return PerToken(job, constants, layer, none, hf_eager, titan_eager);
  }
  LayerActivationBytes out =
      PerToken(job, constants, layer, job.spec.recompute.modules, hf_eager, titan_eager);
  // A recomputed module frees its internal tensors (its input stays, as the checkpoint); the
  // layer's backward re-creates them before it can run (megatron-core's CheckpointFunction).
  out.regenerated = PerToken(job, constants, layer, none, hf_eager, titan_eager).saved - out.saved;
  return out;
}

// The block input (kept by the checkpoint wrapper) and, by torchtitan's save list, the saved
// matmul outputs, every reduce-scatter output and SDPA's output with its fp32 log-sum-exp.
double OpSacSavedPerToken(const Job& job, const LayerSpec& layer) {
  const OpSacBlock block = OpSacPlan(job.model, layer);
  const auto tp = static_cast<double>(job.spec.layout.tp);
  const double rep_div = ReplicatedDivisor(job);
  const bool reduce_scatter = job.spec.layout.tp > 1 && job.spec.layout.sequence_parallel;
  double replicated = static_cast<double>(job.model.hidden_size);
  double sharded = 0, whole = 0;
  for (const OpSacMatmul& m : block.matmuls) {
    // A row-parallel output is reduce-scattered over the sequence (sequence parallelism);
    // reduce_scatter_tensor is on the save list whatever the mm's parity.
    if (m.row_parallel && reduce_scatter) replicated += m.out_width;
    if (!m.saved) continue;
    if (m.row_parallel) {
      whole += m.out_width;  // partial sums: h wide on every token of the rank, before the RS
    } else if (m.out_width <= 1) {
      replicated += m.out_width;  // a gate h -> 1 is replicated over TP
    } else {
      sharded += m.out_width;
    }
  }
  const AttentionConfig& at = job.model.attention;
  double fp32_sharded = 0;
  if (!block.matmuls.empty()) {
    sharded += static_cast<double>(at.num_heads * at.head_dim);  // SDPA output
    fp32_sharded += 4.0 * static_cast<double>(at.num_heads);     // its log-sum-exp
  }
  return ActivationBytes(job) * (replicated / rep_div + sharded / tp + whole) + fp32_sharded / tp;
}

ActivationMemory ComputeActivations(const Job& job, const MemoryConstants& constants, int64_t stage,
                                    Detail detail) {
  const bool explain = detail == Detail::kExplained;
  const ParallelLayout& l = job.spec.layout;
  const RecomputeSpec& rc = job.spec.recompute;
  const double t = TokensPerRank(job);
  const double a = ActivationBytes(job);
  const auto h = static_cast<double>(job.model.hidden_size);
  const double rep_div = ReplicatedDivisor(job);
  const bool last = stage == l.output_stage();  // the output layer and the logits
  ActivationMemory out;

  // The micro batches each of the stage's chunks holds at its peak, by schedule
  // (job/pipeline_schedule.h): 1F1B's PP - s, GPipe's all, interleaving's extra warm-up.
  // Each layer's saved bytes count once per micro batch its chunk holds.
  const std::vector<double> chunk_in_flight =
      MicroBatchesInFlight(l, job.spec.num_micro_batches(), stage);

  const auto layers = StageLayerIndices(job, stage);
  const double checkpoint = a * h * t / rep_div;  // one layer input
  double max_saved = 0, max_fwd = 0, max_bwd = 0, stored_per_mb = 0;
  double max_no_grad = 0;  // the largest layer's live tensors in a no_grad forward
  // label -> (layers, bytes of one micro batch, bytes of those in flight)
  struct KindSaved {
    int64_t layers = 0;
    double bytes = 0;
    double in_flight = 0;
  };
  std::map<std::string, KindSaved> saved_by_kind;
  double stored = 0;              // over the micro batches in flight
  double checkpoints_stored = 0;  // checkpointed inputs, over the micro batches in flight
  std::map<std::string, double> per_token_by_kind;    // label -> saved bytes per token
  std::map<std::string, double> hf_eager_by_kind;     // label -> HF eager modules' part of it
  std::map<std::string, double> titan_eager_by_kind;  // label -> torchtitan eager modules' part
  std::map<std::string, double> te_fp8_by_kind;       // label -> TE's FP8 GEMM inputs' part
  bool te_other_mixers = false;  // a mixer whose FP8 inputs are not modelled (MLA, GDN, ...)
  int64_t checkpointed = 0;
  // torchtitan's selective AC (selective_ac_option): op-level, or every N-th block in full AC.
  const bool titan = rc.granularity == RecomputeGranularity::kSelective && rc.titan.on();
  // What one layer's recompute brings back in backward: op SAC's block, or the modules of
  // megatron-core's selective recompute.
  double max_regenerated = 0;
  // megatron-core --cpu-offloading: the first N layers' saved tensors go to host memory; one
  // of them is on the GPU at a time while its copy runs behind the next layer (TE's handler).
  const int64_t offloaded = job.spec.activation_offload.num_layers;
  double host_per_mb = 0, offload_in_flight = 0;
  // LayerActivationsPerToken depends on the layer's mixer and feed-forward kinds only: computed
  // once per kind (a model has a few; hybrids alternate them layer by layer), not once per layer.
  struct KindBytes {
    const LayerSpec* spec;
    LayerActivationBytes bytes;
  };
  std::array<KindBytes, 8> kinds{};
  size_t kind_count = 0;
  auto per_token_of = [&](const LayerSpec& spec) {
    for (size_t k = 0; k < kind_count; ++k) {
      if (kinds[k].spec->mixer == spec.mixer && kinds[k].spec->ffn == spec.ffn) {
        return kinds[k].bytes;
      }
    }
    const LayerActivationBytes bytes = LayerActivationsPerToken(job, constants, spec);
    if (kind_count < kinds.size()) kinds[kind_count++] = {&spec, bytes};
    return bytes;
  };
  for (int64_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& spec = job.model.layers[static_cast<size_t>(layers[i])];
    const LayerActivationBytes per_token = per_token_of(spec);
    if (explain) {
      per_token_by_kind[LayerKindLabel(spec)] = per_token.saved;
      if (per_token.hf_eager > 0) hf_eager_by_kind[LayerKindLabel(spec)] = per_token.hf_eager;
      if (per_token.titan_eager > 0) {
        titan_eager_by_kind[LayerKindLabel(spec)] = per_token.titan_eager;
      }
      if (per_token.te_fp8 > 0) te_fp8_by_kind[LayerKindLabel(spec)] = per_token.te_fp8;
      te_other_mixers = te_other_mixers || (spec.mixer != MixerKind::kNone &&
                                            spec.mixer != MixerKind::kFullAttention &&
                                            spec.mixer != MixerKind::kSlidingAttention);
    }
    max_saved = std::max(max_saved, per_token.saved * t);
    max_fwd = std::max(max_fwd, per_token.forward_transient * t);
    max_bwd = std::max(max_bwd, per_token.backward_transient * t);
    max_regenerated = std::max(max_regenerated, per_token.regenerated * t);
    // Without autograd no module is recomputed: what selective recompute drops is live too.
    max_no_grad = std::max(
        max_no_grad, (per_token.saved + per_token.regenerated + per_token.forward_transient) * t);
    const int64_t in_chunk = layers.IndexInChunk(i);
    const double held = chunk_in_flight[static_cast<size_t>(layers.ChunkOf(i))];
    const bool recomputed =
        (rc.granularity == RecomputeGranularity::kFull &&
         (rc.method == RecomputeMethod::kUniform || in_chunk < rc.num_layers)) ||
        (titan && rc.titan.every_n_layers > 0 && (i + 1) % rc.titan.every_n_layers == 0);
    auto keep = [&](const std::string& label, double bytes) {
      if (explain) {
        KindSaved& entry = saved_by_kind[label];
        entry.layers += 1;
        entry.bytes += bytes;
        entry.in_flight += bytes * held;
      }
      stored_per_mb += bytes;
      stored += bytes * held;
    };
    if (titan && rc.titan.op) {
      const double kept = OpSacSavedPerToken(job, spec);
      max_regenerated = std::max(max_regenerated, (per_token.saved - kept) * t);
      keep(LayerKindLabel(spec) + ", op-level SAC", kept * t);
    } else if (recomputed) {
      // Uniform keeps one input per group of num_layers layers; block (and torchtitan's every
      // N-th layer) one per recomputed layer.
      const bool group_start = rc.granularity != RecomputeGranularity::kFull ||
                               rc.method == RecomputeMethod::kBlock ||
                               in_chunk % rc.num_layers == 0;
      if (group_start) {
        ++checkpointed;
        checkpoints_stored += held;
      }
    } else if (i < offloaded) {
      // --cpu-offloading runs without a pipeline: one chunk, `held` micro batches.
      host_per_mb += per_token.saved * t * held;
      offload_in_flight = std::max(offload_in_flight, per_token.saved * t * held);
    } else {
      keep(LayerKindLabel(spec), per_token.saved * t);
    }
  }
  stored_per_mb += static_cast<double>(checkpointed) * checkpoint;
  stored += checkpoints_stored * checkpoint + offload_in_flight;
  out.stored = Bytes::Count(stored);
  // The micro batches in flight as one number, weighted by what each chunk saves (the schedule's
  // count when the stage's chunks are alike).
  out.in_flight =
      stored_per_mb > 0 ? (stored - offload_in_flight) / stored_per_mb : chunk_in_flight.front();

  // The --explain note of the HF eager modules' part: "attention+dense: 61,440 B/token".
  std::string hf_note;
  for (const auto& [label, bytes] : hf_eager_by_kind) {
    hf_note +=
        fmt::format("{}{}: {} B/token", hf_note.empty() ? "" : "; ", label, GroupDigits(bytes));
  }
  if (!hf_note.empty()) {
    hf_note = fmt::format(
        "of which HF transformers' eager modules keep beyond the fused layer ({}): {}; "
        "RMSNorm's fp32 input{} and act_fn(gate) beside gate, up and their product",
        job.spec.framework.name, hf_note,
        job.spec.adapter.on() ? "" : ", its normalized value for the trainable weight");
  }
  // The same for torchtitan's eager modules (compile off).
  std::string titan_note;
  for (const auto& [label, bytes] : titan_eager_by_kind) {
    titan_note +=
        fmt::format("{}{}: {} B/token", titan_note.empty() ? "" : "; ", label, GroupDigits(bytes));
  }
  if (!titan_note.empty()) {
    const EngineChain chain =
        ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode);
    const bool repeats_kv = GqaRepeatOf(constants.engines, chain) != nullptr;
    titan_note = fmt::format(
        "of which torchtitan's eager modules keep beyond the fused layer (framework.compile "
        "false): {}; silu(w1 x) beside w1 x, w3 x and their product{}",
        titan_note,
        repeats_kv ? fmt::format(", and K and V repeated to every query head (repeat_kv, "
                                 "torchtitan {}) as SDPA's inputs",
                                 chain.version)
                   : fmt::format(" (torchtitan {} passes enable_gqa to SDPA: K and V are kept "
                                 "at the KV heads' width)",
                                 chain.version));
  }
  // The same for the GEMM inputs Transformer Engine keeps in FP8, and which tensors they are.
  std::string te_note;
  for (const auto& [label, bytes] : te_fp8_by_kind) {
    te_note +=
        fmt::format("{}{}: {} B/token", te_note.empty() ? "" : "; ", label, GroupDigits(bytes));
  }
  if (!te_note.empty()) {
    const TeFp8Saving te = TeFp8SavingOf(job, constants);
    te_note = fmt::format(
        "of which Transformer Engine FP8 ({}) keeps GEMM inputs quantized at {:g} B a value: {}; "
        "of those the layer has, the norm outputs fused into linear_qkv and linear_fc1, "
        "linear_fc2's input (the activation output) and the routed experts' fc1 and fc2 "
        "inputs{}; the rest in {:.0f} B{}",
        Fp8RecipeName(job.spec.fp8.recipe), te.bytes, te_note,
        te.copies_kept_inputs
            ? ", and linear_proj's FP8 copy of the attention output (delayed scaling or "
              "megatron-core before save_original_input)"
            : "; linear_proj keeps the attention output in bf16 (save_original_input)",
        a,
        te_other_mixers ? "; the MLA, Gated DeltaNet, Lightning and Mamba mixers' inputs are "
                          "counted in bf16 (their FP8 inputs not modelled)"
                        : "");
  }
  if (explain) {
    const std::string in_flight_text =
        out.in_flight == 1.0 ? "" : fmt::format(" x {} micro batches in flight", out.in_flight);
    for (const auto& [label, entry] : saved_by_kind) {
      const Bytes bytes = Bytes::Count(entry.in_flight);
      out.items.push_back(
          {ItemKind::kActivations,
           fmt::format("activations: {} x {} layers, saved", entry.layers, label), bytes,
           fmt::format("{} layers x {} tokens x {:.0f} B/token{} = {}", entry.layers,
                       GroupDigits(t), entry.bytes / t / static_cast<double>(entry.layers),
                       in_flight_text, FormatGBAndGiB(bytes)),
           hf_eager_by_kind.contains(label.substr(0, label.find(',')))      ? hf_note
           : titan_eager_by_kind.contains(label.substr(0, label.find(','))) ? titan_note
           : te_fp8_by_kind.contains(label.substr(0, label.find(',')))      ? te_note
                                                                            : ""});
    }
    if (checkpointed > 0) {
      const Bytes bytes = Bytes::Count(checkpoints_stored * checkpoint);
      out.items.push_back(
          {ItemKind::kActivations, "activations: checkpointed layer inputs", bytes,
           fmt::format("{} inputs x {} tokens x {} hidden x {:.0f} B{}{} = {}", checkpointed,
                       GroupDigits(t), job.model.hidden_size, a,
                       rep_div > 1 ? fmt::format(" / SP {}", rep_div) : "", in_flight_text,
                       FormatGBAndGiB(bytes)),
           titan ? fmt::format("torchtitan selective_ac_option {}: every {}-th layer in full AC",
                               rc.titan.every_n_layers, rc.titan.every_n_layers)
                 : fmt::format("full recompute, method {}, num_layers {}",
                               RecomputeMethodName(rc.method), rc.num_layers)});
    }
    if (offloaded > 0) {
      const Bytes host = Bytes::Count(host_per_mb);
      out.host_items.push_back(
          {ItemKind::kActivations, "activations: offloaded to host memory", host,
           fmt::format("the saved activations of the first {} layers x {} tokens = {}", offloaded,
                       GroupDigits(t), FormatGBAndGiB(host)),
           "megatron-core --cpu-offloading-num-layers: pinned host memory, per GPU"});
      const Bytes buffer = Bytes::Count(offload_in_flight);
      out.items.push_back(
          {ItemKind::kActivations, "activations: offload copy in flight (one layer)", buffer,
           fmt::format("the largest offloaded layer's saved activations = {}",
                       FormatGBAndGiB(buffer)),
           "on the GPU while its copy to the host (or back) runs behind the next layer"});
    }
  }

  // Backward of one layer: its saved activations (recomputed first under full recompute), the
  // gradients of part of them, and its transient buffers.
  const bool full = rc.granularity == RecomputeGranularity::kFull;
  // The recomputed group's first input is the checkpoint itself, already counted in `stored`.
  // Selective recompute (megatron-core's modules): the recomputed modules' tensors of one layer.
  double recompute_set =
      full ? (rc.method == RecomputeMethod::kUniform ? static_cast<double>(rc.num_layers) : 1.0) *
                     max_saved -
                 checkpoint
           : max_regenerated;
  if (titan) {
    // op: the block's recompute regenerates what it did not keep; every N-th: one whole layer.
    recompute_set = rc.titan.op ? max_regenerated : (checkpointed > 0 ? max_saved - checkpoint : 0);
  }
  const double gradients = constants.backward_gradient_fraction * max_saved;
  const Bytes backward_layer = Bytes::Count(recompute_set + gradients + max_bwd);
  const Bytes forward_layer = Bytes::Count(max_fwd);
  if (explain) {
    // What each layer kind saves for backward, so --explain shows the per-kind split.
    std::string by_kind;
    for (const auto& [label, saved] : per_token_by_kind) {
      by_kind +=
          fmt::format("{}{}: {} B/token x {} tokens = {}", by_kind.empty() ? "" : "; ", label,
                      GroupDigits(saved), GroupDigits(t), FormatGBAndGiB(Bytes::Count(saved * t)));
    }
    out.items.push_back(
        {ItemKind::kActivations, "activations: backward working set of one layer", backward_layer,
         fmt::format(
             "{}{:.2f} x {} saved (gradients) + {} transient (MoE dispatch copies, "
             "chunk states and their gradients) = {}; one layer's saved activations by "
             "kind: {}",
             recompute_set > 0
                 ? fmt::format("{} recomputed + ", FormatGBAndGiB(Bytes::Count(recompute_set)))
                 : "",
             constants.backward_gradient_fraction, FormatGBAndGiB(Bytes::Count(max_saved)),
             FormatGBAndGiB(Bytes::Count(max_bwd)), FormatGBAndGiB(backward_layer), by_kind),
         fmt::format("the largest layer of the stage; live only while it runs backward{}{}{}",
                     hf_note.empty() ? "" : "; " + hf_note,
                     titan_note.empty() ? "" : "; " + titan_note,
                     te_note.empty() ? "" : "; " + te_note)});
    out.items.push_back(
        {ItemKind::kActivations, "activations: forward transients of one layer", forward_layer,
         fmt::format("MoE dispatch copies and chunk states of the largest layer = {}",
                     FormatGBAndGiB(forward_layer)),
         "live only while the layer runs forward"});
  }
  out.forward_working = forward_layer;
  out.backward_working = backward_layer;
  out.no_grad_layer = Bytes::Count(max_no_grad);

  if (last) {
    const auto vocab = static_cast<double>(PaddedVocab(job.model.vocab_size, l.tp));
    const double heads = job.spec.mtp && job.model.mtp_layers > 0 ? 2.0 : 1.0;  // MTP: 2nd logits
    const double elements = t * vocab / static_cast<double>(l.tp) * heads;
    const LossChoice loss = ChooseLoss(job, constants);
    // The constants count bf16 logits (2 B); fp32 parameters make them 4 B.
    const double forward_bytes = loss.bytes.forward + (a - 2.0);
    const double backward_bytes = loss.bytes.backward + (a - 2.0);
    const Bytes logits = Bytes::Count(a * elements);
    const Bytes working = Bytes::Count(std::max(forward_bytes, backward_bytes) * elements);
    if (explain) {
      out.items.push_back(
          {ItemKind::kActivations, "activations: logits", logits,
           fmt::format("{} tokens x {} vocab / TP {}{} x {:.0f} B = {}", GroupDigits(t),
                       GroupDigits(vocab), l.tp, heads > 1 ? " x 2 (MTP head)" : "", a,
                       FormatGBAndGiB(logits)),
           "the gradient of the logits reuses or replaces this buffer"});
      const Bytes rest = working - logits;
      const std::string count = GroupDigits(elements);
      switch (loss.kernel) {
        case LossKernel::kFused:
          break;
        case LossKernel::kMegatron:
          out.items.push_back(
              {ItemKind::kActivations, "activations: cross-entropy fp32 softmax", rest,
               fmt::format("{} logits x 4 B = {}", count, FormatGBAndGiB(rest)),
               "megatron-core vocab_parallel_cross_entropy keeps the softmax in fp32 for "
               "backward"});
          break;
        case LossKernel::kTorchEager:
          out.items.push_back(
              {ItemKind::kActivations, "activations: cross-entropy on fp32 logits (PyTorch, eager)",
               rest,
               fmt::format("{} logits x ({:.0f} B at the backward's peak - {:.0f} B of logits) = "
                           "{}; backward: the fp32 log-softmax 4 B + its gradient 4 B + the "
                           "input's fp32 gradient 4 B, the bf16 logits dropped; forward {:.0f} "
                           "B: logits + fp32 copy 4 B + log-softmax 4 B",
                           count, backward_bytes, a, FormatGBAndGiB(rest), forward_bytes),
               fmt::format("{}: F.cross_entropy(logits.float()) runs as log_softmax and "
                           "nll_loss, not compiled",
                           loss.engine)});
          break;
        case LossKernel::kTorchLossParallel:
          out.items.push_back(
              {ItemKind::kActivations,
               "activations: cross-entropy on fp32 logits (PyTorch loss_parallel, eager)", rest,
               fmt::format("{} logits x ({:.0f} B at the backward's peak - {:.0f} B of logits) = "
                           "{}; backward: the saved fp32 log-softmax 4 B + the zero gradient 4 B + "
                           "exp(log-softmax) 4 B + their sum 4 B; forward {:.0f} B: logits + fp32 "
                           "copy 4 B + shifted 4 B + exp 4 B",
                           count, backward_bytes, a, FormatGBAndGiB(rest), forward_bytes),
               fmt::format("{}: TP {} shards the logits over the vocabulary (loss_parallel, "
                           "torch/distributed/tensor/parallel/loss.py)",
                           loss.engine, l.tp)});
          break;
        case LossKernel::kTorchCompiled:
          out.items.push_back(
              {ItemKind::kActivations,
               "activations: cross-entropy on fp32 logits (PyTorch, compiled)", rest,
               fmt::format("{} logits x ({:.0f} B at the backward's peak - {:.0f} B of logits) = "
                           "{}: the bf16 gradient, written by one fused kernel",
                           count, backward_bytes, a, FormatGBAndGiB(rest)),
               fmt::format("{} compiles the loss with the model (torch.compile): no fp32 copy "
                           "is kept",
                           loss.engine)});
          break;
      }
    }
    out.no_grad_logits = Bytes::Count(forward_bytes * elements);
    if (loss.kernel == LossKernel::kMegatron) out.entropy_copy = Bytes::Count(a * elements);
    out.forward_working =
        std::max(out.forward_working, Bytes(Bytes::Count(forward_bytes * elements)));
    out.backward_working =
        std::max(out.backward_working, Bytes(Bytes::Count(backward_bytes * elements)));
  }
  return out;
}

}  // namespace strata
