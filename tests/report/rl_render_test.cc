// `strata rl`'s text names the rollout engine the job gives: an SGLang rollout is printed as
// SGLang, priced with vLLM's model, and says what is shared and what may differ. Before, every
// rollout was printed as "vLLM".
#include <gtest/gtest.h>

#include <string>

#include "strata/report/rl_report.h"

namespace strata {
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

}  // namespace
}  // namespace strata
