// torchtitan TOML, DeepSpeed + Hugging Face TrainingArguments, and verl trainer settings to a
// strata job. These frameworks shard with FSDP or ZeRO: each mapper sets sharding.mode (and the
// offload devices) from the framework's own settings.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "strata/core/did_you_mean.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/hw/cluster.h"
#include "strata/importer/accelerate_config.h"
#include "strata/importer/framework_mappers.h"
#include "strata/importer/model_match.h"
#include "strata/importer/settings.h"
#include "strata/importer/verl_actor_layout.h"
#include "strata/importer/verl_rl_mapping.h"
#include "strata/job/engine_chain.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "strata/model/torchtitan_flavors.h"

namespace strata {

namespace {

Result<int64_t> IntSetting(Settings& s, const std::string& key, int64_t fallback) {
  STRATA_ASSIGN_OR_RETURN(auto v, s.Int(key));
  return v ? *v : fallback;
}

// Sets `job_key` from `key` when present, else the default with its reason. Returns the value.
Result<int64_t> IntField(Settings& s, JobBuilder& job, const std::string& key,
                         const std::string& job_key, int64_t fallback, const std::string& why) {
  if (s.Has(key)) {
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Int(key));
    if (!job_key.empty()) job.Set(job_key, std::to_string(*v), source);
    return *v;
  }
  if (!job_key.empty()) job.Default(job_key, std::to_string(fallback), why);
  return fallback;
}

// The actor's micro batch per GPU. verl's older global actor.ppo_micro_batch_size (deprecated,
// still in its actor config as `ppo_micro_batch_size: null`) is divided by the actor's DP into
// ppo_micro_batch_size_per_gpu when its workers start: FSDP by device_mesh.size() // ulysses
// (volcengine/verl@004c888001c88628b98fbc5fdee9c3e9b8898800:verl/workers/fsdp_workers.py,
// ActorRolloutRefWorker.__init__, "normalize config"), megatron by
// mpu.get_data_parallel_world_size() (megatron_workers.py, the same block); its trainer refuses
// both keys set at once (ray_trainer.py, check_mutually_exclusive: "You have set both").
Status VerlGlobalMicroBatch(Settings& s, JobBuilder& job, int64_t model_parallel,
                            const char* model_parallel_name) {
  const std::string per_gpu_key = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu";
  const std::string global_key = "actor_rollout_ref.actor.ppo_micro_batch_size";
  const SourcedValue* global = s.Use(global_key);
  if (global == nullptr || global->value == "null" || global->value == "None") {
    STRATA_RETURN_IF_ERROR(
        IntField(s, job, per_gpu_key, "batch.micro_batch", 1, "micro batch per GPU not given: 1"));
    return OkStatus();
  }
  if (const SourcedValue* per_gpu = s.Use(per_gpu_key);
      per_gpu != nullptr && per_gpu->value != "null" && per_gpu->value != "None") {
    return InvalidInput(fmt::format("{} = {} ({}) and {} = {} ({}) are both set: verl refuses "
                                    "the launch (\"You have set both\")",
                                    global_key, global->value, global->source, per_gpu_key,
                                    per_gpu->value, per_gpu->source))
        .InField(global_key)
        .WithHint("remove ppo_micro_batch_size: verl reads only the _per_gpu key now");
  }
  const std::string source = global->source;
  STRATA_ASSIGN_OR_RETURN(int64_t total, IntSetting(s, global_key, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t per_node, IntSetting(s, "trainer.n_gpus_per_node", 8));
  STRATA_ASSIGN_OR_RETURN(int64_t nodes, IntSetting(s, "trainer.nnodes", 1));
  const int64_t gpus = per_node * nodes;
  const int64_t dp = model_parallel > 0 ? gpus / model_parallel : 0;
  if (total <= 0 || dp <= 0 || total / dp == 0) {
    return InvalidInput(fmt::format("{} = {} ({}) over the actor's {} data-parallel ranks ({} "
                                    "GPUs / {} {}) is 0 samples per GPU",
                                    global_key, total, source, dp, gpus, model_parallel_name,
                                    model_parallel))
        .InField(global_key)
        .WithHint("verl divides the global micro batch by DP: give at least one sample a rank");
  }
  job.Set("batch.micro_batch", std::to_string(total / dp),
          fmt::format("derived: {} = {} // DP {} ({} GPUs / {} {}): verl's "
                      "ppo_micro_batch_size_per_gpu",
                      source, total, dp, gpus, model_parallel_name, model_parallel));
  return OkStatus();
}

// verl's own check of the FSDP actor's batches (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/fsdp_workers.py:241-261): the mini batch
// x rollout.n, divided by the data-parallel ranks (GPUs / ulysses), must be a positive multiple of
// ppo_micro_batch_size_per_gpu. A launch that fails it never runs: refused with verl's words,
// naming the launch's keys (not as a job strata wrote wrong).
Status CheckVerlFsdpMiniBatch(Settings& s, const JobBuilder& job, int64_t mini, int64_t n) {
  STRATA_ASSIGN_OR_RETURN(const int64_t dp, job.GetPositiveInt("parallel.dp"));
  STRATA_ASSIGN_OR_RETURN(const int64_t micro, job.GetPositiveInt("batch.micro_batch"));
  // verl's driver checks the whole batch over the GPUs first (RayPPOTrainer._validate_config):
  // a launch that fails that is refused by the RL job's own check, which names it.
  STRATA_ASSIGN_OR_RETURN(const int64_t prompts, IntSetting(s, "data.train_batch_size", 1024));
  STRATA_ASSIGN_OR_RETURN(const int64_t cp, job.GetPositiveInt("parallel.cp"));
  if ((prompts * n) % (dp * cp) != 0) return OkStatus();
  const int64_t samples = mini * n;
  const int64_t normalized = samples / dp;
  if (normalized > 0 && normalized % micro == 0) return OkStatus();
  const std::string mini_key = "actor_rollout_ref.actor.ppo_mini_batch_size";
  const SourcedValue* mini_v = s.Use(mini_key);
  const SourcedValue* micro_v = s.Use("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu");
  return InvalidInput(
             fmt::format("verl refuses this launch: normalized ppo_mini_batch_size {} (= {} x "
                         "rollout.n {} // {} data-parallel ranks) {} ppo_micro_batch_size_per_gpu "
                         "{} ({}; {})",
                         normalized, mini, n, dp,
                         normalized > 0 ? "should be divisible by" : "should be larger than 0 for",
                         micro, mini_v != nullptr ? mini_v->source : "verl's default 256",
                         micro_v != nullptr ? micro_v->source : "the micro batch"))
      .InField(mini_key)
      .WithHint(
          "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/"
          "fsdp_workers.py:255; change the mini batch, the micro batch or the GPUs");
}

Status SetModel(Settings& s, MapContext& ctx, JobBuilder& job, const char* key) {
  if (!ctx.options->model.empty()) {
    job.Set("model", ctx.options->model, "--model of strata import");
    return OkStatus();
  }
  const SourcedValue* v = s.Use(key);
  if (v == nullptr) {
    return InvalidInput(fmt::format("the input names no model ({})", key))
        .WithHint("pass --model with a catalog name or a config.json path");
  }
  STRATA_ASSIGN_OR_RETURN(ModelMatch match, MatchModel(v->value));
  job.Set("model", match.model, fmt::format("{} '{}' ({})", v->source, v->value, match.how));
  return OkStatus();
}

std::string DtypeName(const std::string& torch_name) {
  if (torch_name == "bfloat16" || torch_name == "bf16") return "bf16";
  if (torch_name == "float16" || torch_name == "fp16") return "fp16";
  if (torch_name == "float32" || torch_name == "fp32") return "fp32";
  return "";
}

}  // namespace

std::string VerlActorStrategy(Settings& s) {
  std::string strategy = "fsdp";
  // --config-name ppo_megatron_trainer selects the megatron actor (verl/trainer/config).
  if (auto v = s.String("config_name"); v && v->find("megatron") != std::string::npos) {
    strategy = "megatron";
  }
  if (auto v = s.String("actor_rollout_ref.actor.strategy")) strategy = *v;
  return strategy;
}

// torchtitan before its [parallelism] section (2024): the degrees were under [training] (TP,
// DP), PP and CP under [experimental], and `data_parallel_degree` was the shard degree. Read
// under the current names, keeping where each was written.
void RenameOldTitanKeys(Settings& s) {
  static const std::pair<const char*, const char*> kMoved[] = {
      {"training.tensor_parallel_degree", "parallelism.tensor_parallel_degree"},
      {"training.data_parallel_degree", "parallelism.data_parallel_shard_degree"},
      {"training.data_parallel_shard_degree", "parallelism.data_parallel_shard_degree"},
      {"training.data_parallel_replicate_degree", "parallelism.data_parallel_replicate_degree"},
      {"training.pipeline_parallel_degree", "parallelism.pipeline_parallel_degree"},
      {"experimental.pipeline_parallel_degree", "parallelism.pipeline_parallel_degree"},
      {"experimental.context_parallel_degree", "parallelism.context_parallel_degree"},
      {"training.enable_float8_linear", "float8.enable_float8_linear"}};
  for (const auto& [old_key, new_key] : kMoved) {
    if (s.Has(new_key) || !s.Has(old_key)) continue;
    const SourcedValue* v = s.Use(old_key);
    s.Set(new_key, v->value, v->source);
  }
}

// torchtitan's pipeline (torchtitan/distributed/pipeline_parallel.py, pytorch/torchtitan
// b5bcd76): its default split, the embedding and the output each counted as a layer; the
// schedule by the name PyTorch's get_schedule_class reads, case ignored (default "1F1B");
// multi-stage schedules run two virtual stages per rank unless
// pipeline_parallel_layers_per_stage says otherwise.
Status MapTitanPipeline(Settings& s, JobBuilder& job, int64_t pp) {
  if (pp <= 1) return OkStatus();
  job.Default("parallel.stage_split", "torchtitan",
              "torchtitan's default split: embedding and output each count as a layer "
              "(pipeline_parallel_first/last_stage_less_layers = 1)");
  constexpr std::pair<const char*, const char*> kSchedules[] = {
      {"1f1b", "1f1b"},
      {"gpipe", "gpipe"},
      {"interleaved1f1b", "interleaved_1f1b"},
      {"interleavedzerobubble", "zero_bubble"},
      {"zbvzerobubble", "zbv"},
      {"dualpipev", "dualpipev"}};
  const char* key = "parallelism.pipeline_parallel_schedule";
  std::string name = "1F1B", source = "torchtitan's default pipeline_parallel_schedule";
  if (s.Has(key)) {
    const SourcedValue* v = s.Use(key);
    name = v->value;
    source = v->source;
  }
  const std::string lower = AsciiLower(name);
  const auto* found = std::find_if(std::begin(kSchedules), std::end(kSchedules),
                                   [&](const auto& e) { return lower == e.first; });
  if (found == std::end(kSchedules)) {
    return InvalidInput(fmt::format("{} = '{}': this pipeline schedule is not modelled", key, name))
        .WithHint("1F1B, GPipe, Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV");
  }
  job.Set("parallel.pp_schedule", found->second, source);
  const std::string schedule = found->second;
  if (schedule != "1f1b" && schedule != "gpipe") {
    if (s.Has("parallelism.pipeline_parallel_layers_per_stage")) {
      job.Note(
          "parallelism.pipeline_parallel_layers_per_stage: not modelled; two virtual stages "
          "per rank assumed");
      s.Use("parallelism.pipeline_parallel_layers_per_stage");
    }
    job.Default("parallel.vpp", "2",
                "torchtitan runs two stages per rank for multi-stage schedules");
  }
  for (const char* less : {"parallelism.pipeline_parallel_first_stage_less_layers",
                           "parallelism.pipeline_parallel_last_stage_less_layers"}) {
    if (s.Has(less) && s.Use(less)->value != "1") {
      job.Note(fmt::format("{}: not modelled; the split assumes torchtitan's default 1", less));
    }
  }
  return OkStatus();
}

// FP8 linears through torchao: `model.converters = ["float8"]` (newer) or
// `float8.enable_float8_linear` (older), with float8.recipe_name (none: tensorwise scaling).
// torchtitan's [checkpoint] async_mode (pytorch/torchtitan@b5bcd76c
// torchtitan/components/checkpointer/dcp.py: "disabled", "async" or "async_with_pinned_mem"):
// the two async modes stage the state dict to host memory and write it in the background,
// checkpoint.async_save.
Status MapTitanAsyncCheckpoint(Settings& s, JobBuilder& job) {
  const SourcedValue* v = s.Use("checkpoint.async_mode");
  if (v == nullptr) return OkStatus();
  std::string mode = v->value;
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (mode == "async" || mode == "async_with_pinned_mem") {
    job.Set("checkpoint.async_save", "true", v->source);
  } else if (mode != "disabled") {
    return InvalidInput(fmt::format("{} = '{}': expected disabled, async or async_with_pinned_mem",
                                    v->source, v->value))
        .InField("checkpoint.async_mode");
  }
  return OkStatus();
}

Status MapTitanFp8(Settings& s, JobBuilder& job) {
  std::string source;
  if (const SourcedValue* v = s.Use("model.converters");
      v != nullptr && v->value.find("\"float8\"") != std::string::npos) {
    source = v->source;
  }
  if (s.Has("float8.enable_float8_linear")) {
    const std::string src = s.Use("float8.enable_float8_linear")->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("float8.enable_float8_linear"));
    if (on && *on) source = src;
  }
  const SourcedValue* recipe = s.Use("float8.recipe_name");
  const SourcedValue* gather = s.Use("float8.enable_fsdp_float8_all_gather");
  if (gather != nullptr && gather->value != "true" && gather->value != "false") {
    return InvalidInput("float8.enable_fsdp_float8_all_gather '" + gather->value +
                        "' is not a boolean")
        .InField("float8.enable_fsdp_float8_all_gather")
        .WithHint(DidYouMeanHint(gather->value, {"true", "false"}) + "; read from " +
                  gather->source);
  }
  if (source.empty()) return OkStatus();
  std::string name = "torchao_tensorwise";
  if (recipe != nullptr && !recipe->value.empty()) {
    if (recipe->value == "rowwise" || recipe->value == "rowwise_with_gw_hp") {
      name = "torchao_rowwise";
    } else if (recipe->value != "tensorwise") {
      return InvalidInput("unknown float8.recipe_name '" + recipe->value +
                          "'; expected tensorwise, rowwise or rowwise_with_gw_hp")
          .InField("float8.recipe_name")
          .WithHint("read from " + recipe->source);
    }
    source += " + " + recipe->source;
  } else {
    source += " (torchao's default: tensorwise scaling)";
  }
  job.Set("fp8.recipe", name, source);
  if (gather != nullptr && gather->value == "true")
    job.Set("fp8.param_gather", "true", gather->source);
  return OkStatus();
}

