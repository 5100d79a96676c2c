// The preflight report as JSON for scripts (kind "preflight").
#ifndef STRATA_PREFLIGHT_REPORT_JSON_H_
#define STRATA_PREFLIGHT_REPORT_JSON_H_

#include "strata/core/json_output.h"
#include "strata/preflight/checks.h"

namespace strata::preflight {

Json ReportToJson(const PreflightReport& report);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_REPORT_JSON_H_
