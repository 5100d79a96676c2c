#include "strata/job/training_modes_parse.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/job/enum_names.h"

namespace strata {
namespace {

constexpr EnumName<ShardingMode> kModes[] = {{ShardingMode::kNone, "none"},
                                             {ShardingMode::kZero1, "zero1"},
                                             {ShardingMode::kZero2, "zero2"},
                                             {ShardingMode::kZero3, "zero3"},
                                             {ShardingMode::kFsdp2, "fsdp2"}};
constexpr EnumName<ShardingRuntime> kRuntimes[] = {
    {ShardingRuntime::kDeepSpeed, "deepspeed"},
    {ShardingRuntime::kFsdp1, "fsdp1"},
    {ShardingRuntime::kFsdp2, "fsdp2"},
    {ShardingRuntime::kMegatronFsdp, "megatron-fsdp"},
    {ShardingRuntime::kMegatron, "megatron"}};
constexpr EnumName<FsdpUnits> kUnits[] = {{FsdpUnits::kSeparate, "separate"},
                                          {FsdpUnits::kRoot, "root"},
                                          {FsdpUnits::kRootOutput, "root_output"}};
constexpr EnumName<OffloadTarget> kTargets[] = {
    {OffloadTarget::kNone, "none"}, {OffloadTarget::kCpu, "cpu"}, {OffloadTarget::kNvme, "nvme"}};
constexpr EnumName<Fp8Recipe> kRecipes[] = {{Fp8Recipe::kNone, "none"},
                                            {Fp8Recipe::kDelayed, "delayed"},
                                            {Fp8Recipe::kTensorwise, "tensorwise"},
                                            {Fp8Recipe::kBlockwise, "blockwise"},
                                            {Fp8Recipe::kMxfp8, "mxfp8"},
                                            {Fp8Recipe::kTorchaoTensorwise, "torchao_tensorwise"},
                                            {Fp8Recipe::kTorchaoRowwise, "torchao_rowwise"}};

constexpr EnumName<AdapterKind> kAdapterKinds[] = {
    {AdapterKind::kLora, "lora"}, {AdapterKind::kQlora, "qlora"}, {AdapterKind::kDora, "dora"}};

Status ParseAdapter(YamlMap& top, JobSpec& job) {
  if (!top.Has("adapter")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap a, top.Map("adapter"));
  AdapterSpec& ad = job.adapter;
  STRATA_ASSIGN_OR_RETURN(ad.kind, EnumField(a, "kind", kAdapterKinds));
  STRATA_ASSIGN_OR_RETURN(ad.rank, a.PositiveInt("rank"));
  ad.alpha = static_cast<double>(ad.rank);  // scaling 1 unless the job says otherwise
  if (a.Has("alpha")) {
    STRATA_ASSIGN_OR_RETURN(ad.alpha, a.Number("alpha"));
    if (!(ad.alpha > 0)) {
      return a.ErrorAt("alpha",
                       fmt::format("expected a positive scale (lora_alpha), got {}", ad.alpha));
    }
  }
  if (a.Has("dropout")) {
    STRATA_ASSIGN_OR_RETURN(ad.dropout, a.Number("dropout"));
    if (!(ad.dropout >= 0 && ad.dropout < 1)) {
      return a.ErrorAt("dropout",
                       fmt::format("expected a probability in [0, 1), got {}", ad.dropout));
    }
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, a.Node("targets"));
  const std::vector<std::string>& names = AdapterTargetNames();
  if (!list.IsSequence() || list.size() == 0) {
    return a.ErrorAt("targets", fmt::format("expected a list of linear layer names, e.g. [q_proj, "
                                            "v_proj]; known: {}",
                                            fmt::join(names, ", ")));
  }
  for (const auto& item : list) {
    const std::string name = item.IsScalar() ? item.Scalar() : "";
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return a
          .ErrorAt("targets", fmt::format("unknown adapter target '{}', expected one of: {}", name,
                                          fmt::join(names, ", ")))
          .WithHint(DidYouMeanHint(name, names));
    }
    if (std::find(ad.targets.begin(), ad.targets.end(), name) != ad.targets.end()) {
      return a.ErrorAt("targets", fmt::format("'{}' is listed twice", name));
    }
    ad.targets.push_back(name);
  }
  // megatron-core's router is no linear layer of all-linear's (ms-swift's all-router adds it).
  if (std::find(ad.targets.begin(), ad.targets.end(), "all-linear") != ad.targets.end() &&
      std::ranges::any_of(ad.targets, [](const std::string& name) {
        return name != "all-linear" && name != "router";
      })) {
    return a.ErrorAt("targets", "'all-linear' already names every linear layer; give it alone");
  }
  for (const std::string& name : ad.targets) {
    const std::string_view fused = FusedTargetOf(name);
    if (!fused.empty() &&
        std::find(ad.targets.begin(), ad.targets.end(), fused) != ad.targets.end()) {
      return a.ErrorAt("targets", fmt::format("'{}' is part of megatron-core's fused '{}', also "
                                              "listed; name one of them",
                                              name, fused));
    }
  }
  if (ad.quantized_base() && job.param_dtype == DType::kFp32) {
    return a.ErrorAt("kind", "qlora computes in bf16 or fp16 (bnb_4bit_compute_dtype), not fp32")
        .WithHint("set precision.params: bf16");
  }
  return a.CheckNoUnknownKeys();
}

Status ParseSharding(YamlMap& top, JobSpec& job) {
  // Without a sharding section the megatron switch decides: distributed optimizer = ZeRO-1.
  job.sharding.mode = job.optimizer.distributed ? ShardingMode::kZero1 : ShardingMode::kNone;
  if (!top.Has("sharding")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap s, top.Map("sharding"));
  ShardingSpec& sh = job.sharding;
  if (s.Has("mode")) {
    STRATA_ASSIGN_OR_RETURN(sh.mode, EnumField(s, "mode", kModes));
  }
  const std::string mode(ShardingModeName(sh.mode));
  if (s.Has("runtime")) {
    STRATA_ASSIGN_OR_RETURN(sh.runtime, EnumField(s, "runtime", kRuntimes));
    if (!ShardingRuntimeRuns(sh.runtime, sh.mode)) {
      std::vector<std::string> runs;
      for (const auto& r : kRuntimes) {
        if (ShardingRuntimeRuns(r.value, sh.mode)) runs.emplace_back(r.name);
      }
      return s
          .ErrorAt("runtime", fmt::format("{} does not run sharding.mode {}",
                                          ShardingRuntimeName(sh.runtime), mode))
          .WithHint(runs.empty() ? std::string("sharding.mode none has no sharding to run")
                                 : fmt::format("under {}: {}", mode, fmt::join(runs, ", ")));
    }
  }
  if (s.Has("reshard_after_forward")) {
    STRATA_ASSIGN_OR_RETURN(sh.reshard_after_forward, s.Bool("reshard_after_forward"));
    sh.reshard_after_forward_given = true;
    if (!sh.shards_weights()) {
      return s.ErrorAt(
          "reshard_after_forward",
          fmt::format("applies only to zero3 and fsdp2 (weights sharded), not {}", mode));
    }
  }
  if (s.Has("use_orig_params")) {
    STRATA_ASSIGN_OR_RETURN(sh.use_orig_params, s.Bool("use_orig_params"));
    if (!sh.shards_gradients()) {
      return s.ErrorAt("use_orig_params",
                       fmt::format("applies only to zero2, zero3 and fsdp2 (the modes FSDP1 "
                                   "runs), not {}",
                                   mode));
    }
  }
  if (s.Has("sync_each_micro_batch")) {
    STRATA_ASSIGN_OR_RETURN(sh.sync_each_micro_batch, s.Bool("sync_each_micro_batch"));
    sh.sync_each_micro_batch_given = true;
    if (!sh.shards_gradients()) {
      return s.ErrorAt("sync_each_micro_batch",
                       fmt::format("applies only to zero2, zero3 and fsdp2 (the modes FSDP runs), "
                                   "not {}",
                                   mode));
    }
  }
  if (s.Has("fsdp_units")) {
    STRATA_ASSIGN_OR_RETURN(sh.units, EnumField(s, "fsdp_units", kUnits));
    sh.units_given = true;
    if (sh.mode != ShardingMode::kFsdp2) {
      return s.ErrorAt("fsdp_units", fmt::format("applies only to fsdp2, not {}", mode));
    }
  }
  if (s.Has("prefetch_layers")) {
    STRATA_ASSIGN_OR_RETURN(sh.prefetch_layers, s.Number("prefetch_layers"));
    sh.prefetch_layers_given = true;
    if (!(sh.prefetch_layers >= 0) || sh.prefetch_layers > 1e6) {
      return s.ErrorAt("prefetch_layers",
                       "expected 0 or more layers (a fraction when the prefetch buffer is "
                       "smaller than one layer)");
    }
  }
  // DeepSpeed's reduce buckets (ShardingSpec::reduce_bucket_elements).
  if (s.Has("reduce_bucket_elements")) {
    if (sh.mode != ShardingMode::kZero1 && sh.mode != ShardingMode::kZero2 &&
        sh.mode != ShardingMode::kZero3) {
      return s.ErrorAt(
          "reduce_bucket_elements",
          fmt::format("is DeepSpeed's ZeRO-1/2/3 reduce_bucket_size, not one of {}", mode));
    }
    STRATA_ASSIGN_OR_RETURN(sh.reduce_bucket_elements, s.Number("reduce_bucket_elements"));
    sh.reduce_bucket_elements_given = true;
    if (!(sh.reduce_bucket_elements >= 0) || sh.reduce_bucket_elements > 1e15) {
      return s.ErrorAt("reduce_bucket_elements",
                       "expected 0 or more elements (DeepSpeed's reduce_bucket_size)");
    }
  }
  if (s.Has("overlap_comm")) {
    STRATA_ASSIGN_OR_RETURN(sh.overlap_comm, s.Bool("overlap_comm"));
    sh.overlap_comm_given = true;
    if (sh.mode != ShardingMode::kZero1 && sh.mode != ShardingMode::kZero2 &&
        sh.mode != ShardingMode::kZero3) {
      return s
          .ErrorAt("overlap_comm",
                   fmt::format("is DeepSpeed's ZeRO-1/2/3 switch, not one of {}", mode))
          .WithHint("FSDP2 always runs its collectives on their own streams");
    }
  }
  if (s.Has("replicate")) {
    STRATA_ASSIGN_OR_RETURN(sh.replicate, s.PositiveInt("replicate"));
    if (sh.replicate > 1 && !sh.shards_optimizer()) {
      return s.ErrorAt("replicate", "replicate x shard (HSDP) needs a sharding mode, not none");
    }
  }
  if (s.Has("offload_optimizer")) {
    STRATA_ASSIGN_OR_RETURN(sh.offload_optimizer, EnumField(s, "offload_optimizer", kTargets));
  }
  if (s.Has("offload_param")) {
    STRATA_ASSIGN_OR_RETURN(sh.offload_param, EnumField(s, "offload_param", kTargets));
  }
  if (sh.offload_param != OffloadTarget::kNone && !sh.shards_weights()) {
    return s
        .ErrorAt("offload_param",
                 fmt::format("offloading parameters needs sharded weights (zero3 or fsdp2), "
                             "not {}",
                             mode))
        .WithHint("set sharding.mode: zero3, or offload only the optimizer");
  }
  if (sh.mode == ShardingMode::kFsdp2 && sh.offload_optimizer != OffloadTarget::kNone) {
    return s
        .ErrorAt("offload_optimizer",
                 "FSDP2's CPUOffloadPolicy moves parameters, gradients and optimizer state "
                 "together")
        .WithHint("set sharding.offload_param: cpu (and no offload_optimizer)");
  }
  if (sh.mode == ShardingMode::kFsdp2 && sh.offload_param == OffloadTarget::kNvme) {
    return s.ErrorAt("offload_param", "FSDP2 offloads to CPU memory only, not NVMe");
  }
  if (sh.mode != ShardingMode::kZero3 && sh.offload_optimizer == OffloadTarget::kNvme) {
    return s
        .ErrorAt("offload_optimizer",
                 "NVMe offload of the optimizer is DeepSpeed ZeRO-Infinity: zero3 only")
        .WithHint("use offload_optimizer: cpu, or sharding.mode: zero3");
  }
  if (sh.offload_optimizer != OffloadTarget::kNone && sh.mode == ShardingMode::kNone) {
    return s.ErrorAt("offload_optimizer",
                     "offloading the optimizer needs a ZeRO stage (zero1 or more)");
  }
  STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  // optimizer.distributed, when the file gives it, must agree with the mode.
  if (top.Has("optimizer")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap o, top.Map("optimizer"));
    if (o.Has("distributed") && job.optimizer.distributed != sh.shards_optimizer()) {
      return o
          .ErrorAt("distributed",
                   fmt::format("optimizer.distributed: {} contradicts sharding.mode: {}",
                               job.optimizer.distributed, mode))
          .WithHint("drop optimizer.distributed; sharding.mode says it");
    }
  }
  job.optimizer.distributed = sh.shards_optimizer();
  return OkStatus();
}

