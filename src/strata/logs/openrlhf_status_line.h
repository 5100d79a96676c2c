// OpenRLHF's status line, "Global step N: {...}" (a Python dict's repr after the step,
// OpenRLHF/OpenRLHF@3c3be623:openrlhf/trainer/ppo_trainer.py): where one opens, its step, and
// where its dict closes. `strata logs` and `strata rl --log` read it by these rules.
#ifndef STRATA_LOGS_OPENRLHF_STATUS_LINE_H_
#define STRATA_LOGS_OPENRLHF_STATUS_LINE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

/// The step of the status dict whose '{' is text[brace], when "Global step N: " stands right
/// before it; nullopt otherwise.
std::optional<int64_t> OpenRlhfStepAt(std::string_view text, size_t brace);

/// The first status dict whose '{' is at or after `from`: the index of that '{', its step in
/// `step`; npos when there is none.
size_t FindOpenRlhfDict(std::string_view text, int64_t& step, size_t from = 0);

/// The index just past the Python value that starts at `i` (a number, a word, a quoted string or
/// a bracketed value), stopping at its dict's top-level ',' or '}'; with `whole_dict`, at the '}'
/// that closes the dict only. s.size() when there is none.
size_t PythonValueEnd(std::string_view s, size_t i, bool whole_dict = false);

/// The index of the '}' that closes the dict opening at text[brace]; npos when it does not close
/// within `text` (cut off, or wrapped onto the lines after).
size_t OpenRlhfDictClose(std::string_view text, size_t brace);

}  // namespace strata

#endif  // STRATA_LOGS_OPENRLHF_STATUS_LINE_H_
