// The one job every view reads. `ResolveJob` turns what the user gave (a job file or catalog
// name, and/or a model, plus `--set key=value` overrides) into everything a view needs: the
// model's architecture, the cluster with its GPU, the validated parallel layout (DP derived,
// sequence parallelism on or off), the step's shape and, when given, the measured throughput.
// `memory`, `mfu`, `map` (and every later command) call it with the same arguments and so see
// the same job, the same defaults and the same validation.
#ifndef STRATA_JOB_RESOLVED_JOB_H_
#define STRATA_JOB_RESOLVED_JOB_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/hw/cluster.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/engine_chain.h"
#include "strata/job/job_spec.h"
#include "strata/job/parallel_layout.h"
#include "strata/job/query_group_split.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"

namespace strata {

/// The shape of one optimizer step (the micro and global batch are the spec's: spec.micro_batch,
/// spec.global_batch).
struct StepShape {
  int64_t micro_batches = 1;  // per DP rank per step: global / (micro x DP)
  /// The sample lengths: max sizes the activations, E[S^2]/E[S] the attention FLOPs, the mean
  /// the tokens.
  SequenceLengths sequence;
  double tokens_per_step = 0;  // global batch x mean sample length
};

/// Measured (or planned) speed of the job, when the job or the command line gives it.
struct Throughput {
  double tokens_per_s = 0;     // whole job
  double tokens_per_step = 0;  // 0 when only a rate was given
  double step_time_s = 0;      // 0 when only a rate was given
};

/// What the user asked for, as they wrote it: repeated verbatim in advice so that a suggested
/// command can be pasted.
struct JobRequest {
  std::string job;                     // a job file or data/jobs/ name; "" = none given
  std::string model;                   // --model: a catalog name or config.json; "" = the job's
  std::vector<std::string> overrides;  // --set key=value, in order
  /// --from: a launch command, Megatron log, args.json, TOML, DeepSpeed or verl file the job is
  /// imported from (cli/job_options.h resolves it; the job module cannot read those formats).
  std::string from;
  /// JobSpec::micro_batches_by_packing for the resolved job (the RL actor's dynamic batch).
  bool micro_batches_by_packing = false;
  bool empty() const { return job.empty() && model.empty() && overrides.empty() && from.empty(); }
};

struct ResolvedJob {
  JobSpec spec;       // the job as written, --set applied, DP derived; its layout validated
  ModelConfig model;  // the architecture the spec names
  Cluster cluster;    // the cluster file's, or one built from cluster.gpu/nodes
  StepShape step;
  std::optional<Throughput> throughput;
  /// Whose Gated DeltaNet the framework builds and whether TP splits it (job/engine_chain.h);
  /// empty for a job built in code (split, as megatron-core's).
  GdnPlacement gdn;
  /// How the engine under each sharding mode (indexed by ShardingMode) splits the KV heads
  /// over TP (job/query_group_split.h): a layout search may change the mode. megatron-core's
  /// for a job built in code, as `gdn`.
  std::array<QueryGroupSplit, kShardingModeCount> query_groups_by_mode = [] {
    std::array<QueryGroupSplit, kShardingModeCount> all{};
    all.fill(QueryGroupSplit::kMultipleOrDivisor);
    return all;
  }();
  /// Whether the engine under each sharding mode trains through megatron-core (its schedules
  /// and training arguments' defaults apply); true for a job built in code, as `gdn`.
  std::array<bool, kShardingModeCount> megatron_core_by_mode = [] {
    std::array<bool, kShardingModeCount> all{};
    all.fill(true);
    return all;
  }();
  /// Whose code runs the sharding under each mode (job/engine_chain.h,
  /// ResolveJobShardingRuntime): the one answer to "does DeepSpeed run it?" that memory, step,
  /// plan, checkpoint and rl read. Unstated (not DeepSpeed) for a job built in code.
  std::array<ShardingRuntime, kShardingModeCount> runtime_by_mode{};
  /// What the pipeline engine under each sharding mode runs (job/pipeline_rules.h): its
  /// schedules and the micro batches its looped schedules accept. None known (no rule) for a
  /// job built in code.
  std::array<ChainPipelineRule, kShardingModeCount> pipeline_by_mode{};
  /// The framework's FSDP2 unit layout (ResolveFsdp2Units): what sharding.fsdp_units is when
  /// the job does not give it.
  Fsdp2UnitsDefault fsdp2_units;
  /// The framework's gradient sync under accumulation (ResolveAccumulationSync): what
  /// sharding.sync_each_micro_batch is when the job does not give it.
  AccumulationSyncDefault accumulation_sync;
  /// The format the framework's save writes under each sharding mode, for that mode's runtime
  /// (data/frameworks.yaml checkpoint_format; kUnstated where no framework on the chain states
  /// one: preflight/checkpoint.h then goes by the engine and runtime).
  std::array<CheckpointFormatDefault, kShardingModeCount> checkpoint_format_by_mode{};
  /// The framework's reduce bucket under each sharding mode (ResolveReduceBucket).
  std::array<ReduceBucketDefault, kShardingModeCount> reduce_bucket_by_mode{};
  /// And what it refuses of the EP all-to-all overlap (job/overlap_rules.h).
  std::array<ChainMoeA2aOverlapRule, kShardingModeCount> moe_a2a_overlap_by_mode{};
  JobRequest request;      // how it was asked for (empty for a job built in code)
  bool reference = false;  // the built-in reference job, chosen because nothing was given

