// What verl's actor workers read of the launch for the actor's layout beyond the parallel
// sizes: the FSDP device mesh (fsdp_size) and which recompute key a megatron actor obeys.
#ifndef STRATA_IMPORTER_VERL_ACTOR_LAYOUT_H_
#define STRATA_IMPORTER_VERL_ACTOR_LAYOUT_H_

#include <cstdint>

#include "strata/core/result.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/settings.h"

namespace strata {

/// A megatron actor's model.enable_gradient_checkpointing, noted as not read (its recompute is
/// override_transformer_config's); the pre-2025-07-22 gradient_checkpointing_kwargs refused.
Status NoteMegatronIgnoresGradientCheckpointing(Settings& s, JobBuilder& job);

/// The FSDP actor's fsdp_config.fsdp_size over `world` training GPUs: HSDP when
/// 0 < fsdp_size < world, written as sharding.replicate = job_gpus / fsdp_size (the job's GPUs,
/// the rollout's too under the one-step-off recipe: each side keeps groups of fsdp_size).
Status MapVerlFsdpSize(Settings& s, JobBuilder& job, int64_t world, int64_t job_gpus);

}  // namespace strata

#endif  // STRATA_IMPORTER_VERL_ACTOR_LAYOUT_H_
