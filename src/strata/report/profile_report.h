// `strata profile`'s output: JSON (schema_version, the field names checks rely on) and the
// component table.
#ifndef STRATA_REPORT_PROFILE_REPORT_H_
#define STRATA_REPORT_PROFILE_REPORT_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/profile/profile.h"

namespace strata::profile {

/// {"schema_version", "kind": "profile", "ranks": [{"file", "rank", "whole_trace": {...},
/// "steps": [{"step", ...}]}], "warnings"}; each figure set holds span_s, gpu_busy_s, idle_s,
/// nccl_s, nccl_exposed_s, comm_other_s, comm_other_exposed_s and <component>_s.
Json ProfileJson(const ProfileReport& report);

/// Per rank, a table of components (rows) by whole trace and step (columns), in ms.
std::string ProfileText(const ProfileReport& report);

}  // namespace strata::profile

#endif  // STRATA_REPORT_PROFILE_REPORT_H_