  // Each fact is held once: the GPU in the cluster, the layout and the batch in the spec.
  const GpuSpec& gpu() const { return cluster.gpu; }
  const ParallelLayout& layout() const { return spec.layout; }
  int64_t world() const { return spec.layout.world(); }
  /// Whether the engine under `mode` trains through megatron-core.
  bool RunsMegatronCore(ShardingMode mode) const {
    return megatron_core_by_mode[static_cast<size_t>(mode)];
  }
  /// Whose code runs the sharding under `mode`, and under the spec's own mode.
  ShardingRuntime RuntimeOf(ShardingMode mode) const {
    return runtime_by_mode[static_cast<size_t>(mode)];
  }
  ShardingRuntime runtime() const { return RuntimeOf(spec.sharding.mode); }
  /// Whether DeepSpeed's ZeRO runs the sharding under `mode`.
  bool RunsDeepSpeed(ShardingMode mode) const {
    return RuntimeOf(mode) == ShardingRuntime::kDeepSpeed;
  }
  /// DeepSpeed's reduce_bucket_size under the spec's sharding mode: the job's when it gives
  /// one, else the framework's (reduce_bucket_by_mode: its number, or hidden_size^2 where its
  /// config says "auto"); ReduceBucketRule says which.
  double ReduceBucketElements() const {
    if (spec.sharding.reduce_bucket_elements_given) return spec.sharding.reduce_bucket_elements;
    const ReduceBucketDefault& d = reduce_bucket_by_mode[static_cast<size_t>(spec.sharding.mode)];
    const auto hidden = static_cast<double>(model.hidden_size);
    return d.auto_hidden_squared ? hidden * hidden : d.elements;
  }
  std::string ReduceBucketRule() const {
    return spec.sharding.reduce_bucket_elements_given
               ? std::string("the job's sharding.reduce_bucket_elements")
               : reduce_bucket_by_mode[static_cast<size_t>(spec.sharding.mode)].rule;
  }
  /// The checkpoint format under the spec's sharding mode.
  const CheckpointFormatDefault& checkpoint_format() const {
    return checkpoint_format_by_mode[static_cast<size_t>(spec.sharding.mode)];
  }
  /// The KV-head split under the spec's sharding mode.
  QueryGroupSplit query_groups() const {
    return query_groups_by_mode[static_cast<size_t>(spec.sharding.mode)];
  }
  /// "strata memory job.yaml --set a=1 --set b=2": the user's own command with `extra` --set
  /// flags appended (an extra key replaces the user's value for the same key).
  std::string CommandLine(std::string_view command,
                          const std::vector<std::string>& extra = {}) const;
};

/// The name the older code used; the same type.
using Job = ResolvedJob;

/// The reference job only when the request is empty. A model without a job file must name a
/// cluster, a layout, a batch and a sequence (`--set`): the error lists what is missing.
Result<ResolvedJob> ResolveJob(const JobRequest& request);

/// Loads the model, the cluster and its GPU the spec names and runs every rule.
Result<ResolvedJob> ResolveJob(const JobSpec& spec);

/// The same with the model already parsed (an imported job whose model came as Megatron
/// arguments, not as a file): spec.model is kept as its name only.
Result<ResolvedJob> ResolveJobWithModel(const JobSpec& spec, ModelConfig model);

/// The same with data/frameworks.yaml's engines already loaded (the versions above load them).
Result<ResolvedJob> ResolveJobWithModel(const JobSpec& spec, ModelConfig model,
                                        const FrameworkEngines& engines);

/// After a change to `job.spec` (what-if advice, layout search): runs every rule again and
/// refreshes the derived fields (layout with DP, step shape, throughput) without reading any
/// file. The sequence lengths are kept.
Status RederiveJob(ResolvedJob& job);

}  // namespace strata

#endif  // STRATA_JOB_RESOLVED_JOB_H_
