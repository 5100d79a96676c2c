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

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

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

std::optional<double> ParseLogTimestamp(std::string_view s) {
  s = TrimLogSpace(s);
  // YYYY-MM-DD HH:MM:SS
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':' || !IsDigit(s[17]) || !IsDigit(s[18])) {
    return std::nullopt;
  }
  // Every line of a large log has a stamp, and the minute changes every hundred lines or so:
  // the last "YYYY-MM-DD HH:MM" read and its seconds are kept (per thread), so most lines only
  // read their seconds. The sum is the same as in one expression: ((day + hour) + minute) + s.
  struct MinuteCache {
    char key[16] = {};
    double seconds = 0;
    bool valid = false;
  };
  thread_local MinuteCache cache;
  if (!cache.valid || std::memcmp(cache.key, s.data(), 16) != 0) {
    constexpr std::array<uint8_t, 12> kDigitAt = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15};
    for (uint8_t i : kDigitAt) {
      if (!IsDigit(s[i])) return std::nullopt;
    }
    auto two = [&](size_t i) { return (s[i] - '0') * 10 + (s[i + 1] - '0'); };
    const int y = two(0) * 100 + two(2), mo = two(5), d = two(8), h = two(11), mi = two(14);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return std::nullopt;
    std::memcpy(cache.key, s.data(), 16);
    cache.seconds = static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0;
    cache.valid = true;
  }
  const int se = (s[17] - '0') * 10 + (s[18] - '0');
  if (se > 60) return std::nullopt;
  double t = cache.seconds + se;
  if (s.size() > 20 && (s[19] == '.' || s[19] == ',')) {
    // 0.1, then divided by ten once per digit: the scales the loop used to compute as it went.
    static constexpr std::array<double, 9> kScale = [] {
      std::array<double, 9> scale{};
      double v = 0.1;
      for (double& x : scale) {
        x = v;
        v /= 10;
      }
      return scale;
    }();
    for (size_t i = 20; i < s.size() && i < 29 && IsDigit(s[i]); ++i) {
      t += (s[i] - '0') * kScale[i - 20];
    }
  }
  return t;
}

std::optional<double> FindLeadingTimestamp(std::string_view line) {
  const size_t limit = std::min<size_t>(line.size(), 64);
  for (size_t i = 0; i + 19 <= line.size() && i < limit; ++i) {
    if (IsDigit(line[i]) && line[i + 4] == '-' && (i == 0 || !IsDigit(line[i - 1]))) {
      if (auto t = ParseLogTimestamp(line.substr(i, 29))) return t;
    }
  }
  return std::nullopt;
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
