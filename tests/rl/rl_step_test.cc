// The reference RL job end to end, each expected value worked out by hand from the job file,
// `strata model qwen3.6-35b-a3b` (text model 34,660,610,688 + vision 446,571,248 =
// 35,107,181,936 parameters, of which routed experts 32,212,254,720) and data/gpus.yaml (H20:
// 96 GB, 4.0 TB/s, NVLink 900 GB/s both directions). The published rows of docs/rl-validation.md
// are run by tests/rl/rl_validation_doc_test.cc, which writes their predictions into the doc.
#include "strata/rl/rl_step.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "rl/reference_rl.h"
#include "strata/core/strings.h"
#include "strata/eval/evaluation.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/sharding.h"
#include "support/doc_section.h"
#include "support/golden.h"

namespace strata::rl_step_test {
namespace {

const RlEvaluation& Reference() { return testing::ReferenceRl(); }

// The ledger's states of one model, split as verl's hybrid engine moves them: weights,
// megatron-core's gradient buffer, fp32 master weights, AdamW moments (the optimizer step's
// transient gradient copy lives only inside optimizer.step()).
struct LedgerStates {
  Bytes weights, gradients, master, moments;
  Bytes Resident() const { return Bytes(weights + gradients + master + moments); }
};
LedgerStates StatesOf(const MemoryLedger& l) {
  LedgerStates s;
  for (const LedgerItem& item : l.items) {
    if (IsShardingWorkingSet(item)) continue;  // allocated and freed inside a pass
    if (item.kind == ItemKind::kWeights) s.weights += item.bytes;
    if (item.kind == ItemKind::kGradients) s.gradients += item.bytes;
    if (item.kind != ItemKind::kOptimizer) continue;
    if (item.name.starts_with("optimizer: master weights")) {
      s.master += item.bytes;
    } else if (!item.name.starts_with("optimizer step:")) {
      s.moments += item.bytes;
    }
  }
  return s;
}

// Rollout memory at TP2, u = 0.6, vLLM 0.19 (graphs outside). vLLM's budget is u x the total
// torch.cuda.mem_get_info() reports (vllm/v1/worker/gpu_worker.py, requested_memory), which is
// nvidia-smi's 97,871 MiB less the driver's 613.3 MiB on an H20 (data/memory_overheads.yaml,
// device_capacity): 102,625,181,696 - 643,121,152 = 101,982,060,544 B (94.98 GiB). Before, the
// datasheet's 96e9 B (89.41 GiB) was used: 17,295,907,636 B of KV, 251 sequences.
//   weights per GPU = 35,107,181,936 x 2 B / 2 = 35,107,181,936 B
//   KV cache = 0.6 x 101,982,060,544 - 35,107,181,936 - 3.58 GiB - 1.26 GiB
//     (5,196,910,428 B) = 20,885,143,962 B
//   one mean-length sequence (1,024 + 4,096 = 5,120 tokens) in vLLM's unified pages
//   (kv_cache_test, HybridPagesAreUnifiedAsVllmDoes): 10 blocks of 544 tokens = 5,440 x 10,240 B
//   + 16,465,920 B of state + 245,760 B of page padding = 72,417,280 B: 288.40 -> 288 sequences
//   at once (303 before the pages were unified: 68,894,720 B a sequence).
TEST(RlStepTest, ReferenceRolloutMemory) {
  const RolloutMemory& m = Reference().colocated.rollout_memory;
  EXPECT_NEAR(m.weights.count(), 35107181936.0, 1);
  EXPECT_NEAR(m.kv_cache.count(), 20885143962.0, 2);
  EXPECT_EQ(m.concurrent_sequences, 288);
  EXPECT_FALSE(m.cuda_graph_inside);
  EXPECT_TRUE(m.fits);
}

// Generation: 40 GPUs / TP2 = 20 instances, 1,280 / 20 = 64 samples each, all at once (64 <
// 251): batch 64, 64 x 4,096 / 64 = 4,096 bulk decode steps. The responses (the default
// capped exponential, mean 4,096 under 8,192: (1 - e^-x) / x = 1/2 at x = 1.59362, by
// bisection: x = 1.6 gives 0.7981 / 1.6 = 0.4988, x = 1.59 gives 0.7961 / 1.59 = 0.5007) put
// e^-1.59362 = 20.32% of the samples at the cap, more than the top quantile's 0.5 / 64 = 0.78%:
// the instance decodes 8,192 steps, the longest sample's, its batch full only until the
// shortest sample (the quantile at 0.5 / 64: -ln(1 - 1/128) x 8,192 / 1.59362 = 40.3 tokens)
// ends.
// A rollout instance larger than a node (verl's DAPO_MOE235B practice script runs vLLM at TP16 on
// 8-GPU nodes): vLLM can, strata's decode does not price the TP all-reduce between nodes, so the
// job is refused saying which of the two it is, with the one-node bound to try. Before, the
// message read as if the layout were invalid ("does not divide a node's 8 GPUs").
TEST(RlStepTest, ARolloutInstanceOverSeveralNodesIsSaidToBeUnpriced) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"rollout.tp=16"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "rollout.tp");
  EXPECT_NE(e.error().message.find("an instance over 2 nodes, which vLLM can run but strata does "
                                   "not price"),
            std::string::npos)
      << e.error().message;
  EXPECT_NE(e.error().hint.find("--set rollout.tp=8"), std::string::npos) << e.error().hint;
  // A TP that fits in a node but does not divide it stays a plain layout error.
  auto three = LoadRlSpec(kReferenceRlJobName, {"rollout.tp=3"});
  ASSERT_TRUE(three.ok());
  auto e3 = EvaluateRl(*Workspace::Load(), *three);
  ASSERT_FALSE(e3.ok());
  EXPECT_EQ(e3.error().message, "rollout.tp 3 does not divide a node's 8 GPUs");
}

TEST(RlStepTest, ReferenceGenerationShape) {
  const GenerationTime& g = Reference().colocated.generation;
  EXPECT_NEAR(g.batch, 64, 1e-9);
  EXPECT_NEAR(g.bulk_steps, 4096, 1e-9);
  EXPECT_NEAR(Reference().spec.lengths.Responses().ClipFraction(), 0.2032, 1e-4);
  EXPECT_NEAR(g.simulation.steps, 8192, 1e-6);
  EXPECT_NEAR(g.simulation.full_steps, 40.3, 0.05);
  // (i + 0.5) / 64 >= 1 - 0.2032 from i = 51: 13 samples at the cap end together, the other 51
  // one by one: 52 intervals.
  EXPECT_EQ(g.simulation.intervals, 52);
  // 1 - (1 - 8/256)^64 = 0.868916 (rollout_test).
  EXPECT_NEAR(g.step.expert_fraction, 0.868916, 1e-6);
}

// The shape of the responses moves generation at the same mean and max (before, only those two
// reached it, and lengths.response_distribution was an unknown key). The reference instance
// runs its 64 samples at once (251 fit), so its decode steps are its longest sample's:
//   fixed: every sample 4,096, one wave at batch 64 and the mid-response context: exactly the
//   bulk, 4,096 steps x (16.16 ms + 0.85 ms of TP all-reduces: 80 x 10.635 us at batch 64,
//   rollout_test TpAllReducesOnTheNodesLink) = 4,096 x 17.01 ms = 69.7 s.
//   uniform: mean 4,096 = 8,192 / 2, so from 0 to 8,192; the top quantile 63.5 / 64 x 8,192 =
//   8,128 steps.
//   capped exponential (the default): 8,192 steps (ReferenceGenerationShape).
TEST(RlStepTest, ResponseDistributionShapesTheGeneration) {
  auto with = [](const char* shape) {
    auto spec =
        LoadRlSpec(kReferenceRlJobName, {std::string("lengths.response_distribution=") + shape});
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    if (!spec.ok()) return GenerationTime{};
    auto e = EvaluateRl(*Workspace::Load(), *spec);
    EXPECT_TRUE(e.ok()) << e.error().Format();
    return e.ok() ? e->colocated.generation : GenerationTime{};
  };
  const GenerationTime fixed = with("fixed");
  EXPECT_NEAR(fixed.simulation.steps, 4096, 1e-6);
  EXPECT_NEAR(fixed.decode.s(), fixed.bulk.s(), 1e-9);
  EXPECT_NEAR(fixed.decode.s(), 69.7, 0.05);
  const GenerationTime uniform = with("uniform");
  EXPECT_NEAR(uniform.simulation.steps, 8128, 1e-6);
  const GenerationTime& capped = Reference().colocated.generation;
  EXPECT_NEAR(capped.simulation.steps, 8192, 1e-6);
  EXPECT_LT(fixed.decode, uniform.decode);
  EXPECT_NE(uniform.decode.s(), capped.decode.s());
}

