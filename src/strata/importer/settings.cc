#include "strata/importer/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace strata {

std::string NormaliseKey(std::string key) {
  size_t start = key.find_first_not_of('-');
  key = start == std::string::npos ? "" : key.substr(start);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

void Settings::Set(const std::string& key, std::string value, std::string source) {
  values_[NormaliseKey(key)] = SourcedValue{std::move(value), std::move(source)};
}

bool Settings::Has(const std::string& key) const { return values_.count(key) > 0; }

const SourcedValue* Settings::Use(const std::string& key) {
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  used_.insert(key);
  return &it->second;
}

void Settings::Ignore(const std::string& key) {
  if (values_.count(key) > 0) used_.insert(key);
}

Result<std::optional<int64_t>> Settings::Int(const std::string& key) {
  const SourcedValue* v = Use(key);
  if (v == nullptr) return std::optional<int64_t>();
  std::string text = v->value;
  // Python literals: 1e3 style ints are rare; underscores in TOML/Python ints are allowed.
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidInput("expected an integer, got '" + v->value + "'")
        .InField(key)
        .WithHint("read from " + v->source);
  }
  return std::optional<int64_t>(out);
}

Result<std::optional<bool>> Settings::Bool(const std::string& key) {
  const SourcedValue* v = Use(key);
  if (v == nullptr) return std::optional<bool>();
  std::string text = v->value;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true" || text == "1" || text == "yes") return std::optional<bool>(true);
  if (text == "false" || text == "0" || text == "no") return std::optional<bool>(false);
  return InvalidInput("expected true or false, got '" + v->value + "'")
      .InField(key)
      .WithHint("read from " + v->source);
}

std::optional<std::string> Settings::String(const std::string& key) {
  const SourcedValue* v = Use(key);
  if (v == nullptr) return std::nullopt;
  return v->value;
}

std::vector<std::pair<std::string, SourcedValue>> Settings::Unused() const {
  std::vector<std::pair<std::string, SourcedValue>> out;
  for (const auto& [key, value] : values_) {
    if (used_.count(key) == 0) out.emplace_back(key, value);
  }
  return out;
}

}  // namespace strata
