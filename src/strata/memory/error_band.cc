#include "strata/memory/error_band.h"

#include <algorithm>

namespace strata {

std::string MemoryFamily(const JobSpec& job) {
  const std::string& name = job.framework.name;
  const ShardingMode mode = job.sharding.mode;
  if (mode == ShardingMode::kFsdp2 || name == "torchtitan") return "fsdp2";
  // data/frameworks.yaml, runs_as: ms-swift and verl train megatron-core models under zero1.
  const bool megatron_path = (name == "ms-swift" || name == "verl") && mode == ShardingMode::kZero1;
  if (name == "megatron-core" || name == "megatron-bridge" || megatron_path) return "megatron";
  if (name == "deepspeed" || mode == ShardingMode::kZero2 || mode == ShardingMode::kZero3) {
    return "deepspeed";
  }
  if (name == "hf-trainer" || name == "verl") return "hf_trainer";
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
