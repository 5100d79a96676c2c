#include "strata/job/job_validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "strata/core/did_you_mean.h"
#include "strata/job/training_modes_parse.h"
#include "strata/model/param_count.h"
#include "strata/model/sequence_lengths.h"

namespace strata {
namespace {

/// megatron-core's default --make-vocab-size-divisible-by.
constexpr int64_t kVocabDivisibleBy = 128;

Error RuleError(const JobSpec& job, std::string field, std::string message,
                const std::vector<int64_t>& would_work, const std::string& what) {
  Error e = InvalidInput(std::move(message));
  e.field = std::move(field);
  e.file = job.file;
  if (!would_work.empty()) {
    e.hint = fmt::format("{} that would work: {}", what, fmt::join(would_work, ", "));
  }
  return e;
}

bool Divides(int64_t d, int64_t n) { return d > 0 && n % d == 0; }

}  // namespace

std::vector<int64_t> ValuesThatWork(int64_t limit, const std::function<bool(int64_t)>& ok) {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= limit; ++v) {
    if (ok(v)) values.push_back(v);
  }
  return values;
}

int64_t PaddedVocab(int64_t vocab_size, int64_t tp) {
  const int64_t multiple = kVocabDivisibleBy * tp;
  return (vocab_size + multiple - 1) / multiple * multiple;
}

Status CheckLayoutArithmetic(JobSpec& job) {
  ParallelLayout& l = job.layout;
  const int64_t world = job.cluster.world();
  const int64_t model_parallel = l.tp * l.pp * l.cp;
  auto world_divisors = [&](int64_t other) {
    return ValuesThatWork(world, [&](int64_t v) { return Divides(v * other, world); });
  };
  // Context parallelism splits each sequence's attention as ring attention over flash kernels.
  if (job.attention.kernel == AttentionKernel::kUnfused && l.cp > 1) {
    Error e = RuleError(job, "attention.kernel",
                        "unfused attention cannot run with context parallelism (cp > 1)", {}, "");
    e.hint = "context parallelism runs ring attention over flash kernels: kernel: flash";
    return e;
  }
  if (!Divides(model_parallel, world)) {
    return RuleError(job, "parallel",
                     fmt::format("world size {} ({} nodes x {} GPUs) is not divisible by "
                                 "TP x PP x CP = {} x {} x {} = {}",
                                 world, job.cluster.nodes, job.cluster.gpus_per_node, l.tp, l.pp,
                                 l.cp, model_parallel),
                     world_divisors(l.pp * l.cp), "TP values (at this PP and CP)");
  }
  const int64_t derived_dp = world / model_parallel;
  if (l.dp != 0 && l.dp != derived_dp) {
    return RuleError(job, "parallel.dp",
                     fmt::format("DP {} does not match world / (TP x PP x CP) = {} / {} = {}", l.dp,
                                 world, model_parallel, derived_dp),
                     {derived_dp}, "DP");
  }
  l.dp = derived_dp;
  const int64_t expert_space = l.tp * l.cp * l.dp;
  if (!Divides(l.ep * l.etp, expert_space)) {
    // The model is not known here (a job file is checked before its model is read), so the
    // values listed need not divide its expert count: say so, as the model's rule then may
    // refuse one of them.
    Error e = RuleError(
        job, "parallel.ep",
        fmt::format("EP x ETP = {} x {} = {} must divide TP x CP x DP = {} (experts "
                    "are laid out inside the TP x CP x DP ranks)",
                    l.ep, l.etp, l.ep * l.etp, expert_space),
        ValuesThatWork(expert_space, [&](int64_t v) { return Divides(v * l.etp, expert_space); }),
        "EP values (at this ETP)");
    e.hint += "; EP must also divide the model's number of experts";
    return e;
  }
  if (l.tp > 1 && l.ep > 1 && !l.sequence_parallel) {
    // megatron-core's TransformerConfig.__post_init__ (megatron/core/transformer/
    // transformer_config.py) raises "When using expert parallelism and tensor parallelism,
    // sequence parallelism must be used".
    Error e = RuleError(job, "parallel.sequence_parallel",
                        fmt::format("TP {} with EP {} requires sequence parallelism in "
                                    "megatron-core, and the job has it off",
                                    l.tp, l.ep),
                        {}, "");
    e.hint = "set parallel.sequence_parallel: true (--set parallel.sequence_parallel=true)";
    return e;
  }
  if (l.vpp > 1 && l.pp == 1) {
    return RuleError(job, "parallel.vpp",
                     fmt::format("virtual pipeline stages (VPP {}) need PP > 1", l.vpp), {1},
                     "VPP");
  }
  const int64_t per_step = job.micro_batch * l.dp;
  if (!Divides(per_step, job.global_batch)) {
    return RuleError(
        job, "batch.global_batch",
        fmt::format("global batch {} is not a multiple of micro batch x DP = {} x {} = {}",
                    job.global_batch, job.micro_batch, l.dp, per_step),
        {per_step, 2 * per_step, 4 * per_step}, "global batches");
  }
  if (l.cp > 1) {
    // Context parallelism cuts each sequence into 2 x CP chunks (load-balanced causal masks).
    const auto max_tokens = static_cast<int64_t>(job.sequence.max_tokens);
    if (!Divides(2 * l.cp, max_tokens)) {
      return RuleError(
          job, "sequence.max_tokens",
          fmt::format("max_tokens {} is not divisible by 2 x CP = {}", max_tokens, 2 * l.cp), {},
          "");
    }
  }
  return OkStatus();
}

