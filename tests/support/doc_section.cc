#include "support/doc_section.h"

namespace strata::testing {

std::optional<std::string> WithSectionReplaced(const std::string& doc, std::string_view begin,
                                               std::string_view end_mark,
                                               const std::string& section) {
  const auto from = doc.find(begin);
  if (from == std::string::npos) return std::nullopt;
  const auto end = doc.find(end_mark, from);
  if (end == std::string::npos) return std::nullopt;
  const auto after = doc.find('\n', end);
  return doc.substr(0, from) + section +
         (after == std::string::npos ? std::string() : doc.substr(after + 1));
}

}  // namespace strata::testing
