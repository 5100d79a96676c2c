// The loss kernel the engine runs (data/memory_overheads.yaml, cross_entropy), the engine chain
// read from data/frameworks.yaml's runs_as, and the card's capacity as the driver exposes it
// (device_capacity). Expected values are derived by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "strata/memory/error_band.h"
#include "strata/memory/sharding.h"
#include "strata/memory/static_memory.h"

namespace strata::loss_and_capacity_test {
namespace {

// Llama-3.1-8B, TP1 PP1, one micro batch of 8,192 tokens, full recompute: the logits are
// 8,192 x 128,256 (a multiple of 128: no padding) = 1,050,673,152 elements.
constexpr double kElements = 8192.0 * 128256.0;

std::vector<std::string> Llama8B(std::vector<std::string> more) {
  std::vector<std::string> sets = {"model=llama-3.1-8b",         "parallel.ep=1",
                                   "sequence.max_tokens=8192",   "sequence.mean_tokens=8192",
                                   "recompute.granularity=full", "loss.cross_entropy=native",
                                   "batch.micro_batch=1"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

TEST(LossKernel, TorchtitanEagerHoldsTwelveBytesPerLogitInBackward) {
  const MemoryConstants c = testing::Constants();
  const Job job = testing::ReferenceJob(
      Llama8B({"framework.name=torchtitan", "framework.version=0.0.2", "sharding.mode=fsdp2"}));
  EXPECT_EQ(ChooseLoss(job, c).kernel, LossKernel::kTorchEager);
  const ActivationMemory act = ComputeActivations(job, c, 0);
  // F.cross_entropy(pred.float()): backward = the fp32 log-softmax 4 + nll_loss's fp32 gradient
  // 4 + log_softmax's fp32 input gradient 4 = 12 B per logit (the bf16 logits dropped first):
  // 12 x 1,050,673,152 = 12,608,077,824 B. Forward: bf16 2 + fp32 copy 4 + log-softmax 4 = 10 B.
  // Before: 6 B (megatron-core's bf16 logits + fp32 softmax) for every native loss.
  EXPECT_DOUBLE_EQ(act.backward_working.count(), 12 * kElements);
  EXPECT_DOUBLE_EQ(act.forward_working.count(), 10 * kElements);
}

TEST(LossKernel, TorchtitanCompilesItsLossFromRelease010) {
  const MemoryConstants c = testing::Constants();
  // 0.2.2 with compile: the loss is compiled (torchtitan bbb1b61, first in v0.1.0): logits 2 B
  // + the bf16 gradient 2 B = 4 B per logit in backward = 4,202,692,608 B; the forward keeps the
  // logits alone (2 B), more than a dense layer's forward transients (none).
  const Job compiled =
      testing::ReferenceJob(Llama8B({"framework.name=torchtitan", "framework.version=0.2.2",
                                     "framework.compile=true", "sharding.mode=fsdp2"}));
  EXPECT_EQ(ChooseLoss(compiled, c).kernel, LossKernel::kTorchCompiled);
  const ActivationMemory act = ComputeActivations(compiled, c, 0);
  EXPECT_DOUBLE_EQ(act.backward_working.count(), 4 * kElements);
  EXPECT_DOUBLE_EQ(act.forward_working.count(), 2 * kElements);
  // 0.0.2 (9dec370, 9a2f578) compiles the blocks, not the loss: eager.
  const Job old =
      testing::ReferenceJob(Llama8B({"framework.name=torchtitan", "framework.version=0.0.2",
                                     "framework.compile=true", "sharding.mode=fsdp2"}));
  EXPECT_EQ(ChooseLoss(old, c).kernel, LossKernel::kTorchEager);
}

TEST(LossKernel, TorchtitanShardsItsLossOverTp) {
  const MemoryConstants c = testing::Constants();
  // TP 2: torchtitan's loss_parallel on vocab-sharded logits, 8,192 x 128,256 / 2 per GPU.
  // PyTorch's DTensor handlers: backward (zeros + exp(x)) * grad over the saved fp32
  // log-softmax = x 4 + zeros 4 + exp 4 + sum 4 = 16 B per local logit; forward: logits 2 +
  // fp32 copy 4 + shifted 4 + exp 4 = 14 B. Before: 6 B (then 12 B) whatever the TP.
  const Job job =
      testing::ReferenceJob(Llama8B({"framework.name=torchtitan", "framework.version=0.0.2",
                                     "sharding.mode=fsdp2", "parallel.tp=2"}));
  EXPECT_EQ(ChooseLoss(job, c).kernel, LossKernel::kTorchLossParallel);
  const ActivationMemory act = ComputeActivations(job, c, 0);
  EXPECT_DOUBLE_EQ(act.backward_working.count(), 16 * kElements / 2);
  EXPECT_DOUBLE_EQ(act.forward_working.count(), 14 * kElements / 2);
}

TEST(LossKernel, FollowsTheEngineNotTheName) {
  const MemoryConstants c = testing::Constants();
  // ms-swift under ZeRO-3 trains through DeepSpeed and the HF Trainer (runs_as): HF's
  // ForCausalLMLoss upcasts the logits, 12 B per logit in backward.
  const Job swift = testing::ReferenceJob(Llama8B({"sharding.mode=zero3"}));
  EXPECT_EQ(ResolveEngineChain(c.engines, swift.spec.framework, swift.spec.sharding.mode).names,
            (std::vector<std::string>{"ms-swift", "deepspeed", "hf-trainer"}));
  EXPECT_EQ(ChooseLoss(swift, c).kernel, LossKernel::kTorchEager);
  EXPECT_DOUBLE_EQ(ComputeActivations(swift, c, 0).backward_working.count(), 12 * kElements);
  // Under zero1 the same wrapper runs megatron-core: its vocab-parallel loss, 6 B per logit
  // (bf16 logits 2 + fp32 softmax 4), as before.
  const Job megatron = testing::ReferenceJob(Llama8B({}));
  EXPECT_EQ(
      ResolveEngineChain(c.engines, megatron.spec.framework, megatron.spec.sharding.mode).names,
      (std::vector<std::string>{"ms-swift", "megatron-core"}));
  EXPECT_EQ(ChooseLoss(megatron, c).kernel, LossKernel::kMegatron);
  EXPECT_DOUBLE_EQ(ComputeActivations(megatron, c, 0).backward_working.count(), 6 * kElements);
  // fused: the bf16 logits only, whatever the engine.
  const Job fused =
      testing::ReferenceJob(Llama8B({"sharding.mode=zero3", "loss.cross_entropy=fused"}));
  EXPECT_EQ(ChooseLoss(fused, c).kernel, LossKernel::kFused);
}

// verl's FSDP actor trains HF code (runs_as hf-trainer) but computes the token log-probs itself
// with flash-attn's cross_entropy_loss, inplace_backward=True (verl/utils/torch_functional.py):
// the bf16 logits only, 2 B per logit, not HF's 12 (the eager upcast the engine chain would give).
TEST(LossKernel, VerlsActorComputesItsOwnFusedLogProbs) {
  const MemoryConstants c = testing::Constants();
  // With Liger's layers (verl's use_liger) the loss is the largest backward buffer; HF's eager
  // layer would keep more than the 2 B logits in its recompute (hf_eager_layer_test.cc).
  const Job verl = testing::ReferenceJob(
      Llama8B({"framework.name=verl", "sharding.mode=fsdp2", "framework.liger_kernel=true"}));
  EXPECT_EQ(ResolveEngineChain(c.engines, verl.spec.framework, verl.spec.sharding.mode).names,
            (std::vector<std::string>{"verl", "hf-trainer"}));
  EXPECT_EQ(ChooseLoss(verl, c).kernel, LossKernel::kFused);
  EXPECT_DOUBLE_EQ(ComputeActivations(verl, c, 0).backward_working.count(), 2 * kElements);
  // Its megatron workers (zero1: megatron-core's code) run megatron-core's vocab-parallel loss.
  const Job verl_megatron = testing::ReferenceJob(Llama8B({"framework.name=verl"}));
  EXPECT_EQ(ChooseLoss(verl_megatron, c).kernel, LossKernel::kMegatron);
}

TEST(LossKernel, ExplainSaysWhichKernelAndWhy) {
  const MemoryConstants c = testing::Constants();
  const Job job = testing::ReferenceJob(
      Llama8B({"framework.name=torchtitan", "framework.version=0.0.2", "sharding.mode=fsdp2"}));
  const MemoryLedger l = ComputeLedger(job, c);
  // The item holds what the loss adds to the bf16 logits: (12 - 2) x 1,050,673,152 B.
  const std::string name = "activations: cross-entropy on fp32 logits (PyTorch, eager)";
  EXPECT_DOUBLE_EQ(testing::ItemBytes(l, name).count(), 10 * kElements);
  EXPECT_NE(testing::ItemFormula(l, name).find("12 B at the backward's peak"), std::string::npos)
      << testing::ItemFormula(l, name);
}

TEST(MemoryFamily, ComesFromTheCatalogsRunsAs) {
  const MemoryConstants c = testing::Constants();
  const Job job = testing::ReferenceJob();  // ms-swift, zero1
  EXPECT_EQ(MemoryFamily(job.spec, c.engines), "megatron");
  // The same job with a catalog in which ms-swift's zero1 path were the HF Trainer: the family
  // follows the data, not a list of names in the code.
  FrameworkEngines edited = c.engines;
  edited.runs_as["ms-swift"]["zero1"] = "hf-trainer";
  EXPECT_EQ(MemoryFamily(job.spec, edited), "hf_trainer");
  // ms-swift without sharding trains through DeepSpeed's wrapper of the HF Trainer with no ZeRO
  // stage: the HF Trainer's band (it was "default" when the family was a list of names).
  const Job plain = testing::ReferenceJob({"sharding.mode=none", "optimizer.distributed=false"});
  EXPECT_EQ(MemoryFamily(plain.spec, c.engines), "hf_trainer");
}

TEST(CardCapacity, WhatTheCountersCanReach) {
  const MemoryConstants c = testing::Constants();
  std::string formula;
  // The reference job's H20: nvidia-smi memory.total 97,871 MiB = 102,625,181,696 B, less the
  // driver's 643,121,152 B (H200: 143,771 MiB - torch total_memory 150,109,880,320 B)
  // = 101,982,060,544 B. Before: the datasheet's 96 GB.
  const Job h20 = testing::ReferenceJob();
  EXPECT_DOUBLE_EQ(UsableCapacity(h20, c, &formula).count(), 101982060544.0);
  EXPECT_NE(formula.find("97871 MiB"), std::string::npos) << formula;
  EXPECT_DOUBLE_EQ(ComputeLedger(h20, c).capacity.count(), 101982060544.0);
  // The A100 80GB: nvidia-smi 81,920 MiB = 85,899,345,920 B, less 643,121,152 B =
  // 85,256,224,768 B. Before it had no entry and got the datasheet's 80 GB.
  const Job a100 = testing::ReferenceJob({"cluster.gpu=A100 80GB"});
  EXPECT_DOUBLE_EQ(UsableCapacity(a100, c, &formula).count(), 85256224768.0);
  // A card without a driver figure in the table (the L40S): its datasheet, 48 GB.
  const Job other = testing::ReferenceJob({"cluster.gpu=L40S"});
  EXPECT_DOUBLE_EQ(UsableCapacity(other, c, &formula).count(), 48e9);
  EXPECT_NE(formula.find("datasheet"), std::string::npos) << formula;
}

TEST(Fsdp2UnderPipeline, GradientsAccumulateUnshardedUntilTheLastMicroBatch) {
  const MemoryConstants c = testing::Constants();
  // Llama-3.1-8B, FSDP2 (bf16 params, fp32 reduce) with PP 2: PyTorch's schedules turn the
  // gradient sync off for every backward but the last, so each unit keeps its gradient
  // unsharded, upcast to fp32. Stage 0 (the embedding unit, 525,336,576 params, the largest,
  // and its blocks): 4 B x every trainable parameter of the stage + the largest unit's fresh
  // bf16 gradient 2 B x 525,336,576. Before: only one unit's reduce-scatter buffer was counted.
  const Job job = testing::ReferenceJob(
      Llama8B({"framework.name=torchtitan", "framework.version=0.0.2", "sharding.mode=fsdp2",
               "sharding.fsdp_units=separate", "parallel.pp=2", "precision.grads=fp32"}));
  const MemoryLedger stage0 = ComputeStageLedger(job, c, 0);
  const ModeMemory mode = ComputeModeMemory(job, CountParams(job.model), 0);
  EXPECT_DOUBLE_EQ(mode.accumulated.bytes.count(),
                   4.0 * static_cast<double>(stage0.trainable_params_per_gpu) + 2.0 * 525336576.0);
  EXPECT_DOUBLE_EQ(mode.reduce_scatter.bytes.count(), 0.0);
  // Without a pipeline nothing accumulates.
  const Job flat = testing::ReferenceJob(
      Llama8B({"framework.name=torchtitan", "framework.version=0.0.2", "sharding.mode=fsdp2"}));
  EXPECT_DOUBLE_EQ(ComputeModeMemory(flat, CountParams(flat.model), 0).accumulated.bytes.count(),
                   0.0);
}

}  // namespace
}  // namespace strata::loss_and_capacity_test
