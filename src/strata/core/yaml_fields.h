// Strict reading of YAML mappings: typed fields with units, errors naming file, line and field,
// and unknown keys reported with "did you mean" (never silently ignored).
#ifndef STRATA_CORE_YAML_FIELDS_H_
#define STRATA_CORE_YAML_FIELDS_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

/// Parses a YAML document from text; `file` is used in error messages.
Result<YAML::Node> ParseYaml(const std::string& text, const std::string& file);

/// A view of one YAML mapping that remembers which keys were read.
class YamlMap {
 public:
  /// Fails when `node` is not a mapping. `path` is the dotted field path ("" at the top).
  static Result<YamlMap> Of(const YAML::Node& node, std::string file, std::string path);

  bool Has(const std::string& key) const;
  Result<std::string> String(const std::string& key);
  Result<int64_t> Int(const std::string& key);  // an integer (no fraction, no unit)
  Result<int64_t> PositiveInt(const std::string& key);
  Result<double> Number(const std::string& key);
  Result<bool> Bool(const std::string& key);
  Result<Bytes> Size(const std::string& key);                // "96GB", "80GiB": a unit is required
  Result<BytesPerSecond> Bandwidth(const std::string& key);  // "400Gb/s", "900GB/s"
  Result<YamlMap> Map(const std::string& key);
  Result<YAML::Node> Node(const std::string& key);  // raw, e.g. a sequence

  /// An error for the given key (or the map itself when key is empty), with file and line.
  Error ErrorAt(const std::string& key, std::string message) const;
  /// Fails on the first key that was never read, suggesting the closest known key.
  Status CheckNoUnknownKeys(const std::vector<std::string>& also_allowed = {}) const;

  const std::string& file() const { return file_; }
  std::string FieldPath(const std::string& key) const;

 private:
  YamlMap(YAML::Node node, std::string file, std::string path);
  Result<YAML::Node> Scalar(const std::string& key);

  YAML::Node node_;
  std::string file_;
  std::string path_;
  mutable std::set<std::string> read_;
};

}  // namespace strata

#endif  // STRATA_CORE_YAML_FIELDS_H_