// The pipeline's micro batch. torchtitan (pytorch/torchtitan@6404b932,
// torchtitan/config/job_config.py, Parallelism.pipeline_parallel_microbatch_size: int = 1): "The
// size of each pipeline parallel microbatch (default 1). This value is used to compute the total
// number of microbatches by dividing local_batch_size with pipeline_parallel_microbatch_size."
// Without pipelining the key is not read and the local batch is the micro batch.
Status MapTitanMicrobatch(Settings& s, JobBuilder& job, int64_t pp, int64_t local,
                          const std::string& local_key) {
  const std::string key = "parallelism.pipeline_parallel_microbatch_size";
  if (pp <= 1) {
    if (s.Has(key)) s.Ignore(key);
    return OkStatus();
  }
  // The 2024 schema ([experimental], pytorch/torchtitan@68064737,
  // torchtitan/parallelisms/pipelining_utils.py, build_pipeline_schedule) counted micro batches
  // instead: experimental.pipeline_parallel_microbatches, None meaning one per pipeline stage.
  const std::string old_key = "experimental.pipeline_parallel_microbatches";
  if (!s.Has(key) && (s.Has(old_key) || s.Has("experimental.pipeline_parallel_degree"))) {
    const SourcedValue* v = s.Has(old_key) ? s.Use(old_key) : nullptr;
    STRATA_ASSIGN_OR_RETURN(int64_t count, IntSetting(s, old_key, pp));
    if (count <= 0 || local % count != 0) {
      return InvalidInput(fmt::format("{} = {} does not divide into {} pipeline micro batches",
                                      local_key, local, count))
          .InField(old_key);
    }
    job.Set("batch.micro_batch", std::to_string(local / count),
            fmt::format(
                "{} / {} micro batches ({})", local_key, count,
                v != nullptr ? v->source : "torchtitan's 2024 default: one per pipeline stage"));
    return OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(int64_t micro,
                          IntField(s, job, key, "batch.micro_batch", 1,
                                   "torchtitan's pipeline_parallel_microbatch_size defaults to 1: "
                                   "the local batch is split into micro batches of 1"));
  if (micro <= 0 || local % micro != 0) {
    return InvalidInput(fmt::format("{} = {} does not divide {} = {} into pipeline micro batches",
                                    key, micro, local_key, local))
        .InField(key)
        .WithHint(
            "torchtitan runs local_batch_size / pipeline_parallel_microbatch_size micro "
            "batches per step");
  }
  return OkStatus();
}

Status MapTorchtitan(Settings& s, MapContext& ctx, JobBuilder& job) {
  RenameOldTitanKeys(s);
  if (ctx.options->model.empty()) {
    const SourcedValue* name = s.Use("model.name");
    const SourcedValue* flavor = s.Use("model.flavor");
    if (name == nullptr || flavor == nullptr) {
      return InvalidInput("the TOML has no [model] name and flavor")
          .WithHint("pass --model with a catalog name or a config.json path");
    }
    // torchtitan's model registry -> strata's catalog (data/models/torchtitan_flavors.yaml).
    const std::string key = name->value + "/" + flavor->value;
    STRATA_ASSIGN_OR_RETURN(std::string model,
                            TitanCatalogModel(name->value, flavor->value, name->source));
    job.Set("model", model,
            fmt::format("{} + {} ('{}': same architecture)", name->source, flavor->source, key));
  } else {
    job.Set("model", ctx.options->model, "--model of strata import");
  }
  // torch.compile changes the kernels each layer issues (data/frameworks.yaml); older
  // torchtitan spelled it [training] compile, newer [compile] enable.
  for (const char* key : {"compile.enable", "training.compile"}) {
    if (!s.Has(key)) continue;
    const SourcedValue* compile = s.Use(key);
    job.Set("framework.compile", compile->value == "true" ? "true" : "false", compile->source);
  }
  STRATA_ASSIGN_OR_RETURN(int64_t tp, IntField(s, job, "parallelism.tensor_parallel_degree",
                                               "parallel.tp", 1, "torchtitan's default 1"));
  STRATA_ASSIGN_OR_RETURN(int64_t pp, IntField(s, job, "parallelism.pipeline_parallel_degree",
                                               "parallel.pp", 1, "torchtitan's default 1"));
  STRATA_RETURN_IF_ERROR(MapTitanPipeline(s, job, pp));
  STRATA_ASSIGN_OR_RETURN(int64_t cp, IntField(s, job, "parallelism.context_parallel_degree",
                                               "parallel.cp", 1, "torchtitan's default 1"));
  // How the CP ranks exchange K/V: torchtitan passes context_parallel_rotate_method to
  // PyTorch's set_rotate_method (torchtitan v0.2.2 73a0e69 config/job_config.py,
  // context_parallel_rotate_method = "allgather"; distributed/utils.py). PyTorch's
  // _AllGatherRotater gathers every K/V shard once after the first (local) sub-attention;
  // _AllToAllRotater passes one shard to the next rank per step, as a p2p ring does. Written
  // at CP 1 too: the CP layouts `plan` tries run the same rotation.
  {
    const SourcedValue* rotate = s.Use("parallelism.context_parallel_rotate_method");
    const std::string method = rotate ? rotate->value : "allgather";
    if (method != "allgather" && method != "alltoall") {
      return InvalidInput("parallelism.context_parallel_rotate_method '" + method +
                          "': expected allgather or alltoall")
          .WithHint("read from " + rotate->source);
    }
    const char* type = method == "allgather" ? "all_gather" : "p2p";
    if (rotate) {
      job.Set("parallel.cp_comm_type", type, rotate->source);
    } else {
      job.Default("parallel.cp_comm_type", type,
                  "torchtitan's context_parallel_rotate_method defaults to allgather");
    }
  }
  STRATA_RETURN_IF_ERROR(IntField(s, job, "parallelism.expert_parallel_degree", "parallel.ep", 1,
                                  "torchtitan's default 1"));
  STRATA_RETURN_IF_ERROR(IntField(s, job, "parallelism.expert_tensor_parallel_degree",
                                  "parallel.etp", 1, "torchtitan's default 1"));
  job.Default("parallel.sequence_parallel", tp > 1 ? "true" : "false",
              tp > 1 ? "torchtitan's TP plan runs the norms sequence-parallel (SequenceParallel)"
                     : "no tensor parallelism (TP 1)");
  STRATA_ASSIGN_OR_RETURN(int64_t replicate,
                          IntSetting(s, "parallelism.data_parallel_replicate_degree", 1));
  STRATA_ASSIGN_OR_RETURN(int64_t shard,
                          IntSetting(s, "parallelism.data_parallel_shard_degree", -1));
  const char* local_key =
      s.Has("training.local_batch_size") ? "training.local_batch_size" : "training.batch_size";
  // Samples per DP rank per step. Without pipelining it is one micro batch; with it, torchtitan
  // splits it into local / pipeline_parallel_microbatch_size micro batches.
  STRATA_ASSIGN_OR_RETURN(int64_t local,
                          IntField(s, job, local_key, pp > 1 ? "" : "batch.micro_batch", 8,
                                   "torchtitan's local batch size defaults to 8"));
  STRATA_RETURN_IF_ERROR(MapTitanMicrobatch(s, job, pp, local, local_key));
  STRATA_ASSIGN_OR_RETURN(int64_t global, IntSetting(s, "training.global_batch_size", -1));
  STRATA_RETURN_IF_ERROR(IntField(s, job, "training.seq_len", "sequence.max_tokens", 2048,
                                  "torchtitan's seq_len defaults to 2048"));
  job.Default("sequence.packing", "true",
              "torchtitan's text datasets pack tokens into seq_len samples");
  std::string mode = "selective";
  std::string mode_source;
  if (const SourcedValue* v = s.Use("activation_checkpoint.mode")) {
    mode = v->value;
    mode_source = v->source;
  }
  if (mode != "none" && mode != "selective" && mode != "full") {
    return InvalidInput("activation_checkpoint.mode '" + mode +
                        "': expected none, selective or full")
        .WithHint("read from " + mode_source);
  }
  if (mode_source.empty()) {
    job.Default("recompute.granularity", mode, "torchtitan's activation_checkpoint.mode default");
  } else {
    job.Set("recompute.granularity", mode, mode_source);
  }
  if (mode == "full") {
    job.Default("recompute.method", "uniform", "torchtitan checkpoints every block");
    job.Default("recompute.num_layers", "1", "torchtitan checkpoints every block");
  }
  if (mode == "selective") {
    // torchtitan's ActivationCheckpoint.selective_ac_option: "op" or a layer frequency, "2" by
    // default (torchtitan/config/job_config.py); not megatron-core's module list.
    if (const SourcedValue* v = s.Use("activation_checkpoint.selective_ac_option")) {
      job.Set("recompute.selective_ac_option", v->value, v->source);
    } else {
      job.Default("recompute.selective_ac_option", "2",
                  "torchtitan's selective_ac_option default: every 2nd block in full AC");
    }
  } else {
    s.Ignore("activation_checkpoint.selective_ac_option");
  }
  std::string param_dtype = "bf16", reduce_dtype = "fp32";
  std::string param_source, reduce_source;  // the file's line, empty for torchtitan's default
  if (auto v = s.String("training.mixed_precision_param")) {
    param_dtype = DtypeName(*v);
    param_source = s.Use("training.mixed_precision_param")->source;
  }
  if (auto v = s.String("training.mixed_precision_reduce")) {
    reduce_dtype = DtypeName(*v);
    reduce_source = s.Use("training.mixed_precision_reduce")->source;
  }
  // torchtitan's training.dtype (default "float32"): "bfloat16" builds the model in bf16 and
  // "will put all parameters, gradients, and optimizer states in bfloat16, without an extra copy
  // of fp32 weights" (pytorch/torchtitan@6404b932421f5ce382e7dac5ad381b2c17b1373c:
  // torchtitan/config/job_config.py, Training.dtype): FSDP2's sharded parameters, their
  // gradients and AdamW's moments (zeros_like(p)) are all bf16.
  std::string full_bf16_source;
  if (auto v = s.String("training.dtype")) {
    const std::string dtype = DtypeName(*v);
    const std::string src = s.Use("training.dtype")->source;
    if (dtype == "bf16") {
      full_bf16_source = src + ": full bf16 training, no fp32 copy of the weights";
    } else if (dtype != "fp32") {
      return InvalidInput("training.dtype '" + *v + "': torchtitan accepts bfloat16 or float32")
          .InField("training.dtype")
          .WithHint("read from " + src);
    }
  }
  // optimizer.early_step_in_backward: torchtitan's OptimizersInBackwardContainer steps each
  // parameter in a post-accumulate-grad hook and zeroes its gradient there
  // (torchtitan/components/optimizer.py), so the sharded gradients are never all live at once.
  if (const SourcedValue* v = s.Use("optimizer.early_step_in_backward");
      v != nullptr && (v->value == "true" || v->value == "True")) {
    job.Note(fmt::format(
        "optimizer.early_step_in_backward = {} ({}): torchtitan steps each parameter in the "
        "backward pass and frees its gradient there; strata keeps the whole gradient shard "
        "live until the step, so the memory is overstated by up to that shard",
        v->value, v->source));
  }
  if (const SourcedValue* v = s.Use("optimizer.name")) {
    if (v->value != "AdamW" && v->value != "Adam") {
      return InvalidInput("optimizer '" + v->value + "': strata models Adam's states only")
          .WithHint("read from " + v->source);
    }
    job.Set("optimizer.name", v->value == "AdamW" ? "adamw" : "adam", v->source);
  } else {
    job.Default("optimizer.name", "adamw", "torchtitan's optimizer defaults to AdamW");
  }
  if (!full_bf16_source.empty()) {
    job.Set("optimizer.moments", "bf16", full_bf16_source);
  } else {
    job.Default("optimizer.moments", "fp32", "AdamW states in the parameters' fp32");
  }
  job.Default("loss.cross_entropy", "native",
              "torchtitan's cross_entropy_loss casts the logits to fp32 before the loss");
  job.Default("frozen", "[]", "torchtitan trains every parameter");
  job.Default("mtp", "false", "no multi-token prediction in torchtitan's llama3");
  // Read before FinishCommon lists the settings left unused.
  STRATA_RETURN_IF_ERROR(MapTitanAsyncCheckpoint(s, job));
  STRATA_RETURN_IF_ERROR(FinishCommon(s, ctx, job, tp * pp * cp));
  STRATA_ASSIGN_OR_RETURN(const int64_t dp, job.GetPositiveInt("parallel.dp"));
  if (shard > 0 && replicate * shard != dp) {
    return InvalidInput(fmt::format("data_parallel_replicate_degree x data_parallel_shard_degree "
                                    "= {} x {} but the world gives DP = {}",
                                    replicate, shard, dp))
        .WithHint("check --nodes and --gpus-per-node");
  }
  // FSDP2 shards parameters, gradients and optimizer states over the shard degree (-1: every
  // DP rank not taken by replication); with a replicate degree it is HSDP.
  const int64_t shard_degree = shard > 0 ? shard : dp / replicate;
  // torchtitan's maybe_enable_amp (torchtitan/distributed/utils.py): with FSDP (a shard degree
  // or CP above 1, ParallelDims.fsdp_enabled) fully_shard casts per unit; without it TP or PP
  // train in fp32 ("Mixed precision training is disabled"); DDP or one GPU autocast to
  // mixed_precision_param.
  if (!full_bf16_source.empty()) {
    for (const char* key : {"precision.params", "precision.grads", "optimizer.master_weights"}) {
      job.Set(key, "bf16", full_bf16_source);
    }
    if (reduce_dtype == "fp32" && !reduce_source.empty()) {
      job.Note(
          fmt::format("training.mixed_precision_reduce = float32 ({}): FSDP2 reduces in "
                      "fp32 but keeps the gradient shard in the bf16 parameters' dtype; "
                      "strata prices the reduction in bf16",
                      reduce_source));
    }
  } else if (shard_degree <= 1 && cp <= 1 && (tp > 1 || pp > 1)) {
    const std::string why =
        "torchtitan disables mixed precision with TP or PP and no FSDP "
        "(maybe_enable_amp): the model trains in fp32";
    job.Derive("precision.params", "fp32", why);
    job.Derive("precision.grads", "fp32", why);
    job.Derive("optimizer.master_weights", "fp32", why);
  } else {
    // The file's own mixed_precision_param / _reduce carry its line; torchtitan's defaults
    // say so.
    if (!param_source.empty() && !param_dtype.empty()) {
      job.Set("precision.params", param_dtype, param_source);
    } else {
      job.Default("precision.params", "bf16",
                  "FSDP2 mixed precision: training.mixed_precision_param (default bfloat16)");
    }
    if (!reduce_source.empty() && !reduce_dtype.empty()) {
      job.Set("precision.grads", reduce_dtype, reduce_source);
    } else {
      job.Default("precision.grads", "fp32",
                  "FSDP2 reduces gradients in training.mixed_precision_reduce (default float32)");
    }
    job.Default("optimizer.master_weights", "fp32", "FSDP2 keeps the sharded parameters in fp32");
  }
  if (shard_degree > 1) {
    job.Default("optimizer.distributed", "true",
                "FSDP2 shards the optimizer states over data_parallel_shard_degree");
    job.Set("sharding.mode", "fsdp2",
            shard > 0 ? "parallelism.data_parallel_shard_degree"
                      : "default: data_parallel_shard_degree -1 shards over the remaining DP",
            shard > 0 ? FieldOrigin::kFromInput : FieldOrigin::kDefault);
    if (replicate > 1) {
      job.Set("sharding.replicate", std::to_string(replicate),
              "parallelism.data_parallel_replicate_degree");
    }
    // torchtitan resolves the policy per block (pytorch/torchtitan@b5bcd76c,
    // torchtitan/distributed/fsdp.py, get_fsdp_reshard_after_forward_policy): "always" reshards,
    // "never" keeps every block gathered until its backward, and "default" (its default)
    // reshards unless pipeline parallelism is on, to spare a gather per micro batch.
    const SourcedValue* v = s.Use("parallelism.fsdp_reshard_after_forward");
    const std::string policy = v != nullptr ? v->value : "default";
    if (policy != "default" && policy != "always" && policy != "never") {
      return InvalidInput("unknown parallelism.fsdp_reshard_after_forward '" + policy +
                          "'; expected default, always or never")
          .InField("parallelism.fsdp_reshard_after_forward")
          .WithHint(DidYouMeanHint(policy, {"default", "always", "never"}) + "; read from " +
                    v->source);
    }
    const bool reshard = policy == "always" || (policy == "default" && pp <= 1);
    const std::string resolved =
        policy != "default" ? ""
        : pp > 1            ? " (pipeline parallel: blocks kept gathered until their backward)"
                            : " (no pipeline parallelism: blocks resharded after forward)";
    if (v != nullptr) {
      job.Set("sharding.reshard_after_forward", reshard ? "true" : "false", v->source + resolved);
    } else {
      job.Default("sharding.reshard_after_forward", reshard ? "true" : "false",
                  "torchtitan's fsdp_reshard_after_forward default \"default\"" + resolved);
    }
  } else {
    // torchtitan applies FSDP only when the shard degree is above 1 (ParallelDims.fsdp_enabled):
    // with DP 1 (or replication alone) every rank steps a plain, unsharded AdamW.
    job.Derive("sharding.mode", "none",
               "one shard: no FSDP sharding (replicated data parallelism)");
    job.Derive("optimizer.distributed", "false",
               "torchtitan applies FSDP only when the data-parallel shard degree is above 1: an "
               "unsharded AdamW on every rank");
  }
  if (const SourcedValue* v = s.Use("training.enable_cpu_offload"); v && v->value == "true") {
    job.Set("sharding.offload_param", "cpu", v->source);
  }
  STRATA_RETURN_IF_ERROR(MapTitanFp8(s, job));
  if (global > 0) {
    job.Set("batch.global_batch", std::to_string(global), "training.global_batch_size");
  } else {
    if (pp > 1) {
      job.Set("batch.global_batch", std::to_string(local * dp),
              "default: torchtitan's global batch = local batch x DP (no accumulation)",
              FieldOrigin::kDefault);
    } else {
      // Without pipelining the local batch is the micro batch: a micro batch given to strata
      // import derives the global batch again.
      job.DeriveGlobalBatch(local, dp,
                            fmt::format("DP {} (torchtitan's global batch defaults to the local "
                                        "batch x DP, no accumulation)",
                                        dp));
    }
  }
  return OkStatus();
}

// The HF Trainer's save_model under ZeRO-3 (transformers trainer.py) gathers the 16-bit state
// dict and rank 0 writes model.safetensors beside DeepSpeed's global_step files, when the config
// allows the gather (stage3_gather_16bit_weights_on_model_save; DeepSpeed's default false, when
// the Trainer saves DeepSpeed's files alone): checkpoint.save_16bit_model.
// DeepSpeed still reads the flag's older name, stage3_gather_fp16_weights_on_model_save.
Status MapZero3ModelSave(Settings& s, JobBuilder& job) {
  for (const char* key : {"ds.zero_optimization.stage3_gather_16bit_weights_on_model_save",
                          "ds.zero_optimization.stage3_gather_fp16_weights_on_model_save"}) {
    if (!s.Has(key)) continue;
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(key));
    if (on && *on) job.Set("checkpoint.save_16bit_model", "true", source);
  }
  return OkStatus();
}

