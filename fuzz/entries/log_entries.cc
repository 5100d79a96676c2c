// Watchdog / NCCL log lines and the log signals (OOM, iteration, NCCL interface, traceback).
#include "entries/fuzz_entries.h"
#include "strata/hang/parsers/log_signals.h"
#include "strata/hang/parsers/watchdog_log.h"

namespace strata::fuzz {

using namespace strata::hang;

void WatchdogLog(std::string_view input) {
  const std::string first = CheckJsonOutput(ToJson(ParseWatchdogLog(input, "fuzz.log")));
  RequireSame(first, CheckJsonOutput(ToJson(ParseWatchdogLog(input, "fuzz.log"))),
              "watchdog: parsing twice gives one result");
}

void LogSignals(std::string_view input) {
  Json out = Json::array();
  for (const LogSignal& s : ScanLogSignals(input, "fuzz.log")) {
    out.push_back({static_cast<int>(s.kind), s.global_rank ? *s.global_rank : -1, s.host, s.value,
                   s.detail, s.frame_file, s.line, s.text});
    Require(s.text.size() <= 4 * 300 + 3, "log signals: a kept line is bounded");
  }
  CheckJsonOutput(out);
}

}  // namespace strata::fuzz
