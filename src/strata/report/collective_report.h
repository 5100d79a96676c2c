// What `strata comm` shows: one collective's cost under the chosen algorithm, beside every
// algorithm that applies, in nccl-tests' terms. Returns strings and JSON.
#ifndef STRATA_REPORT_COLLECTIVE_REPORT_H_
#define STRATA_REPORT_COLLECTIVE_REPORT_H_

#include <string>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/core/json_output.h"

namespace strata {

struct CollectiveReport {
  std::string cluster;
  CommAlgorithm requested = CommAlgorithm::kAuto;
  CollectiveCost chosen;
  std::vector<CollectiveCost> alternatives;  // every applicable algorithm, the chosen included
};

Result<CollectiveReport> BuildCollectiveReport(const CollectiveModel& model, CollectiveOp op,
                                               Bytes size, const GroupShape& shape,
                                               CommAlgorithm algorithm);
std::string RenderCollectiveText(const CollectiveReport& report);
Json CollectiveJson(const CollectiveReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_COLLECTIVE_REPORT_H_
