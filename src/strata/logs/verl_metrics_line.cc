#include "strata/logs/verl_metrics_line.h"

namespace strata {

bool StartsVerlMetricsLine(std::string_view text) {
  if (text.substr(0, 5) != "step:") return false;
  size_t i = 5;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i > 5 && text.substr(i, 3) == " - ";
}

bool ContinuesVerlMetricsLine(std::string_view raw) {
  if (raw.empty() || raw.front() == ' ' || raw.front() == '(' || raw.front() == '[') {
    return false;
  }
  return raw.find(" - ") != std::string_view::npos && raw.find(':') != std::string_view::npos &&
         raw.find('/') != std::string_view::npos;
}

}  // namespace strata
