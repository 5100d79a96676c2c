#include "strata/model/torchtitan_flavors.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {

Result<std::vector<TitanFlavor>> ParseTitanFlavors(const std::string& yaml_text,
                                                   const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml_text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("flavors"));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  if (!list.IsSequence()) return top.ErrorAt("flavors", "expected a list of flavors");
  std::vector<TitanFlavor> out;
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap entry,
                            YamlMap::Of(list[i], file, fmt::format("flavors[{}]", i)));
    TitanFlavor f;
    STRATA_ASSIGN_OR_RETURN(f.name, entry.String("name"));
    STRATA_ASSIGN_OR_RETURN(f.flavor, entry.String("flavor"));
    STRATA_ASSIGN_OR_RETURN(f.model, entry.String("model"));
    if (f.model == "none") {
      f.model.clear();
      STRATA_ASSIGN_OR_RETURN(f.why, entry.String("why"));
    }
    STRATA_RETURN_IF_ERROR(entry.CheckNoUnknownKeys());
    for (const TitanFlavor& seen : out) {
      if (seen.name == f.name && seen.flavor == f.flavor) {
        return entry.ErrorAt("flavor", fmt::format("{}/{} is listed twice", f.name, f.flavor));
      }
    }
    out.push_back(f);
  }
  return out;
}

namespace {

// The table, read from data/ once per process (a bad file is the same error every time).
const Result<std::vector<TitanFlavor>>& Table() {
  static const Result<std::vector<TitanFlavor>> table = []() -> Result<std::vector<TitanFlavor>> {
    const std::string path = DataDir() + "/models/torchtitan_flavors.yaml";
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    return ParseTitanFlavors(text, path);
  }();
  return table;
}

}  // namespace

Result<std::string> TitanCatalogModel(const std::string& name, const std::string& flavor,
                                      const std::string& where) {
  const Result<std::vector<TitanFlavor>>& table = Table();
  if (!table.ok()) return table.error();
  const std::string key = name + "/" + flavor;
  std::string why;
  for (const TitanFlavor& f : *table) {
    if (f.name != name || f.flavor != flavor) continue;
    if (!f.model.empty()) return f.model;
    why = f.why;
  }
  return InvalidInput(fmt::format("torchtitan model '{}' ({}) has no strata catalog entry{}", key,
                                  where, why.empty() ? "" : ": " + why))
      .WithHint("give the model: --model with a catalog name or a config.json path");
}

}  // namespace strata
