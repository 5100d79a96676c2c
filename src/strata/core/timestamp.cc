#include "strata/core/timestamp.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace strata {

namespace {

bool IsClockDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimBlank(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t begin = 0, end = s.size();
  while (begin < end && blank(s[begin])) ++begin;
  while (end > begin && blank(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<double> ParseLogTimestamp(std::string_view s) {
  s = TrimBlank(s);
  // YYYY-MM-DD HH:MM:SS, the date and the time parted by ' ', 'T' or torchrun's '_'
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' ||
      (s[10] != ' ' && s[10] != 'T' && s[10] != '_') || s[13] != ':' || s[16] != ':' ||
      !IsClockDigit(s[17]) || !IsClockDigit(s[18])) {
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
      if (!IsClockDigit(s[i])) return std::nullopt;
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
    for (size_t i = 20; i < s.size() && i < 29 && IsClockDigit(s[i]); ++i) {
      t += (s[i] - '0') * kScale[i - 20];
    }
  }
  return t;
}

std::optional<double> FindLeadingTimestamp(std::string_view line) {
  const size_t limit = std::min<size_t>(line.size(), 64);
  for (size_t i = 0; i + 19 <= line.size() && i < limit; ++i) {
    if (IsClockDigit(line[i]) && line[i + 4] == '-' && (i == 0 || !IsClockDigit(line[i - 1]))) {
      if (auto t = ParseLogTimestamp(line.substr(i, 29))) return t;
    }
  }
  return std::nullopt;
}

}  // namespace strata
