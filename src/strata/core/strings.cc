#include "strata/core/strings.h"

#include <fmt/format.h>

#include <cmath>

namespace strata {

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string> SplitNul(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string GroupDigits(double value, int decimals) {
  std::string s = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t dot = s.find('.');
  const size_t int_end = dot == std::string::npos ? s.size() : dot;
  std::string out;
  for (size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0) out += ',';
    out += s[i];
  }
  out += s.substr(int_end);
  // "-0" is not a number anyone writes.
  const bool zero = s.find_first_not_of("0.") == std::string::npos;
  return value < 0 && !zero ? "-" + out : out;
}

std::string_view StripAnsiEscapes(std::string_view line, std::string& buffer) {
  if (line.find('\x1b') == std::string_view::npos) return line;
  buffer.clear();
  buffer.reserve(line.size());
  const auto in = [&](size_t i, char lo, char hi) {
    return i < line.size() && line[i] >= lo && line[i] <= hi;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      buffer.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (in(j, 0x30, 0x3f)) ++j;  // parameters: digits, ';', '?', ...
      while (in(j, 0x20, 0x2f)) ++j;  // intermediates
      i = j;                          // the final byte (or the end of a cut-off escape)
    } else {
      size_t j = i + 1;
      while (in(j, 0x20, 0x2f)) ++j;  // ESC, intermediates, one final byte: "ESC ( B" (tput sgr0)
      i = j;
    }
  }
  return buffer;
}

}  // namespace strata
