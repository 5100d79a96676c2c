// Watchdog / NCCL log lines, the log signals (OOM, iteration, NCCL interface, traceback) and
// Gloo's failure lines.
#include <nlohmann/json.hpp>

#include "entries/fuzz_entries.h"
#include "strata/hang/parsers/gloo_log.h"
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

void GlooLog(std::string_view input) {
  Json out = Json::array();
  for (const GlooSignal& s : ScanGlooLog(input, "fuzz.log")) {
    out.push_back({GlooSignalKindName(s.kind), s.global_rank ? *s.global_rank : -1,
                   s.timeout_ms ? *s.timeout_ms : -1, s.operation, s.peer, s.detail, s.line,
                   s.text});
    Require(s.line >= 1, "gloo: line numbers are 1-based");
    Require(s.text.size() <= 300 && s.detail.size() <= 300, "gloo: kept text is bounded");
  }
  const std::string first = CheckJsonOutput(out);
  Require(ScanGlooLog(input, "fuzz.log").size() == out.size(),
          "gloo: scanning twice gives the same signals");
}

}  // namespace strata::fuzz