// Weight sync, colocated: model bytes 70,214,363,872; convert at 6.0 GB/s = 11.7024 s;
// gather: routed experts (32,212,254,720 / 35,107,181,936 = 0.917540 of the model) are EP8
// sharded, 7/8 of them travel: 56,371,445,760 B over 450 GB/s per direction = 0.125270 s; the
// rest is not sharded (TP1 PP1); transfer 0 (IPC); load 35,107,181,936 B / (4.0 TB/s x 0.70)
// = 0.012538 s.
TEST(RlStepTest, ReferenceWeightSync) {
  const WeightSync& w = Reference().colocated.sync;
  EXPECT_NEAR(w.model_bytes.count(), 70214363872.0, 1);
  EXPECT_NEAR(w.convert.s(), 11.7024, 1e-3);
  EXPECT_NEAR(w.gather.s(), 0.125270, 1e-5);
  EXPECT_NEAR(w.transfer.s(), 0, 1e-12);
  EXPECT_NEAR(w.load.s(), 0.012538, 1e-5);
}

// Every split verl can place is tried twice (synchronous, one step off): whole nodes (8, 16, 24,
// 32 rollout GPUs) and the same share of all 5 nodes at rollout TP 2 (2, 4, 6 of each: 10, 20,
// 30), in order of rollout GPUs. 16 + 24 cannot train: a mini batch of 320 samples does not
// divide over DP 24; nor can the shared ones: the actor's EP 8 does not divide 30, 20 or 10
// GPUs. One-step-off is never slower than synchronous on the same split (max(a, b) <= a + b).
TEST(RlStepTest, ReferenceSplits) {
  const RlEvaluation& e = Reference();
  ASSERT_EQ(e.splits.size(), 14u);
  const int64_t rollout[] = {8, 10, 16, 20, 24, 30, 32};
  for (size_t i = 0; i < e.splits.size(); i += 2) {
    const RlPlacementResult& sync = e.splits[i];
    const RlPlacementResult& off = e.splits[i + 1];
    EXPECT_FALSE(sync.one_step_off);
    EXPECT_TRUE(off.one_step_off);
    EXPECT_EQ(sync.rollout_gpus, rollout[i / 2]);
    EXPECT_EQ(sync.shape.shared_nodes, rollout[i / 2] % 8 != 0);
    if (sync.valid) {
      EXPECT_LE(off.times.step.s(), sync.times.step.s());
    }
    if (sync.shape.shared_nodes) {
      EXPECT_FALSE(sync.valid);
      EXPECT_NE(sync.reason.find("EP x ETP = 8 x 1 = 8 must divide"), std::string::npos)
          << sync.reason;
    }
  }
  EXPECT_FALSE(e.splits[4].valid);
  EXPECT_NE(e.splits[4].reason.find("320"), std::string::npos) << e.splits[4].reason;
  ASSERT_GE(e.best_split, 0);
  EXPECT_TRUE(e.splits[static_cast<size_t>(e.best_split)].valid);
}

// The reference decode step repriced on an H100 SXM: both HBM-bound (H20: 12.2 ms of HBM
// against 1.6 ms of compute), so the same bytes at the same efficiency take 4.0 / 3.35 TB/s =
// 1.19403 times as long on the H100; the engine's 4 ms per step (data/rl_constants.yaml) is the
// same on both, and so are the TP2 all-reduces, a = 0.8508 ms a step on either's 900 GB/s NVLink
// (80 x 10.635 us, rollout_test TpAllReducesOnTheNodesLink). With the H20's kernels at m ms:
// (1.19403 m + a + 4) / (m + a + 4), at m = 12.16 ms (14.52 + 0.85 + 4) / (12.16 + 0.85 + 4) =
// 1.1387 per GPU, and per TDP watt x 700 W / 400 W = 1.9927 (data/gpus.yaml).
TEST(RlStepTest, H20DecodesFasterPerGpuAndPerWatt) {
  auto gpus = CompareDecode(Reference(), {"H100 SXM"});
  ASSERT_TRUE(gpus.ok()) << gpus.error().Format();
  ASSERT_EQ(gpus->size(), 2u);
  const GpuDecode& h20 = (*gpus)[0];
  const GpuDecode& h100 = (*gpus)[1];
  EXPECT_EQ(h20.gpu, "H20");
  EXPECT_GT(h100.step.memory_time.s(), h100.step.compute_time.s());
  EXPECT_NEAR(h100.step.memory_time / h20.step.memory_time, 4.0 / 3.35, 1e-9);
  EXPECT_NEAR(h20.step.memory_time.ms(), 12.16, 0.01);
  const double m = h20.step.memory_time.ms();
  const double a = 0.8508;
  EXPECT_NEAR(h20.step.tp_allreduce.ms(), a, 1e-3);
  EXPECT_NEAR(h100.step.tp_allreduce.ms(), a, 1e-3);
  EXPECT_NEAR(h20.tokens_per_s_per_gpu / h100.tokens_per_s_per_gpu,
              (4.0 / 3.35 * m + a + 4) / (m + a + 4), 1e-4);
  EXPECT_NEAR(h20.tokens_per_s_per_gpu / h100.tokens_per_s_per_gpu, 1.1387, 1e-3);
  EXPECT_NEAR(h20.tokens_per_s_per_watt / h100.tokens_per_s_per_watt, 1.9927, 2e-3);
  // batch 64 / TP2 per step.
  EXPECT_NEAR(h20.tokens_per_s_per_gpu, 32 / h20.step.time.s(), 1e-9);
}

// PPO on the reference job: the critic is the actor's model in the actor's layout (verl's
// default critic.model.path), so its values pass is the actor's forward over every sample and its
// update the actor's: colocated, the step grows by one old-log-prob pass, one update and the
// critic's offload copies (4 W + 2 (M + O) = 55.37 + 21.06 = 76.43 GB over 63 GB/s = 1.21 s,
// OffloadedStatesCrossPcieEveryStep), 273.68 + 24.02 + 103.32 + 1.21 = 402.23 s from
// `strata rl`'s own parts.
// Offloaded, the host keeps both models' states: twice GRPO's. Not offloaded, vLLM's GPUs also hold
// the critic's weights, gradients and optimizer states beside the actor's.
TEST(RlStepTest, PpoAddsTheCriticsPassesAndStates) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto ppo = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(ppo.ok()) << ppo.error().Format();
  const RlTimes& g = Reference().colocated.times;
  const RlTimes& p = ppo->colocated.times;
  EXPECT_NEAR(g.critic_values.s(), 0, 1e-12);
  EXPECT_NEAR(g.critic_update.s(), 0, 1e-12);
  EXPECT_NEAR(p.critic_values.s(), g.old_log_prob.s(), 1e-9);
  EXPECT_NEAR(p.critic_update.s(), g.update.s(), 1e-9);
  EXPECT_NEAR(p.step.s(), 402.23, 0.05);
  const LedgerStates sg = StatesOf(Reference().ledger);
  const double critic_copies =
      (4 * sg.weights.value() + 2 * (sg.master.value() + sg.moments.value())) / 63e9;
  EXPECT_NEAR(p.step.s(), g.step.s() + g.old_log_prob.s() + g.update.s() + critic_copies, 1e-6);
  // Offloaded, the host keeps each trained model's states S and the reference's weights W:
  // PPO's 2 S + W against GRPO's S + W, per GPU of the node.
  const LedgerStates st = StatesOf(Reference().ledger);
  EXPECT_NEAR(
      ppo->host_offload_per_node / Reference().host_offload_per_node,
      (2 * st.Resident().gib() + st.weights.gib()) / (st.Resident().gib() + st.weights.gib()),
      1e-12);
  EXPECT_NEAR(Reference().host_offload_per_node.gib(), 8 * (st.Resident().gib() + st.weights.gib()),
              1e-9);
  ASSERT_EQ(ppo->phases.size(), 5u);
  EXPECT_EQ(ppo->phases[3].phase, "critic values forward");
  EXPECT_EQ(ppo->phases[4].phase, "critic update");

  // Not offloaded: the rollout's neighbours are the CUDA context plus two models' states (not
  // the optimizer step's transient gradient copy, freed after optimizer.step()).
  auto grpo_kept = LoadRlSpec(kReferenceRlJobName, {"placement.offload_trainer=false"});
  auto ppo_kept =
      LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo", "placement.offload_trainer=false"});
  ASSERT_TRUE(grpo_kept.ok() && ppo_kept.ok());
  auto a = EvaluateRl(*Workspace::Load(), *grpo_kept);
  auto b = EvaluateRl(*Workspace::Load(), *ppo_kept);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(
      b->colocated.rollout_memory.resident.gib() - a->colocated.rollout_memory.resident.gib(),
      StatesOf(a->ledger).Resident().gib(), 1e-9);
}

