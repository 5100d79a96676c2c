// `strata rl`'s text names the rollout engine the job gives: an SGLang rollout is printed as
// SGLang, priced with vLLM's model, and says what is shared and what may differ. Before, every
// rollout was printed as "vLLM".
#include <gtest/gtest.h>

#include <string>

#include "strata/report/rl_report.h"

namespace strata::rl_render_test {
namespace {

RlEvaluation Evaluate(const std::vector<std::string>& overrides) {
  auto spec = LoadRlSpec(kReferenceRlJobName, overrides);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  EXPECT_TRUE(e.ok()) << e.error().Format();
  return e.ok() ? *e : RlEvaluation{};
}

TEST(RlRenderTest, SglangRolloutIsNamedAndItsPricingSaid) {
  const std::string sglang = RenderRlText(Evaluate({"rollout.engine=sglang"}), true);
  EXPECT_NE(sglang.find("rollout (SGLang, priced as vLLM 0.19): TP2 x 20 instances"),
            std::string::npos)
      << sglang;
  EXPECT_EQ(sglang.find("rollout (vLLM"), std::string::npos) << sglang;
  // --explain: what verl hands SGLang, and what the fraction holds there.
  EXPECT_NE(sglang.find("verl starts SGLang with mem_fraction_static = gpu_memory_utilization"),
            std::string::npos);
  EXPECT_NE(sglang.find("'the memory used for static allocation (model weights and KV cache "
                        "memory pool)'"),
            std::string::npos);
  EXPECT_NE(
      RenderRlJson(Evaluate({"rollout.engine=sglang"})).find("\"rollout_engine\": \"sglang\""),
      std::string::npos);
  const std::string vllm = RenderRlText(Evaluate({}), true);
  EXPECT_NE(vllm.find("rollout (vLLM 0.19): TP2 x 20 instances"), std::string::npos);
  EXPECT_EQ(vllm.find("SGLang"), std::string::npos);
}

// Under the dynamic batch --explain says how the largest micro batch is formed (its memory) and
// the JSON gives it: the reference job at 16,384 tokens, 3 micro batches of 13,653 tokens a rank
// whose largest is verl's partition's largest part, 14,368.05 tokens (rl_step_test,
// DynamicBatchPricesTheLargestMicroBatchsMemory). Before: "the largest up to 20,480", the
// differencing method's spread bound.
TEST(RlRenderTest, DynamicBatchSaysItsLargestMicroBatch) {
  const RlEvaluation e = Evaluate({"batch.max_tokens_per_gpu=16384"});
  const std::string text = RenderRlText(e, true);
  EXPECT_NE(text.find("3 micro batches of 13,653 tokens (8 samples x 5,120 tokens in "
                      "16,384-token budgets), the largest 14,368"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("over the rank's samples at the 1,024-token mean prompt + the "
                      "capped_exponential responses' quantiles at (i + 0.5) / n"),
            std::string::npos)
      << text;
  EXPECT_NE(RenderRlJson(e).find("\"largest_micro_batch_tokens\": 14368.05"), std::string::npos)
      << RenderRlJson(e);
}

// The step table's reference row names what runs: the actor with its adapter disabled, and no row
// at all for a job without a reference. Before: every job printed "reference 0.0 ... the same
// forward on the reference weights", a reference-free one too.
TEST(RlRenderTest, TheStepTableNamesTheReferenceThatRuns) {
  const std::string none = RenderRlText(Evaluate({"reference=false"}), false);
  EXPECT_EQ(none.find("the same forward on the reference weights"), std::string::npos) << none;
  const std::string own = RenderRlText(Evaluate({"reference_in_actor=true"}), false);
  EXPECT_NE(own.find("the actor's forward with its adapter disabled"), std::string::npos) << own;
  const std::string separate = RenderRlText(Evaluate({}), false);
  EXPECT_NE(separate.find("the same forward on the reference weights"), std::string::npos);
}

}  // namespace
}  // namespace strata::rl_render_test