// TrainingArguments.save_only_model (transformers trainer.py, _save_checkpoint: `if not
// self.args.save_only_model: self._save_optimizer_and_scheduler(output_dir)`, where DeepSpeed's
// save_checkpoint is called): rank 0's model.safetensors alone, checkpoint.optimizer false. Under
// ZeRO-3 without the 16-bit gather save_model itself falls back to DeepSpeed's save_checkpoint,
// optimizer included: the field is left and a note says why.
Status MapSaveOnlyModel(Settings& s, JobBuilder& job, int64_t stage) {
  if (!s.Has("save_only_model")) return OkStatus();
  const std::string source = s.Use("save_only_model")->source;
  STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("save_only_model"));
  if (!on || !*on) return OkStatus();
  if (stage == 3 && !(job.Has("checkpoint.save_16bit_model") &&
                      job.Get("checkpoint.save_16bit_model") == "true")) {
    job.Note(fmt::format(
        "{}: under ZeRO-3 without stage3_gather_16bit_weights_on_model_save the Trainer's "
        "save_model writes DeepSpeed's checkpoint, optimizer partitions included",
        source));
    return OkStatus();
  }
  job.Set("checkpoint.optimizer", "false", source);
  return OkStatus();
}

/// DeepSpeed's overlap_comm: whether its ZeRO collectives run on their own streams. Its default is
/// true under ZeRO-3 and false under ZeRO-1/2 (deepspeed/runtime/zero/config.py,
/// overlap_comm_valid: `values["stage"] == ZeroStageEnum.weights`). Every stage carries it as
/// sharding.overlap_comm; ZeRO-1/2's overlap.grad_reduce is derived from it when the job is
/// resolved (job/resolved_job.cc), so it is not written twice.
Status MapDeepSpeedOverlap(Settings& s, JobBuilder& job, int64_t stage) {
  const std::string key = "ds.zero_optimization.overlap_comm";
  const std::vector<std::string> fields = {"sharding.overlap_comm"};
  if (s.Has(key)) {
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(key));
    for (const std::string& field : fields) job.Set(field, *on ? "true" : "false", source);
    return OkStatus();
  }
  for (const std::string& field : fields) {
    job.Default(field, stage == 3 ? "true" : "false",
                fmt::format("DeepSpeed's overlap_comm defaults to {} under ZeRO-{}",
                            stage == 3 ? "true" : "false", stage));
  }
  return OkStatus();
}

