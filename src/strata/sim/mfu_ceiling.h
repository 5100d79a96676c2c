// The best MFU a published training run reached, per GPU and GEMM precision
// (data/mfu_ceiling.yaml), each with its source: a predicted MFU above it is flagged, since no
// published run reaches it.
#ifndef STRATA_SIM_MFU_CEILING_H_
#define STRATA_SIM_MFU_CEILING_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct MfuCeiling {
  std::string gpu;        // catalog name
  std::string precision;  // "bf16" or "fp8": the GEMMs' precision
  double mfu = 0;         // of the bf16 dense peak, megatron-core's FLOP convention
  std::string source;
};

/// Parses the YAML text; `file` names it in errors.
Result<std::vector<MfuCeiling>> ParseMfuCeilings(const std::string& text, const std::string& file);

/// Reads data/mfu_ceiling.yaml (via DataDir()).
Result<std::vector<MfuCeiling>> LoadMfuCeilings();

/// The ceiling of `gpu` at `precision`, or nullptr when none is published.
const MfuCeiling* FindMfuCeiling(const std::vector<MfuCeiling>& ceilings, std::string_view gpu,
                                 std::string_view precision);

}  // namespace strata

#endif  // STRATA_SIM_MFU_CEILING_H_
