// Checkpoint sizes, times and interval on the reference job (Qwen3.6-35B-A3B SFT on 5 x 8 H20,
// TP1 PP1 EP8 DP40, bf16 weights, fp32 master weights and Adam moments, distributed optimizer,
// NFS at 1 GB/s per node: data/clusters/h20-5x8.yaml). Expected values derived by hand:
//   unique parameters = text non-expert 2,448,355,968 + experts 32,212,254,720 + vision
//     446,571,248 = 35,107,181,936 (../shared/reference/seed-case.md; the per-GPU count
//     6,921,459,056 is the same split with experts / 8)
//   weights = 2 B x 35,107,181,936 = 70,214,363,872 B (70.21 GB)
//   optimizer = (4 B master + 2 x 4 B moments) x 35,107,181,936 = 421,286,183,232 B
//   megatron checkpoint = 14 B x 35,107,181,936 = 491,500,547,104 B; fully parallel save: each of
//     the 40 ranks writes 1/40 = 12.29 GB, each node 1/5; write over 5 nodes x 1 GB/s = 98.30 s; HF
//     safetensors 70.21 GB by one writer at 1 GB/s = 70.21 s
//   MTBF = 3600 s / (1.9733e-5 x 40) = 4,560,888 s (52.8 days)
//   Young = sqrt(2 x 98.30 x 4,560,888) = 29,944 s (8.32 h); Daly = 29,879 s (8.30 h)
//   lost = 98.30/29,879 + (29,879/2 + 98.30)/4,560,888 = 0.6587 % -> x 40 GPUs x 24 h = 6.32
//   GPU-h/day
#include "strata/preflight/checkpoint.h"

#include <gtest/gtest.h>

#include "preflight/inline_job.h"
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
  // One GPU holds 6,921,459,056 parameters (13.84 GB of bf16 weights, the seed's figure), but
  // megatron's fully parallel save spreads the replicas: each rank writes 70.21 GB / 40.
  EXPECT_NEAR(s.weights_per_rank.gb(), 70.214363872 / 40, 1e-6);
  EXPECT_NEAR(s.checkpoint_per_rank().gb(), 491.500547104 / 40, 1e-6);
  EXPECT_NEAR(s.busiest_node.gb(), 491.500547104 / 5, 1e-6);
}

TEST(Checkpoint, WithoutTheDistributedOptimizerStatesAreStillCountedOnce) {
  // Every rank then holds the states of all its weights; the checkpoint has them once: the
  // same 421 GB (the total does not depend on how it is sharded in memory). megatron-core's
  // fully parallel save still spreads the replicated states: 421.29 GB / 40 per rank.
  const CheckpointSizes s = ComputeCheckpointSizes(
      ReferenceJob({"optimizer.distributed=false", "framework.name=megatron-core"}));
  EXPECT_NEAR(s.optimizer_total().count(), 421286183232.0, 1e3);
  EXPECT_NEAR(Bytes(s.master_per_rank + s.moments_per_rank).gb(), 421.286183232 / 40, 1e-6);
}

using testing::InlineJob;

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
  EXPECT_EQ(s.format, CheckpointFormat::kDeepSpeed);
  EXPECT_NEAR(s.weights_total.count(), 70214363872.0, 1e3);
  EXPECT_NEAR(s.master_total.count(), 4.0 * 35107181936.0, 1e3);
  EXPECT_NEAR(s.moments_total.count(), 8.0 * 35107181936.0, 1e3);
  EXPECT_FALSE(s.weights_saved);
  EXPECT_NEAR(s.checkpoint_total().count(), 421286183232.0, 1e3);
  EXPECT_NEAR(s.checkpoint_per_rank().gb(), 421.286183232 / 40, 1e-6);
  EXPECT_NEAR(s.hf_total().count(), 70214363872.0, 1e3);
  EXPECT_EQ(CheckpointFormatName(s.format),
            "DeepSpeed mp_rank_*_model_states.pt + zero_pp_rank_*_optim_states.pt");
}

