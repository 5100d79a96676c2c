// Feeds a whole log text to a LogAnalyzer line by line and returns its summary: the one helper
// the logs tests share.
#ifndef STRATA_TESTS_LOGS_ANALYZE_TEXT_H_
#define STRATA_TESTS_LOGS_ANALYZE_TEXT_H_

#include <string_view>

#include "strata/logs/log_analyzer.h"

namespace strata::testing {

inline LogSummary AnalyzeText(std::string_view text) {
  LogAnalyzer analyzer;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    analyzer.FeedLine(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  analyzer.Finish();
  return analyzer.Summary();
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_LOGS_ANALYZE_TEXT_H_
