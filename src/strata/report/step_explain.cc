#include "strata/report/step_explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/strings.h"
#include "strata/job/pipeline_split.h"
#include "strata/memory/sharding.h"
#include "strata/model/adapter.h"
#include "strata/model/param_count.h"
#include "strata/sim/gdn_kernels.h"
#include "strata/sim/pipeline_bubble.h"
#include "strata/sim/step_modes.h"

namespace strata {
namespace {

std::string Ms(Seconds t) { return fmt::format("{:.1f} ms", t.ms()); }
std::string S(Seconds t) { return fmt::format("{:.3f} s", t.s()); }
std::string On(bool b) { return b ? "on" : "off"; }

std::string GemmKindName(GemmKind k) {
  switch (k) {
    case GemmKind::kDense:
      return "dense";
    case GemmKind::kExpert:
      return "routed experts";
    case GemmKind::kRouter:
      return "router";
    case GemmKind::kLogits:
      return "output layer";
  }
  return "?";
}

// What the backward's GEMMs are of the forward's: twice (data and weight gradients), once for
// a frozen GEMM (data gradient only: an adapter's base, a `frozen:` module).
std::string BackwardGemmsText(const StepTables& t, const StepLayout& s) {
  if (t.adapter_rank > 0) {
    return "1x the frozen base's GEMMs (data gradients only) + 2x the adapters' (data and "
           "weight gradients)";
  }
  std::vector<std::string> frozen;
  for (ModuleKind k : AllModuleKinds()) {
    if (s.frozen[static_cast<size_t>(k)] && k != ModuleKind::kEmbedding) {
      frozen.emplace_back(ModuleKindName(k));
    }
  }
  if (frozen.empty()) return "2x the forward's GEMMs";
  return fmt::format("2x the forward's GEMMs, 1x those of the frozen {}: no weight gradient",
                     fmt::join(frozen, ", "));
}

// " x 0.25 (the critical stage's 10 of 40 layers)": the stage whose layers set the pace keeps
// that share of the stack's layer times (CriticalStageOf); nothing with one stage.
std::string StageShareText(const ParallelLayout& l, const StageShare& stage, int64_t layers) {
  if (l.pp <= 1 || stage.own) return "";
  return fmt::format(" x {:.4g} (the critical stage's {:.0f} of {} layers)", stage.layers,
                     stage.layers * static_cast<double>(layers), layers);
}

// "rank 0: 3 dense + 2 MoE layers, the embedding (5 of 61 layers)": the rank whose layers set
// the pace. A stage cut to its share (one layer kind) is the output stage, or the first other
// rank holding that many layers.
std::string CriticalStageText(const StepTables& whole, const ParallelLayout& l,
                              const StageShare& stage) {
  StageComposition c = stage.composition;
  if (!stage.own) {
    if (static_cast<int64_t>(whole.layer_kinds.kind_of.size()) != whole.layers) return "";
    const auto layers =
        static_cast<int64_t>(std::llround(stage.layers * static_cast<double>(whole.layers)));
    const std::vector<StageComposition> all =
        StageCompositions(l, whole.layer_kinds, whole.mtp_layers);
    c = all[static_cast<size_t>(l.output_stage())];
    if (!stage.last) {
      for (const StageComposition& other : all) {
        if (!other.output && other.layers == layers) {
          c = other;
          break;
        }
      }
    }
  }
  return fmt::format("rank {}: {} ({} of {} layers)", c.rank, CompositionText(c, whole.layer_kinds),
                     c.layers, whole.layers);
}

}  // namespace

std::vector<StepFormula> ExplainStep(const StepTables& whole, const StepLayout& s,
                                     const StepResult& r) {
  const ParallelLayout& l = s.layout;
  const StageShare& stage = r.critical_stage;
  // A stage priced by its own layers (several layer kinds): its own tables (StageTables) hold
  // the sums printed below, and nothing is cut afterwards.
  const StepTables own = stage.own ? StageTables(whole, stage.composition) : StepTables{};
  const StepTables& t = stage.own ? own : whole;
  const double cut = stage.own ? 1.0 : stage.layers;
  const KernelEfficiency& e = t.efficiency;
  const double tokens = r.rank_tokens;
  const double peak_t = t.peak.tflop_per_s();
  std::vector<StepFormula> out;
  auto add = [&](std::string name, std::string formula) {
    out.push_back({std::move(name), std::move(formula)});
  };
  add("tokens of one micro batch on one rank",
      fmt::format("T = micro batch x E[S] / CP = {} x {:.0f} / {} = {:.0f}; attention sees "
                  "E[S^2]/E[S] = {:.0f} tokens{}",
                  s.micro_batch, t.mean_tokens, l.cp, tokens, t.attention_tokens,
                  t.lengths.assumed ? " (lengths ASSUMED uniform on [2 mean - max, max])" : ""));
  // The factor every tensor-core rate below includes, printed where it multiplies.
  const std::string sustained =
      e.sustained_clock < 1 ? fmt::format(" x {} (sustained clock)", e.sustained_clock) : "";
  if (e.sustained_clock < 1) {
    add("sustained clock",
        fmt::format("tensor-core kernels (GEMMs, attention, Gated DeltaNet) run at the "
                    "power-capped clock a training step settles at: {} of the burst rates the "
                    "efficiencies were measured at; memory-bound kernels are not slowed",
                    e.sustained_clock));
  }
  // The model's own terms (GemmTerm), whole stack, of which the stage keeps its share of the
  // layers; or the critical stage's own layers.
  const std::string share = StageShareText(l, stage, whole.layers);
  if (l.pp > 1) {
    const std::string critical = CriticalStageText(whole, l, stage);
    if (!critical.empty()) {
      add("critical pipeline stage",
          stage.own ? fmt::format("{}; the slowest of the stages priced by their own layers "
                                  "(compute, their layers' collectives, the framework's "
                                  "per-layer costs): 1F1B runs at its pace; the terms below are "
                                  "its own layers'",
                                  critical)
                    : critical);
    }
    for (const StepResult::StageTime& other : r.stage_times) {
      add(fmt::format("  stage of rank {}", other.stage.rank),
          fmt::format("{}: {} a micro batch", CompositionText(other.stage, whole.layer_kinds),
                      Ms(other.micro_batch)));
    }
  }
  // The stage that holds the MTP blocks (the critical one, or another priced stage).
  const StageComposition* mtp_stage =
      stage.own && stage.composition.mtp_layers > 0 ? &stage.composition : nullptr;
  for (const StepResult::StageTime& other : r.stage_times) {
    if (mtp_stage == nullptr && other.stage.mtp_layers > 0) mtp_stage = &other.stage;
  }
  if (mtp_stage != nullptr && whole.mtp_sums != nullptr) {
    // The block's own tables hold every block the job builds; the stage keeps its share.
    const StepTables& mtp = *whole.mtp_sums;
    const double blocks = static_cast<double>(mtp_stage->mtp_layers) /
                          static_cast<double>(std::max<int64_t>(1, whole.mtp_layers));
    double gemm = 0, projection = 0, logits = 0;
    for (const GemmGroup& g : mtp.gemms) {
      gemm += g.flop_per_token * blocks;
      if (g.module == ModuleKind::kMtp) projection += g.flop_per_token * blocks;
      if (g.kind == GemmKind::kLogits) logits += g.flop_per_token * blocks;
    }
    add(fmt::format("MTP block (rank {})", mtp_stage->rank),
        fmt::format("{} block(s): eh_proj 2h -> h {:.4g} + its decoder layer {:.4g} + its output "
                    "layer {:.4g} = {:.4g} GEMM FLOP/token forward, + {:.4g} FLOP/token core "
                    "attention and one more cross entropy over {} vocab a block, priced with "
                    "the rank's own layers",
                    mtp_stage->mtp_layers, projection, gemm - projection - logits, logits, gemm,
                    mtp.attention_flop_per_token * blocks, whole.vocab));
  }
  for (const GemmTerm& g : r.gemms) {
    const bool logits = g.kind == GemmKind::kLogits;
    const bool expert = g.kind == GemmKind::kExpert;
    add(fmt::format("{} GEMMs, n = {:.0f}, k = {:.0f} (forward)", GemmKindName(g.kind), g.width,
                    g.k),
        fmt::format(
            "{:.4g} FLOP/token x {:.0f} tokens / {} (TP) = {:.4g} FLOP; efficiency {}{} x "
            "f({:.0f}) f({:.0f}) f({:.0f}){} = {:.3f}; t = FLOP / ({:.1f} TFLOP/s x {:.3f}) "
            "= {}{}",
            g.flop_per_token, g.rows, g.split, g.flop, e.gemm_large, sustained, g.m, g.n, g.k,
            expert ? fmt::format(" x {} (grouped)", e.grouped_gemm_factor) : "", g.efficiency,
            g.peak.tflop_per_s(), g.efficiency, Ms(g.time),
            logits
                ? (stage.last || l.pp <= 1 ? "" : "; x 0: the critical stage holds no output layer")
                : (stage.own       ? std::string("; the critical stage's own layers")
                   : share.empty() ? std::string()
                                   : fmt::format(";{} = {}", share, Ms(g.time * cut)))) +
            (g.fp8 ? fmt::format(
                         " (FP8 peak{}, recipe {})",
                         e.fp8_gemm < 1 ? fmt::format(" x {} sustained vs bf16", e.fp8_gemm) : "",
                         Fp8RecipeName(s.fp8.recipe))
                   : ""));
  }
  const AdapterTimes& adapter = r.adapter;
  if (adapter.dense.s() > 0) {
    add(fmt::format("adapter GEMMs (LoRA A and B, r = {:.0f}, forward)", t.adapter_rank),
        fmt::format("{:.4g} FLOP on the rank (after the TP split); efficiency {}{} x f({:.0f}) "
                    "f({:.0f}) f({}) = {:.3f}; t = FLOP / ({:.1f} TFLOP/s x {:.3f}) = {}{}; "
                    "inside the dense GEMMs' forward, twice in backward",
                    adapter.dense_flop, e.gemm_large, sustained, tokens, t.adapter_rank, t.hidden,
                    adapter.dense_efficiency, peak_t, adapter.dense_efficiency, Ms(adapter.dense),
                    share.empty() ? "" : fmt::format(";{} = {}", share, Ms(adapter.dense * cut))));
  }
  if (adapter.expert.s() > 0) {
    add(fmt::format("routed experts' adapter GEMMs (r = {:.0f}, forward)", t.adapter_rank),
        fmt::format("{:.4g} FLOP on the rank at {:.3f} of {:.1f} TFLOP/s (grouped, over each "
                    "local expert's tokens) = {}{}; inside the routed experts' forward, twice in "
                    "backward",
                    adapter.expert_flop, adapter.expert_efficiency, peak_t, Ms(adapter.expert),
                    share.empty() ? "" : fmt::format(";{} = {}", share, Ms(adapter.expert * cut))));
  }
  if (adapter.dequant.s() > 0) {
    const double per_weight = Nf4BitsPerWeight() / 8.0 + 2.0;
    add("QLoRA dequantisation of the NF4 base weights (each pass)",
        fmt::format(
            "({:.4g} bits NF4 with its block constants / 8 + 2 B bf16 copy) = {:.4g} B "
            "per base weight x {:.4g} weights on the rank = {:.4g} B / ({:.0f} GB/s x "
            "{:.2f}) = {}{} a pass; once in the forward, once in the backward (not 2x) "
            "and once in a full recompute, inside the memory-bound rows",
            Nf4BitsPerWeight(), per_weight, adapter.dequant_bytes / per_weight,
            adapter.dequant_bytes, t.hbm.gb_per_s(), e.hbm_efficiency, Ms(adapter.dequant),
            share.empty() ? "" : fmt::format(";{} = {}", share, Ms(adapter.dequant * cut))));
  }
  if (t.unfused_attention && t.score_elements_per_token > 0) {
    const double hbm = t.hbm.bytes_per_s() * e.hbm_efficiency;
    const UnfusedAttentionTimes u = UnfusedAttention(t, tokens / static_cast<double>(l.tp), hbm);
    add("unfused attention (full S x S, then masked)",
        fmt::format(
            "scores = {:.4g} per token (heads x S, all layers) x {:.0f} tokens / {} (TP) "
            "= {:.4g}; QK^T and AV: 2 x scores x (d {:.0f} + d_v {:.0f}) = {:.4g} FLOP "
            "at efficiency {}{} x f({:.0f})^2 f({:.0f}) = {:.3f}; softmax{} passes {:.0f} B "
            "per score forward, {:.0f} B backward, on {:.0f} GB/s x {:.2f}; whole stack "
            "forward {}, backward {}; this stage's share:{}",
            t.score_elements_per_token, tokens, l.tp, u.scores, t.score_head_dim, t.score_value_dim,
            u.gemm_flop, e.gemm_large, sustained, t.score_row_tokens, t.score_head_dim,
            u.gemm_efficiency,
            t.attention_dropout > 0 ? fmt::format(" + dropout {}", t.attention_dropout) : "",
            u.score_bytes_forward, u.score_bytes_backward, t.hbm.gb_per_s(), e.hbm_efficiency,
            Ms(u.forward), Ms(u.backward), share.empty() ? " all" : share));
  } else if (t.attention_flop_per_token > 0) {
    add("flash attention (causal)",
        fmt::format("{:.4g} FLOP/token x {:.0f} / {} (TP){}; forward at {:.3f} of peak -> "
                    "{}, backward 2x FLOP at {:.3f} -> {}",
                    t.attention_flop_per_token, tokens, l.tp, share,
                    AttentionEfficiency(e, t.attention_tokens, false), Ms(r.forward.attention),
                    AttentionEfficiency(e, t.attention_tokens, true), Ms(r.backward.attention)));
    if (t.windowed_attention_flop_per_token > 0) {
      add("sliding-window attention layers",
          fmt::format("{:.4g} of those FLOP/token attend a window of {:.0f} keys: forward at "
                      "{:.3f}, backward at {:.3f} of peak (the span, not the sequence, sets the "
                      "efficiency; the times above include them)",
                      t.windowed_attention_flop_per_token, t.attention_window_tokens,
                      AttentionEfficiency(e, t.attention_window_tokens, false),
                      AttentionEfficiency(e, t.attention_window_tokens, true)));
    }
  }
  // A Gated DeltaNet the framework replicates over TP (StepTables::gdn_replicated) runs whole.
  const std::string gdn_split = t.gdn_replicated && l.tp > 1
                                    ? std::string("1 (whole on every TP rank)")
                                    : fmt::format("{} (TP)", l.tp);
  if (t.gdn_flop_per_token > 0) {
    const GdnKernels& g = e.gated_deltanet;
    const std::string& kernel = t.framework.gdn_kernel;
    if (kernel == "torch") {
      const double chunks =
          std::ceil(tokens / static_cast<double>(s.micro_batch) / t.gdn_chunk_tokens);
      add("Gated DeltaNet, PyTorch fallback",
          fmt::format("{} layers x ({:.0f} chunks x {:.0f} ops + {:.0f} solve rows x {:.0f} ops) "
                      "x {:.0f} us of host time, + {:.0f} B x {:.0f} solve elements x {:.0f} "
                      "chunks x {:.0f} heads / {} on HBM{} = {}",
                      t.gdn_layers, chunks, g.torch_forward_ops_per_chunk, t.gdn_chunk_tokens - 1,
                      g.torch_solve_ops_per_row, t.framework.host_op_s * 1e6,
                      g.torch_solve_bytes_per_element, TriangularSolveElements(t.gdn_chunk_tokens),
                      chunks * static_cast<double>(s.micro_batch), t.gdn_value_heads, gdn_split,
                      share, Ms(r.forward.gated_deltanet)));
    } else {
      const GdnKernelRate& rate = kernel == "flashqla" ? g.flashqla : g.fla;
      add(fmt::format("Gated DeltaNet, {} kernel", kernel),
          fmt::format("{:.4g} FLOP/token x {:.0f} / {}{} at {:.4f}{} of peak = {} "
                      "(backward: twice the FLOP at {:.4f})",
                      t.gdn_flop_per_token, tokens, gdn_split, share, rate.forward, sustained,
                      Ms(r.forward.gated_deltanet), rate.backward));
    }
  }
  add("memory-bound operations (forward)",
      fmt::format("({:.0f} B/token{} + {:.0f} B/token / {} (TP){}) x {:.0f} tokens{} / "
                  "({:.0f} GB/s x {:.2f}){} = {}",
                  t.replicated_bytes_per_token, l.sequence_parallel ? " / TP" : "",
                  t.split_bytes_per_token, l.tp,
                  t.gdn_bytes_per_token > 0 ? fmt::format(" + {:.0f} B/token Gated DeltaNet / {}",
                                                          t.gdn_bytes_per_token, gdn_split)
                                            : "",
                  tokens, share, t.hbm.gb_per_s(), e.hbm_efficiency,
                  adapter.dequant.s() > 0
                      ? fmt::format(" + QLoRA dequantisation {}", Ms(adapter.dequant * cut))
                      : "",
                  Ms(r.forward.memory_bound)));
  {
    // The loss's bytes per vocabulary entry are split a third to the forward (the softmax over
    // the logits) and two thirds to the backward (reading them again, writing their gradient):
    // the "/ 3" says which share this line holds.
    const Seconds loss_forward =
        Seconds::Of(whole.loss_bytes_per_vocab_entry * tokens * static_cast<double>(t.vocab) /
                    static_cast<double>(l.tp) / 3.0 / (t.hbm.bytes_per_s() * e.hbm_efficiency));
    const bool holds_output = stage.last || l.pp <= 1;
    add("output layer + cross entropy (last stage, forward)",
        fmt::format("logits GEMM {} + {} B x {:.0f} tokens x {} vocab / {} (TP) / 3 (the "
                    "forward's third of the loss's bytes; the backward moves the other two) / "
                    "({:.0f} GB/s x {:.2f}) = {}{}",
                    Ms(holds_output ? r.forward.logits_and_loss - loss_forward : Seconds::Of(0)),
                    whole.loss_bytes_per_vocab_entry, tokens, t.vocab, l.tp, t.hbm.gb_per_s(),
                    e.hbm_efficiency, Ms(r.forward.logits_and_loss),
                    holds_output ? "" : " (the critical stage holds no output layer)"));
  }
  const Seconds skew_per_mb =
      r[StepPart::kMoeImbalance].total / static_cast<double>(s.micro_batches);
  add("one micro batch",
      fmt::format("forward {} + backward {} ({}) + recompute {} + routing skew {} + framework "
                  "(host, eager ops, attention backend, fetches) {} + exposed TP/CP/EP/PP {} = {}",
                  Ms(r.forward.total()), Ms(r.backward.total()), BackwardGemmsText(whole, s),
                  Ms(r.recompute.total()), Ms(skew_per_mb), Ms(r.framework.total()),
                  Ms(r.micro_batch - r.forward.total() - r.backward.total() - r.recompute.total() -
                     skew_per_mb - r.framework.total()),
                  Ms(r.micro_batch)));
  const double skew = RoutingSkew(e, s);
  add("MoE routing skew",
      fmt::format("busiest expert rank gets {:.2f} x the mean tokens ({}): + {:.2f} x expert GEMM "
                  "time, and the EP all-to-all below x {:.2f} (it ends when that rank has received "
                  "and returned its tokens)",
                  skew,
                  s.layout.ep <= 1         ? "EP 1: every rank holds every expert"
                  : s.moe_routing_skew > 0 ? "moe.routing_imbalance"
                                           : "assumed, data/kernel_efficiency.yaml",
                  skew - 1, skew));
  for (const PricedTraffic& p : r.traffic) {
    add(fmt::format("{}: {}", ToString(p.item.group), p.item.purpose),
        fmt::format(
            "{} of {} on {} ranks over {} node(s), {} per call on {}; {:.0f} calls per step "
            "= {}",
            ToString(p.item.op), FormatBytesAuto(p.item.size), p.cost.shape.ranks,
            p.cost.shape.nodes, Ms(p.cost.time), p.cost.level, p.item.calls_per_step,
            S(p.time_per_step)));
  }
  if (r[StepPart::kTpGrad].total.s() > 0) {
    // sim/finalize_grads.cc prices it; this says where the bytes come from and why it is exposed.
    const FinalizeGradParams& f = r.finalize_grads;
    std::vector<std::string> terms;
    if (f.tp_sum > 0) {
      terms.push_back(fmt::format(
          "{} parameters replicated over TP{} (norms, router, MLA down-projections, q/k norms "
          "of its layers), summed over TP",
          GroupDigits(f.tp_sum), l.sequence_parallel ? " and marked sequence-parallel" : ""));
    }
    if (f.tp_average - f.tp_vision > 0) {
      terms.push_back(fmt::format(
          "{} trained parameters of its Gated DeltaNet layers every TP rank holds whole{}, "
          "averaged over TP",
          GroupDigits(f.tp_average - f.tp_vision),
          t.adapter_rank > 0 ? " (their adapters: the base is frozen)" : ""));
    }
    if (f.tp_vision > 0) {
      terms.push_back(fmt::format(
          "{} parameters of the vision tower, whole on every TP rank (transformers' module "
          "inside megatron-core's HuggingFaceModule marks them "
          "average_gradients_across_tp_domain), averaged over TP",
          GroupDigits(f.tp_vision)));
    }
    if (f.shared_embedding > 0) {
      terms.push_back(fmt::format(
          "{} word-embedding parameters (vocabulary x hidden / TP {}) the {} shares with the "
          "first stage, summed over the embedding group's {} pipeline ranks (the first{}{})",
          GroupDigits(f.shared_embedding), l.tp,
          whole.stage_params.tied_embedding ? "tied output layer" : "MTP block",
          f.embedding_group_ranks, whole.stage_params.tied_embedding ? ", the last" : "",
          whole.mtp_layers > 0 ? ", those with an MTP layer" : ""));
    }
    add(std::string(StepPartName(StepPart::kTpGrad)),
        fmt::format("megatron-core's finalize_model_grads, once a step on each pipeline rank after "
                    "its DP gradient sync and before its optimizer; rank {}'s (whose all-reduces "
                    "and optimizer end the step): {}; x {} B gradients = {}, exposed",
                    r.optimizer_rank, fmt::join(terms, "; "), s.grad_bytes,
                    S(r[StepPart::kTpGrad].exposed)));
  }
  if (ShardingOwnsDpTraffic(s)) {
    add("sharded data parallelism",
        fmt::format("sharding {} (reshard_after_forward {}, prefetch {:.4g} layer(s), replicate "
                    "{}): per pass exposed = (g + r) + (L - 1) [(1 - f) g + max(0, f g + r - y)], "
                    "g one layer's weight gathers, r its reduce-scatters, y its compute, f = "
                    "min(1, prefetch), L = {:.0f}{}; exposed DP {} + expert-DP {}",
                    ShardingModeName(s.sharding.mode),
                    On(FsdpHoldingOf(s.sharding, s.runtime).reshard_after_forward),
                    s.sharding.prefetch_layers, s.sharding.replicate,
                    static_cast<double>(whole.layers) / static_cast<double>(l.pp),
                    ShardedOverlapRule(s).empty() ? "" : "; " + ShardedOverlapRule(s),
                    S(r[StepPart::kDpGrad].exposed + r[StepPart::kDpParam].exposed),
                    S(r[StepPart::kExpertDpGrad].exposed + r[StepPart::kExpertDpParam].exposed)));
  }
  for (const HostTraffic& h : r.host_traffic) {
    add(fmt::format("offload: {}", h.purpose),
        fmt::format("{} per step / {} per direction = {}", FormatBytesAuto(h.size_per_step),
                    h.level, S(h.time_per_step)));
  }
  if (r[StepPart::kFp8Cast].total.s() > 0) {
    add("FP8 casts + transposes",
        fmt::format("4 B per GEMM input element (forward, and again in recompute) and per "
                    "output-gradient element (backward), plus 4 B per local weight per {} / "
                    "({:.0f} GB/s x {:.2f}) = {} per step",
                    s.fp8.recipe == Fp8Recipe::kTorchaoTensorwise ||
                            s.fp8.recipe == Fp8Recipe::kTorchaoRowwise
                        ? "micro batch"
                        : "step",
                    t.hbm.gb_per_s(), e.hbm_efficiency, S(r[StepPart::kFp8Cast].total)));
  }
  const FrameworkProfile& fw = t.framework.ForMode(s.sharding.mode);
  if (fw.on) {
    add("framework profile",
        fmt::format("{} {} (trains through {}'s code); docs/formulas.md, \"Framework overhead\"",
                    fw.name, fw.version, fw.engine));
    for (const std::string& a : fw.assumptions) add("  implementation", a);
    const FrameworkModelCounts& n = t.framework_counts;
    const double layers = std::max(1.0, n.layers * cut);
    add("framework: host-bound layers",
        fmt::format("per layer and pass, max(0, ops x {:.0f} us - the layer's GPU time): {:.0f} + "
                    "{:.2f} MoE share x {:.0f} ops{} forward, twice that backward, over {:.0f} "
                    "layers; + {:.0f} host sync(s) per MoE layer x one launch = {} per micro "
                    "batch",
                    fw.host_op_s * 1e6, fw.layer_ops, n.moe_layers / std::max(1.0, n.layers),
                    fw.moe_ops,
                    fw.gqa_repeat_ops > 0
                        ? fmt::format(" + {:.2f} GQA share x {:.0f} repeat_kv ops",
                                      n.gqa_layers / std::max(1.0, n.layers), fw.gqa_repeat_ops)
                        : "",
                    layers, fw.moe_host_syncs, Ms(r.framework.host_bound_layers)));
    if (r.framework.fetch_hooks.s() > 0) {
      const std::string work =
          s.sharding.mode == ShardingMode::kFsdp2
              ? fmt::format(
                    "FSDP2: {:.0f} ops per layer fetch + {:.0f} per parameter x {:.1f} "
                    "parameter tensors per layer, in forward{} (the recompute fetches "
                    "nothing)",
                    fw.fsdp2_ops_per_fetch, fw.fsdp2_ops_per_param, n.params_per_layer,
                    s.sharding.reshard_after_forward ? " and backward" : "")
              : fmt::format(
                    "{:.1f} parameter tensors per layer x {:.0f} ZeRO-3 ops each, in "
                    "forward, backward and recompute",
                    n.params_per_layer, fw.Zero3OpsPerParam(l.dp));
      add("framework: parameter fetch hooks",
          fmt::format("{} added to each layer's host ops = {} per micro batch", work,
                      Ms(r.framework.fetch_hooks)));
    }
    if (r.framework.expert_loop.s() > 0) {
      add("framework: per-expert loop",
          fmt::format("{:.0f} MoE layers x {:.0f} experts x (max(0, {:.0f} ops x {:.0f} us - the "
                      "expert's GEMMs){}), backward 2 x {:.0f} ops without syncs = {} per micro "
                      "batch",
                      n.moe_layers / std::max(1.0, n.layers) * layers,
                      static_cast<double>(t.num_experts) / static_cast<double>(l.ep),
                      fw.expert_loop_ops, fw.host_op_s * 1e6,
                      fw.expert_loop_syncs > 0 ? " + one launch after its host sync" : "",
                      fw.expert_loop_ops, Ms(r.framework.expert_loop)));
    }
    if (r.framework.eager_elementwise.s() > 0) {
      const double act = t.dense_mlp_act_bytes_per_token + t.routed_act_bytes_per_token +
                         t.shared_act_bytes_per_token;
      const double copies = AttentionCopyBytesPerToken(t, fw);
      const double sp = l.sequence_parallel ? static_cast<double>(l.tp) : 1.0;
      const double per_token = EagerExtraBytesPerToken(t, fw, l);
      const double forward = per_token * tokens / (t.hbm.bytes_per_s() * e.hbm_efficiency) * cut;
      if (per_token > 0)
        add("framework: eager element-wise ops",
            fmt::format(
                "bytes beyond the fused kernels per token, forward, all layers: [norms "
                "{:.0f} B x ({:.1f} - 1) / SP {:.0f} + (rotary {:.0f} B x ({:.1f} - 1) + MLP "
                "activation {:.0f} B x ({:.2f} - 1) + attention layout copies {:.0f} B) / "
                "TP {}] = {:.0f} B x {:.0f} tokens / ({:.0f} GB/s x {:.2f}) x stage share "
                "{:.3f} = {} forward; x (1 forward + 2 backward + the recompute's share) = "
                "{} per micro batch",
                t.norm_bytes_per_token, fw.eager_norm, sp, t.rotary_bytes_per_token,
                fw.eager_rotary, act, fw.eager_activation, copies, l.tp, per_token, tokens,
                t.hbm.gb_per_s(), e.hbm_efficiency, cut, Ms(Seconds::Of(forward)),
                Ms(r.framework.eager_elementwise)));
      const ModelCodeBytes code = ModelCodeBytesPerToken(t, fw, l);
      if (code.forward() + code.backward() > 0) {
        add("framework: model-specific module code",
            fmt::format("bytes per token, all layers, forward + backward: "
                        "clamped GLU {:.0f} + {:.0f} B, per-expert output bias {:.0f} + {:.0f} B, "
                        "unfused YaRN rotary {:.0f} + {:.0f} B; x {:.0f} tokens / ({:.0f} GB/s x "
                        "{:.2f}) x stage share {:.3f} = {} forward + {} backward",
                        code.clamped_glu_forward, code.clamped_glu_backward,
                        code.expert_bias_forward, code.expert_bias_backward,
                        code.yarn_rotary_forward, code.yarn_rotary_backward, tokens,
                        t.hbm.gb_per_s(), e.hbm_efficiency, cut,
                        Ms(Seconds::Of(code.forward() * tokens /
                                       (t.hbm.bytes_per_s() * e.hbm_efficiency) * cut)),
                        Ms(Seconds::Of(code.backward() * tokens /
                                       (t.hbm.bytes_per_s() * e.hbm_efficiency) * cut))));
      }
    }
    if (r.framework.fsdp2_copy_out.s() > 0) {
      add("framework: FSDP2 copy-out",
          fmt::format("each gather's bytes read and written into the parameters ({:.0f} bytes "
                      "per gathered byte), {} gather(s) per micro batch, over HBM = {} per "
                      "micro batch",
                      fw.fsdp2_copy_out_bytes_per_byte, s.sharding.reshard_after_forward ? 2 : 1,
                      Ms(r.framework.fsdp2_copy_out)));
    }
    if (r.framework.attention_backend.s() > 0) {
      add("framework: attention backend",
          fmt::format("attention time x (1 / {:.2f} - 1) forward and recompute, x (1 / {:.2f} - "
                      "1) backward = {} per micro batch",
                      fw.attention_forward_factor, fw.attention_backward_factor,
                      Ms(r.framework.attention_backend)));
    }
  }
  for (const std::string& c : r.caveats) add("not modelled", c);
  add("overlap options",
      fmt::format("tp_comm {}, moe_a2a {}, cp_comm {}, pp_p2p {}{}, grad_reduce {}, param_gather "
                  "{} (job file section overlap:)",
                  On(s.overlap.tp_comm), On(s.overlap.moe_a2a), On(s.overlap.cp_comm),
                  On(PpP2pOverlapped(s)),
                  s.overlap.pp_p2p_given || l.pp == 1 || !s.megatron_core
                      ? ""
                      : (PpP2pOverlapped(s)
                             ? " (megatron-core's default for the interleaved schedule)"
                             : " (megatron-core overlaps it only under the interleaved schedule)"),
                  On(s.overlap.grad_reduce), On(s.overlap.param_gather)));
  if (l.cp > 1 && s.overlap.cp_comm) {
    const bool gather = l.cp_comm_type == CpCommType::kAllGather;
    add("context-parallel overlap",
        fmt::format("{} = {} of CP traffic, exposed {}",
                    gather ? fmt::format("the K/V all-gather is waited for after the local chunk's "
                                         "attention, so it hides behind 1 / CP = 1/{} of "
                                         "attention: max(0, traffic - micro batches x attention "
                                         "per micro batch / {})",
                                         l.cp, l.cp)
                           : "each ring step hides behind the attention of the chunk in hand: "
                             "max(0, traffic - micro batches x attention per micro batch)",
                    Ms(r[StepPart::kCp].total), Ms(r[StepPart::kCp].exposed)));
  }
  if (l.pp > 1 && (l.pp_schedule != PipelineSchedule::kDefault || l.uneven_pipeline())) {
    add("pipeline schedule", fmt::format("{}; layers per stage {}", PipelineScheduleName(l),
                                         fmt::join(StageLayerCounts(l, whole.layers), " + ")));
  }
  const double skew_mb =
      r[StepPart::kMoeImbalance].total.s() / static_cast<double>(s.micro_batches);
  const PassTimes passes{r.forward.total().s(),
                         r.backward.total().s() + r.recompute.total().s() + skew_mb,
                         r.weight_gradient.s()};
  const bool other_ranks = std::abs(r.bubble_micro_batch.s() - r.micro_batch.s()) > 0;
  add("pipeline bubble",
      fmt::format("{} = {:.4f} of {} micro batches x {}{} = {}",
                  ScheduleBubbleFormula(l, s.micro_batches, passes), r.bubble_fraction,
                  s.micro_batches, Ms(r.bubble_micro_batch),
                  other_ranks
                      ? fmt::format(" (the other {} ranks' mean micro batch, not the slowest's "
                                    "{}: the pipeline fills and drains through each of them once "
                                    "and runs at the slowest's pace in between)",
                                    l.pp - 1, Ms(r.micro_batch))
                      : "",
                  S(r[StepPart::kBubble].total)));
  if (!r.stage_times.empty() && l.pp > 1 && !ShardingOwnsDpTraffic(s)) {
    const Seconds total = r[StepPart::kDpGrad].total + r[StepPart::kExpertDpGrad].total;
    const Seconds exposed = r[StepPart::kDpGrad].exposed + r[StepPart::kExpertDpGrad].exposed;
    add("data-parallel gradient sync, per rank",
        fmt::format("each rank reduces its own parameters' gradients after its own last backward; "
                    "under 1F1B rank 0's ends last, rank r's sum_(j<r) B_j / v earlier. Exposed "
                    "at the step's end: rank {}'s sync of {} (grad_reduce {}: {}) less its lead "
                    "of {} = {}",
                    r.grad_sync_rank, S(total), On(s.overlap.grad_reduce),
                    s.overlap.grad_reduce ? "max(one layer's buckets, the sync - its last backward)"
                                          : "all of it",
                    Ms(r.grad_sync_lead), S(exposed)));
  }
  if (r[StepPart::kStraggler].total.s() > 0) {
    add("variable-length stragglers",
        fmt::format("each DP rank runs {} samples; t(S) = a S + b S^2 per sample; E[max over {} DP "
                    "ranks] - mean = {}",
                    s.micro_batches * s.micro_batch, l.dp, S(r[StepPart::kStraggler].total)));
  }
  // The pipeline rank whose finalize all-reduces and optimizer end the step, and what it holds.
  const std::string optimizer_rank =
      l.pp > 1 ? fmt::format(
                     " (rank {}'s of the {} pipeline ranks, {}: its own stage's, "
                     "whose all-reduces and optimizer end the step)",
                     r.optimizer_rank, l.pp, CompositionText(r.optimizer_stage, whole.layer_kinds))
               : std::string();
  if (s.muon) {
    const double trainable =
        static_cast<double>(
            whole.traffic.trainable_non_expert_params.value_or(whole.traffic.non_expert_params)) +
        static_cast<double>(
            whole.traffic.trainable_expert_params.value_or(whole.traffic.expert_params));
    const double adamw =
        trainable > 0 ? std::max(0.0, 1 - whole.muon_matrix_params / trainable) : 1.0;
    add("optimizer step (Muon)",
        fmt::format("{:.4g} local parameters{} x (2 x {} + 2 x {} x (1 + {:.4f} AdamW share) + "
                    "2 x {} + {}) B / ({:.0f} GB/s x {:.2f}) + Newton-Schulz {} = {}",
                    r.local_params, optimizer_rank, s.master_bytes, s.moment_bytes, adamw,
                    s.grad_bytes, s.param_bytes, t.hbm.gb_per_s(), e.hbm_efficiency,
                    Ms(r.muon_newton_schulz), Ms(r[StepPart::kOptimizer].total)));
    add("Muon Newton-Schulz iterations",
        fmt::format(
            "5 x (4 m^2 n + 2 m^3) FLOP per m x n hidden matrix (m <= n, {}), {}; each "
            "rank its own stage's matrices (rank {}'s: {}), the dense ones / {} ranks, "
            "the routed experts / (EP {} x expert-DP {}): {:.4g} FLOP (whole model, "
            "whole matrices: {:.4g}), each at {:.1f} TFLOP/s x GemmEfficiency(m, m, n) "
            "= {}",
            s.megatron_core ? "megatron-core's shapes: linear_fc1 whole, linear_qkv as "
                              "its q, k and v, the router and MLA's projections included"
                            : "each module its own matrix, the router included",
            s.megatron_core && l.tp * l.etp > 1
                ? fmt::format("each TP rank its own shard (megatron-core's blockwise "
                              "muon_tp_mode: TP {}, ETP {})",
                              l.tp, l.etp)
                : std::string("whole matrices"),
            r.optimizer_rank, CompositionText(r.optimizer_stage, whole.layer_kinds),
            s.distributed_optimizer ? l.dp * l.cp : 1, l.ep,
            s.distributed_optimizer ? std::max<int64_t>(l.expert_dp(), 1) : 1, r.muon_flop,
            s.megatron_core ? whole.muon_ns_flop_megatron_core : whole.muon_ns_flop_separate,
            peak_t, Ms(r.muon_newton_schulz)));
  } else {
    add("optimizer step",
        fmt::format("{:.4g} local parameters{} x (2 x {} + 4 x {} + 2 x {} + {}) B / ({:.0f} "
                    "GB/s x {:.2f}) = {}",
                    r.local_params, optimizer_rank, s.master_bytes, s.moment_bytes, s.grad_bytes,
                    s.param_bytes, t.hbm.gb_per_s(), e.hbm_efficiency,
                    Ms(r[StepPart::kOptimizer].total)));
  }
  std::string sum = "step = ";
  bool first = true;
  for (size_t i = 0; i < kStepPartCount; ++i) {
    if (r.parts[i].exposed.s() <= 0) continue;
    sum += fmt::format("{}{}", first ? "" : " + ", S(r.parts[i].exposed));
    first = false;
  }
  add("step time (exposed parts)", fmt::format("{} = {}", sum, S(r.step)));
  add("throughput and MFU",
      fmt::format(
          "{:.0f} tokens / {} / {} GPUs = {:.1f} tokens/s/GPU; MFU = {:.1f} x {:.4g} FLOP / "
          "{:.1f} TFLOP/s = {:.2f}%; HFU {:.2f}%",
          r.tokens_per_step, S(r.step), l.world(), r.tokens_per_s_per_gpu, r.tokens_per_s_per_gpu,
          r.model_flop_per_token, peak_t, 100 * r.mfu, 100 * r.hfu));
  return out;
}

std::vector<std::string> MicroBatchTimeline(const StepLayout& s, const StepResult& r) {
  const double m = static_cast<double>(s.micro_batches);
  // Exposed per-micro-batch communication, split evenly over the passes that issue it.
  const double passes = s.recompute == RecomputeGranularity::kFull ? 3.0 : 2.0;
  const Seconds comm = (r[StepPart::kTp].exposed + r[StepPart::kCp].exposed +
                        r[StepPart::kEp].exposed + r[StepPart::kPp].exposed) /
                       m;
  const Seconds skew = r[StepPart::kMoeImbalance].total / m;
  struct TimelinePhase {
    std::string name;
    Seconds time;
  };
  // The routing skew lengthens each pass's expert GEMMs in proportion to their time.
  const Seconds expert = r.forward.expert_gemm + r.backward.expert_gemm + r.recompute.expert_gemm;
  auto skew_of = [&](Seconds pass_expert) {
    return expert.s() > 0 ? skew * (pass_expert / expert) : Seconds();
  };
  std::vector<TimelinePhase> phases = {
      {"forward compute", r.forward.total() + skew_of(r.forward.expert_gemm)}};
  phases.push_back({"forward exposed comm", comm / passes});
  if (r.recompute.total().s() > 0) {
    phases.push_back({"recompute", r.recompute.total() + skew_of(r.recompute.expert_gemm)});
    if (passes > 2) phases.push_back({"recompute exposed comm", comm / passes});
  }
  phases.push_back({"backward compute", r.backward.total() + skew_of(r.backward.expert_gemm)});
  phases.push_back({"backward exposed comm", comm / passes});
  // Name only the framework costs this job has, by their parts' names less the "framework: ".
  std::vector<std::string_view> costs;
  for (StepPart part : {StepPart::kFrameworkHostBound, StepPart::kFrameworkFetchHooks,
                        StepPart::kFrameworkExpertLoop, StepPart::kFrameworkAttention,
                        StepPart::kFrameworkEagerOps, StepPart::kFrameworkFsdp2CopyOut}) {
    constexpr std::string_view kPrefix = "framework: ";
    std::string_view name = StepPartName(part);
    if (name.starts_with(kPrefix)) name.remove_prefix(kPrefix.size());
    if (r[part].total.s() > 0) costs.push_back(name);
  }
  phases.push_back(
      {fmt::format("framework overhead ({})", fmt::join(costs, ", ")), r.framework.total()});
  const double total = r.micro_batch.s();
  constexpr int kWidth = 50;
  std::vector<std::string> lines;
  double start = 0;
  for (const TimelinePhase& p : phases) {
    if (p.time.s() <= 0) continue;
    const int from = static_cast<int>(std::lround(kWidth * start / total));
    const int to =
        std::max(from + 1, static_cast<int>(std::lround(kWidth * (start + p.time.s()) / total)));
    std::string bar(static_cast<size_t>(kWidth), ' ');
    for (int i = from; i < std::min(to, kWidth); ++i) bar[static_cast<size_t>(i)] = '#';
    lines.push_back(
        fmt::format("{:>9.3f} s - {:>9.3f} s  |{}|  {}", start, start + p.time.s(), bar, p.name));
    start += p.time.s();
  }
  return lines;
}

}  // namespace strata
