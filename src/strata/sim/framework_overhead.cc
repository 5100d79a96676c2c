#include "strata/sim/framework_overhead.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {
namespace {

// Parameter tensors of one token mixer, as the HF and megatron modules hold them (weights,
// biases, norms inside the mixer).
double MixerParams(const ModelConfig& m, MixerKind kind) {
  switch (kind) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention: {
      const AttentionConfig& a = m.attention;
      return 4.0 +
             (a.bias       ? 4.0
              : a.qkv_bias ? 3.0
                           : 0.0) +
             (a.qk_norm || a.qk_norm_full_width ? 2.0 : 0.0);
    }
    case MixerKind::kMla:
      return 7.0;  // q (or q_a, q_a_norm, q_b), kv_a, kv_a_norm, kv_b, o
    case MixerKind::kNone:
      return 0.0;
    default:
      return 8.0;  // linear-attention and state-space mixers: projections, conv, norm, decay
  }
}

double FfnParams(const ModelConfig& m, FfnKind kind) {
  switch (kind) {
    case FfnKind::kDense:
      return 3.0;
    case FfnKind::kMoe: {
      const MoeConfig& e = m.moe;
      const double experts = static_cast<double>(e.num_experts);
      return 1.0 + (e.router_bias ? 1.0 : 0.0) + experts * (e.expert_bias ? 6.0 : 3.0) +
             3.0 * static_cast<double>(e.num_shared_experts) + (e.shared_expert_gate ? 1.0 : 0.0);
    }
    case FfnKind::kNone:
      return 0.0;
  }
  return 0.0;
}

// The time the GPU waits for the host over one pass of one layer: the host issues `ops` at
// `op_s` each while the GPU runs `gpu_s` of work; what the GPU does not cover is exposed.
// Host ops a layer's fetch hooks add in each pass.
struct PassOps {
  double forward = 0, backward = 0, recompute = 0;
};

double Uncovered(double ops, double op_s, double gpu_s) {
  return std::max(0.0, ops * op_s - gpu_s);
}

}  // namespace

FrameworkModelCounts CountFrameworkModel(const ModelConfig& model) {
  FrameworkModelCounts c;
  double params = 0;
  for (const LayerSpec& layer : model.layers) {
    c.layers += 1;
    if (layer.ffn == FfnKind::kMoe) c.moe_layers += 1;
    const bool attention =
        layer.mixer == MixerKind::kFullAttention || layer.mixer == MixerKind::kSlidingAttention;
    if (attention && model.attention.num_kv_heads < model.attention.num_heads) c.gqa_layers += 1;
    params += 2.0 + MixerParams(model, layer.mixer) + FfnParams(model, layer.ffn);  // + 2 norms
  }
  c.params_per_layer = c.layers > 0 ? params / c.layers : 0;
  return c;
}

double AttentionCopyBytesPerToken(const StepTables& t, const FrameworkProfile& f) {
  if (!f.eager_attention_copies) return 0.0;
  return t.attention_copy_bytes_per_token + (f.eager_gqa_repeat ? t.gqa_repeat_bytes_per_token : 0);
}

double EagerExtraBytesPerToken(const StepTables& t, const FrameworkProfile& f,
                               const ParallelLayout& l) {
  const double tp = static_cast<double>(l.tp);
  const double sp_split = l.sequence_parallel ? tp : 1.0;
  const double act_bytes =
      t.dense_mlp_act_bytes_per_token + t.routed_act_bytes_per_token + t.shared_act_bytes_per_token;
  return (f.eager_norm - 1) * t.norm_bytes_per_token / sp_split +
         ((f.eager_rotary - 1) * t.rotary_bytes_per_token + (f.eager_activation - 1) * act_bytes +
          AttentionCopyBytesPerToken(t, f)) /
             tp;
}

ModelCodeBytes ModelCodeBytesPerToken(const StepTables& t, const FrameworkProfile& f,
                                      const ParallelLayout& l) {
  ModelCodeBytes b;
  const double tp = static_cast<double>(l.tp);
  const ModelCodeTraffic& c = f.model_code;
  if (!f.fused_expert_mlp) {
    b.clamped_glu_forward = c.clamped_glu_forward * t.clamped_glu_elements_per_token / tp;
    b.clamped_glu_backward = c.clamped_glu_backward * t.clamped_glu_elements_per_token / tp;
    b.expert_bias_forward = c.expert_bias_forward * t.expert_bias_elements_per_token / tp;
    b.expert_bias_backward = c.expert_bias_backward * t.expert_bias_elements_per_token / tp;
  }
  b.yarn_rotary_forward = c.yarn_rotary_forward * t.yarn_rotary_elements_per_token / tp;
  b.yarn_rotary_backward = c.yarn_rotary_backward * t.yarn_rotary_elements_per_token / tp;
  return b;
}

