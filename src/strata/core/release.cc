#include "strata/core/release.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace strata {
namespace {

// The dotted numbers of a release ("0.16" -> {0, 16}); empty when it has none.
std::vector<int> ReleaseNumbers(const std::string& text) {
  std::vector<int> out;
  const char* p = text.data();
  const char* end = p + text.size();
  if (p != end && (*p == 'v' || *p == 'r')) ++p;
  while (p != end) {
    int n = 0;
    auto [next, ec] = std::from_chars(p, end, n);
    if (ec != std::errc()) return {};
    out.push_back(n);
    p = next;
    if (p == end) break;
    // "0.8.0rc1": the numbers before the suffix; "6985e58" (a commit) is no release.
    if (*p != '.') return out.size() >= 2 ? out : std::vector<int>{};
    ++p;
  }
  return out;
}

}  // namespace

bool ReleaseAtLeast(const std::string& version, const std::string& from) {
  const std::vector<int> v = ReleaseNumbers(version), f = ReleaseNumbers(from);
  if (v.empty() || f.empty()) return false;
  return !std::ranges::lexicographical_compare(v, f);
}

}  // namespace strata
