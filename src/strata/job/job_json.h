// The resolved job as the "job" object of every --json view (memory, step), so that the same
// job is described by the same fields, in the same order, with the same names.
#ifndef STRATA_JOB_JOB_JSON_H_
#define STRATA_JOB_JOB_JSON_H_

#include "strata/core/json_output.h"
#include "strata/job/resolved_job.h"

namespace strata {

/// A layout's fields, appended to `j` in this order: tp, pp, vpp, first_stage_layers and
/// last_stage_layers (0: the even share), account_for_embedding, account_for_loss, cp, ep, etp,
/// dp, expert_dp, sequence_parallel. Every view that prints a layout (memory, step, map, plan)
/// writes it with this, so a layout has the same fields everywhere. `experts`: the model has
/// routed experts; a dense model has no expert-DP group, so expert_dp is null.
void AddLayoutJson(Json& j, const ParallelLayout& l, bool experts);

/// file, cluster, model, gpu, gpus, the layout (AddLayoutJson), micro and global batch, max_tokens,
/// recompute, dtypes, distributed optimizer, cross entropy, sharding and FP8 recipe; torchtitan's
/// selective_ac_option and the activation-offload layers only when the job sets them.
Json JobToJson(const ResolvedJob& job);

}  // namespace strata

#endif  // STRATA_JOB_JOB_JSON_H_
