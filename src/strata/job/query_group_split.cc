#include "strata/job/query_group_split.h"

namespace strata {

QueryGroupSplit QueryGroupSplitOf(const EngineChain& chain) {
  return chain.Runs("megatron-core") ? QueryGroupSplit::kMultipleOrDivisor
                                     : QueryGroupSplit::kTpDivides;
}

bool TpFitsQueryGroups(int64_t tp, int64_t query_groups, QueryGroupSplit split) {
  if (query_groups == 0) return true;
  if (tp <= 0) return false;
  if (query_groups % tp == 0) return true;
  return split == QueryGroupSplit::kMultipleOrDivisor && tp % query_groups == 0;
}

}  // namespace strata
