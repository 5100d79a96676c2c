#include "strata/memory/error_band.h"

#include <algorithm>
#include <ranges>

#include "strata/job/engine_chain.h"

namespace strata {

std::string MemoryFamily(const JobSpec& job, const FrameworkEngines& engines) {
  const EngineChain chain = ResolveEngineChain(engines, job.framework, job.sharding.mode);
  auto runs = [&](const char* name) { return chain.Runs(name); };
  const ShardingMode mode = job.sharding.mode;
  // Whose code shards decides before the mode's name: ZeRO-2/3 run by PyTorch's FSDP (Accelerate's
  // fsdp_version, verl's actor strategy) hold what FSDP holds, not what DeepSpeed does.
  const ShardingRuntime runtime = ResolveJobShardingRuntime(engines, job, mode);
  if (mode == ShardingMode::kFsdp2 || runs("torchtitan") || runtime == ShardingRuntime::kFsdp2) {
    return "fsdp2";
  }
  if (runs("megatron-core")) return "megatron";
  // FSDP1 (FullyShardedDataParallel) has no measured rows of its own yet: its own name, so the
  // ledger prints that the default band stands in for it.
  if (runtime == ShardingRuntime::kFsdp1) return "fsdp1";
  if (mode == ShardingMode::kZero2 || mode == ShardingMode::kZero3 ||
      (runs("deepspeed") && mode != ShardingMode::kNone)) {
    return "deepspeed";
  }
  if (runs("hf-trainer")) return "hf_trainer";
  return "default";
}

const MemoryErrorBand& BandFor(const MemoryConstants& constants, const std::string& family) {
  auto it = constants.error_bands.find(family);
  if (it != constants.error_bands.end() && !it->second.rows.empty()) return it->second;
  return constants.error_bands.at("default");
}

double RowError(const ValidationPoint& p) { return (p.predicted - p.measured) / p.measured; }

MemoryErrorBand DeriveErrorBand(const std::string& family,
                                const std::vector<ValidationPoint>& rows) {
  MemoryErrorBand band;
  band.family = family;
  for (const ValidationPoint& p : rows) {
    const double error = RowError(p);
    band.lowest = band.rows.empty() ? error : std::min(band.lowest, error);
    band.highest = band.rows.empty() ? error : std::max(band.highest, error);
    band.rows.push_back(p.row);
  }
  return band;
}

}  // namespace strata
