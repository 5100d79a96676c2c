// The verdict for scripts (JSON with a schema_version) and for people (a text summary whose
// every number carries its unit).
#ifndef STRATA_HANG_ANALYSIS_VERDICT_JSON_H_
#define STRATA_HANG_ANALYSIS_VERDICT_JSON_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/hang/analysis/verdict.h"

namespace strata::hang {

inline constexpr const char* kVerdictKind = "hang_verdict";

Json VerdictToJson(const Verdict& verdict);

/// `max_frames`: frames shown per stack group (innermost first).
std::string VerdictToText(const Verdict& verdict, size_t max_frames = 8);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_VERDICT_JSON_H_
