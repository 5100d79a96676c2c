#include "strata/importer/cost_neutral_keys.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {

const CostNeutralGroup* CostNeutralKeys::Match(std::string_view key) const {
  const std::string k(key);
  for (const CostNeutralGroup& g : groups) {
    for (const std::string& p : g.patterns) {
      // No flags: `*` matches '.' and '/' as any other character.
      if (fnmatch(p.c_str(), k.c_str(), 0) == 0) return &g;
    }
  }
  return nullptr;
}

Result<CostNeutralKeys> LoadCostNeutralKeys() {
  const std::string label = "data/import_cost_neutral_keys.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(DataDir() + "/import_cost_neutral_keys.yaml"));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, label));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, label, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node groups, top.Node("groups"));
  if (!groups.IsSequence()) return top.ErrorAt("groups", "expected a list of groups");
  CostNeutralKeys keys;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string path = fmt::format("groups[{}]", i);
    STRATA_ASSIGN_OR_RETURN(YamlMap g, YamlMap::Of(groups[i], label, path));
    CostNeutralGroup group;
    STRATA_ASSIGN_OR_RETURN(group.name, g.String("name"));
    STRATA_ASSIGN_OR_RETURN(group.why, g.String("why"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node patterns, g.Node("patterns"));
    if (!patterns.IsSequence() || patterns.size() == 0) {
      return g.ErrorAt("patterns", "expected a non-empty list of key patterns");
    }
    for (const auto& p : patterns) {
      if (!p.IsScalar() || p.Scalar().empty()) {
        return g.ErrorAt("patterns", "expected each pattern as a non-empty string");
      }
      group.patterns.push_back(p.Scalar());
    }
    STRATA_RETURN_IF_ERROR(g.CheckNoUnknownKeys());
    keys.groups.push_back(std::move(group));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return keys;
}

}  // namespace strata
