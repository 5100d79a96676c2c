// What `strata import --explain` prints: the job YAML, then where each field came from, the
// framework defaults applied and what was read but not used.
#ifndef STRATA_REPORT_IMPORT_REPORT_H_
#define STRATA_REPORT_IMPORT_REPORT_H_

#include <string>

#include "strata/importer/import_job.h"

namespace strata {

/// The job YAML first, then the provenance table.
std::string RenderImportText(const ImportReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_IMPORT_REPORT_H_
