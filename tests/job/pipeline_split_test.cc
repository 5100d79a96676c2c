// Pipeline splits as megatron-core and torchtitan build them (issue 27, fault 7): uneven stages
// with VPP > 1, megatron-core's layout string, torchtitan's default split and the V placement,
// and the schedule field. Every expected count is derived by hand in the comment beside it,
// from the frameworks' rules (megatron/core/transformer/transformer_block.py and
// transformer_layer.py at NVIDIA/Megatron-LM d98e8a6; torchtitan/distributed/
// pipeline_parallel.py at pytorch/torchtitan b5bcd76).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job/pipeline_test_job.h"
#include "strata/job/job_validation.h"
#include "strata/job/training_modes_parse.h"

namespace strata::pipeline_split_test {
namespace {

constexpr const char* kJob = testing::kPipelineTestJob;

Result<ResolvedJob> Resolve(const std::vector<std::string>& sets) {
  return testing::ResolvePipelineTestJob(sets);
}

struct SplitCase {
  const char* name;
  std::vector<std::string> sets;
  int64_t layers;
  std::vector<int64_t> stages;  // decoder layers per pipeline rank
};

// Before this change every case was refused ("uneven first/last stages together with VPP > 1
// are not modelled") or its keys were unknown.
TEST(PipelineSplit, UnevenStagesWithVirtualStagesResolve) {
  const SplitCase cases[] = {
      // Llama-3.1-405B, 126 layers, embedding and loss accounted, PP 8 VPP 2:
      // (126 + 2) / 8 = 16 per rank; the first and last rank give a slot away: 15 + 6 x 16 + 15.
      {"405B accounted PP8 VPP2",
       {"model=llama-3.1-405b", "parallel.pp=8", "parallel.vpp=2",
        "parallel.account_for_embedding=true", "parallel.account_for_loss=true"},
       126,
       {15, 16, 16, 16, 16, 16, 16, 15}},
      // Qwen3-235B, 94 layers, PP 4 VPP 2, first 22 and last 24: the middle two share
      // 94 - 46 = 48, 24 each; every count divides by VPP 2.
      {"235B first/last PP4 VPP2",
       {"model=qwen3-235b-a22b", "parallel.pp=4", "parallel.vpp=2",
        "parallel.first_stage_layers=22", "parallel.last_stage_layers=24"},
       94,
       {22, 24, 24, 24}},
      // DeepSeek-V3, 61 layers + MTP, megatron-core's documented layout for PP 16 VPP 2
      // (docs/user-guide/features/pipeline_parallel_layout.md): "Et*3|(tt|)*29,m|L" is 32
      // virtual stages, k = chunk x 16 + rank: rank 0 holds 3 + 2, ranks 1-13 2 + 2, rank 14
      // 2 + the MTP block, rank 15 2 + the loss: 5 + 13 x 4 + 2 + 2 = 61.
      {"DeepSeek-V3 layout PP16 VPP2",
       {"model=deepseek-v3", "parallel.pp=16", "mtp=true",
        "parallel.pipeline_layout=Et*3|(tt|)*29,m|L"},
       61,
       {5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2}},
      // torchtitan's default split of Llama-3.1-405B over PP 16, 1F1B (one stage per rank):
      // (126 + 2) / 16 = 8 effective layers a stage, the first and last one short: 7 + 14 x 8 +
      // 7 = 126.
      {"405B torchtitan PP16",
       {"model=llama-3.1-405b", "parallel.pp=16", "parallel.stage_split=torchtitan"},
       126,
       {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}},
      // torchtitan, DeepSeek-V3 on PP 8 with ZB-V (two virtual stages per rank in a V): 63
      // effective layers over 16 stages = 3 rem 15, so stages 0-14 get 4 and stage 15 gets 3;
      // stage 0 gives one to the embedding (3), stage 15 one to the output (2). Rank r holds
      // stages r and 15 - r: rank 0 3 + 2 = 5, ranks 1-7 4 + 4 = 8.
      {"DeepSeek-V3 torchtitan ZBV PP8",
       {"model=deepseek-v3", "parallel.pp=8", "parallel.vpp=2", "parallel.pp_schedule=zbv",
        "parallel.stage_split=torchtitan"},
       61,
       {5, 8, 8, 8, 8, 8, 8, 8}},
  };
  for (const SplitCase& c : cases) {
    auto job = Resolve(c.sets);
    ASSERT_TRUE(job.ok()) << c.name << ": " << job.error().Format();
    EXPECT_EQ(StageLayerCounts(job->spec.layout, c.layers), c.stages) << c.name;
  }
}

// The catalog's pipeline jobs resolve to the splits their comments derive.
TEST(PipelineSplit, CatalogJobs) {
  const SplitCase cases[] = {
      {"deepseek-v3-pp16-vpp2-layout-h800x1024",
       {},
       61,
       {5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2}},
      {"llama-3.1-405b-torchtitan-pp8-h100x512", {}, 126, {15, 16, 16, 16, 16, 16, 16, 15}},
  };
  for (const SplitCase& c : cases) {
    auto spec = LoadJobSpec(c.name);
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << c.name << ": " << job.error().Format();
    EXPECT_EQ(StageLayerCounts(job->spec.layout, c.layers), c.stages) << c.name;
  }
}

}  // namespace
}  // namespace strata::pipeline_split_test
