// The job the pipeline tests vary with --set: the reference model on 4 nodes of 8 H20, TP1 EP1,
// 64 samples of 4,096 tokens per step (pipeline_split_test.cc, pipeline_chunks_test.cc).
#ifndef STRATA_TESTS_JOB_PIPELINE_TEST_JOB_H_
#define STRATA_TESTS_JOB_PIPELINE_TEST_JOB_H_

#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"

namespace strata::testing {

inline constexpr const char* kPipelineTestJob =
    "model: qwen3.6-35b-a3b\n"
    "cluster: {gpu: H20, gpus_per_node: 8, nodes: 4}\n"
    "parallel: {tp: 1, ep: 1}\n"
    "batch: {micro_batch: 1, global_batch: 64}\n"
    "sequence: {max_tokens: 4096}\n";

/// The job above with `sets` applied, resolved.
inline Result<ResolvedJob> ResolvePipelineTestJob(const std::vector<std::string>& sets) {
  auto spec = ParseJobSpec(kPipelineTestJob, "j.yaml", sets);
  if (!spec.ok()) return spec.error();
  return ResolveJob(*spec);
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_JOB_PIPELINE_TEST_JOB_H_
