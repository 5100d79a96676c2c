// The argument files ms-swift saves in its output directory, read as the HF Trainer mapper's
// settings. ms-swift 3.x writes `args.json` with the HF names (per_device_train_batch_size) plus
// its own world size; ms-swift 1.x wrote `sft_args.json` with names of its own (batch_size,
// sft_type, a registry model id) and the HF `training_args.json` beside it.
#ifndef STRATA_IMPORTER_SWIFT_SAVED_ARGS_H_
#define STRATA_IMPORTER_SWIFT_SAVED_ARGS_H_

#include <filesystem>

#include "strata/core/result.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/settings.h"

namespace strata {

/// An ms-swift 1.x `sft_args.json`: sft_type and batch_size, no HF batch name.
bool IsSwiftV1SftArgs(const Settings& s);

/// Renames the 1.x keys to the names the HF Trainer mapper reads (batch_size ->
/// per_device_train_batch_size, sft_type -> train_type, model_type -> swift_model_id), adds the
/// keys of the `training_args.json` saved in `dir` that the file lacks, and takes the world size
/// from its `distributed_state`. A missing sibling is not an error: the file alone is read.
Status NormaliseSwiftV1SftArgs(Settings& s, const std::filesystem::path& dir, JobBuilder& job);

/// ms-swift 3.x saves the world it ran on (local_world_size, global_world_size): the cluster's
/// GPUs per node and nodes, unless the strata command gives them.
void ReadSwiftWorldSize(Settings& s, JobBuilder& job);

}  // namespace strata

#endif  // STRATA_IMPORTER_SWIFT_SAVED_ARGS_H_
