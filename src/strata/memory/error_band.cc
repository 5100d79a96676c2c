#include "strata/memory/error_band.h"

#include <algorithm>
#include <ranges>

namespace strata {

std::string MemoryFamily(const JobSpec& job, const FrameworkEngines& engines) {
  const EngineChain chain = ResolveEngineChain(engines, job.framework, job.sharding.mode);
  auto runs = [&](const char* name) { return chain.Runs(name); };
  const ShardingMode mode = job.sharding.mode;
  if (mode == ShardingMode::kFsdp2 || runs("torchtitan")) return "fsdp2";
  if (runs("megatron-core")) return "megatron";
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
