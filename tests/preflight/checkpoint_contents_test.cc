// What a checkpoint holds beyond the framework's default contents: Megatron's --no-save-optim
// (checkpoint.optimizer false) and the HF Trainer's consolidated 16-bit model under ZeRO-3
// (checkpoint.save_16bit_model), and the sizes of a job whose cluster has no storage level.
//
// Llama-3.1-8B (hidden 4096, 32 layers, 32 heads x 128, 8 KV heads, MLP 14336, vocab 128,256,
// untied), counted by hand:
//   layer: attention 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040; MLP 3 x 4096 x 14336 =
//     176,160,768; norms 2 x 4096 = 8,192; together 218,112,000
//   P = 32 x 218,112,000 + 2 x 128,256 x 4096 + 4096 (final norm) = 8,030,261,248
//   bf16 weights 2 B x P = 16,060,522,496 B (16.06 GB)
#include <gtest/gtest.h>

#include <string>

#include "preflight/inline_job.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/preflight/checkpoint.h"

namespace strata::preflight {
namespace {

constexpr double kLlama8bParams = 8030261248.0;

using testing::InlineJob;

// The checkpoint's write and load times on `nodes` nodes of the h100-8x8-ib400 cluster (Lustre,
// 20 GB/s per node).
Result<CheckpointTimes> TimesOnH100Cluster(const CheckpointSizes& s, int64_t nodes) {
  STRATA_ASSIGN_OR_RETURN(Cluster cluster, LoadCluster("h100-8x8-ib400"));
  STRATA_ASSIGN_OR_RETURN(Interconnects links, LoadInterconnects());
  STRATA_ASSIGN_OR_RETURN(BandwidthMap map, BuildBandwidthMap(cluster, links));
  return ComputeCheckpointTimes(s, map, nodes);
}

// The audit's Megatron script (pretrain_gpt.py, Llama-3.1-8B, TP2 PP2 DP8 on 4 nodes x 8 H100,
// --no-save-optim). Megatron's save_checkpoint puts the optimizer's state dict (the fp32 main
// params and both Adam moments) in the checkpoint only `if not args.no_save_optim`
// (megatron/training/checkpointing.py): what is left is the bf16 model, 2 B x P =
// 16,060,522,496 B, spread by the fully parallel save over the 32 ranks (501,891,328 B each) and
// the 4 nodes (4,015,130,624 B each; at Lustre's 20 GB/s per node 0.2008 s). Before, the
// checkpoint was 14 B x P = 112.4 GB (optimizer counted).
TEST(CheckpointContents, NoSaveOptimLeavesTheWeightsAlone) {
  const std::string yaml =
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 4}\n"
      "parallel: {tp: 2, pp: 2}\n"
      "batch: {micro_batch: 1, global_batch: 128}\n"
      "sequence: {max_tokens: 8192}\n"
      "framework: {name: megatron-core}\n";
  const CheckpointSizes with = ComputeCheckpointSizes(InlineJob(yaml));
  EXPECT_NEAR(with.checkpoint_total().count(), 14 * kLlama8bParams, 1e3);
  const CheckpointSizes s =
      ComputeCheckpointSizes(InlineJob(yaml + "checkpoint: {optimizer: false}\n"));
  EXPECT_FALSE(s.optimizer_saved);
  EXPECT_NEAR(s.checkpoint_total().count(), 16060522496.0, 1e3);
  EXPECT_NEAR(s.checkpoint_per_rank().count(), 501891328.0, 1e2);
  EXPECT_NEAR(s.busiest_node.count(), 4015130624.0, 1e2);
  EXPECT_DOUBLE_EQ(s.master_total.count(), 0.0);
  EXPECT_DOUBLE_EQ(s.moments_total.count(), 0.0);
  EXPECT_NEAR(s.hf_total().count(), 16060522496.0, 1e3);
  auto t = TimesOnH100Cluster(s, 4);
  ASSERT_TRUE(t.ok()) << t.error().Format();
  EXPECT_NEAR(t->checkpoint_write.s(), 4.015130624 / 20, 1e-6);
}

// The HF Trainer's save_only_model (checkpoint.optimizer false) under DeepSpeed: Trainer.
// _save_checkpoint calls save_model, then `if not self.args.save_only_model:
// self._save_optimizer_and_scheduler(output_dir)`, the only place DeepSpeed's save_checkpoint is
// called (huggingface/transformers@000945a9 src/transformers/trainer.py). So under ZeRO-2 rank 0
// writes model.safetensors alone: 2 B x P = 16,060,522,496 B, all on the first node, 0.803 s at
// the cluster's 20 GB/s per node, and a restart reads the same file (0.803 s). Under ZeRO-3 the
// same with stage3_gather_16bit_weights_on_model_save (checkpoint.save_16bit_model), once, not
// twice. Before, the job was refused ("DeepSpeed's save_checkpoint always writes ...") and the
// only answer was the full checkpoint, 16 B x P = 128.5 GB.
TEST(CheckpointContents, TrainerSaveOnlyModelWritesTheModelAlone) {
  const std::string base =
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096}\n";
  for (const std::string& zero :
       {std::string("sharding: {mode: zero2}\ncheckpoint: {optimizer: false}\n"),
        std::string("sharding: {mode: zero3}\n"
                    "checkpoint: {optimizer: false, save_16bit_model: true}\n")}) {
    for (const char* name : {"hf-trainer", "ms-swift"}) {
      const Job job = InlineJob(base + zero + "framework: {name: " + name + "}\n");
      ASSERT_TRUE(CheckCheckpointSettings(job).ok()) << zero << name;
      const CheckpointSizes s = ComputeCheckpointSizes(job);
      EXPECT_EQ(s.format, CheckpointFormat::kHfTrainer) << zero << name;
      EXPECT_NEAR(s.checkpoint_total().count(), 2 * kLlama8bParams, 1e3) << zero << name;
      EXPECT_NEAR(s.checkpoint_per_rank().count(), 2 * kLlama8bParams, 1e3) << zero << name;
      EXPECT_NEAR(s.busiest_node.count(), 2 * kLlama8bParams, 1e3) << zero << name;
      auto t = TimesOnH100Cluster(s, 1);
      ASSERT_TRUE(t.ok()) << t.error().Format();
      EXPECT_NEAR(t->checkpoint_write.s(), 16.060522496 / 20, 1e-6);
      EXPECT_NEAR(t->checkpoint_load.s(), 16.060522496 / 20, 1e-6);
    }
  }
  // Under ZeRO-3 without the 16-bit gather, save_model itself falls back to DeepSpeed's
  // save_checkpoint (optimizer partitions included): refused, saying so.
  const Job z3 = InlineJob(base +
                           "sharding: {mode: zero3}\nframework: {name: hf-trainer}\n"
                           "checkpoint: {optimizer: false}\n");
  const Status st = CheckCheckpointSettings(z3);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().field, "checkpoint.optimizer");
  EXPECT_NE(st.error().message.find("stage3_gather_16bit_weights_on_model_save"), std::string::npos)
      << st.error().Format();
  // DeepSpeed's own save_checkpoint has no switch to leave its optimizer partitions out.
  const Job bare = InlineJob(base +
                             "sharding: {mode: zero2}\nframework: {name: deepspeed}\n"
                             "checkpoint: {optimizer: false}\n");
  EXPECT_FALSE(CheckCheckpointSettings(bare).ok());
}