// Offloaded, what stays beside vLLM is the trainer's CUDA context and NCCL buffers: the ledger's
// two items of those names. Its allocator cache (reserved, not allocated) does not stay: verl's
// rollout_mode empties it first (aggressive_empty_cache). It was counted as resident before.
TEST(RlStep, TheTrainersAllocatorCacheIsEmptiedBeforeTheRollout) {
  const RlEvaluation& e = Reference();
  double kept_gib = 0, cache_gib = 0;
  for (const LedgerItem& item : e.ledger.items) {
    if (item.name == "CUDA context" || item.name == "NCCL buffers") kept_gib += item.bytes.gib();
    if (item.name.starts_with("allocator cache")) cache_gib = item.bytes.gib();
  }
  ASSERT_GT(cache_gib, 0);
  EXPECT_NEAR(e.colocated.rollout_memory.resident.gib(), kept_gib, 1e-9);
}

// An RL batch that does not divide over the actor's DP: 16 prompts x 8 samples = 128 samples per
// mini batch over DP 40. The error names the RL job and says how strata set the actor's batch.
TEST(RlStepTest, RlBatchThatDoesNotDivideOverTheActorsDp) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.prompts=16", "batch.mini_batches=1"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto eval = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_FALSE(eval.ok());
  EXPECT_EQ(eval.error().Format(),
            "data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml: actor: the actor's job "
            "(qwen3.6-35b-a3b-sft-h20x40) at 128 samples per mini batch (16 prompts x 8 samples "
            "/ 1 mini batches) and 10240-token sequences: batch.global_batch: global batch 128 is "
            "not a multiple of micro batch x DP = 1 x 40 = 40\n  hint: global batches that would "
            "work: 40, 80, 160");
}

// One 8-GPU H20 node: verl's 4 -> 4 sync job (Qwen2.5-Math-7B, a TP1 megatron trainer), at
// rollout TP 2 and 48 prompts x 16 = 768 samples (a mini batch that divides over DP 6, 4 and
// 2). Before, splits were whole nodes only: one node had none, and rollout_gpus 4 was refused
// as "not a whole number of 8-GPU nodes".
Result<RlEvaluation> OneNodeJob(std::vector<std::string> sets) {
  auto spec =
      LoadRlSpec(testing::TestPath("rl/validation/verl-sync-qwen2.5-math-7b-4to4.yaml"), sets);
  if (!spec.ok()) return spec.error();
  return EvaluateRl(*Workspace::Load(), *spec);
}

// The rollout takes whole TP-2 instances of the node: 2 + 6, 4 + 4, 6 + 2 (verl's
// trainer.n_gpus_per_node + rollout.n_gpus_per_node = 8, as its grpo_0.6b_gsm8k_fsdp2_2_6.sh),
// each synchronous and one step off, and every one trains (768 samples over DP 6, 4, 2).
TEST(RlStepTest, OneNodeJobGetsSplitsInsideTheNode) {
  auto e = OneNodeJob({"rollout.tp=2", "batch.prompts=48"});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_EQ(e->splits.size(), 6u);
  const int64_t rollout[] = {2, 2, 4, 4, 6, 6};
  for (size_t i = 0; i < e->splits.size(); ++i) {
    const RlPlacementResult& r = e->splits[i];
    EXPECT_EQ(r.rollout_gpus, rollout[i]);
    EXPECT_EQ(r.train_gpus, 8 - rollout[i]);
    EXPECT_TRUE(r.shape.one_node());
    EXPECT_TRUE(r.valid) << r.reason;
  }
  EXPECT_GE(e->best_split, 0);
}

// An actor at TP 2 cannot train on the one GPU of the 7 + 1 split: its row says the layout does
// not divide (world size 1 by TP x PP x CP = 2), as the 1 + 7 row's 7 GPUs do. Before, the split
// passed DP = 1 / 2 = 0 to the job and the row read "expected a positive integer, got 0".
TEST(RlStepTest, ASplitTooSmallForTheActorsTpSaysWhy) {
  auto e = OneNodeJob({"actor.parallel.tp=2", "rollout.tp=1", "batch.prompts=48"});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  bool seen = false;
  for (const RlPlacementResult& r : e->splits) {
    if (r.train_gpus != 1) continue;
    seen = true;
    EXPECT_FALSE(r.valid);
    EXPECT_NE(r.reason.find("world size 1 (1 nodes x 1 GPUs) is not divisible by TP x PP x CP"),
              std::string::npos)
        << r.reason;
  }
  EXPECT_TRUE(seen);
}

// Two 8-GPU H20 nodes split whole (8 rollout + 8 training GPUs), rollout TP 2, 6 prompts x 6
// samples = 36 samples in one mini batch at the actor's micro batch of 1 (TP1 PP1 CP1, DP = the
// GPUs). 36 divides over neither the 8 training GPUs (36 / 8 = 4.5) nor all 16 (2.25), so before
// the whole RL job was refused with the actor's error. Now each placement says what it can: the
// colocated row and the configured 8 + 8 are not possible, each with the job module's reason,
// and the splits verl could still place are priced (SplitShapes(2, 8, 2), by rollout GPUs, whole
// nodes first: 2 a node (12 train: 36 / 12 = 3), 8 + 8 whole (8 train), 4 a node (8 train),
// 6 a node (4 train: 36 / 4 = 9); each sync and one step off).
TEST(RlStepTest, WholeNodeSplitWhoseBatchDoesNotDivideIsNotPossibleNotAnError) {
  auto e = OneNodeJob({"actor.cluster.nodes=2", "placement.rollout_gpus=8", "rollout.tp=2",
                       "batch.prompts=6", "batch.samples_per_prompt=6"});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_EQ(e->actor.world(), 16);
  EXPECT_FALSE(e->colocated.valid);
  EXPECT_EQ(e->colocated.reason,
            "the actor over all 16 GPUs: global batch 36 is not a multiple of micro batch x DP = "
            "1 x 16 = 16");
  EXPECT_EQ(e->configured.placement, RlPlacement::kSplit);
  EXPECT_FALSE(e->configured.shape.shared_nodes);
  EXPECT_EQ(e->configured.rollout_gpus, 8);
  EXPECT_EQ(e->configured.train_gpus, 8);
  EXPECT_FALSE(e->configured.valid);
  EXPECT_EQ(e->configured.reason,
            "training side: global batch 36 is not a multiple of micro batch x DP = 1 x 8 = 8");
  ASSERT_EQ(e->splits.size(), 8u);
  const int64_t train[] = {12, 12, 8, 8, 8, 8, 4, 4};
  const bool valid[] = {true, true, false, false, false, false, true, true};
  for (size_t i = 0; i < e->splits.size(); ++i) {
    const RlPlacementResult& r = e->splits[i];
    EXPECT_EQ(r.train_gpus, train[i]) << i;
    EXPECT_EQ(r.valid, valid[i]) << i << ": " << r.reason;
    if (valid[i]) {
      EXPECT_GT(r.times.step.s(), 0) << i;
    }
  }
  ASSERT_GE(e->best_split, 0);
  EXPECT_TRUE(e->splits[static_cast<size_t>(e->best_split)].valid);
}

// The job as written: 4 rollout GPUs (TP 4) beside a 4-GPU trainer on one node is accepted.
TEST(RlStepTest, RolloutGpusInsideOneNodeAreAccepted) {
  auto e = OneNodeJob({});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_EQ(e->configured.placement, RlPlacement::kSplit);
  EXPECT_EQ(e->configured.rollout_gpus, 4);
  EXPECT_EQ(e->configured.train_gpus, 4);
  EXPECT_TRUE(e->configured.valid) << e->configured.reason;
}

// 3 GPUs cannot hold whole TP-2 instances: refused, naming the multiple.
TEST(RlStepTest, RolloutGpusNotAMultipleOfTheRolloutTpAreRefused) {
  auto e = OneNodeJob({"rollout.tp=2", "placement.rollout_gpus=3"});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_FALSE(e->configured.valid);
  EXPECT_EQ(e->configured.reason,
            "placement.rollout_gpus 3 is not a multiple of the rollout's TP 2 (each vLLM instance "
            "takes 2 GPUs of one node)");
}