Status CheckLayoutAgainstModel(const JobSpec& job, const ModelConfig& model,
                               QueryGroupSplit split) {
  const ParallelLayout& l = job.layout;
  const int64_t world = job.cluster.world();
  auto tp_rule = [&](int64_t count, const char* what) -> Status {
    if (count == 0 || Divides(l.tp, count)) return OkStatus();
    return RuleError(
        job, "parallel.tp", fmt::format("{} ({}) must be divisible by TP ({})", what, count, l.tp),
        ValuesThatWork(
            world, [&](int64_t v) { return Divides(v, count) && Divides(v * l.pp * l.cp, world); }),
        "TP values");
  };
  const bool has_attention =
      model.HasLayers(MixerKind::kFullAttention) || model.HasLayers(MixerKind::kSlidingAttention);
  if (has_attention) {
    STRATA_RETURN_IF_ERROR(tp_rule(model.attention.num_heads, "attention heads"));
    const int64_t groups = model.attention.num_kv_heads;
    if (!TpFitsQueryGroups(l.tp, groups, split)) {
      const bool megatron = split == QueryGroupSplit::kMultipleOrDivisor;
      Error e = RuleError(
          job, "parallel.tp",
          megatron ? fmt::format("KV heads (query groups) ({}) must be a multiple or divisor of "
                                 "TP ({}) in megatron-core",
                                 groups, l.tp)
                   : fmt::format("KV heads (query groups) ({}) must be divisible by TP ({})",
                                 groups, l.tp),
          ValuesThatWork(world,
                         [&](int64_t v) {
                           return Divides(v, model.attention.num_heads) &&
                                  TpFitsQueryGroups(v, groups, split) &&
                                  Divides(v * l.pp * l.cp, world);
                         }),
          "TP values");
      if (!megatron && l.tp > groups && Divides(groups, l.tp)) {
        e.hint += fmt::format(
            "; {} with sharding {} does not train through megatron-core, which alone runs TP "
            "above the KV heads (one per rank); the others split whole heads",
            job.framework.name, ShardingModeName(job.sharding.mode));
      }
      return e;
    }
  }
  if (model.HasLayers(MixerKind::kMla)) {
    STRATA_RETURN_IF_ERROR(tp_rule(model.mla.num_heads, "MLA heads"));
  }
  if (model.HasLayers(MixerKind::kGatedDeltaNet)) {
    STRATA_RETURN_IF_ERROR(
        tp_rule(model.linear_attention.num_key_heads, "linear-attention key heads"));
    STRATA_RETURN_IF_ERROR(
        tp_rule(model.linear_attention.num_value_heads, "linear-attention value heads"));
  }
  if (model.HasLayers(FfnKind::kDense)) {
    STRATA_RETURN_IF_ERROR(tp_rule(model.dense_mlp.intermediate_size, "the MLP width"));
  }
  const bool has_moe = model.HasLayers(FfnKind::kMoe);
  if (!has_moe && (l.ep > 1 || l.etp > 1)) {
    return RuleError(
        job, "parallel.ep",
        fmt::format("EP {} / ETP {} given but {} has no experts", l.ep, l.etp, model.name), {1},
        "EP and ETP");
  }
  if (has_moe) {
    const int64_t expert_space = l.tp * l.cp * l.dp;
    if (!Divides(l.ep, model.moe.num_experts)) {
      return RuleError(
          job, "parallel.ep",
          fmt::format("{} experts cannot be split evenly over EP {}", model.moe.num_experts, l.ep),
          ValuesThatWork(expert_space,
                         [&](int64_t v) {
                           return Divides(v, model.moe.num_experts) &&
                                  Divides(v * l.etp, expert_space);
                         }),
          "EP values");
    }
    if (!Divides(l.etp, model.moe.expert_intermediate_size)) {
      return RuleError(job, "parallel.etp",
                       fmt::format("the expert FFN width ({}) must be divisible by ETP ({})",
                                   model.moe.expert_intermediate_size, l.etp),
                       ValuesThatWork(expert_space / l.ep,
                                      [&](int64_t v) {
                                        return Divides(v, model.moe.expert_intermediate_size) &&
                                               Divides(v * l.ep, expert_space);
                                      }),
                       "ETP values");
    }
  }
  const auto layers = static_cast<int64_t>(model.layers.size());
  if (!l.uneven_pipeline() && !Divides(l.pp * l.vpp, layers)) {
    Error e = RuleError(job, "parallel.pp",
                        fmt::format("{} layers cannot be split evenly into PP x VPP = {} x {} = {} "
                                    "chunks",
                                    layers, l.pp, l.vpp, l.pp * l.vpp),
                        ValuesThatWork(layers,
                                       [&](int64_t v) {
                                         return Divides(v * l.vpp, layers) &&
                                                Divides(l.tp * v * l.cp, world);
                                       }),
                        "PP values (at this VPP)");
    // megatron-core's uneven split: --decoder-first/last-pipeline-num-layers.
    if (l.pp > 1) {
      e.hint += fmt::format(
          "{}or give the first/last stage their own layer counts "
          "(parallel.first_stage_layers, parallel.last_stage_layers)",
          e.hint.empty() ? "" : "; ");
    }
    return e;
  }
  STRATA_RETURN_IF_ERROR(CheckTrainingModes(job, model));
  if (job.recompute.granularity == RecomputeGranularity::kFull) {
    // The smallest chunk that holds decoder layers (a layout's embedding- or loss-only chunk
    // has none to recompute).
    int64_t per_chunk = layers;
    for (int64_t n : ChunkLayerCounts(l, layers)) {
      if (n > 0) per_chunk = std::min(per_chunk, n);
    }
    if (job.recompute.num_layers > per_chunk) {
      return RuleError(job, "recompute.num_layers",
                       fmt::format("recompute.num_layers {} exceeds the {} layers of one "
                                   "pipeline chunk",
                                   job.recompute.num_layers, per_chunk),
                       ValuesThatWork(per_chunk, [](int64_t) { return true; }),
                       "num_layers values");
    }
  }
  for (const std::string& name : job.frozen) {
    const auto& all = AllModuleKinds();
    if (std::none_of(all.begin(), all.end(),
                     [&](ModuleKind kind) { return ModuleKindName(kind) == name; })) {
      std::vector<std::string> kinds;  // for the hint only: the planner validates every layout
      kinds.reserve(all.size());
      for (ModuleKind kind : all) kinds.emplace_back(ModuleKindName(kind));
      Error e = InvalidInput(fmt::format("unknown module kind '{}' in frozen", name));
      e.field = "frozen";
      e.file = job.file;
      e.hint = DidYouMeanHint(name, kinds);
      return e;
    }
  }
  if (job.adapter.on()) {
    // Adapters are modelled on softmax attention, Gated DeltaNet, dense MLPs, routed and shared
    // experts and the router (model/adapter.h): the linear layers of MLA, Mamba and lightning
    // attention have other names and shapes.
    for (MixerKind kind :
         {MixerKind::kMla, MixerKind::kMamba2, MixerKind::kMamba1, MixerKind::kLightning}) {
      if (model.HasLayers(kind)) {
        Error e = InvalidInput(
            fmt::format("adapter: {} has {} layers; strata models adapters on softmax attention, "
                        "Gated DeltaNet, dense MLP and MoE layers only",
                        model.name, MixerKindName(kind)));
        e.field = "adapter";
        e.file = job.file;
        return e;
      }
    }
    if (model.mlp == MlpKind::kPlain &&
        std::find(job.adapter.targets.begin(), job.adapter.targets.end(), "gate_proj") !=
            job.adapter.targets.end()) {
      Error e = InvalidInput(fmt::format(
          "adapter.targets: {} has a plain MLP (up and down), no gate_proj", model.name));
      e.field = "adapter.targets";
      e.file = job.file;
      e.hint = "target up_proj and down_proj, or all-linear";
      return e;
    }
  }
  if (job.mtp && model.mtp_layers == 0) {
    Error e = InvalidInput(fmt::format("mtp: true but {} has no MTP block", model.name));
    e.field = "mtp";
    e.file = job.file;
    e.hint = "set mtp: false";
    return e;
  }
  return OkStatus();
}

}  // namespace strata
