// Which failure one log line reports, read alone (failure_log.h): CUDA and GPU errors, crashes,
// NCCL bootstrap and network failures, settings, TORCH_DISTRIBUTED_DEBUG reports, torchrun's
// worker exits, teardown, the end of training and c10d traceback frames. Multi-line blocks
// (torchrun's summary, the analyser's report, Horovod's lists) are the scanner's, in
// failure_log.cc.
#ifndef STRATA_HANG_PARSERS_FAILURE_LINE_H_
#define STRATA_HANG_PARSERS_FAILURE_LINE_H_

#include <string_view>

#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {

/// Sets the kind and the kind's fields of `*s` when `line` (cleaned) reports a failure; false
/// when it reports none. The rank prefixes, host, file and line are the caller's.
bool ClassifyFailureLine(std::string_view line, FailureSignal* s);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_FAILURE_LINE_H_
