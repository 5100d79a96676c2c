// Which component of a training step a GPU kernel belongs to, by its name: the rules are data
// (data/profile/kernel_classes.yaml), each pattern with example names from real traces.
#ifndef STRATA_PROFILE_KERNEL_RULES_H_
#define STRATA_PROFILE_KERNEL_RULES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/core/result.h"

namespace strata::profile {

/// The components of a step's GPU time. kMemcpy and kMemset come from the event's category,
/// the others from the kernel name.
enum class Component : uint8_t {
  kGemm,
  kGroupedGemm,
  // A GEMM whose name does not say whether it runs a dense layer or routed experts (DeepSeek's
  // accumulating weight-gradient GEMM serves both): counted as GEMM time, in neither GEMM row.
  kGemmDenseOrExpert,
  kAttentionFwd,
  kAttentionBwd,
  kLinearAttention,
  kMemoryBound,
  kNccl,
  kCommOther,
  kMemcpy,
  kMemset,
  kOther,
};
inline constexpr size_t kComponentCount = 12;

/// "gemm", "grouped_gemm", ..., the names of the rules file and of the JSON fields (`<name>_s`).
std::string_view ComponentName(Component c);
/// All components in declaration order.
const std::array<Component, kComponentCount>& AllComponents();

/// The collective of an NCCL kernel from its name: "AllReduce" for
/// `ncclKernel_AllReduce_RING_LL_Sum_float(...)` and `ncclDevKernel_AllReduce_...`; "" if none.
std::string NcclKindFromName(std::string_view kernel_name);

struct KernelExample {
  std::string name;
  std::string seen_in;  // "trace:<dir under ../shared/reference/traces>" or "source:<repo file>"
};

struct KernelRule {
  Component component = Component::kOther;
  std::string pattern;  // ECMAScript, searched anywhere in the name
  std::regex regex;
  std::vector<KernelExample> examples;
  int line = 0;  // in the rules file
};

/// The rules, tried in order; the first match wins, no match is kOther. Classify remembers each
/// name it has seen, so a trace's thousands of launches of one kernel cost one regex search.
class KernelClassifier {
 public:
  /// data/profile/kernel_classes.yaml (or `path`): errors name the file, line and field.
  static Result<KernelClassifier> Load(const std::string& path = "");
  static Result<KernelClassifier> FromYaml(const std::string& text, const std::string& file);

  Component Classify(const std::string& kernel_name);
  const std::vector<KernelRule>& rules() const { return rules_; }
  const std::string& file() const { return file_; }

 private:
  std::vector<KernelRule> rules_;
  std::string file_;
  std::unordered_map<std::string, Component> cache_;
};

}  // namespace strata::profile

#endif  // STRATA_PROFILE_KERNEL_RULES_H_
