#include "strata/core/json_fields.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "strata/core/did_you_mean.h"

namespace strata {

namespace {

std::string Truncated(std::string text) {
  constexpr size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

}  // namespace

std::string DescribeJsonValue(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::string:
      return "the string " + Truncated(value.dump());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return value.dump();
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

JsonFields::JsonFields(const nlohmann::json& object, std::string file, std::string path)
    : object_(&object), file_(std::move(file)), path_(std::move(path)) {}

bool JsonFields::Has(std::string_view key) const {
  auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

std::optional<std::string> JsonFields::FirstPresent(
    std::initializer_list<std::string_view> keys) const {
  for (auto key : keys) {
    if (Has(key)) return std::string(key);
  }
  return std::nullopt;
}

std::string JsonFields::FieldPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (key.empty()) return path_;
  return path_ + "." + std::string(key);
}

Error JsonFields::ErrorAt(std::string_view key, std::string message) const {
  Error e = InvalidInput(std::move(message));
  e.InFile(file_).InField(FieldPath(key));
  return e;
}

Error JsonFields::Missing(std::string_view key) const {
  Error e = ErrorAt(key, "missing required field");
  std::vector<std::string> present;
  for (auto it = object_->begin(); it != object_->end(); ++it) present.push_back(it.key());
  // Suggest the present key that is a likely typo of the wanted one.
  const std::string close = ClosestMatch(key, present);
  if (!close.empty()) e.WithHint("found '" + close + "': did you mean '" + std::string(key) + "'?");
  return e;
}

Result<int64_t> JsonFields::PositiveInt(std::string_view key) const {
  if (!Has(key)) return Missing(key);
  return PositiveIntOr(key, 0);
}

Result<int64_t> JsonFields::PositiveIntOr(std::string_view key, int64_t fallback) const {
  if (!Has(key)) return fallback;
  const auto& v = object_->at(std::string(key));
  if (!v.is_number_integer()) {
    return ErrorAt(key, "expected a positive integer, got " + DescribeJsonValue(v));
  }
  const int64_t n = v.get<int64_t>();
  if (n <= 0) return ErrorAt(key, "expected a positive integer, got " + std::to_string(n));
  return n;
}

Result<int64_t> JsonFields::NonNegativeIntOr(std::string_view key, int64_t fallback) const {
  if (!Has(key)) return fallback;
  const auto& v = object_->at(std::string(key));
  if (!v.is_number_integer()) {
    return ErrorAt(key, "expected an integer >= 0, got " + DescribeJsonValue(v));
  }
  const int64_t n = v.get<int64_t>();
  if (n < 0) return ErrorAt(key, "expected an integer >= 0, got " + std::to_string(n));
  return n;
}

Result<bool> JsonFields::BoolOr(std::string_view key, bool fallback) const {
  if (!Has(key)) return fallback;
  const auto& v = object_->at(std::string(key));
  if (!v.is_boolean()) return ErrorAt(key, "expected true or false, got " + DescribeJsonValue(v));
  return v.get<bool>();
}

Result<std::string> JsonFields::StringOr(std::string_view key, std::string fallback) const {
  if (!Has(key)) return fallback;
  const auto& v = object_->at(std::string(key));
  if (!v.is_string()) return ErrorAt(key, "expected a string, got " + DescribeJsonValue(v));
  return v.get<std::string>();
}

Result<std::optional<JsonFields>> JsonFields::Object(std::string_view key) const {
  if (!Has(key)) return std::optional<JsonFields>();
  const auto& v = object_->at(std::string(key));
  if (!v.is_object()) return ErrorAt(key, "expected an object, got " + DescribeJsonValue(v));
  return std::optional<JsonFields>(JsonFields(v, file_, FieldPath(key)));
}

Result<const nlohmann::json*> JsonFields::Array(std::string_view key) const {
  if (!Has(key)) return Missing(key);
  const auto& v = object_->at(std::string(key));
  if (!v.is_array()) return ErrorAt(key, "expected an array, got " + DescribeJsonValue(v));
  return &v;
}

}  // namespace strata
