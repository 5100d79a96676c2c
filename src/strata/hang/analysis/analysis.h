// The hang analysis: joins py-spy stacks, flight-recorder queues, watchdog lines, NCCL RAS and
// log signals into one Verdict. Works with any subset of the evidence.
#ifndef STRATA_HANG_ANALYSIS_ANALYSIS_H_
#define STRATA_HANG_ANALYSIS_ANALYSIS_H_

#include <vector>

#include "strata/hang/analysis/framework_timeouts.h"
#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

struct AnalyzeOptions {
  std::vector<FrameworkTimeout> frameworks;  // data/hang/framework_timeouts.yaml
};

Verdict Analyze(const EvidenceSet& evidence, const AnalyzeOptions& options);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_ANALYSIS_H_
