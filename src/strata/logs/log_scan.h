// Small scanners for training-log lines: numbers as frameworks print them (1.8E+00, nan, 7,282,
// np.float64(0.5)), ms-swift/tqdm durations, and the launcher prefixes that
// say which rank printed a line. They never throw and never read past the view.
#ifndef STRATA_LOGS_LOG_SCAN_H_
#define STRATA_LOGS_LOG_SCAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

/// A number: decimal or exponent form, nan/inf (any case, signed), thousands separators
/// ("7,282"), a trailing '%' is NOT accepted (callers strip units), np.float64(x) wrappers.
std::optional<double> ParseLogNumber(std::string_view text);
/// `field` = the number in `value` x `scale`; left as it was when `value` holds none.
void SetLogNumber(std::optional<double>& field, std::string_view value, double scale = 1.0);

/// A step count as a log prints it, integer or float ("794", "global_step=794.0"): a whole,
/// non-negative number below 2^53 (the largest a double holds exactly); anything else (a
/// fraction, nan, 1e69 from a corrupt line) is no step. Converting such a double to int64 is
/// undefined behaviour, not a large step.
std::optional<int64_t> StepFromNumber(double v);

/// ms-swift's format_time ("2d 0h 8m 17s", "20m 3s", "2s") and tqdm's "H:MM:SS" / "MM:SS".
std::optional<double> ParseDurationSeconds(std::string_view text);

/// A line with its launcher prefix removed: torchrun "[rank3]:" / "[default3]:", srun -l "3: ",
/// mpirun "[1,3]<stdout>:", Ray "(TaskRunner pid=123) ". `rank` is -1 when the prefix names none.
struct PrefixedLine {
  std::string_view text;
  int rank = -1;
};
PrefixedLine StripLauncherPrefix(std::string_view line);

}  // namespace strata

#endif  // STRATA_LOGS_LOG_SCAN_H_