// Whose code runs a ZeRO-3 job is one resolved answer that memory, step and checkpoint read.
// The reference job's ZeRO-3 variant is the course's v1, "transformers + DeepSpeed" (seed case,
// history): the HF Trainer, whose ZeRO-3 is DeepSpeed's (data/frameworks.yaml) - DeepSpeed's
// files. A ZeRO-3 job that names no framework is megatron-core's (printed as an assumption),
// whose zero3 is its own FSDP (zero3_runtime: megatron-fsdp) and whose save is torch_dist
// (megatron/training/checkpointing.py, its FSDP too). Before: the variant named no framework, so
// step and memory priced megatron-core's FSDP while checkpoint wrote DeepSpeed's files, and a
// no-framework zero3 job was DeepSpeed's in checkpoint alone.
TEST(Checkpoint, FormatReadsTheResolvedShardingRuntime) {
  auto spec = LoadJobSpec("qwen3.6-35b-a3b-sft-h20x40-zero3", {});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto variant = ResolveJob(*spec);
  ASSERT_TRUE(variant.ok()) << variant.error().Format();
  EXPECT_EQ(variant->runtime(), ShardingRuntime::kDeepSpeed);
  EXPECT_TRUE(variant->RunsDeepSpeed(ShardingMode::kZero3));
  EXPECT_FALSE(variant->RunsMegatronCore(ShardingMode::kZero3));
  EXPECT_EQ(CheckpointFormatOf(*variant), CheckpointFormat::kDeepSpeed);

  const Job unnamed = InlineJob(
      "model: llama-3.1-70b\n"
      "cluster: h100-8x8-ib400\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 64}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "sharding: {mode: zero3}\n");
  EXPECT_EQ(unnamed.runtime(), ShardingRuntime::kMegatronFsdp);
  EXPECT_EQ(CheckpointFormatOf(unnamed), CheckpointFormat::kMegatronTorchDist);
}

// The checkpoint format is each framework's data/frameworks.yaml checkpoint_format, by the
// runtime that runs the job's sharding, resolved once into the job. The HF Trainer's differs by
// runtime (transformers trainer.py _save_checkpoint): under DeepSpeed it hands the save to
// DeepSpeed's engine (mp_rank_XX_model_states.pt + zero_pp_rank_*_optim_states.pt); under
// accelerate's FSDP (a job's sharding.runtime fsdp1, Accelerate's fsdp_version 1, even under
// sharding.mode zero3: FULL_SHARD) to accelerate's save_fsdp_model, torch.distributed.checkpoint
// under SHARDED_STATE_DICT (the default) and rank 0's pytorch_model_fsdp.bin under
// FULL_STATE_DICT; with no sharding (DDP) rank 0 writes model.safetensors + optimizer.pt.
// Before, a Trainer zero3 job run by FSDP1 fell through to the Trainer's DDP files (only
// sharding.mode fsdp2 reached the FSDP branch). verl's FSDP workers write their per-rank files
// and its megatron workers (zero1) megatron-core's torch_dist; torchtitan DCP under any mode.
TEST(Checkpoint, FormatIsTheFrameworksByShardingRuntime) {
  const std::string base =
      "model: llama-3.1-70b\n"
      "cluster: h100-8x8-ib400\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 64}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "precision: {params: bf16, grads: fp32}\n";
  const Job ds = InlineJob(base + "framework: {name: hf-trainer}\nsharding: {mode: zero3}\n");
  EXPECT_EQ(ds.runtime(), ShardingRuntime::kDeepSpeed);
  EXPECT_EQ(ds.checkpoint_format().format, SavedFormat::kDeepSpeed);
  EXPECT_EQ(CheckpointFormatOf(ds), CheckpointFormat::kDeepSpeed);
  const Job fsdp1 = InlineJob(base +
                              "framework: {name: hf-trainer}\n"
                              "sharding: {mode: zero3, runtime: fsdp1}\n");
  EXPECT_EQ(fsdp1.runtime(), ShardingRuntime::kFsdp1);
  EXPECT_EQ(fsdp1.checkpoint_format().format, SavedFormat::kAccelerateFsdp);
  EXPECT_NE(fsdp1.checkpoint_format().rule.find("hf-trainer's checkpoint_format under fsdp1"),
            std::string::npos)
      << fsdp1.checkpoint_format().rule;
  EXPECT_EQ(CheckpointFormatOf(fsdp1), CheckpointFormat::kTorchDcp);
  const Job ddp = InlineJob(base + "framework: {name: hf-trainer}\nsharding: {mode: none}\n");
  EXPECT_EQ(CheckpointFormatOf(ddp), CheckpointFormat::kHfTrainer);

  const Job verl_fsdp = InlineJob(base + "framework: {name: verl}\nsharding: {mode: fsdp2}\n");
  EXPECT_EQ(CheckpointFormatOf(verl_fsdp), CheckpointFormat::kVerlFsdp);
  const Job verl_megatron = InlineJob(base + "framework: {name: verl}\nsharding: {mode: zero1}\n");
  EXPECT_EQ(CheckpointFormatOf(verl_megatron), CheckpointFormat::kMegatronTorchDist);
  EXPECT_NE(verl_megatron.checkpoint_format().rule.find("megatron-core's"), std::string::npos)
      << verl_megatron.checkpoint_format().rule;
  const Job titan = InlineJob(base + "framework: {name: torchtitan}\nsharding: {mode: fsdp2}\n");
  EXPECT_EQ(CheckpointFormatOf(titan), CheckpointFormat::kTorchDcp);
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
      "sharding: {mode: fsdp2}\n"
      "framework: {name: torchtitan}\n");
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
  EXPECT_TRUE(s.master_is_model_state);
  EXPECT_DOUBLE_EQ(s.weights_per_rank.count(), 0.0);
  EXPECT_EQ(CheckpointFormatName(s.format), "PyTorch DCP (torch.distributed.checkpoint)");
}

