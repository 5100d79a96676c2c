// Generated sections of the documentation: a test renders a section from the model and checks
// that the document holds it (support/golden.h writes it back under UPDATE_GOLDEN=1).
#ifndef STRATA_TESTS_SUPPORT_DOC_SECTION_H_
#define STRATA_TESTS_SUPPORT_DOC_SECTION_H_

#include <optional>
#include <string>
#include <string_view>

namespace strata::testing {

/// `doc` with its generated section replaced by `section`: the section starts at the first
/// `begin` and ends with the line that holds the first `end_mark` after it. `section` carries
/// its own begin and end mark, so the result holds it again. Empty when `doc` lacks either mark.
std::optional<std::string> WithSectionReplaced(const std::string& doc, std::string_view begin,
                                               std::string_view end_mark,
                                               const std::string& section);

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_DOC_SECTION_H_
