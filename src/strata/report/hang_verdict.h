// The verdict for scripts (JSON with a schema_version) and for people (a text summary whose
// every number carries its unit). Rendered here, in report/, as every command's output is; the
// verdict itself is hang/analysis/verdict.h.
#ifndef STRATA_REPORT_HANG_VERDICT_H_
#define STRATA_REPORT_HANG_VERDICT_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/hang/analysis/verdict.h"

namespace strata::hang {

inline constexpr const char* kVerdictKind = "hang_verdict";

Json VerdictToJson(const Verdict& verdict);

/// `max_frames`: frames shown per stack group (innermost first).
std::string VerdictToText(const Verdict& verdict, size_t max_frames = 8);

}  // namespace strata::hang

#endif  // STRATA_REPORT_HANG_VERDICT_H_