std::vector<std::string> ModelCodeAssumptions(const StepTables& t, const FrameworkProfile& f) {
  std::vector<std::string> lines;
  const ModelCodeTraffic& c = f.model_code;
  const bool experts_fused = f.fused_expert_mlp;
  if (t.clamped_glu_elements_per_token > 0 && c.clamped_glu_forward + c.clamped_glu_backward > 0) {
    lines.push_back(
        experts_fused
            ? std::string("clamped GLU: inside the fused expert MLP (no eager clamp)")
            : fmt::format("clamped GLU: {} clamps gate and up and concatenates them in eager "
                          "code before its fused activation ({:.0f} B forward, {:.0f} B "
                          "backward per element of the experts' fc1 output)",
                          f.engine, c.clamped_glu_forward, c.clamped_glu_backward));
  }
  if (t.expert_bias_elements_per_token > 0 && c.expert_bias_forward + c.expert_bias_backward > 0) {
    lines.push_back(
        experts_fused
            ? std::string("expert output biases: inside the fused expert MLP")
            : fmt::format("expert output biases: {} adds each expert's bias x its routing "
                          "probability in a per-expert loop ({:.0f} B forward, {:.0f} B "
                          "backward per element of the experts' output)",
                          f.engine, c.expert_bias_forward, c.expert_bias_backward));
  }
  if (t.yarn_rotary_elements_per_token > 0 && c.yarn_rotary_forward + c.yarn_rotary_backward > 0) {
    lines.push_back(
        fmt::format("YaRN rotary: {} turns rotary fusion off for it, so q and k go "
                    "through eager rotary code ({:.0f} B forward, {:.0f} B backward "
                    "per element beyond a fused kernel's)",
                    f.name, c.yarn_rotary_forward, c.yarn_rotary_backward));
  }
  return lines;
}

double GatherBytesPerParam(const StepLayout& s) {
  return s.fp8.on() && s.fp8.param_gather ? 1.0 : static_cast<double>(s.param_bytes);
}

