// How a training engine splits softmax attention's KV heads (query groups) over tensor
// parallelism: the one rule job validation and the planner's layout space both apply.
#ifndef STRATA_JOB_QUERY_GROUP_SPLIT_H_
#define STRATA_JOB_QUERY_GROUP_SPLIT_H_

#include <cstdint>

#include "strata/job/engine_chain.h"

namespace strata {

/// How the engine that trains a job splits softmax attention's KV heads (query groups) over TP.
enum class QueryGroupSplit {
  /// Whole KV heads per rank: TP must divide them (HF tensor-parallel plans, DTensor).
  kTpDivides,
  /// megatron-core: the query groups a multiple or a divisor of TP. Below TP, each rank
  /// all-gathers the column-parallel QKV output over TP and keeps its group's K and V head
  /// (one per rank, shared by TP / groups ranks); the QKV weights stay split 1 / TP
  /// (NVIDIA/Megatron-LM d98e8a64, megatron/core/transformer/attention.py, get_query_key_value_
  /// tensors; the rule: transformer_config.py, __post_init__).
  kMultipleOrDivisor,
};

/// megatron-core's split when the job's chain runs megatron-core, else whole heads.
QueryGroupSplit QueryGroupSplitOf(const EngineChain& chain);

/// Whether TP ranks can hold `query_groups` KV heads under `split` (0 groups: no attention).
bool TpFitsQueryGroups(int64_t tp, int64_t query_groups, QueryGroupSplit split);

}  // namespace strata

#endif  // STRATA_JOB_QUERY_GROUP_SPLIT_H_
