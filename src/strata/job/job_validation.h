// megatron-core's layout rules, checked before any formula runs. A violation names the rule,
// echoes the values that broke it and lists values that would work.
#ifndef STRATA_JOB_JOB_VALIDATION_H_
#define STRATA_JOB_JOB_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/job_spec.h"
#include "strata/job/query_group_split.h"
#include "strata/job/resolved_job.h"
#include "strata/model/model_config.h"

namespace strata {

/// The rules that need no model: world = TP x PP x CP x DP (DP derived when absent), expert
/// layout EP x ETP divides TP x CP x DP, global batch = micro batch x DP x accumulation, VPP
/// needs PP > 1, CP splits the sequence into 2 x CP chunks. Fills job.layout().dp.
Status CheckLayoutArithmetic(JobSpec& job);

/// The rules that need the architecture: heads divisible by TP, the KV heads under `split`
/// (linear-attention heads divisible by TP), experts by EP, expert FFN width by ETP, layers by
/// PP x VPP, the recompute layer count, frozen module names, MTP present when asked for.
Status CheckLayoutAgainstModel(const JobSpec& job, const ModelConfig& model, QueryGroupSplit split);

/// The values in [1, limit] that satisfy `ok` (divisors of the world size, typically), for
/// "values that would work" hints.
std::vector<int64_t> ValuesThatWork(int64_t limit, const std::function<bool(int64_t)>& ok);

/// The vocabulary as megatron-core pads it: a multiple of 128 x TP
/// (--make-vocab-size-divisible-by 128), so every TP rank holds an equal slice.
int64_t PaddedVocab(int64_t vocab_size, int64_t tp);

}  // namespace strata

#endif  // STRATA_JOB_JOB_VALIDATION_H_
