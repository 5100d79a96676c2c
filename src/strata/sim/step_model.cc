#include "strata/sim/step_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "strata/job/pipeline_split.h"
#include "strata/job/training_modes_parse.h"
#include "strata/model/flop_conventions.h"
#include "strata/sim/finalize_grads.h"
#include "strata/sim/framework_overhead.h"
#include "strata/sim/gdn_kernels.h"
#include "strata/sim/pipeline_bubble.h"
#include "strata/sim/step_placement.h"

namespace strata {
namespace {

constexpr std::array<std::string_view, kStepPartCount> kPartNames = {
    "forward compute",
    "backward compute",
    "recompute (forward again)",
    "MoE routing skew (busiest expert rank)",
    "TP communication",
    "CP K/V exchange",
    "EP all-to-all",
    "PP send/recv",
    "pipeline bubble",
    "variable-length stragglers",
    "replicated-gradient all-reduce (TP, shared embedding)",
    "DP gradient reduce",
    "DP parameter all-gather",
    "expert-DP gradient reduce",
    "expert-DP parameter all-gather",
    "optimizer step + gradient clipping",
    "CPU offload copies (PCIe)",
    "FP8 casts + transposes",
    "framework: host-bound layers",
    "framework: parameter fetch hooks",
    "framework: per-expert loop",
    "framework: attention backend",
    "framework: unfused elementwise ops",
    "framework: FSDP2 copy-out",
};

double Saturation(double d, double half) { return d / (d + half); }

struct GroupTotals {
  double tp = 0, cp = 0, ep = 0, pp = 0;
  double tp_grad = 0;  // TP's once-a-step all-reduce of replicated layers' gradients
  double dp_grad = 0, dp_param = 0, edp_grad = 0, edp_param = 0;
};

GroupTotals SumByGroup(const std::vector<PricedTraffic>& traffic) {
  GroupTotals g;
  for (const auto& p : traffic) {
    const double t = p.time_per_step.s();
    const bool param = p.item.op == CollectiveOp::kAllGather;
    switch (p.item.group) {
      case GroupKind::kTp:
      case GroupKind::kEtp:
        (p.item.frequency == TrafficFrequency::kPerStep ? g.tp_grad : g.tp) += t;
        break;
      case GroupKind::kCp:
        g.cp += t;
        break;
      case GroupKind::kEp:
        g.ep += t;
        break;
      case GroupKind::kPp:
        g.pp += t;
        break;
      case GroupKind::kDp:
      case GroupKind::kDpCp:
        (param ? g.dp_param : g.dp_grad) += t;
        break;
      case GroupKind::kExpertDp:
        (param ? g.edp_param : g.edp_grad) += t;
        break;
    }
  }
  return g;
}

// What of `total` stays on the critical path when it may hide behind `capacity` of compute.
double Exposed(double total, bool overlapped, double capacity) {
  return overlapped ? std::max(0.0, total - capacity) : total;
}

}  // namespace

std::string_view StepPartName(StepPart part) { return kPartNames[static_cast<size_t>(part)]; }

double GemmEfficiency(const KernelEfficiency& e, double m, double n, double k) {
  const double half = e.gemm_half_dim;
  return e.gemm_large * e.sustained_clock * Saturation(m, half) * Saturation(n, half) *
         Saturation(k, half);
}

double AttentionEfficiency(const KernelEfficiency& e, double tokens, bool backward) {
  return (backward ? e.attention_backward : e.attention_forward) * e.sustained_clock *
         Saturation(tokens, e.attention_half_seq);
}

UnfusedAttentionTimes UnfusedAttention(const StepTables& t, double rank_tokens,
                                       double hbm_bytes_per_s) {
  const KernelEfficiency& e = t.efficiency;
  UnfusedAttentionTimes u;
  const double scores = t.score_elements_per_token * rank_tokens;
  u.scores = scores;
  // QK^T reduces over the q.k width, AV produces the v width: 2 FLOP per multiply-add each.
  u.gemm_flop = 2 * scores * (t.score_head_dim + t.score_value_dim);
  const double s = t.score_row_tokens;
  u.gemm_efficiency = GemmEfficiency(e, s, s, t.score_head_dim);
  if (scores <= 0 || u.gemm_efficiency <= 0) return u;  // no softmax-attention layer
  const double dropout = t.attention_dropout > 0 ? 5.0 : 0.0;
  u.score_bytes_forward = 4 + dropout;
  u.score_bytes_backward = 6 + dropout;
  const double peak = t.peak.flop_per_s();
  u.forward = Seconds::Of(u.gemm_flop / (peak * u.gemm_efficiency) +
                          scores * u.score_bytes_forward / hbm_bytes_per_s);
  u.backward = Seconds::Of(2 * u.gemm_flop / (peak * u.gemm_efficiency) +
                           scores * u.score_bytes_backward / hbm_bytes_per_s);
  return u;
}

bool PpP2pOverlapped(const StepLayout& s) {
  if (s.overlap.pp_p2p_given) return s.overlap.pp_p2p;
  return s.megatron_core && s.layout.vpp > 1;
}

double BubbleFraction(int64_t pp, int64_t micro_batches, int64_t vpp) {
  if (pp <= 1) return 0;
  return static_cast<double>(pp - 1) / static_cast<double>(micro_batches * vpp);
}

double BubbleFractionOf(const ParallelLayout& l, int64_t micro_batches,
                        const MicroBatchCompute& c) {
  if (l.pp <= 1) return 0;
  const PipelineSchedule schedule = l.schedule();
  if (schedule == PipelineSchedule::k1F1B || schedule == PipelineSchedule::kInterleaved1F1B ||
      schedule == PipelineSchedule::kGpipe) {
    return BubbleFraction(l.pp, micro_batches,
                          l.schedule() == PipelineSchedule::kGpipe ? 1 : l.vpp);
  }
  const PassTimes passes{c.forward.total().s(),
                         c.backward.total().s() + c.recompute.total().s() + c.skew.s(),
                         c.weight_gradient.s()};
  return ScheduleBubbleFraction(l, micro_batches, passes);
}

StageShare CriticalStageOf(const ParallelLayout& l, int64_t layers,
                           const MicroBatchCompute& whole) {
  StageShare share;  // the last stage, with every layer
  if (l.pp <= 1 || layers <= 0) return share;
  auto without_logits = [](const KernelTimes& k) {
    return k.total() - k.logits_and_loss - k.vision;
  };
  const double stack = (without_logits(whole.forward) + without_logits(whole.backward) +
                        without_logits(whole.recompute))
                           .value();
  const double logits = (whole.forward.logits_and_loss + whole.backward.logits_and_loss).value();
  const StageExtremes stages = StageLayerExtremes(l, layers);
  const double n = static_cast<double>(layers);
  const double last = static_cast<double>(stages.last) / n;
  const double other = static_cast<double>(stages.max_other) / n;
  // Ties go to the last stage, which holds the output layer.
  const bool other_slower = other * stack > last * stack + logits;
  share.layers = other_slower ? other : last;
  share.last = !other_slower;
  return share;
}

double RoutingSkew(const KernelEfficiency& e, const StepLayout& s) {
  if (s.layout.ep <= 1) return 1;
  return s.moe_routing_skew > 0 ? s.moe_routing_skew : e.moe_routing_skew;
}

namespace {

// One micro batch of the stack in `t`, cut to `fixed` (a stage's own tables: nothing cut), or to
// the stage CriticalStageOf picks when none is given (a model with one layer kind).
MicroBatchCompute ComputeCut(const StepTables& t, const StepLayout& s, std::vector<GemmTerm>* gemms,
                             const StageShare* fixed) {
  const ParallelLayout& l = s.layout;
  const KernelEfficiency& e = t.efficiency;
  const double tp = static_cast<double>(l.tp);
  const double mbs = static_cast<double>(s.micro_batch);
  // Tokens of one micro batch on one rank (CP splits the sequence). The layers' times are first
  // summed over the whole stack (stage = 1), then cut to the critical stage (CriticalStageOf).
  const double tokens = mbs * t.mean_tokens / static_cast<double>(l.cp);
  const double sp_split = l.sequence_parallel ? tp : 1.0;
  const double peak = t.peak.flop_per_s();
  const double hbm = t.hbm.bytes_per_s() * e.hbm_efficiency;
  // FP8 recipes run the linear layers' GEMMs (dense and routed experts) on the FP8 tensor cores
  // at the same shape efficiency; the router, the output layer and attention stay in bf16.
  const double linear_peak = s.fp8.on() ? t.fp8_peak.flop_per_s() * e.fp8_gemm : peak;

  MicroBatchCompute c;
  KernelTimes& fwd = c.forward;
  KernelTimes& bwd = c.backward;
  double logits_gemm = 0;
  double weight_gradient = 0, logits_weight_gradient = 0;  // backward's weight-gradient GEMMs
  // Forward GEMM time by module kind, for selective recompute of named modules.
  std::array<double, kModuleKindCount> module_forward{};
  for (const GemmGroup& g : t.gemms) {
    // Dense, expert and output-layer GEMMs split their FLOP over TP; the router is replicated
    // over TP, and sequence parallelism gives each TP rank its share of the tokens.
    GemmTerm term;
    term.kind = g.kind;
    term.flop_per_token = g.flop_per_token;
    term.width = g.n;
    term.rows = tokens;
    term.split = tp;
    term.m = tokens;
    term.n = g.n / tp;
    term.k = g.k;
    term.efficiency = 1;
    switch (g.kind) {
      case GemmKind::kDense:
        // transformers' GDN module inside megatron-core: whole on every TP rank, over the
        // sequence gathered from the sequence-parallel region.
        if (g.module == ModuleKind::kLinearAttention && t.gdn_replicated) {
          term.split = 1;
          term.n = g.n;
        }
        break;
      case GemmKind::kRouter:
        term.rows = term.m = tokens / sp_split;
        term.split = 1;
        term.n = g.n;
        break;
      case GemmKind::kExpert:
        // Each local expert receives (tokens / TP) x ETP x top_k x EP / E tokens on average;
        // the FLOP per rank are the same whatever the EP x ETP split.
        term.m = tokens / tp * static_cast<double>(l.etp) * static_cast<double>(t.top_k * l.ep) /
                 static_cast<double>(std::max<int64_t>(t.num_experts, 1));
        term.n = g.n / static_cast<double>(l.etp);
        term.efficiency = e.grouped_gemm_factor;
        break;
      case GemmKind::kLogits:
        break;
    }
    // FP8 recipes run the linear layers (dense and routed experts); router and output layer
    // stay in bf16.
    term.fp8 = s.fp8.on() && (g.kind == GemmKind::kDense || g.kind == GemmKind::kExpert);
    term.peak = FlopPerSecond::Of(term.fp8 ? linear_peak : peak);
    term.flop = g.flop_per_token * term.rows / term.split;
    term.efficiency *= GemmEfficiency(e, term.m, term.n, term.k);
    term.time = Seconds::Of(term.flop / (term.peak.flop_per_s() * term.efficiency));
    if (gemms != nullptr) gemms->push_back(term);
    const double gemm_time = term.time.s();
    // Backward: the data gradient (the forward's FLOP) and, unless the module is frozen, the
    // weight gradient (as many again).
    const bool frozen = s.frozen[static_cast<size_t>(g.module)];
    const double backward = gemm_time * (frozen ? 1.0 : 2.0);
    if (!frozen)
      (g.kind == GemmKind::kLogits ? logits_weight_gradient : weight_gradient) += gemm_time;
    module_forward[static_cast<size_t>(g.module)] += gemm_time;
    switch (g.kind) {
      case GemmKind::kDense:
      case GemmKind::kRouter:
        fwd.dense_gemm += Seconds::Of(gemm_time);
        bwd.dense_gemm += Seconds::Of(backward);
        break;
      case GemmKind::kExpert:
        fwd.expert_gemm += Seconds::Of(gemm_time);
        bwd.expert_gemm += Seconds::Of(backward);
        break;
      case GemmKind::kLogits:
        logits_gemm += gemm_time;
        bwd.logits_and_loss += Seconds::Of(backward);
        break;
    }
  }
  // Full-span layers at the efficiency of E[S^2]/E[S] keys, sliding-window layers at that of
  // their window: a query tile amortises its fixed costs over the keys it attends.
  const double windowed_flop = t.windowed_attention_flop_per_token * tokens / tp;
  const double full_flop = t.attention_flop_per_token * tokens / tp - windowed_flop;
  // FLOP at the efficiency of `span` attended keys; the backward does twice the forward's FLOP.
  auto flash_time = [&](double flop, double span, bool backward) {
    if (flop <= 0) return Seconds::Of(0);
    return Seconds::Of((backward ? 2.0 : 1.0) * flop /
                       (peak * AttentionEfficiency(e, span, backward)));
  };
  Seconds windowed_forward = flash_time(windowed_flop, t.attention_window_tokens, false);
  Seconds windowed_backward = flash_time(windowed_flop, t.attention_window_tokens, true);
  fwd.attention = flash_time(full_flop, t.attention_tokens, false) + windowed_forward;
  Seconds attention_backward = flash_time(full_flop, t.attention_tokens, true) + windowed_backward;
  if (t.unfused_attention && t.score_elements_per_token > 0) {
    // The unfused kernel fills the whole S x S matrix, windowed layers too: all of it is S^2.
    windowed_forward = windowed_backward = Seconds::Of(0);
    const UnfusedAttentionTimes u = UnfusedAttention(t, tokens / tp, hbm);
    fwd.attention = u.forward;
    attention_backward = u.backward;
  }
  const LinearStateTimes linear = LinearStateKernelTimes(t, tokens, mbs, tp);
  fwd.gated_deltanet = linear.forward;
  const double gdn_split = t.gdn_replicated ? 1.0 : tp;
  // TP above the query groups: each rank works on one KV head, not kv / TP of one.
  const double extra_kv_heads =
      t.query_groups > 0 ? std::max(0.0, tp - static_cast<double>(t.query_groups)) : 0.0;
  fwd.memory_bound =
      Seconds::Of((t.replicated_bytes_per_token / sp_split +
                   (t.split_bytes_per_token + extra_kv_heads * t.kv_head_bytes_per_token) / tp +
                   t.gdn_bytes_per_token / gdn_split) *
                  tokens / hbm);
  const double loss =
      t.loss_bytes_per_vocab_entry * tokens * static_cast<double>(t.vocab) / tp / hbm;
  fwd.logits_and_loss = Seconds::Of(logits_gemm + loss / 3);

  // Backward: the GEMMs above (data and weight gradients), twice the forward's FLOP in the
  // kernels without weights and twice its memory traffic.
  bwd.attention = attention_backward;
  bwd.gated_deltanet = linear.backward;
  // The vision tower encodes the micro batch's images once, before the decoder (on the first
  // stage; counted on the critical one as an upper bound). Its GEMMs only: attention inside the
  // tower depends on the image size. Replicated over TP and CP; no recompute; no backward when
  // the tower is frozen (nothing before it needs a gradient).
  if (t.image_tokens_per_sample > 0 && t.vision_flop_per_patch > 0) {
    const double patches = mbs * t.image_tokens_per_sample * t.vision_patches_per_image_token;
    const double rate = peak * GemmEfficiency(e, patches, t.vision_hidden, t.vision_hidden);
    fwd.vision = Seconds::Of(patches * t.vision_flop_per_patch / rate);
    if (!s.frozen[static_cast<size_t>(ModuleKind::kVision)]) bwd.vision = fwd.vision * 2;
  }
  bwd.memory_bound = fwd.memory_bound * 2;
  bwd.logits_and_loss += Seconds::Of(2 * loss / 3);
  // Adapters: thin GEMMs (x A is tokens x r from d_in) at the efficiency of their r-wide shape;
  // backward computes their data and weight gradients. QLoRA dequantises each base weight in
  // forward and in backward (and again in recompute, which re-runs the forward): memory-bound.
  // The routed experts' adapters run as grouped GEMMs over each local expert's tokens
  // (mcore-bridge's TEGroupedLinear A and B), priced as the experts' own GEMMs are.
  // Adapters on a Gated DeltaNet every TP rank runs whole (gdn_split 1) run whole as well.
  if (t.adapter_flop_per_token > 0) {
    const double rate =
        peak * GemmEfficiency(e, tokens, t.adapter_rank, static_cast<double>(t.hidden));
    const double gdn_flop = t.adapter_gdn_flop_per_token * tokens + t.adapter_gdn_flop_per_forward;
    const double dense_flop =
        (t.adapter_flop_per_token - t.adapter_expert_flop_per_token) * tokens +
        t.adapter_flop_per_forward - gdn_flop;
    const double adapter = (dense_flop / tp + gdn_flop / gdn_split) / rate;
    c.adapter.dense_flop = dense_flop / tp + gdn_flop / gdn_split;
    c.adapter.dense_efficiency = rate / peak;
    c.adapter.dense = Seconds::Of(adapter);
    fwd.dense_gemm += Seconds::Of(adapter);
    bwd.dense_gemm += Seconds::Of(2 * adapter);
    weight_gradient += adapter;
    if (t.adapter_expert_flop_per_token > 0) {
      const double expert_rows = tokens / tp * static_cast<double>(l.etp) *
                                 static_cast<double>(t.top_k * l.ep) /
                                 static_cast<double>(std::max<int64_t>(t.num_experts, 1));
      const double expert_rate =
          peak * e.grouped_gemm_factor *
          GemmEfficiency(e, expert_rows, t.adapter_rank, static_cast<double>(t.hidden));
      const double expert = t.adapter_expert_flop_per_token * tokens / tp / expert_rate;
      c.adapter.expert_flop = t.adapter_expert_flop_per_token * tokens / tp;
      c.adapter.expert_efficiency = expert_rate / peak;
      c.adapter.expert = Seconds::Of(expert);
      fwd.expert_gemm += Seconds::Of(expert);
      bwd.expert_gemm += Seconds::Of(2 * expert);
      weight_gradient += expert;
    }
  }
  if (t.dequant_bytes_per_pass > 0) {
    c.adapter.dequant_bytes = (t.dequant_bytes_per_pass - t.dequant_gdn_bytes_per_pass) / tp +
                              t.dequant_gdn_bytes_per_pass / gdn_split;
    const Seconds dequant = Seconds::Of(c.adapter.dequant_bytes / hbm);
    c.adapter.dequant = dequant;
    fwd.memory_bound += dequant;
    bwd.memory_bound += dequant;
  }

  // Recompute re-runs the forward of what it dropped: the layers (not the output layer) for
  // full recompute, core attention for selective.
  KernelTimes& rec = c.recompute;
  Seconds windowed_recompute;
  if (s.recompute == RecomputeGranularity::kFull) {
    const double f = s.recompute_layer_fraction;
    windowed_recompute = windowed_forward * f;
    rec.dense_gemm = fwd.dense_gemm * f;
    rec.expert_gemm = fwd.expert_gemm * f;
    rec.attention = fwd.attention * f;
    rec.gated_deltanet = fwd.gated_deltanet * f;
    rec.memory_bound = fwd.memory_bound * f;
  } else if (s.op_sac && s.recompute == RecomputeGranularity::kSelective) {
    // torchtitan's op-level SAC keeps SDPA's output and every other block matmul; backward
    // re-runs the other matmuls (by FLOP share), the routed experts (grouped_mm is not on the
    // save list) and every memory-bound op.
    rec.dense_gemm = fwd.dense_gemm * t.op_sac_matmul_recompute_fraction;
    rec.expert_gemm = fwd.expert_gemm;
    rec.memory_bound = fwd.memory_bound;
  } else if (s.recompute == RecomputeGranularity::kSelective) {
    // megatron-core --recompute-modules: each named module re-runs its own forward.
    const RecomputeModules& r = s.recompute_modules;
    auto module = [&](ModuleKind k) { return module_forward[static_cast<size_t>(k)]; };
    if (r.core_attn) {
      rec.attention = fwd.attention;
      windowed_recompute = windowed_forward;
    }
    double gemm = 0;
    if (r.mlp) gemm += module(ModuleKind::kDenseMlp);
    if (r.moe) gemm += module(ModuleKind::kRouter) + module(ModuleKind::kSharedExperts);
    if (r.shared_experts && !r.moe) gemm += module(ModuleKind::kSharedExperts);
    if (r.mla_up_proj) gemm += module(ModuleKind::kAttention) * t.mla_up_proj_fraction;
    rec.dense_gemm = Seconds::Of(gemm);
    if (r.moe) rec.expert_gemm = fwd.expert_gemm;
    const double replicated = (r.layernorm ? t.norm_bytes_per_token : 0.0) +
                              (r.moe ? t.moe_dispatch_bytes_per_token : 0.0);
    const double split = (r.mlp ? t.dense_mlp_act_bytes_per_token : 0.0) +
                         (r.moe || r.moe_act ? t.routed_act_bytes_per_token : 0.0) +
                         (r.moe || r.shared_experts ? t.shared_act_bytes_per_token : 0.0);
    rec.memory_bound = Seconds::Of((replicated / sp_split + split / tp) * tokens / hbm);
  }
  c.output_layer = fwd.logits_and_loss + bwd.logits_and_loss;
  const StageShare critical = fixed != nullptr ? *fixed : CriticalStageOf(l, t.layers, c);
  c.critical = critical;
  // A stage's own tables hold its layers already (and the output layer only where it is).
  const double cut = critical.own ? 1.0 : critical.layers;
  for (KernelTimes* k : {&fwd, &bwd, &rec}) {
    k->dense_gemm = k->dense_gemm * cut;
    k->expert_gemm = k->expert_gemm * cut;
    k->attention = k->attention * cut;
    k->gated_deltanet = k->gated_deltanet * cut;
    k->memory_bound = k->memory_bound * cut;
    if (!critical.last) k->logits_and_loss = Seconds::Of(0);
  }
  c.skew = (fwd.expert_gemm + bwd.expert_gemm + rec.expert_gemm) * (RoutingSkew(e, s) - 1);
  c.weight_gradient =
      Seconds::Of(weight_gradient * cut + (critical.last ? logits_weight_gradient : 0.0));
  c.windowed_attention = (windowed_forward + windowed_backward + windowed_recompute) * cut;
  return c;
}

Seconds ComputeTotal(const MicroBatchCompute& c) {
  return c.forward.total() + c.backward.total() + c.recompute.total() + c.skew;
}

}  // namespace

std::vector<double> OneKindRankMicroBatches(const ParallelLayout& l, int64_t layers,
                                            const MicroBatchCompute& c, double critical_s) {
  if (l.pp <= 1 || layers <= 0) return {};
  const std::vector<int64_t> counts = StageLayerCounts(l, layers);
  const auto output = static_cast<size_t>(l.output_stage());
  // The rank CriticalStageOf picked: the output rank, or the first other rank with the most
  // layers.
  size_t critical = output;
  if (!c.critical.last) {
    bool found = false;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (i == output) continue;
      if (!found || counts[i] > counts[critical]) critical = i;
      found = true;
    }
  }
  const double output_s = c.output_layer.s();
  const double vision_s = (c.forward.vision + c.backward.vision).value();
  const double critical_layers = static_cast<double>(std::max<int64_t>(1, counts[critical]));
  const double per_layer_s =
      std::max(0.0, critical_s - (c.critical.last ? output_s : 0.0) - vision_s) / critical_layers;
  std::vector<double> out(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    out[i] = i == critical ? critical_s
                           : per_layer_s * static_cast<double>(counts[i]) +
                                 (i == output ? output_s : 0.0) + (i == 0 ? vision_s : 0.0);
  }
  return out;
}

