// The text of `strata preflight`: each node's driver, NCCL socket interface and RDMA ports, the
// software that runs on the drivers, the timeouts, every finding with its fix, what the bundles
// did not hold, and the result (never "ready" on evidence that was not there).
#ifndef STRATA_REPORT_PREFLIGHT_TEXT_H_
#define STRATA_REPORT_PREFLIGHT_TEXT_H_

#include <string>

#include "strata/preflight/checks.h"

namespace strata {

std::string RenderPreflightText(const preflight::PreflightReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_PREFLIGHT_TEXT_H_