// The reference job (Qwen3.6-35B-A3B, ms-swift, 5 nodes x 8 H20, TP1 EP8 DP40) under every
// sharding mode the job file can express, offload and TP/PP/EP splits. P = 35,107,181,936
// parameters (the seed's count), bf16 weights, fp32 master weights and Adam moments:
//   W = 2 B x P = 70.214363872 GB; optimizer = 12 B x P = 421.286183232 GB
//   with the bf16 weights: 14 B x P = 491.500547104 GB
// The checkpoint holds the whole model once whatever the sharding; what changes is which file
// holds it and which rank writes it (the writers: checkpoint.h, CheckpointFormat):
//   megatron torch_dist, DCP, verl FSDP: every rank 1/40, every node 1/5 of the total
//   DeepSpeed ZeRO-1/2: DP rank 0 of each TP x PP group writes mp_rank_XX_model_states.pt
//     (W / (TP x PP)); every rank its optim_states partition (optimizer / 40):
//     TP1 PP1: rank 0 writes 70.21 + 10.53 = 80.75 GB, node 0 70.21 + 421.29 / 5 = 154.47 GB
//     TP2 PP2: rank 0 writes 70.21 / 4 + 10.53 = 28.09 GB, node 0 (8 GPUs hold all 4 model-
//     parallel ranks of DP rank 0) the same 154.47 GB
//     and, as ms-swift's `swift sft` runs ZeRO-2 through the HF Trainer, whose save_model
//     writes model.safetensors (W) from rank 0 first, each of those gains W: 561.71 GB in all,
//     rank 0 150.96 GB (TP2 PP2: 98.30 GB), node 0 224.69 GB
//   DeepSpeed ZeRO-3: model_states hold placeholders (the weights are no tensor): 421.29 GB,
//     10.53 GB per rank, 84.26 GB per node
//   FSDP2 (and torchtitan, verl's FSDP workers): the model state is the fp32 parameter
//     (4 B x P = 140.43 GB) and there is no bf16 copy: 421.29 GB
//   HF Trainer without DeepSpeed (ms-swift's `swift sft`, sharding none): rank 0 writes
//     model.safetensors (70.21 GB) and optimizer.pt (421.29 GB): 491.50 GB on one rank
struct ShardingCase {
  std::string name;
  std::vector<std::string> sets;
  std::string format;
  bool weights_saved;
  double total_gb, per_rank_gb, busiest_node_gb;
};

