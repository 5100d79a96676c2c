// py-spy `dump` output, text or --json, in the layouts of py-spy 0.3.x and 0.4.x, with the
// --native and --locals variants, wrapper prefixes (pdsh "host: ", srun "N: ", Ray "(Worker pid=N)
// ") and py-spy's own failures ("Permission Denied", "Error: Failed to open process ...").
#ifndef STRATA_HANG_PARSERS_PYSPY_H_
#define STRATA_HANG_PARSERS_PYSPY_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// Every process dump in `text` (a file may hold several, e.g. one node's dumps concatenated).
/// A py-spy failure becomes a dump with `error` set, not an Error: it is evidence ("no stack for
/// this pid"). Text cut off mid-line sets `truncated`. Errors name `file`, the line and what was
/// expected; nothing in the input can crash or hang the parser.
Result<std::vector<PySpyDump>> ParsePySpy(std::string_view text, const std::string& file);

/// The thread py-spy names "MainThread"; else the one whose id is the pid (Linux main thread);
/// else the first thread printed. Null when the dump has no threads.
const PyThread* MainThread(const PySpyDump& dump);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_PYSPY_H_
