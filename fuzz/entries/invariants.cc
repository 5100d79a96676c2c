// The invariant checks every entry uses (kept apart from the table, so a fuzz binary links only
// its own parser).
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "entries/fuzz_entries.h"
#include "strata/core/utf8.h"

namespace strata::fuzz {

void Require(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

std::string CheckJsonOutput(const Json& json) {
  const std::string text = DumpJson(json);
  Require(IsValidUtf8(text), "JSON output is valid UTF-8");
  Require(nlohmann::json::accept(text), "JSON output parses back as JSON");
  return text;
}

void CheckTextOutput(const std::string& text) {
  Require(IsValidUtf8(SanitizeUtf8(text)), "sanitised text output is valid UTF-8");
}

void RequireSame(const std::string& first, const std::string& second, std::string_view what) {
  Require(first == second, what);
}

}  // namespace strata::fuzz
