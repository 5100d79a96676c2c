#include "strata/profile/kernel_rules.h"

#include <utility>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata::profile {
namespace {

// Real traces hold hundreds to a few thousand distinct kernel names.
constexpr size_t kMaxCachedNames = 1 << 16;

constexpr std::array<std::string_view, kComponentCount> kNames = {
    "gemm",          "grouped_gemm",  "gemm_dense_or_expert",
    "attention_fwd", "attention_bwd", "linear_attention",
    "memory_bound",  "nccl",          "comm_other",
    "memcpy",        "memset",        "other"};

// Components a rule may name: memcpy and memset come from the event category, never a name.
Result<Component> ParseRuleComponent(const std::string& name, const YamlMap& map) {
  std::vector<std::string> allowed;
  for (Component c : AllComponents()) {
    if (c == Component::kMemcpy || c == Component::kMemset) continue;
    allowed.emplace_back(ComponentName(c));
    if (name == allowed.back()) return c;
  }
  return map.ErrorAt("component", "unknown component '" + name + "'")
      .WithHint(DidYouMeanHint(name, allowed));
}

}  // namespace

std::string_view ComponentName(Component c) { return kNames[static_cast<size_t>(c)]; }

const std::array<Component, kComponentCount>& AllComponents() {
  static const std::array<Component, kComponentCount> kAll = [] {
    std::array<Component, kComponentCount> all{};
    for (size_t i = 0; i < kComponentCount; ++i) all[i] = static_cast<Component>(i);
    return all;
  }();
  return kAll;
}

std::string NcclKindFromName(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      const size_t end = name.find_first_of("_(<");
      return std::string(name.substr(0, end));
    }
  }
  return "";
}

Result<KernelClassifier> KernelClassifier::Load(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/profile/kernel_classes.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return FromYaml(text, path);
}

Result<KernelClassifier> KernelClassifier::FromYaml(const std::string& text,
                                                    const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("rules"));
  if (!list.IsSequence() || list.size() == 0) {
    return top.ErrorAt("rules", "expected a non-empty list of {component, pattern, examples}");
  }
  KernelClassifier classifier;
  classifier.file_ = file;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "rules[" + std::to_string(i) + "]";
    STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(list[i], file, where));
    KernelRule rule;
    rule.line = list[i].Mark().line + 1;
    STRATA_ASSIGN_OR_RETURN(std::string component, m.String("component"));
    STRATA_ASSIGN_OR_RETURN(rule.component, ParseRuleComponent(component, m));
    STRATA_ASSIGN_OR_RETURN(rule.pattern, m.String("pattern"));
    try {
      rule.regex = std::regex(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return m.ErrorAt("pattern",
                       "'" + rule.pattern + "' is not a regular expression: " + e.what());
    }
    STRATA_ASSIGN_OR_RETURN(YAML::Node examples, m.Node("examples"));
    if (!examples.IsSequence() || examples.size() == 0) {
      return m.ErrorAt("examples",
                       "expected a non-empty list of {name, seen_in}: every pattern needs a "
                       "kernel name from a real trace");
    }
    for (size_t j = 0; j < examples.size(); ++j) {
      STRATA_ASSIGN_OR_RETURN(
          YamlMap e,
          YamlMap::Of(examples[j], file, where + ".examples[" + std::to_string(j) + "]"));
      KernelExample example;
      STRATA_ASSIGN_OR_RETURN(example.name, e.String("name"));
      STRATA_ASSIGN_OR_RETURN(example.seen_in, e.String("seen_in"));
      STRATA_RETURN_IF_ERROR(e.CheckNoUnknownKeys());
      rule.examples.push_back(std::move(example));
    }
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    classifier.rules_.push_back(std::move(rule));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return classifier;
}

Component KernelClassifier::Classify(const std::string& kernel_name) {
  if (auto it = cache_.find(kernel_name); it != cache_.end()) return it->second;
  Component result = Component::kOther;
  for (const KernelRule& rule : rules_) {
    if (std::regex_search(kernel_name, rule.regex)) {
      result = rule.component;
      break;
    }
  }
  // A hostile trace with millions of distinct names must not grow the cache without bound.
  if (cache_.size() < kMaxCachedNames) cache_.emplace(kernel_name, result);
  return result;
}

}  // namespace strata::profile
