// The memory ledger as JSON for scripts (`strata memory --json`). Byte fields end in _bytes,
// decimal gigabytes in _gb.
#ifndef STRATA_REPORT_MEMORY_JSON_H_
#define STRATA_REPORT_MEMORY_JSON_H_

#include <vector>

#include "strata/core/json_output.h"
#include "strata/memory/ledger.h"
#include "strata/memory/oom_advice.h"

namespace strata {

Json LedgerToJson(const Job& job, const MemoryLedger& ledger, const std::vector<MemoryFix>& fixes);

}  // namespace strata

#endif  // STRATA_REPORT_MEMORY_JSON_H_
