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

namespace {

// A field of `raw` (read through `map`) that must be a non-empty string: a group's name and its
// why. An empty value ("why:") is named at its key's line: the parser marks the null value where
// the next token starts, a line below.
Result<std::string> NonEmptyText(YamlMap& map, const YAML::Node& raw, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, map.Node(key));
  if (!n.IsScalar() || n.Scalar().empty()) {
    Error e = map.ErrorAt(key, "expected a non-empty string");
    for (const auto& kv : raw) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) e.line = kv.first.Mark().line + 1;
    }
    return e;
  }
  return n.Scalar();
}

// `label` names the file in errors.
Result<CostNeutralKeys> LoadFrom(const std::string& path, const std::string& label) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, label));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, label, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node groups, top.Node("groups"));
  if (!groups.IsSequence() || groups.size() == 0) {
    return top.ErrorAt("groups", "expected a non-empty list of groups");
  }
  CostNeutralKeys keys;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string path_i = fmt::format("groups[{}]", i);
    STRATA_ASSIGN_OR_RETURN(YamlMap g, YamlMap::Of(groups[i], label, path_i));
    CostNeutralGroup group;
    STRATA_ASSIGN_OR_RETURN(group.name, NonEmptyText(g, groups[i], "name"));
    STRATA_ASSIGN_OR_RETURN(group.why, NonEmptyText(g, groups[i], "why"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node patterns, g.Node("patterns"));
    if (!patterns.IsSequence() || patterns.size() == 0) {
      return g.ErrorAt("patterns", "expected a non-empty list of key patterns");
    }
    for (size_t j = 0; j < patterns.size(); ++j) {
      const YAML::Node p = patterns[j];
      if (!p.IsScalar() || p.Scalar().empty()) {
        // Named by its index and its own line: a list, a mapping, an empty entry or "".
        Error e = InvalidInput("expected a non-empty string, a shell glob on the key");
        e.file = label;
        e.field = fmt::format("{}[{}]", g.FieldPath("patterns"), j);
        const YAML::Mark mark = p.Mark();
        e.line = mark.line >= 0 ? mark.line + 1 : patterns.Mark().line + 1;
        return e;
      }
      group.patterns.push_back(p.Scalar());
    }
    STRATA_RETURN_IF_ERROR(g.CheckNoUnknownKeys());
    keys.groups.push_back(std::move(group));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return keys;
}

}  // namespace

Result<CostNeutralKeys> LoadCostNeutralKeys() {
  return LoadFrom(DataDir() + "/import_cost_neutral_keys.yaml",
                  "data/import_cost_neutral_keys.yaml");
}

Result<CostNeutralKeys> LoadCostNeutralKeys(const std::string& path) {
  return LoadFrom(path, path);
}

}  // namespace strata
