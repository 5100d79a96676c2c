#include "strata/logs/log_scan.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "strata/core/text_scan.h"
#include "strata/logs/log_line_parser_inl.h"

namespace strata {

namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The whole view as a plain decimal (ScanPlainDecimal), or nullopt.
std::optional<double> SimpleDecimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double value = 0;
  const char* end = s.data() + s.size();
  if (ScanPlainDecimal(s.data(), end, value) != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<double> ParseLogNumber(std::string_view text) {
  text = TrimLogSpace(text);
  if (text.size() > 11 &&
      (text.substr(0, 11) == "np.float64(" || text.substr(0, 11) == "np.float32(")) {
    text.remove_prefix(11);
    if (text.empty() || text.back() != ')') return std::nullopt;
    text.remove_suffix(1);
  } else if (text.size() > 9 && text.substr(0, 9) == "np.int64(") {
    text.remove_prefix(9);
    if (text.empty() || text.back() != ')') return std::nullopt;
    text.remove_suffix(1);
  }
  if (text.empty()) return std::nullopt;
  std::string_view body = text;
  bool negative = false;
  if (body[0] == '-' || body[0] == '+') {
    negative = body[0] == '-';
    body.remove_prefix(1);
    if (body.empty() || body[0] == '-' || body[0] == '+') return std::nullopt;
  }
  if (auto simple = SimpleDecimal(body)) return negative ? -*simple : *simple;
  if (IEquals(body, "nan")) return std::nan("");
  if (IEquals(body, "inf") || IEquals(body, "infinity")) {
    return negative ? -INFINITY : INFINITY;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc()) return std::nullopt;
  if (end != body.data() + body.size()) {
    // Thousands separators ("7,282", "1,234,567"): only groups of three digits after commas.
    if (*end != ',') return std::nullopt;
    std::array<char, 64> digits{};
    size_t n = 0;
    for (char c : body) {
      if (c == ',') continue;
      if (!IsDigit(c) && c != '.') return std::nullopt;
      if (n + 1 >= digits.size()) return std::nullopt;
      digits[n++] = c;
    }
    auto [end2, ec2] = std::from_chars(digits.data(), digits.data() + n, value);
    if (ec2 != std::errc() || end2 != digits.data() + n) return std::nullopt;
  }
  return negative ? -value : value;
}

void SetLogNumber(std::optional<double>& field, std::string_view value, double scale) {
  if (auto v = ParseLogNumber(value)) field = *v * scale;
}

std::optional<int64_t> StepFromNumber(double v) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (!(v >= 0 && v < kExact) || v != std::floor(v)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ParseDurationSeconds(std::string_view text) {
  text = TrimSpace(text);
  if (text.empty()) return std::nullopt;
  if (text.find(':') != std::string_view::npos) {  // tqdm: [H:]MM:SS
    double total = 0;
    size_t pos = 0;
    int parts = 0;
    while (pos <= text.size()) {
      const size_t colon = text.find(':', pos);
      const std::string_view part =
          text.substr(pos, colon == std::string_view::npos ? text.npos : colon - pos);
      auto v = ParseInt64(part);
      if (!v || *v < 0) return std::nullopt;
      total = total * 60 + static_cast<double>(*v);
      ++parts;
      if (colon == std::string_view::npos) break;
      pos = colon + 1;
    }
    if (parts < 2 || parts > 3) return std::nullopt;
    return total;
  }
  double total = 0;
  size_t pos = 0;
  bool any = false;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos >= text.size()) break;
    size_t end = pos;
    while (end < text.size() && (IsDigit(text[end]) || text[end] == '.')) ++end;
    if (end == pos || end >= text.size()) return std::nullopt;
    double v = 0;
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + end, v);
    if (ec != std::errc() || p != text.data() + end) return std::nullopt;
    switch (text[end]) {
      case 'd':
        total += v * 86400;
        break;
      case 'h':
        total += v * 3600;
        break;
      case 'm':
        total += v * 60;
        break;
      case 's':
        total += v;
        break;
      default:
        return std::nullopt;
    }
    any = true;
    pos = end + 1;
  }
  if (!any) return std::nullopt;
  return total;
}

PrefixedLine StripLauncherPrefix(std::string_view line) {
  PrefixedLine out{line, -1};
  if (line.empty()) return out;
  if (line[0] == '[') {
    // [rank3]: or [default3]:
    for (std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
      if (line.substr(0, tag.size()) != tag) continue;
      size_t i = tag.size();
      int rank = 0;
      size_t digits = 0;
      while (i < line.size() && IsDigit(line[i]) && digits < 7) {
        rank = rank * 10 + (line[i] - '0');
        ++i;
        ++digits;
      }
      if (digits > 0 && i + 1 < line.size() + 1 && line.substr(i, 2) == "]:") {
        out.text = line.substr(i + 2);
        out.rank = rank;
        return out;
      }
    }
    // mpirun --tag-output: [1,3]<stdout>:
    const size_t close = line.find("]<std");
    if (close != std::string_view::npos && close < 16) {
      const size_t comma = line.find(',');
      const size_t colon = line.find(">:", close);
      if (comma != std::string_view::npos && comma < close && colon != std::string_view::npos) {
        if (auto r = ParseInt64(line.substr(comma + 1, close - comma - 1))) {
          out.text = line.substr(colon + 2);
          out.rank = static_cast<int>(*r);
          return out;
        }
      }
    }
    return out;
  }
  if (line[0] == '(') {
    // Ray actor prefix: "(TaskRunner pid=16292) ", "(WorkerDict pid=1, ip=10.0.0.1) "
    const size_t close = line.find(") ");
    if (close != std::string_view::npos && close < 80 &&
        line.substr(0, close).find("pid=") != std::string_view::npos) {
      out.text = line.substr(close + 2);
    }
    return out;
  }
  if (IsDigit(line[0])) {
    // srun --label: "3: text"
    size_t i = 0;
    int rank = 0;
    while (i < line.size() && i < 6 && IsDigit(line[i])) rank = rank * 10 + (line[i++] - '0');
    if (i < 6 && line.substr(i, 2) == ": ") {
      out.text = line.substr(i + 2);
      out.rank = rank;
    }
  }
  return out;
}

}  // namespace strata