Status ParseFp8(YamlMap& top, JobSpec& job) {
  if (!top.Has("fp8")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap f, top.Map("fp8"));
  Fp8Spec& fp8 = job.fp8;
  STRATA_ASSIGN_OR_RETURN(fp8.recipe, EnumField(f, "recipe", kRecipes));
  if (f.Has("param_gather")) {
    STRATA_ASSIGN_OR_RETURN(fp8.param_gather, f.Bool("param_gather"));
  }
  if (f.Has("amax_history")) {
    STRATA_ASSIGN_OR_RETURN(fp8.amax_history, f.PositiveInt("amax_history"));
    if (fp8.recipe != Fp8Recipe::kDelayed) {
      return f.ErrorAt("amax_history", "applies only to recipe: delayed");
    }
  }
  if (fp8.param_gather && fp8.recipe == Fp8Recipe::kTorchaoRowwise) {
    return f.ErrorAt("param_gather",
                     "torchao's float8 all-gather exists for tensorwise scaling only");
  }
  if (fp8.param_gather && !fp8.transformer_engine() && job.sharding.mode != ShardingMode::kFsdp2) {
    return f.ErrorAt("param_gather", "torchao's float8 all-gather is an FSDP2 feature")
        .WithHint("set sharding.mode: fsdp2");
  }
  return f.CheckNoUnknownKeys();
}

}  // namespace