MicroBatchCompute ComputeStageMicroBatch(const StepTables& stage_tables, const StepLayout& s,
                                         const StageComposition& stage, int64_t model_layers,
                                         std::vector<GemmTerm>* gemms) {
  StageShare share;
  share.layers =
      static_cast<double>(stage.layers) / static_cast<double>(std::max<int64_t>(1, model_layers));
  // An MTP block's output layer and loss run where the block is (a layout string may put it
  // on a stage of its own).
  share.last = stage.output || stage.mtp_layers > 0;
  share.own = true;
  share.composition = stage;
  return ComputeCut(stage_tables, s, gemms, &share);
}

std::pair<double, double> StageParamWeights(const StepTables& t, const ParallelLayout& l,
                                            const StageComposition& stage) {
  const StepTables::StageParams& p = t.stage_params;
  if (p.kind_non_expert.size() != stage.kind_layers.size()) return {1.0, 1.0};
  double own = 0, own_expert = 0, all = 0, all_expert = 0;
  for (size_t k = 0; k < p.kind_non_expert.size(); ++k) {
    const auto n = static_cast<double>(stage.kind_layers[k]);
    const auto count = static_cast<double>(t.layer_kinds.count[k]);
    own += n * p.kind_non_expert[k];
    own_expert += n * p.kind_expert[k];
    all += count * p.kind_non_expert[k];
    all_expert += count * p.kind_expert[k];
  }
  const double tied = l.pp > 1 ? p.tied_copy : 0.0;
  own += (stage.embedding ? p.embedding : 0.0) + (stage.output ? p.output + tied : 0.0) +
         static_cast<double>(stage.mtp_layers) * p.mtp_non_expert;
  own_expert += static_cast<double>(stage.mtp_layers) * p.mtp_expert;
  const auto mtp = static_cast<double>(t.mtp_layers);
  all += p.embedding + p.output + tied + mtp * p.mtp_non_expert;
  all_expert += mtp * p.mtp_expert;
  const auto pp = static_cast<double>(std::max<int64_t>(1, l.pp));
  return {all > 0 ? own * pp / all : 1.0, all_expert > 0 ? own_expert * pp / all_expert : 1.0};
}

