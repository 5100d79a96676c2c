// The wall time per step of the interval a record closes, for logs that print a running average
// instead (ms-swift's train_speed since the start, tqdm's smoothed s/it): one early stall would
// otherwise make every later step of such a log look slow (the average carries it for hundreds
// of steps), and a throughput drop would be flagged where the run went at full speed.
#ifndef STRATA_LOGS_INTERVAL_TIME_H_
#define STRATA_LOGS_INTERVAL_TIME_H_

#include <optional>

#include "strata/logs/step_record.h"

namespace strata {

/// `prev`: the record before `cur` in the same run (nullptr for the first record, or after a
/// restart). Returns the seconds per step between the two, nullopt when the log does not say:
/// - ms-swift v3 (global_step / seconds since the trainer started): the difference of the
///   seconds the two averages imply, over the steps between them;
/// - else with a clock on both (ms-swift's elapsed_time, tqdm's elapsed): the clock's difference
///   over the steps between them; where both v4 averages count from step 0 (they agree with the
///   whole-second clock), the averages' implied seconds instead, which have more digits;
/// - the first record: the average itself, which then covers the steps before it (tqdm's: the
///   recent ones; ms-swift v3's counts the steps before a resume too, so it reads low there).
std::optional<double> IntervalStepTime(const StepRecord* prev, const StepRecord& cur);

}  // namespace strata

#endif  // STRATA_LOGS_INTERVAL_TIME_H_
