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
  EXPECT_NEAR(s.optimizer_total().count(), 421286183232.0, 1e3);  // sharding divides by 40, 5
  EXPECT_NEAR(s.checkpoint_total().count(), 491500547104.0, 1e3);
  EXPECT_DOUBLE_EQ(s.hf_total().count(), 70214363872.0);
  EXPECT_EQ(s.format, CheckpointFormat::kMegatronTorchDist);
  // One GPU holds 6,921,459,056 parameters: 13.84 GB of bf16 weights (the seed's figure).
  EXPECT_NEAR(s.weights_per_rank.count(), 2.0 * 6921459056.0, 1.0);
  EXPECT_NEAR(s.checkpoint_per_rank().gb(), 491.500547104 / 40, 1e-6);
}

TEST(Checkpoint, WithoutTheDistributedOptimizerStatesAreStillCountedOnce) {
  // Every rank then holds the states of all its weights; the checkpoint has them once: the
  // same 421 GB (the total does not depend on how it is sharded in memory).
  const CheckpointSizes s = ComputeCheckpointSizes(ReferenceJob({"optimizer.distributed=false"}));
  EXPECT_NEAR(s.optimizer_total().count(), 421286183232.0, 1e3);
  EXPECT_NEAR(Bytes(s.master_per_rank + s.moments_per_rank).count(), 12.0 * 6921459056.0, 1e3);
}

Job InlineJob(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "inline.yaml", {});
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

// The ZeRO-3 variant of the reference job (data/jobs/qwen3.6-35b-a3b-sft-h20x40-zero3.yaml):
// DeepSpeed holds 1/40 of every weight on each GPU, but a checkpoint holds the whole model. The
// ledger's per-GPU weights x TP 1 counted one DP shard: 70.21 GB / 40 = 1.76 GB.
//   weights (bf16) = 2 B x 35,107,181,936 = 70,214,363,872 B, written by the HF Trainer's 16-bit
//     model save (stage3_gather_16bit_weights_on_model_save), not by DeepSpeed's own files: its
//     ZeRO-3 model_states files hold empty placeholders for the partitioned module
//     (deepspeedai/DeepSpeed#1009, #2413) and each rank's optim_states file holds its fp32
//     partition with the two Adam states (deepspeedai/DeepSpeed#4029)
//   ZeRO files = (4 B master + 2 x 4 B moments) x 35,107,181,936 = 421,286,183,232 B,
//     421.29 GB / 40 ranks = 10.53 GB per rank
TEST(Checkpoint, Zero3CountsTheWholeModelNotOneShard) {
  auto spec = LoadJobSpec("qwen3.6-35b-a3b-sft-h20x40-zero3", {});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const CheckpointSizes s = ComputeCheckpointSizes(*job);
  EXPECT_EQ(s.format, CheckpointFormat::kDeepSpeedZero);
  EXPECT_NEAR(s.weights_total.count(), 70214363872.0, 1e3);
  EXPECT_NEAR(s.master_total.count(), 4.0 * 35107181936.0, 1e3);
  EXPECT_NEAR(s.moments_total.count(), 8.0 * 35107181936.0, 1e3);
  EXPECT_FALSE(s.weights_saved);
  EXPECT_NEAR(s.checkpoint_total().count(), 421286183232.0, 1e3);
  EXPECT_NEAR(s.checkpoint_per_rank().gb(), 421.286183232 / 40, 1e-6);
  EXPECT_NEAR(s.hf_total().count(), 70214363872.0, 1e3);
  EXPECT_EQ(CheckpointFormatName(s.format), "DeepSpeed ZeRO (per-rank zero_pp_rank_* files)");
}

// Llama 3.1 70B under FSDP2 (torchtitan) on 8 x 8 H100: hidden 8192, 80 layers, 64 heads x 128,
// 8 KV heads, MLP 28672, vocab 128,256, untied.
//   layer: attention 2 x 8192^2 + 2 x 8192 x 1024 = 150,994,944; MLP 3 x 8192 x 28672 =
//     704,643,072; norms 2 x 8192 = 16,384; together 855,654,400
//   P = 80 x 855,654,400 + 2 x 128,256 x 8192 + 8192 (final norm) = 70,553,706,496
//   bf16 weights 2 B x P = 141,107,412,992 B (141.1 GB; one DP shard of 64 was 2.2 GB in fp32)
//   the model state torchtitan's DCP save writes is FSDP2's fp32 sharded parameter: 4 B x P =
//     282,214,825,984 B; Adam moments 8 B x P = 564,429,651,968 B; DCP total 12 B x P =
//     846,644,477,952 B
TEST(Checkpoint, Fsdp2WritesItsFp32ShardedParametersWithDcp) {
  const Job job = InlineJob(
      "model: llama-3.1-70b\n"
      "cluster: h100-8x8-ib400\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 64}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "sharding: {mode: fsdp2}\n");
  const CheckpointSizes s = ComputeCheckpointSizes(job);
  EXPECT_EQ(s.format, CheckpointFormat::kTorchDcp);
  EXPECT_EQ(s.world, 64);
  EXPECT_NEAR(s.weights_total.count(), 141107412992.0, 1e3);
  EXPECT_NEAR(s.master_total.count(), 282214825984.0, 1e3);
  EXPECT_NEAR(s.moments_total.count(), 564429651968.0, 1e3);
  EXPECT_FALSE(s.weights_saved);
  EXPECT_NEAR(s.checkpoint_total().count(), 846644477952.0, 1e4);
  EXPECT_NEAR(s.hf_total().count(), 141107412992.0, 1e3);
  // One GPU: 1/64 of the fp32 parameters, 282.21 GB / 64 = 4.41 GB; no bf16 copy is kept.
  EXPECT_NEAR(s.master_per_rank.gb(), 282.214825984 / 64, 1e-6);
  EXPECT_DOUBLE_EQ(s.weights_per_rank.count(), 0.0);
  EXPECT_EQ(CheckpointFormatName(s.format), "torch DCP (FSDP2, torchtitan)");
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
  EXPECT_NEAR(t->checkpoint_write.s(), 98.3001, 1e-3);
  EXPECT_EQ(t->storage_kind, "nfs");
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
