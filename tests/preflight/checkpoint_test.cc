// Checkpoint sizes, times and interval on the reference job (Qwen3.6-35B-A3B SFT on 5 x 8 H20,
// TP1 PP1 EP8 DP40, bf16 weights, fp32 master weights and Adam moments, distributed optimizer,
// NFS at 1 GB/s per node: data/clusters/h20-5x8.yaml). Expected values derived by hand:
//   unique parameters = text non-expert 2,448,355,968 + experts 32,212,254,720 + vision
//     446,571,248 = 35,107,181,936 (../shared/reference/seed-case.md; the per-GPU count
//     6,921,459,056 is the same split with experts / 8)
//   weights = 2 B x 35,107,181,936 = 70,214,363,872 B (70.21 GB)
//   optimizer = (4 B master + 2 x 4 B moments) x 35,107,181,936 = 421,286,183,232 B
//   megatron checkpoint = 14 B x 35,107,181,936 = 491,500,547,104 B; write over 5 nodes x 1 GB/s
//     = 98.30 s; HF safetensors 70.21 GB by one writer at 1 GB/s = 70.21 s
//   MTBF = 3600 s / (1.9733e-5 x 40) = 4,560,888 s (52.8 days)
//   Young = sqrt(2 x 98.30 x 4,560,888) = 29,944 s (8.32 h); Daly = 29,879 s (8.30 h)
//   lost = 98.30/29,879 + (29,879/2 + 98.30)/4,560,888 = 0.6587 % -> x 40 GPUs x 24 h = 6.32
//   GPU-h/day
#include "strata/preflight/checkpoint.h"

#include <gtest/gtest.h>

#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"

namespace strata::preflight {
namespace {

Job ReferenceJob(const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(kReferenceJobName, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

TEST(Checkpoint, SizesOfTheReferenceJob) {
  const CheckpointSizes s = ComputeCheckpointSizes(ReferenceJob());
  EXPECT_EQ(s.world, 40);
  EXPECT_DOUBLE_EQ(s.weights_total.count(), 70214363872.0);
  EXPECT_NEAR(s.optimizer_total.count(), 421286183232.0, 1e3);  // sharding divides by 40 and 5
  EXPECT_NEAR(s.megatron_total().count(), 491500547104.0, 1e3);
  EXPECT_DOUBLE_EQ(s.hf_total().count(), 70214363872.0);
  // One GPU holds 6,921,459,056 parameters: 13.84 GB of bf16 weights (the seed's figure).
  EXPECT_DOUBLE_EQ(s.weights_per_rank.count(), 2.0 * 6921459056.0);
  EXPECT_NEAR(s.megatron_per_rank().gb(), 491.500547104 / 40, 1e-6);
}

TEST(Checkpoint, WithoutTheDistributedOptimizerStatesAreStillCountedOnce) {
  // Every rank then holds the states of all its weights; the checkpoint has them once: the
  // same 421 GB (the total does not depend on how it is sharded in memory).
  const CheckpointSizes s = ComputeCheckpointSizes(ReferenceJob({"optimizer.distributed=false"}));
  EXPECT_NEAR(s.optimizer_total.count(), 421286183232.0, 1e3);
  EXPECT_NEAR(s.optimizer_per_rank.count(), 12.0 * 6921459056.0, 1e3);
}

TEST(Checkpoint, TimesOnTheNfsLevel) {
  auto cluster = LoadCluster("h20-5x8");
  ASSERT_TRUE(cluster.ok());
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok());
  auto map = BuildBandwidthMap(*cluster, *links);
  ASSERT_TRUE(map.ok());
  auto t = ComputeCheckpointTimes(ComputeCheckpointSizes(ReferenceJob()), *map, cluster->nodes);
  ASSERT_TRUE(t.ok()) << t.error().Format();
  EXPECT_NEAR(t->megatron_write.s(), 98.3001, 1e-3);
  EXPECT_NEAR(t->hf_write.s(), 70.2144, 1e-3);
  EXPECT_EQ(t->nodes, 5);
}

TEST(Checkpoint, YoungAndDalyInterval) {
  const CheckpointInterval c =
      ComputeInterval(1.9733e-5, 40, Seconds::Of(98.3001094208), Seconds::Of(98.3001094208));
  EXPECT_NEAR(c.mtbf.s(), 4560887.85, 0.1);
  EXPECT_NEAR(c.young.s(), 29944.47, 0.1);
  EXPECT_NEAR(c.daly.s(), 29878.98, 0.1);
  EXPECT_NEAR(c.lost_fraction, 0.0065871, 1e-6);
  EXPECT_NEAR(c.gpu_hours_lost_per_day, 6.3236, 1e-3);
  EXPECT_NEAR(c.checkpoints_per_day, 2.8822, 1e-3);
  // Daly: when the checkpoint costs more than 2 M, checkpointing cannot help: tau = M.
  const CheckpointInterval hopeless = ComputeInterval(1.0, 1, Seconds::Of(10000), Seconds::Of(0));
  EXPECT_NEAR(hopeless.daly.s(), 3600, 1e-9);
}

TEST(Checkpoint, FailureRateDataHasItsSource) {
  auto rate = LoadFailureRate();
  ASSERT_TRUE(rate.ok()) << rate.error().Format();
  // 419 unexpected interruptions / (16,384 GPUs x 54 days x 24 h).
  EXPECT_NEAR(rate->per_gpu_hour, 419.0 / (16384.0 * 54 * 24), 1e-9);
  EXPECT_NE(rate->source.find("Llama 3 Herd"), std::string::npos);
}

}  // namespace
}  // namespace strata::preflight