std::string_view ShardingModeName(ShardingMode mode) { return NameOf(kModes, mode); }
std::string_view OffloadTargetName(OffloadTarget target) { return NameOf(kTargets, target); }
std::string_view Fp8RecipeName(Fp8Recipe recipe) { return NameOf(kRecipes, recipe); }

const std::vector<std::string>& RecomputeModuleNames() {
  static const std::vector<std::string> names = {
      "core_attn", "mlp", "moe", "moe_act", "layernorm", "mla_up_proj", "shared_experts"};
  return names;
}

bool SetRecomputeModule(RecomputeModules& m, const std::string& name) {
  bool* flags[] = {&m.core_attn, &m.mlp,         &m.moe,           &m.moe_act,
                   &m.layernorm, &m.mla_up_proj, &m.shared_experts};
  const auto& names = RecomputeModuleNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      *flags[i] = true;
      return true;
    }
  }
  return false;
}

Status ParseRecomputeModules(YamlMap& r, JobSpec& job) {
  if (job.recompute.granularity != RecomputeGranularity::kSelective) {
    return r.ErrorAt("modules", "applies only to granularity: selective");
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, r.Node("modules"));
  if (!list.IsSequence() || list.size() == 0) {
    return r.ErrorAt("modules", fmt::format("expected a list of module names, e.g. [core_attn, "
                                            "moe_act]; known: {}",
                                            fmt::join(RecomputeModuleNames(), ", ")));
  }
  RecomputeModules modules;
  modules.core_attn = false;  // a list replaces the default
  for (const auto& item : list) {
    const std::string name = item.IsScalar() ? item.Scalar() : "";
    if (!SetRecomputeModule(modules, name)) {
      return r
          .ErrorAt("modules", fmt::format("unknown recompute module '{}', expected one of: {}",
                                          name, fmt::join(RecomputeModuleNames(), ", ")))
          .WithHint(DidYouMeanHint(name, RecomputeModuleNames()));
    }
  }
  job.recompute.modules = modules;
  return OkStatus();
}

