// The chunks of each pipeline rank, megatron-core's layout string, the refusals and the
// schedule field (issue 27, fault 7; sources as in pipeline_split_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job/pipeline_test_job.h"
#include "strata/job/job_validation.h"
#include "strata/job/pipeline_split.h"

namespace strata::pipeline_chunks_test {
namespace {

constexpr const char* kJob = testing::kPipelineTestJob;

Result<ResolvedJob> Resolve(const std::vector<std::string>& sets) {
  return testing::ResolvePipelineTestJob(sets);
}

// The chunks within each rank: megatron-core gives every chunk of a rank its total / VPP
// (get_transformer_layer_offset's "round" of first/VPP + middle/VPP + last/VPP layers), the
// accounted embedding and loss taking a slot of the first and the last virtual stage.
TEST(PipelineSplit, ChunksInModelOrder) {
  ParallelLayout first_last;
  first_last.pp = 4;
  first_last.vpp = 2;
  first_last.first_stage_layers = 22;
  first_last.last_stage_layers = 24;
  // Round: 22/2 = 11, 24/2 = 12, 12, 24/2 = 12; twice.
  EXPECT_EQ(ChunkLayerCounts(first_last, 94),
            (std::vector<int64_t>{11, 12, 12, 12, 11, 12, 12, 12}));
  ParallelLayout accounted;
  accounted.pp = 8;
  accounted.vpp = 8;
  accounted.account_for_embedding = accounted.account_for_loss = true;
  // 128 / 64 = 2 a chunk; virtual stage 0 and 63 hold 1 decoder layer each.
  const std::vector<int64_t> chunks = ChunkLayerCounts(accounted, 126);
  ASSERT_EQ(chunks.size(), 64u);
  EXPECT_EQ(chunks.front(), 1);
  EXPECT_EQ(chunks.back(), 1);
  EXPECT_EQ(chunks[1], 2);
  // The V: rank r holds virtual stages r and 2 PP - 1 - r; the first rank the output layer.
  ParallelLayout v;
  v.pp = 4;
  v.vpp = 2;
  v.pp_schedule = PipelineSchedule::kZbv;
  EXPECT_EQ(ChunksOfRank(v, 0), (std::vector<int64_t>{0, 7}));
  EXPECT_EQ(ChunksOfRank(v, 3), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(v.output_stage(), 0);
  EXPECT_EQ(RankOfChunk(v, 6), 1);
}

// megatron-core's layout string: repeats unrolled, stages counted, errors that name the field.
TEST(PipelineSplit, LayoutString) {
  auto p = ParsePipelineLayout("Et*3|(tt|)*29,m|L", 16);
  ASSERT_TRUE(p.ok()) << p.error().Format();
  EXPECT_EQ((*p)->virtual_stages_per_rank, 2);
  ASSERT_EQ((*p)->decoder_layers.size(), 32u);
  EXPECT_EQ((*p)->decoder_layers[0], 3);
  EXPECT_EQ((*p)->decoder_layers[29], 2);
  EXPECT_EQ((*p)->decoder_layers[30], 0);  // the MTP block's stage
  EXPECT_EQ((*p)->mtp_layers[30], 1);
  // megatron-core's functional test "Et*2|(tt|)*5t|tmL" on PP 4: 8 stages, 2 + 5 x 2 + 1 + 1 =
  // 14 decoder layers, VPP 2.
  auto proxy = ParsePipelineLayout("Et*2|(tt|)*5t|tmL", 4);
  ASSERT_TRUE(proxy.ok()) << proxy.error().Format();
  EXPECT_EQ((*proxy)->decoder_layers, (std::vector<int64_t>{2, 2, 2, 2, 2, 2, 1, 1}));
  auto odd = ParsePipelineLayout("Et*3|(tt|)*29,m|L", 5);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("32 virtual stages, not a multiple of PP 5"),
            std::string::npos)
      << odd.error().Format();
  // Hostile repeats are refused, not unrolled.
  auto huge = ParsePipelineLayout("Et*99999999999999999999999|L", 2);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("too many layers"), std::string::npos);
  auto groups = ParsePipelineLayout("E(tt|)*9999999L", 2);
  ASSERT_FALSE(groups.ok());
  auto bad = ParsePipelineLayout("Etx|L", 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown layer character 'x'"), std::string::npos);
  // Through the job: the decoder count must be the model's.
  auto wrong = Resolve({"model=deepseek-v3", "parallel.pp=16", "mtp=true",
                        "parallel.pipeline_layout=Et*3|(tt|)*28,m|L|"});
  ASSERT_FALSE(wrong.ok());
}

// What megatron-core refuses with VPP, refused with its reason.
TEST(PipelineSplit, RefusesWhatTheFrameworksRefuse) {
  struct Bad {
    const char* name;
    std::vector<std::string> sets;
    const char* field;
    const char* message;
  };
  const Bad cases[] = {
      // 21 first layers cannot split into VPP 2 equal chunks (the middle share, 24, could).
      {"first count not divisible by VPP",
       {"model=qwen3-235b-a22b", "parallel.pp=4", "parallel.vpp=2",
        "parallel.first_stage_layers=21", "parallel.last_stage_layers=25"},
       "parallel.first_stage_layers",
       "cannot split into equal chunks"},
      {"V schedule with VPP 1",
       {"model=llama-3.1-70b", "parallel.pp=8", "parallel.pp_schedule=zbv"},
       "parallel.pp_schedule",
       "two virtual stages per rank"},
      {"GPipe with VPP 2",
       {"model=llama-3.1-70b", "parallel.pp=8", "parallel.vpp=2", "parallel.pp_schedule=gpipe"},
       "parallel.pp_schedule",
       "one stage per rank"},
      // 32 GPUs / PP 8 = DP 4; global batch 32: 8 micro batches, fewer than 2 x 8 stages.
      {"DualPipeV with too few micro batches",
       {"model=llama-3.1-70b", "parallel.pp=8", "parallel.vpp=2", "parallel.pp_schedule=dualpipev",
        "batch.global_batch=32"},
       "parallel.pp_schedule",
       "at least as many micro batches"},
      {"layout and first/last",
       {"model=deepseek-v3", "parallel.pp=16", "mtp=true",
        "parallel.pipeline_layout=Et*3|(tt|)*29,m|L", "parallel.first_stage_layers=4"},
       "parallel.pipeline_layout",
       "not both"},
  };
  for (const Bad& c : cases) {
    auto job = Resolve(c.sets);
    ASSERT_FALSE(job.ok()) << c.name;
    EXPECT_EQ(job.error().field, c.field) << c.name << ": " << job.error().Format();
    EXPECT_NE(job.error().message.find(c.message), std::string::npos)
        << c.name << ": " << job.error().Format();
  }
}

// parallel.pp_schedule: the names torchtitan's schedules go by, "did you mean" on a typo, and
// the default that follows VPP as megatron-core's does.
TEST(PipelineSplit, ScheduleField) {
  auto spec = ParseJobSpec(kJob, "j.yaml", {"parallel.pp_schedule=interleaved_1fb1"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().field, "--set parallel.pp_schedule");
  EXPECT_NE(spec.error().hint.find("did you mean 'interleaved_1f1b'"), std::string::npos)
      << spec.error().Format();
  ParallelLayout l;
  l.pp = 4;
  EXPECT_EQ(l.schedule(), PipelineSchedule::k1F1B);
  l.vpp = 2;
  EXPECT_EQ(l.schedule(), PipelineSchedule::kInterleaved1F1B);
  EXPECT_EQ(PipelineScheduleName(l), "interleaved_1f1b");
}

}  // namespace
}  // namespace strata::pipeline_chunks_test
