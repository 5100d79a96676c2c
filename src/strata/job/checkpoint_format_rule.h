// Which format a framework's saving code writes a checkpoint in, by the sharding runtime that
// runs the job (data/frameworks.yaml `checkpoint_format:`): read once into FrameworkEngines,
// resolved once per sharding mode into the ResolvedJob, and turned into sizes and write times by
// preflight/checkpoint.h. A wrapper that does not state a runtime's format takes the chain's
// next statement (ms-swift under zero1 saves as megatron-core does).
#ifndef STRATA_JOB_CHECKPOINT_FORMAT_RULE_H_
#define STRATA_JOB_CHECKPOINT_FORMAT_RULE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/training_modes.h"

namespace strata {

/// What a framework's save writes (data/frameworks.yaml spells them in parentheses):
///   kTorchDist       megatron-core's dist_checkpointing, torch_dist (torch_dist)
///   kDcp             torch.distributed.checkpoint, every rank its shards (dcp)
///   kDeepSpeed       DeepSpeed's engine.save_checkpoint files (deepspeed)
///   kHfSafetensors   rank 0's model.safetensors + optimizer.pt, the HF Trainer's own
///                    (hf_safetensors)
///   kVerlFsdp        verl's FSDP checkpoint manager, one file per rank (verl_fsdp)
///   kAccelerateFsdp  accelerate's save_fsdp_model / save_fsdp_optimizer: DCP under its
///                    SHARDED_STATE_DICT, rank 0's gathered files under FULL_STATE_DICT (the
///                    job's checkpoint.state_dict decides) (accelerate_fsdp)
///   kUnstated        no framework on the chain states one for the runtime
enum class SavedFormat {
  kUnstated,
  kTorchDist,
  kDcp,
  kDeepSpeed,
  kHfSafetensors,
  kVerlFsdp,
  kAccelerateFsdp
};
std::string_view SavedFormatName(SavedFormat format);

/// One framework's `checkpoint_format:`: by runtime ("none" for a job no sharding runtime
/// runs: DDP; "default" for the runtimes not listed); a scalar applies to every runtime.
using CheckpointFormatRule = std::map<ShardingRuntime, SavedFormat>;

/// `entry`'s `checkpoint_format:` (a format name, or {runtime: format, ..., source}); an
/// unknown runtime or format names the field and what it accepts.
Result<CheckpointFormatRule> ParseCheckpointFormatRule(YamlMap& entry);

/// The format under a chain (the framework named first, its engine last) for `runtime`: the
/// first framework whose rule covers the runtime decides, and `rule` says which.
struct CheckpointFormatDefault {
  SavedFormat format = SavedFormat::kUnstated;
  std::string rule;  // "" when none states one
};
CheckpointFormatDefault ResolveCheckpointFormatRule(
    const std::map<std::string, CheckpointFormatRule>& rules, const std::vector<std::string>& chain,
    ShardingRuntime runtime);

}  // namespace strata

#endif  // STRATA_JOB_CHECKPOINT_FORMAT_RULE_H_
