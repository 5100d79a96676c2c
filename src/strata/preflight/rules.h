// The data behind the preflight's judgements: thresholds and dangerous settings
// (data/preflight/rules.yaml) and which CUDA each framework release needs
// (data/preflight/cuda_compat.yaml). Both are read strictly: unknown keys are errors.
#ifndef STRATA_PREFLIGHT_RULES_H_
#define STRATA_PREFLIGHT_RULES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata::preflight {

enum class Severity { kError, kWarning };
std::string_view SeverityName(Severity s);  // "error", "warning"

struct DangerousSetting {
  std::string variable;
  std::vector<std::string> values;  // empty: any value
  bool ignore_case = false;         // the program compares the value case-insensitively
  Severity severity = Severity::kWarning;
  std::string why;
  std::string fix;
  std::string source;
};

/// Kernel Xid codes judged alike: those after which NVIDIA's Xid catalog says the GPU must be
/// reset (or the node rebooted) before it is used again are errors; a code in no rule is a
/// warning.
struct XidRule {
  std::vector<int64_t> codes;
  Severity severity = Severity::kWarning;
  std::string why;
  std::string fix;
  std::string source;
};

struct Rules {
  Bytes dirty_memory;
  Seconds release_wait;
  Seconds max_collective_timeout;
  std::map<std::string, std::string> sources;
  std::vector<DangerousSetting> dangerous;
  std::vector<XidRule> xid;
  /// The rule that names `code`, or nullptr.
  const XidRule* XidRuleFor(int64_t code) const;
};

struct PackageReleases {
  std::string source;
  /// version ("2.11", or "any") -> CUDA versions with a wheel ("12.8")
  std::vector<std::pair<std::string, std::vector<std::string>>> releases;
};

struct CudaCompat {
  std::map<std::string, PackageReleases> packages;  // "torch", "vllm", "sglang"
};

Result<Rules> LoadRules(const std::string& path = "");
Result<CudaCompat> LoadCudaCompat(const std::string& path = "");

/// Compares dotted versions numerically: "2.10" > "2.9", "12.8" < "12.9". Non-numeric parts
/// compare as 0.
int CompareVersions(const std::string& a, const std::string& b);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_RULES_H_
