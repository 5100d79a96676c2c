// Model-specific module code the frameworks run outside their fused kernels (data/frameworks.yaml
// `model_code:`): GPT-OSS's clamped GLU and per-expert output biases in megatron-core, and the
// unfused YaRN rotary Megatron-Bridge leaves it with. Before these were priced the step saw only
// the fused activation and a fused rotary for GPT-OSS (docs/step-validation.md: its 31 held-out
// rows 25-52% too fast).
#include <gtest/gtest.h>

#include "strata/hw/gpu_catalog.h"
#include "strata/model/model_config.h"
#include "strata/sim/framework_overhead.h"
#include "strata/sim/framework_profile.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata::model_code_traffic_test {
namespace {

ModelConfig Model(const std::string& name) {
  auto m = LoadModelConfig(name);
  EXPECT_TRUE(m.ok()) << name << (m.ok() ? "" : m.error().Format());
  return m.ok() ? *m : ModelConfig{};
}

FrameworkCatalog Catalog() {
  auto c = LoadFrameworkCatalog();
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().Format());
  return c.ok() ? *c : FrameworkCatalog{};
}

FrameworkProfile Resolve(const std::string& name, const std::string& version) {
  JobSpec job;
  job.framework = {name, version, false, true, ""};
  job.layout.dp = 8;
  auto p = ResolveFramework(Catalog(), job, "B200");
  EXPECT_TRUE(p.ok()) << name;
  return p.ok() ? *p : FrameworkProfile{};
}

// GPT-OSS 120B (data/models/gpt-oss-120b.json): 36 MoE layers of 128 experts, top 4, expert width
// f = 2880, hidden h = 2880, 64 query heads and 8 KV heads of 64, swiglu_limit 7.0, expert
// biases, rope_scaling yarn. Elements per token, all layers:
//   clamped GLU inputs  36 x 4 x 2 f       = 36 x 23,040 = 829,440
//   expert outputs      36 x 4 x h         = 36 x 11,520 = 414,720
//   q and k (YaRN)      36 x (64 + 8) x 64 = 36 x 4,608  = 165,888
// Qwen3-30B-A3B has none of the three (no clamp, no expert biases, plain rope).
TEST(ModelCodeTraffic, TablesCountGptOssFeatures) {
  const ModelConfig oss = Model("gpt-oss-120b");
  EXPECT_TRUE(oss.moe.activation_clamp);
  EXPECT_TRUE(oss.moe.expert_bias);
  EXPECT_TRUE(oss.attention.rope_yarn);
  auto gpu = FindGpu("B200");
  ASSERT_TRUE(gpu.ok());
  auto eff = LoadKernelEfficiency();
  ASSERT_TRUE(eff.ok());
  StepTableInputs in;
  in.model = &oss;
  in.sequence = SequenceLengths::Fixed(4096);
  in.gpu = &*gpu;
  in.efficiency = &*eff;
  const StepTables t = BuildStepTables(in);
  EXPECT_DOUBLE_EQ(t.clamped_glu_elements_per_token, 829440);
  EXPECT_DOUBLE_EQ(t.expert_bias_elements_per_token, 414720);
  EXPECT_DOUBLE_EQ(t.yarn_rotary_elements_per_token, 165888);

  const ModelConfig qwen = Model("qwen3-30b-a3b");
  in.model = &qwen;
  const StepTables q = BuildStepTables(in);
  EXPECT_DOUBLE_EQ(q.clamped_glu_elements_per_token, 0);
  EXPECT_DOUBLE_EQ(q.expert_bias_elements_per_token, 0);
  EXPECT_DOUBLE_EQ(q.yarn_rotary_elements_per_token, 0);
}