bool PricesStages(const StepTables& t, const ParallelLayout& l) {
  return !t.kind_sums.empty() && (l.pp > 1 || t.mtp_layers > 0);
}

std::vector<StageComposition> StageCandidates(const StepTables& t, const ParallelLayout& l) {
  // One stage holds every layer: the whole model's tables are its own, unless the MTP blocks
  // (which the whole model's tables leave out) are built.
  if (!PricesStages(t, l)) return {};
  std::vector<StageComposition> all = StageCompositions(l, t.layer_kinds, t.mtp_layers);
  std::vector<StageComposition> out;
  out.push_back(all[static_cast<size_t>(l.pp <= 1 ? 0 : l.output_stage())]);
  for (const StageComposition& stage : all) {
    if (std::find(out.begin(), out.end(), stage) == out.end()) out.push_back(stage);
  }
  return out;
}

MicroBatchCompute ComputeMicroBatch(const StepTables& t, const StepLayout& s,
                                    std::vector<GemmTerm>* gemms) {
  const std::vector<StageComposition> stages = StageCandidates(t, s.layout);
  if (stages.empty()) {
    MicroBatchCompute c = ComputeCut(t, s, gemms, nullptr);
    // One kind at PP > 1: the bubble counts the other ranks' micro batches (EvaluateStepOn),
    // the least of which bounds it from below.
    const std::vector<double> ranks =
        OneKindRankMicroBatches(s.layout, t.layers, c, ComputeTotal(c).s());
    if (!ranks.empty()) c.least_stage_compute = Seconds::Of(*std::ranges::min_element(ranks));
    return c;
  }
  // 1F1B runs at the pace of the slowest stage: price each distinct one by its own layers.
  // Ties go to the output stage (the first candidate).
  MicroBatchCompute best;
  size_t best_index = 0;
  Seconds least;
  for (size_t i = 0; i < stages.size(); ++i) {
    MicroBatchCompute c =
        ComputeStageMicroBatch(StageTables(t, stages[i]), s, stages[i], t.layers, nullptr);
    if (i == 0 || ComputeTotal(c) < least) least = ComputeTotal(c);
    if (i == 0 || ComputeTotal(c) > ComputeTotal(best)) {
      best = std::move(c);
      best_index = i;
    }
  }
  best.least_stage_compute = least;
  if (gemms != nullptr) {
    ComputeStageMicroBatch(StageTables(t, stages[best_index]), s, stages[best_index], t.layers,
                           gemms);
  }
  return best;
}

