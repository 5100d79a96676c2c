// How much context-parallel traffic hides behind attention, by exchange (audit55 Q5). A ring
// (p2p) hides each step's K/V chunk behind the attention of the chunk in hand; an all-gather of
// K/V (PyTorch's _AllGatherRotater, torchtitan's default context_parallel_rotate_method =
// "allgather", torchtitan v0.2.2 config/job_config.py) is waited for after the first, local,
// sub-attention, so only 1 / CP of attention can cover it. Before, both hid behind all of
// attention, and `plan` showed torchtitan's CP 2/4/8 as exact ties with CP 1.
#include <gtest/gtest.h>

#include "step_test_support.h"
#include "strata/core/file_io.h"
#include "support/golden.h"

namespace strata {
namespace {

using testing::EvaluateJobFile;

TEST(StepCpOverlap, AllGatherHidesOnlyBehindTheLocalChunksAttention) {
  // The shipped torchtitan 405B job (TP 8, PP 8, DP 8) with CP 8 in place of DP 8 at 64K tokens:
  // 64 micro batches per pipeline per step.
  const std::string job = DataDir() + "/jobs/llama-3.1-405b-torchtitan-pp8-h100x512.yaml";
  const std::vector<std::string> base = {"parallel.cp=8", "sequence.max_tokens=65536"};
  auto with = [&](const std::string& type) {
    std::vector<std::string> sets = base;
    sets.push_back("parallel.cp_comm_type=" + type);
    return EvaluateJobFile(job, sets);
  };
  const auto gather = with("all_gather");
  const StepResult& r = gather.result;
  const double m = static_cast<double>(gather.setup.layout.micro_batches);
  const double attention_mb =
      Seconds(r.forward.attention + r.backward.attention + r.recompute.attention).s();
  const double total = r[StepPart::kCp].total.s();
  ASSERT_GT(total, 0.0);
  // exposed = max(0, traffic - m x attention per micro batch / CP), CP = 8.
  EXPECT_NEAR(r[StepPart::kCp].exposed.s(), std::max(0.0, total - m * attention_mb / 8.0),
              1e-9 * total);
  EXPECT_GT(r[StepPart::kCp].exposed.s(), 0.0);
  // The ring's steps hide behind all of attention: here, all of its traffic.
  const auto ring = with("p2p");
  const double ring_attention_mb =
      Seconds(ring.result.forward.attention + ring.result.backward.attention +
              ring.result.recompute.attention)
          .s();
  EXPECT_NEAR(ring.result[StepPart::kCp].exposed.s(),
              std::max(0.0, ring.result[StepPart::kCp].total.s() - m * ring_attention_mb),
              1e-9 * total);
}

}  // namespace
}  // namespace strata
