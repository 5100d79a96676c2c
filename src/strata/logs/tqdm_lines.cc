// tqdm's progress bar as the HF Trainer's ProgressCallback draws it
// ("  2%|##  | 10/500 [00:20<10:00,  2.00s/it]"). Its "{'loss': ...}" records print no step: the
// bar that tqdm.write redraws right after a record shows global_step at that record (the bar is
// updated in on_step_end, before on_log), which numbers the record with its real step instead
// of 1, 2, 3 (logging_steps apart). The bar also gives the elapsed time (a clock) and tqdm's
// smoothed seconds per iteration.
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"

namespace strata {

bool ParseTqdmBar(std::string_view text, StepRecord& r) {
  const size_t pct = text.find("%|");
  if (pct == std::string_view::npos) return false;
  const size_t bar_end = text.find('|', pct + 2);
  if (bar_end == std::string_view::npos) return false;
  const size_t open = text.find('[', bar_end);
  const size_t close = open == std::string_view::npos ? open : text.find(']', open);
  if (close == std::string_view::npos) return false;
  // "10/500" between the bar and the bracket.
  const std::string_view counter = TrimSpace(text.substr(bar_end + 1, open - bar_end - 1));
  const size_t slash = counter.find('/');
  if (slash == std::string_view::npos) return false;
  const auto n = ParseInt64(counter.substr(0, slash));
  const auto total = ParseInt64(counter.substr(slash + 1));
  if (!n || !total || *n <= 0 || *total < *n) return false;
  // "00:20<10:00,  2.00s/it" (or "1.23it/s"; "?s/it" before the first rate).
  const std::string_view inside = text.substr(open + 1, close - open - 1);
  const size_t lt = inside.find('<');
  const size_t comma = inside.find(',');
  if (lt == std::string_view::npos || comma == std::string_view::npos || comma < lt) return false;
  const auto elapsed = ParseDurationSeconds(TrimSpace(inside.substr(0, lt)));
  if (!elapsed) return false;
  std::string_view rate = TrimSpace(inside.substr(comma + 1));
  if (const size_t more = rate.find(','); more != std::string_view::npos) {
    rate = TrimSpace(rate.substr(0, more));  // a postfix follows
  }
  if (rate.ends_with("s/it")) {
    if (auto v = ParseLogNumber(rate.substr(0, rate.size() - 4)); v && *v > 0) {
      r.running_step_time_s = *v;
    }
  } else if (rate.ends_with("it/s")) {
    if (auto v = ParseLogNumber(rate.substr(0, rate.size() - 4)); v && *v > 0) {
      r.running_step_time_s = 1.0 / *v;
    }
  }
  if (r.running_step_time_s) r.running_origin = RunningOrigin::kSmoothed;
  r.step = *n;
  r.total_steps = *total;
  r.elapsed_s = *elapsed;
  return true;
}

}  // namespace strata
