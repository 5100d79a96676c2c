#include "strata/importer/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata {

std::string NormaliseKey(std::string key) {
  size_t start = key.find_first_not_of('-');
  key = start == std::string::npos ? "" : key.substr(start);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// Python's float() literal (and Hydra's float grammar): a sign, digits with single '_' between
// digits, a fraction with digits on either side of the point, an exponent. from_chars reads the
// rest but takes no '+' and no '_'.
std::optional<double> ParsePythonNumber(std::string_view text) {
  if (text.starts_with('+')) {
    text.remove_prefix(1);
    if (text.starts_with('+') || text.starts_with('-')) return std::nullopt;
  }
  std::string plain;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      plain += text[i];
      continue;
    }
    const bool between_digits = i > 0 && i + 1 < text.size() &&
                                std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                                std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (!between_digits) return std::nullopt;
  }
  if (plain.empty()) return std::nullopt;
  double out = 0;
  auto [ptr, ec] = std::from_chars(plain.data(), plain.data() + plain.size(), out);
  if (ec != std::errc() || ptr != plain.data() + plain.size() || !std::isfinite(out)) {
    return std::nullopt;
  }
  return out;
}

void Settings::Set(const std::string& key, std::string value, std::string source) {
  values_[NormaliseKey(key)] = SourcedValue{std::move(value), std::move(source)};
}

bool Settings::Has(const std::string& key) const {
  asked_.insert(key);
  return values_.count(key) > 0;
}

const SourcedValue* Settings::Use(const std::string& key) {
  asked_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  used_.insert(key);
  return &it->second;
}

namespace {

// Whether `a` becomes `b` by one typing slip: a character dropped, added or changed, or two
// neighbours swapped (stgae). Real settings that differ by a word (vocab_file, vocab_size) are
// two edits or more apart.
bool OneSlipApart(std::string_view a, std::string_view b) {
  if (a == b) return false;
  if (a.size() == b.size()) {
    size_t first = 0;
    while (a[first] == b[first]) ++first;
    size_t last = a.size() - 1;
    while (a[last] == b[last]) --last;
    if (first == last) return true;  // one character changed
    return last == first + 1 && a[first] == b[last] && a[last] == b[first];  // swapped
  }
  if (a.size() + 1 == b.size()) std::swap(a, b);
  if (b.size() + 1 != a.size()) return false;
  size_t i = 0;
  while (i < b.size() && a[i] == b[i]) ++i;
  return a.substr(i + 1) == b.substr(i);  // one character dropped from `a`
}

}  // namespace

std::optional<Settings::NearMiss> Settings::FirstNearMiss() const {
  for (const auto& [key, value] : values_) {
    if (used_.count(key) > 0 || key.size() < 6) continue;
    for (const std::string& known : asked_) {
      if (values_.count(known) > 0) continue;  // both given: two settings, not a typo
      if (OneSlipApart(key, known)) return NearMiss{key, known, value.source};
    }
  }
  return std::nullopt;
}

const SourcedValue* Settings::Peek(const std::string& key) const {
  asked_.insert(key);
  const auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

void Settings::Ignore(const std::string& key) {
  if (values_.count(key) > 0) used_.insert(key);
}

void Settings::NoStepCost(const std::string& key, std::string why, UnreadBecause kind) {
  if (Has(key)) no_step_cost_[key] = Unread{std::move(why), kind};
}

void Settings::ReadAfterAll(const std::string& key) { no_step_cost_.erase(key); }

const std::string* Settings::NoStepCostOf(const std::string& key) const {
  const auto it = no_step_cost_.find(key);
  return it == no_step_cost_.end() ? nullptr : &it->second.why;
}

std::optional<UnreadBecause> Settings::NoStepCostKindOf(const std::string& key) const {
  const auto it = no_step_cost_.find(key);
  if (it == no_step_cost_.end()) return std::nullopt;
  return it->second.kind;
}

void Settings::NotModelled(const std::string& key, std::string why) {
  if (Has(key)) not_modelled_[key] = std::move(why);
}

const std::string* Settings::NotModelledWhy(const std::string& key) const {
  const auto it = not_modelled_.find(key);
  return it == not_modelled_.end() ? nullptr : &it->second;
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
  const std::string text = AsciiLower(v->value);
  if (text == "true" || text == "1" || text == "yes") return std::optional<bool>(true);
  if (text == "false" || text == "0" || text == "no") return std::optional<bool>(false);
  return InvalidInput("expected true or false, got '" + v->value + "'")
      .InField(key)
      .WithHint("read from " + v->source);
}

Result<std::optional<double>> Settings::Number(const std::string& key) {
  const SourcedValue* v = Use(key);
  if (v == nullptr) return std::optional<double>();
  const std::optional<double> out = ParsePythonNumber(v->value);
  if (!out) {
    return InvalidInput("expected a number, got '" + v->value + "'")
        .InField(key)
        .WithHint("read from " + v->source);
  }
  return std::optional<double>(*out);
}

Result<std::vector<double>> Settings::Numbers(const std::string& key) {
  const SourcedValue* v = Use(key);
  if (v == nullptr) return std::vector<double>();
  std::vector<double> out;
  for (const std::string_view word : SplitWords(v->value)) {
    const std::optional<double> one = ParsePythonNumber(word);
    if (!one) {
      return InvalidInput("expected numbers separated by spaces, got '" + v->value + "' ('" +
                          std::string(word) + "' is not a number)")
          .InField(key)
          .WithHint("read from " + v->source);
    }
    out.push_back(*one);
  }
  if (out.empty()) {
    return InvalidInput("expected one number or more, got '" + v->value + "'")
        .InField(key)
        .WithHint("read from " + v->source);
  }
  return out;
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