Status ParseTitanSelectiveAc(YamlMap& r, JobSpec& job) {
  const char* key = "selective_ac_option";
  if (job.recompute.granularity != RecomputeGranularity::kSelective) {
    return r.ErrorAt(key, "applies only to granularity: selective (torchtitan's mode)");
  }
  if (r.Has("modules")) {
    return r
        .ErrorAt(key,
                 "'modules' (megatron-core's --recompute-modules) and 'selective_ac_option' "
                 "(torchtitan's) describe different frameworks; give one")
        .WithHint("remove one of the two");
  }
  STRATA_ASSIGN_OR_RETURN(std::string value, r.String(key));
  TitanSelectiveAc titan;
  if (value == "op") {
    titan.op = true;
  } else {
    int64_t n = 0;
    bool digits = !value.empty() && value.size() <= 9;
    for (char c : value) {
      digits = digits && c >= '0' && c <= '9';
      if (digits) n = n * 10 + (c - '0');
    }
    if (!digits || n < 1) {
      return r
          .ErrorAt(key, fmt::format("expected 'op' or a layer frequency N >= 1 (every N-th "
                                    "layer in full AC), got '{}'",
                                    value))
          .WithHint(DidYouMeanHint(value, {"op"}));
    }
    titan.every_n_layers = n;
  }
  job.recompute.titan = titan;
  return OkStatus();
}

