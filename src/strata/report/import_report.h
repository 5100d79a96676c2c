// What `strata import --explain` prints: the job YAML, then where each field came from, the
// framework defaults applied and what was read but not used.
#ifndef STRATA_REPORT_IMPORT_REPORT_H_
#define STRATA_REPORT_IMPORT_REPORT_H_

#include <string>

#include "strata/importer/import_job.h"

namespace strata {

/// The job YAML first, then the provenance table.
std::string RenderImportText(const ImportReport& report);

/// The keys of the input no mapper read, as the normal output says them (never silently): one
/// line with their count and the first `named` by name, --explain for the rest; "" when none.
std::string RenderIgnoredKeys(const ImportReport& report, size_t named = 5);

}  // namespace strata

#endif  // STRATA_REPORT_IMPORT_REPORT_H_