// The audit's HF Trainer + DeepSpeed ZeRO-3 job (Llama-3.1-8B on 1 node x 8 H100) with
// stage3_gather_16bit_weights_on_model_save true. Trainer._save_checkpoint calls save_model,
// which under ZeRO-3 gathers the 16-bit state dict and writes model.safetensors from rank 0,
// then DeepSpeed's save_checkpoint writes the partitions (transformers trainer.py):
//   ZeRO files = (4 B fp32 partition + 8 B Adam) x P = 96,363,134,976 B, 1/8 per rank =
//     12,045,391,872 B
//   16-bit model = 2 B x P = 16,060,522,496 B, by rank 0
//   total 14 B x P = 112,423,657,472 B; rank 0 12,045,391,872 + 16,060,522,496 =
//     28,105,914,368 B; the one node writes all of it (112.4 GB, 5.62 s at 20 GB/s)
// Before: 96.4 GB in all, 12.05 GB on rank 0.
TEST(CheckpointContents, Zero3With16BitModelSaveCountsRankZerosModel) {
  const Job job = InlineJob(
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096}\n"
      "sharding: {mode: zero3}\n"
      "framework: {name: hf-trainer}\n"
      "checkpoint: {save_16bit_model: true}\n");
  const CheckpointSizes s = ComputeCheckpointSizes(job);
  EXPECT_EQ(s.format, CheckpointFormat::kDeepSpeed);
  EXPECT_NEAR(s.consolidated_total.count(), 16060522496.0, 1e3);
  EXPECT_NEAR(s.checkpoint_total().count(), 112423657472.0, 1e4);
  EXPECT_NEAR(s.checkpoint_per_rank().count(), 28105914368.0, 1e3);
  EXPECT_NEAR(s.busiest_node.count(), 112423657472.0, 1e4);
}

