#include "strata/memory/sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "strata/memory/static_memory.h"

namespace strata {
namespace {}  // namespace

ShardGroups DataShardGroups(const Job& job, Detail detail) {
  const ParallelLayout& l = job.spec.layout;
  const ShardingSpec& sh = job.spec.sharding;
  ShardGroups g;
  if (!sh.shards_optimizer()) return g;
  const int64_t r = sh.replicate;
  g.dense = l.dp * l.cp / r;
  g.expert = std::max<int64_t>(1, l.expert_dp() / r);
  if (detail == Detail::kNumbersOnly) return g;
  const std::string rep = r > 1 ? fmt::format(" / replicate {}", r) : "";
  g.dense_text = fmt::format("DP x CP {}{}", l.dp * l.cp, rep);
  g.expert_text = fmt::format("expert-DP {}{}", l.expert_dp(), rep);
  return g;
}

FsdpHolding FsdpHoldingOf(const Job& job) {
  return FsdpHoldingOf(job.spec.sharding, job.runtime());
}

FsdpHolding FsdpHoldingOf(const ShardingSpec& sh, ShardingRuntime runtime) {
  const bool pytorch = runtime == ShardingRuntime::kFsdp1 || runtime == ShardingRuntime::kFsdp2;
  FsdpHolding h;
  h.fsdp1 = runtime == ShardingRuntime::kFsdp1;
  // FSDP1 (pytorch/pytorch 00ae0bc9 torch/distributed/fsdp/_runtime_utils.py) runs
  // SHARD_GRAD_OP on the same sharded FlatParameter as FULL_SHARD: _post_forward_reshard frees
  // the unsharded one only for RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES (FULL_SHARD,
  // HYBRID_SHARD), and _post_backward_hook's _should_free_in_backward frees it when the
  // gradients are synchronised. FSDP2 under zero2 is fully_shard with reshard_after_forward
  // false (Accelerate's fsdp_reshard_after_forward false): its sharded DTensor is kept at rest
  // as under zero3 (pytorch/pytorch@010ae4a8 torch/distributed/fsdp/_fully_shard/
  // _fsdp_param.py, FSDPParam._init_sharded_param).
  h.weights_sharded = sh.shards_weights() || (pytorch && sh.mode == ShardingMode::kZero2);
  h.fsdp2 = !h.fsdp1 && (sh.mode == ShardingMode::kFsdp2 ||
                         (runtime == ShardingRuntime::kFsdp2 && h.weights_sharded));
  // FSDP2's sharded parameter is a new tensor in the original parameter's dtype
  // (_init_sharded_param: param_data.new_zeros(padded_sharded_size)); param_dtype applies only
  // to the all-gather output (init_dtype_attrs, init_unsharded_param), and the optimizer is
  // built on the sharded parameters. torchtitan builds the model in training.dtype, float32 by
  // default (pytorch/torchtitan@b5bcd76c torchtitan/trainer.py:357-358, config/configs.py:87),
  // applies MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) (distributed/fsdp.py:
  // 223-226) and builds the optimizer after (trainer.py:537). FSDP1's FlatParameter shard is
  // likewise in the dtype the model was loaded in (static_memory.cc).
  h.master_is_shard = sh.mode == ShardingMode::kFsdp2 || (pytorch && h.weights_sharded);
  h.reshard_after_forward = sh.shards_weights() && sh.reshard_after_forward;
  // FSDP2's all-gather and reduce-scatter streams (ModeMemory::all_gather_in_flight). FSDP1
  // runs its reduce-scatter on its post_backward stream too, but only under sharding.mode fsdp2
  // is that priced so far.
  h.side_streams = sh.mode == ShardingMode::kFsdp2 || h.fsdp2;
  return h;
}

std::vector<ShardUnit> StageUnits(const Job& job, const ParamBreakdown& params, int64_t stage,
                                  Detail detail) {
  const ParallelLayout& l = job.spec.layout;
  const auto tp = static_cast<double>(l.tp);
  const auto experts = static_cast<double>(l.ep * l.etp);
  std::vector<ShardUnit> units;
  const int64_t padded_vocab = PaddedVocab(job.model.vocab_size, l.tp);
  const double vocab_slice =
      static_cast<double>(job.model.hidden_size) * static_cast<double>(padded_vocab) / tp;
  if (stage == 0) {
    const bool frozen = IsFrozen(job, ModuleKind::kEmbedding);
    units.push_back({"embedding", vocab_slice, 0, frozen ? 0 : vocab_slice});
  }
  for (int64_t i : StageLayerIndices(job, stage)) {
    const ModuleParams& m = params.layers[static_cast<size_t>(i)].modules;
    ShardUnit u{detail == Detail::kExplained ? fmt::format("layer {}", i) : std::string(), 0, 0, 0};
    for (ModuleKind k : AllModuleKinds()) {
      double n = static_cast<double>(m[k]);
      if (n == 0) continue;
      if (k == ModuleKind::kRoutedExperts) {
        n /= experts;
      } else if (k != ModuleKind::kRouter && k != ModuleKind::kNorms) {
        n /= tp;
      }
      u.params += n;
      if (IsGemmKind(k)) u.linear += n;
      if (!IsFrozen(job, k)) u.trainable += n;
    }
    units.push_back(u);
  }
  if (stage == l.output_stage()) {
    // The final norm goes with the output layer (torchtitan wraps norm + output together).
    const auto norm = static_cast<double>(params.final_norm);
    const bool head = !job.model.tie_word_embeddings || stage != 0;
    const double n = (head ? vocab_slice : 0.0) + norm;
    const double trainable = (head && !IsFrozen(job, ModuleKind::kHead) ? vocab_slice : 0.0) +
                             (IsFrozen(job, ModuleKind::kNorms) ? 0.0 : norm);
    units.push_back({head ? "final norm + output layer" : "final norm", n, 0, trainable});
  }
  return units;
}

double StageLinearParams(const Job& job, const ParamBreakdown& params, int64_t stage) {
  double total = 0;
  for (const ShardUnit& u : StageUnits(job, params, stage)) total += u.linear;
  return total;
}

double Fsdp1PaddedNumel(double numel, double world) {
  if (world <= 1) return numel;
  return world * std::ceil(numel / world);
}

double Fp8CopyBytesPerWeight(const Fp8Spec& fp8) {
  // Per weight element: a rowwise FP8 copy for the forward GEMM and a columnwise (transposed)
  // one for the backward GEMMs (Hopper's FP8 tensor cores take only the TN layout), each with
  // its scales: one fp32 per 128x128 block (blockwise), one E8M0 byte per 32 elements (MXFP8).
  // Under fp8 param gather the rowwise copy is the weight itself (counted with the weights).
  double scale = 0;
  switch (fp8.recipe) {
    case Fp8Recipe::kNone:
    case Fp8Recipe::kTorchaoTensorwise:
    case Fp8Recipe::kTorchaoRowwise:
      return 0;
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kTensorwise:
      scale = 0;
      break;
    case Fp8Recipe::kBlockwise:
      scale = 4.0 / (128.0 * 128.0);
      break;
    case Fp8Recipe::kMxfp8:
      scale = 1.0 / 32.0;
      break;
  }
  return 2.0 * (1.0 + scale) - (fp8.param_gather ? 1.0 : 0.0);
}

namespace {
// The names of the runtime's working-set items, shared by ComputeModeMemory and
// IsShardingWorkingSet so that the two cannot drift apart.
constexpr const char* kGatheredName = "weights: all-gathered (ZeRO-3/FSDP2 working set)";
constexpr const char* kReduceScatterName = "gradients: unsharded, before reduce-scatter";
constexpr const char* kAccumulatedName = "gradients: unsharded, accumulated over micro batches";
constexpr const char* kReduceBucketsName = "gradients: DeepSpeed reduce buckets (backward)";
}  // namespace

bool IsShardingWorkingSet(const LedgerItem& item) {
  for (const char* name :
       {kGatheredName, kReduceScatterName, kAccumulatedName, kReduceBucketsName}) {
    if (item.name == name) return true;
  }
  return false;
}

ModeMemory ComputeModeMemory(const Job& job, const ParamBreakdown& params, int64_t stage,
                             Detail detail) {
  const bool explain = detail == Detail::kExplained;
  const ShardingSpec& sh = job.spec.sharding;
  const Fp8Spec& fp8 = job.spec.fp8;
  const FsdpHolding holding = FsdpHoldingOf(job);
  const bool weights_sharded = holding.weights_sharded;
  const bool reshard = holding.reshard_after_forward;
  ModeMemory out;
  out.gathered = {ItemKind::kWeights, FixedText(detail, kGatheredName), Bytes::Count(0),
                  FixedText(detail, "0: weights are not sharded"), ""};
  out.reduce_scatter = {ItemKind::kGradients, FixedText(detail, kReduceScatterName),
                        Bytes::Count(0), FixedText(detail, "0: gradients are not sharded"), ""};
  out.accumulated = {ItemKind::kGradients, FixedText(detail, kAccumulatedName), Bytes::Count(0),
                     FixedText(detail, "0: no pipeline schedule"), ""};
  out.fp8_copies = {ItemKind::kWeights, FixedText(detail, "weights: FP8 copies"), Bytes::Count(0),
                    FixedText(detail, "0: no FP8 recipe"), ""};
  out.fp8_state = {ItemKind::kOverhead, FixedText(detail, "FP8 scaling state"), Bytes::Count(0),
                   FixedText(detail, "0: no FP8 recipe"), ""};
  out.reduce_buckets = {ItemKind::kGradients, FixedText(detail, kReduceBucketsName),
                        Bytes::Count(0), FixedText(detail, "0: not DeepSpeed ZeRO"), ""};
  // DeepSpeed's ZeRO-1/2 optimizer (deepspeedai/DeepSpeed edaa722
  // deepspeed/runtime/zero/stage_1_and_2.py): with contiguous_gradients (its default) the first
  // gradient hook of each backward runs setup_buckets, which allocates buf_0 =
  // torch.empty(reduce_bucket_size, dtype=self.dtype) and, with overlap_comm, buf_1 of the same
  // size ("double buffers to avoid data access conflict"); gradients are copied into them as
  // they are produced, and _release_ipg_buffers drops them only in the backward's epilogue. A
  // parameter larger than the bucket is reduced from its own gradient (extra_large_param), which
  // the reduce-scatter item counts.
  if ((sh.mode == ShardingMode::kZero1 || sh.mode == ShardingMode::kZero2) &&
      job.RunsDeepSpeed(sh.mode) && job.ReduceBucketElements() > 0) {
    const double model_b = static_cast<double>(DTypeBytes(job.spec.param_dtype));
    const double buffers = sh.OverlapComm() ? 2.0 : 1.0;
    const double elements = job.ReduceBucketElements();
    out.reduce_buckets.bytes = Bytes::Count(buffers * elements * model_b);
    if (explain) {
      out.reduce_buckets.formula = fmt::format(
          "{:.0f} bucket{} (overlap_comm {}) x reduce_bucket_size {} elements ({}) x {:.0f} B = {}",
          buffers, buffers > 1 ? "s" : "", sh.OverlapComm() ? "true" : "false",
          GroupDigits(elements), job.ReduceBucketRule(), model_b,
          FormatGBAndGiB(out.reduce_buckets.bytes));
      out.reduce_buckets.note = "allocated at each backward's first gradient, freed at its end";
    }
  }
  // DeepSpeed's ZeRO-3 optimizer (deepspeedai/DeepSpeed edaa722
  // deepspeed/runtime/zero/stage3.py, _setup_for_real_optimizer): with contiguous_gradients (its
  // default) the engine's start allocates one IPG bucket per communication dtype,
  // torch.empty(self.reduce_bucket_size, dtype=dtype, device=current_device_name()), and keeps
  // it for the run (only destroy() drops it); each gradient is copied into it and
  // reduce-scattered from it. One dtype unless torch autocast mixes them: the model's under
  // bf16/fp16 (engine.communication_data_type). On the GPU whatever is offloaded.
  if (sh.mode == ShardingMode::kZero3 && job.RunsDeepSpeed(sh.mode) &&
      job.ReduceBucketElements() > 0) {
    const double model_b = static_cast<double>(DTypeBytes(job.spec.param_dtype));
    const double elements = job.ReduceBucketElements();
    out.reduce_buckets.bytes = Bytes::Count(elements * model_b);
    out.reduce_buckets_kept = true;
    if (explain) {
      out.reduce_buckets.name = "gradients: DeepSpeed ZeRO-3 reduce (IPG) bucket";
      out.reduce_buckets.formula =
          fmt::format("reduce_bucket_size {} elements ({}) x {:.0f} B = {}", GroupDigits(elements),
                      job.ReduceBucketRule(), model_b, FormatGBAndGiB(out.reduce_buckets.bytes));
      out.reduce_buckets.note = "allocated at engine start, kept for the whole run";
    }
  }
  // Megatron's bf16 jobs (zero1, no FP8: most of what the planner tries) have none of these
  // buffers; the units are built only when one is needed.
  if (!weights_sharded && !sh.shards_gradients() && !fp8.on()) return out;
  const std::vector<ShardUnit> units = StageUnits(job, params, stage, detail);
  if (units.empty()) return out;
  const double param_b = static_cast<double>(DTypeBytes(job.spec.param_dtype));
  // torchao's float8 all-gather moves the GEMM weights in FP8.
  const bool fp8_gather = fp8.param_gather && !fp8.transformer_engine();
  // PyTorch's FSDP1 (FullyShardedDataParallel) flattens each wrapped unit into one FlatParameter
  // and pads it to a multiple of the shard group: torch.chunk(world_size) gives every rank
  // ceil(N / W) elements and the last ones pad (pytorch/pytorch fe03cf69
  // torch/distributed/fsdp/_flat_param.py, FlatParamHandle._get_unpadded_shard: numel_to_pad =
  // chunks[0].numel() - chunk.numel()), and the all-gather fills the padded unsharded buffer,
  // flat_param.numel() x world_size elements in the low-precision param dtype
  // (init_flat_param_attributes: padded_unsharded_numel, _full_param_padded). The unit's
  // parameters are views into that buffer: no copy-out, so no second all-gather output.
  const bool fsdp1 = holding.fsdp1;
  const auto shard_w =
      static_cast<double>(std::max<int64_t>(1, DataShardGroups(job, Detail::kNumbersOnly).dense));
  auto padded = [&](double n) { return fsdp1 ? Fsdp1PaddedNumel(n, shard_w) : n; };
  auto gathered_bytes = [&](const ShardUnit& u) {
    return fp8_gather ? (u.params - u.linear) * param_b + u.linear : padded(u.params) * param_b;
  };
  const auto largest =
      std::max_element(units.begin(), units.end(), [&](const ShardUnit& a, const ShardUnit& b) {
        return gathered_bytes(a) < gathered_bytes(b);
      });
  // FSDP1 runs under sharding.mode fsdp2 (Accelerate's FULL_SHARD) or zero3 (verl's strategy
  // fsdp); its units, padding and root are its own.
  const bool fsdp2 = holding.fsdp2;
  // FSDP2 as torchtitan wraps it (pytorch/torchtitan@b5bcd76c66d0acb1a08b176d9639425bc55e0b2a:
  // torchtitan/distributed/fsdp.py, apply_fsdp_to_decoder): the embedding, each block, and the
  // final norm with the output layer are units; with tied embeddings the embedding, final norm
  // and output are one unit that is resharded after forward only under the "always" policy,
  // so it stays gathered from forward to backward. Under `fsdp_units: root` (torchtitan
  // @81c1243395b46ce693a0681cfe1bb20e9b9433fb, plain scripts) the embedding, final norm and
  // output stay in the root unit (also accelerate's fsdp2_prepare_model, the HF Trainer's FSDP2:
  // data/frameworks.yaml fsdp2_units), which FSDP2 does not reshard after forward
  // (pytorch/pytorch@1fd469d0c96ead7343898aa01db036dbbe4c46db:
  // torch/distributed/fsdp/_fully_shard/_fsdp_state.py, _lazy_init). Units [first, end) are
  // the ones gathered and freed in turn; the others are kept.
  const ParallelLayout& lay = job.spec.layout;
  const bool tied_unit = sh.units == FsdpUnits::kSeparate && job.model.tie_word_embeddings &&
                         stage == 0 && stage == lay.output_stage();
  // FSDP1 as Accelerate (TRANSFORMER_BASED_WRAP) and verl wrap it: each decoder layer is a
  // unit, and the embedding, final norm and output stay in the root FlatParameter, which is not
  // freed after forward (pytorch/pytorch 00ae0bc9 torch/distributed/fsdp/_runtime_utils.py,
  // _post_forward_reshard: free_unsharded_flat_param = not state._is_root and ...): kept from
  // forward to the end of backward, as FSDP2's root unit is.
  const bool root = (fsdp2 && (sh.units == FsdpUnits::kRoot || tied_unit)) || fsdp1;
  // FSDP2 as verl wraps it (volcengine/verl v0.5.0 verl/utils/fsdp_utils.py, apply_fsdp2:
  // fully_shard on each _no_split_modules block and, when the embeddings are untied, on the
  // nn.Embedding, then on the model): the embedding is a unit resharded after forward like a
  // block, and the final norm with the output layer stays in the root unit; tied, the
  // embedding is in the root too. root_embedding / root_output: the root keeps the stage's first
  // / last unit.
  const bool output_root = fsdp2 && sh.units == FsdpUnits::kRootOutput;
  const bool root_embedding = root || (output_root && job.model.tie_word_embeddings);
  const bool root_output = root || output_root;
  const size_t first = root_embedding && stage == 0 ? 1 : 0;
  const size_t end = units.size() - (root_output && stage == lay.output_stage() ? 1 : 0);
  auto describe = [&](const ShardUnit& u) {
    const double pad = fp8_gather ? 0.0 : padded(u.params) - u.params;
    return fmt::format(
        "{} {} ({} params{}{})", u.name, FormatGB(Bytes::Count(gathered_bytes(u))),
        GroupDigits(u.params),
        pad > 0 ? fmt::format(" + {} padding to a multiple of {:.0f}", GroupDigits(pad), shard_w)
                : "",
        fp8_gather && u.linear > 0
            ? fmt::format(": {} GEMM weights x 1 B + {} x {:.0f} B", GroupDigits(u.linear),
                          GroupDigits(u.params - u.linear), param_b)
            : fmt::format(" x {:.0f} B", param_b));
  };
  auto kept_text = [&] {
    std::string t;
    for (size_t i = 0; i < units.size(); ++i) {
      if (i >= first && i < end) continue;
      t += fmt::format("{}{}", t.empty() ? "" : " + ", describe(units[i]));
    }
    return t;
  };
  // FSDP1's limit_all_gathers (its default, True) lets at most two all-gathers run ahead of
  // the frees (pytorch/pytorch torch/distributed/fsdp/_limiter_utils.py, _FreeEventQueue;
  // _runtime_utils.py, _unshard: dequeue_if_needed then event.synchronize()): no more than the
  // unit computing and one prefetched, whatever prefetch_layers says.
  const double prefetch = fsdp1 ? std::min(1.0, sh.prefetch_layers) : sh.prefetch_layers;
  if (weights_sharded && reshard && (fsdp2 || fsdp1)) {
    // A unit's all-gather is issued before the one computing is freed: forward by the CPU
    // running ahead (FSDP2's implicit prefetch), backward by its prefetch of the next unit in
    // reverse order. So the live set is the kept units plus a unit and its neighbour in
    // execution order, at most the largest such pair.
    double kept = 0, kept_params = 0;
    size_t n_kept = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      if (i < first || i >= end) {
        kept += gathered_bytes(units[i]);
        kept_params += units[i].params;
        ++n_kept;
      }
    }
    // FSDP1's root is one FlatParameter: padded once, not unit by unit.
    if (fsdp1) kept = padded(kept_params) * param_b;
    // FSDP1 under parameter mixed precision (pytorch/pytorch fe03cf69
    // torch/distributed/fsdp/_flat_param.py): the FlatParameter's padded local shard
    // (_local_shard, ceil(N / W) elements in the original dtype: the master dtype, counted with
    // the weights) is held all run; pre_unshard's _use_low_precision_shard allocates _mp_shard,
    // its copy in the param dtype, for the all-gather to read, and post_unshard's
    // _free_low_precision_sharded_param frees it once the all-gather is issued (record_stream
    // keeps it to the all-gather's end). So it is not held all run, only while its unit's
    // all-gather runs: the prefetched unit's, beside the unit computing.
    const bool mp_shard = fsdp1 && job.spec.optimizer.master_dtype != job.spec.param_dtype;
    auto low_shard = [&](const ShardUnit& u) {
      return mp_shard ? padded(u.params) / shard_w * param_b : 0.0;
    };
    double pair_max = end > first ? gathered_bytes(units[first]) : 0.0;
    size_t at = first;
    for (size_t i = first; i + 1 < end; ++i) {
      const double a = gathered_bytes(units[i]), b = gathered_bytes(units[i + 1]);
      const double pair = std::max(a + prefetch * (b + low_shard(units[i + 1])),
                                   b + prefetch * (a + low_shard(units[i])));
      if (pair > pair_max) {
        pair_max = pair;
        at = i;
      }
    }
    out.gathered.bytes = Bytes::Count(kept + pair_max);
    if (explain) {
      const bool pair = at + 1 < end;
      const size_t live = n_kept + (end > first ? 1 : 0) + (pair && prefetch > 0 ? 1 : 0);
      // Of the pair, the larger computes and the smaller is the (part) prefetched.
      size_t computing = at, ahead = at + 1;
      if (pair && gathered_bytes(units[ahead]) > gathered_bytes(units[computing])) {
        std::swap(computing, ahead);
      }
      out.gathered.formula = fmt::format(
          "{} of {} units live: {}{}{}{}{}{} = {}", live, units.size(),
          n_kept > 0 && fsdp1
              ? fmt::format(
                    "kept root FlatParameter {} ({} params{} x {:.0f} B) + ",
                    FormatGB(Bytes::Count(kept)), GroupDigits(kept_params),
                    padded(kept_params) > kept_params
                        ? fmt::format(" + {} padding to a multiple of {:.0f}",
                                      GroupDigits(padded(kept_params) - kept_params), shard_w)
                        : "",
                    param_b)
          : n_kept > 0 ? fmt::format("kept {} + ", kept_text())
                       : "",
          end > first ? fmt::format("computing {}", describe(units[computing])) : "none",
          pair ? " + " : "", pair && prefetch != 1 ? fmt::format("{:.4g} x ", prefetch) : "",
          pair ? fmt::format("its neighbour prefetched {}", describe(units[ahead])) : "",
          pair && prefetch > 0 && mp_shard
              ? fmt::format(" + its low-precision shard (_mp_shard) during its all-gather {} ({} "
                            "params / {:.0f} x {:.0f} B)",
                            FormatGB(Bytes::Count(low_shard(units[ahead]))),
                            GroupDigits(padded(units[ahead].params)), shard_w, param_b)
              : "",
          FormatGBAndGiB(out.gathered.bytes));
      out.gathered.note =
          fsdp1 ? "FSDP1: one padded FlatParameter per decoder layer; embedding, final norm and "
                  "output in the root FlatParameter, not freed after forward; limit_all_gathers: "
                  "the unit computing and one prefetched"
          : sh.units == FsdpUnits::kRootOutput
              ? fmt::format(
                    "FSDP2, blocks{} wrapped; final norm and output in the root unit "
                    "(fsdp_units: root_output{})",
                    job.model.tie_word_embeddings ? "" : " and embedding",
                    sh.units_given ? "" : fmt::format(", {}", job.fsdp2_units.rule))
          : sh.units == FsdpUnits::kRoot
              ? fmt::format(
                    "FSDP2, blocks wrapped; embedding and output in the root unit "
                    "(fsdp_units: root{})",
                    sh.units_given ? "" : fmt::format(", {}", job.fsdp2_units.rule))
          : tied_unit ? "FSDP2 as torchtitan wraps a tied model: embedding + norm + output kept"
                      : "FSDP2 units as torchtitan wraps them: embedding, each block, final norm "
                        "+ output";
    }
  } else if (weights_sharded) {
    if (reshard) {
      // The unit computing plus the ones prefetched; sized by the largest unit (upper bound).
      const double live = 1.0 + sh.prefetch_layers;
      out.gathered.bytes = Bytes::Count(live * gathered_bytes(*largest));
      if (explain)
        out.gathered.formula = fmt::format(
            "(1 computing + {:.4g} prefetched) x largest unit ({}: {} params{}) = {}",
            sh.prefetch_layers, largest->name, GroupDigits(largest->params),
            fp8_gather ? ", GEMM weights gathered in FP8" : fmt::format(" x {:.0f} B", param_b),
            FormatGBAndGiB(out.gathered.bytes));
      if (explain)
        out.gathered.note = "freed after each unit's forward, gathered again for its backward";
    } else {
      // Every unit stays gathered from its forward to its backward, so at the forward's end
      // (where the stored activations peak) and through the backward's first unit all of them
      // are live; each is freed after its own backward. FSDP1's SHARD_GRAD_OP issues no
      // all-gather in backward (_pre_backward_hook: the FlatParameter is still unsharded) and
      // none ahead in forward (forward_prefetch is off by default), so the low-precision shard
      // copy of a unit (_mp_shard) lives only during that unit's own forward all-gather, before
      // the activations peak: not counted. FSDP1's root FlatParameter is padded once.
      double all = 0, root_params = 0;
      for (size_t i = 0; i < units.size(); ++i) {
        if (fsdp1 && (i < first || i >= end)) {
          root_params += units[i].params;
        } else {
          all += gathered_bytes(units[i]);
        }
      }
      if (root_params > 0) all += padded(root_params) * param_b;
      out.gathered.bytes = Bytes::Count(all);
      if (explain)
        out.gathered.formula = fmt::format(
            "every unit of the stage stays gathered from its forward to its backward: {} of {} "
            "units live, {}{} = {}",
            units.size(), units.size(), describe(*largest),
            units.size() > 1 ? fmt::format(" the largest, + {} more", units.size() - 1) : "",
            FormatGBAndGiB(out.gathered.bytes));
      if (explain) {
        out.gathered.note =
            sh.shards_weights() ? "reshard_after_forward: false"
            : fsdp1 ? "FSDP1 SHARD_GRAD_OP (zero2): each unit's FlatParameter is freed only "
                      "after its backward"
                    : "FSDP2 under zero2 (reshard_after_forward false): each unit is freed only "
                      "after its backward";
      }
    }
  }
  if (weights_sharded && fsdp2) {
    // FSDP2's all-gather output (pytorch/pytorch torch/distributed/fsdp/_fully_shard/
    // _fsdp_collectives.py, foreach_all_gather) is one flat buffer per unit on the copy-in
    // stream; wait_for_unshard (_fsdp_param_group.py) copies it into the parameters' unsharded
    // storage (allocated on the compute stream) and drops it, in forward only once the next
    // unit's copy-out is done ("have the next FSDP parameter group free it after its copy-in").
    // So the copy-in pool holds at most two neighbouring units' outputs and reuses them for every
    // later unit, resharded after forward or not: the largest neighbouring pair (the prefetch
    // factor as above) in forward order. The root unit (the kept units outside [first, end)) is
    // one parameter group, gathered first, before units[first].
    auto pair = [&](double a, double b) {
      return std::max(a + sh.prefetch_layers * b, b + sh.prefetch_layers * a);
    };
    double root_group = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      if (i < first || i >= end) root_group += gathered_bytes(units[i]);
    }
    double in_flight = end > first ? gathered_bytes(units[first]) : 0.0;
    if (root_group > 0) {
      in_flight = end > first ? pair(root_group, gathered_bytes(units[first])) : root_group;
    }
    for (size_t i = first; i + 1 < end; ++i) {
      in_flight = std::max(in_flight, pair(gathered_bytes(units[i]), gathered_bytes(units[i + 1])));
    }
    out.all_gather_in_flight = Bytes::Count(in_flight);
  }
  if (sh.shards_gradients() && (fsdp2 || fsdp1)) {
    // FSDP2's post-backward of a unit (pytorch/pytorch, main branch as read in 2026-12:
    // torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, post_backward, and
    // _fsdp_collectives.py, foreach_reduce) frees the previous unit's reduce-scatter input,
    // allocates this unit's in reduce_dtype, copies the unsharded gradients (param dtype, from
    // autograd) into it and frees them; the input lives until the next post-backward. So in
    // backward order, with g the unit's trainable params, p the param dtype and r the reduce
    // dtype, the live buffers are max(g_prev x r + g x p, g x (p + r)). The root unit's
    // gradients (fsdp_units: root, or torchtitan's tied unit) are reduced only after the whole
    // backward, so its output layer's gradient (the first computed) is held in p throughout;
    // its own reduce-scatter comes when the activations are gone.
    const double grad_b = static_cast<double>(DTypeBytes(job.spec.grad_dtype));
    // Gradient accumulation without a sync (sharding.sync_each_micro_batch false: the HF
    // Trainer's no_sync, data/frameworks.yaml accumulation_sync): every micro batch but the
    // step's last runs backward with no reduce-scatter, so each unit's gradient stays unsharded
    // from the first backward to the last one, beside the last micro batch's forward
    // activations. FSDP2 upcasts it into unsharded_accumulated_grad in reduce_dtype when that
    // differs (pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_param.py,
    // to_accumulated_grad_if_needed), else keeps the param dtype; FSDP1's _post_backward_hook
    // returns under no_sync before its reduce_dtype cast, so the flat gradient stays in the
    // compute dtype (torch/distributed/fsdp/_runtime_utils.py). The last micro batch's
    // backward then reduce-scatters unit by unit as without accumulation (below).
    if (!(lay.pp > 1 && fsdp2) && !sh.sync_each_micro_batch && job.spec.num_micro_batches() > 1) {
      double total = 0;
      for (const ShardUnit& u : units) total += u.trainable;
      const double acc_b = fsdp1 ? param_b : grad_b;
      out.accumulated.bytes = Bytes::Count(total * acc_b);
      if (explain) {
        out.accumulated.formula = fmt::format(
            "{} trainable params of the stage's {} units x {:.0f} B ({}) = {}", GroupDigits(total),
            units.size(), acc_b,
            fsdp1 ? "FSDP1: the compute dtype" : "FSDP2: reduce_dtype, else the param dtype",
            FormatGBAndGiB(out.accumulated.bytes));
        out.accumulated.note = fmt::format(
            "gradient accumulation without reduce-scatter ({} micro batches, no_sync on all but "
            "the last: sharding.sync_each_micro_batch false)",
            job.spec.num_micro_batches());
      }
    }
    if (lay.pp > 1 && fsdp2) {
      // Under PyTorch's pipeline schedules (pytorch/pytorch@0138610331c9:
      // torch/distributed/pipelining/stage.py, backward_maybe_with_nosync) every micro batch's
      // backward runs with set_requires_gradient_sync(False) and
      // set_reshard_after_backward(False); _post_backward reduce-scatters once, after the last
      // backward. Each unit's gradient is then kept unsharded and, when reduce_dtype differs from
      // the param dtype, upcast into unsharded_accumulated_grad (_fsdp_param.py,
      // to_accumulated_grad_if_needed): from the first backward on, every unit of the stage
      // holds its trainable params x r, and the unit computing its fresh gradient x p beside.
      double total = 0, biggest = 0;
      for (const ShardUnit& u : units) {
        total += u.trainable;
        biggest = std::max(biggest, u.trainable);
      }
      const double fresh = grad_b != param_b ? biggest * param_b : 0.0;
      out.accumulated.bytes = Bytes::Count(total * grad_b + fresh);
      if (explain) {
        out.accumulated.formula = fmt::format(
            "{} trainable params of the stage's {} units x {:.0f} B{} = {}", GroupDigits(total),
            units.size(), grad_b,
            fresh > 0 ? fmt::format(" + the largest unit's fresh gradient {} x {:.0f} B",
                                    GroupDigits(biggest), param_b)
                      : "",
            FormatGBAndGiB(out.accumulated.bytes));
        out.accumulated.note =
            "FSDP2 under a pipeline schedule: no reduce-scatter until the last micro batch's "
            "backward";
        out.reduce_scatter.formula =
            "0 while the micro batches run backward: the reduce-scatters wait for the last one";
      }
    } else {
      double held = 0;
      if (root_output && stage == lay.output_stage() && end < units.size()) {
        held = units.back().trainable;
        // A tied output layer's gradient accumulates into the embedding's weight.
        if (root_embedding && job.model.tie_word_embeddings && stage == 0)
          held += units.front().trainable;
      }
      // FSDP2: the unit's param-dtype gradients and their reduce_dtype copy; once copied the
      // former are freed, so a unit in flight holds only its copy. FSDP1 (pytorch/pytorch
      // 00ae0bc9 torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook): under the
      // post-backward stream it casts the flat gradient to reduce_dtype when that differs
      // (flat_param.grad.to(handle._reduce_dtype)), pads the result with F.pad to W x ceil(N / W)
      // when N is not a multiple, and record_streams the autograd gradient: all of them stay
      // until that unit's reduce-scatter is done.
      // With use_orig_params the FlatParameter was padded to a multiple of W when built
      // (pytorch/pytorch fe03cf69 torch/distributed/fsdp/_flat_param.py,
      // _init_flat_param_and_metadata, under align_addresses = use_orig_params): its gradient
      // has the padded numel and F.pad adds nothing, so there is no padded copy. (Its other
      // padding, aligning each parameter to 16 bytes, _get_aligned_numel: 8 bf16 elements, is
      // none where every parameter's numel is a multiple of 8, as in the models here.)
      const bool orig_params = fsdp1 && sh.use_orig_params;
      auto flat = [&](double g) { return orig_params ? padded(g) : g; };
      auto fsdp1_copies = [&](double g) {
        return (grad_b != param_b ? flat(g) * grad_b : 0.0) +
               (!orig_params && padded(g) != g ? padded(g) * grad_b : 0.0);
      };
      auto own = [&](double g) {
        return fsdp1 ? flat(g) * param_b + fsdp1_copies(g) : g * (param_b + grad_b);
      };
      auto in_flight = [&](double g) { return fsdp1 ? own(g) : g * grad_b; };
      double best = 0, best_prev = 0, best_cur = 0;
      size_t at = end;
      for (size_t k = end; k-- > first;) {
        const double cur = units[k].trainable;
        const double prev = k + 1 < end ? units[k + 1].trainable : 0.0;
        const double live = std::max(in_flight(prev) + flat(cur) * param_b, own(cur));
        if (live > best) {
          best = live;
          best_prev = prev;
          best_cur = cur;
          at = k;
        }
      }
      out.reduce_scatter.bytes = Bytes::Count(held * param_b + best);
      if (explain) {
        const bool prev_in_flight = in_flight(best_prev) + flat(best_cur) * param_b > own(best_cur);
        const std::string unit = at < end ? units[at].name : "none";
        auto fsdp1_unit = [&](const std::string& name, double g) {
          return fmt::format(
              "{} {} x {:.0f} B{}{}", name, GroupDigits(flat(g)), param_b,
              grad_b != param_b ? fmt::format(" + cast {} x {:.0f} B", GroupDigits(flat(g)), grad_b)
                                : "",
              !orig_params && padded(g) != g
                  ? fmt::format(" + padded {} x {:.0f} B", GroupDigits(padded(g)), grad_b)
                  : "");
        };
        out.reduce_scatter.formula = fmt::format(
            "{}{} = {}",
            held > 0 ? fmt::format("root unit's output gradient held {} x {:.0f} B + ",
                                   GroupDigits(held), param_b)
                     : "",
            fsdp1 && prev_in_flight
                ? fmt::format("{} in reduce-scatter ({}) + {} computed {} x {:.0f} B",
                              units[at + 1].name, fsdp1_unit("flat gradient", best_prev), unit,
                              GroupDigits(flat(best_cur)), param_b)
            : fsdp1 ? fmt::format("{} {}", unit, fsdp1_unit("flat gradient", best_cur))
            : prev_in_flight
                ? fmt::format("{} in reduce-scatter {} x {:.0f} B + {} computed {} x {:.0f} B",
                              units[at + 1].name, GroupDigits(best_prev), grad_b, unit,
                              GroupDigits(best_cur), param_b)
                : fmt::format("{} copied in: {} trainable params x ({:.0f} B + {:.0f} B)", unit,
                              GroupDigits(best_cur), param_b, grad_b),
            FormatGBAndGiB(out.reduce_scatter.bytes));
        out.reduce_scatter.note =
            orig_params ? "FSDP1, use_orig_params: a unit's flat gradient (padded when built) "
                          "with its reduce_dtype cast, the previous unit's both until its "
                          "reduce-scatter is done"
            : fsdp1 ? "FSDP1: a unit's flat gradient with its reduce_dtype cast and padded copy, "
                      "the previous unit's all three until its reduce-scatter is done"
                    : "a unit's gradients into reduce_dtype, the previous unit's in flight";
      }
    }
  } else if (sh.shards_gradients()) {
    // The largest unit's gradients in the compute dtype, plus their copy in the reduce dtype
    // when it differs (DeepSpeed's reduce bucket).
    const double grad_b = static_cast<double>(DTypeBytes(job.spec.grad_dtype));
    const double per = param_b + (grad_b != param_b ? grad_b : 0.0);
    const auto biggest = std::max_element(
        units.begin(), units.end(),
        [](const ShardUnit& a, const ShardUnit& b) { return a.trainable < b.trainable; });
    out.reduce_scatter.bytes = Bytes::Count(per * biggest->trainable);
    if (explain)
      out.reduce_scatter.formula =
          fmt::format("{} trainable params of the largest unit ({}) x ({:.0f} B{}) = {}",
                      GroupDigits(biggest->trainable), biggest->name, param_b,
                      grad_b != param_b ? fmt::format(" + {:.0f} B reduce copy", grad_b) : "",
                      FormatGBAndGiB(out.reduce_scatter.bytes));
    if (explain) out.reduce_scatter.note = "live while that unit's gradients are reduce-scattered";
  }
  if (fp8.on()) {
    const double per_weight = Fp8CopyBytesPerWeight(fp8);
    double linear = 0;
    for (const ShardUnit& u : units) linear += u.linear;
    // Under ZeRO-3/FSDP2 the copies exist only for the gathered units.
    const double covered = weights_sharded ? largest->linear * (1.0 + sh.prefetch_layers) : linear;
    out.fp8_copies.bytes = Bytes::Count(per_weight * covered);
    if (explain)
      out.fp8_copies.formula =
          per_weight == 0
              ? fmt::format("0: {} casts to FP8 per GEMM and keeps no copy",
                            Fp8RecipeName(fp8.recipe))
              : fmt::format("{:.4f} B x {} GEMM weights ({}{}) = {}", per_weight,
                            GroupDigits(covered), Fp8RecipeName(fp8.recipe),
                            fp8.param_gather
                                ? ": transposed copy; the rowwise copy is the weight"
                                : ": rowwise and transposed copies next to the bf16 weight",
                            FormatGBAndGiB(out.fp8_copies.bytes));
    if (explain) out.fp8_copies.note = "made at the first forward, kept across micro batches";
    if (fp8.recipe == Fp8Recipe::kDelayed) {
      // Per GEMM: input, weight and output-gradient amax histories and scales, fp32. Count
      // two GEMMs per attention and MLP and two per local expert.
      const auto local_experts = static_cast<double>(
          job.model.moe.num_experts > 0 ? job.model.moe.num_experts / job.spec.layout.ep : 0);
      const double gemms = static_cast<double>(units.size()) * (4.0 + 2.0 * local_experts);
      const double bytes = gemms * 3.0 * (static_cast<double>(fp8.amax_history) + 2.0) * 4.0;
      out.fp8_state.bytes = Bytes::Count(bytes);
      if (explain)
        out.fp8_state.formula =
            fmt::format("{} GEMMs x 3 tensors x ({} amax history + scale + scale_inv) x 4 B = {}",
                        GroupDigits(gemms), fp8.amax_history, FormatGBAndGiB(out.fp8_state.bytes));
    } else {
      if (explain) out.fp8_state.formula = "per-block scales counted with the copies";
    }
  }
  return out;
}

}  // namespace strata
