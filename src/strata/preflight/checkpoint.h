// Checkpoints and failures (lesson 7): the size of a checkpoint in megatron's distributed format
// and as HF safetensors, the time to write and load it on the cluster's storage level of the
// bandwidth map, the interval that minimises lost time for a failure rate (Young 1974, Daly
// 2006) and the GPU-hours lost per day. Parameter and optimizer bytes come from the memory
// module (ComputeStaticMemory), never recomputed here. Formulas: docs/formulas.md, "Checkpoints".
#ifndef STRATA_PREFLIGHT_CHECKPOINT_H_
#define STRATA_PREFLIGHT_CHECKPOINT_H_

#include <string>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/job/job_validation.h"

namespace strata::preflight {

struct FailureRate {
  double per_gpu_hour = 0;
  std::string derivation;
  std::string source;
};

/// data/checkpoint/failure_rate.yaml (or `path`).
Result<FailureRate> LoadFailureRate(const std::string& path = "");

struct CheckpointSizes {
  Bytes weights_per_rank;    // what one GPU of the most loaded stage holds (param dtype)
  Bytes optimizer_per_rank;  // its master weights + Adam moments
  Bytes weights_total;       // every parameter once (replicas over DP are written once)
  Bytes optimizer_total;     // every optimizer state once
  int64_t world = 0;
  Bytes megatron_total() const { return weights_total + optimizer_total; }
  /// Megatron's fully parallel save spreads the unique shards evenly over the ranks.
  Bytes megatron_per_rank() const { return megatron_total() / static_cast<double>(world); }
  /// HF safetensors hold the weights only (in the parameter dtype).
  Bytes hf_total() const { return weights_total; }
};

struct CheckpointTimes {
  std::string storage;      // the storage level's name, e.g. "NFS"
  BytesPerSecond per_node;  // one client node's storage bandwidth
  int64_t nodes = 0;
  Seconds megatron_write;  // every node writes its share at once: total / (nodes x per_node)
  Seconds megatron_load;   // the same volume read back
  Seconds hf_write;        // one writer (rank 0) writes every shard: total / per_node
  Seconds hf_load;         // every node reads the whole model at once: total / per_node
};

struct CheckpointInterval {
  double failure_rate_per_gpu_hour = 0;
  int64_t gpus = 0;
  Seconds mtbf;              // of the job: 1 / (rate x GPUs)
  Seconds cost;              // delta: the time training stops to write one checkpoint
  Seconds restart;           // R: time to load it back after a failure
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
};

CheckpointSizes ComputeCheckpointSizes(const Job& job);

/// The first storage level of the map (the shared one the job checkpoints to).
Result<CheckpointTimes> ComputeCheckpointTimes(const CheckpointSizes& sizes,
                                               const BandwidthMap& map, int64_t nodes);

/// Young's and Daly's optimal interval for checkpoint cost `cost` and restart time `restart`.
CheckpointInterval ComputeInterval(double failure_rate_per_gpu_hour, int64_t gpus, Seconds cost,
                                   Seconds restart);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_CHECKPOINT_H_