// Qwen2.5-Math-7B (`strata model qwen2.5-math-7b`): 7,615,616,512 parameters, 15,231,233,024 B
// in bf16. Inside one H20 node the sync's broadcast stays on NVLink: 900 GB/s both directions,
// 450 GB/s one way (data/gpus.yaml), 15,231,233,024 / 450e9 = 0.0338472 s. Across nodes it
// crosses the data NICs of a node: h20-5x8 has 4 x 200 Gb/s = 100 GB/s, 0.152312 s; that holds
// for whole nodes (8 + 8) and for the same share of two nodes (2 + 6 of each, rollout TP 2; 48
// prompts x 16 = 768 samples over the trainer's DP 12).
// Before, every split was priced at the NICs, the in-node one too.
TEST(RlStepTest, SplitSyncCrossesTheLinkTheTwoSidesShare) {
  auto in_node = OneNodeJob({});
  ASSERT_TRUE(in_node.ok()) << in_node.error().Format();
  const WeightSync& w = in_node->configured.sync;
  EXPECT_NEAR(w.model_bytes.count(), 15231233024.0, 1);
  EXPECT_NEAR(w.transfer.s(), 0.0338472, 1e-6);
  EXPECT_NE(w.link.find("inside the node"), std::string::npos) << w.link;

  auto whole = OneNodeJob({"actor.cluster.nodes=2", "placement.rollout_gpus=8"});
  ASSERT_TRUE(whole.ok()) << whole.error().Format();
  EXPECT_FALSE(whole->configured.shape.shared_nodes);
  EXPECT_NEAR(whole->configured.sync.transfer.s(), 0.152312, 1e-6);
  EXPECT_EQ(whole->configured.sync.link, "the data NICs of a node");

  auto shared = OneNodeJob(
      {"actor.cluster.nodes=2", "rollout.tp=2", "batch.prompts=48", "placement.rollout_gpus=4"});
  ASSERT_TRUE(shared.ok()) << shared.error().Format();
  EXPECT_TRUE(shared->configured.shape.shared_nodes);
  EXPECT_EQ(shared->configured.shape.rollout_per_node, 2);
  EXPECT_NEAR(shared->configured.sync.transfer.s(), 0.152312, 1e-6);
}

// rollout.enforce_eager (vLLM without CUDA graphs): every decode step of the reference job takes
// data/rl_constants.yaml's decode.eager_factor (1.37) times its kernels + engine time, and no
// CUDA graphs are captured (0 B beside the budget; at vLLM 0.19 they were outside it, so the KV
// cache, the concurrency and the batch do not change).
TEST(RlStepTest, EagerRolloutStretchesEveryDecodeStep) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"rollout.enforce_eager=true"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto eager = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(eager.ok()) << eager.error().Format();
  const GenerationTime& with_graphs = Reference().colocated.generation;
  const GenerationTime& g = eager->colocated.generation;
  EXPECT_EQ(g.batch, with_graphs.batch);
  EXPECT_NEAR(g.step.time / with_graphs.step.time, 1.37, 1e-9);
  EXPECT_NEAR(g.step.memory_time / with_graphs.step.memory_time, 1.0, 1e-12);
  EXPECT_EQ(eager->colocated.rollout_memory.cuda_graph.count(), 0);
  EXPECT_NEAR(eager->colocated.rollout_memory.kv_cache.count(),
              Reference().colocated.rollout_memory.kv_cache.count(), 1);
}

// A GPU written as a variant keeps its catalog part's calibration in the rollout too, at its
// power limit (the step tables resolve it once; the rollout read the efficiencies by the
// variant's name, "H20 (custom)", and fell back to the defaults). H20: sustained clock 1.0 at its
// 400 W; capped at 300 W: (300/400)^0.333 = 0.90865 (tests/sim/step_gpu_variant_test.cc), so the
// prefill's compute efficiency (gemm_large x sustained clock) is 0.90865 x the catalog part's.
TEST(RlStepTest, GpuVariantKeepsItsCalibrationInTheRollout) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"actor.cluster.gpu={base: H20, power_w: 300}"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto capped = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(capped.ok()) << capped.error().Format();
  EXPECT_NEAR(capped->decode.compute_efficiency / Reference().decode.compute_efficiency, 0.90865,
              1e-4);
  EXPECT_DOUBLE_EQ(capped->decode.hbm_efficiency, Reference().decode.hbm_efficiency);
}

// verl's dynamic batch on the reference job (`--set batch.max_tokens_per_gpu=16384`): a mini
// batch of 320 samples over DP 40 is 8 samples of 1,024 + 4,096 = 5,120 mean tokens per rank,
// 40,960 tokens: ceil(40,960 / 16,384) = 3 micro batches of 13,653.3 tokens, one packed row each
// (13,654 tokens, even for CP's 2 x 1 chunks), 3 x DP 40 = 120 rows a mini batch. The fixed
// micro batch it replaces: 8 micro batches of 1 sample, activations sized for 2,048 + 8,192 =
// 10,240 tokens. The log-prob passes take all 1,280 / 40 = 32 samples at once: 163,840 tokens
// in ceil(163,840 / 16,384) = 10 micro batches of exactly 16,384. Before: an unknown key.
TEST(RlStepTest, DynamicBatchPacksTheActorsMicroBatches) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_EQ(e->micro_batches.size(), 2u);  // GRPO: the update and the log-prob passes
  const PackedMicroBatches& update = e->micro_batches[0].packed;
  EXPECT_NEAR(update.samples_per_rank, 8, 1e-12);
  EXPECT_EQ(update.micro_batches, 3);
  EXPECT_NEAR(update.tokens_per_micro_batch, 40960.0 / 3, 1e-9);
  EXPECT_TRUE(e->actor.spec.sequence.packing);
  EXPECT_EQ(e->actor.spec.micro_batch, 1);
  EXPECT_EQ(e->actor.spec.global_batch, 120);
  EXPECT_NEAR(e->actor.spec.sequence.max_tokens, 13654, 1e-9);
  EXPECT_NEAR(e->actor.spec.sequence.mean_tokens, 5120, 1e-9);
  EXPECT_EQ(e->fixed_micro_batch, 1);
  const PackedMicroBatches& log_prob = e->micro_batches[1].packed;
  EXPECT_FALSE(e->micro_batches[1].per_mini_batch);
  EXPECT_NEAR(log_prob.samples_per_rank, 32, 1e-12);
  EXPECT_EQ(log_prob.micro_batches, 10);
  EXPECT_NEAR(log_prob.tokens_per_micro_batch, 16384, 1e-9);
  // Packed rows of 13,654 tokens hold more activations than the fixed micro batch's 10,240.
  EXPECT_GT(e->ledger.Peak(), Reference().ledger.Peak());
}

// verl refuses a budget that does not hold one sample padded to prompt_max + response_max
// (seqlen_balancing.py:382 asserts max_token_len >= max_seq_len): 8,000 < 10,240.
TEST(RlStepTest, DynamicBatchBudgetBelowOneSampleIsRefused) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=8000"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().Format(),
            "data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml: batch.max_tokens_per_gpu: "
            "batch.max_tokens_per_gpu 8,000 x CP 1 = 8,000 tokens is less than one sample of "
            "prompt_max + response_max = 10,240 tokens: verl refuses it (max_token_len must be "
            "greater than the sequence length)\n  hint: a budget of at least 10,240 tokens per "
            "GPU (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/"
            "seqlen_balancing.py:382)");
}

// The forward passes are checked against the card like the updates. A log-prob budget of
// 1,000,000 tokens packs each rank's 1,280 / 40 = 32 samples x 5,120 mean tokens = 163,840
// tokens into one micro batch, 12x the update's 13,654-token rows: its forward peak is over the
// H20's usable 101,982,060,544 B = 94.98 GiB (what the counters reach, as `memory` checks), on
// 40 GPUs and on every split's fewer (each rank packs more samples). Before: the phase was printed
// and the placement still said it fits.
TEST(RlStepTest, LogProbPassOverTheCardRefusesEveryPlacement) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384",
                                               "batch.log_prob_max_tokens_per_gpu=1000000"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_GE(e->phases.size(), 3u);
  EXPECT_EQ(e->phases[1].phase, "log-prob and reference forward");
  EXPECT_GT(e->phases[1].bytes.count(), 101982060544.0);
  EXPECT_FALSE(e->colocated.valid);
  EXPECT_TRUE(e->colocated.reason.starts_with("the log-prob and reference forward phase needs "))
      << e->colocated.reason;
  EXPECT_TRUE(e->colocated.reason.ends_with(" of 94.98 GiB")) << e->colocated.reason;
  ASSERT_EQ(e->splits.size(), 14u);
  for (const RlPlacementResult& r : e->splits) {
    EXPECT_FALSE(r.valid) << r.rollout_gpus;
    // A mini batch of 320 samples splits over 32, 16 and 8 training GPUs, not over 24; the
    // shared nodes' 30, 20 and 10 fail on the actor's EP 8 first (ReferenceSplits).
    if (320 % r.train_gpus != 0 || r.shape.shared_nodes) continue;
    EXPECT_TRUE(r.reason.starts_with("training side: the log-prob and reference forward needs "))
        << r.reason;
  }
  EXPECT_EQ(e->best_split, -1);
}