TEST(Checkpoint, EveryShardingModeHoldsTheWholeModelOnce) {
  const double w = 70.214363872, opt = 421.286183232, all = w + opt;
  const std::string megatron = "Megatron torch_dist (distributed checkpoint)";
  const std::string deepspeed =
      "DeepSpeed mp_rank_*_model_states.pt + zero_pp_rank_*_optim_states.pt";
  const std::string dcp = "PyTorch DCP (torch.distributed.checkpoint)";
  const std::vector<ShardingCase> cases = {
      {"zero1 (megatron sft)", {}, megatron, true, all, all / 40, all / 5},
      {"none (swift sft, DDP)",
       {"optimizer.distributed=false"},
       "HF Trainer model.safetensors + optimizer.pt",
       true,
       all,
       all,
       all},
      {"zero2",
       {"sharding.mode=zero2"},
       deepspeed,
       true,
       all + w,
       w + opt / 40 + w,
       w + opt / 5 + w},
      {"zero2 offload",
       {"sharding.mode=zero2", "sharding.offload_optimizer=cpu"},
       deepspeed,
       true,
       all + w,
       w + opt / 40 + w,
       w + opt / 5 + w},
      {"zero3", {"sharding.mode=zero3"}, deepspeed, false, opt, opt / 40, opt / 5},
      {"zero3 offload",
       {"sharding.mode=zero3", "sharding.offload_param=cpu", "sharding.offload_optimizer=nvme"},
       deepspeed,
       false,
       opt,
       opt / 40,
       opt / 5},
      {"fsdp2", {"sharding.mode=fsdp2"}, dcp, false, opt, opt / 40, opt / 5},
      {"fsdp2 offload",
       {"sharding.mode=fsdp2", "sharding.offload_param=cpu"},
       dcp,
       false,
       opt,
       opt / 40,
       opt / 5},
      // HSDP: 5 replicas of an 8-way shard group each hold 1/8; DCP writes each replica once.
      {"fsdp2 hsdp",
       {"sharding.mode=fsdp2", "sharding.replicate=5"},
       dcp,
       false,
       opt,
       opt / 40,
       opt / 5},
      // megatron-core's own FSDP (--data-parallel-sharding-strategy) saves torch_dist.
      {"megatron zero3",
       {"framework.name=megatron-core", "sharding.mode=zero3"},
       megatron,
       true,
       all,
       all / 40,
       all / 5},
      {"torchtitan zero1", {"framework.name=torchtitan"}, dcp, false, opt, opt / 40, opt / 5},
      {"verl fsdp2",
       {"framework.name=verl", "sharding.mode=fsdp2"},
       "verl FSDP model_/optim_world_size_*_rank_*.pt",
       false,
       opt,
       opt / 40,
       opt / 5},
      {"tp2 pp2 ep4",
       {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.pp=2", "parallel.ep=4"},
       megatron,
       true,
       all,
       all / 40,
       all / 5},
      {"tp2 pp2 ep4 zero2",
       {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.pp=2", "parallel.ep=4",
        "sharding.mode=zero2"},
       deepspeed,
       true,
       all + w,
       w / 4 + opt / 40 + w,
       w + opt / 5 + w},
      {"tp2 pp2 ep4 zero3",
       {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.pp=2", "parallel.ep=4",
        "sharding.mode=zero3"},
       deepspeed,
       false,
       opt,
       opt / 40,
       opt / 5},
      {"tp2 ep4 fsdp2",
       {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.ep=4", "sharding.mode=fsdp2"},
       dcp,
       false,
       opt,
       opt / 40,
       opt / 5},
  };
  for (const ShardingCase& c : cases) {
    SCOPED_TRACE(c.name);
    const CheckpointSizes s = ComputeCheckpointSizes(ReferenceJob(c.sets));
    EXPECT_EQ(CheckpointFormatName(s.format), c.format);
    EXPECT_EQ(s.weights_saved, c.weights_saved);
    EXPECT_NEAR(s.weights_total.gb(), w, 1e-6);
    EXPECT_NEAR(s.optimizer_total().gb(), opt, 1e-6);
    EXPECT_NEAR(s.checkpoint_total().gb(), c.total_gb, 1e-6);
    EXPECT_NEAR(s.checkpoint_per_rank().gb(), c.per_rank_gb, 1e-6);
    EXPECT_NEAR(s.busiest_node.gb(), c.busiest_node_gb, 1e-6);
  }
}

// DeepSeek-V3 with its MTP block on PP16 x EP64 (data/jobs/deepseek-v3-pp16-vpp2-layout-
// h800x1024.yaml). Counted by hand from its config.json (hidden 7168, 61 layers of which 3
// dense, MLA q_lora 1536 kv_lora 512, 128 heads x (128 + 64) qk and 128 v, 256 experts of
// intermediate 2048 + 1 shared, dense MLP 18432, vocab 129,280):
//   MLA = 7168 x 1536 + 1536 + 1536 x 128 x 192 + 7168 x 576 + 512 + 512 x 128 x 256
//         + 128 x 128 x 7168 = 187,107,328
//   MoE = 257 x 3 x 7168 x 2048 + 256 x 7168 + 256 = 11,320,164,608
//   text = 61 x (MLA + 2 x 7168) + 3 x 3 x 7168 x 18432 + 58 x MoE + 2 x 129,280 x 7168 + 7168
//        = 671,026,419,200 (DeepSeek's "671B")
//   MTP = 2 x 7168^2 + 2 x 7168 + MLA + 2 x 7168 + MoE + 7168 = 11,610,068,224 (its routed
//         experts too: the per-GPU ledger holds 1/64 of them)
//   P = 682,636,487,424; weights 2 B x P = 1,365.27 GB; checkpoint 14 B x P = 9,556.91 GB
TEST(Checkpoint, MtpExpertsOfAPipelineSplitAreCountedWhole) {
  auto spec = LoadJobSpec("deepseek-v3-pp16-vpp2-layout-h800x1024", {});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const CheckpointSizes s = ComputeCheckpointSizes(*job);
  EXPECT_NEAR(s.weights_total.count(), 2.0 * 682636487424.0, 1e3);
  EXPECT_NEAR(s.checkpoint_total().count(), 14.0 * 682636487424.0, 1e4);
  EXPECT_NEAR(s.checkpoint_per_rank().gb(), 14.0 * 682.636487424 / 1024, 1e-6);
}

// The note on the write time is about the storage the cluster has.
TEST(Checkpoint, StorageNoteFollowsTheStorageKind) {
  EXPECT_EQ(StorageNote("nfs"), "one NFS server may cap the aggregate lower");
  EXPECT_EQ(StorageNote("lustre"),
            "the object storage targets a file is striped over may cap it lower");
  EXPECT_EQ(StorageNote("local_nvme"),
            "local disks: a restart on other nodes must first copy the shards there");
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
