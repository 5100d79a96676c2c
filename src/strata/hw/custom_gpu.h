// A GPU named in a job or cluster file: a catalog name ("H20"), or a mapping that derives a
// variant from the catalog (`{base: H100-SXM, memory: 96GB, power_w: 500}`) or defines a part
// the catalog lacks (name, memory, hbm_bandwidth and bf16_dense at least). Real fleets run
// variants (power-capped, cut-down or larger-memory parts) that no catalog lists.
#ifndef STRATA_HW_CUSTOM_GPU_H_
#define STRATA_HW_CUSTOM_GPU_H_

#include <string>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"
#include "strata/hw/gpu_catalog.h"

namespace strata {

/// Reads `key` of `map` as a GPU: a scalar is looked up in the catalog; a mapping starts from
/// `base` (when given) and replaces the values it names. Each replaced value's source says it
/// was given in the file. Errors name the field.
Result<GpuSpec> ReadGpuField(YamlMap& map, const std::string& key);

/// Every key a GPU mapping may hold.
inline constexpr const char* kCustomGpuKeys[] = {
    "base",       "name",      "memory",     "hbm_bandwidth", "bf16_dense",
    "fp16_dense", "fp8_dense", "tf32_dense", "power_w",       "nvlink_bandwidth"};

}  // namespace strata

#endif  // STRATA_HW_CUSTOM_GPU_H_