/// ZeRO-3's prefetch as a fraction of a layer (sharding.prefetch_layers). DeepSpeed prefetches
/// stage3_prefetch_bucket_size parameters ahead (its default 50,000,000; "auto" is filled by the
/// HF Trainer with 0.9 x hidden^2). An MoE block is fetched whole (transformers and ms-swift mark
/// it a ZeRO-3 leaf module, ms-swift in deepspeed_set_z3_leaf_modules), so the prefetch reaches
/// bucket / that block of the next layer; a dense layer's modules are fetched one by one, and the
/// default of one layer ahead stays.
Status MapZero3Prefetch(Settings& s, JobBuilder& job) {
  const std::string key = "ds.zero_optimization.stage3_prefetch_bucket_size";
  auto model = LoadModelConfig(job.Get("model"));
  if (!model.ok()) {
    if (s.Has(key)) s.Use(key);
    return OkStatus();  // a model strata cannot load is reported where the job is resolved
  }
  const auto hidden = static_cast<double>(model->hidden_size);
  double bucket = 5e7;
  std::string why = "DeepSpeed's default stage3_prefetch_bucket_size 50,000,000";
  if (const SourcedValue* v = s.Use(key)) {
    if (v->value == "auto") {
      bucket = std::floor(0.9 * hidden * hidden);
      why = fmt::format(
          "{} = auto, which the HF Trainer fills with 0.9 x hidden^2 = 0.9 x {}^2 = "
          "{}",
          v->source, model->hidden_size, GroupDigits(bucket));
    } else {
      // Python's number literal (json and the HF Trainer's dict): not strtod's hex, inf or
      // leading spaces.
      const std::optional<double> parsed = ParsePythonNumber(v->value);
      bucket = parsed.value_or(-1);
      if (!parsed.has_value() || !(bucket >= 0) || bucket > 1e15) {
        return InvalidInput(fmt::format("{} = '{}': expected a number of parameters or \"auto\"",
                                        v->source, v->value))
            .InField(key);
      }
      why = fmt::format("{} = {}", v->source, GroupDigits(bucket));
    }
  }
  double block = 0;
  for (const LayerParams& layer : CountParams(*model).layers) {
    const double moe = static_cast<double>(layer.modules[ModuleKind::kRoutedExperts] +
                                           layer.modules[ModuleKind::kSharedExperts] +
                                           layer.modules[ModuleKind::kRouter]);
    block = std::max(block, moe);
  }
  if (block <= 0) {
    job.NamedDefault(fmt::format(
        "sharding.prefetch_layers 1: a dense model's modules are fetched one by one, the next "
        "ones within the prefetch bucket ({})",
        why));
    return OkStatus();
  }
  const double layers = std::min(1.0, bucket / block);
  job.Set("sharding.prefetch_layers", fmt::format("{:.4g}", layers),
          fmt::format("{} / the MoE block fetched whole ({} parameters: routed and shared "
                      "experts and the router) = {:.4g} of a layer",
                      why, GroupDigits(block), layers));
  return OkStatus();
}

/// DeepSpeed's reduce buckets (sharding.reduce_bucket_elements, sharding.overlap_comm):
/// stage_1_and_2.py allocates one bucket of reduce_bucket_size elements per backward with
/// contiguous_gradients (DeepSpeed's default true), two with overlap_comm (its default false
/// below stage 3); stage3.py one at the engine's start, kept for the run. "auto" is filled by
/// the framework that writes the config, as
/// data/frameworks.yaml's `reduce_bucket: {auto: hidden^2}` says (the HF Trainer:
/// transformers integrations/deepspeed.py, trainer_config_finalize: reduce_bucket_size =
/// hidden_size * hidden_size), for the chain of the imported framework (the HF Trainer's when
/// the input names none). Left out, the framework's own default applies when the job resolves.
Status MapReduceBuckets(Settings& s, JobBuilder& job, int64_t stage) {
  const std::string key = "ds.zero_optimization.reduce_bucket_size";
  if (const SourcedValue* v = s.Use(key)) {
    if (v->value == "auto") {
      auto model = LoadModelConfig(job.Get("model"));
      auto engines = LoadFrameworkEngines();
      if (model.ok() && engines.ok()) {
        FrameworkSpec framework;
        framework.name = job.Has("framework.name") ? job.Get("framework.name") : "hf-trainer";
        framework.given = true;
        const ShardingMode mode = stage == 1   ? ShardingMode::kZero1
                                  : stage == 2 ? ShardingMode::kZero2
                                               : ShardingMode::kZero3;
        const std::optional<ReduceBucketAuto> filled =
            ResolveReduceBucketAuto(*engines, framework, mode, model->hidden_size);
        if (!filled) {
          return InvalidInput(fmt::format("{} = auto: no framework on {}'s chain fills \"auto\" "
                                          "(DeepSpeed alone takes only a number)",
                                          v->source, framework.name))
              .InField(key)
              .WithHint("write the number of elements");
        }
        job.Set("sharding.reduce_bucket_elements", fmt::format("{:.0f}", filled->elements),
                fmt::format("{} = auto, which {} fills with hidden^2 = {}^2", v->source,
                            filled->filled_by, model->hidden_size));
      }
    } else {
      const std::optional<double> parsed = ParsePythonNumber(v->value);
      if (!parsed.has_value() || !(*parsed >= 0) || *parsed > 1e15) {
        return InvalidInput(fmt::format("{} = '{}': expected a number of elements or \"auto\"",
                                        v->source, v->value))
            .InField(key);
      }
      job.Set("sharding.reduce_bucket_elements", fmt::format("{:.0f}", *parsed), v->source);
    }
  }
  // Without contiguous gradients nothing is copied into a bucket: no bucket buffers.
  const std::string contiguous = "ds.zero_optimization.contiguous_gradients";
  if (s.Has(contiguous)) {
    const std::string source = s.Use(contiguous)->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(contiguous));
    if (on && !*on) {
      job.Set("sharding.reduce_bucket_elements", "0",
              fmt::format("{}: no contiguous reduce bucket is allocated", source));
    }
  }
  return OkStatus();
}

// The gradient dtype DeepSpeed keeps (engine.get_data_types): data_types.grad_accum_dtype when
// given, else the model's dtype under ZeRO; without ZeRO, bf16 gradients accumulate in fp32
// (BF16_Optimizer) and fp16 ones stay fp16 (FP16_Optimizer). Without DeepSpeed, torch AMP keeps
// fp32 gradients.
Status MapDeepSpeedGrads(Settings& s, JobBuilder& job, const std::string& params,
                         std::optional<int64_t> stage) {
  if (const SourcedValue* v = s.Use("ds.data_types.grad_accum_dtype")) {
    const std::string dtype = v->value == "fp32" || v->value == "float32"    ? "fp32"
                              : v->value == "bf16" || v->value == "bfloat16" ? "bf16"
                              : v->value == "fp16" || v->value == "float16"  ? "fp16"
                                                                             : "";
    if (dtype.empty()) {
      return InvalidInput("unknown grad_accum_dtype '" + v->value +
                          "'; expected fp32, bf16 or fp16")
          .InField("data_types.grad_accum_dtype")
          .WithHint("read from " + v->source);
    }
    job.Set("precision.grads", dtype, v->source);
    return OkStatus();
  }
  if (params == "fp32") {
    job.Default("precision.grads", "fp32", "fp32 training: fp32 gradients");
  } else if (!stage) {
    job.Default("precision.grads", "fp32",
                "no DeepSpeed ZeRO stage given: torch AMP keeps fp32 gradients");
  } else if (*stage >= 1) {
    job.Default("precision.grads", params,
                fmt::format("DeepSpeed's grad_accum_dtype defaults to the model dtype ({}) "
                            "under ZeRO",
                            params));
  } else if (params == "bf16") {
    job.Default("precision.grads", "fp32",
                "without ZeRO, DeepSpeed's BF16_Optimizer accumulates bf16 gradients in fp32");
  } else {
    job.Default("precision.grads", params,
                "without ZeRO, DeepSpeed's FP16_Optimizer keeps the fp16 gradients");
  }
  return OkStatus();
}

// A model loaded in bfloat16 (ms-swift always loads in its training dtype; the HF Trainer when
// given --torch_dtype bfloat16) and trained without DeepSpeed or FSDP keeps no fp32 copy: the
// Trainer autocasts but never upcasts the parameters, so their gradients are bf16 and torch's
// AdamW keeps its moments in the parameters' dtype (torch/optim/adamw.py: zeros_like(p)).
// DeepSpeed keeps fp32 master weights, and Accelerate upcasts to fp32 under FSDP. Adapters
// are set apart: PEFT casts them to fp32. fp16 weights cannot train this way (the GradScaler
// refuses fp16 gradients), so only bf16 is read so.
// Whether the parameters themselves are bf16 with no fp32 copy; "" when they are not, else why.
std::string Pure16BitReason(Settings& s, const MapContext& ctx, const JobBuilder& job,
                            const std::string& params, bool zero_stage) {
  if (params != "bf16" || job.Has("adapter.kind")) return "";
  const std::optional<std::string> torch_dtype = s.String("torch_dtype");
  const bool loaded_bf16 = ctx.ms_swift || (torch_dtype && DtypeName(*torch_dtype) == "bf16");
  const std::optional<std::string> accelerate = s.String("accelerate.distributed_type");
  const bool deepspeed =
      zero_stage || s.Has("deepspeed") || (accelerate && *accelerate == "DEEPSPEED");
  const bool fsdp = s.Has("fsdp") || job.Get("sharding.mode").starts_with("fsdp");
  if (!loaded_bf16 || deepspeed || fsdp) return "";
  return fmt::format(
      "the model is loaded in bf16 ({}) and trained without DeepSpeed or FSDP: "
      "the torch optimizer steps the bf16 parameters themselves",
      ctx.ms_swift ? "ms-swift" : "--torch_dtype");
}

// TrainingArguments.optim (transformers' OptimizerNames): torch's AdamW by default; the
// bitsandbytes 8-bit AdamW variants are strata's adam8bit; any other optimizer is not modelled
// and is named as such.
void MapHfOptimizer(Settings& s, JobBuilder& job) {
  const SourcedValue* v = s.Use("optim");
  s.Ignore("ds.optimizer.type");
  const std::string name = v != nullptr ? v->value : "adamw_torch";
  static const std::vector<std::string> kTorchAdamw = {"adamw_torch", "adamw_torch_fused",
                                                       "adamw_hf", "adamw_apex_fused"};
  static const std::vector<std::string> kEightBit = {"adamw_bnb_8bit", "adamw_8bit",
                                                     "paged_adamw_8bit", "adam8bit"};
  if (v == nullptr) {
    job.Default("optimizer.name", "adamw", "TrainingArguments.optim defaults to adamw_torch");
    return;
  }
  if (std::find(kEightBit.begin(), kEightBit.end(), name) != kEightBit.end()) {
    job.Set("optimizer.name", "adam8bit", fmt::format("{} {}", v->source, name));
    return;
  }
  job.Set("optimizer.name", "adamw", fmt::format("{} {}", v->source, name));
  if (std::find(kTorchAdamw.begin(), kTorchAdamw.end(), name) == kTorchAdamw.end()) {
    job.Note(
        fmt::format("{} {}: strata models AdamW's states for this optimizer", v->source, name));
  }
}

// TRL's SFTConfig (huggingface/trl trl/trainer/sft_config.py) changes three of
// TrainingArguments' defaults that size a job: max_length 1024, gradient checkpointing on, bf16
// unless fp16 (since mid-2025: trl a222aeb turned checkpointing on, 2025-08; releases before
// kept TrainingArguments' own).
constexpr const char* kTrlSftConfig = "TRL's SFTConfig";

// Liger's kernels as the HF Trainer and ms-swift apply them (use_liger_kernel: Liger's own
// defaults) include its fused linear cross entropy, which never holds the fp32 logits: counted
// as the fused loss. LLaMA-Factory's enable_liger_kernel keeps that default for the stages pt and
// sft only; where the stage needs the logits (rm, ppo, dpo, kto) it turns the fused loss off
// (hiyouga/LLaMA-Factory src/llamafactory/model/loader.py: require_logits = stage not in
// [pt, sft]; model/model_utils/liger_kernel.py: fused_linear_cross_entropy False), and the
// trainer computes its loss from the full logits.
Status MapLigerLoss(Settings& s, const MapContext& ctx, JobBuilder& job) {
  for (const char* key : {"use_liger_kernel", "enable_liger_kernel"}) {
    if (!s.Has(key)) continue;
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> on, s.Bool(key));
    if (!*on) break;
    const std::string& stage = ctx.llamafactory_stage;
    if (!stage.empty() && stage != "pt" && stage != "sft") {
      job.Set("loss.cross_entropy", "native",
              fmt::format("{} with stage {}: LLaMA-Factory turns Liger's fused linear cross "
                          "entropy off where the stage needs the logits (pt and sft keep it)",
                          source, stage));
    } else {
      job.Set("loss.cross_entropy", "fused", source + " (Liger's fused linear cross entropy)");
    }
    return OkStatus();
  }
  job.Default("loss.cross_entropy", "native",
              "transformers upcasts the logits to fp32 for the loss");
  return OkStatus();
}