// The same job under ZeRO-2. The Trainer's save_model takes the state dict from accelerate's
// get_state_dict, which outside ZeRO-3 is the whole module's (no gather needed), and rank 0
// writes model.safetensors; then DeepSpeed's save_checkpoint writes the bf16 module from DP rank
// 0 (mp_rank_00_model_states.pt) and each rank's optimizer partition (transformers trainer.py
// save_model and _save_optimizer_and_scheduler; accelerate accelerator.py get_state_dict):
//   module 2 B x P = 16,060,522,496 B; partitions (4 B master + 8 B Adam) x P = 96,363,134,976 B,
//     1/8 per rank = 12,045,391,872 B; 16-bit model 2 B x P = 16,060,522,496 B
//   total 16 B x P = 128,484,179,968 B; rank 0 16,060,522,496 + 12,045,391,872 + 16,060,522,496
//     = 44,166,436,864 B
// Before: 112.4 GB, rank 0 28.11 GB (the safetensors copy missed).
TEST(CheckpointContents, TrainerUnderZero2AlsoWritesTheModel) {
  const std::string zero2 =
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096}\n"
      "sharding: {mode: zero2}\n";
  const Job job = InlineJob(zero2 + "framework: {name: hf-trainer}\n");
  const CheckpointSizes s = ComputeCheckpointSizes(job);
  EXPECT_EQ(s.format, CheckpointFormat::kDeepSpeed);
  EXPECT_NEAR(s.consolidated_total.count(), 16 * kLlama8bParams / 8, 1e3);
  EXPECT_NEAR(s.checkpoint_total().count(), 128484179968.0, 1e4);
  EXPECT_NEAR(s.checkpoint_per_rank().count(), 44166436864.0, 1e3);
  // The one node writes 128.48 GB (6.424 s at the cluster's 20 GB/s per node); a resume reads
  // DeepSpeed's files alone (the Trainer's deepspeed_load_checkpoint), 112.42 GB: 5.621 s.
  auto t = TimesOnH100Cluster(s, 1);
  ASSERT_TRUE(t.ok()) << t.error().Format();
  EXPECT_NEAR(t->checkpoint_write.s(), 128.484179968 / 20, 1e-6);
  EXPECT_NEAR(t->checkpoint_load.s(), 112.423657472 / 20, 1e-6);
  // DeepSpeed used alone (its own training loop, no Trainer) writes its files only.
  const Job bare = InlineJob(zero2 + "framework: {name: deepspeed}\n");
  EXPECT_NEAR(ComputeCheckpointSizes(bare).checkpoint_total().count(), 14 * kLlama8bParams, 1e4);
}