Seconds StepComputeBound(const StepTables& t, const StepLayout& s) {
  const MicroBatchCompute c = ComputeMicroBatch(t, s);
  const double m = static_cast<double>(s.micro_batches);
  const double compute_mb =
      (c.forward.total() + c.backward.total() + c.recompute.total() + c.skew).value();
  // forward + backward + recompute + skew rows, and the bubble's share of the compute alone:
  // with stages priced apart, the bubble counts the other ranks' micro batches
  // (OtherRanksMicroBatch), each at least the least compute of a stage.
  const double bubble_mb =
      c.least_stage_compute.s() > 0 ? std::min(compute_mb, c.least_stage_compute.s()) : compute_mb;
  return Seconds::Of(m * compute_mb +
                     BubbleFractionOf(s.layout, s.micro_batches, c) * m * bubble_mb);
}

double TrainedFlopAdjustmentPerToken(const StepTables& t,
                                     const std::array<bool, kModuleKindCount>& frozen) {
  // A frozen GEMM's weight gradient is FLOP the job does not need (and the step does not run):
  // counting it would credit an adapter job with a third of its base model's work undone.
  double frozen_weight_gradient = 0;
  for (const GemmGroup& group : t.gemms)
    if (frozen[static_cast<size_t>(group.module)]) frozen_weight_gradient += group.flop_per_token;
  return 3 * t.adapter_flop_per_token - frozen_weight_gradient;
}

Result<StepResult> EvaluateStep(const StepTables& t, const StepLayout& s,
                                const CollectiveModel& comm) {
  // The group shapes from the layout alone when node-aligned (the planner's common case);
  // otherwise enumerate the ranks.
  std::optional<std::vector<GroupPlacement>> aligned =
      AlignedGroupShapes(s.layout, comm.cluster().gpus_per_node);
  if (!aligned) {
    STRATA_ASSIGN_OR_RETURN(aligned, PlaceGroups(s.layout, comm.cluster().gpus_per_node));
  }
  return EvaluateStepOn(t, s, comm, *aligned);
}