FrameworkOverhead ComputeFrameworkOverhead(const StepTables& t, const StepLayout& s,
                                           const MicroBatchCompute& c) {
  FrameworkOverhead o;
  const FrameworkProfile& f = t.framework.ForMode(s.sharding.mode);
  const FrameworkModelCounts& n = t.framework_counts;
  if (!f.on || n.layers <= 0) return o;
  const double op = f.host_op_s;
  // The critical stage's layers: ComputeMicroBatch cut the kernel times to that stage, whose
  // share of the layers is uneven under first/last-stage counts or a layout string. A stage
  // priced by its own layers (StageShare::own) comes with its own tables, whose counts are
  // that stage's (StageTables): 3 dense + 2 MoE layers have 2 MoE layers' host costs.
  const double cut = c.critical.own ? 1.0 : c.critical.layers;
  const double layers = std::max(1.0, n.layers * cut);
  const double moe_share = c.critical.own ? n.moe_layers / layers : n.moe_layers / n.layers;
  const double moe_layers = moe_share * layers;
  const bool loop = f.expert_loop_ops > 0 && moe_layers > 0;
  // Full recompute re-runs the forward of this share of the layers.
  const double rec = s.recompute == RecomputeGranularity::kFull ? s.recompute_layer_fraction : 0.0;

  // Eager element-wise traffic: the bytes each kind moves beyond its fused kernel, on this rank
  // (norms are hidden-wide, split by TP only under sequence parallelism; the rest TP-split), over
  // the critical stage's layers; backward moves twice the forward's, the recompute re-runs the
  // forward's share that the fused term's recompute re-runs. GPU work: it also covers host time
  // (below), so a host-bound layer hides it.
  const double hbm = t.hbm.bytes_per_s() * t.efficiency.hbm_efficiency;
  const double tokens =
      static_cast<double>(s.micro_batch) * t.mean_tokens / static_cast<double>(s.layout.cp);
  const double extra_per_token = EagerExtraBytesPerToken(t, f, s.layout);
  // Model-specific module code (clamped GLU, per-expert output bias, unfused YaRN rotary): its
  // own forward and backward bytes.
  const ModelCodeBytes model_code = ModelCodeBytesPerToken(t, f, s.layout);
  double eager_fwd = 0, eager_bwd = 0, eager_rec = 0;
  if ((extra_per_token > 0 || model_code.forward() + model_code.backward() > 0) && hbm > 0) {
    const double per_pass = tokens / hbm * cut;
    eager_fwd = (extra_per_token + model_code.forward()) * per_pass;
    eager_bwd = (2 * extra_per_token + model_code.backward()) * per_pass;
    const double fused_forward = c.forward.memory_bound.s();
    eager_rec = fused_forward > 0 ? eager_fwd * c.recompute.memory_bound.s() / fused_forward : 0.0;
  }
  // FSDP2's copy-out: each gather (forward, and backward when resharded) writes the unit's
  // gathered bytes into its parameters, on the compute stream.
  double copy_fwd = 0, copy_bwd = 0;
  if (s.sharding.mode == ShardingMode::kFsdp2 && f.fsdp2_copy_out_bytes_per_byte > 0 && hbm > 0) {
    const ParallelLayout& l = s.layout;
    // Per-rank shares are per pipeline stage; times PP, the rank's slice of the whole model.
    const double params = (t.traffic.NonExpertPerRank(l) + t.traffic.ExpertPerRank(l)) *
                          static_cast<double>(l.pp) * c.critical.layers;
    copy_fwd = params * GatherBytesPerParam(s) * f.fsdp2_copy_out_bytes_per_byte / hbm;
    copy_bwd = s.sharding.reshard_after_forward ? copy_fwd : 0.0;
  }
  o.eager_elementwise = Seconds::Of(eager_fwd + eager_bwd + eager_rec);
  o.fsdp2_copy_out = Seconds::Of(copy_fwd + copy_bwd);

  // GPU time of one layer per pass. With the expert loop the experts' GEMMs are counted against
  // the loop's own host time below, not against the layer's other ops.
  auto per_layer = [&](const KernelTimes& k) {
    Seconds gpu = k.total() - k.logits_and_loss - k.vision;
    if (loop) gpu -= k.expert_gemm;
    return gpu.s() / layers;
  };
  const double g_fwd = per_layer(c.forward) + (eager_fwd + copy_fwd) / layers;
  const double g_bwd = per_layer(c.backward) + (eager_bwd + copy_bwd) / layers;
  const double g_rec = rec > 0 ? (per_layer(c.recompute) + eager_rec / layers) / rec : 0.0;

  // Ops of one layer: forward; backward issues twice as many; the recompute, the forward's.
  const double gqa_share = n.gqa_layers / std::max(1.0, n.layers);
  const double ops = f.layer_ops + moe_share * f.moe_ops + gqa_share * f.gqa_repeat_ops;
  // Parameter fetch hooks, per layer and pass. DeepSpeed ZeRO-3's hooks walk the module's
  // parameters in every pass (forward, backward, the recompute's forward). FSDP2 gathers a unit
  // in forward and, when it was resharded after forward, again in backward; the recompute's
  // forward runs inside backward on the parameters already gathered (FSDPState's pre-forward
  // hook returns early while the unit is in backward), so it fetches nothing.
  const double zero3 = f.Zero3OpsPerParam(s.layout.dp) * n.params_per_layer;
  const double fsdp2 = f.fsdp2_ops_per_fetch > 0 || f.fsdp2_ops_per_param > 0
                           ? f.fsdp2_ops_per_fetch + f.fsdp2_ops_per_param * n.params_per_layer
                           : 0.0;
  const PassOps fetch{.forward = zero3 + fsdp2,
                      .backward = zero3 + (s.sharding.reshard_after_forward ? fsdp2 : 0.0),
                      .recompute = zero3};
  auto host_bound = [&](const PassOps& fetch_ops) {
    return layers * (Uncovered(ops + fetch_ops.forward, op, g_fwd) +
                     Uncovered(2 * ops + fetch_ops.backward, op, g_bwd) +
                     rec * Uncovered(ops + fetch_ops.recompute, op, g_rec)) +
           // After each host sync the GPU has nothing queued: one launch is exposed.
           moe_layers * f.moe_host_syncs * op * (1 + rec);
  };
  const double without_hooks = host_bound(PassOps{});
  o.host_bound_layers = Seconds::Of(without_hooks);
  o.fetch_hooks = Seconds::Of(host_bound(fetch) - without_hooks);

  if (loop) {
    // An expert loop: HF's waits for the GPU per expert (torch.where, a host sync), then issues
    // the expert's ops one by one; megatron-core's SequentialMLP splits the tokens by counts
    // already on the host (no sync). The GPU runs each expert's small GEMMs meanwhile. Backward
    // replays twice the ops from autograd's C++ engine, without syncs.
    const double experts =
        static_cast<double>(t.num_experts) / static_cast<double>(std::max<int64_t>(1, s.layout.ep));
    const double per_expert = moe_layers * experts;
    auto expert_gpu = [&](Seconds s_total) { return s_total.s() / per_expert; };
    const double k = f.expert_loop_ops;
    const double sync = f.expert_loop_syncs * op;  // the launch after each per-expert sync
    const double forward = Uncovered(k, op, expert_gpu(c.forward.expert_gemm)) + sync;
    const double backward = Uncovered(2 * k, op, expert_gpu(c.backward.expert_gemm));
    const double recompute =
        rec > 0 ? Uncovered(k, op, expert_gpu(c.recompute.expert_gemm) / rec) + sync : 0.0;
    o.expert_loop = Seconds::Of(per_expert * (forward + backward + rec * recompute));
  }

  if (!t.unfused_attention) {
    auto slower = [](Seconds time, double factor) {
      return factor > 0 && factor < 1 ? time.s() * (1 / factor - 1) : 0.0;
    };
    o.attention_backend = Seconds::Of(slower(c.forward.attention, f.attention_forward_factor) +
                                      slower(c.backward.attention, f.attention_backward_factor) +
                                      slower(c.recompute.attention, f.attention_forward_factor));
  }
  return o;
}

}  // namespace strata
