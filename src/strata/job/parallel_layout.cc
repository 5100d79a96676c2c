#include "strata/job/parallel_layout.h"

#include <fmt/format.h>

namespace strata {

std::string LayoutHeader(const ParallelLayout& l) {
  return fmt::format("TP{} PP{} VPP{} CP{} EP{} ETP{} DP{} (expert-DP {}), SP {}", l.tp, l.pp,
                     l.vpp, l.cp, l.ep, l.etp, l.dp, l.expert_dp(),
                     l.sequence_parallel ? "on" : "off");
}

}  // namespace strata