TrafficInputs StepTrafficInputs(const StepTables& t, const StepLayout& s, const StageShare* stage) {
  TrafficInputs ti;
  if (stage == nullptr && PricesStages(t, s.layout)) {
    const StageShare picked = ComputeMicroBatch(t, s).critical;
    return StepTrafficInputs(t, s, &picked);
  }
  if (stage != nullptr && stage->own) {
    const StageComposition& c = stage->composition;
    ti.stage = StageLayerMix{c.layers, c.moe_layers, c.dense_ffn_layers, c.full_attention_layers,
                             c.softmax_attention_layers};
    if (s.layout.pp > 1) {
      const auto [non_expert, expert] = StageParamWeights(t, s.layout, c);
      ti.non_expert_param_weight = non_expert;
      ti.expert_param_weight = expert;
    }
    // An MTP block's decoder layer issues a layer's collectives (its TP, CP and EP traffic).
    if (c.mtp_layers > 0 && t.mtp_sums != nullptr) {
      const ModelTrafficShape& m = t.mtp_sums->traffic;
      const int64_t n = c.mtp_layers;
      ti.stage->layers += n;
      ti.stage->moe_layers += m.moe_layers > 0 ? n : 0;
      ti.stage->dense_ffn_layers += m.dense_ffn_layers > 0 ? n : 0;
      ti.stage->full_attention_layers += m.full_attention_layers > 0 ? n : 0;
      ti.stage->softmax_attention_layers += m.softmax_attention_layers > 0 ? n : 0;
    }
  }
  ti.layout = s.layout;
  ti.micro_batch = s.micro_batch;
  ti.tokens_per_sample = t.mean_tokens;
  ti.micro_batches_per_step = s.micro_batches;
  ti.activation_bytes = s.activation_bytes;
  ti.param_bytes = s.param_bytes;
  ti.grad_bytes = s.grad_bytes;
  ti.distributed_optimizer = s.distributed_optimizer;
  ti.full_recompute = s.recompute == RecomputeGranularity::kFull;
  ti.recompute_layer_fraction = s.recompute_layer_fraction;
  ti.moe_recompute = s.recompute == RecomputeGranularity::kSelective && s.recompute_modules.moe;
  ti.sp_regathers_input = s.megatron_core;
  return ti;
}