Status MapHfDeepSpeed(Settings& s, MapContext& ctx, JobBuilder& job) {
  if (ctx.options->model.empty() && !s.Has("model_name_or_path")) {
    if (const SourcedValue* id = s.Use("swift_model_id")) {
      return InvalidInput(fmt::format("ms-swift 1.x names the model by its own registry id '{}' "
                                      "({}), not by a Hub id or a config.json strata can read",
                                      id->value, id->source))
          .WithHint("pass --model with the checkpoint's config.json (or a catalog name)");
    }
  }
  STRATA_RETURN_IF_ERROR(SetModel(s, ctx, job, "model_name_or_path"));
  if (const SourcedValue* id = s.Use("swift_model_id")) {
    job.Note(
        fmt::format("{} '{}': ms-swift 1.x's registry id of the model", id->source, id->value));
  }
  STRATA_RETURN_IF_ERROR(MapAdapter(s, ctx, job));  // TRL's use_peft, LLaMA-Factory's lora
  NoteTuningMode(s, job);  // ms-swift's train_type, LLaMA-Factory's other finetuning_types
  STRATA_RETURN_IF_ERROR(MapAccelerateLaunch(s, job));  // cluster, precision, ZeRO plugin
  const bool accelerate = s.Has("accelerate.distributed_type");
  for (const char* key :
       {"parallel.tp", "parallel.pp", "parallel.cp", "parallel.ep", "parallel.etp"}) {
    job.Default(key, "1",
                accelerate ? "the HF Trainer under Accelerate (DDP, FSDP or DeepSpeed ZeRO) is "
                             "data parallelism only"
                           : "DeepSpeed ZeRO with the HF Trainer is data parallelism only");
  }
  job.Default("parallel.sequence_parallel", "false", "no tensor parallelism");
  auto ds_int = [&](const char* key) -> Result<std::optional<int64_t>> {
    const SourcedValue* v = s.Use(key);
    if (v == nullptr || v->value == "auto") return std::optional<int64_t>();
    return s.Int(key);
  };
  if (s.Has("per_device_train_batch_size")) {
    STRATA_RETURN_IF_ERROR(
        IntField(s, job, "per_device_train_batch_size", "batch.micro_batch", 8, ""));
  } else {
    STRATA_ASSIGN_OR_RETURN(auto ds, ds_int("ds.train_micro_batch_size_per_gpu"));
    if (ds) {
      job.Set("batch.micro_batch", std::to_string(*ds), "ds: train_micro_batch_size_per_gpu");
    } else if (ctx.ms_swift) {
      // ms-swift's TrainArgumentsMixin: per_device_train_batch_size: int = 1 (below).
      job.Default("batch.micro_batch", "1", "ms-swift's per_device_train_batch_size defaults to 1");
    } else {
      job.Default("batch.micro_batch", "8",
                  "TrainingArguments.per_device_train_batch_size defaults to 8");
    }
  }
  int64_t accumulation = 1;
  std::string accumulation_source = "TrainingArguments.gradient_accumulation_steps defaults to 1";
  // ms-swift fills a missing --gradient_accumulation_steps for a total batch of 16
  // (modelscope/ms-swift@7b709960f24895212b7df92976d42b7baa633fa0:swift/trainers/arguments.py,
  // TrainArgumentsMixin.__post_init__: max(1, math.ceil(16 / per_device_train_batch_size /
  // world_size)), world_size = get_dist_setting()[2]; ms-swift 2.x's SftArguments had the same
  // rule): computed below, once the world is known.
  bool swift_accumulation = false;
  if (s.Has("gradient_accumulation_steps")) {
    accumulation_source = s.Use("gradient_accumulation_steps")->source;
    STRATA_ASSIGN_OR_RETURN(accumulation, IntSetting(s, "gradient_accumulation_steps", 1));
  } else if (ctx.ms_swift) {
    swift_accumulation = true;
  } else {
    STRATA_ASSIGN_OR_RETURN(auto ds, ds_int("ds.gradient_accumulation_steps"));
    if (ds) {
      accumulation = *ds;
      accumulation_source = "ds: gradient_accumulation_steps";
    }
  }
  std::string len_key;
  for (const char* key : {"max_seq_length", "max_length", "model_max_length", "cutoff_len",
                          "block_size", "seq_length", "max_seq_len"}) {
    if (s.Has(key)) {
      len_key = key;
      break;
    }
  }
  // The training script's own default length is in its Python, which strata does not read:
  // without a length argument, `--set sequence.max_tokens=N` gives it.
  std::string set_length;
  for (const std::string& o : ctx.options->overrides) {
    if (o.rfind("sequence.max_tokens=", 0) == 0) set_length = o.substr(o.find('=') + 1);
  }
  if (len_key.empty() && set_length.empty() && ctx.trl_sft) {
    job.Default("sequence.max_tokens", "1024", std::string(kTrlSftConfig) + ".max_length is 1024");
  } else if (len_key.empty() && set_length.empty()) {
    return InvalidInput(
               "no sequence length in the arguments (max_seq_length, max_length, "
               "model_max_length, cutoff_len or block_size)")
        .WithHint(
            "strata sizes activations for the longest sample; add one of them, or give it "
            "with --set sequence.max_tokens=N");
  }
  if (len_key.empty() && set_length.empty()) {
    // TRL's default length, set above.
  } else if (len_key.empty()) {
    job.Set("sequence.max_tokens", set_length,
            "--set sequence.max_tokens (the arguments give no length)");
  } else {
    STRATA_RETURN_IF_ERROR(IntField(s, job, len_key, "sequence.max_tokens", 0, ""));
  }
  if (s.Has("packing")) {
    const std::string src = s.Use("packing")->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("packing"));
    job.Set("sequence.packing", *v ? "true" : "false", src);
  } else {
    job.Default("sequence.packing", "false",
                "the HF Trainer pads each batch to its longest sample");
  }
  if (ctx.ms_swift) {
    // ms-swift's Command-line-parameters (modelscope/ms-swift@3602360): "padding_free: Flattens
    // data within a batch to avoid padding ... Default is `False`".
    STRATA_RETURN_IF_ERROR(
        NoteUnpaddedSamples(s, job, false, "ms-swift's padding_free defaults to false"));
  }
  // transformers' attention: "eager" writes the S x S scores to HBM (attention.kernel unfused);
  // sdpa, flash_attention_2/3 and ms-swift's flash_attn never do. Unnamed: transformers picks
  // sdpa, the job's default (flash).
  for (const char* key : {"attn_impl", "attn_implementation"}) {
    if (const SourcedValue* v = s.Use(key)) {
      job.Set("attention.kernel", v->value == "eager" ? "unfused" : "flash",
              fmt::format("{} {}", v->source, v->value));
      break;
    }
  }
  // ms-swift turns gradient checkpointing on unless told otherwise (its command-line docs:
  // "gradient_checkpointing: ... SWIFT defaults to True"); the HF Trainer leaves it off.
  // TRL's SFTConfig turns it on too ("gradient_checkpointing: Defaults to True instead of
  // False").
  bool checkpointing = ctx.ms_swift || ctx.trl_sft;
  std::string ckpt_source;
  if (s.Has("gradient_checkpointing")) {
    ckpt_source = s.Use("gradient_checkpointing")->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("gradient_checkpointing"));
    checkpointing = *v;
  }
  if (checkpointing) {
    if (ckpt_source.empty()) {
      job.Default("recompute.granularity", "full",
                  ctx.ms_swift
                      ? "ms-swift's gradient_checkpointing defaults to true"
                      : std::string(kTrlSftConfig) + ".gradient_checkpointing defaults to true");
    } else {
      job.Set("recompute.granularity", "full", ckpt_source);
    }
    job.Default("recompute.method", "uniform", "HF gradient checkpointing wraps every layer");
    job.Default("recompute.num_layers", "1", "HF gradient checkpointing wraps every layer");
  } else if (!ckpt_source.empty()) {
    job.Set("recompute.granularity", "none", ckpt_source);
  } else {
    job.Default("recompute.granularity", "none", "gradient_checkpointing defaults to false");
  }
  std::string params = "fp32";
  std::string params_source = "TrainingArguments trains in fp32 unless --bf16 or --fp16";
  for (const auto& [key, dtype] : {std::pair<const char*, const char*>{"bf16", "bf16"},
                                   {"fp16", "fp16"},
                                   {"ds.bf16.enabled", "bf16"},
                                   {"ds.fp16.enabled", "fp16"}}) {
    if (!s.Has(key)) continue;
    const SourcedValue* raw = s.Use(key);
    if (raw->value == "auto") continue;
    const std::string src = raw->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool(key));
    if (*v) {
      params = dtype;
      params_source = src;
      break;
    }
  }
  if (params_source.starts_with("TrainingArguments")) {
    if (auto v = s.String("torch_dtype"); v && !DtypeName(*v).empty()) {
      params = DtypeName(*v);
      params_source = "--torch_dtype " + *v;
    }
  }
  // ms-swift trains in the dtype it loads the model in (ModelArguments._init_torch_dtype:
  // --torch_dtype, else --bf16 / --fp16, else the model's): the checkpoint's config.json
  // torch_dtype when it is float16 or bfloat16, else bfloat16 on a GPU with bf16 (every GPU of
  // strata's catalog), from modelscope/ms-swift@0101e63 swift/llm/model/register.py
  // get_default_torch_dtype. Not the HF Trainer's fp32.
  if (params_source.starts_with("TrainingArguments") && ctx.ms_swift) {
    STRATA_ASSIGN_OR_RETURN(ModelConfig model, LoadModelConfig(job.Get("model")));
    const bool fp16 = DtypeName(model.dtype) == "fp16";
    params = fp16 ? "fp16" : "bf16";
    params_source =
        model.dtype.empty() ? std::string(
                                  "ms-swift loads the model in bfloat16 on a GPU with bf16 (the "
                                  "config.json gives no dtype)")
        : fp16 || DtypeName(model.dtype) == "bf16"
            ? fmt::format("ms-swift loads the model in its config.json dtype ({})", model.dtype)
            : fmt::format(
                  "ms-swift loads the model in bfloat16 on a GPU with bf16 (the "
                  "config.json's {} is neither float16 nor bfloat16)",
                  model.dtype);
  }
  // TRL's SFTConfig: "bf16: Defaults to True if fp16 is not set".
  if (params_source.starts_with("TrainingArguments") && ctx.trl_sft && !s.Has("fp16")) {
    params = "bf16";
    params_source = std::string(kTrlSftConfig) + ".bf16 defaults to true when fp16 is not set";
  }
  if (params_source.starts_with("TrainingArguments") || params_source.starts_with(kTrlSftConfig)) {
    job.Default("precision.params", params, params_source);
  } else {
    job.Set("precision.params", params, params_source);
  }
  STRATA_ASSIGN_OR_RETURN(auto stage_opt, ds_int("ds.zero_optimization.stage"));
  const int64_t stage = stage_opt.value_or(0);
  MapHfOptimizer(s, job);
  const std::string pure16 = Pure16BitReason(s, ctx, job, params, stage_opt.has_value());
  // An Accelerate FSDP config runs no DeepSpeed: its gradients' dtype and the fp32 weights are
  // Accelerate's (MapAccelerateSharding), not DeepSpeed's defaults.
  const bool accelerate_fsdp = s.String("accelerate.distributed_type") == "FSDP";
  if (pure16.empty()) {
    if (!accelerate_fsdp) {
      STRATA_RETURN_IF_ERROR(MapDeepSpeedGrads(s, job, params, stage_opt));
      job.Default("optimizer.master_weights", "fp32", "DeepSpeed keeps fp32 master weights");
    }
    job.Default("optimizer.moments", "fp32", "Adam states in fp32");
  } else {
    job.Derive("precision.grads", "bf16", pure16);
    job.Derive("optimizer.master_weights", "bf16", pure16);
    job.Derive("optimizer.moments", "bf16", pure16);
  }
  const FieldOrigin stage_origin = stage_opt ? FieldOrigin::kFromInput : FieldOrigin::kDefault;
  job.Set("optimizer.distributed", stage >= 1 ? "true" : "false",
          stage_opt ? fmt::format("ds: zero_optimization.stage {}", stage)
                    : "default: no ZeRO stage given (stage 0)",
          stage_origin);
  STRATA_RETURN_IF_ERROR(MapLigerLoss(s, ctx, job));
  job.Default("frozen", "[]",
              job.Has("adapter.kind") ? "no module frozen besides the base the adapters train on"
                                      : "full fine-tuning");
  job.Default("mtp", "false", "the HF Trainer does not build MTP blocks");
  if (stage == 3) STRATA_RETURN_IF_ERROR(MapZero3Prefetch(s, job));
  if (stage == 1 || stage == 2 || (stage == 3 && !accelerate_fsdp)) {
    STRATA_RETURN_IF_ERROR(MapReduceBuckets(s, job, stage));
  }
  if (stage >= 1 && stage <= 3 && !accelerate_fsdp) {
    STRATA_RETURN_IF_ERROR(MapDeepSpeedOverlap(s, job, stage));
  }
  if (stage == 3) STRATA_RETURN_IF_ERROR(MapZero3ModelSave(s, job));
  if (!accelerate_fsdp) STRATA_RETURN_IF_ERROR(MapSaveOnlyModel(s, job, stage));
  if (stage >= 1 && stage <= 3) {
    job.Set("sharding.mode", fmt::format("zero{}", stage),
            stage_opt ? fmt::format("ds: zero_optimization.stage {}", stage)
                      : "default: no ZeRO stage given (stage 0)",
            stage_origin);
  } else {
    job.Set("sharding.mode", "none",
            stage_opt ? fmt::format("ds: zero_optimization.stage {}", stage)
                      : "default: no ZeRO stage given (stage 0)",
            stage_origin);
  }
  for (const auto& [key, field] :
       {std::pair{"ds.zero_optimization.offload_optimizer.device", "sharding.offload_optimizer"},
        std::pair{"ds.zero_optimization.offload_param.device", "sharding.offload_param"}}) {
    if (const SourcedValue* v = s.Use(key); v != nullptr && v->value != "none") {
      job.Set(field, v->value, v->source);
    }
  }
  if (const SourcedValue* timeout = s.Use("ddp_timeout")) {
    // The file's own timeout, not the framework's default.
    job.Note(
        fmt::format("ddp_timeout = {} s ({}): the collective timeout the launch sets (not "
                    "a job field; `strata hang` reads it)",
                    timeout->value, timeout->source));
  } else {
    job.NamedDefault(ctx.ms_swift
                         ? "ddp_timeout = 18000000 s (ms-swift's default, 5000 h): the NCCL "
                           "watchdog practically never fires (not a job field; see `strata hang`)"
                         : "ddp_timeout = 1800 s: TrainingArguments' default collective timeout "
                           "(not a job field; `strata hang` reads it)");
  }
  STRATA_RETURN_IF_ERROR(MapAccelerateSharding(s, job));  // FSDP over the ZeRO default
  STRATA_RETURN_IF_ERROR(FinishCommon(s, ctx, job, 1));
  STRATA_ASSIGN_OR_RETURN(const int64_t dp, job.GetPositiveInt("parallel.dp"));
  STRATA_ASSIGN_OR_RETURN(const int64_t micro, job.GetPositiveInt("batch.micro_batch"));
  if (swift_accumulation) {
    STRATA_ASSIGN_OR_RETURN(const int64_t per_node, job.GetPositiveInt("cluster.gpus_per_node"));
    STRATA_ASSIGN_OR_RETURN(const int64_t nodes, job.GetPositiveInt("cluster.nodes"));
    const int64_t world = per_node * nodes;
    // ceil(16 / micro / world) in integers: the same for positive counts.
    accumulation = std::max<int64_t>(1, (16 + micro * world - 1) / (micro * world));
    accumulation_source = fmt::format(
        "ms-swift's default: max(1, ceil(16 / per_device_train_batch_size {} / world size {}))",
        micro, world);
  }
  job.DeriveGlobalBatch(
      micro, accumulation * dp,
      fmt::format("accumulation {} ({}) x DP {}", accumulation, accumulation_source, dp));
  return OkStatus();
}

