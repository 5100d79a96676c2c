// Rendering of an MfuReport: the text `strata mfu` prints, its --explain derivations and its
// JSON document. Returns strings; the CLI decides where they go.
#ifndef STRATA_REPORT_MFU_REPORT_H_
#define STRATA_REPORT_MFU_REPORT_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/core/strings.h"
#include "strata/sim/mfu.h"

namespace strata {

/// How the throughput was given, for the explanation ("2,310,000 tokens / 120 s").
struct ThroughputSource {
  double tokens_per_step = 0;  // 0 when a rate was given
  double step_time_s = 0;
};

std::string RenderMfuText(const MfuReport& report, const ThroughputSource& source, bool explain);
Json MfuJson(const MfuReport& report, const ThroughputSource& source);

}  // namespace strata

#endif  // STRATA_REPORT_MFU_REPORT_H_
