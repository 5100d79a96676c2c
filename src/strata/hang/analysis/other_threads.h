// All ranks at the same place: when every rank's main thread shows the same stack, the odd rank
// may differ in another thread (a checkpoint writer, a data-loading or logging thread still
// running on one rank while its peers' are idle or gone). py-spy dumps every thread; this compares
// the ranks' other, non-idle threads and names the ranks whose set differs from the majority's.
#ifndef STRATA_HANG_ANALYSIS_OTHER_THREADS_H_
#define STRATA_HANG_ANALYSIS_OTHER_THREADS_H_

#include <optional>
#include <vector>

#include "strata/hang/analysis/patterns.h"

namespace strata::hang {

/// Pattern "odd_other_thread" when the ranks of `group` (one stack group holding every rank)
/// split on their other threads into a majority and a minority (at most a quarter of the
/// majority; in four ranks or fewer, any smaller set). Only processes with a known RANK count.
std::optional<Pattern> FindOddOtherThread(const std::vector<RankView>& views,
                                          const StackGroup& group);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_OTHER_THREADS_H_
