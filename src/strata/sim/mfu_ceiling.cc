#include "strata/sim/mfu_ceiling.h"

#include <fmt/format.h>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"

namespace strata {

Result<std::vector<MfuCeiling>> ParseMfuCeilings(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("ceilings"));
  if (!list.IsSequence() || list.size() == 0) {
    return top.ErrorAt("ceilings", "expected a list of {gpu, precision, mfu, source}");
  }
  std::vector<MfuCeiling> out;
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(list[i], file, fmt::format("ceilings[{}]", i)));
    MfuCeiling c;
    STRATA_ASSIGN_OR_RETURN(c.gpu, m.String("gpu"));
    STRATA_ASSIGN_OR_RETURN(c.precision, m.String("precision"));
    if (c.precision != "bf16" && c.precision != "fp8") {
      return m.ErrorAt("precision", fmt::format("expected bf16 or fp8, got '{}'", c.precision));
    }
    STRATA_ASSIGN_OR_RETURN(c.mfu, FractionAt(m, "mfu", ZeroFraction::kRefused));
    STRATA_ASSIGN_OR_RETURN(c.source, m.String("source"));
    if (c.source.empty()) return m.ErrorAt("source", "expected where the figure comes from");
    if (FindMfuCeiling(out, c.gpu, c.precision) != nullptr) {
      return m.ErrorAt("gpu", fmt::format("{} at {} is listed twice", c.gpu, c.precision));
    }
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    out.push_back(std::move(c));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return out;
}

Result<std::vector<MfuCeiling>> LoadMfuCeilings() {
  const std::string path = DataDir() + "/mfu_ceiling.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseMfuCeilings(text, path);
}

const MfuCeiling* FindMfuCeiling(const std::vector<MfuCeiling>& ceilings, std::string_view gpu,
                                 std::string_view precision) {
  for (const MfuCeiling& c : ceilings) {
    if (c.gpu == gpu && c.precision == precision) return &c;
  }
  return nullptr;
}

}  // namespace strata