// docs/rl.md quotes this case's figures: the sentence is written from the evaluation, so it
// cannot drift as it did (it said "95.71 GiB of 89.41" when the output said 95.75 of 94.98);
// UPDATE_GOLDEN=1 rewrites it. 1,280 samples / 40 ranks = 32 samples a rank, all in one
// micro batch under a 1,000,000-token budget: about 32 x (1,024 + 4,096) = 163,840 tokens (the
// responses are the distribution's quantiles at (i + 0.5) / n, whose mean is within a few tokens
// of 4,096: 163,912 printed).
TEST(RlStepTest, TheDocQuotesTheLogProbPassOverTheCard) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384",
                                               "batch.log_prob_max_tokens_per_gpu=1000000"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  const RlMicroBatch* log_prob = nullptr;
  for (const RlMicroBatch& m : e->micro_batches) {
    if (m.pass == "log-prob passes") log_prob = &m;
  }
  ASSERT_NE(log_prob, nullptr);
  EXPECT_EQ(log_prob->packed.micro_batches, 1);
  EXPECT_NEAR(log_prob->packed.samples_per_rank, 32, 1e-9);
  EXPECT_NEAR(log_prob->packed.largest_micro_batch_tokens, 163840, 163840 * 1e-3);
  ASSERT_GE(e->phases.size(), 2u);
  constexpr const char* kBegin = "The reference job with `--set batch.max_tokens_per_gpu=16384";
  const std::string sentence = fmt::format(
      "{} --set batch.log_prob_max_tokens_per_gpu=1000000` packs each rank's {:.0f} samples "
      "into one {}-token micro batch whose forward peaks at {} of {} without autograd: the "
      "colocated job and every split are refused (`tests/rl/rl_step_test.cc`, "
      "LogProbPassOverTheCardRefusesEveryPlacement; TheDocQuotesTheLogProbPassOverTheCard "
      "writes this sentence).\n",
      kBegin, log_prob->packed.samples_per_rank,
      GroupDigits(log_prob->packed.largest_micro_batch_tokens), FormatGiB(e->phases[1].bytes),
      FormatGiB(e->ledger.capacity));
  const std::optional<std::string> doc =
      testing::WithSectionReplaced(testing::ReadTestFile("../docs/rl.md"), kBegin, "\n", sentence);
  ASSERT_TRUE(doc) << "docs/rl.md has no line \"" << kBegin << "\"";
  EXPECT_TRUE(testing::MatchesGolden("../docs/rl.md", *doc));
}

// PPO's critic-values pass: a critic budget of 1,000,000 tokens packs one mini batch's
// 1,280 / 4 / 40 = 8 samples (40,960 tokens) into the update's one micro batch but all 32
// samples (163,840 tokens) into the values pass. Its forward runs without autograd and with a
// value head (no logits): one layer's tensors of 163,840 tokens, under the card (73.04 GiB of
// 89.41), where the training forward's peak was over it. The values pass's own ledger is kept
// (before: dropped): its no_grad forward is the larger micro batch's, above the update's.
TEST(RlStepTest, PpoCriticValuesPassIsPricedWithoutAutograd) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo", "batch.max_tokens_per_gpu=16384",
                                               "batch.critic_max_tokens_per_gpu=1000000"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_EQ(e->phases.size(), 5u);
  EXPECT_EQ(e->phases[3].phase, "critic values forward");
  EXPECT_LT(e->phases[3].bytes.gib(), 96e9 / (1ull << 30));
  auto small = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo", "batch.max_tokens_per_gpu=16384",
                                                "batch.critic_max_tokens_per_gpu=16384"});
  ASSERT_TRUE(small.ok());
  auto s = EvaluateRl(*Workspace::Load(), *small);
  ASSERT_TRUE(s.ok()) << s.error().Format();
  EXPECT_GT(e->phases[3].bytes, s->phases[3].bytes);
}

// Under the dynamic batch verl ignores ppo_micro_batch_size_per_gpu: a fixed micro batch of 3
// that does not divide a mini batch (320 samples is no multiple of 3 x DP 40 = 120) does not
// stop the packed job, which still packs each rank's 8 samples into 3 micro batches of
// 40,960 / 3 tokens. Before: refused on "global batch 320 is not a multiple of micro batch x DP".
TEST(RlStepTest, DynamicBatchIgnoresTheFixedMicroBatch) {
  auto spec = LoadRlSpec(kReferenceRlJobName,
                         {"batch.max_tokens_per_gpu=16384", "actor.batch.micro_batch=3"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_EQ(e->fixed_micro_batch, 3);
  ASSERT_EQ(e->micro_batches.size(), 2u);
  EXPECT_EQ(e->micro_batches[0].packed.micro_batches, 3);
  EXPECT_NEAR(e->micro_batches[0].packed.tokens_per_micro_batch, 40960.0 / 3, 1e-9);
}

// Interleaved pipelining rounds the packed count up to a multiple of PP, which can exceed the
// samples: 5 prompts x 2 = 10 samples in 1 mini batch over DP 40 / PP 4 = 10 ranks is 1 sample
// a rank; its 5,120 tokens fit one 16,384-token budget, rounded up to PP 4 = 4 micro batches.
// verl asserts num_micro_batches <= len(seq_len_effective). Before: refused on a packed row of
// 5,120 / 4 = 1,280 tokens shorter than the mean ("1 samples x 5,120 tokens").
TEST(RlStepTest, InterleavedRoundingAboveTheSamplesIsRefused) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384", "batch.prompts=5",
                                               "batch.samples_per_prompt=2", "batch.mini_batches=1",
                                               "actor.parallel.pp=4", "actor.parallel.vpp=2",
                                               "actor.parallel.dp=10", "actor.parallel.ep=2"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(
      e.error().Format(),
      "data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml: actor: actor update: the micro batch count "
      "rounds up to 4 per DP rank (a multiple of PP 4 under interleaved pipelining) but "
      "each rank has 1 sample: verl refuses it (num_micro_batches must not exceed the "
      "samples)\n  hint: give each DP rank at least 4 samples (more prompts, fewer mini "
      "batches or a smaller DP), or turn interleaving off (actor.parallel.vpp=1)");
}

// The dynamic batch's times: the update runs once per mini batch per epoch, the log-prob forward
// once over every sample. With batch.epochs=2 the same packing (the update's 8 samples a rank
// in 3 micro batches, the log-prob's 32 in 10) is passed twice: the update's time doubles
// exactly, the log-prob and reference forwards (one pass each, the same job) do not move.
TEST(RlStepTest, DynamicBatchTimesTheUpdatePerPassAndTheLogProbOnce) {
  auto one = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384"});
  auto two = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384", "batch.epochs=2"});
  ASSERT_TRUE(one.ok() && two.ok());
  auto a = EvaluateRl(*Workspace::Load(), *one);
  auto b = EvaluateRl(*Workspace::Load(), *two);
  ASSERT_TRUE(a.ok() && b.ok());
  const RlTimes& t1 = a->colocated.times;
  const RlTimes& t2 = b->colocated.times;
  EXPECT_GT(t1.update.s(), 0);
  EXPECT_NEAR(t2.update.s(), 2 * t1.update.s(), 1e-9);
  EXPECT_NEAR(t2.old_log_prob.s(), t1.old_log_prob.s(), 1e-12);
  EXPECT_NEAR(t1.reference.s(), t1.old_log_prob.s(), 1e-12);
  EXPECT_NEAR(t2.step.s() - t1.step.s(), t1.update.s(), 1e-9);
}

// A split asked one step off-policy (verl's one-step-off recipe) is the configured placement,
// and its step is the one-step-off row of that split: max(generation, training) + sync.
TEST(RlStepTest, OneStepOffSplitIsTheConfiguredPlacement) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"placement.mode=split", "placement.rollout_gpus=8",
                                               "placement.one_step_off=true"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_TRUE(e->configured.valid) << e->configured.reason;
  EXPECT_TRUE(e->configured.one_step_off);
  EXPECT_EQ(e->configured.rollout_gpus, 8);
  const RlTimes& t = e->configured.times;
  // The training side's parts, its offload copies included (verl's workers move the states
  // around each pass on a split too).
  const Seconds training = t.old_log_prob + t.reference + t.update + t.offload;
  EXPECT_NEAR(t.step.s(), std::max(t.generation, training).s() + t.weight_sync.s(), 1e-9);
}

