// `strata rl`'s text names the rollout engine the job gives: an SGLang rollout is printed as
// SGLang, priced with vLLM's model, and says what is shared and what may differ. Before, every
// rollout was printed as "vLLM".
#include <gtest/gtest.h>

#include <cstdio>
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

// A split job's memory is each side's own: the rollout GPUs hold vLLM alone (0.6 x 94.98 GiB
// budget + 0.36 GiB CUDA graphs outside it = 56.99 + 0.36 = 57.35 GiB), the training GPUs the
// actor's ledger; nothing of the colocated section (vLLM beside the resident trainer, host RAM
// for the offloaded trainer). Before, the colocated section was printed for it.
// Its step table's shares are of the step's GPU time and add up to 100%. On split 8+32 sync
// (step 373.2 = generation 179.0 + training 181.6 + sync 12.5 s, generation with its decode's TP
// all-reduces; idle = (181.6 x 8 + 179.0 x 32) / 40 = 179.5 s): generation 179.0 x 8 / (373.2 x
// 40) = 9.6%, the actor update 122.0 x 32 / (373.2 x 40) = 26.2%, sync (0.13 + 11.70 + 0.70 +
// 0.01 = 12.54) / 373.2 = 3.4%, idle 179.5 / 373.2 = 48.1%; before, each was over the step alone
// (generation 46.5%, update 33.6%) and the column summed to 147%.
TEST(RlRenderTest, SplitShowsEachSidesMemoryAndSharesAddUp) {
  const RlEvaluation e = Evaluate({"placement.mode=split", "placement.rollout_gpus=8"});
  const std::string text = RenderRlText(e, false);
  EXPECT_NE(text.find("memory per GPU, split 8+32 sync (94.98 GiB card)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rollout GPUs (8)                                    57.35  vLLM budget + "
                      "CUDA graphs, nothing else"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("training GPUs (32): actor's update"), std::string::npos) << text;
  EXPECT_EQ(text.find("beside the resident trainer"), std::string::npos) << text;
  EXPECT_EQ(text.find("host memory for the offloaded trainer"), std::string::npos) << text;
  // The training side's update is its own ledger's peak, at 32 GPUs' layout.
  ASSERT_FALSE(e.configured.train_phases.empty());
  EXPECT_EQ(e.configured.train_phases[0].bytes.count(), e.configured.train_peak.count());
  const std::string table = text.substr(text.find("RL step, split 8+32 sync"));
  double sum = 0;
  for (const char* part : {"generation", "old log-prob", "reference", "actor update", "weight sync",
                           "offload copies", "idle (GPU average)"}) {
    const size_t at = table.find("\n  " + std::string(part) + " ");
    ASSERT_NE(at, std::string::npos) << part;
    const std::string line = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
    double time_s = 0, share = 0;
    ASSERT_EQ(std::sscanf(line.c_str() + 2 + std::string(part).size(), "%lf %lf", &time_s, &share),
              2)
        << line;
    sum += share;
    const std::string name = part;
    const double expected = name == "generation"           ? 9.6
                            : name == "actor update"       ? 26.2
                            : name == "weight sync"        ? 3.4
                            : name == "idle (GPU average)" ? 48.1
                                                           : -1;
    if (expected >= 0) {
      EXPECT_NEAR(share, expected, 0.05) << name;
    }
  }
  EXPECT_NEAR(sum, 100, 0.35);  // seven shares rounded to 0.1
}

// --explain says why the best split stops at its rollout GPUs. Reference job: split 8+32 one
// step off, step = max(generation 179.0, training 28.7 + 28.7 + 122.0 + 2.2 = 181.6) + sync
// 12.5 = 194.1 s: the training side is the longer one. The next valid split with more rollout
// GPUs is 24+16 (10+30, 16+24 and 20+20 cannot train: ReferenceSplits). Generation's floor, the
// longest sample alone: 8,192 decode steps at batch 1, each reading the dense weights
// (34,660,610,688 - 32,212,254,720 experts - 508,559,360 embedding) x 2 B / TP2 =
// 1,939,796,608 B, the 8 / 256 of the experts one token touches, 32,212,254,720 x 2 / 2 x
// 0.03125 = 1,006,632,960 B, and the sequence's KV (a mean 5,120-token context x 10,240 B) and
// state (16,465,920 B read and written), about 3.03e9 B at 0.7 x 4.0 TB/s = 1.08 ms + the
// engine's 4 ms = 5.08 ms, + the TP2 all-reduces, 2 x 40 layers of one token's 2,048 x 2 B =
// 4 KiB on the H20's NVSwitch, NCCL's LL ring 6.6 + 2 x 0.6 + 4,096 / (450e9 x 0.822) / 0.25 us
// = 7.844 us each, 0.6275 ms a step: 8,192 x (5.08 + 0.6275) ms = 41.6 + 5.14 = 46.8 s. Before,
// this was only in docs/rl.md.
TEST(RlRenderTest, ExplainSaysWhyMoreRolloutGpusStopHelping) {
  const RlEvaluation e = Evaluate({});
  ASSERT_GE(e.best_split, 0);
  EXPECT_EQ(e.split_limit.bound, "the training side");
  ASSERT_GE(e.split_limit.next, 0);
  EXPECT_EQ(e.splits[static_cast<size_t>(e.split_limit.next)].rollout_gpus, 24);
  EXPECT_NEAR(e.split_limit.longest_sample.s(), 41.6 + 5.14, 0.1);
  const std::string text = RenderRlText(e, true);
  EXPECT_NE(text.find("why more rollout GPUs stop helping: the best split, split 8+32 "
                      "one-step-off, is bounded by the training side: step = max(generation, "
                      "training) + sync = 194.1 s (generation 179.0 s, training 181.6 s, sync "
                      "12.5 s); with more rollout GPUs, split 24+16 one-step-off"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("8,192 tokens at batch 1 = 46.8 s"), std::string::npos) << text;
  // Longer responses make generation the longer side at 8+32; the next split's training
  // (316.2 s on 16 GPUs) then bounds the step.
  const RlEvaluation longer = Evaluate({"lengths.response_max=32768"});
  ASSERT_GE(longer.best_split, 0);
  EXPECT_EQ(longer.split_limit.bound, "the training side");
}

}  // namespace
}  // namespace strata::rl_render_test