// verl's dynamic batch in the actor's job: each DP rank packs its mini batch's samples into
// k = min(samples, ceil(samples x sample tokens / (ppo_max_token_len_per_gpu x CP))) micro
// batches (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/
// seqlen_balancing.py:387; the budget x CP: megatron_actor.py:806, x Ulysses SP:
// dp_actor.py:552). Samples are taken at their caps (prompt + response), as the RL job's means
// are on import, so the partition's parts are whole samples and the largest holds
// ceil(samples / k) of them: one packed row of that many tokens per micro batch, k x DP rows a
// mini batch (`strata rl` prices each pass's own packing at the RL job's means, micro_batch.h).
Status PackVerlMicroBatches(Settings& s, JobBuilder& job, const SourcedValue& dynamic_v,
                            bool megatron, int64_t mini_samples, int64_t sample_tokens,
                            int64_t cp) {
  const std::string key = "actor_rollout_ref.actor.ppo_max_token_len_per_gpu";
  int64_t budget = 0;
  std::string budget_source;
  if (const SourcedValue* v = s.Use(key)) {
    STRATA_ASSIGN_OR_RETURN(budget, IntSetting(s, key, 0));
    budget_source = v->source;
  } else {
    STRATA_ASSIGN_OR_RETURN(VerlDefault d, VerlDefaultOf(megatron, key));
    const std::optional<int64_t> parsed = ParseInt64(d.value);
    if (!parsed) return InvalidInput("data/verl_rl_defaults.yaml: " + key + ": not a number");
    budget = *parsed;
    budget_source = fmt::format("verl's default {} ({})", d.value, d.source);
  }
  if (budget <= 0) {
    return InvalidInput(fmt::format("{} = {}: expected a positive number of tokens", key, budget))
        .InField(key);
  }
  const int64_t micro_budget = budget * std::max<int64_t>(1, cp);
  if (micro_budget < sample_tokens) {
    return InvalidInput(fmt::format("{} {} x CP {} = {} tokens is less than one sample of "
                                    "max_prompt_length + max_response_length = {}: verl refuses "
                                    "it (max_token_len must be greater than the sequence length)",
                                    key, budget, cp, micro_budget, sample_tokens))
        .InField(key)
        .WithHint(
            "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/"
            "seqlen_balancing.py:382");
  }
  STRATA_ASSIGN_OR_RETURN(const int64_t dp, job.GetPositiveInt("parallel.dp"));
  const int64_t samples = (mini_samples + dp - 1) / dp;  // per DP rank
  const int64_t by_tokens = (samples * sample_tokens + micro_budget - 1) / micro_budget;
  const int64_t k = std::max<int64_t>(1, std::min(samples, by_tokens));
  const int64_t largest = (samples + k - 1) / k;
  const std::string how = fmt::format(
      "use_dynamic_bsz {} ({}): {} samples a DP rank x {} tokens in budgets of {} tokens ({}{}) "
      "= {} micro batches, the largest {} sample{}",
      dynamic_v.value, dynamic_v.source, GroupDigits(static_cast<double>(samples)),
      GroupDigits(static_cast<double>(sample_tokens)),
      GroupDigits(static_cast<double>(micro_budget)), budget_source,
      cp > 1 ? fmt::format(" x CP {}", cp) : "", k, largest, largest == 1 ? "" : "s");
  // A packed job gives every row max_tokens, so the rows are sized at the largest micro batch
  // (memory) and counted so that they carry the rank's tokens (time): samples / largest rows,
  // rounded, where verl runs k micro batches of which only some hold `largest` samples. Rows of k
  // would count k x largest samples a rank (80 samples at 2,048 tokens in 33 micro batches of at
  // most 3: 99 samples, 24% too many tokens).
  const int64_t rows = std::max<int64_t>(1, (2 * samples + largest) / (2 * largest));
  job.Derive("batch.micro_batch", "1", "one packed micro batch per row; " + how);
  job.Derive("batch.global_batch", std::to_string(rows * dp),
             fmt::format("{} rows of the largest micro batch x DP {} carry each rank's {} "
                         "samples (verl runs {} micro batches of up to {} sample{})",
                         rows, dp, samples, k, largest, largest == 1 ? "" : "s"));
  job.Derive("sequence.packing", "true", how);
  job.Derive("sequence.max_tokens", std::to_string(largest * sample_tokens),
             fmt::format("the largest micro batch, {} x {} tokens", largest,
                         GroupDigits(static_cast<double>(sample_tokens))));
  job.Derive("sequence.mean_tokens", std::to_string(sample_tokens),
             "each sample at its caps, max_prompt_length + max_response_length");
  return OkStatus();
}

namespace {

constexpr const char* kVerlFsdpConfig = "actor_rollout_ref.actor.fsdp_config.";

bool VerlBoolText(const std::string& v) {
  return v == "True" || v == "true" || v == "False" || v == "false";
}

// The actor's fsdp_config.reshard_after_forward, verl's default true (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/config/engine/fsdp.yaml:21-23,
// verl/workers/config/engine.py:168). Strategy fsdp2 passes it to fully_shard
// (verl/workers/fsdp_workers.py:558): the job's sharding.reshard_after_forward. Strategy fsdp
// (FSDP1) takes false as ShardingStrategy SHARD_GRAD_OP, _HYBRID_SHARD_ZERO2 on a 2-D mesh
// (fsdp_workers.py:108-124 and 520-521, since volcengine/verl@eb0a5535b, 2025-12-25): the
// gradients and optimizer state sharded, the weights whole, sharding.mode zero2, which FSDP1
// runs. FSDP2 also takes an integer (reshard to groups of that size after forward): the job's
// true | false cannot say it, so such a value stays listed, with its reason.
void MapVerlReshard(Settings& s, JobBuilder& job, const std::string& strategy) {
  const std::string key = std::string(kVerlFsdpConfig) + "reshard_after_forward";
  const SourcedValue* v = s.Peek(key);
  if (v == nullptr || (strategy != "fsdp" && strategy != "fsdp2")) return;
  if (!VerlBoolText(v->value)) {
    s.NotModelled(key, fmt::format("FSDP2 reshards to groups of {} GPUs after forward; the job's "
                                   "sharding.reshard_after_forward is true or false only",
                                   v->value));
    return;
  }
  s.Use(key);
  const bool reshard = v->value == "True" || v->value == "true";
  const std::string source = fmt::format("{} = {}", v->source, v->value);
  if (strategy == "fsdp2") {
    job.Set("sharding.reshard_after_forward", reshard ? "true" : "false", source);
  } else if (!reshard) {
    job.Set("sharding.mode", "zero2",
            source +
                " under actor_rollout_ref.actor.strategy = fsdp: FSDP1's SHARD_GRAD_OP "
                "(gradients and optimizer state sharded, weights whole)");
  }
}

// The actor's fsdp_config.offload_policy, verl's default false (engine/fsdp.yaml:18-19): under
// strategy fsdp2, FSDP2's CPUOffloadPolicy(pin_memory=True) on the actor (fsdp_workers.py:
// 547-548), parameters, gradients and optimizer state in host memory and the optimizer step on
// the CPU: the job's sharding.offload_param cpu. Strategy fsdp (FSDP1) and megatron never read it
// (only the fsdp2 branch does): it costs a step nothing there.
void MapVerlOffloadPolicy(Settings& s, JobBuilder& job, const std::string& strategy) {
  const std::string key = std::string(kVerlFsdpConfig) + "offload_policy";
  const SourcedValue* v = s.Peek(key);
  if (v == nullptr) return;
  if (strategy != "fsdp2") {
    s.NoStepCost(key,
                 fmt::format("only FSDP2 reads it (volcengine/verl@b178a3cd:verl/workers/"
                             "fsdp_workers.py:547); the actor's strategy is {}",
                             strategy),
                 UnreadBecause::kStrategyDoesNotRead);
    return;
  }
  if (!VerlBoolText(v->value)) return;  // left listed: not a value verl takes
  s.Use(key);
  if (v->value == "True" || v->value == "true") {
    job.Set("sharding.offload_param", "cpu",
            v->source + " = " + v->value +
                ": FSDP2's CPUOffloadPolicy, parameters, gradients and optimizer state in host "
                "memory");
  }
}

// actor_rollout_ref.actor.use_torch_compile, verl's default true (verl/trainer/config/actor/
// actor.yaml:101-102): the FSDP actor compiles only the entropy-from-logits function with it
// (torch.compile(entropy_from_logits, dynamic=True), verl/workers/actor/dp_actor.py:86-90; the
// sum of squared probabilities too under calculate_sum_pi_squared, 103-107), not the model, so
// it is not the job's framework.compile. That function runs in the old log-prob pass and in an
// update that computes the entropy (dp_actor.py:271-278, 573); strata does not model the
// entropy's work, so the key stays listed with that reason. The megatron actor never reads it
// (megatron_actor.py has no torch.compile): there it costs a step nothing.
void MapVerlTorchCompile(Settings& s, const std::string& strategy) {
  const std::string key = "actor_rollout_ref.actor.use_torch_compile";
  if (!s.Has(key)) return;
  if (strategy == "megatron") {
    s.NoStepCost(key,
                 "the megatron actor never reads it (verl compiles only the FSDP actor's "
                 "entropy function with it: volcengine/verl@b178a3cd:verl/workers/actor/"
                 "dp_actor.py:86-90)",
                 UnreadBecause::kStrategyDoesNotRead);
    return;
  }
  s.NotModelled(key,
                "verl compiles only the entropy-from-logits function with it, not the model "
                "(volcengine/verl@b178a3cd:verl/workers/actor/dp_actor.py:86-90), so it is not "
                "framework.compile; strata does not model the entropy's work in the old log-prob "
                "pass and the update");
}

}  // namespace