// Colocated PPO without offload, reference kept (verl's megatron workers at
// volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7: with param_offload, grad_offload,
// optimizer_offload and ref.megatron.param_offload all False nothing leaves the GPU between
// phases; megatron_workers.py compute_log_prob, compute_ref_log_prob, compute_values,
// update_actor, update_critic). Each phase is its own working set plus what the other models
// keep on the GPU then (S = one model's weights + gradient buffer + master weights + moments,
// W = the reference's weights, the actor's):
//   log-prob forward = actor no_grad forward at the logits (step 1: no moments yet)
//                      + its moments + critic S + W
//   actor update     = actor ledger peak (steady: moments in)       + critic S + W
//   critic values    = critic no_grad forward (a value head) + its moments + actor S + W
//   critic update    = critic ledger peak                           + actor S  + W
//   beside vLLM      = CUDA context + NCCL + 2 S + W
// Before: the forward phases were the bare forward peak (no moments, no critic, no reference)
// and no phase counted the reference's weights.
TEST(RlStepTest, ColocatedPhasesAddWhatTheOtherModelsKeepResident) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo", "placement.offload_trainer=false",
                                               "placement.offload_reference=false"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  const LedgerStates s = StatesOf(e->ledger);
  ASSERT_GT(s.moments.value(), 0);
  ASSERT_GT(s.gradients.value(), 0);
  const double forward = e->ledger.no_grad.log_probs.gib();
  const double values = e->ledger.no_grad.values.gib();
  const double other = Bytes(s.Resident() + s.weights).gib();
  ASSERT_EQ(e->phases.size(), 5u);
  EXPECT_NEAR(e->phases[1].bytes.gib(), forward + s.moments.gib() + other, 1e-6);
  EXPECT_NEAR(e->phases[2].bytes.gib(), e->ledger.Peak().gib() + other, 1e-6);
  EXPECT_NEAR(e->phases[3].bytes.gib(), values + s.moments.gib() + other, 1e-6);
  EXPECT_NEAR(e->phases[4].bytes.gib(), e->ledger.Peak().gib() + other, 1e-6);
  double overhead = 0;
  for (const LedgerItem& item : e->ledger.items) {
    if (item.name == "CUDA context" || item.name == "NCCL buffers") overhead += item.bytes.gib();
  }
  EXPECT_NEAR(e->colocated.rollout_memory.resident.gib(),
              overhead + 2 * s.Resident().gib() + s.weights.gib(), 1e-6);

  // Offloaded (param, grad and optimizer offload; the reference's too): megatron's
  // compute_log_prob loads the parameters alone (load_megatron_model_to_gpu(load_grad=False)),
  // compute_values loads them with the gradient buffer; the master weights and moments stay on
  // the host. So the actor's forward is its forward peak less its gradients and master weights,
  // the critic's less its master weights.
  auto off = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo"});
  ASSERT_TRUE(off.ok());
  auto o = EvaluateRl(*Workspace::Load(), *off);
  ASSERT_TRUE(o.ok()) << o.error().Format();
  const LedgerStates so = StatesOf(o->ledger);
  const double forward_o = o->ledger.no_grad.log_probs.gib();
  EXPECT_NEAR(o->phases[1].bytes.gib(), forward_o - Bytes(so.gradients + so.master).gib(), 1e-6);
  EXPECT_NEAR(o->phases[2].bytes.gib(), o->ledger.Peak().gib(), 1e-6);
  EXPECT_NEAR(o->phases[3].bytes.gib(), o->ledger.no_grad.values.gib() - so.master.gib(), 1e-6);
  EXPECT_NEAR(o->phases[4].bytes.gib(), o->ledger.Peak().gib(), 1e-6);
}

// The packed passes' memory is the largest micro batch's, their time the balanced ones': the
// reference job at 16,384 tokens packs each rank's 8 samples (5,120 mean) into 3 micro batches
// of 13,654 tokens (the time's rows, the actor job's sequence). The largest is the largest part
// of verl's partition (karmarkar_karp over 24,576 L + L^2, micro_batch_test) of the rank's
// samples: 1,024 prompt tokens + the capped exponential's quantiles at (i + 0.5) / 8 (mean
// 4,096, cap 8,192: rate 1.9453421e-4 per token; 331.76, 1,067.37, 1,926.11, 2,957.65,
// 4,249.53, 5,979.16, 8,192, 8,192), whose parts are 14,368.05, 13,521.87 and 13,197.65 tokens;
// the log-prob pass's 32 samples in 10 parts, the largest 17,064.72. Both computed by an
// independent implementation of verl's karmarkar_karp (Python, from seqlen_balancing.py, not
// strata's code). Rows round up to 2 x CP: 14,370 and 17,066. Before: the spread bound,
// 20,480 and 25,600 (13,653.33 + 2 / 3 x 10,240; 16,384 + 0.9 x 10,240).
TEST(RlStepTest, DynamicBatchPricesTheLargestMicroBatchsMemory) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"batch.max_tokens_per_gpu=16384"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_NEAR(e->actor.spec.sequence.max_tokens, 13654, 1e-9);
  EXPECT_NEAR(e->micro_batches[0].packed.largest_micro_batch_tokens, 14368.0529, 1e-3);
  EXPECT_NEAR(e->micro_batches[1].packed.largest_micro_batch_tokens, 17064.7197, 1e-3);
  auto ledger_at = [&](int64_t row, int64_t rows) {
    JobRequest r;
    r.job = spec->actor_job;
    r.overrides = {fmt::format("batch.global_batch={}", rows),
                   "sequence.mean_tokens=5120",
                   "batch.micro_batch=1",
                   "sequence.packing=true",
                   fmt::format("sequence.max_tokens={}", row),
                   "sequence.std_tokens=0"};
    auto job = ResolveJob(r);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    auto m = EvaluateJob(*Workspace::Load(), *job, {.depth = EvalDepth::kMemory});
    EXPECT_TRUE(m.ok());
    return m->ledger;
  };
  // 3 micro batches x DP 40 = 120 rows a mini batch; 10 x 40 = 400 for the log-prob pass.
  const MemoryLedger update = ledger_at(14370, 120);
  EXPECT_NEAR(e->ledger.Peak().gib(), update.Peak().gib(), 1e-9);
  EXPECT_GT(update.Peak(), ledger_at(13654, 120).Peak());
  // Offloaded (the reference job), the log-prob phase is that ledger's no_grad forward (the
  // logits and the log-prob kernel) less the gradients and master weights left on the host
  // (ColocatedPhasesAddWhatTheOtherModelsKeep...).
  const MemoryLedger log_prob = ledger_at(17066, 400);
  const LedgerStates s = StatesOf(log_prob);
  ASSERT_EQ(e->phases.size(), 3u);
  EXPECT_NEAR(e->phases[1].bytes.gib(),
              Bytes(log_prob.no_grad.log_probs - s.gradients - s.master).gib(), 1e-9);
  EXPECT_GT(log_prob.no_grad.log_probs, ledger_at(16384, 400).no_grad.log_probs);
}

// verl's hybrid engine with every state offloaded (the reference job: megatron param, grad and
// optimizer offload, the reference's param_offload) moves these per GPU each step
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7: verl/workers/megatron_workers.py
// rollout_mode, compute_log_prob, compute_ref_log_prob, update_actor; verl/utils/
// megatron_utils.py load_megatron_model_to_gpu / offload_megatron_model_to_cpu,
// load_megatron_optimizer / offload_megatron_optimizer). W = the actor's weights on a GPU, M its
// master weights, O its moments (the ledger's); the gradient buffer is resized and zeroed, not
// copied:
//   weight sync (rollout_mode)  W up, W down
//   old log-prob                W up, W down
//   reference                   W up, W down     (same model, same layout)
//   update                      W + M + O up, W + M + O down
//   total = 8 W + 2 (M + O), over PCIe Gen5 x16 (data/clusters/h20-5x8.yaml), 63 GB/s a
//   direction (data/interconnects.yaml): time = total / 63e9 s. Added to the colocated step.
// Nothing offloaded (offload_trainer and offload_reference false): no copies.
// Before: the step had no such term.
TEST(RlStepTest, OffloadedStatesCrossPcieEveryStep) {
  const RlEvaluation& e = Reference();
  const LedgerStates s = StatesOf(e.ledger);
  ASSERT_GT(s.weights.value(), 0);
  ASSERT_GT(s.moments.value(), 0);
  const double bytes = 8 * s.weights.value() + 2 * (s.master.value() + s.moments.value());
  const RlTimes& t = e.colocated.times;
  EXPECT_NEAR(e.colocated.offload.bytes.value(), bytes, 1);
  EXPECT_NEAR(t.offload.s(), bytes / 63e9, 1e-9);
  EXPECT_NEAR(
      t.step.s(),
      (t.generation + t.old_log_prob + t.reference + t.update + t.weight_sync + t.offload).value(),
      1e-9);
  auto kept = LoadRlSpec(kReferenceRlJobName,
                         {"placement.offload_trainer=false", "placement.offload_reference=false"});
  ASSERT_TRUE(kept.ok());
  auto k = EvaluateRl(*Workspace::Load(), *kept);
  ASSERT_TRUE(k.ok()) << k.error().Format();
  EXPECT_EQ(k->colocated.times.offload.s(), 0);
}

