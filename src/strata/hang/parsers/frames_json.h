// The one JSON shape of a Python stack, shared by every hang output that shows one.
#ifndef STRATA_HANG_PARSERS_FRAMES_JSON_H_
#define STRATA_HANG_PARSERS_FRAMES_JSON_H_

#include <vector>

#include "strata/core/json_output.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// [{"function", "file", "line"}, ...], innermost first.
Json FramesToJson(const std::vector<PyFrame>& frames);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_FRAMES_JSON_H_
