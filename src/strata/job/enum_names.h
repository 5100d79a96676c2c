// Enums a job file spells by name: one table of (value, name) per enum, read with "did you mean"
// and printed back by the same table, for every section of the job parser.
#ifndef STRATA_JOB_ENUM_NAMES_H_
#define STRATA_JOB_ENUM_NAMES_H_

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"

namespace strata {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, size_t N>
std::string_view NameOf(const EnumName<E> (&table)[N], E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

/// Reads `key` as one of the table's names; the error lists them with "did you mean".
template <class E, size_t N>
Result<E> EnumField(YamlMap& map, const std::string& key, const EnumName<E> (&table)[N]) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  std::vector<std::string> names;
  for (const auto& entry : table) {
    if (text == entry.name) return entry.value;
    names.emplace_back(entry.name);
  }
  return map
      .ErrorAt(key,
               fmt::format("unknown value '{}', expected one of: {}", text, fmt::join(names, ", ")))
      .WithHint(DidYouMeanHint(text, names));
}

}  // namespace strata

#endif  // STRATA_JOB_ENUM_NAMES_H_
