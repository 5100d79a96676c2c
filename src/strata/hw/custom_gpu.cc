#include "strata/hw/custom_gpu.h"

#include <fmt/format.h>

namespace strata {
namespace {

Result<FlopPerSecond> RateField(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto rate = ParseFlopRate(text);
  if (!rate.ok()) return map.ErrorAt(key, rate.error().message).WithHint(rate.error().hint);
  if (rate->value() <= 0) return map.ErrorAt(key, "expected a positive rate, e.g. 989TFLOP/s");
  return *rate;
}

}  // namespace

Result<GpuSpec> ReadGpuField(YamlMap& parent, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, parent.Node(key));
  if (node.IsScalar()) {
    auto gpu = FindGpu(node.Scalar());
    if (!gpu.ok()) return parent.ErrorAt(key, gpu.error().message).WithHint(gpu.error().hint);
    return *gpu;
  }
  STRATA_ASSIGN_OR_RETURN(YamlMap m, parent.Map(key));
  GpuSpec gpu;
  const std::string given = fmt::format("given in {}", m.file().empty() ? "the job" : m.file());
  if (m.Has("base")) {
    STRATA_ASSIGN_OR_RETURN(std::string base, m.String("base"));
    auto found = FindGpu(base);
    if (!found.ok()) return m.ErrorAt("base", found.error().message).WithHint(found.error().hint);
    gpu = *found;
    gpu.name += " (custom)";
    gpu.aliases.clear();
  } else {
    for (const char* required : {"name", "memory", "hbm_bandwidth", "bf16_dense"}) {
      if (!m.Has(required)) {
        return m.ErrorAt("", fmt::format("a GPU without 'base' needs '{}'", required))
            .WithHint(
                "derive from the catalog instead: base: H100-SXM, then the values that "
                "differ");
      }
    }
  }
  if (m.Has("name")) {
    STRATA_ASSIGN_OR_RETURN(gpu.name, m.String("name"));
    if (gpu.name.empty()) return m.ErrorAt("name", "expected a non-empty GPU name");
  }
  if (m.Has("memory")) {
    STRATA_ASSIGN_OR_RETURN(gpu.memory, m.Size("memory"));
    if (gpu.memory.value() <= 0) return m.ErrorAt("memory", "expected a positive memory size");
    gpu.sources["memory"] = given;
  }
  if (m.Has("hbm_bandwidth")) {
    STRATA_ASSIGN_OR_RETURN(gpu.hbm_bandwidth, m.Bandwidth("hbm_bandwidth"));
    if (gpu.hbm_bandwidth.value() <= 0)
      return m.ErrorAt("hbm_bandwidth", "expected a positive bandwidth");
    gpu.sources["hbm_bandwidth"] = given;
  }
  const std::pair<const char*, FlopPerSecond*> rates[] = {{"bf16_dense", &gpu.bf16_dense},
                                                          {"fp16_dense", &gpu.fp16_dense},
                                                          {"fp8_dense", &gpu.fp8_dense},
                                                          {"tf32_dense", &gpu.tf32_dense}};
  for (const auto& [field, target] : rates) {
    if (m.Has(field)) {
      STRATA_ASSIGN_OR_RETURN(*target, RateField(m, field));
      gpu.sources[field] = given;
    }
  }
  if (m.Has("power_w")) {
    STRATA_ASSIGN_OR_RETURN(gpu.tdp_watts, m.Number("power_w"));
    if (!(gpu.tdp_watts > 0)) return m.ErrorAt("power_w", "expected a positive power in watts");
    gpu.sources["tdp_watts"] = given;
  }
  if (m.Has("nvlink_bandwidth")) {
    STRATA_ASSIGN_OR_RETURN(gpu.nvlink_bandwidth, m.Bandwidth("nvlink_bandwidth"));
    gpu.sources["nvlink_bandwidth"] = given;
  }
  if (m.Has("pcie_generation")) {
    // The host link a B200 in a given server runs at (the GPU supports Gen6, its host may be
    // Gen5): the catalog leaves it out where the part alone does not decide it.
    STRATA_ASSIGN_OR_RETURN(gpu.pcie_generation, m.Int("pcie_generation"));
    if (gpu.pcie_generation < 3 || gpu.pcie_generation > 6) {
      return m.ErrorAt("pcie_generation", "expected a PCIe generation from 3 to 6");
    }
    gpu.sources["pcie_generation"] = given;
  }
  if (gpu.nvlink_generation.empty())
    gpu.nvlink_generation = gpu.has_gpu_fabric() ? "custom" : "none";
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return gpu;
}

}  // namespace strata
