// Accelerate's config keys and launch flags are those of huggingface/accelerate
// (src/accelerate/commands/launch.py and utils/dataclasses.py: DistributedType,
// FullyShardedDataParallelPlugin, DeepSpeedPlugin).
#include "strata/importer/accelerate_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/text_scan.h"

namespace strata {

namespace {

constexpr const char* kPrefix = "accelerate.";

bool IsTrue(const std::string& v) { return v == "true" || v == "True" || v == "1"; }

// accelerate launch's DeepSpeed flags are the DeepSpeed plugin's config keys.
bool IsDeepSpeedPluginKey(const std::string& key) {
  for (const char* k :
       {"zero_stage", "offload_optimizer_device", "offload_param_device",
        "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
        "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_config_file",
        "deepspeed_multinode_launcher", "deepspeed_hostfile"}) {
    if (key == k) return true;
  }
  return false;
}

// FSDP1's sharding strategies, by name or by the number accelerate also accepts
// (torch.distributed.fsdp.ShardingStrategy: FULL_SHARD = 1 ... _HYBRID_SHARD_ZERO2 = 5).
struct Fsdp1Strategy {
  const char* name;
  const char* number;
  const char* mode;  // strata's sharding.mode
  bool hybrid;       // sharded within a node, replicated across nodes
};
// FSDP1's FULL_SHARD keeps each wrapped unit as one FlatParameter and gathers it with one
// all-gather per unit per pass, as FSDP2 does per fully_shard unit; nothing in it walks the
// parameters one by one as DeepSpeed's ZeRO-3 hooks do (zero3 on HF code is DeepSpeed's). So it
// is the per-unit mode fsdp2, run by FSDP1 (sharding.runtime fsdp1: its padding and root unit).
// SHARD_GRAD_OP keeps the gathered weights from forward to backward and the whole model between
// steps' passes: ZeRO-2's set, run by FSDP1 too (not DeepSpeed's stage_1_and_2 buckets).
constexpr Fsdp1Strategy kFsdp1Strategies[] = {{"FULL_SHARD", "1", "fsdp2", false},
                                              {"SHARD_GRAD_OP", "2", "zero2", false},
                                              {"NO_SHARD", "3", "none", false},
                                              {"HYBRID_SHARD", "4", "fsdp2", true},
                                              {"HYBRID_SHARD_ZERO2", "5", "zero2", true}};

const Fsdp1Strategy* FindFsdp1Strategy(std::string value) {
  if (value.starts_with("_")) value = value.substr(1);  // _HYBRID_SHARD_ZERO2
  for (const auto& s : kFsdp1Strategies) {
    if (value == s.name || value == s.number) return &s;
  }
  return nullptr;
}

}  // namespace

bool IsAccelerateConfig(const Settings& yaml) { return yaml.Has("distributed_type"); }

void AddAccelerateConfig(const Settings& yaml, Settings& s) {
  for (const auto& [key, sv] : yaml.Unused()) {
    if (!s.Has(kPrefix + key)) s.Set(kPrefix + key, sv.value, sv.source);
  }
}

void AddAccelerateLaunchFlags(const Settings& flags, Settings& s) {
  for (const auto& [key, sv] : flags.Unused()) {
    std::string target = key;
    if (key == "use_fsdp" || key == "use_deepspeed" || key == "multi_gpu") {
      if (!IsTrue(sv.value)) continue;
      target = "distributed_type";
      const char* type = key == "use_fsdp"        ? "FSDP"
                         : key == "use_deepspeed" ? "DEEPSPEED"
                                                  : "MULTI_GPU";
      s.Set(kPrefix + target, type, sv.source);
      continue;
    }
    if (key == "config_file") continue;  // read by the caller
    if (IsDeepSpeedPluginKey(key)) target = "deepspeed_config." + key;
    if (key.starts_with("fsdp_")) target = "fsdp_config." + key;
    s.Set(kPrefix + target, sv.value, sv.source);
  }
}

Status MapAccelerateLaunch(Settings& s, JobBuilder& job) {
  const SourcedValue* type = s.Use("accelerate.distributed_type");
  if (type == nullptr) return OkStatus();
  const std::vector<std::string> kTypes = {"FSDP", "DEEPSPEED", "MULTI_GPU", "NO"};
  if (std::find(kTypes.begin(), kTypes.end(), type->value) == kTypes.end()) {
    return InvalidInput(fmt::format("distributed_type '{}' ({}): strata imports FSDP, DEEPSPEED, "
                                    "MULTI_GPU and NO",
                                    type->value, type->source))
        .WithHint(DidYouMeanHint(type->value, kTypes));
  }
  const std::string dt = type->value;
  // num_processes is the total over every machine (accelerate launch --num_processes).
  const SourcedValue* machines = s.Use("accelerate.num_machines");
  const SourcedValue* processes = s.Use("accelerate.num_processes");
  std::optional<int64_t> nodes = 1;
  if (machines != nullptr) {
    nodes = ParseInt64(machines->value);
    job.Set("cluster.nodes", machines->value, machines->source);
  } else {
    job.Default("cluster.nodes", "1", "Accelerate's num_machines defaults to 1");
  }
  if (dt == "NO" && processes == nullptr) {
    job.Default("cluster.gpus_per_node", "1", "distributed_type NO: one process");
  } else if (processes != nullptr) {
    const std::optional<int64_t> total = ParseInt64(processes->value);
    if (total && nodes && *nodes > 0 && *total > 0) {
      if (*total % *nodes != 0) {
        return InvalidInput(
            fmt::format("num_processes {} ({}) is not a multiple of num_machines "
                        "{}: Accelerate's num_processes counts every machine's",
                        *total, processes->source, *nodes));
      }
      if (*nodes == 1) {
        job.Set("cluster.gpus_per_node", std::to_string(*total), processes->source);
      } else {
        job.Derive("cluster.gpus_per_node", std::to_string(*total / *nodes),
                   fmt::format("{} {} / num_machines {}", processes->source, *total, *nodes));
      }
    } else {
      job.Set("cluster.gpus_per_node", processes->value, processes->source);
    }
  }
  // The script's own --bf16 / --fp16 win; without them, accelerate launch passes its
  // mixed_precision to the Accelerator the Trainer builds.
  if (const SourcedValue* mp = s.Use("accelerate.mixed_precision")) {
    const std::string v = mp->value;
    if (v != "no" && v != "bf16" && v != "fp16" && v != "fp8") {
      return InvalidInput(fmt::format("mixed_precision '{}' ({}): expected no, fp16, bf16 or fp8",
                                      v, mp->source))
          .WithHint(DidYouMeanHint(v, {"no", "fp16", "bf16", "fp8"}));
    }
    if (v != "no" && !s.Has("bf16") && !s.Has("fp16")) {
      s.Set(v == "fp16" ? "fp16" : "bf16", "true",
            fmt::format("{} {} (Accelerate's mixed precision)", mp->source, v));
    }
    if (v == "fp8") {
      job.Note(mp->source +
               " fp8: Accelerate's FP8 (TransformerEngine or torchao) is not modelled; the job "
               "is imported as bf16");
    }
  }
  if (dt == "DEEPSPEED") {
    // The plugin's keys as the DeepSpeed JSON would give them; a JSON named by
    // deepspeed_config_file (merged before) wins.
    for (const auto& [key, ds] :
         {std::pair{"zero_stage", "ds.zero_optimization.stage"},
          std::pair{"offload_optimizer_device", "ds.zero_optimization.offload_optimizer.device"},
          std::pair{"offload_param_device", "ds.zero_optimization.offload_param.device"},
          std::pair{"gradient_accumulation_steps", "ds.gradient_accumulation_steps"}}) {
      const std::string k = std::string(kPrefix) + "deepspeed_config." + key;
      if (!s.Has(k)) continue;
      const SourcedValue* v = s.Use(k);
      if (!s.Has(ds)) s.Set(ds, v->value, v->source);
    }
  }
  return OkStatus();
}

// How the checkpoint is written: Accelerate's FullyShardedDataParallelPlugin takes
// fsdp_state_dict_type, defaulting to FULL_STATE_DICT under FSDP1 and SHARDED_STATE_DICT under
// FSDP2 (huggingface/accelerate utils/dataclasses.py, __post_init__). LOCAL_STATE_DICT has each
// rank torch.save its own flat shard (utils/fsdp_utils.py save_fsdp_model): sized as sharded.
Status MapStateDictType(Settings& s, const std::string& fsdp, int64_t version, JobBuilder& job) {
  const SourcedValue* type = s.Use(fsdp + "fsdp_state_dict_type");
  if (type == nullptr) {
    job.Default("checkpoint.state_dict", version == 1 ? "full" : "sharded",
                version == 1 ? "Accelerate's fsdp_state_dict_type defaults to FULL_STATE_DICT "
                               "under FSDP1"
                             : "Accelerate's fsdp_state_dict_type defaults to "
                               "SHARDED_STATE_DICT under FSDP2");
    return OkStatus();
  }
  const std::vector<std::pair<std::string, std::string>> kTypes = {
      {"FULL_STATE_DICT", "full"},
      {"SHARDED_STATE_DICT", "sharded"},
      {"LOCAL_STATE_DICT", "sharded"}};
  std::vector<std::string> names;
  for (const auto& [name, kind] : kTypes) {
    if (type->value == name) {
      job.Set("checkpoint.state_dict", kind, type->source);
      return OkStatus();
    }
    names.push_back(name);
  }
  return InvalidInput(fmt::format("fsdp_state_dict_type '{}' ({}): expected FULL_STATE_DICT, "
                                  "SHARDED_STATE_DICT or LOCAL_STATE_DICT",
                                  type->value, type->source))
      .WithHint(DidYouMeanHint(type->value, names));
}

Status MapAccelerateSharding(Settings& s, JobBuilder& job) {
  const SourcedValue* type = s.Use("accelerate.distributed_type");
  if (type == nullptr || type->value != "FSDP") return OkStatus();
  const std::string fsdp = std::string(kPrefix) + "fsdp_config.";
  const std::string type_source = type->source;
  int64_t version = 1;
  std::string version_source = "Accelerate's fsdp_version defaults to 1";
  if (s.Has(fsdp + "fsdp_version")) {
    version_source = s.Use(fsdp + "fsdp_version")->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Int(fsdp + "fsdp_version"));
    if (*v != 1 && *v != 2) {
      return InvalidInput(fmt::format("fsdp_version {} ({}): expected 1 or 2", *v, version_source));
    }
    version = *v;
  }
  std::string mode;
  std::string mode_source;
  FieldOrigin mode_origin = FieldOrigin::kFromInput;  // Accelerate's default strategy: kDefault
  bool reshard = true;
  std::string reshard_source;
  bool hybrid = false;
  const SourcedValue* reshard_value = s.Use(fsdp + "fsdp_reshard_after_forward");
  if (version == 2) {
    mode = "fsdp2";
    mode_source = version_source + " 2";
    if (reshard_value != nullptr) {
      if (!IsTrue(reshard_value->value) && reshard_value->value != "false" &&
          reshard_value->value != "False") {
        return InvalidInput(
            fmt::format("fsdp_reshard_after_forward '{}' ({}): FSDP2 takes true "
                        "or false",
                        reshard_value->value, reshard_value->source));
      }
      reshard = IsTrue(reshard_value->value);
      reshard_source = reshard_value->source;
    }
  } else {
    // FSDP1: fsdp_sharding_strategy, which newer Accelerate also reads from
    // fsdp_reshard_after_forward (the FSDP2 name) when that holds a strategy.
    const SourcedValue* strategy = s.Use(fsdp + "fsdp_sharding_strategy");
    if (strategy == nullptr && reshard_value != nullptr && !IsTrue(reshard_value->value) &&
        reshard_value->value != "false" && reshard_value->value != "False") {
      strategy = reshard_value;
    }
    const Fsdp1Strategy* found =
        FindFsdp1Strategy(strategy != nullptr ? strategy->value : "FULL_SHARD");
    if (found == nullptr) {
      std::vector<std::string> names;
      for (const auto& e : kFsdp1Strategies) names.push_back(e.name);
      return InvalidInput(fmt::format("fsdp_sharding_strategy '{}' ({}): expected FULL_SHARD, "
                                      "SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or "
                                      "HYBRID_SHARD_ZERO2",
                                      strategy->value, strategy->source))
          .WithHint(DidYouMeanHint(strategy->value, names));
    }
    mode = found->mode;
    hybrid = found->hybrid;
    mode_source = strategy != nullptr
                      ? fmt::format("{} {} (FSDP1)", strategy->source, strategy->value)
                      : "default: Accelerate's fsdp_sharding_strategy FULL_SHARD (FSDP1)";
    if (strategy == nullptr) mode_origin = FieldOrigin::kDefault;
    if (mode == "fsdp2") {
      mode_source +=
          ", per-unit sharding run by FSDP1 (sharding.runtime fsdp1: one padded FlatParameter "
          "per wrapped unit, one all-gather per unit per pass)";
    }
    reshard = std::string(found->name) != "SHARD_GRAD_OP" &&
              std::string(found->name) != "HYBRID_SHARD_ZERO2";
  }
  job.Set("sharding.mode", mode, mode_source, mode_origin);
  // Whose code runs it: FullyShardedDataParallel (FlatParameter per unit) under fsdp_version 1,
  // fully_shard under 2 (huggingface/accelerate utils/dataclasses.py,
  // FullyShardedDataParallelPlugin.fsdp_version). NO_SHARD shards nothing.
  if (mode != "none") {
    const bool version_given = s.Has(fsdp + "fsdp_version");
    job.Set("sharding.runtime", version == 2 ? "fsdp2" : "fsdp1",
            fmt::format("{}{}: {}", version_source,
                        version_given ? fmt::format(" {}", version) : std::string(),
                        version == 2 ? "FSDP2 (fully_shard)" : "FSDP1 (FullyShardedDataParallel)"),
            version_given ? FieldOrigin::kFromInput : FieldOrigin::kDefault);
  }
  // FSDP1's use_orig_params: the config's fsdp_use_orig_params, else what `accelerate launch`
  // passes, "true" (huggingface/accelerate v1.13.0 src/accelerate/commands/launch.py,
  // --fsdp_use_orig_params default="true", exported as FSDP_USE_ORIG_PARAMS by
  // utils/launch.py; FullyShardedDataParallelPlugin.__post_init__ reads it under fsdp_version 1
  // and drops it under 2, "use_orig_params is obsolete in FSDP2").
  if (version == 1 && mode != "none") {
    const SourcedValue* orig = s.Use(fsdp + "fsdp_use_orig_params");
    if (orig == nullptr) {
      job.Default("sharding.use_orig_params", "true",
                  "accelerate launch's --fsdp_use_orig_params defaults to true (FSDP1)");
    } else if (IsTrue(orig->value) || orig->value == "false" || orig->value == "False") {
      job.Set("sharding.use_orig_params", IsTrue(orig->value) ? "true" : "false", orig->source);
    } else {
      return InvalidInput(fmt::format("fsdp_use_orig_params '{}' ({}): expected true or false",
                                      orig->value, orig->source));
    }
  }
  // reshard_after_forward is a choice of the modes that shard the weights (fsdp2 here); ZeRO-2's
  // set (SHARD_GRAD_OP) keeps them gathered by definition and the job file has no field for it.
  if (mode == "fsdp2") {
    if (reshard_source.empty()) {
      job.Default("sharding.reshard_after_forward", reshard ? "true" : "false",
                  version == 2 ? "FSDP2's reshard_after_forward defaults to true"
                               : "the FSDP1 strategy's reshard after forward");
    } else {
      job.Set("sharding.reshard_after_forward", reshard ? "true" : "false", reshard_source);
    }
  }
  if (mode == "fsdp2") {
    STRATA_RETURN_IF_ERROR(MapStateDictType(s, fsdp, version, job));
  }
  if (hybrid) {
    const std::string nodes = job.Get("cluster.nodes");
    // The importer's reading of the hybrid strategy (one shard group a node), whatever the
    // strategy's own source.
    job.Set("sharding.replicate", nodes.empty() ? "1" : nodes,
            mode_source + ": sharded within a node, replicated over the nodes",
            FieldOrigin::kDerived);
  }
  job.Set("optimizer.distributed", mode == "none" ? "false" : "true", mode_source, mode_origin);
  // Accelerate upcasts the model to fp32 under FSDP mixed precision and casts to the compute
  // dtype per unit. Its FSDP plugin builds MixedPrecision(param_dtype=dtype, reduce_dtype=dtype)
  // from mixed_precision (huggingface/accelerate, utils/dataclasses.py,
  // FullyShardedDataParallelPlugin.set_mixed_precision), so the gradients are reduced in the
  // compute dtype: precision.grads is the reduction's dtype, as torchtitan's
  // mixed_precision_reduce is.
  const std::string params = job.Get("precision.params");
  if (params == "bf16" || params == "fp16") {
    job.Set("precision.grads", params,
            type_source + " FSDP with mixed_precision " + params +
                ": Accelerate's MixedPrecision reduces the gradients in " + params +
                " (reduce_dtype = the mixed precision dtype)");
  } else if (!params.empty()) {
    job.Set("precision.grads", "fp32",
            type_source + " FSDP: gradients reduced in the parameters' fp32");
  }
  job.Default("optimizer.master_weights", "fp32",
              "Accelerate upcasts the parameters to fp32 under FSDP mixed precision");
  if (const SourcedValue* off = s.Use(fsdp + "fsdp_offload_params");
      off != nullptr && IsTrue(off->value)) {
    job.Set("sharding.offload_param", "cpu", off->source);
    if (mode == "zero3" || mode == "zero2")
      job.Set("sharding.offload_optimizer", "cpu", off->source);
  }
  if (const SourcedValue* ac = s.Use(fsdp + "fsdp_activation_checkpointing");
      ac != nullptr && IsTrue(ac->value)) {
    job.Set("recompute.granularity", "full", ac->source);
    job.Set("recompute.method", "uniform", ac->source + ": every wrapped decoder layer");
    job.Set("recompute.num_layers", "1", ac->source + ": every wrapped decoder layer");
  }
  if (const SourcedValue* wrap = s.Use(fsdp + "fsdp_auto_wrap_policy");
      wrap != nullptr && wrap->value != "TRANSFORMER_BASED_WRAP") {
    job.Note(
        fmt::format("{} {}: strata models one FSDP unit per decoder layer "
                    "(TRANSFORMER_BASED_WRAP)",
                    wrap->source, wrap->value));
  }
  return OkStatus();
}

}  // namespace strata
