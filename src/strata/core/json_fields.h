// The one typed JSON reader: typed reading of one JSON object (a config.json, a dump). Hugging
// Face configs carry many keys strata does not need, so unknown keys are allowed; a missing key
// that looks like a typo of one present ("hiden_size") is reported with "did you mean".
// Only nlohmann's forward declarations are included here: the full json.hpp (a third of the
// library's compile time when every includer parsed it) is compiled by the .cc files that read.
#ifndef STRATA_CORE_JSON_FIELDS_H_
#define STRATA_CORE_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "strata/core/result.h"

namespace strata {

class JsonFields {
 public:
  /// `object` must outlive this view. `path` is the dotted path of the object ("" at the top).
  JsonFields(const nlohmann::json& object, std::string file, std::string path);

  /// Present and not null.
  bool Has(std::string_view key) const;
  /// The first of `keys` that is present, or nullopt.
  std::optional<std::string> FirstPresent(std::initializer_list<std::string_view> keys) const;

  /// Required: a missing key is an error (with "did you mean" when a present key is close).
  Result<int64_t> PositiveInt(std::string_view key) const;
  /// Optional: absent or null gives `fallback`; present must be a positive integer.
  Result<int64_t> PositiveIntOr(std::string_view key, int64_t fallback) const;
  /// Optional: absent or null gives `fallback`; present must be an integer >= 0.
  Result<int64_t> NonNegativeIntOr(std::string_view key, int64_t fallback) const;
  Result<bool> BoolOr(std::string_view key, bool fallback) const;
  Result<std::string> StringOr(std::string_view key, std::string fallback) const;
  /// A nested object; nullopt when absent or null; an error when it is not an object.
  Result<std::optional<JsonFields>> Object(std::string_view key) const;
  /// A present array (error when absent or not an array).
  Result<const nlohmann::json*> Array(std::string_view key) const;

  Error ErrorAt(std::string_view key, std::string message) const;
  std::string FieldPath(std::string_view key) const;
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  Error Missing(std::string_view key) const;

  const nlohmann::json* object_;
  std::string file_;
  std::string path_;
};

/// "a string \"2048\"", "the number 2.5", "null", ... for messages about wrong types.
std::string DescribeJsonValue(const nlohmann::json& value);

}  // namespace strata

#endif  // STRATA_CORE_JSON_FIELDS_H_
