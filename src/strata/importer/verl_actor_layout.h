// What verl's actor workers read of the launch for the actor's layout beyond the parallel
// sizes: the FSDP device mesh (fsdp_size), which recompute key a megatron actor obeys and what
// its DDP config overrides.
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

/// A megatron actor's actor.megatron.override_ddp_config, which verl merges into megatron-core's
/// DDP config: grad_reduce_in_fp32 (precision.grads), overlap_grad_reduce, overlap_param_gather
/// and use_distributed_optimizer mapped; every other key noted as read and not modelled.
Status MapVerlDdpOverrides(Settings& s, JobBuilder& job);

/// The FSDP actor's fsdp_config.fsdp_size over `world` training GPUs: HSDP when
/// 0 < fsdp_size < world, written as sharding.replicate = job_gpus / fsdp_size (the job's GPUs,
/// the rollout's too under the one-step-off recipe: each side keeps groups of fsdp_size).
Status MapVerlFsdpSize(Settings& s, JobBuilder& job, int64_t world, int64_t job_gpus);

}  // namespace strata

#endif  // STRATA_IMPORTER_VERL_ACTOR_LAYOUT_H_
