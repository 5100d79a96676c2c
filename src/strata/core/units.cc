#include "strata/core/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "strata/core/text_scan.h"

namespace strata {
namespace {

struct UnitScale {
  std::string_view unit;
  double scale;
};

std::string UnitList(const std::vector<UnitScale>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.unit;
  }
  return out;
}

// Splits "12.5GiB" into 12.5 and "GiB"; the number must be finite and non-negative.
Result<std::pair<double, std::string_view>> SplitNumberUnit(std::string_view text,
                                                            std::string_view what) {
  std::string_view s = TrimSpace(text);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == 'e' || s[i] == 'E' || s[i] == '-' || s[i] == '+')) {
    // 'e' only counts as an exponent when a digit or sign follows (so "5e" + "B" stays sane).
    if ((s[i] == 'e' || s[i] == 'E') &&
        !(i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                               s[i + 1] == '-' || s[i + 1] == '+')))
      break;
    ++i;
  }
  double number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + i, number);
  if (i == 0 || ec != std::errc() || ptr != s.data() + i || !std::isfinite(number)) {
    return InvalidInput(fmt::format("expected a {} with a unit, got '{}'", what, text));
  }
  if (number < 0) {
    return InvalidInput(fmt::format("expected a non-negative {}, got '{}'", what, text));
  }
  return std::pair{number, TrimSpace(s.substr(i))};
}

Result<double> ParseWithUnits(std::string_view text, std::string_view what,
                              const std::vector<UnitScale>& units,
                              std::string_view ambiguous_hint) {
  STRATA_ASSIGN_OR_RETURN(auto split, SplitNumberUnit(text, what));
  auto [number, unit] = split;
  for (const auto& u : units) {
    if (unit == u.unit) return number * u.scale;
  }
  Error e = InvalidInput(
      unit.empty() ? fmt::format("'{}' has no unit (expected one of: {})", text, UnitList(units))
                   : fmt::format("unknown unit '{}' in '{}' (expected one of: {})", unit, text,
                                 UnitList(units)));
  if (!ambiguous_hint.empty() && unit.size() <= 1) e.hint = std::string(ambiguous_hint);
  return e;
}

}  // namespace

Result<Bytes> ParseBytes(std::string_view text) {
  static const std::vector<UnitScale> kUnits = {
      {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  STRATA_ASSIGN_OR_RETURN(
      double v, ParseWithUnits(text, "size", kUnits,
                               "a bare K/M/G is ambiguous (decimal or binary?): write GB (1e9) or "
                               "GiB (2^30)"));
  return Bytes::Count(v);
}

Result<BytesPerSecond> ParseBandwidth(std::string_view text) {
  // Bits (b) and bytes (B) are told apart by case: 400Gb/s is 50GB/s.
  static const std::vector<UnitScale> kUnits = {
      {"B/s", 1},         {"KB/s", 1e3},     {"MB/s", 1e6},     {"GB/s", 1e9},
      {"TB/s", 1e12},     {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8},
      {"Tb/s", 1e12 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"GiB/s", 1073741824.0}};
  STRATA_ASSIGN_OR_RETURN(
      double v, ParseWithUnits(text, "bandwidth", kUnits,
                               "write the unit with its rate: 400Gb/s (bits) or 50GB/s (bytes)"));
  return BytesPerSecond::Of(v);
}

Result<Seconds> ParseSeconds(std::string_view text) {
  static const std::vector<UnitScale> kUnits = {{"s", 1},     {"ms", 1e-3}, {"us", 1e-6},
                                                {"ns", 1e-9}, {"min", 60},  {"h", 3600}};
  STRATA_ASSIGN_OR_RETURN(double v, ParseWithUnits(text, "duration", kUnits, ""));
  return Seconds::Of(v);
}

std::string FormatGiB(Bytes b, int decimals) {
  return fmt::format("{:.{}f} GiB", b.gib(), decimals);
}
std::string FormatGB(Bytes b, int decimals) { return fmt::format("{:.{}f} GB", b.gb(), decimals); }

std::string FormatGBAndGiB(Bytes b) { return fmt::format("{} ({})", FormatGB(b), FormatGiB(b)); }

std::string FormatBytesAuto(Bytes b) {
  const double v = b.count();
  if (std::fabs(v) < 1024) return fmt::format("{:.0f} B", v);
  if (std::fabs(v) < 1048576.0) return fmt::format("{:.2f} KiB", v / 1024.0);
  if (std::fabs(v) < 1073741824.0) return fmt::format("{:.2f} MiB", b.mib());
  return fmt::format("{:.2f} GiB", b.gib());
}

std::string FormatGBps(BytesPerSecond r, int decimals) {
  return fmt::format("{:.{}f} GB/s", r.gb_per_s(), decimals);
}

std::string FormatTflops(FlopPerSecond r, int decimals) {
  return fmt::format("{:.{}f} TFLOP/s", r.tflop_per_s(), decimals);
}

std::string FormatSeconds(Seconds t) {
  const double s = t.s();
  if (std::fabs(s) >= 1) return fmt::format("{:.3g} s", s);
  if (std::fabs(s) >= 1e-3) return fmt::format("{:.3g} ms", t.ms());
  return fmt::format("{:.3g} us", t.us());
}

}  // namespace strata