Status MapVerl(Settings& s, MapContext& ctx, JobBuilder& job) {
  if (ctx.options->model.empty() && !s.Has("actor_rollout_ref.model.path")) {
    return InvalidInput(
               "the verl launch sets no actor_rollout_ref.model.path: the actor's model is not "
               "known (verl's own default is a placeholder path)")
        .InField("actor_rollout_ref.model.path")
        .WithHint(
            "add actor_rollout_ref.model.path=<HF id or path> to the launch, or pass "
            "--model with a catalog name or a config.json path");
  }
  STRATA_RETURN_IF_ERROR(SetModel(s, ctx, job, "actor_rollout_ref.model.path"));
  if (s.Has("trainer.n_gpus_per_node")) {
    const std::string src = s.Use("trainer.n_gpus_per_node")->source;
    STRATA_ASSIGN_OR_RETURN(int64_t n, IntSetting(s, "trainer.n_gpus_per_node", 8));
    job.Set("cluster.gpus_per_node", std::to_string(n), src);
  }
  if (s.Has("trainer.nnodes")) {
    const std::string src = s.Use("trainer.nnodes")->source;
    STRATA_ASSIGN_OR_RETURN(int64_t n, IntSetting(s, "trainer.nnodes", 1));
    job.Set("cluster.nodes", std::to_string(n), src);
  }
  if (ctx.verl_split) {
    // verl's one-step-off recipe: the rollout's nodes beside the trainer's, one cluster (its
    // config's defaults: rollout.nnodes 1, n_gpus_per_node 8, volcengine/verl@
    // 875788ef6e218d0b98cb64fff919d9fef014f986:recipe/one_step_off_policy/config/
    // one_step_off_ppo_trainer.yaml; trainer.nnodes 1 and n_gpus_per_node 8, ppo_trainer's).
    STRATA_ASSIGN_OR_RETURN(int64_t train_nodes, IntSetting(s, "trainer.nnodes", 1));
    STRATA_ASSIGN_OR_RETURN(int64_t train_per_node, IntSetting(s, "trainer.n_gpus_per_node", 8));
    const SourcedValue* rollout_nodes_v = s.Use("rollout.nnodes");
    const SourcedValue* rollout_per_node_v = s.Use("rollout.n_gpus_per_node");
    STRATA_ASSIGN_OR_RETURN(int64_t rollout_nodes, IntSetting(s, "rollout.nnodes", 1));
    STRATA_ASSIGN_OR_RETURN(int64_t rollout_per_node, IntSetting(s, "rollout.n_gpus_per_node", 8));
    if (rollout_per_node != train_per_node) {
      // The recipe's shared form: trainer.nnodes = rollout.nnodes, each node holding both sides
      // (volcengine/verl@1dda039b9c6311889a9c9a26040677e1254814f9:verl/experimental/
      // one_step_off_policy/README.md, "Resource Configuration Strategies"; its 2 + 6 scripts).
      if (rollout_nodes != train_nodes) {
        return InvalidInput(
                   fmt::format("rollout.n_gpus_per_node {} differs from trainer.n_gpus_per_node "
                               "{} on rollout.nnodes {} and trainer.nnodes {}: strata's splits "
                               "are whole nodes, or the same share of every node (equal nnodes)",
                               rollout_per_node, train_per_node, rollout_nodes, train_nodes))
            .InField("rollout.n_gpus_per_node");
      }
      // The actor's job is its own GPUs of each node (the split comes first): its layout, DP
      // and batch checks are the trainer's, as verl's are. A cluster file's node says how many
      // GPUs the two sides share; a cluster given by GPU and counts cannot say it (the launch
      // gives each side's share, not the node, and a job's shared node is a cluster file's), so
      // the import asks for one rather than write the actor over GPUs the trainer never uses.
      const std::string shared_how = fmt::format(
          "trainer.n_gpus_per_node {} + rollout.n_gpus_per_node {} ({}): the one-step-off recipe "
          "shares each node between trainer and rollout",
          train_per_node, rollout_per_node,
          rollout_per_node_v != nullptr ? rollout_per_node_v->source : "its config's default 8");
      if (!ctx.options->cluster.empty()) {
        auto loaded = LoadCluster(ctx.options->cluster);
        if (!loaded.ok()) return Error(loaded.error()).InField("--cluster");
        const Cluster& file = *loaded;
        if (file.gpus_per_node != train_per_node + rollout_per_node) {
          return InvalidInput(
                     fmt::format("trainer.n_gpus_per_node {} + rollout.n_gpus_per_node {} = {} "
                                 "GPUs a node, but cluster {} has {} GPUs per node",
                                 train_per_node, rollout_per_node,
                                 train_per_node + rollout_per_node, file.name, file.gpus_per_node))
              .InField("rollout.n_gpus_per_node")
              .WithHint(
                  "the one-step-off recipe shares each node between trainer and rollout: "
                  "name a cluster whose nodes hold both sides");
        }
        job.Derive("cluster.gpus_per_node", std::to_string(train_per_node),
                   fmt::format("trainer.n_gpus_per_node {}, the actor's own GPUs of each node ({})",
                               train_per_node, shared_how));
        job.Derive("cluster.shared_nodes", "true",
                   fmt::format("the other {} GPUs of each node generate (rollout.n_gpus_per_node)",
                               rollout_per_node));
      } else {
        return InvalidInput(
                   fmt::format("trainer.n_gpus_per_node {} + rollout.n_gpus_per_node {}: the "
                               "one-step-off recipe shares each node between trainer and "
                               "rollout, and a cluster given by GPU alone cannot say a node is "
                               "shared: the actor's job would be written over all {} GPUs of "
                               "each node, not the trainer's {}",
                               train_per_node, rollout_per_node, train_per_node + rollout_per_node,
                               train_per_node))
            .InField("rollout.n_gpus_per_node")
            .WithHint(fmt::format(
                "add --cluster with a cluster file whose nodes hold both sides ({} GPUs a node)",
                train_per_node + rollout_per_node));
      }
      job.Derive("cluster.nodes", std::to_string(train_nodes),
                 fmt::format("trainer.nnodes = rollout.nnodes = {} ({})", train_nodes,
                             rollout_nodes_v != nullptr ? rollout_nodes_v->source
                                                        : "its config's default 1"));
    } else {
      job.Set("cluster.gpus_per_node", std::to_string(train_per_node),
              rollout_per_node_v != nullptr ? rollout_per_node_v->source
                                            : "trainer.n_gpus_per_node (verl's default 8)");
      job.Derive("cluster.nodes", std::to_string(train_nodes + rollout_nodes),
                 fmt::format("trainer.nnodes {} + rollout.nnodes {} ({}): the one-step-off "
                             "recipe's training and rollout nodes",
                             train_nodes, rollout_nodes,
                             rollout_nodes_v != nullptr ? rollout_nodes_v->source
                                                        : "its config's default 1"));
    }
  }
  const std::string strategy = VerlActorStrategy(s);
  const bool megatron = strategy == "megatron";
  // verl's use_liger applies Liger's kernels to the HF model its FSDP workers train
  // (verl/workers/fsdp_workers.py: _apply_liger_kernel_to_instance); megatron workers run
  // megatron-core's own layers.
  if (const SourcedValue* liger = s.Use("actor_rollout_ref.model.use_liger");
      liger != nullptr && !megatron) {
    const std::string src = liger->source;
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> on, s.Bool("actor_rollout_ref.model.use_liger"));
    if (*on) job.Set("framework.liger_kernel", "true", src);
  }
  const std::string mp = "actor_rollout_ref.actor.megatron.";
  int64_t tp = 1, pp = 1, cp = 1;
  if (megatron) {
    STRATA_ASSIGN_OR_RETURN(tp, IntField(s, job, mp + "tensor_model_parallel_size", "parallel.tp",
                                         1, "verl's default 1"));
    STRATA_ASSIGN_OR_RETURN(pp, IntField(s, job, mp + "pipeline_model_parallel_size", "parallel.pp",
                                         1, "verl's default 1"));
    STRATA_ASSIGN_OR_RETURN(
        cp, IntField(s, job, mp + "context_parallel_size", "parallel.cp", 1, "verl's default 1"));
    STRATA_RETURN_IF_ERROR(
        IntField(s, job, mp + "expert_model_parallel_size", "parallel.ep", 1, "verl's default 1"));
    STRATA_RETURN_IF_ERROR(IntField(s, job, mp + "expert_tensor_parallel_size", "parallel.etp", 1,
                                    "verl's default 1"));
    job.Default("parallel.sequence_parallel", tp > 1 ? "true" : "false",
                "verl's megatron actor turns sequence parallelism on with TP");
  } else {
    for (const char* key : {"parallel.tp", "parallel.pp", "parallel.ep", "parallel.etp"}) {
      job.Default(key, "1", "verl's FSDP actor is data parallel");
    }
    STRATA_ASSIGN_OR_RETURN(
        cp, IntField(s, job, "actor_rollout_ref.actor.ulysses_sequence_parallel_size",
                     "parallel.cp", 1, "ulysses_sequence_parallel_size defaults to 1"));
    if (cp > 1) {
      // Ulysses, not a ring: verl's patched flash attention all-to-alls Q, K and V from the
      // rank's sequence shard to its share of the heads before the kernel and the output back
      // after it, inline on the compute stream (volcengine/verl@b178a3cd56f58b2d502255daba591e92
      // 833930a7:verl/models/transformers/monkey_patch.py:119-153, the autograd all-to-all's
      // backward the reverse one: verl/utils/ulysses.py). Nothing overlaps them.
      job.Derive("parallel.cp_comm_type", "a2a",
                 fmt::format("ulysses_sequence_parallel_size = {}: DeepSpeed-Ulysses all-to-alls "
                             "(verl's monkey_patch.py:119-153)",
                             cp));
      job.Derive("overlap.cp_comm", "false",
                 "verl runs the Ulysses all-to-alls inline before and after flash attention");
    }
    job.Default("parallel.sequence_parallel", "false", "no tensor parallelism in the FSDP actor");
  }
  const SourcedValue* dynamic_v = s.Use("actor_rollout_ref.actor.use_dynamic_bsz");
  const bool dynamic =
      dynamic_v != nullptr && (dynamic_v->value == "True" || dynamic_v->value == "true");
  if (dynamic) {
    // verl ignores ppo_micro_batch_size_per_gpu (and skips the minimal-batch check it sets,
    // volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/config.py:89): the
    // micro batches are packed by tokens after FinishCommon knows DP (below).
    if (const SourcedValue* m = s.Use("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")) {
      job.Note(
          fmt::format("ppo_micro_batch_size_per_gpu = {} ({}): not used under "
                      "use_dynamic_bsz; the micro batches are packed by tokens",
                      m->value, m->source));
    }
    if (const SourcedValue* m = s.Use("actor_rollout_ref.actor.ppo_micro_batch_size")) {
      if (m->value != "null" && m->value != "None") {
        job.Note(
            fmt::format("ppo_micro_batch_size = {} ({}): not used under use_dynamic_bsz; "
                        "the micro batches are packed by tokens",
                        m->value, m->source));
      }
    }
  } else {
    STRATA_RETURN_IF_ERROR(VerlGlobalMicroBatch(s, job, megatron ? tp * pp * cp : cp,
                                                megatron ? "TP x PP x CP" : "ulysses"));
    // verl reads the actor's token budget only under use_dynamic_bsz (default false:
    // volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/config/actor/
    // actor.yaml:28; dp_actor.py:551-552, megatron_actor.py:805-806): a budget given beside it off
    // costs a step nothing, and is counted apart from the keys that may change one.
    s.NoStepCost("actor_rollout_ref.actor.ppo_max_token_len_per_gpu",
                 fmt::format("its dynamic batching is off ({}): verl packs by this budget only "
                             "under it",
                             dynamic_v == nullptr
                                 ? "actor_rollout_ref.actor.use_dynamic_bsz unset, verl's default "
                                   "false"
                                 : dynamic_v->source + " = " + dynamic_v->value),
                 UnreadBecause::kDynamicBatchingOff);
  }
  STRATA_ASSIGN_OR_RETURN(int64_t mini,
                          IntSetting(s, "actor_rollout_ref.actor.ppo_mini_batch_size", 256));
  STRATA_ASSIGN_OR_RETURN(int64_t n, IntSetting(s, "actor_rollout_ref.rollout.n", 1));
  job.Derive("batch.global_batch", std::to_string(mini * n),
             fmt::format("ppo_mini_batch_size {} prompts x rollout.n {} responses per "
                         "optimizer step",
                         mini, n));
  STRATA_ASSIGN_OR_RETURN(int64_t prompt, IntSetting(s, "data.max_prompt_length", 512));
  STRATA_ASSIGN_OR_RETURN(int64_t response, IntSetting(s, "data.max_response_length", 512));
  job.Derive(
      "sequence.max_tokens", std::to_string(prompt + response),
      fmt::format("data.max_prompt_length {} + data.max_response_length {}", prompt, response));
  if (!dynamic) job.Default("sequence.packing", "false", "one prompt + response per row");
  bool ckpt = false;
  // The megatron actor's TransformerConfig overrides win over enable_gradient_checkpointing:
  // verl passes override_transformer_config to megatron-core as written.
  const std::string tc = "actor_rollout_ref.actor.megatron.override_transformer_config.";
  const SourcedValue* tc_granularity = megatron ? s.Use(tc + "recompute_granularity") : nullptr;
  const bool tc_sets_granularity = tc_granularity != nullptr && tc_granularity->value != "null" &&
                                   tc_granularity->value != "None";
  if (megatron) {
    STRATA_RETURN_IF_ERROR(NoteMegatronIgnoresGradientCheckpointing(s, job));
  }
  if (!megatron && s.Has("actor_rollout_ref.model.enable_gradient_checkpointing")) {
    const std::string src = s.Use("actor_rollout_ref.model.enable_gradient_checkpointing")->source;
    STRATA_ASSIGN_OR_RETURN(auto v,
                            s.Bool("actor_rollout_ref.model.enable_gradient_checkpointing"));
    ckpt = *v;
    job.Set("recompute.granularity", ckpt ? "full" : "none", src);
  } else if (!megatron) {
    // verl's FSDP actor checkpoints every decoder layer unless the launch says otherwise
    // (ppo_trainer.yaml's enable_gradient_checkpointing: True since volcengine/verl@9fca71d2;
    // fsdp_workers.py then calls gradient_checkpointing_enable on the HF model).
    STRATA_ASSIGN_OR_RETURN(
        VerlDefault d,
        VerlDefaultOf(false, "actor_rollout_ref.model.enable_gradient_checkpointing"));
    ckpt = d.value == "true" || d.value == "True";
    job.Default(
        "recompute.granularity", ckpt ? "full" : "none",
        fmt::format("verl's actor_rollout_ref.model.enable_gradient_checkpointing = {} ({})",
                    d.value, d.source));
  } else if (!tc_sets_granularity) {
    // verl's megatron workers never read enable_gradient_checkpointing: what megatron-core
    // recomputes comes from override_transformer_config alone (its default: nothing).
    job.Default("recompute.granularity", "none",
                "override_transformer_config.recompute_granularity not set: megatron-core "
                "recomputes nothing");
  }
  if (tc_sets_granularity) {
    const std::string& g = tc_granularity->value;
    if (g != "full" && g != "selective") {
      return InvalidInput("unknown recompute_granularity '" + g + "'; expected full or selective")
          .InField(tc + "recompute_granularity")
          .WithHint("read from " + tc_granularity->source);
    }
    ckpt = g == "full";
    job.Set("recompute.granularity", g, tc_granularity->source);
    const SourcedValue* modules = s.Use(tc + "recompute_modules");
    if (!ckpt && modules != nullptr && modules->value != "null" && modules->value != "None") {
      STRATA_RETURN_IF_ERROR(SetRecomputeModules(*modules, job));
    }
    if (ckpt) {
      if (const SourcedValue* m = s.Use(tc + "recompute_method")) {
        job.Set("recompute.method", m->value, m->source);
      }
      if (s.Has(tc + "recompute_num_layers")) {
        STRATA_RETURN_IF_ERROR(
            IntField(s, job, tc + "recompute_num_layers", "recompute.num_layers", 1, ""));
      }
    }
  }
  // An uneven pipeline split, as megatron-core's TransformerConfig takes it.
  for (const auto& [key, field] :
       {std::pair{"num_layers_in_first_pipeline_stage", "parallel.first_stage_layers"},
        std::pair{"num_layers_in_last_pipeline_stage", "parallel.last_stage_layers"}}) {
    const SourcedValue* v = megatron ? s.Use(tc + key) : nullptr;
    if (v == nullptr || v->value == "null" || v->value == "None") continue;
    STRATA_RETURN_IF_ERROR(IntField(s, job, tc + key, field, 0, ""));
  }
  // Defaults apply only where the input said nothing (JobBuilder::Default): no guard is needed.
  if (ckpt) {
    job.Default("recompute.method", "uniform", "every layer is checkpointed");
    job.Default("recompute.num_layers", "1", "every layer is checkpointed");
  }
  job.Default("precision.params", "bf16", "verl's actor mixed precision: param_dtype bfloat16");
  if (megatron) STRATA_RETURN_IF_ERROR(MapVerlDdpOverrides(s, job));
  job.Default("precision.grads", "fp32", "verl's actor mixed precision: reduce_dtype float32");
  job.Default("optimizer.name", "adamw", "verl's actor optimizer is AdamW");
  job.Default("optimizer.distributed", "true",
              megatron ? "verl's megatron actor uses the distributed optimizer"
                       : "FSDP shards the optimizer states");
  job.Default("optimizer.master_weights", "fp32", "fp32 master weights");
  job.Default("optimizer.moments", "fp32", "AdamW states in fp32");
  job.Default("loss.cross_entropy", "native",
              megatron ? "verl's megatron actor computes the log-probabilities with "
                         "megatron-core's vocab-parallel cross entropy"
                       : "verl computes the log-probabilities itself (flash-attn's fused cross "
                         "entropy: data/memory_overheads.yaml, fused_logprob_frameworks)");
  bool lora = false;
  STRATA_RETURN_IF_ERROR(MapVerlAdapter(s, ctx, job, megatron, lora));
  if (lora && !megatron) {
    // verl builds the FSDP actor in fp32 (fsdp_workers.py:324-326, torch_dtype float32 for the
    // actor) and wraps the PEFT model whole, so the frozen base is sharded in fp32 too.
    job.Note(
        "verl's FSDP actor holds its frozen LoRA base in fp32 (volcengine/verl@b178a3cd:verl/"
        "workers/fsdp_workers.py:324-326); strata counts the base at precision.params: 2 bytes "
        "a base parameter over the FSDP ranks short");
  }
  job.Default("frozen", "[]",
              lora ? "the adapter freezes the base; no other module is frozen"
                   : "the actor trains every parameter");
  job.Default("mtp", "false", "no MTP in the actor");
  // The rollout and reference sections: not part of the training job; an RL launch's RL job
  // reads them (verl_rl_mapping.cc), any other verl input names them here.
  for (const char* key :
       {"actor_rollout_ref.rollout.name", "actor_rollout_ref.rollout.tensor_model_parallel_size",
        "actor_rollout_ref.rollout.gpu_memory_utilization",
        "actor_rollout_ref.ref.fsdp_config.param_offload",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        "actor_rollout_ref.ref.log_prob_micro_batch_size",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size"}) {
    if (ctx.verl_rl) continue;
    if (const SourcedValue* v = s.Use(key);
        v != nullptr && v->value != "null" && v->value != "None") {
      job.Note(
          fmt::format("{} = {} ({}): rollout/reference setting, kept for the RL model; the "
                      "job models the actor's training step",
                      key, v->value, v->source));
    }
  }
  if (!megatron) {
    // verl's FSDP actor shards parameters, gradients and optimizer states (FSDP1 FULL_SHARD is
    // ZeRO-3; strategy fsdp2 is FSDP2).
    job.Set("sharding.mode", strategy == "fsdp2" ? "fsdp2" : "zero3",
            "actor_rollout_ref.actor.strategy = " + strategy);
    // strategy fsdp wraps the model in FullyShardedDataParallel (FSDP1, a FlatParameter per
    // unit), fsdp2 calls fully_shard (volcengine/verl v0.5.0 verl/workers/fsdp_workers.py).
    if (strategy == "fsdp" || strategy == "fsdp2") {
      job.Set("sharding.runtime", strategy == "fsdp2" ? "fsdp2" : "fsdp1",
              "actor_rollout_ref.actor.strategy = " + strategy);
    }
    MapVerlReshard(s, job, strategy);
    // The trainer's GPUs (colocated: all; one-step-off: the training side's).
    STRATA_ASSIGN_OR_RETURN(int64_t per_node, IntSetting(s, "trainer.n_gpus_per_node", 8));
    STRATA_ASSIGN_OR_RETURN(int64_t nodes, IntSetting(s, "trainer.nnodes", 1));
    // The job's GPUs: the trainer's, with the rollout's under the one-step-off recipe (its
    // training side is re-resolved on the trainer's GPUs, at the same FSDP group).
    int64_t job_gpus = per_node * nodes;
    if (job.Has("cluster.nodes") && job.Has("cluster.gpus_per_node")) {
      STRATA_ASSIGN_OR_RETURN(int64_t job_nodes, job.GetPositiveInt("cluster.nodes"));
      STRATA_ASSIGN_OR_RETURN(int64_t job_per_node, job.GetPositiveInt("cluster.gpus_per_node"));
      job_gpus = job_nodes * job_per_node;
    }
    STRATA_RETURN_IF_ERROR(MapVerlFsdpSize(s, job, per_node * nodes, job_gpus));
  }
  // megatron-core's CPU optimizer (HybridDeviceOptimizer), as verl passes
  // override_optimizer_config to megatron-core's OptimizerConfig: the optimizer states and fp32
  // master weights in host memory, the Adam step on the CPU.
  const std::string oc = "actor_rollout_ref.actor.optim.override_optimizer_config.";
  if (const SourcedValue* v = megatron ? s.Use(oc + "optimizer_cpu_offload") : nullptr) {
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(oc + "optimizer_cpu_offload"));
    if (on.value_or(false)) {
      job.Set("sharding.offload_optimizer", "cpu", v->source);
      if (const SourcedValue* f = s.Use(oc + "optimizer_offload_fraction")) {
        const std::optional<double> share = ParsePythonNumber(f->value);
        if (!share.has_value() || *share < 0 || *share > 1) {
          return InvalidInput(
                     fmt::format("{} = '{}': expected a fraction in [0, 1]", f->source, f->value))
              .InField(oc + "optimizer_offload_fraction");
        }
        if (*share != 1.0) {
          job.Note(fmt::format(
              "{} = {} ({}): only that fraction of the optimizer states is in host memory; "
              "strata counts all of it there",
              oc + "optimizer_offload_fraction", f->value, f->source));
        }
      }
    }
  }
  MapVerlOffloadPolicy(s, job, strategy);
  MapVerlTorchCompile(s, strategy);
  // verl's FSDP param_offload / optimizer_offload move the actor's states to the host between
  // phases and load them all back for the update, where AdamW steps on the GPU (volcengine/verl@
  // b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/fsdp_workers.py: the actor gets no
  // CPUOffload, lines 526 and 552; update_actor loads the parameters and the optimizer, 893-898,
  // and offloads them after, 928-929): the update holds what an FSDP job without offload holds,
  // not the training-time offload (and CPU Adam) of the job's sharding.offload_*.
  for (const char* key : {"actor_rollout_ref.actor.fsdp_config.param_offload",
                          "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
                          "actor_rollout_ref.actor.megatron.param_offload",
                          "actor_rollout_ref.actor.megatron.grad_offload",
                          "actor_rollout_ref.actor.megatron.optimizer_offload"}) {
    if (megatron && std::string_view(key).starts_with("actor_rollout_ref.actor.fsdp_config.")) {
      continue;
    }
    if (const SourcedValue* v = s.Use(key);
        v != nullptr && (v->value == "True" || v->value == "true")) {
      job.Note(fmt::format(
          "{} = {} ({}): offloading is not modelled{}; the ledger counts these bytes on the GPU",
          key, v->value, v->source,
          ctx.verl_rl ? " by the training job (the RL job's placement.offload_trainer models it "
                        "between rollout and training)"
                      : ""));
    }
  }
  STRATA_RETURN_IF_ERROR(FinishCommon(s, ctx, job, tp * pp * cp));
  // (A one-step-off split trains on part of the cluster: its ranks are not the job's DP.)
  if (!dynamic && !megatron && !ctx.verl_split) {
    STRATA_RETURN_IF_ERROR(CheckVerlFsdpMiniBatch(s, job, mini, n));
  }
  if (dynamic) {
    STRATA_RETURN_IF_ERROR(
        PackVerlMicroBatches(s, job, *dynamic_v, megatron, mini * n, prompt + response, cp));
  }
  return OkStatus();
}

}  // namespace strata
