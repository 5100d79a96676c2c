#include "strata/preflight/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/memory/static_memory.h"
#include "strata/model/adapter.h"
#include "strata/model/param_count.h"

namespace strata::preflight {
namespace {

// The parameters the job has, each once: the text model, the MTP block when the job builds it
// (mtp: true), the vision tower. A tied head is counted once (CountParams gives it 0).
ModuleParams ModelParams(const Job& job, const ParamBreakdown& params) {
  ModuleParams all = params.AllModules();
  if (!job.spec.mtp) all[ModuleKind::kMtp] = 0;
  return all;
}

}  // namespace

Result<FailureRate> LoadFailureRate(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/checkpoint/failure_rate.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(root, path, ""));
  FailureRate rate;
  STRATA_ASSIGN_OR_RETURN(rate.per_gpu_hour, m.Number("failure_rate_per_gpu_hour"));
  STRATA_ASSIGN_OR_RETURN(rate.derivation, m.String("derivation"));
  STRATA_ASSIGN_OR_RETURN(rate.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  if (!(rate.per_gpu_hour > 0))
    return m.ErrorAt("failure_rate_per_gpu_hour", "expected a positive rate");
  return rate;
}

std::string_view CheckpointFormatName(CheckpointFormat format) {
  switch (format) {
    case CheckpointFormat::kMegatronTorchDist:
      return "Megatron torch_dist (distributed checkpoint)";
    case CheckpointFormat::kTorchDcp:
      return "PyTorch DCP (torch.distributed.checkpoint)";
    case CheckpointFormat::kDeepSpeed:
      return "DeepSpeed mp_rank_*_model_states.pt + zero_pp_rank_*_optim_states.pt";
    case CheckpointFormat::kHfTrainer:
      return "HF Trainer model.safetensors + optimizer.pt";
    case CheckpointFormat::kFsdpFullStateDict:
      return "FSDP full state dict (rank 0: pytorch_model_fsdp.bin + optimizer.bin)";
    case CheckpointFormat::kVerlFsdp:
      return "verl FSDP model_/optim_world_size_*_rank_*.pt";
  }
  return "?";
}

// The code that writes the checkpoint, which is not always the one data/frameworks.yaml's
// runs_as names for the step (the HF Trainer under ZeRO hands its save to DeepSpeed), is each
// framework's `checkpoint_format:` in data/frameworks.yaml, by the runtime that runs the job's
// sharding, each value cited there from the framework's saving code and resolved once per mode
// into the job (ResolvedJob::checkpoint_format, job/checkpoint_format_rule.h). Where no
// framework on the chain states one (a job that names no framework), the engine and runtime
// decide as the resolved job says: megatron-core's torch_dist, DeepSpeed's files, FSDP2's DCP
// (or the full state dict), else the HF Trainer's rank-0 files.
//
// The Trainer's save_only_model (checkpoint.optimizer false): _save_checkpoint calls
// save_model and skips _save_optimizer_and_scheduler, the only place DeepSpeed's
// save_checkpoint is called (transformers trainer.py): rank 0 writes model.safetensors alone.
// Under ZeRO-3 only when the 16-bit weights can be gathered (else save_model itself falls back
// to DeepSpeed's save_checkpoint; CheckCheckpointSettings refuses that).
bool TrainerSavesModelOnly(const Job& job) {
  const JobSpec& spec = job.spec;
  const std::string& name = spec.framework.name;
  const ShardingMode mode = spec.sharding.mode;
  const bool trainer = spec.framework.given && (name == "hf-trainer" || name == "ms-swift");
  return trainer && job.RunsDeepSpeed(mode) && !spec.checkpoint.optimizer &&
         (mode != ShardingMode::kZero3 || spec.checkpoint.save_16bit_model);
}

CheckpointFormat CheckpointFormatOf(const Job& job) {
  const ShardingMode mode = job.spec.sharding.mode;
  const bool full = job.spec.checkpoint.state_dict == StateDictKind::kFull;
  if (TrainerSavesModelOnly(job)) return CheckpointFormat::kHfTrainer;
  switch (job.checkpoint_format().format) {
    case SavedFormat::kTorchDist:
      return CheckpointFormat::kMegatronTorchDist;
    case SavedFormat::kDcp:
      return CheckpointFormat::kTorchDcp;
    case SavedFormat::kDeepSpeed:
      return CheckpointFormat::kDeepSpeed;
    case SavedFormat::kHfSafetensors:
      return CheckpointFormat::kHfTrainer;
    case SavedFormat::kVerlFsdp:
      return CheckpointFormat::kVerlFsdp;
    case SavedFormat::kAccelerateFsdp:
      return full ? CheckpointFormat::kFsdpFullStateDict : CheckpointFormat::kTorchDcp;
    case SavedFormat::kUnstated:
      break;
  }
  if (job.RunsMegatronCore(mode)) return CheckpointFormat::kMegatronTorchDist;
  if (job.RunsDeepSpeed(mode)) return CheckpointFormat::kDeepSpeed;
  if (mode == ShardingMode::kFsdp2) {
    return full ? CheckpointFormat::kFsdpFullStateDict : CheckpointFormat::kTorchDcp;
  }
  return CheckpointFormat::kHfTrainer;
}

bool WritesConsolidatedModel(const Job& job) {
  // Beside DeepSpeed's files; with save_only_model model.safetensors is the checkpoint itself.
  if (TrainerSavesModelOnly(job)) return false;
  if (job.spec.checkpoint.save_16bit_model) return true;
  const std::string& name = job.spec.framework.name;
  const bool trainer = job.spec.framework.given && (name == "hf-trainer" || name == "ms-swift");
  const ShardingMode mode = job.spec.sharding.mode;
  // Under FSDP with FULL_STATE_DICT the Trainer's save_model takes accelerate's get_state_dict
  // (the whole model, gathered to rank 0) and writes model.safetensors, beside the
  // pytorch_model_fsdp.bin that _save_optimizer_and_scheduler's save_fsdp_model writes
  // (transformers trainer.py, save_model's is_fsdp_enabled branch).
  if (trainer && CheckpointFormatOf(job) == CheckpointFormat::kFsdpFullStateDict) return true;
  return trainer && CheckpointFormatOf(job) == CheckpointFormat::kDeepSpeed &&
         (mode == ShardingMode::kZero1 || mode == ShardingMode::kZero2);
}

// Formulas: docs/formulas.md, "Checkpoints".
CheckpointSizes ComputeCheckpointSizes(const Job& job) {
  const ParallelLayout& l = job.spec.layout;
  const ShardingSpec& sh = job.spec.sharding;
  const OptimizerSpec& opt = job.spec.optimizer;
  const ModuleParams model = ModelParams(job, CountParams(job.model));
  const auto param_b = static_cast<double>(DTypeBytes(job.spec.param_dtype));
  const auto master_b = static_cast<double>(DTypeBytes(opt.master_dtype));
  CheckpointSizes s;
  s.format = CheckpointFormatOf(job);
  s.world = l.tp * l.pp * l.cp * l.dp;
  // PEFT's save_pretrained and the Trainer's checkpoints hold the adapters and their optimizer
  // state; the frozen base is not written (merging writes the base's size instead).
  s.adapters_only = job.spec.adapter.on();

  // Every parameter once, trainable or not, in the parameter dtype: the checkpoint holds the
  // whole model whatever the sharding (the sharding only decides which rank writes which part).
  double all = 0, trainable = 0, adamw_only = 0;
  for (ModuleKind k : AllModuleKinds()) {
    const auto n = static_cast<double>(model[k]);
    all += n;
    if (IsFrozen(job, k)) continue;
    trainable += n;
    if (k == ModuleKind::kEmbedding || k == ModuleKind::kHead || k == ModuleKind::kNorms ||
        k == ModuleKind::kRouter)
      adamw_only += n;
  }
  s.weights_total = Bytes::Count(all * param_b);
  double adapter_params = 0;
  if (s.adapters_only) {
    for (const LayerSpec& layer : job.model.layers)
      adapter_params +=
          static_cast<double>(AdapterCostOfLayer(job.model, job.spec.adapter, layer).params);
    // PEFT keeps the adapters in fp32 (autocast_adapter_dtype), the master dtype here.
    s.adapter_total = Bytes::Count(adapter_params * master_b);
  }
  const double optimized = s.adapters_only ? adapter_params : trainable;
  const OptimizerStates states =
      OptimizerStatesOf(opt, static_cast<int64_t>(optimized), s.adapters_only ? 0.0 : adamw_only,
                        Detail::kNumbersOnly);
  s.moments_total = Bytes::Count(states.bytes_per_param * optimized);
  // Where the model's parameters are fp32 and the GPU computes in bf16 (FSDP2's mixed
  // precision; torchtitan; verl's FSDP workers), the model state dict is the fp32 parameter,
  // every one of them (frozen too), and there is no bf16 copy to save. Elsewhere the optimizer
  // keeps an fp32 master copy of the trainable parameters beside the bf16 weights.
  const bool mixed = !s.adapters_only && master_b != param_b;
  s.master_is_model_state =
      mixed &&
      (sh.mode == ShardingMode::kFsdp2 || s.format == CheckpointFormat::kTorchDcp ||
       s.format == CheckpointFormat::kVerlFsdp || s.format == CheckpointFormat::kFsdpFullStateDict);
  if (s.master_is_model_state) {
    s.master_total = Bytes::Count(all * master_b);
  } else if (mixed) {
    s.master_total = Bytes::Count(trainable * master_b);
  }
  // Megatron's --no-save-optim leaves the optimizer's sharded state dict, the fp32 main params
  // included, out of the checkpoint (megatron/training/checkpointing.py, save_checkpoint: the
  // 'optimizer' entry only `if not args.no_save_optim`): the model's weights alone remain. Where
  // the fp32 parameter is the model state it stays; the moments go.
  s.optimizer_saved = job.spec.checkpoint.optimizer;
  if (!s.optimizer_saved) {
    if (!s.master_is_model_state) s.master_total = Bytes();
    s.moments_total = Bytes();
  }
  // DeepSpeed ZeRO-3's model_states files hold placeholders for the partitioned module
  // (deepspeedai/DeepSpeed#1009, #2413); its optim_states files hold the fp32 partitions.
  s.weights_saved = !s.master_is_model_state &&
                    !(s.format == CheckpointFormat::kDeepSpeed && sh.mode == ShardingMode::kZero3);

  // Who writes what. The module part (weights, or adapters) and the optimizer part.
  const Bytes module_total = s.adapters_only   ? s.adapter_total
                             : s.weights_saved ? s.weights_total
                                               : Bytes();
  const auto world = static_cast<double>(s.world);
  const auto nodes = static_cast<double>(std::max<int64_t>(1, job.spec.cluster.nodes));
  const auto per_node = static_cast<double>(job.spec.cluster.gpus_per_node);
  // Each part's share on the busiest rank and on the busiest node.
  double module_rank = 1 / world, module_node = 1 / nodes;
  double optimizer_rank = 1 / world, optimizer_node = 1 / nodes;
  switch (s.format) {
    case CheckpointFormat::kMegatronTorchDist:
    case CheckpointFormat::kTorchDcp:
    case CheckpointFormat::kVerlFsdp:
      // megatron-core's fully parallel save (on unless --no-ckpt-fully-parallel-save) spreads
      // the replicated tensors over the data-parallel ranks; DCP's planner writes each
      // replicated shard once, on the rank with the least to write (dedup_save_plans); verl's
      // FSDP ranks each save their shard: every rank writes an equal part.
      break;
    case CheckpointFormat::kDeepSpeed: {
      // Data-parallel rank 0 of each model-parallel group writes that group's module
      // (model_states, one per TP x PP rank); every rank writes its optimizer partition.
      // ZeRO-0 (sharding none) keeps the optimizer state in model_states too. ASSUMPTION: the
      // model-parallel ranks of DP rank 0 share the first node (TP innermost).
      const auto mp = static_cast<double>(l.tp * l.pp);
      module_rank = 1 / mp;
      module_node = std::min(1.0, per_node / mp);
      if (sh.mode == ShardingMode::kNone) {
        optimizer_rank = module_rank;
        optimizer_node = module_node;
      }
      break;
    }
    case CheckpointFormat::kHfTrainer:
      // Rank 0 writes model.safetensors and optimizer.pt (DDP: every rank holds the same).
    case CheckpointFormat::kFsdpFullStateDict:
      // Accelerate's save_fsdp_model / save_fsdp_optimizer under FULL_STATE_DICT gather the
      // model and FSDP.optim_state_dict to rank 0 (rank0_only) and torch.save them there
      // (accelerate utils/fsdp_utils.py); a resume reads them on rank 0 and broadcasts.
      module_rank = module_node = optimizer_rank = optimizer_node = 1;
      break;
  }
  s.weights_per_rank = module_total * module_rank;
  s.master_per_rank = s.master_total * optimizer_rank;
  s.moments_per_rank = s.moments_total * optimizer_rank;
  s.busiest_node = module_total * module_node + s.optimizer_total() * optimizer_node;
  // The HF Trainer's save_model writes the model from rank 0 (model.safetensors) before
  // DeepSpeed's save_checkpoint writes its files (transformers trainer.py, save_model's
  // is_deepspeed_enabled branch, then _save_optimizer_and_scheduler): under ZeRO-1/2 always,
  // as accelerate's get_state_dict returns the whole module's state dict there; under ZeRO-3
  // only when stage3_gather_16bit_weights_on_model_save lets it gather (else get_state_dict
  // raises and the Trainer writes DeepSpeed's files alone). The whole model once more, on
  // rank 0 and so on the first node. A PEFT model saves its adapters there instead.
  if (WritesConsolidatedModel(job) && !s.adapters_only) {
    // FSDP's full state dict is the fp32 parameter where that is the model state.
    const bool fp32_state = s.format == CheckpointFormat::kFsdpFullStateDict && master_b != param_b;
    s.consolidated_dtype = fp32_state ? opt.master_dtype : job.spec.param_dtype;
    s.consolidated_total = fp32_state ? Bytes::Count(all * master_b) : s.weights_total;
    s.busiest_node = s.busiest_node + s.consolidated_total;
  }
  return s;
}

std::string_view StorageNote(std::string_view kind) {
  // One NFS server serves every client: its own link and disks cap the aggregate. Lustre
  // stripes a file over object storage targets: few stripes or few OSTs cap it. Local NVMe is
  // not shared: a restart on other nodes first copies the shards there.
  if (kind == "nfs") return "one NFS server may cap the aggregate lower";
  if (kind == "lustre") return "the object storage targets a file is striped over may cap it lower";
  if (kind == "local_nvme")
    return "local disks: a restart on other nodes must first copy the shards there";
  return "";
}

Result<CheckpointTimes> ComputeCheckpointTimes(const CheckpointSizes& sizes,
                                               const BandwidthMap& map, int64_t nodes) {
  for (const MapLevel& level : map.levels) {
    if (level.kind != MapLevelKind::kStorage) continue;
    CheckpointTimes t;
    t.storage = level.name;
    t.storage_kind = level.calibration;
    t.per_node = level.per_node;
    t.nodes = nodes;
    // Every node writes its part at once; the busiest one sets the time. A restart reads back
    // the same parts on the same ranks, not the consolidated model: the Trainer resumes from
    // DeepSpeed's files (deepspeed_load_checkpoint).
    t.checkpoint_write = sizes.busiest_node / level.per_node;
    t.checkpoint_load = (sizes.busiest_node - sizes.consolidated_total) / level.per_node;
    t.hf_write = sizes.hf_total() / level.per_node;
    t.hf_load = sizes.hf_total() / level.per_node;
    return t;
  }
  return InvalidInput(
             fmt::format("cluster '{}' has no storage level in its bandwidth map", map.cluster))
      .InField("storage")
      .WithHint("add a storage entry (e.g. nfs with bandwidth_per_node) to the cluster file");
}

CheckpointInterval ComputeInterval(double rate, int64_t gpus, Seconds cost, Seconds restart,
                                   Seconds background) {
  CheckpointInterval c;
  c.failure_rate_per_gpu_hour = rate;
  c.gpus = gpus;
  c.cost = cost;
  c.restart = restart;
  c.background = background;
  c.mtbf = Seconds::Of(3600.0 / (rate * static_cast<double>(gpus)));
  const double d = cost.s(), m = c.mtbf.s();
  c.young = Seconds::Of(std::sqrt(2 * d * m));
  // Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
  // eq. 37: for delta < 2M, tau = sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta.
  const double x = d / (2 * m);
  c.daly =
      d < 2 * m ? Seconds::Of(std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d) : c.mtbf;
  const double tau = c.daly.s();
  // Per interval the job pays delta; per failure it loses half an interval of work on average
  // and the restart (first-order model behind Young's formula). An asynchronous save is on disk
  // only once its background write ends: a failure loses that much more work.
  c.lost_fraction = d / tau + (tau / 2 + background.s() + restart.s()) / m;
  c.gpu_hours_lost_per_day = c.lost_fraction * static_cast<double>(gpus) * 24.0;
  c.checkpoints_per_day = 86400.0 / (tau + d);
  return c;
}

Result<StorageCluster> CheckpointCluster(const Job& job, const std::string& flag) {
  const std::string& given = !flag.empty() ? flag : job.spec.cluster.name;
  if (!given.empty()) {
    STRATA_ASSIGN_OR_RETURN(Cluster c, LoadCluster(given));
    return StorageCluster{std::move(c), false};
  }
  for (const std::string& name : ShippedClusterNames()) {
    auto c = LoadCluster(name);
    if (c.ok() && c->gpu.name == job.gpu().name &&
        c->gpus_per_node == job.spec.cluster.gpus_per_node)
      return StorageCluster{std::move(c).value(), true};
  }
  return InvalidInput(fmt::format("no cluster file describes {} x {} GPUs per node, so there is no "
                                  "storage level to time",
                                  job.gpu().name, job.spec.cluster.gpus_per_node))
      .InField("--cluster")
      .WithHint("pass --cluster <file or name under data/clusters/>");
}

Status CheckCheckpointSettings(const Job& job) {
  if (job.spec.checkpoint.state_dict == StateDictKind::kFull &&
      CheckpointFormatOf(job) != CheckpointFormat::kFsdpFullStateDict) {
    return InvalidInput(
               fmt::format(
                   "checkpoint.state_dict: full is Accelerate's FSDP FULL_STATE_DICT (the HF "
                   "Trainer); this job's checkpoint is {}",
                   CheckpointFormatName(CheckpointFormatOf(job))))
        .InField("checkpoint.state_dict")
        .WithHint(
            "remove checkpoint.state_dict, or use sharding.mode fsdp2 under framework "
            "hf-trainer");
  }
  const CheckpointFormat format = CheckpointFormatOf(job);
  if (job.spec.checkpoint.async_save && format != CheckpointFormat::kMegatronTorchDist &&
      !(format == CheckpointFormat::kTorchDcp &&
        (!job.spec.framework.given || job.spec.framework.name == "torchtitan"))) {
    return InvalidInput(
               fmt::format("checkpoint.async_save: this job's checkpoint ({}) is written "
                           "synchronously by its framework; asynchronous saves are Megatron's "
                           "torch_dist (--async-save) and torchtitan's DCP (async_mode)",
                           CheckpointFormatName(format)))
        .InField("checkpoint.async_save")
        .WithHint("remove checkpoint.async_save");
  }
  if (!job.spec.checkpoint.optimizer && format == CheckpointFormat::kDeepSpeed) {
    const std::string& name = job.spec.framework.name;
    const bool trainer = job.spec.framework.given && (name == "hf-trainer" || name == "ms-swift");
    if (trainer && job.spec.sharding.mode == ShardingMode::kZero3) {
      // transformers trainer.py, save_model: under ZeRO-3 without the 16-bit gather
      // accelerate's get_state_dict raises and the Trainer calls DeepSpeed's save_checkpoint.
      return InvalidInput(
                 "checkpoint.optimizer: false (save_only_model) under ZeRO-3 without "
                 "stage3_gather_16bit_weights_on_model_save: the Trainer's save_model falls back "
                 "to DeepSpeed's save_checkpoint, which writes the optimizer partitions too")
          .InField("checkpoint.optimizer")
          .WithHint(
              "set checkpoint.save_16bit_model: true (stage3_gather_16bit_weights_on_model_save), "
              "or remove checkpoint.optimizer");
    }
    return InvalidInput(
               "checkpoint.optimizer: false is Megatron's --no-save-optim or the HF Trainer's "
               "save_only_model; DeepSpeed's own save_checkpoint always writes its "
               "zero_pp_rank_*_optim_states.pt partitions")
        .InField("checkpoint.optimizer")
        .WithHint(
            "remove checkpoint.optimizer, or set framework.name to megatron-core or hf-trainer");
  }
  return OkStatus();
}

Result<CheckpointPlan> PlanCheckpoint(const Job& job, const StorageCluster& storage,
                                      const BandwidthMap& map, const FailureRate& rate) {
  STRATA_RETURN_IF_ERROR(CheckCheckpointSettings(job));
  CheckpointPlan plan;
  plan.storage_assumed = storage.assumed;
  plan.sizes = ComputeCheckpointSizes(job);
  // The job's node count, on the storage of the cluster file that describes its nodes.
  auto times = ComputeCheckpointTimes(plan.sizes, map, job.spec.cluster.nodes);
  if (!times.ok()) {
    // Only a missing storage level comes back as an error; the sizes do not depend on it.
    plan.untimed_reason = times.error().message + ": " + times.error().hint;
    return plan;
  }
  plan.times = *times;
  if (job.spec.checkpoint.async_save) {
    // Megatron's --async-save with its persistent worker (NVIDIA/Megatron-LM d98e8a6
    // megatron/core/dist_checkpointing/strategies/async_utils.py, PersistentAsyncCaller.
    // schedule_async_call: training waits on the preload queue, filesystem_async.py
    // preload_tensors: tensor.to("cpu", non_blocking=True) then torch.cuda.synchronize) and
    // torchtitan's DCP async_save (torchtitan components/checkpointer/dcp.py: "staging" the state
    // dict to host memory, the write in a background thread) block for the rank's part copied
    // to host memory; the files are written behind training. Priced at one GPU's PCIe x16 line
    // rate: a lower bound (a shared switch uplink, pageable memory, the save planning).
    const MapLevel* pcie = nullptr;
    for (const MapLevel& level : map.levels) {
      if (level.kind == MapLevelKind::kPcie) pcie = &level;
    }
    if (pcie == nullptr) {
      return InvalidInput(
                 "checkpoint.async_save: the cluster's bandwidth map has no PCIe level to time "
                 "the copy to host memory")
          .InField("checkpoint.async_save")
          .WithHint("set pcie_generation in the cluster file");
    }
    plan.times.staging_link = pcie->name;
    plan.times.staging_rate = pcie->per_gpu;
    plan.times.staging = plan.sizes.checkpoint_per_rank() / pcie->per_gpu;
    plan.interval = ComputeInterval(rate.per_gpu_hour, plan.sizes.world, plan.times.staging,
                                    plan.times.checkpoint_load, plan.times.checkpoint_write);
    // A save starts only once the previous one is written (Megatron's queue holds one worker;
    // torchtitan waits for the previous save first): an interval shorter than the write makes
    // training wait for it, so the job is priced as writing synchronously.
    if (plan.interval.daly < plan.times.checkpoint_write) {
      plan.interval = ComputeInterval(rate.per_gpu_hour, plan.sizes.world,
                                      plan.times.checkpoint_write, plan.times.checkpoint_load);
      plan.interval.backed_up = true;
    }
    return plan;
  }
  plan.interval = ComputeInterval(rate.per_gpu_hour, plan.sizes.world, plan.times.checkpoint_write,
                                  plan.times.checkpoint_load);
  return plan;
}

}  // namespace strata::preflight
