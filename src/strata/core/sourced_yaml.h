// Readers for the calibration files in data/ (memory overheads, kernel efficiencies): every
// section carries the `source` its numbers come from, and fractions are checked for range, in
// one place for every such file.
#ifndef STRATA_CORE_SOURCED_YAML_H_
#define STRATA_CORE_SOURCED_YAML_H_

#include <map>
#include <string>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"

namespace strata {

/// The sub-mapping `key` of `top`, which must carry a non-empty `source`; the source is
/// recorded as sources[key].
Result<YamlMap> SourcedSection(YamlMap& top, const std::string& key,
                               std::map<std::string, std::string>& sources);

/// Whether a fraction may be 0 (an overhead may be absent) or must be above it (an efficiency).
enum class ZeroFraction { kAllowed, kRefused };

/// The number at `key`, in [0, 1] or (0, 1].
Result<double> FractionAt(YamlMap& map, const std::string& key, ZeroFraction zero);

/// The number at `key`, above 0.
Result<double> PositiveAt(YamlMap& map, const std::string& key);

}  // namespace strata

#endif  // STRATA_CORE_SOURCED_YAML_H_
