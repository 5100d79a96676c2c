#include "strata/memory/error_band.h"

#include <algorithm>
#include <ranges>

namespace strata {

std::vector<std::string> EngineChain(const JobSpec& job, const FrameworkEngines& engines) {
  std::vector<std::string> chain = {job.framework.name};
  const std::string mode(ShardingModeName(job.sharding.mode));
  // The catalog's loader refuses a runs_as naming no framework; a cycle would be a data error:
  // stop after as many steps as there are wrappers.
  for (size_t step = 0; step <= engines.runs_as.size(); ++step) {
    const auto wrapper = engines.runs_as.find(chain.back());
    if (wrapper == engines.runs_as.end()) break;
    const auto by_mode = wrapper->second.find(mode);
    const auto fallback = wrapper->second.find("default");
    if (by_mode != wrapper->second.end()) {
      chain.push_back(by_mode->second);
    } else if (fallback != wrapper->second.end()) {
      chain.push_back(fallback->second);
    } else {
      break;
    }
  }
  return chain;
}

std::string EngineVersion(const JobSpec& job, const FrameworkEngines& engines,
                          const std::vector<std::string>& chain) {
  if (chain.size() == 1 && !job.framework.version.empty()) return job.framework.version;
  const auto latest = engines.latest.find(chain.back());
  return latest != engines.latest.end() ? latest->second : "";
}

std::string MemoryFamily(const JobSpec& job, const FrameworkEngines& engines) {
  const std::vector<std::string> chain = EngineChain(job, engines);
  auto runs = [&](const char* name) { return std::ranges::find(chain, name) != chain.end(); };
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