// Megatron's --async-save with --use-persistent-ckpt-worker (checkpoint.async_save): training
// waits for the persistent worker to copy the rank's part to host memory
// (NVIDIA/Megatron-LM d98e8a6, dist_checkpointing/strategies/async_utils.py
// PersistentAsyncCaller.schedule_async_call joins the preload queue; filesystem_async.py
// preload_tensors: tensor.to("cpu", non_blocking=True), torch.cuda.synchronize), and the files
// are written behind training. Llama-3.1-8B on 8 x 8 H100 (h100-8x8-ib400: Lustre 20 GB/s a
// node, PCIe Gen5 x16 63 GB/s a GPU), DP 64, distributed optimizer, torch_dist:
//   per rank 14 B x P / 64 = 1,756,619,648 B; per node 14,052,957,184 B: write 0.70265 s
//   staging = 1,756,619,648 B / 63 GB/s = 0.027883 s (training's cost)
//   M = 3600 / (1.9733e-5 x 64) = 2,850,554.9 s; Young sqrt(2 x 0.027883 x M) = 398.70 s;
//   Daly 398.68 s; lost = d/tau + (tau/2 + W + R)/M = 0.00014036 (W = R = 0.70265 s)
// Synchronous (as before, with the flag "read but not used"): cost 0.70265 s, Daly 2001.0 s,
// lost 0.00070238.
TEST(CheckpointContents, AsyncSaveCostsTheCopyToHostMemory) {
  const std::string megatron =
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 8}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 128}\n"
      "sequence: {max_tokens: 8192}\n"
      "framework: {name: megatron-core}\n";
  auto cluster = LoadCluster("h100-8x8-ib400");
  auto links = LoadInterconnects();
  ASSERT_TRUE(cluster.ok() && links.ok());
  auto map = BuildBandwidthMap(*cluster, *links);
  ASSERT_TRUE(map.ok()) << map.error().Format();
  const FailureRate rate{1.9733e-5, "", ""};
  auto plan = PlanCheckpoint(InlineJob(megatron + "checkpoint: {async_save: true}\n"),
                             StorageCluster{*cluster, false}, *map, rate);
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_NEAR(plan->sizes.checkpoint_per_rank().count(), 1756619648.0, 1e2);
  EXPECT_NEAR(plan->times.checkpoint_write.s(), 0.7026478592, 1e-6);
  EXPECT_NEAR(plan->times.staging.s(), 0.0278828516, 1e-6);
  EXPECT_NEAR(plan->interval.cost.s(), 0.0278828516, 1e-6);
  EXPECT_NEAR(plan->interval.background.s(), 0.7026478592, 1e-6);
  EXPECT_NEAR(plan->interval.young.s(), 398.7019, 1e-2);
  EXPECT_NEAR(plan->interval.daly.s(), 398.6833, 1e-2);
  EXPECT_NEAR(plan->interval.lost_fraction, 0.00014036, 1e-7);
  EXPECT_FALSE(plan->interval.backed_up);
  auto sync = PlanCheckpoint(InlineJob(megatron), StorageCluster{*cluster, false}, *map, rate);
  ASSERT_TRUE(sync.ok()) << sync.error().Format();
  EXPECT_NEAR(sync->interval.cost.s(), 0.7026478592, 1e-6);
  EXPECT_NEAR(sync->interval.daly.s(), 2000.999, 1e-2);
  EXPECT_NEAR(sync->interval.lost_fraction, 0.00070238, 1e-7);
  // torchtitan's DCP async_save is allowed; the HF Trainer's DeepSpeed save is synchronous.
  EXPECT_TRUE(
      CheckCheckpointSettings(InlineJob(megatron.substr(0, megatron.find("framework")) +
                                        "sharding: {mode: fsdp2}\nframework: {name: torchtitan}\n"
                                        "checkpoint: {async_save: true}\n"))
          .ok());
  const Status ds =
      CheckCheckpointSettings(InlineJob(megatron.substr(0, megatron.find("framework")) +
                                        "sharding: {mode: zero2}\nframework: {name: hf-trainer}\n"
                                        "checkpoint: {async_save: true}\n"));
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.error().field, "checkpoint.async_save");
}

// The shipped QLoRA job's cluster (h200-1x1) has no storage level. The sizes need none: the plan
// keeps them and says why there is no time (before, the command stopped with exit 2).
TEST(CheckpointContents, SizesWithoutAStorageLevel) {
  auto spec = LoadJobSpec("llama-3.1-8b-qlora-h200x1", {});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto cluster = LoadCluster("h200-1x1");
  auto links = LoadInterconnects();
  ASSERT_TRUE(cluster.ok() && links.ok());
  auto map = BuildBandwidthMap(*cluster, *links);
  ASSERT_TRUE(map.ok()) << map.error().Format();
  auto plan =
      PlanCheckpoint(*job, StorageCluster{*cluster, false}, *map, FailureRate{1.9733e-5, "", ""});
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_FALSE(plan->timed());
  EXPECT_NE(plan->untimed_reason.find("no storage level"), std::string::npos)
      << plan->untimed_reason;
  // 41,943,040 adapter parameters (audit25's per-layer count x 32) in fp32 = 167,772,160 B.
  EXPECT_NEAR(plan->sizes.adapter_total.count(), 167772160.0, 1);
}