// data/frameworks.yaml: megatron-core's clamp (8 B forward, 15 B backward per fc1-output element)
// and per-expert bias (12 B, 16 B per expert-output element); Megatron-Bridge adds its unfused
// YaRN rotary (20 B, 18 B per q/k element beyond a fused kernel). megatron-core named directly
// keeps its own rotary fusion; torchtitan runs none of this code.
TEST(ModelCodeTraffic, ProfilesCarryTheirEnginesCode) {
  const FrameworkProfile bridge = Resolve("megatron-bridge", "26.02");
  EXPECT_DOUBLE_EQ(bridge.model_code.clamped_glu_forward, 8);
  EXPECT_DOUBLE_EQ(bridge.model_code.clamped_glu_backward, 15);
  EXPECT_DOUBLE_EQ(bridge.model_code.expert_bias_forward, 12);
  EXPECT_DOUBLE_EQ(bridge.model_code.expert_bias_backward, 16);
  EXPECT_DOUBLE_EQ(bridge.model_code.yarn_rotary_forward, 20);
  EXPECT_DOUBLE_EQ(bridge.model_code.yarn_rotary_backward, 18);
  const FrameworkProfile mcore = Resolve("megatron-core", "0.16");
  EXPECT_DOUBLE_EQ(mcore.model_code.clamped_glu_forward, 8);
  EXPECT_DOUBLE_EQ(mcore.model_code.yarn_rotary_forward, 0);
  EXPECT_FALSE(Resolve("torchtitan", "0.2.2").model_code.any());
}

// Hand-built: 1,000 clamped-GLU, 500 expert-bias and 200 YaRN q/k elements per token, the
// bridge's bytes, 1,000 tokens on one rank, HBM 1e12 B/s at 0.5 (5e11 achieved), one stage.
//   forward  8 x 1000 + 12 x 500 + 20 x 200 = 18,000 B/token -> 18e6 B / 5e11 = 36 us
//   backward 15 x 1000 + 16 x 500 + 18 x 200 = 26,600 B/token -> 53.2 us; together 89.2 us
// With the experts as one fused MLP only the rotary stays: (4,000 + 3,600) x 1000 / 5e11 =
// 15.2 us. TP 2 splits every one of these tensors: half. Before, all of it was 0.
TEST(ModelCodeTraffic, PricedAsMemoryBoundPasses) {
  StepTables t;
  t.framework.on = true;
  t.framework.host_op_s = 10e-6;
  t.framework.model_code = {8, 15, 12, 16, 20, 18};
  t.framework_counts = {36, 36, 9};
  t.clamped_glu_elements_per_token = 1000;
  t.expert_bias_elements_per_token = 500;
  t.yarn_rotary_elements_per_token = 200;
  t.mean_tokens = 1000;
  t.hbm = BytesPerSecond::Of(1e12);
  t.efficiency.hbm_efficiency = 0.5;
  StepLayout s;
  s.micro_batch = 1;
  MicroBatchCompute c;
  c.forward.dense_gemm = Seconds::Of(1.0);  // GPU-bound: no host rows
  c.backward.dense_gemm = Seconds::Of(2.0);
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 89.2e-6, 1e-12);
  const ModelCodeBytes b = ModelCodeBytesPerToken(t, t.framework, s.layout);
  EXPECT_DOUBLE_EQ(b.forward(), 18000);
  EXPECT_DOUBLE_EQ(b.backward(), 26600);
  s.layout.tp = 2;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 44.6e-6, 1e-12);
  s.layout.tp = 1;
  t.framework.fused_expert_mlp = true;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 15.2e-6, 1e-12);
}

// `strata step` says what it priced: one line per feature the model has.
TEST(ModelCodeTraffic, AssumptionLines) {
  StepTables t;
  t.framework = Resolve("megatron-bridge", "26.02");
  t.clamped_glu_elements_per_token = 1;
  t.expert_bias_elements_per_token = 1;
  t.yarn_rotary_elements_per_token = 1;
  const std::vector<std::string> lines = ModelCodeAssumptions(t, t.framework);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "clamped GLU: megatron-core clamps gate and up and concatenates them in eager code "
            "before its fused activation (8 B forward, 15 B backward per element of the experts' "
            "fc1 output)");
  EXPECT_EQ(lines[2],
            "YaRN rotary: megatron-bridge turns rotary fusion off for it, so q and k go through "
            "eager rotary code (20 B forward, 18 B backward per element beyond a fused kernel's)");
  t.framework.fused_expert_mlp = true;
  EXPECT_EQ(ModelCodeAssumptions(t, t.framework)[0],
            "clamped GLU: inside the fused expert MLP (no eager clamp)");
  t.framework = Resolve("torchtitan", "0.2.2");
  EXPECT_TRUE(ModelCodeAssumptions(t, t.framework).empty());
}

}  // namespace
}  // namespace strata::model_code_traffic_test
