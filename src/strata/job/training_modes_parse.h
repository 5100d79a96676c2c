// Reading and checking the job file's training-mode sections (`sharding:`, `fp8:`); the types
// are in training_modes.h.
#ifndef STRATA_JOB_TRAINING_MODES_PARSE_H_
#define STRATA_JOB_TRAINING_MODES_PARSE_H_

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/job_spec.h"
#include "strata/job/pipeline_split.h"
#include "strata/model/model_config.h"

namespace strata {

/// Reads `sharding:` and `fp8:` from the top-level mapping into `job` and applies the rules
/// that need no model (offload only where the sharding mode supports it, `optimizer.distributed`
/// agreeing with the mode). Without `sharding:`, the mode follows `optimizer.distributed`.
Status ParseTrainingModes(YamlMap& top, JobSpec& job);

/// Reads `recompute.modules: [core_attn, moe_act, ...]` (granularity selective only).
Status ParseRecomputeModules(YamlMap& recompute, JobSpec& job);

/// Reads torchtitan's `recompute.selective_ac_option: op | N` (granularity selective only; not
/// with `modules`).
Status ParseTitanSelectiveAc(YamlMap& recompute, JobSpec& job);

/// The rules that need the derived layout or the model: HSDP's replicate degree dividing the
/// data-parallel groups, the pipeline split and schedule (pipeline_split.h), `precision.params:
/// fp8` refused.
Status CheckTrainingModes(const JobSpec& job, const ModelConfig& model);

}  // namespace strata

#endif  // STRATA_JOB_TRAINING_MODES_PARSE_H_
