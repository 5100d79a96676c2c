#include "strata/memory/static_memory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"
#include "strata/job/training_modes_parse.h"
#include "strata/memory/sharding.h"
#include "strata/model/adapter.h"

namespace strata {
namespace {

struct KindShare {
  int64_t params = 0;  // per GPU
  std::string how;     // how the full count was sharded
};

std::string GbAndGib(Bytes b) { return fmt::format("{} ({})", FormatGB(b), FormatGiB(b)); }

/// `make()` when the ledger is explained; empty for the numbers alone (Detail).
template <class Make>
std::string TextIf(bool explain, Make make) {
  return explain ? std::string(make()) : std::string();
}

/// Whether the adapters train in the parameters' dtype with an optimizer master copy, as the
/// base model's own weights would. megatron-core wraps the whole model, adapters included, in
/// Float16Module after the adapters are made (NVIDIA/Megatron-LM
/// megatron/core/transformer/module.py, Float16Module.__init__: `self.add_module('module',
/// module.bfloat16())`; ms-swift 3602360 swift/megatron/trainers/base.py prepare_model runs
/// _prepare_peft_model before wrap_model, swift/megatron/utils/megatron_lm_utils.py wrap_model
/// builds the Float16Module), so PEFT's fp32 adapters (autocast_adapter_dtype) come back to
/// bf16, and the optimizer (DistributedOptimizer, or Float16OptimizerWithFloat16Params without
/// it) keeps an fp32 master copy of them. Every other engine keeps PEFT's fp32 adapters: their
/// own master copy.
bool AdaptersInParamDtype(const Job& job) {
  return job.spec.adapter.on() && job.RunsMegatronCore(job.spec.sharding.mode);
}

/// The adapters of the stage's layers: in the master dtype (PEFT casts bf16 adapters to fp32,
/// autocast_adapter_dtype), or the parameters' dtype under megatron-core
/// (AdaptersInParamDtype), split like the layers they sit on: over TP, and the routed experts'
/// over EP x ETP (each EP rank holds its local experts' A and B); sharded with the weights under
/// ZeRO-3 / FSDP2. They are the job's only trainable parameters; the routed experts' state is
/// sharded over expert-DP as the experts' own is. Those on a Gated DeltaNet every TP rank holds
/// whole (job/engine_chain.h) are whole on every TP rank too: PEFT wraps each projection of the
/// one module every rank builds.
void AddAdapterWeights(const Job& job, const StageLayers& layers, const ShardGroups& groups,
                       Detail detail, StaticMemory& out) {
  const AdapterSpec& adapter = job.spec.adapter;
  int64_t full = 0, routed_full = 0, gdn_full = 0;
  for (int64_t i : layers) {
    const AdapterLayerCost cost =
        AdapterCostOfLayer(job.model, adapter, job.model.layers[static_cast<size_t>(i)]);
    full += cost.params;
    routed_full += cost.routed_params;
    gdn_full += cost.gdn_params;
  }
  const ParallelLayout& l = job.spec.layout;
  const int64_t tp = l.tp;
  const int64_t expert_ways = l.ep * l.etp;
  const int64_t whole = job.gdn.replicated_over_tp && tp > 1 ? gdn_full : 0;
  const int64_t dense = (full - routed_full - whole) / tp + whole;
  const int64_t routed = routed_full / expert_ways;
  const int64_t params = dense + routed;
  const double elem_bytes = static_cast<double>(DTypeBytes(
      AdaptersInParamDtype(job) ? job.spec.param_dtype : job.spec.optimizer.master_dtype));
  const bool shards = FsdpHoldingOf(job).weights_sharded;
  const double stored = shards
                            ? static_cast<double>(dense) / static_cast<double>(groups.dense) +
                                  static_cast<double>(routed) / static_cast<double>(groups.expert)
                            : static_cast<double>(params);
  LedgerItem item{ItemKind::kWeights, "", Bytes::Count(elem_bytes * stored), "",
                  FixedText(detail,
                            "trainable: the adapters' gradients and optimizer state "
                            "below are theirs alone")};
  if (detail == Detail::kExplained) {
    const AdapterCoverage cov = CoverageOf(job.model, adapter);
    item.name = fmt::format("weights: adapters ({} r={} on {})", AdapterKindName(adapter.kind),
                            adapter.rank, fmt::join(adapter.targets, ", "));
    const std::string per_layer = fmt::format("r x (d_in + d_out){} per adapted layer",
                                              adapter.kind == AdapterKind::kDora ? " + d_out" : "");
    std::string split =
        routed_full == 0 && whole == 0
            ? fmt::format("{} / TP {}", per_layer, tp)
            : fmt::format("{}: {} / TP {}", per_layer,
                          GroupDigits(static_cast<double>(full - routed_full - whole)), tp);
    if (whole > 0) {
      split += fmt::format(
          " + {} on Gated DeltaNet projections, not divided by TP (the layer is "
          "whole on every TP rank)",
          GroupDigits(static_cast<double>(whole)));
    }
    if (routed_full > 0) {
      split += fmt::format(" + {} on routed experts / (EP {} x ETP {})",
                           GroupDigits(static_cast<double>(routed_full)), l.ep, l.etp);
    }
    std::string sharded;
    if (shards && (groups.dense > 1 || (routed > 0 && groups.expert > 1))) {
      sharded = routed > 0 ? fmt::format(", sharded over {} (experts over {})", groups.dense_text,
                                         groups.expert_text)
                           : fmt::format(" / {}", groups.dense);
    }
    item.formula = fmt::format("{:.0f} B x {} params ({} of {} layers: {}){} = {}", elem_bytes,
                               GroupDigits(static_cast<double>(params)), layers.size(),
                               job.model.layers.size(), split, sharded, GbAndGib(item.bytes));
    item.formula +=
        fmt::format("\n      the model's {} adapter params, on {}",
                    GroupDigits(static_cast<double>(cov.params)), fmt::join(cov.matrices, "; "));
  }
  out.params += params;
  out.trainable_params += params;
  out.dense_trainable += static_cast<double>(dense);
  out.expert_trainable += static_cast<double>(routed);
  out.weights.push_back(std::move(item));
}

}  // namespace

bool IsFrozen(const Job& job, ModuleKind kind) { return IsFrozen(job.spec, kind); }

StageLayers::StageLayers(std::vector<Run> runs) : runs_(std::move(runs)) {
  for (const Run& run : runs_) listed_ += run.count;
}

int64_t StageLayers::ChunkOf(int64_t i) const {
  if (runs_.empty()) return i / per_chunk_;
  for (size_t c = 0; c < runs_.size(); ++c) {
    if (i < runs_[c].count) return static_cast<int64_t>(c);
    i -= runs_[c].count;
  }
  return static_cast<int64_t>(runs_.size()) - 1;
}

int64_t StageLayers::IndexInChunk(int64_t i) const {
  if (runs_.empty()) return i % per_chunk_;
  for (const Run& run : runs_) {
    if (i < run.count) return i;
    i -= run.count;
  }
  return i;
}

std::vector<int64_t> StageLayers::ChunkSizes() const {
  if (runs_.empty()) return std::vector<int64_t>(static_cast<size_t>(chunks_), per_chunk_);
  std::vector<int64_t> sizes;
  for (const Run& run : runs_) sizes.push_back(run.count);
  return sizes;
}

StageLayers StageLayerIndices(const Job& job, int64_t stage) {
  const ParallelLayout& l = job.spec.layout;
  const auto layers = static_cast<int64_t>(job.model.layers.size());
  if (l.uneven_pipeline() || l.v_shaped()) {
    // One run per virtual stage of the rank, each starting after all the virtual stages before
    // it in model order (job/pipeline_split.h).
    const std::vector<int64_t> counts = ChunkLayerCounts(l, layers);
    std::vector<int64_t> offsets(counts.size() + 1, 0);
    for (size_t k = 0; k < counts.size(); ++k) offsets[k + 1] = offsets[k] + counts[k];
    std::vector<StageLayers::Run> runs;
    for (int64_t k : ChunksOfRank(l, stage)) {
      runs.push_back({offsets[static_cast<size_t>(k)], counts[static_cast<size_t>(k)]});
    }
    return StageLayers(std::move(runs));
  }
  const int64_t per_chunk = layers / (l.pp * l.vpp);
  return {stage * per_chunk, per_chunk, l.vpp, l.pp * per_chunk};
}

StaticMemory ComputeStaticMemory(const Job& job, const ParamBreakdown& params, int64_t stage,
                                 Detail detail) {
  const bool explain = detail == Detail::kExplained;
  const ParallelLayout& l = job.spec.layout;
  const bool first = stage == 0;
  // The output layer's rank: the last, or the first under a V schedule (zbv, dualpipev).
  const bool last = stage == l.output_stage();
  std::array<KindShare, kModuleKindCount> share{};
  auto at = [&](ModuleKind k) -> KindShare& { return share[static_cast<size_t>(k)]; };

  ModuleParams layer_sum;
  const auto stage_layers = StageLayerIndices(job, stage);
  for (int64_t i : stage_layers) layer_sum += params.layers[static_cast<size_t>(i)].modules;
  const std::string of_layers = TextIf(explain, [&] {
    return fmt::format("{} of {} layers", stage_layers.size(), params.layers.size());
  });
  for (ModuleKind k : {ModuleKind::kAttention, ModuleKind::kLinearAttention, ModuleKind::kDenseMlp,
                       ModuleKind::kSharedExperts}) {
    at(k) = {layer_sum[k] / l.tp, TextIf(explain, [&] {
               return fmt::format("{}: {} / TP {}", of_layers,
                                  GroupDigits(static_cast<double>(layer_sum[k])), l.tp);
             })};
  }
  // transformers' Gated DeltaNet inside megatron-core is whole on every TP rank: its weights,
  // and so its gradients and optimizer states, are not divided by TP (job/engine_chain.h).
  if (l.tp > 1 && !job.gdn.replicated_over_tp && !job.gdn.rule.empty()) {
    at(ModuleKind::kLinearAttention).how += TextIf(explain, [&] { return ": " + job.gdn.rule; });
  }
  if (job.gdn.replicated_over_tp && l.tp > 1) {
    at(ModuleKind::kLinearAttention) = {
        layer_sum[ModuleKind::kLinearAttention], TextIf(explain, [&] {
          return fmt::format(
              "{}: {}, not divided by TP {}: {}", of_layers,
              GroupDigits(static_cast<double>(layer_sum[ModuleKind::kLinearAttention])), l.tp,
              job.gdn.rule);
        })};
  }
  at(ModuleKind::kRouter) = {layer_sum[ModuleKind::kRouter], TextIf(explain, [&] {
                               return fmt::format("{}, replicated over TP", of_layers);
                             })};
  const int64_t norms = layer_sum[ModuleKind::kNorms] + (last ? params.final_norm : 0);
  at(ModuleKind::kNorms) = {norms, TextIf(explain, [&] {
                              return fmt::format("{}{}, replicated over TP", of_layers,
                                                 last ? " + final norm" : "");
                            })};
  const int64_t expert_ways = l.ep * l.etp;
  at(ModuleKind::kRoutedExperts) = {
      layer_sum[ModuleKind::kRoutedExperts] / expert_ways, TextIf(explain, [&] {
        return fmt::format("{}: {} / (EP {} x ETP {})", of_layers,
                           GroupDigits(static_cast<double>(layer_sum[ModuleKind::kRoutedExperts])),
                           l.ep, l.etp);
      })};
  // The vocabulary is padded so that every TP rank holds an equal slice.
  const int64_t padded_vocab = PaddedVocab(job.model.vocab_size, l.tp);
  const int64_t vocab_slice = job.model.hidden_size * padded_vocab / l.tp;
  const std::string vocab_how = TextIf(explain, [&] {
    return fmt::format("{} hidden x {} vocab (padded) / TP {}", job.model.hidden_size,
                       GroupDigits(static_cast<double>(padded_vocab)), l.tp);
  });
  if (first) at(ModuleKind::kEmbedding) = {vocab_slice, vocab_how};
  if (last && (!job.model.tie_word_embeddings || !first)) {
    at(ModuleKind::kHead) = {vocab_slice, job.model.tie_word_embeddings
                                              ? vocab_how + ", a copy of the tied embedding"
                                              : vocab_how};
  }
  if (first && params.vision.total > 0) {
    at(ModuleKind::kVision) = {
        params.vision.total,
        FixedText(detail, "the whole vision tower on the first stage, replicated over TP")};
  }
  int64_t mtp_expert = 0;
  if (last && job.spec.mtp && params.mtp.total > 0) {
    mtp_expert = params.mtp.expert / expert_ways;
    at(ModuleKind::kMtp) = {
        (params.mtp.total - params.mtp.expert) / l.tp + mtp_expert, TextIf(explain, [&] {
          return fmt::format("non-expert / TP {} + experts / (EP x ETP {})", l.tp, expert_ways);
        })};
  }

  StaticMemory out;
  out.weights.reserve(kModuleKindCount);  // one item per module kind at most: no regrowth
  const ShardingSpec& sh = job.spec.sharding;
  const OptimizerSpec& opt = job.spec.optimizer;
  const ShardGroups groups = DataShardGroups(job, detail);
  // PyTorch's FSDP keeps the sharded parameter in the original (master) dtype and casts on
  // all-gather (FsdpHoldingOf): FSDP2 (sharding.mode fsdp2, and the zero2/zero3 it runs:
  // torchtitan's zero3), and FSDP1 wherever it runs (verl's strategy fsdp is sharding.mode
  // zero3, Accelerate's SHARD_GRAD_OP zero2): its FlatParameter's padded local shard
  // (pytorch/pytorch fe03cf69 torch/distributed/fsdp/_flat_param.py, init_flat_param_attributes:
  // _local_shard = flat_param.data, in the dtype the model was loaded in, fp32 for verl's actor)
  // is what the optimizer steps; the param-dtype copy (_mp_shard) lives only while its unit is
  // all-gathered (memory/sharding.cc). Its padding, under one element per unit and rank, is not
  // counted.
  const FsdpHolding holding = FsdpHoldingOf(job);
  const bool fsdp1 = holding.fsdp1;
  const bool fsdp2 = holding.master_is_shard;
  const char* shard_note = fsdp1 ? "FSDP1 sharded FlatParameter, in the master dtype"
                                 : "FSDP2 sharded parameter, stored in the master dtype";
  const bool te_fp8_weights = job.spec.fp8.transformer_engine() && job.spec.fp8.param_gather;
  // FSDP2 keeps the sharded parameter in the master dtype and casts on all-gather; the others
  // store weights in the parameter dtype (GEMM weights in FP8 under --fp8-param-gather).
  const int64_t param_bytes =
      fsdp2 ? DTypeBytes(opt.master_dtype) : DTypeBytes(job.spec.param_dtype);
  const bool params_offloaded = sh.offload_param != OffloadTarget::kNone;
  const bool optimizer_offloaded =
      sh.offload_optimizer != OffloadTarget::kNone || (fsdp2 && params_offloaded);
  auto offload = [&](LedgerItem& item, OffloadTarget target) {
    if (target == OffloadTarget::kNone || item.bytes.value() == 0) return;
    LedgerItem host = item;
    host.note =
        TextIf(explain, [&] { return fmt::format("offloaded to {}", OffloadTargetName(target)); });
    out.host.push_back(host);
    item.note = TextIf(explain, [&] {
      return fmt::format("offloaded to {}: {} there, 0 on the GPU", OffloadTargetName(target),
                         FormatGB(item.bytes));
    });
    item.bytes = Bytes::Count(0);
  };
  for (ModuleKind k : AllModuleKinds()) {
    const KindShare& s = at(k);
    if (s.params == 0) continue;
    const bool frozen = IsFrozen(job, k);
    out.params += s.params;
    const bool expert = k == ModuleKind::kRoutedExperts;
    const double expert_part = expert                  ? static_cast<double>(s.params)
                               : k == ModuleKind::kMtp ? static_cast<double>(mtp_expert)
                                                       : 0.0;
    if (!frozen) {
      out.trainable_params += s.params;
      out.expert_trainable += expert_part;
      out.dense_trainable += static_cast<double>(s.params) - expert_part;
      if (k == ModuleKind::kEmbedding || k == ModuleKind::kHead || k == ModuleKind::kNorms) {
        out.adamw_only_trainable += static_cast<double>(s.params);
      }
      // The router's weight (num_experts x h) is a 2-D matrix, Muon's in megatron-core and
      // Moonlight alike (sim/muon_cost.h); only its per-expert bias (1 of each expert's
      // h + 1 parameters) is AdamW's.
      if (k == ModuleKind::kRouter && job.model.moe.router_bias) {
        out.adamw_only_trainable +=
            static_cast<double>(s.params) / static_cast<double>(job.model.hidden_size + 1);
      }
    }
    const bool linear = IsGemmKind(k);
    // QLoRA stores the base's linear layers in NF4 (bitsandbytes' Linear4bit); the embedding,
    // the output layer and the norms stay in the parameter dtype.
    const bool nf4 = job.spec.adapter.quantized_base() && linear;
    const double elem_bytes = nf4 ? Nf4BitsPerWeight() / 8.0
                              : te_fp8_weights && linear && !fsdp2
                                  ? 1.0
                                  : static_cast<double>(param_bytes);
    const int64_t ways = holding.weights_sharded ? (expert ? groups.expert : groups.dense) : 1;
    const Bytes bytes =
        Bytes::Count(elem_bytes * static_cast<double>(s.params) / static_cast<double>(ways));
    LedgerItem item{ItemKind::kWeights, "", bytes, "",
                    FixedText(detail, nf4      ? "frozen, NF4 with double quantisation (QLoRA)"
                                      : frozen ? "frozen: no gradient or optimizer state"
                                      : elem_bytes == 1.0 ? "FP8 primary weights (fp8 param gather)"
                                      : fsdp2             ? shard_note
                                                          : "")};
    if (explain) {
      std::string how = s.how;
      if (ways > 1)
        how += fmt::format(", sharded over {}", expert ? groups.expert_text : groups.dense_text);
      item.name = fmt::format("weights: {}", ModuleKindName(k));
      item.formula = fmt::format("{:.4g} B x {} params ({}){} = {}", elem_bytes,
                                 GroupDigits(static_cast<double>(s.params)), how,
                                 ways > 1 ? fmt::format(" / {}", ways) : "", GbAndGib(bytes));
    }
    offload(item, sh.offload_param);
    out.weights.push_back(std::move(item));
  }

  if (job.spec.adapter.on()) AddAdapterWeights(job, stage_layers, groups, detail, out);

  // State sharded over the data-parallel shard group: dense over DP x CP, experts over
  // expert-DP (the reference case: 40 vs 5).
  auto sharded = [&](bool on) {
    return on ? out.dense_trainable / static_cast<double>(groups.dense) +
                    out.expert_trainable / static_cast<double>(groups.expert)
              : out.dense_trainable + out.expert_trainable;
  };
  auto shard_text = [&](bool on) {
    if (!explain) return std::string();
    const std::string dense = fmt::format("{} dense / {}", GroupDigits(out.dense_trainable),
                                          on ? groups.dense_text : "1 (not sharded)");
    // A dense model (or a stage without experts) has no expert-data-parallel group to name.
    if (out.expert_trainable == 0) return fmt::format("({})", dense);
    return fmt::format("({} + {} expert / {})", dense, GroupDigits(out.expert_trainable),
                       on ? groups.expert_text : "1 (not sharded)");
  };
  const int64_t grad_bytes = DTypeBytes(job.spec.grad_dtype);
  const bool grads_sharded = sh.shards_gradients();
  out.gradients.kind = ItemKind::kGradients;
  out.gradients.name = TextIf(
      explain, [&] { return fmt::format("gradient buffer ({})", DTypeName(job.spec.grad_dtype)); });
  out.gradients.bytes = Bytes::Count(static_cast<double>(grad_bytes) * sharded(grads_sharded));
  out.gradients.formula = TextIf(explain, [&] {
    return grads_sharded ? fmt::format("{} B x {} = {}", grad_bytes, shard_text(true),
                                       GbAndGib(out.gradients.bytes))
                         : fmt::format("{} B x {} trainable params = {}", grad_bytes,
                                       GroupDigits(static_cast<double>(out.trainable_params)),
                                       GbAndGib(out.gradients.bytes));
  });
  if (grads_sharded) {
    out.gradients.note = TextIf(
        explain, [&] { return fmt::format("{}: gradients sharded", ShardingModeName(sh.mode)); });
    offload(out.gradients, fsdp2 ? sh.offload_param : sh.offload_optimizer);
  }

  const bool opt_sharded = sh.shards_optimizer();
  const double shard = sharded(opt_sharded);
  const std::string shard_str = shard_text(opt_sharded);
  // With adapters the trainable parameters are the adapters, already in the master dtype,
  // except under megatron-core, which casts them to the parameters' dtype (AdaptersInParamDtype).
  const bool fp32_adapters = job.spec.adapter.on() && !AdaptersInParamDtype(job);
  const bool needs_master = !fsdp2 && !fp32_adapters && job.spec.param_dtype != opt.master_dtype;
  const int64_t master_bytes = needs_master ? DTypeBytes(opt.master_dtype) : 0;
  out.master_weights = {ItemKind::kOptimizer,
                        TextIf(explain,
                               [&] {
                                 return fmt::format("optimizer: master weights ({})",
                                                    DTypeName(opt.master_dtype));
                               }),
                        Bytes::Count(static_cast<double>(master_bytes) * shard), "",
                        FixedText(detail, "allocated when the optimizer is built")};
  out.master_weights.formula =
      fp32_adapters  ? FixedText(detail,
                                 "0: the adapters are kept in fp32 (PEFT's autocast_adapter_dtype), "
                                  "their own master copy")
      : needs_master ? TextIf(explain,
                              [&] {
                                return fmt::format("{} B x {} = {}", master_bytes, shard_str,
                                                   GbAndGib(out.master_weights.bytes));
                              })
      : fsdp2 ? FixedText(detail, fsdp1 ? "0: FSDP1's sharded FlatParameter is the master copy"
                                        : "0: FSDP2's sharded parameter is the master copy")
              : FixedText(detail, "0: the parameters are already the master copy");
  const OptimizerStates states =
      OptimizerStatesOf(opt, out.trainable_params, out.adamw_only_trainable, detail);
  out.moments = {ItemKind::kOptimizer, states.name, Bytes::Count(states.bytes_per_param * shard),
                 "", FixedText(detail, "allocated lazily at the first optimizer step")};
  out.moments.formula = TextIf(explain, [&] {
    return fmt::format("{} x {} = {}", states.formula, shard_str, GbAndGib(out.moments.bytes));
  });
  // With bf16 gradients the optimizer copies its gradient shard to the master dtype.
  const bool copies_grads = job.spec.grad_dtype != opt.master_dtype;
  const int64_t copy_bytes = copies_grads ? DTypeBytes(opt.master_dtype) : 0;
  out.step_transient = {ItemKind::kOptimizer,
                        FixedText(detail, "optimizer step: gradient shard in master dtype"),
                        Bytes::Count(static_cast<double>(copy_bytes) * shard), "",
                        FixedText(detail, "only during optimizer.step()")};
  out.step_transient.formula =
      copies_grads ? TextIf(explain,
                            [&] {
                              return fmt::format("{} B x {} = {}", copy_bytes, shard_str,
                                                 GbAndGib(out.step_transient.bytes));
                            })
                   : FixedText(detail, "0: the gradient buffer is already in the master dtype");
  if (optimizer_offloaded) {
    const OffloadTarget target = fsdp2 ? sh.offload_param : sh.offload_optimizer;
    offload(out.master_weights, target);
    offload(out.moments, target);
    offload(out.step_transient, target);
  }
  return out;
}

bool IsGemmKind(ModuleKind k) {
  return k == ModuleKind::kAttention || k == ModuleKind::kLinearAttention ||
         k == ModuleKind::kDenseMlp || k == ModuleKind::kSharedExperts ||
         k == ModuleKind::kRoutedExperts;
}

OptimizerStates OptimizerStatesOf(const OptimizerSpec& opt, int64_t trainable, double adamw_only,
                                  Detail detail) {
  const bool explain = detail == Detail::kExplained;
  const auto m = static_cast<double>(DTypeBytes(opt.moment_dtype));
  const std::string_view dt = DTypeName(opt.moment_dtype);
  OptimizerStates s;
  if (opt.name == "muon") {
    // One momentum buffer on the hidden matrices; AdamW's two moments on the rest.
    const double frac = trainable > 0 ? adamw_only / static_cast<double>(trainable) : 0.0;
    s.bytes_per_param = m * (1.0 + frac);
    if (explain) {
      s.name = fmt::format(
          "optimizer: Muon momentum ({}; AdamW moments on embeddings, head, norms)", dt);
      s.formula = fmt::format("{:.0f} B x (1 + {:.4f} AdamW share)", m, frac);
    }
  } else if (opt.name == "adam8bit") {
    // bitsandbytes 8-bit Adam: two uint8 states plus one fp32 absmax per 2048-element block each.
    s.bytes_per_param = 2.0 * (1.0 + 4.0 / 2048.0);
    s.name = FixedText(detail, "optimizer: 8-bit Adam moments (uint8, block-wise scales)");
    s.formula = FixedText(detail, "2 x (1 B + 4 B / 2048)");
  } else {
    s.bytes_per_param = 2.0 * m;
    if (explain) {
      s.name = fmt::format("optimizer: Adam moments ({})", dt);
      s.formula = fmt::format("2 x {:.0f} B", m);
    }
  }
  return s;
}

}  // namespace strata
