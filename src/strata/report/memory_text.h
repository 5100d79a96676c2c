// What `strata memory` prints: the job header (model, cluster, layout with SP, step), the ledger
// item by item and phase by phase, the verdict with the model's error band and, for an OOM, the
// changes that fit as commands the user can paste.
#ifndef STRATA_REPORT_MEMORY_TEXT_H_
#define STRATA_REPORT_MEMORY_TEXT_H_

#include <string>
#include <vector>

#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/memory/oom_advice.h"

namespace strata {

std::string RenderMemoryText(const ResolvedJob& job, const MemoryLedger& ledger,
                             const std::vector<MemoryFix>& fixes, bool explain);

}  // namespace strata

#endif  // STRATA_REPORT_MEMORY_TEXT_H_
