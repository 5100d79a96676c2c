// Checkpoints and failures (lesson 7): the size of a checkpoint in the format that writes it
// (megatron's distributed format, DeepSpeed's ZeRO files, torch DCP) and as HF safetensors, the
// time to write and load it on the cluster's storage level of the bandwidth map, the interval that
// minimises lost time for a failure rate (Young 1974, Daly 2006) and the GPU-hours lost per day.
// The totals are the model's parameter counts (model/param_count.h) times the bytes each kind
// of state takes (the optimizer's states per parameter from the memory module). Formulas:
// docs/formulas.md, "Checkpoints".
#ifndef STRATA_PREFLIGHT_CHECKPOINT_H_
#define STRATA_PREFLIGHT_CHECKPOINT_H_

#include <string>
#include <string_view>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/job/job_validation.h"

namespace strata::preflight {

struct FailureRate {
  double per_gpu_hour = 0;
  std::string derivation;
  std::string source;
};

/// data/checkpoint/failure_rate.yaml (or `path`).
Result<FailureRate> LoadFailureRate(const std::string& path = "");

/// Who writes the checkpoint: the job's framework's checkpoint_format (data/frameworks.yaml)
/// under the runtime that runs its sharding (CheckpointFormatOf):
///   kMegatronTorchDist  megatron-core's distributed checkpoint (torch_dist), fully parallel
///                       save: every rank writes an equal part (megatron-core, megatron-bridge,
///                       and ms-swift / verl on their megatron path, sharding zero1)
///   kTorchDcp           PyTorch Distributed Checkpoint (torch.distributed.checkpoint): every
///                       rank writes its shards (torchtitan; FSDP2 under any framework)
///   kDeepSpeed          DeepSpeed's per-rank files: mp_rank_*_model_states.pt (the module, by
///                       data-parallel rank 0 of each model-parallel group; placeholders under
///                       ZeRO-3) + zero_pp_rank_*_optim_states.pt (each rank's partition)
///   kHfTrainer          the HF Trainer without DeepSpeed (DDP): rank 0 writes
///                       model.safetensors and optimizer.pt; under DeepSpeed with
///                       save_only_model (TrainerSavesModelOnly) model.safetensors alone
///   kVerlFsdp           verl's FSDP workers: model_/optim_world_size_*_rank_*.pt per rank
///   kFsdpFullStateDict  Accelerate's FSDP FULL_STATE_DICT under the HF Trainer: rank 0 writes
///                       pytorch_model_fsdp.bin and optimizer.bin, gathered to it
enum class CheckpointFormat {
  kMegatronTorchDist,
  kTorchDcp,
  kDeepSpeed,
  kHfTrainer,
  kVerlFsdp,
  kFsdpFullStateDict
};
std::string_view CheckpointFormatName(CheckpointFormat format);
CheckpointFormat CheckpointFormatOf(const Job& job);

struct CheckpointSizes {
  CheckpointFormat format = CheckpointFormat::kMegatronTorchDist;
  // The busiest rank's part of the write (what its files hold), by item; weights_per_rank is
  // 0 where the weights are not saved, the adapters' part with adapters.
  Bytes weights_per_rank;
  Bytes master_per_rank;
  Bytes moments_per_rank;
  Bytes weights_total;  // every parameter once in the param dtype, whatever the sharding
  /// Every fp32 master weight once; where the model state is the fp32 parameter (FSDP2, DCP
  /// and verl's FSDP files with mixed precision) every parameter, frozen ones included.
  Bytes master_total;
  Bytes moments_total;  // every optimizer state once
  /// Whether the param-dtype weights are a tensor of the checkpoint: not under DeepSpeed
  /// ZeRO-3 (placeholders for the partitioned module) nor where the fp32 parameter is the
  /// model state (master_is_model_state).
  bool weights_saved = true;
  bool master_is_model_state = false;
  /// A job with adapters saves them alone (with their optimizer state): the frozen base is
  /// not a tensor of its checkpoints. weights_total is then the base, the size of a merged model.
  bool adapters_only = false;
  Bytes adapter_total;  // every adapter parameter once, in the dtype they are kept in (fp32)
  /// The optimizer state is written (checkpoint.optimizer); false: master_* and moments_* are 0
  /// unless the fp32 parameter is the model state (then the moments alone are dropped).
  bool optimizer_saved = true;
  /// The consolidated model rank 0 writes beside the sharded files (checkpoint.save_16bit_model:
  /// the HF Trainer's model.safetensors under ZeRO-3): every parameter once in the param dtype,
  /// or in fp32 under FSDP's FULL_STATE_DICT, whose state dict is the fp32 parameter.
  Bytes consolidated_total;
  DType consolidated_dtype = DType::kBf16;
  int64_t world = 0;
  /// What the node that writes most writes (the write and the load of a restart wait for it).
  Bytes busiest_node;
  Bytes optimizer_total() const { return master_total + moments_total; }
  Bytes checkpoint_total() const {
    if (adapters_only) return adapter_total + optimizer_total();
    return (weights_saved ? weights_total : Bytes()) + optimizer_total() + consolidated_total;
  }
  /// The busiest rank's files (rank 0's, with the consolidated model).
  Bytes checkpoint_per_rank() const {
    return weights_per_rank + master_per_rank + moments_per_rank + consolidated_total;
  }
  /// HF safetensors hold the weights only (in the parameter dtype).
  /// With adapters: PEFT's adapter_model.safetensors (a merged model is weights_total).
  Bytes hf_total() const { return adapters_only ? adapter_total : weights_total; }
};

struct CheckpointTimes {
  std::string storage;       // the storage level's name, e.g. "NFS"
  std::string storage_kind;  // "nfs", "lustre", "local_nvme"
  BytesPerSecond per_node;   // one client node's storage bandwidth
  int64_t nodes = 0;
  Seconds checkpoint_write;  // every node writes its share at once: busiest node / per_node
  Seconds checkpoint_load;   // the same volume read back
  Seconds hf_write;          // one writer (rank 0) writes every shard: total / per_node
  Seconds hf_load;           // every node reads the whole model at once: total / per_node
  /// checkpoint.async_save: what training waits for, the busiest rank's part copied to host
  /// memory over its PCIe link (staging_link, staging_rate: one GPU's x16 line rate); the write
  /// above then runs in the background. 0 for a synchronous save.
  Seconds staging;
  std::string staging_link;
  BytesPerSecond staging_rate;
};

struct CheckpointInterval {
  double failure_rate_per_gpu_hour = 0;
  int64_t gpus = 0;
  Seconds mtbf;     // of the job: 1 / (rate x GPUs)
  Seconds cost;     // delta: the time training stops to write one checkpoint
  Seconds restart;  // R: time to load it back after a failure
  /// An asynchronous save: the write after the staging copy, in the background. A failure
  /// during it loses that save: it adds to the work lost per failure. 0 when synchronous.
  Seconds background;
  /// The background write is longer than the interval the staging cost alone would give: each
  /// save would wait for the previous one, so the interval is priced as a synchronous write.
  bool backed_up = false;
  Seconds young;             // sqrt(2 delta M)
  Seconds daly;              // Daly's higher-order estimate (the one recommended)
  double lost_fraction = 0;  // delta/tau + (tau/2 + R)/M at tau = daly
  double gpu_hours_lost_per_day = 0;
  double checkpoints_per_day = 0;
};

struct CheckpointPlan {
  CheckpointSizes sizes;
  CheckpointTimes times;
  CheckpointInterval interval;
  /// Why there are no times nor interval (the cluster has no storage level): the sizes need
  /// no storage, so they are still given. "" when timed.
  std::string untimed_reason;
  bool timed() const { return untimed_reason.empty(); }
  /// The storage is another cluster file's, taken because the job names none (its GPU and
  /// GPUs per node match): an assumption the report says.
  bool storage_assumed = false;
};

/// The HF Trainer (or ms-swift's `swift sft`) under DeepSpeed with save_only_model
/// (checkpoint.optimizer false): rank 0's model.safetensors is the whole checkpoint (under
/// ZeRO-3 only with checkpoint.save_16bit_model, stage3_gather_16bit_weights_on_model_save).
bool TrainerSavesModelOnly(const Job& job);

/// Whether rank 0 also writes the whole model in the parameter dtype (model.safetensors) beside
/// the framework's sharded files: the HF Trainer (and ms-swift's `swift sft`) under DeepSpeed
/// ZeRO-1/2, and under ZeRO-3 with checkpoint.save_16bit_model.
bool WritesConsolidatedModel(const Job& job);

/// The checkpoint holds the whole model once, whatever the sharding: the totals come from the
/// model's parameter counts; the per-rank items are the busiest rank's part of the write.
CheckpointSizes ComputeCheckpointSizes(const Job& job);

/// The first storage level of the map (the shared one the job checkpoints to).
Result<CheckpointTimes> ComputeCheckpointTimes(const CheckpointSizes& sizes,
                                               const BandwidthMap& map, int64_t nodes);

/// Young's and Daly's optimal interval for checkpoint cost `cost` and restart time `restart`;
/// `background`: an asynchronous save's write after the cost, which a failure during it loses.
CheckpointInterval ComputeInterval(double failure_rate_per_gpu_hour, int64_t gpus, Seconds cost,
                                   Seconds restart, Seconds background = Seconds());

/// The cluster whose storage the job checkpoints to: `cluster_flag` (a file or a name under
/// data/clusters/), else the job's cluster file, else the shipped cluster with the job's GPU and
/// GPUs per node (`assumed`: the job says nothing of its storage).
struct StorageCluster {
  Cluster cluster;
  bool assumed = false;
};
Result<StorageCluster> CheckpointCluster(const Job& job, const std::string& cluster_flag);

/// What the storage kind adds to the write time, for the report ("" when nothing).
std::string_view StorageNote(std::string_view storage_kind);

/// The job's checkpoint settings the writing format cannot honour (checkpoint.optimizer false
/// under DeepSpeed, checkpoint.async_save outside Megatron's torch_dist and torchtitan's DCP),
/// as an error naming the field.
Status CheckCheckpointSettings(const Job& job);

/// Sizes, write and load times on the first storage level of `map`, and the interval for `rate`;
/// a map without a storage level gives the sizes alone (untimed_reason says why).
Result<CheckpointPlan> PlanCheckpoint(const Job& job, const StorageCluster& storage,
                                      const BandwidthMap& map, const FailureRate& rate);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_CHECKPOINT_H_
