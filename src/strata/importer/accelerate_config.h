// Hugging Face Accelerate's launch configuration (`accelerate launch --config_file x.yaml`, or the
// YAML `accelerate config` writes): the cluster (num_machines, num_processes), the mixed
// precision and the distributed plugin (FSDP 1 or 2, DeepSpeed ZeRO, DDP) of an HF Trainer or
// TRL job. Its keys are kept in the settings as "accelerate.<key>", so the HF Trainer mapper
// reads them and every key it does not use is listed with its file and line.
#ifndef STRATA_IMPORTER_ACCELERATE_CONFIG_H_
#define STRATA_IMPORTER_ACCELERATE_CONFIG_H_

#include "strata/core/result.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/settings.h"

namespace strata {

/// A YAML read into settings is an Accelerate config: it names distributed_type (every file
/// `accelerate config` writes and every template does).
bool IsAccelerateConfig(const Settings& yaml);

/// Copies an Accelerate config's keys into `s` as "accelerate.<key>"; keys already there (given
/// on accelerate launch's command line) win, as in accelerate's own launcher.
void AddAccelerateConfig(const Settings& yaml, Settings& s);

/// accelerate launch's own flags (--num_processes 4, --use_fsdp, --zero_stage 3) as the config
/// keys they override, into `s` as "accelerate.<key>".
void AddAccelerateLaunchFlags(const Settings& flags, Settings& s);

/// The cluster and precision an Accelerate config gives, before the HF Trainer mapper reads
/// the rest: num_machines and num_processes (the total) -> nodes and GPUs per node,
/// mixed_precision -> bf16/fp16 unless the script's arguments say, the DeepSpeed plugin's
/// zero_stage and offload devices -> the ds.* keys of a DeepSpeed JSON. Does nothing without
/// accelerate.distributed_type.
Status MapAccelerateLaunch(Settings& s, JobBuilder& job);

/// The FSDP plugin's sharding (fsdp_version, fsdp_sharding_strategy or fsdp_reshard_after_forward,
/// fsdp_offload_params, fsdp_activation_checkpointing), and DDP's replicated state, over what
/// the HF Trainer mapper set; after it, before the common fields.
Status MapAccelerateSharding(Settings& s, JobBuilder& job);

}  // namespace strata

#endif  // STRATA_IMPORTER_ACCELERATE_CONFIG_H_
