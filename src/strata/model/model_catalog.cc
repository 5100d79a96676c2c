#include "strata/model/model_catalog.h"

#include <cmath>
#include <string>
#include <vector>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {

namespace {

// Nominal sizes are written like 3.0e9; they must be whole, positive counts.
Result<int64_t> Count(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(double value, map.Number(key));
  if (!(value > 0) || value > 1e15 || std::floor(value) != value) {
    return map.ErrorAt(key, "expected a positive whole parameter count such as 3.0e9");
  }
  return static_cast<int64_t>(value);
}

}  // namespace

Result<std::vector<CatalogModel>> ParseModelCatalog(const std::string& yaml_text,
                                                    const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml_text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YamlMap models, top.Map("models"));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  std::vector<CatalogModel> out;
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, top.Node("models"));
  for (auto it = node.begin(); it != node.end(); ++it) {
    CatalogModel m;
    if (!it->first.IsScalar()) return models.ErrorAt("", "expected model names as keys");
    m.name = it->first.Scalar();
    STRATA_ASSIGN_OR_RETURN(YamlMap entry, models.Map(m.name));
    // A misspelt key is better reported as unknown (with "did you mean") than as missing.
    const std::vector<std::string> keys = {"nominal_params", "nominal_active_params", "source"};
    STRATA_RETURN_IF_ERROR(entry.CheckNoUnknownKeys(keys));
    STRATA_ASSIGN_OR_RETURN(m.nominal_params, Count(entry, "nominal_params"));
    STRATA_ASSIGN_OR_RETURN(m.nominal_active_params, Count(entry, "nominal_active_params"));
    STRATA_ASSIGN_OR_RETURN(m.source, entry.String("source"));
    STRATA_RETURN_IF_ERROR(entry.CheckNoUnknownKeys());
    out.push_back(m);
  }
  return out;
}

Result<std::vector<CatalogModel>> LoadModelCatalog() {
  const std::string path = DataDir() + "/models/catalog.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseModelCatalog(text, path);
}

Result<std::optional<CatalogModel>> FindCatalogModel(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(auto catalog, LoadModelCatalog());
  for (const auto& m : catalog) {
    if (m.name == name) return std::optional<CatalogModel>(m);
  }
  return std::optional<CatalogModel>();
}

}  // namespace strata