Status ParseActivationOffload(YamlMap& top, JobSpec& job) {
  if (!top.Has("activation_offload")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap a, top.Map("activation_offload"));
  STRATA_ASSIGN_OR_RETURN(job.activation_offload.num_layers, a.Int("num_layers"));
  if (job.activation_offload.num_layers < 0) {
    return a.ErrorAt("num_layers", fmt::format("expected 0 (off) or the number of layers whose "
                                               "activations go to host memory, got {}",
                                               job.activation_offload.num_layers));
  }
  return a.CheckNoUnknownKeys();
}

Status ParseMoe(YamlMap& top, JobSpec& job) {
  if (!top.Has("moe")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap m, top.Map("moe"));
  if (m.Has("routing_imbalance")) {
    STRATA_ASSIGN_OR_RETURN(job.moe_routing_imbalance, m.Number("routing_imbalance"));
    job.moe_routing_imbalance_given = true;
    if (!(job.moe_routing_imbalance >= 1.0)) {
      return m.ErrorAt("routing_imbalance",
                       fmt::format("expected the busiest EP rank's tokens over the mean, at least "
                                   "1, got {}",
                                   job.moe_routing_imbalance));
    }
    if (job.moe_routing_imbalance > static_cast<double>(job.layout.ep)) {
      return m.ErrorAt("routing_imbalance",
                       fmt::format("{} exceeds EP {}: one rank cannot receive more than every "
                                   "token",
                                   job.moe_routing_imbalance, job.layout.ep));
    }
  }
  if (m.Has("aux_loss_coeff")) {
    STRATA_ASSIGN_OR_RETURN(job.moe_aux_loss_coeff, m.Number("aux_loss_coeff"));
    if (!(job.moe_aux_loss_coeff >= 0)) {
      return m.ErrorAt("aux_loss_coeff",
                       fmt::format("expected a coefficient of 0 (no load-balancing loss) or "
                                   "more, got {}",
                                   job.moe_aux_loss_coeff));
    }
  }
  if (m.Has("grouped_gemm")) {
    STRATA_ASSIGN_OR_RETURN(const bool grouped, m.Bool("grouped_gemm"));
    job.moe_grouped_gemm = grouped;
  }
  return m.CheckNoUnknownKeys();
}

Status ParseTrainingModes(YamlMap& top, JobSpec& job) {
  STRATA_RETURN_IF_ERROR(ParseSharding(top, job));
  STRATA_RETURN_IF_ERROR(ParseMoe(top, job));
  STRATA_RETURN_IF_ERROR(ParseActivationOffload(top, job));
  STRATA_RETURN_IF_ERROR(ParseAdapter(top, job));
  return ParseFp8(top, job);
}

}  // namespace strata
