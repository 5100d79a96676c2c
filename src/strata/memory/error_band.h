// The memory ledger's error band per framework family: each family's lowest and highest error
// on its measured rows (docs/memory-validation.md), read from data/memory_overheads.yaml,
// `model_error`. The rows will be re-derived from a larger corpus: DeriveErrorBand is the one
// derivation, which tests/memory/validation_test.cc recomputes from the table.
#ifndef STRATA_MEMORY_ERROR_BAND_H_
#define STRATA_MEMORY_ERROR_BAND_H_

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/memory/memory_constants.h"

namespace strata {

/// The family whose band applies to a job, from the frameworks it trains through
/// (job/engine_chain.h) and whose code runs its sharding: "fsdp2" (sharding fsdp2, torchtitan, or
/// ZeRO-2/3 run by fully_shard), "megatron" (megatron-core's code: megatron-core,
/// megatron-bridge, ms-swift or verl under zero1), "fsdp1" (ZeRO-2/3 run by PyTorch's
/// FullyShardedDataParallel; no rows of its own yet), "deepspeed" (ZeRO-2/3 run by DeepSpeed, or
/// DeepSpeed's code with any sharding), "hf_trainer" (the HF Trainer's code otherwise),
/// "default" when none of them runs.
std::string MemoryFamily(const JobSpec& job, const FrameworkEngines& engines);

/// The family's band, or the default band when the family has no rows of its own yet.
const MemoryErrorBand& BandFor(const MemoryConstants& constants, const std::string& family);

/// One measured row: the device-used prediction and the measurement, in the same unit.
struct ValidationPoint {
  std::string row;  // "MS-03"
  double predicted = 0;
  double measured = 0;
};
/// (predicted - measured) / measured.
double RowError(const ValidationPoint& p);
/// The lowest and highest RowError over `rows`, and their names.
MemoryErrorBand DeriveErrorBand(const std::string& family,
                                const std::vector<ValidationPoint>& rows);

}  // namespace strata

#endif  // STRATA_MEMORY_ERROR_BAND_H_
