// One RL step of an RL job, end to end: the actor's training job resolved at the RL batch
// (ResolveJob), its memory ledger and step model (update, and the forward passes that compute
// log-probabilities), the rollout's memory and generation time (rollout.h), the weight sync, and
// the placements: colocated (verl's hybrid engine) and every split between rollout and training
// that verl can place (whole nodes, or the same share of every node: split_shape.h),
// synchronous and one-step-off-policy. Formulas: docs/rl.md.
#ifndef STRATA_RL_RL_STEP_H_
#define STRATA_RL_RL_STEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/eval/workspace.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/rl/kv_cache.h"
#include "strata/rl/micro_batch.h"
#include "strata/rl/rl_constants.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rollout.h"
#include "strata/rl/split_shape.h"

namespace strata {

/// The weight sync after each update: gather every tensor whole across the training layout,
/// convert it to the rollout's names and layout, move it (CUDA IPC when colocated; NCCL when
/// split, over the link the two sides share: the node's GPU link when both are in one node, the
/// data NICs when the rollout has GPUs on other nodes) and load it into each rollout GPU.
struct WeightSync {
  Bytes model_bytes;  // the whole model in the rollout dtype
  Seconds gather;     // (1 - 1/shards) of the model over NVLink
  Seconds convert;    // model bytes at the calibrated conversion rate
  Seconds transfer;   // 0 colocated (IPC handles); split: model bytes over `link` at `rate`
  Seconds load;       // each rollout GPU writes its share at HBM speed
  Seconds total;
  std::string link;     // split: "NVSwitch (NVLink4) inside the node", "the data NICs of a node"
  BytesPerSecond rate;  // split: the transfer's rate (per GPU on the node's link, per node on NICs)
};

/// One host <-> GPU copy of an offloaded state, one step on one GPU.
struct OffloadCopy {
  std::string what;  // "actor weights: up and down around the weight sync, ..."
  Bytes bytes;       // both directions together
  Seconds time;
};

/// What verl's offload settings move over PCIe each step on one GPU: each role's states loaded
/// before its pass and offloaded after (docs/rl.md, "Offload transfers").
struct OffloadTransfers {
  std::string level;    // the bandwidth-map level: "PCIe Gen5 x16"
  BytesPerSecond rate;  // its per-direction rate per GPU
  std::vector<OffloadCopy> copies;
  Bytes bytes;
  Seconds total;
};

struct RlTimes {
  Seconds generation;
  Seconds old_log_prob;
  Seconds reference;
  Seconds critic_values;  // PPO: the critic's forward over every sample (its values)
  Seconds update;
  Seconds update_cp_a2a;  // of `update`: the Ulysses (a2a CP) all-to-alls, exposed (0 without)
  Seconds critic_update;  // PPO: the critic's forward and backward, mini batches x epochs
  Seconds weight_sync;
  Seconds offload;  // host <-> GPU copies of the offloaded states (OffloadTransfers)
  Seconds idle;     // split: the GPU-time each side waits for the other, averaged over all GPUs
  Seconds step;
};

struct RlPhaseMemory {
  std::string phase;
  Bytes bytes;
  std::string items;  // what adds up to it
};

/// One placement evaluated: colocated, or `rollout_gpus` generating and the rest training.
struct RlPlacementResult {
  RlPlacement placement = RlPlacement::kColocated;
  bool one_step_off = false;  // split: generation of step k+1 overlaps training on step k
  int64_t rollout_gpus = 0;
  int64_t train_gpus = 0;
  SplitShape shape;  // split: where each side runs
  bool valid = false;
  std::string reason;  // why not, when !valid
  RlTimes times;
  GenerationTime generation;
  RolloutMemory rollout_memory;
  WeightSync sync;
  OffloadTransfers offload;                 // on the training GPUs (colocated: every GPU)
  Bytes train_peak;                         // the actor's ledger peak on the training GPUs
  std::vector<RlPhaseMemory> train_phases;  // split: each pass's peak on the training GPUs
  /// split: the actor's layout on the training GPUs (DP over them), where that side runs.
  std::optional<ParallelLayout> train_layout;
};

/// The training side's time in a step: the forward passes, the updates and the offload copies.
Seconds TrainingOf(const RlTimes& t);

/// The GPUs a placement holds: every GPU does both when colocated, each side its own when split.
int64_t PlacementGpus(const RlPlacementResult& r);

/// A part's share of the step's GPU time (step x PlacementGpus): `gpus` of them busy for `time`.
/// Generation runs on the rollout GPUs, the training passes on the training GPUs, the weight
/// sync and the idle time (averaged over all GPUs) on all: the shares add up to 1.
double GpuTimeShare(const RlPlacementResult& r, Seconds time, int64_t gpus);

/// One pass's packing under verl's dynamic batch (batch.max_tokens_per_gpu).
struct RlMicroBatch {
  std::string pass;  // "actor update", "log-prob passes", "critic update", "critic values"
  PackedMicroBatches packed;
  bool per_mini_batch = true;  // false: the pass takes every sample of the step at once
};

/// One decode step of the colocated rollout, repriced on another GPU at the same batch, context
/// and efficiencies: why a bandwidth-rich, compute-poor part (H20) decodes well.
struct GpuDecode {
  std::string gpu;
  DecodeStep step;
  double tokens_per_s_per_gpu = 0;   // batch / TP / step time
  double tokens_per_s_per_watt = 0;  // over the GPU's TDP
};

/// What bounds the step of the best split once rollout GPUs are added: the training side (the
/// longer side one step off, or the one that grows as it loses GPUs), the longest sample's
/// decode (generation's floor, however many instances), or the weight sync (it grows when the
/// rollout spreads over more nodes).
struct SplitLimit {
  int next = -1;  // index into splits: the next valid split, more rollout GPUs, same pipeline
  Seconds longest_sample;  // response_max decode steps alone (batch 1): generation's floor
  std::string bound;       // "the training side", "the longest sample's decode", "the weight sync"
};

struct RlEvaluation {
  RlSpec spec;
  ResolvedJob actor;  // the actor's job at the RL batch, on every GPU (colocated); under the
                      // dynamic batch, at the update's packed micro batch
  std::vector<RlMicroBatch> micro_batches;  // dynamic batch: each pass's packing (colocated)
  int64_t fixed_micro_batch = 1;            // the actor's job's batch.micro_batch (samples)
  MemoryLedger ledger;
  KvFootprint kv;
  RlPlacementResult configured;  // the placement the job asks for
  RlPlacementResult colocated;
  std::vector<RlPlacementResult> splits;  // every split verl can place, sync and one-step-off
  int best_split = -1;                    // index into splits of the shortest valid step
  SplitLimit split_limit;                 // why the best split has no more rollout GPUs
  std::vector<RlPhaseMemory> phases;      // colocated, per GPU
  Bytes host_offload_per_node;            // what offload keeps in host memory, per node
  std::string fix;       // when the rollout does not fit: the smallest change that does
  std::string fix_note;  // why that value: the one given and the range that fits
  RlConstants constants;
  DecodeInput decode;   // the colocated rollout's decode step (batch, context set)
  Interconnects links;  // the workspace's: CompareDecode reprices the TP all-reduces with them
};

/// The colocated decode step on each named GPU (data/gpus.yaml), the job's own GPU first.
Result<std::vector<GpuDecode>> CompareDecode(const RlEvaluation& e,
                                             const std::vector<std::string>& gpus);

/// Evaluates the RL job. Errors: the actor's job or the constants cannot be read, or the
/// actor's layout is invalid at the RL batch.
Result<RlEvaluation> EvaluateRl(const Workspace& workspace, const RlSpec& spec);

}  // namespace strata

#endif  // STRATA_RL_RL_STEP_H_
