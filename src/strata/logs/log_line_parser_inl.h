// Template definitions for log_line_parser.h.
#ifndef STRATA_LOGS_LOG_LINE_PARSER_INL_H_
#define STRATA_LOGS_LOG_LINE_PARSER_INL_H_

#include <cstdint>
#include <cstring>
#include <string_view>

#include "strata/core/text_scan.h"

namespace strata {

/// TrimSpace (core/text_scan.h) inlined: the per-segment trims are on the hot path of a large log.
inline std::string_view TrimLogSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t begin = 0, end = s.size();
  while (begin < end && space(s[begin])) ++begin;
  while (end > begin && space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

/// text.find(literal, pos), with memchr for the first byte: string_view::find compares byte by
/// byte, and glibc's memmem sets up a table on every call.
inline size_t FindLiteral(std::string_view text, std::string_view literal, size_t pos = 0) {
  if (literal.empty()) return pos <= text.size() ? pos : std::string_view::npos;
  while (pos + literal.size() <= text.size()) {
    const void* hit =
        std::memchr(text.data() + pos, literal[0], text.size() - literal.size() + 1 - pos);
    if (hit == nullptr) return std::string_view::npos;
    pos = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    if (std::memcmp(text.data() + pos + 1, literal.data() + 1, literal.size() - 1) == 0) return pos;
    ++pos;
  }
  return std::string_view::npos;
}

// Powers of ten that a double holds exactly (10^22 is the largest).
inline constexpr double kExactPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/// The plain decimal that starts at p (before end): digits[.digits][(e|E)[+-]digits], at most 18
/// digits and 4 exponent digits, as frameworks print most numbers ("1.234567E-05", "501.2",
/// "80"). When the digits fit in 53 bits and the power of ten in 10^-22..10^22, one IEEE
/// multiplication or division of two exact values rounds once, so `value` is the correctly
/// rounded double, bit for bit what from_chars gives (Clinger's fast path). Returns the end of
/// what it read; nullptr when the text there is not of that form or not in that range (callers
/// then use a full parser). The caller checks that the number ends there.
template <bool kCheckEnd>
inline const char* ScanPlainDecimalImpl(const char* p, const char* end, double& value) {
  auto digit = [&](const char* q) {
    if constexpr (kCheckEnd) {
      if (q >= end) return false;
    }
    return *q >= '0' && *q <= '9';
  };
  auto at = [&](const char* q, char c) {
    if constexpr (kCheckEnd) {
      if (q >= end) return false;
    }
    return *q == c;
  };
  // Digits are counted from the positions after each run; a run of more than 18 digits may
  // wrap the mantissa, and is refused before it is used.
  uint64_t mantissa = 0;
  const char* run = p;
  for (; digit(p); ++p) mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0');
  int digits = static_cast<int>(p - run);
  int fraction_digits = 0;
  if (at(p, '.')) {
    run = ++p;
    for (; digit(p); ++p) mantissa = mantissa * 10 + static_cast<uint64_t>(*p - '0');
    fraction_digits = static_cast<int>(p - run);
    digits += fraction_digits;
  }
  if (digits > 18) return nullptr;
  if (digits == 0) return nullptr;
  int exponent = 0;
  if (at(p, 'e') || at(p, 'E')) {
    ++p;
    bool negative = false;
    if (at(p, '+') || at(p, '-')) negative = *p++ == '-';
    const char* start = p;
    for (; digit(p) && p - start < 4; ++p) exponent = exponent * 10 + (*p - '0');
    if (p == start) return nullptr;
    if (negative) exponent = -exponent;
  }
  if (mantissa > (uint64_t{1} << 53)) return nullptr;
  const int power = exponent - fraction_digits;
  if (power < -22 || power > 22) return nullptr;
  const double m = static_cast<double>(mantissa);
  value = power < 0 ? m / kExactPow10[-power] : m * kExactPow10[power];
  return p;
}

inline const char* ScanPlainDecimal(const char* p, const char* end, double& value) {
  return ScanPlainDecimalImpl<true>(p, end, value);
}

/// ScanPlainDecimal for text known to hold, before its end, a byte that ends every number (a
/// '|', a space): no end checks.
inline const char* ScanPlainDecimalBeforeStop(const char* p, double& value) {
  return ScanPlainDecimalImpl<false>(p, nullptr, value);
}

template <class Fn>
void ForEachLabelled(std::string_view text, char separator, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view segment = text.substr(pos, end - pos);
    const size_t colon = segment.find(':');
    if (colon != std::string_view::npos) {
      fn(TrimLogSpace(segment.substr(0, colon)), TrimLogSpace(segment.substr(colon + 1)));
    }
    pos = end + 1;
  }
}

}  // namespace strata

#endif  // STRATA_LOGS_LOG_LINE_PARSER_INL_H_