// verl's FSDP2 workers move a trained model's parameters through pageable host memory:
// offload_fsdp2_model_to_cpu is `model.cpu()` and load_fsdp2_model_to_gpu `model.to(device)`
// (verl-project/verl@0094eb2057e6f3210c2a4fca88704689d02879aa:verl/utils/fsdp_utils.py:196-225),
// no pinned buffer, while its optimizer states go `.to("cpu", non_blocking=True)`, which
// PyTorch allocates pinned. A pageable copy runs at the host's rate: CUDA's bandwidthTest on a
// DGX A100 reads 10.0 GB/s host to device and 10.8 device to host pageable, 25.7 / 25.8 pinned
// (data/rl_constants.yaml, host_copy). By hand on verl's Qwen2.5-Math-7B 128-H20 row (FSDP2
// actor, offload_trainer, no reference, the old log-prob pass): with W, M, O the ledger's
// weights, master weights (the fp32 parameters FSDP2 holds: the same module's tensors) and
// moments on a GPU,
//   actor weights  6 W: 3 W up at 10.0 GB/s, 3 W down at 10.8
//   master weights 2 M: M up at 10.0, M down at 10.8
//   moments        2 O: at PCIe Gen5 x16's 63 GB/s a direction (pinned)
// Before: all of it at 63 GB/s, (6 W + 2 M + 2 O) / 63e9 s. The megatron reference job (a
// pinned cpu_data buffer) keeps 63 GB/s (OffloadedStatesCrossPcieEveryStep).
TEST(RlStepTest, Fsdp2ParametersCrossPcieThroughPageableMemory) {
  auto spec = LoadRlSpec(testing::TestPath("rl/validation/verl-qwen2.5-math-7b-h20x128.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_EQ(e->actor.spec.sharding.mode, ShardingMode::kFsdp2);
  const LedgerStates s = StatesOf(e->ledger);
  ASSERT_GT(s.weights.value(), 0);
  ASSERT_GT(s.moments.value(), 0);
  const double w = s.weights.value(), m = s.master.value(), o = s.moments.value();
  const double expected = 3 * w / 10.0e9 + 3 * w / 10.8e9 + m / 10.0e9 + m / 10.8e9 + 2 * o / 63e9;
  const OffloadTransfers& t = e->colocated.offload;
  EXPECT_NEAR(t.bytes.value(), 6 * w + 2 * m + 2 * o, 1);
  EXPECT_NEAR(t.total.s(), expected, 1e-9);
  EXPECT_NEAR(e->colocated.times.offload.s(), expected, 1e-9);
  EXPECT_GT(t.total.s(), (6 * w + 2 * m + 2 * o) / 63e9 * 4);  // the line rate's time before
  // This job's ledger holds no separate master weights (M = 0): two copies, weights and moments.
  ASSERT_EQ(t.copies.size(), m > 0 ? 3u : 2u);
  EXPECT_NE(t.copies[0].what.find("pageable: 10.0 GB/s up, 10.8 GB/s down"), std::string::npos)
      << t.copies[0].what;
  EXPECT_EQ(t.copies.back().what, "actor moments: up and down around the update");
}

// The states verl's hybrid engine moves are the sharded parameters and optimizer states, not
// the runtime's working sets. verl-qwen2.5-math-7b-h20x32 (Qwen2.5-Math-7B, 7,615,616,512
// parameters, FSDP2 in groups of fsdp_size 2 as its script states (HSDP, 16 replicas), fp32
// parameters as the master, AdamW fp32 moments, no reference) by hand: W = 7,615,616,512 x 4 B /
// 2 = 15,231,233,024 B of sharded parameters, O = 2 x W = 30,462,466,048 B of moments; the copies
// are W up and down around the weight sync, the old log-prob pass and the update (6 W) and the
// moments around the update (2 O): 6 x 15,231,233,024 + 2 x 30,462,466,048 = 152,312,330,240 B.
// (Over one FSDP group of 32, as the row's job read before its script's fsdp_size was taken:
// 9,519,520,640 B.) Before the states were the shards, the gathered FSDP2 units (2.65 GB) and the
// unsharded gradients (4.36 GB) were counted as states: 25.40 GB of copies over 32 GPUs.
TEST(RlStepTest, OffloadedStatesAreTheShardsNotTheWorkingSets) {
  auto spec = LoadRlSpec(testing::TestPath("rl/validation/verl-qwen2.5-math-7b-h20x32.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_NEAR(e->colocated.offload.bytes.value(), 152312330240.0, 1024);
}

// verl's bypass mode (algorithm.rollout_correction.bypass_mode=True; the RL job's
// `old_log_prob: rollout`) takes the rollout's log-probs as the old ones: fit() in
// verl-project/verl@0094eb2057e6f3210c2a4fca88704689d02879aa:verl/trainer/ppo/ray_trainer.py
// runs `_compute_old_log_prob` under the "old_log_prob" timer only in the other branch
// ("else:  # Recompute old_log_probs"), and verl's docs/advance/fully_async.md publishes a
// colocated step with "old_log_prob 0". By hand on the reference job (reference: true, all
// offloaded): the old log-prob part goes to 0 s, the reference's pass stays (its forward is the
// same), the actor's weights cross PCIe 4 times instead of 6 (up and down around the weight
// sync and the update only), so the copies fall by 2 W / 63 GB/s, and the step by the log-prob
// pass plus those 2 W. Generation, update and sync do not move. Before: the key was unknown.
TEST(RlStepTest, BypassModeDropsTheOldLogProbPass) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"old_log_prob=rollout"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_FALSE(spec->old_log_prob_pass);
  auto bypass = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(bypass.ok()) << bypass.error().Format();
  const RlTimes& before = Reference().colocated.times;
  const RlTimes& t = bypass->colocated.times;
  ASSERT_GT(before.old_log_prob.s(), 0);
  EXPECT_EQ(t.old_log_prob.s(), 0);
  EXPECT_NEAR(t.reference.s(), before.reference.s(), 1e-12);
  EXPECT_NEAR(t.generation.s(), before.generation.s(), 1e-12);
  EXPECT_NEAR(t.update.s(), before.update.s(), 1e-12);
  EXPECT_NEAR(t.weight_sync.s(), before.weight_sync.s(), 1e-12);
  const double two_w = 2 * StatesOf(Reference().ledger).weights.value();
  EXPECT_NEAR(t.offload.s(), before.offload.s() - two_w / 63e9, 1e-9);
  EXPECT_NEAR(t.step.s(), before.step.s() - before.old_log_prob.s() - two_w / 63e9, 1e-9);
  // Its split rows drop the pass from the training side as well.
  for (const RlPlacementResult& r : bypass->splits) EXPECT_EQ(r.times.old_log_prob.s(), 0);
  // The forward phase is the reference's alone now (the same working set, so the same bytes);
  // with no reference either, no forward pass runs and the phase is not listed.
  auto none = LoadRlSpec(kReferenceRlJobName, {"old_log_prob=rollout", "reference=false"});
  ASSERT_TRUE(none.ok()) << none.error().Format();
  auto n = EvaluateRl(*Workspace::Load(), *none);
  ASSERT_TRUE(n.ok()) << n.error().Format();
  for (const RlPhaseMemory& p : n->phases) EXPECT_EQ(p.phase.find("forward"), std::string::npos);
  EXPECT_EQ(n->colocated.times.old_log_prob.s(), 0);
  EXPECT_EQ(n->colocated.times.reference.s(), 0);
  // Any other source is refused with the two it can be.
  auto wrong = LoadRlSpec(kReferenceRlJobName, {"old_log_prob=rollouts"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().Format().find("did you mean 'rollout'"), std::string::npos)
      << wrong.error().Format();
}

// audit55 Q2: verl's FSDP workers with use_remove_padding off feed the trainer the padded
// (batch, prompt max + response max) tensor (volcengine/verl b178a3cd agent_loop.py pads every
// prompt to prompt_length and response to response_length; dp_actor.py's "not using rmpad"
// branch runs it whole). So the update, the old log-prob and the reference pass cost what the
// same job costs with its mean lengths at their maxima, and generation (vLLM does not pad)
// stays. Before, the key was "read but not used" and the passes were priced at the means.
TEST(RlStepTest, PaddedRowsCostTheMaximumLengthInTheTrainersPasses) {
  auto padded = LoadRlSpec(kReferenceRlJobName, {"remove_padding=false"});
  ASSERT_TRUE(padded.ok()) << padded.error().Format();
  EXPECT_DOUBLE_EQ(padded->TrainerRowTokens(),
                   padded->lengths.prompt_max + padded->lengths.response_max);
  const std::string prompt_max = std::to_string(std::llround(padded->lengths.prompt_max));
  const std::string response_max = std::to_string(std::llround(padded->lengths.response_max));
  auto at_max = LoadRlSpec(kReferenceRlJobName, {"lengths.prompt_mean=" + prompt_max,
                                                 "lengths.response_mean=" + response_max});
  ASSERT_TRUE(at_max.ok()) << at_max.error().Format();
  auto p = EvaluateRl(*Workspace::Load(), *padded);
  auto m = EvaluateRl(*Workspace::Load(), *at_max);
  ASSERT_TRUE(p.ok()) << p.error().Format();
  ASSERT_TRUE(m.ok()) << m.error().Format();
  const RlTimes& before = Reference().colocated.times;
  EXPECT_NEAR(p->colocated.times.update.s(), m->colocated.times.update.s(), 1e-9);
  EXPECT_NEAR(p->colocated.times.old_log_prob.s(), m->colocated.times.old_log_prob.s(), 1e-9);
  EXPECT_NEAR(p->colocated.times.reference.s(), m->colocated.times.reference.s(), 1e-9);
  EXPECT_GT(p->colocated.times.update.s(), before.update.s());
  EXPECT_NEAR(p->colocated.times.generation.s(), before.generation.s(), 1e-9);
}

// A split's training GPUs follow the job's offload settings as the colocated GPUs do: verl's
// megatron actor reads param_offload, grad_offload and optimizer_offload whatever the placement
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7: verl/workers/megatron_workers.py
// init, self._is_offload_param etc.). The reference job offloads everything, so the split's
// 8 training GPUs (32 + 8) keep nothing beside a pass: the reference pass is its forward working
// set alone, the same as the old log-prob pass, and the update its ledger's peak; the copies of
// the colocated step (8 W + 2 (M + O) a GPU, OffloadedStatesCrossPcieEveryStep) are part of the
// training side. The same job with nothing offloaded copies nothing and keeps the reference's
// weights W beside every pass: its peak is at least W above the offloaded one's.
// Before: a split priced the trainer as if nothing were offloaded whatever the job said.
TEST(RlStepTest, SplitTrainersFollowTheJobsOffload) {
  const RlEvaluation& e = Reference();
  // 32 rollout + 8 training GPUs, synchronous: the 7th count (8, 10, 16, 20, 24, 30, 32).
  const RlPlacementResult& split = e.splits[12];
  ASSERT_EQ(split.rollout_gpus, 32);
  EXPECT_GT(split.offload.bytes.value(), 0);
  EXPECT_EQ(split.offload.copies.size(), 3u);  // actor weights, actor optimizer, reference
  EXPECT_EQ(split.reason.find("log-prob and reference forward"), std::string::npos) << split.reason;
  auto kept = LoadRlSpec(kReferenceRlJobName,
                         {"placement.offload_trainer=false", "placement.offload_reference=false"});
  ASSERT_TRUE(kept.ok());
  auto k = EvaluateRl(*Workspace::Load(), *kept);
  ASSERT_TRUE(k.ok()) << k.error().Format();
  EXPECT_EQ(k->splits[12].offload.bytes.value(), 0);
  // Kept, the update holds the reference's weights beside the actor's ledger peak.
  const LedgerStates ks = StatesOf(k->ledger);
  EXPECT_GT(k->splits[12].train_peak.gib(), split.train_peak.gib() + ks.weights.gib() - 1e-6)
      << k->splits[12].reason;
  for (const RlPlacementResult& r : e.splits) {
    if (!r.valid) continue;
    const Seconds training = r.times.old_log_prob + r.times.reference + r.times.update;
    EXPECT_GT(r.times.offload.s(), 0);
    if (!r.one_step_off) {
      EXPECT_NEAR(r.times.step.s(),
                  (r.times.generation + training + r.times.offload + r.times.weight_sync).value(),
                  1e-9);
    }
  }
}

// The smallest change that fits must fit: the hint's --set keys applied to the same job make
// the rollout fit. The reference job at rollout TP8 (no larger TP to propose) with nothing
// offloaded and responses of up to 7,000,000 tokens: one max-length sequence (7,002,048 tokens x
// 10,240 B of KV per token per GPU = 66.78 GiB, + 8.17 GiB of weights + 4.84 GiB non-torch and
// activations) needs 0.89 of the GPU. Offloading the trainer alone leaves the reference's weights
// (27.69 GB / 2 directions = 13.85 GB a GPU, OffloadedStatesCrossPcieEveryStep) beside vLLM, so
// at most about 0.96 - 0.14 = 0.82 is free: not enough; and 0.60 as written never fits. The hint
// must offload the reference too and raise gpu_memory_utilization, naming every key.
// Before: "--set placement.offload_trainer=true", checked with the trainer's CUDA context alone
// beside vLLM (the reference's weights and the job's 0.60 left out): applied, it did not fit.
TEST(RlStepTest, FitHintFitsWhenApplied) {
  const std::vector<std::string> base = {"rollout.tp=8", "placement.offload_trainer=false",
                                         "placement.offload_reference=false",
                                         "lengths.response_max=7000000"};
  auto spec = LoadRlSpec(kReferenceRlJobName, base);
  ASSERT_TRUE(spec.ok());
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  ASSERT_FALSE(e->configured.rollout_memory.fits);
  ASSERT_FALSE(e->fix.empty());
  std::vector<std::string> applied = base;
  std::string rest = e->fix;
  while (rest.starts_with("--set ")) {
    rest = rest.substr(6);
    const size_t end = rest.find(' ');
    applied.push_back(rest.substr(0, end));
    rest = end == std::string::npos ? "" : rest.substr(end + 1);
  }
  EXPECT_TRUE(rest.empty()) << e->fix;
  auto fixed = LoadRlSpec(kReferenceRlJobName, applied);
  ASSERT_TRUE(fixed.ok()) << fixed.error().Format();
  auto f = EvaluateRl(*Workspace::Load(), *fixed);
  ASSERT_TRUE(f.ok()) << f.error().Format();
  EXPECT_TRUE(f->configured.rollout_memory.fits) << e->fix << ": " << f->configured.reason;
}

// The hint names the fitting gpu_memory_utilization nearest the one given. On the reference
// job (vLLM budget of 101,982,060,544 B, 94.98 GiB):
//   smallest = (35,107,181,936 B weights + 5,196,910,428 B non-torch and activations + one
//     max-length sequence, 2,048 + 8,192 = 10,240 tokens in 19 blocks of 544 = 10,336 x
//     10,240 B + 16,465,920 B of state + 245,760 B of page padding = 122,552,320 B)
//     / 101,982,060,544 B = 0.3964, so 0.40 in hundredths;
//   largest = (94.98 - 3.25 GiB resident - 0.36 GiB CUDA graphs outside the budget) / 94.98
//     = 0.9620, so 0.96.
// 0.99 asks too much: the nearest that fits is 0.96 (the hint said 0.40 before, the minimum,
// whose KV cache holds a few sequences). 0.30 leaves no sequence room: 0.40.
TEST(RlStepTest, FitHintNamesTheNearestUtilizationThatFits) {
  struct Case {
    const char* given;
    const char* fix;
    const char* note;
  };
  const Case cases[] = {
      {"0.99", "--set rollout.gpu_memory_utilization=0.96",
       "the nearest to 0.99 that fits; 0.40 to 0.96 fits"},
      {"0.30", "--set rollout.gpu_memory_utilization=0.40",
       "the nearest to 0.30 that fits; 0.40 to 0.96 fits"},
  };
  for (const Case& c : cases) {
    auto spec =
        LoadRlSpec(kReferenceRlJobName, {std::string("rollout.gpu_memory_utilization=") + c.given});
    ASSERT_TRUE(spec.ok()) << spec.error().Format();
    auto e = EvaluateRl(*Workspace::Load(), *spec);
    ASSERT_TRUE(e.ok()) << e.error().Format();
    EXPECT_NEAR(e->configured.rollout_memory.min_utilization, 0.3964, 1e-4);
    EXPECT_NEAR(e->configured.rollout_memory.max_utilization, 0.9620, 1e-4);
    EXPECT_EQ(e->fix, c.fix) << c.given;
    EXPECT_EQ(e->fix_note, c.note) << c.given;
  }
}

}  // namespace
}  // namespace strata::rl_step_test