Result<StepResult> EvaluateStepOn(const StepTables& t, const StepLayout& s,
                                  const CollectiveModel& comm,
                                  const std::vector<GroupPlacement>& groups, Detail detail,
                                  PricingCache* cache) {
  const bool explain = detail == Detail::kExplained;
  const ParallelLayout& l = s.layout;
  const KernelEfficiency& e = t.efficiency;
  const double pp = static_cast<double>(l.pp);
  const double m = static_cast<double>(s.micro_batches);
  const double mbs = static_cast<double>(s.micro_batch);
  const double tokens = mbs * t.mean_tokens / static_cast<double>(l.cp);
  const double stage = 1.0 / pp;
  const double peak = t.peak.flop_per_s();
  const double hbm = t.hbm.bytes_per_s() * e.hbm_efficiency;
  if (s.fp8.on() && t.fp8_peak.flop_per_s() <= 0) {
    return InvalidInput(fmt::format("FP8 recipe {} on {}, which has no FP8 tensor cores",
                                    Fp8RecipeName(s.fp8.recipe), t.gpu_name))
        .InField("precision.fp8")
        .WithHint("remove precision.fp8 (bf16 GEMMs) or choose a GPU with FP8 (Hopper or later)");
  }

  // One stage's micro batch: its compute, its traffic (the per-layer collectives of its own
  // layers), the framework's costs and the exposed communication. `st`: the tables the compute
  // came from (the whole model's, or the stage's own: StageTables).
  const bool sharded_dp = ShardingOwnsDpTraffic(s);
  struct PricedStage {
    StepResult r;
    MicroBatchCompute c;
    GroupTotals g;
    std::vector<PricedTraffic> sharded;
  };
  auto price_stage = [&](const StepTables& st, MicroBatchCompute c, PricedStage& p) -> Status {
    StepResult& r = p.r;
    r.critical_stage = c.critical;
    r.output_layer = c.output_layer;
    r.rank_tokens = tokens;
    r.forward = c.forward;
    r.backward = c.backward;
    r.recompute = c.recompute;
    const KernelTimes& fwd = r.forward;
    const KernelTimes& bwd = r.backward;
    const KernelTimes& rec = r.recompute;
    const Seconds skew_mb = c.skew;
    const Seconds compute_mb = fwd.total() + bwd.total() + rec.total() + skew_mb;
    // Communication, priced on the bandwidth map by the collective model.
    STRATA_ASSIGN_OR_RETURN(
        r.traffic,
        PriceTraffic(LayoutTraffic(t.traffic, StepTrafficInputs(t, s, &c.critical), detail), groups,
                     comm, detail, cache));
    // ZeRO-2/3, FSDP2 and HSDP replace megatron-core's once-per-step DP traffic (step_modes.h).
    if (sharded_dp) {
      std::erase_if(r.traffic, [](const PricedTraffic& q) {
        return q.item.group == GroupKind::kDp || q.item.group == GroupKind::kDpCp ||
               q.item.group == GroupKind::kExpertDp;
      });
      STRATA_ASSIGN_OR_RETURN(p.sharded,
                              PriceShardedTraffic(t.traffic, s, groups, comm, detail, cache));
    }
    p.g = SumByGroup(r.traffic);
    const GroupTotals& g = p.g;
    r.traffic.insert(r.traffic.end(), p.sharded.begin(), p.sharded.end());

    const Seconds dense_mb = fwd.dense_gemm + bwd.dense_gemm + rec.dense_gemm;
    const Seconds attention_mb = fwd.attention + bwd.attention + rec.attention;
    const Seconds expert_mb = fwd.expert_gemm + bwd.expert_gemm + rec.expert_gemm + skew_mb;
    auto set = [&](StepPart part, double total, double exposed) {
      r[part] = {Seconds::Of(total), Seconds::Of(exposed)};
    };
    // Async TP hides TP traffic behind the dense GEMMs, but at most async_tp_max_step_saving of
    // the micro batches' compute and TP traffic (published gains: data/kernel_efficiency.yaml).
    const double tp_hidden = std::min(g.tp - Exposed(g.tp, s.overlap.tp_comm, m * dense_mb.s()),
                                      e.async_tp_max_step_saving * (m * compute_mb.s() + g.tp));
    set(StepPart::kTp, g.tp, g.tp - tp_hidden);
    // A ring (p2p) exchange hides behind the attention of the chunk in hand, step after step. An
    // all-gather of K/V is waited for after the first, local, chunk's attention (PyTorch's
    // _AllGatherRotater, torchtitan's default; Transformer Engine's all_gather variant gathers
    // before it), so only that 1 / CP of attention can cover it (audit55 Q5).
    const double cp_cover =
        l.cp_comm_type == CpCommType::kAllGather ? 1.0 / static_cast<double>(l.cp) : 1.0;
    set(StepPart::kCp, g.cp, Exposed(g.cp, s.overlap.cp_comm, m * attention_mb.s() * cp_cover));
    // The all-to-all ends when the busiest EP rank has received its tokens (dispatch) and sent
    // their outputs back (combine): skew x the mean rank's bytes, as its expert GEMMs are.
    const double ep_busiest = g.ep * RoutingSkew(e, s);
    set(StepPart::kEp, ep_busiest,
        Exposed(ep_busiest, s.overlap.moe_a2a, m * (compute_mb - expert_mb).value()));
    set(StepPart::kPp, g.pp, Exposed(g.pp, PpP2pOverlapped(s), m * compute_mb.s()));
    const double comm_mb = (r[StepPart::kTp].exposed + r[StepPart::kCp].exposed +
                            r[StepPart::kEp].exposed + r[StepPart::kPp].exposed)
                               .value() /
                           m;
    // The framework's costs stretch each micro batch, so the bubble and stragglers carry them.
    r.framework = ComputeFrameworkOverhead(st, s, c);
    r.micro_batch = compute_mb + r.framework.total() + Seconds::Of(comm_mb);
    set(StepPart::kFrameworkHostBound, m * r.framework.host_bound_layers.s(),
        m * r.framework.host_bound_layers.s());
    set(StepPart::kFrameworkFetchHooks, m * r.framework.fetch_hooks.s(),
        m * r.framework.fetch_hooks.s());
    set(StepPart::kFrameworkExpertLoop, m * r.framework.expert_loop.s(),
        m * r.framework.expert_loop.s());
    set(StepPart::kFrameworkAttention, m * r.framework.attention_backend.s(),
        m * r.framework.attention_backend.s());
    set(StepPart::kFrameworkEagerOps, m * r.framework.eager_elementwise.s(),
        m * r.framework.eager_elementwise.s());
    set(StepPart::kFrameworkFsdp2CopyOut, m * r.framework.fsdp2_copy_out.s(),
        m * r.framework.fsdp2_copy_out.s());

    set(StepPart::kForward, m * fwd.total().s(), m * fwd.total().s());
    set(StepPart::kBackward, m * bwd.total().s(), m * bwd.total().s());
    set(StepPart::kRecompute, m * rec.total().s(), m * rec.total().s());
    set(StepPart::kMoeImbalance, m * skew_mb.s(), m * skew_mb.s());
    p.c = std::move(c);
    return OkStatus();
  };

  PricedStage chosen;
  // Each rank's data-parallel sync and the passes it hides behind (stages priced apart only).
  struct RankSync {
    double dp_grad = 0, edp_grad = 0, dp_param = 0, edp_param = 0;
    double backward = 0, forward = 0;  // one micro batch's compute (backward with recompute)
    double layers = 1;                 // decoder and MTP layers: megatron-core's buckets
  };
  std::vector<RankSync> rank_sync;
  const std::vector<StageComposition> stages = StageCandidates(t, l);
  if (stages.empty()) {
    // One layer kind: the stage CriticalStageOf picks, the stack's times cut to its share.
    STRATA_RETURN_IF_ERROR(
        price_stage(t, ComputeMicroBatch(t, s, explain ? &chosen.r.gemms : nullptr), chosen));
    // The 1F1B timeline fills and drains through every other rank once, each at its own layer
    // count (an uneven split's short ranks, the output rank's loss): OtherRanksMicroBatch.
    const std::vector<double> ranks =
        OneKindRankMicroBatches(l, t.layers, chosen.c, chosen.r.micro_batch.s());
    if (!ranks.empty()) chosen.r.bubble_micro_batch = Seconds::Of(OtherRanksMicroBatch(ranks));
  } else {
    // Several kinds (first_k_dense, hybrids): 1F1B runs at the pace of the slowest stage, so
    // each distinct stage is priced by its own layers (compute, its layers' collectives, the
    // framework's per-layer costs) and the slowest micro batch sets the step. Ties go to the
    // output stage (the first candidate).
    size_t best = 0;
    std::vector<StepResult::StageTime> times;
    std::vector<StepTables> tables;
    std::vector<double> candidate_s;  // each candidate's micro batch
    std::vector<RankSync> candidate_sync;
    tables.reserve(stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
      tables.push_back(StageTables(t, stages[i]));
      PricedStage p;
      STRATA_RETURN_IF_ERROR(price_stage(
          tables.back(), ComputeStageMicroBatch(tables.back(), s, stages[i], t.layers), p));
      if (explain) times.push_back({stages[i], p.r.micro_batch});
      candidate_s.push_back(p.r.micro_batch.s());
      candidate_sync.push_back(
          {p.g.dp_grad, p.g.edp_grad, p.g.dp_param, p.g.edp_param,
           (p.r.backward.total() + p.r.recompute.total()).value(), p.r.forward.total().s(),
           std::max(1.0, static_cast<double>(stages[i].layers + stages[i].mtp_layers))});
      if (i == 0 || p.r.micro_batch > chosen.r.micro_batch) {
        chosen = std::move(p);
        best = i;
      }
    }
    if (explain) {
      ComputeStageMicroBatch(tables[best], s, stages[best], t.layers, &chosen.r.gemms);
      chosen.r.stage_times = std::move(times);
    }
    // The bubble fills and drains through every other rank once (OtherRanksMicroBatch): each
    // rank's micro batch is that of the candidate with its composition.
    chosen.r.bubble_micro_batch = chosen.r.micro_batch;
    if (stages.size() > 1 && l.pp > 1) {
      std::vector<double> rank_s;
      for (const StageComposition& rank : StageCompositions(l, t.layer_kinds, t.mtp_layers)) {
        const auto it = std::find(stages.begin(), stages.end(), rank);
        rank_s.push_back(candidate_s[static_cast<size_t>(it - stages.begin())]);
        rank_sync.push_back(candidate_sync[static_cast<size_t>(it - stages.begin())]);
      }
      chosen.r.bubble_micro_batch = Seconds::Of(OtherRanksMicroBatch(rank_s));
    }
  }
  StepResult r = std::move(chosen.r);
  const MicroBatchCompute& c = chosen.c;
  const GroupTotals& g = chosen.g;
  const std::vector<PricedTraffic>& sharded = chosen.sharded;
  if (explain && s.op_sac && s.recompute == RecomputeGranularity::kSelective &&
      (s.layout.tp > 1 || s.layout.ep > 1)) {
    r.caveats.push_back(
        "op-level SAC also re-runs the TP all-gathers and EP all-to-alls of the ops it "
        "recomputes; that traffic is not priced");
  }
  const KernelTimes& fwd = r.forward;
  const KernelTimes& bwd = r.backward;
  const KernelTimes& rec = r.recompute;
  const Seconds attention_mb = fwd.attention + bwd.attention + rec.attention;
  auto set = [&](StepPart part, double total, double exposed) {
    r[part] = {Seconds::Of(total), Seconds::Of(exposed)};
  };

  // The schedule's bubble in micro-batch times (1F1B: p - 1; interleaved: (p - 1) / v; the
  // zero-bubble schedules fill part of it with weight gradients): pipeline_bubble.h.
  r.weight_gradient = c.weight_gradient;
  r.adapter = c.adapter;
  r.bubble_fraction = BubbleFractionOf(l, s.micro_batches, c);
  if (r.bubble_micro_batch.s() <= 0) r.bubble_micro_batch = r.micro_batch;
  const double bubble = r.bubble_fraction * m * r.bubble_micro_batch.s();
  set(StepPart::kBubble, bubble, bubble);

  // Stragglers: a rank's micro batches cost a S + b S^2 per sample; the step waits for the
  // slowest of the DP ranks. docs/formulas.md, "Stragglers".
  double straggler = 0;
  if (t.lengths.length_tokens.size() > 1 && l.dp > 1) {
    // Only the full-span layers' attention grows with S^2; a window's grows with S. The
    // framework's host costs are per layer, the same on every rank whatever its lengths.
    const Seconds quadratic = attention_mb - c.windowed_attention + r.framework.attention_backend;
    const Seconds per_sample = r.micro_batch - r.framework.fixed();
    const double b = quadratic.s() / (mbs * t.lengths.moment[2]);
    const double a = (per_sample - quadratic).value() / (mbs * t.lengths.moment[1]);
    const double worst = ExpectedMaxWork(t.lengths, a, b, s.micro_batches * s.micro_batch, l.dp);
    straggler = std::max(0.0, worst - m * per_sample.s());
  }
  set(StepPart::kStraggler, straggler, straggler);

  // DP synchronisation: with overlap, megatron-core reduces layer by layer behind the last
  // micro batch's backward (and gathers behind the next forward); one layer's chunk stays
  // exposed.
  const double layers_per_stage = std::max(1.0, static_cast<double>(t.layers) / pp);
  auto sync = [&](StepPart dp_part, double dp, StepPart edp_part, double edp, bool overlapped,
                  double capacity) {
    const double total = dp + edp;
    double exposed = total;
    if (overlapped) exposed = std::max(total / layers_per_stage, total - capacity);
    const double share = total > 0 ? exposed / total : 0;
    set(dp_part, dp, dp * share);
    set(edp_part, edp, edp * share);
  };
  // Stages priced apart: each rank reduces its own gradients, behind its own last backward.
  // Under 1F1B the last micro batch's backward runs from the last rank back to the first, so
  // rank r's ends sum_{j<r} B_j (of one chunk: B_j / v interleaved) before the first rank's,
  // and its sync has that lead: the step waits for max_r (exposed_r - lead_r), the first
  // rank's when the ranks are alike. The parameter all-gather mirrors it before the next
  // step's first forward, which reaches rank r sum_{j<r} F_j / v after rank 0.
  auto sync_per_rank = [&](StepPart dp_part, StepPart edp_part, bool grad, bool overlapped) {
    const double v = static_cast<double>(std::max<int64_t>(1, l.vpp));
    double lead = 0, worst_tail = 0, worst_lead = 0;
    size_t worst = 0;
    for (size_t i = 0; i < rank_sync.size(); ++i) {
      const RankSync& x = rank_sync[i];
      const double total = grad ? x.dp_grad + x.edp_grad : x.dp_param + x.edp_param;
      const double capacity = grad ? x.backward : x.forward;
      const double exposed = overlapped ? std::max(total / x.layers, total - capacity) : total;
      const double tail = std::max(0.0, exposed - lead);
      if (i == 0 || tail > worst_tail) {
        worst_tail = tail;
        worst = i;
        worst_lead = lead;
      }
      lead += capacity / v;
    }
    const RankSync& w = rank_sync[worst];
    const double dp = grad ? w.dp_grad : w.dp_param, edp = grad ? w.edp_grad : w.edp_param;
    const double share = dp + edp > 0 ? worst_tail / (dp + edp) : 0;
    set(dp_part, dp, dp * share);
    set(edp_part, edp, edp * share);
    if (grad) {
      r.grad_sync_rank = static_cast<int64_t>(worst);
      r.grad_sync_lead = Seconds::Of(worst_lead);
    }
  };
  if (sharded_dp) {
    const GroupTotals sg = SumByGroup(sharded);
    const ShardedExposure x =
        ExposeShardedTraffic(sharded, s, layers_per_stage, fwd.total(), bwd.total() + rec.total());
    set(StepPart::kDpGrad, sg.dp_grad, x.dp_grad);
    set(StepPart::kDpParam, sg.dp_param, x.dp_param);
    set(StepPart::kExpertDpGrad, sg.edp_grad, x.edp_grad);
    set(StepPart::kExpertDpParam, sg.edp_param, x.edp_param);
  } else if (rank_sync.size() > 1) {
    sync_per_rank(StepPart::kDpGrad, StepPart::kExpertDpGrad, true, s.overlap.grad_reduce);
    sync_per_rank(StepPart::kDpParam, StepPart::kExpertDpParam, false, s.overlap.param_gather);
  } else {
    sync(StepPart::kDpGrad, g.dp_grad, StepPart::kExpertDpGrad, g.edp_grad, s.overlap.grad_reduce,
         (bwd.total() + rec.total()).value());
    sync(StepPart::kDpParam, g.dp_param, StepPart::kExpertDpParam, g.edp_param,
         s.overlap.param_gather, fwd.total().s());
  }

  // Adam over the local shard: read and write master weights and both moments, read the
  // gradient twice (clipping norm, update), write the bf16 weights.
  // The trained parameters only: a frozen module or an adapter's base has no optimizer state.
  const double non_expert = t.traffic.TrainableNonExpertPerRank(l);
  const double expert = t.traffic.TrainableExpertPerRank(l);
  // HSDP shards over the shard group only (DP / replicate).
  const double replicate = static_cast<double>(std::max<int64_t>(1, s.sharding.replicate));
  auto local_params = [&](double non_expert_weight, double expert_weight) {
    const double own_non_expert = non_expert * non_expert_weight;
    const double own_expert = expert * expert_weight;
    return s.distributed_optimizer
               ? own_non_expert * replicate / static_cast<double>(l.dp * l.cp) +
                     own_expert * replicate /
                         static_cast<double>(std::max<int64_t>(l.expert_dp(), 1))
               : own_non_expert + own_expert;
  };
  // Muon reads and writes one momentum on the hidden matrices, AdamW two moments on the rest.
  const double trainable =
      static_cast<double>(
          t.traffic.trainable_non_expert_params.value_or(t.traffic.non_expert_params)) +
      static_cast<double>(t.traffic.trainable_expert_params.value_or(t.traffic.expert_params));
  const double adamw_share =
      s.muon && trainable > 0 ? std::max(0.0, 1.0 - t.muon_matrix_params / trainable) : 1.0;
  const double moment_rw =
      (s.muon ? 2.0 * (1.0 + adamw_share) : 4.0) * static_cast<double>(s.moment_bytes);
  const double bytes_per_param =
      static_cast<double>(2 * s.master_bytes + 2 * s.grad_bytes + s.param_bytes) + moment_rw;
  // Muon's Newton-Schulz iterations on each rank's own stage (muon_cost.h): its layers of each
  // kind and its MTP block, over the optimizer's layer-wise shards (megatron-core's
  // LayerWiseDistributedOptimizer; Moonlight's distributed Muon computes each matrix's update
  // on the rank holding it): 1 / (DP x CP) of the dense matrices, the experts an EP rank
  // holds (1 / EP of them) over expert-DP. megatron-core orthogonalises each TP rank's shard
  // (muon_tp_mode blockwise); other frameworks the whole matrix.
  const double muon_dense_ranks = s.distributed_optimizer ? static_cast<double>(l.dp * l.cp) : 1.0;
  const double muon_expert_ranks =
      s.distributed_optimizer ? static_cast<double>(std::max<int64_t>(l.expert_dp(), 1)) : 1.0;
  // A rank's share: {seconds, FLOP}.
  auto muon_share = [&](const std::vector<MuonMatrix>& matrices) {
    const MuonSeconds ns = NewtonSchulzSeconds(matrices, t.peak.flop_per_s(), t.efficiency,
                                               s.megatron_core, l.tp, l.etp, t.gdn_replicated);
    const double experts = static_cast<double>(l.ep) * muon_expert_ranks;
    return std::pair<double, double>{
        ns.non_expert / muon_dense_ranks + ns.expert / experts,
        ns.non_expert_flop / muon_dense_ranks + ns.expert_flop / experts};
  };
  auto muon_ns_of = [&](const StageComposition& rank) {
    std::pair<double, double> out{0.0, 0.0};
    if (!s.muon) return out;
    const StepTables::StageParams& p = t.stage_params;
    auto add = [&](double n, const std::vector<MuonMatrix>& matrices) {
      const auto [seconds, flop] = muon_share(matrices);
      out.first += n * seconds;
      out.second += n * flop;
    };
    for (size_t k = 0; k < rank.kind_layers.size() && k < p.kind_muon.size(); ++k) {
      if (rank.kind_layers[k] > 0) add(static_cast<double>(rank.kind_layers[k]), p.kind_muon[k]);
    }
    if (rank.mtp_layers > 0 && !s.frozen[static_cast<size_t>(ModuleKind::kMtp)])
      add(static_cast<double>(rank.mtp_layers), p.mtp_muon);
    return out;
  };
  const bool cpu_optimizer = s.sharding.offload_optimizer != OffloadTarget::kNone;
  if (cpu_optimizer && explain) {
    r.caveats.push_back(
        "the optimizer runs on the CPU (offload_optimizer): its own time is not "
        "modelled (no host-memory calibration); only the PCIe copies are");
  }
  // After its data-parallel sync each pipeline rank runs finalize_model_grads' all-reduces of
  // the gradients it holds replicated (finalize_grads.h), then its optimizer over its own
  // stage's parameters (the embedding's, the output layer's, the MTP block's, its own layers':
  // StageParamWeights), all ranks at once: the step ends with the rank whose two take longest.
  const std::vector<StageComposition> ranks = StageCompositions(l, t.layer_kinds, t.mtp_layers);
  const std::vector<int64_t> embedding_group =
      EmbeddingGroupRanks(ranks, t.stage_params.tied_embedding);
  std::vector<StageComposition> seen;
  double finalize_worst = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), ranks[i]) != seen.end()) continue;
    seen.push_back(ranks[i]);
    const auto [non_expert_weight, expert_weight] =
        l.pp > 1 ? StageParamWeights(t, l, ranks[i]) : std::pair<double, double>{1.0, 1.0};
    const double own = local_params(non_expert_weight, expert_weight);
    const auto [muon_ns, muon_flop] = muon_ns_of(ranks[i]);
    const double optimizer = cpu_optimizer ? 0.0 : own * bytes_per_param / hbm + muon_ns;
    const FinalizeGradParams grads = FinalizeGradParamsOf(t, s, ranks[i], embedding_group);
    STRATA_ASSIGN_OR_RETURN(std::vector<PricedTraffic> priced,
                            PriceFinalizeGrads(grads, s, groups, comm, detail, cache));
    double all_reduce = 0;
    for (const PricedTraffic& p : priced) all_reduce += p.time_per_step.s();
    if (all_reduce + optimizer > finalize_worst) {
      finalize_worst = all_reduce + optimizer;
      r.local_params = own;
      r.optimizer_rank = ranks[i].rank;
      r.optimizer_stage = ranks[i];
      r.finalize_grads = grads;
      r.finalize_traffic = std::move(priced);
      r.muon_newton_schulz = Seconds::Of(muon_ns);
      r.muon_flop = muon_flop;
      set(StepPart::kTpGrad, all_reduce, all_reduce);
      set(StepPart::kOptimizer, optimizer, optimizer);
    }
  }
  r.traffic.insert(r.traffic.end(), r.finalize_traffic.begin(), r.finalize_traffic.end());

  STRATA_ASSIGN_OR_RETURN(r.host_traffic, OffloadTraffic(t.traffic, s, r.local_params, comm));
  double offload = 0;
  for (const HostTraffic& h : r.host_traffic) offload += h.time_per_step.s();
  if (explain && offload > 0) {
    r.caveats.push_back(
        "offload copies are priced at the PCIe x16 line rate, on the critical "
        "path (no overlap with compute): a bound, not a measurement");
  }
  // megatron-core --cpu-offloading: each offloaded layer's saved activations go down over PCIe
  // after its forward and come back before its backward, each copy behind the next layer's
  // compute (TE's double-buffered handler; the N-th offloaded layer is followed by a kept one):
  //   exposed per pass = N max(0, x - y), x one layer's copy, y one layer's compute.
  double act_offload = 0, act_offload_exposed = 0;
  if (s.offload_activation_layers > 0) {
    const MapLevel* pcie = nullptr;
    for (const MapLevel& level : comm.map().levels) {
      if (level.kind == MapLevelKind::kPcie) pcie = &level;
    }
    if (pcie == nullptr) return InvalidInput("the cluster's bandwidth map has no PCIe level");
    const double n = static_cast<double>(s.offload_activation_layers);
    const double bytes = s.offload_activation_bytes_per_token * tokens;  // one micro batch
    const double x = bytes / n / pcie->per_gpu.bytes_per_s();
    const double layers = std::max(1.0, static_cast<double>(t.layers) / pp);
    const double y_fwd = (fwd.total() - fwd.logits_and_loss).value() / layers;
    const double y_bwd = (bwd.total() - bwd.logits_and_loss + rec.total()).value() / layers;
    act_offload = m * 2 * n * x;
    act_offload_exposed = m * n * (std::max(0.0, x - y_fwd) + std::max(0.0, x - y_bwd));
    for (const char* way : {"to the host after each forward", "back to the GPU before backward"}) {
      r.host_traffic.push_back(
          {explain ? fmt::format("activation offload: {} layers' saved activations {}",
                                 s.offload_activation_layers, way)
                   : std::string(),
           pcie->name, Bytes::Count(m * bytes), Seconds::Of(m * n * x)});
    }
    if (explain)
      r.caveats.push_back(
          "activation offload copies are priced at the PCIe x16 line rate of one GPU and hidden "
          "behind the next layer's compute; GPUs sharing a PCIe switch or its NIC traffic are "
          "not modelled");
  }
  set(StepPart::kOffload, offload + act_offload, offload + act_offload_exposed);

  const double rec_fraction =
      s.recompute == RecomputeGranularity::kFull ? s.recompute_layer_fraction : 0.0;
  const double fp8_cast = m * Fp8CastBytesPerMicroBatch(t, s, tokens, stage, rec_fraction) / hbm;
  set(StepPart::kFp8Cast, fp8_cast, fp8_cast);

  for (const auto& part : r.parts) r.step += part.exposed;
  r.tokens_per_step = m * mbs * static_cast<double>(l.dp) * t.mean_tokens;
  r.tokens_per_s_per_gpu = r.tokens_per_step / r.step.s() / static_cast<double>(l.world());
  r.model_flop_per_token = t.megatron_flop_per_token + TrainedFlopAdjustmentPerToken(t, s.frozen);
  r.mfu = r.tokens_per_s_per_gpu * r.model_flop_per_token / peak;
  if (s.fp8.on())
    r.mfu_fp8 = r.tokens_per_s_per_gpu * r.model_flop_per_token / t.fp8_peak.flop_per_s();
  if (explain) r.mfu_flag = MfuCeilingFlag(t, s.fp8.on(), r.mfu);
  const Recompute hw = s.recompute == RecomputeGranularity::kFull        ? Recompute::kFull
                       : s.recompute == RecomputeGranularity::kSelective ? Recompute::kSelective
                                                                         : Recompute::kNone;
  // Recompute re-runs forward FLOP, frozen or not: what it adds to the full-training count.
  double recomputed =
      HardwareFlopsPerToken(FlopCount::Of(t.megatron_flop_per_token), t.forward, hw,
                            s.recompute_layer_fraction, 1.0 + static_cast<double>(t.mtp_layers))
          .count() -
      t.megatron_flop_per_token;
  if (s.op_sac && s.recompute == RecomputeGranularity::kSelective)
    recomputed = t.op_sac_recompute_flop_per_token;
  r.hfu = r.tokens_per_s_per_gpu * (r.model_flop_per_token + recomputed) / peak;
  return r;
}

std::string MfuCeilingFlag(const StepTables& t, bool fp8, double mfu) {
  const double ceiling = fp8 ? t.mfu_ceiling_fp8 : t.mfu_ceiling_bf16;
  if (ceiling <= 0 || mfu <= ceiling) return "";
  return fmt::format(
      "no published run reaches this: MFU {:.1f}% of the bf16 dense peak is above the best "
      "published {:.1f}% on {} with {} GEMMs (data/mfu_ceiling.yaml: {})",
      100 * mfu, 100 * ceiling, t.gpu_name, fp8 ? "FP8" : "bf16",
      fp8 ? t.mfu_ceiling_fp8_source : t.mfu_ceiling_bf16_source);
}

}  // namespace strata