// Accelerate's FSDP with FULL_STATE_DICT (its FSDP1 default, huggingface/accelerate
// utils/dataclasses.py): save_fsdp_model and save_fsdp_optimizer gather to rank 0 and torch.save
// there (utils/fsdp_utils.py, rank0_only), and the Trainer's save_model writes model.safetensors
// from accelerate's get_state_dict (transformers trainer.py, the is_fsdp_enabled branch). On
// Llama-3.1-8B (P = 8,030,261,248) with FSDP's fp32 parameters as the model state: rank 0 writes
// 4P (pytorch_model_fsdp.bin) + 8P (optimizer.bin, Adam's two fp32 moments) + 4P
// (model.safetensors, the same fp32 state dict) = 16P = 128,484,179,968 B, all on node 0: at
// Lustre's 20 GB/s a node, 6.424 s to write; a resume reads back 12P = 96.36 GB on rank 0
// (4.818 s). Before, the save was priced as DCP shards: 12P / 64 = 1.51 GB a rank, 602 ms.
TEST(CheckpointContents, FsdpFullStateDictIsWrittenByRankZero) {
  const std::string fsdp =
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 8}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 64}\n"
      "sequence: {max_tokens: 8192}\n"
      "sharding: {mode: fsdp2}\n"
      "optimizer: {name: adam, distributed: true, master_weights: fp32, moments: fp32}\n"
      "framework: {name: hf-trainer}\n";
  const CheckpointSizes full =
      ComputeCheckpointSizes(InlineJob(fsdp + "checkpoint: {state_dict: full}\n"));
  EXPECT_EQ(full.format, CheckpointFormat::kFsdpFullStateDict);
  EXPECT_NEAR(full.checkpoint_per_rank().count(), 16 * kLlama8bParams, 1e4);
  EXPECT_NEAR(full.busiest_node.count(), 16 * kLlama8bParams, 1e4);
  EXPECT_EQ(full.consolidated_dtype, DType::kFp32);
  auto t = TimesOnH100Cluster(full, 8);
  ASSERT_TRUE(t.ok()) << t.error().Format();
  EXPECT_NEAR(t->checkpoint_write.s(), 128.484179968 / 20, 1e-6);
  EXPECT_NEAR(t->checkpoint_load.s(), 96.363134976 / 20, 1e-6);
  // The sharded save (the job file's default, Accelerate's under FSDP2) stays DCP shards.
  const CheckpointSizes sharded = ComputeCheckpointSizes(InlineJob(fsdp));
  EXPECT_EQ(sharded.format, CheckpointFormat::kTorchDcp);
  EXPECT_NEAR(sharded.checkpoint_per_rank().count(), 12 * kLlama8bParams / 64, 1e4);
}

// `full` is the Trainer's FSDP save; asked of a Megatron job it is refused, naming the field.
TEST(CheckpointContents, FullStateDictOutsideFsdpIsRefused) {
  const Job job = InlineJob(
      "model: llama-3.1-8b\n"
      "cluster: {file: h100-8x8-ib400, gpu: H100, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096}\n"
      "framework: {name: megatron-core}\n"
      "checkpoint: {state_dict: full}\n");
  const Status st = CheckCheckpointSettings(job);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().field, "checkpoint.state_dict");
}

// A job that names no cluster file is timed on a shipped cluster's storage, which is said: the
// inline 8 x H100 job takes h100-8x8-ib400's Lustre, an assumption (it was printed as the job's).
TEST(CheckpointContents, BorrowedStorageIsAnAssumption) {
  const Job inline_job = InlineJob(
      "model: llama-3.1-8b\n"
      "cluster: {gpu: H100, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096}\n");
  auto borrowed = CheckpointCluster(inline_job, "");
  ASSERT_TRUE(borrowed.ok()) << borrowed.error().Format();
  EXPECT_TRUE(borrowed->assumed);
  EXPECT_EQ(borrowed->cluster.name, "h100-8x8-ib400");
  auto flagged = CheckpointCluster(inline_job, "h100-8x8-ib400");
  ASSERT_TRUE(flagged.ok()) << flagged.error().Format();
  EXPECT_FALSE(flagged->assumed);
}

}  // namespace
}  // namespace strata::preflight
