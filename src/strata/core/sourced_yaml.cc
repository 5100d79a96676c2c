#include "strata/core/sourced_yaml.h"

#include <fmt/format.h>

namespace strata {

Result<YamlMap> SourcedSection(YamlMap& top, const std::string& key,
                               std::map<std::string, std::string>& sources) {
  STRATA_ASSIGN_OR_RETURN(YamlMap section, top.Map(key));
  STRATA_ASSIGN_OR_RETURN(std::string source, section.String("source"));
  if (source.empty()) return section.ErrorAt("source", "every value needs a source");
  sources[key] = source;
  return section;
}

Result<double> FractionAt(YamlMap& map, const std::string& key, ZeroFraction zero) {
  STRATA_ASSIGN_OR_RETURN(double v, map.Number(key));
  if (zero == ZeroFraction::kAllowed && (v < 0 || v > 1)) {
    return map.ErrorAt(key, fmt::format("expected a fraction in [0, 1], got {}", v));
  }
  if (zero == ZeroFraction::kRefused && (!(v > 0) || v > 1)) {
    return map.ErrorAt(key, fmt::format("expected a fraction in (0, 1], got {}", v));
  }
  return v;
}

Result<double> PositiveAt(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(double v, map.Number(key));
  if (!(v > 0)) return map.ErrorAt(key, fmt::format("expected a positive number, got {}", v));
  return v;
}

}  // namespace strata
