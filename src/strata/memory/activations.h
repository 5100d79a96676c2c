// Activation memory of one pipeline stage for one micro batch at the longest sequence: what
// each layer kind saves for backward, what the recompute mode keeps instead, the micro batches
// 1F1B holds in flight, the transient buffers of one layer (MoE dispatch copies, Gated DeltaNet
// chunk states) and the logits with the loss's buffers on the last stage.
#ifndef STRATA_MEMORY_ACTIVATIONS_H_
#define STRATA_MEMORY_ACTIVATIONS_H_

#include <string>
#include <vector>

#include "strata/job/job_validation.h"
#include "strata/memory/ledger.h"
#include "strata/memory/memory_constants.h"

namespace strata {

/// Bytes per token of one decoder layer (after TP/SP sharding).
struct LayerActivationBytes {
  double saved = 0;               // kept for backward when the layer is not recomputed
  double forward_transient = 0;   // alive only while the layer runs forward
  double backward_transient = 0;  // alive only while the layer runs backward (besides gradients)
  /// What megatron-core's selective recompute (--recompute-modules) drops from `saved` and
  /// re-creates in the layer's backward: the recomputed modules' internal tensors.
  double regenerated = 0;
  /// Of `saved`: what HF transformers' eager modules keep beyond the fused layer's count
  /// (data/memory_overheads.yaml, `hf_eager_layer`): RMSNorm's fp32 input, the normalized value
  /// its trainable weight needs, and act_fn(gate) beside gate, up and their product.
  double hf_eager = 0;
  /// Of `saved`: what torchtitan's eager modules keep beyond the fused layer's count when
  /// torch.compile is off (data/memory_overheads.yaml, `torchtitan_eager_layer`): silu(w1 x)
  /// beside w1 x, w3 x and their product, and K and V repeated to every query head for SDPA.
  double titan_eager = 0;
  /// Of `saved`: the GEMM inputs Transformer Engine keeps quantized under an FP8 recipe
  /// (data/memory_overheads.yaml, `te_fp8_activations`), at 1 B and the recipe's scales each.
  double te_fp8 = 0;
};

/// Whether the job's layers run as HF transformers' eager modules: its engine is one of
/// `hf_eager_layer.engines` (EngineChain) and framework.liger_kernel does not replace them.
bool RunsHfEagerLayers(const Job& job, const MemoryConstants& constants);

/// Whether the job's layers run as torchtitan's eager modules: its engine is one of
/// `torchtitan_eager_layer.engines` and framework.compile is off.
bool RunsTitanEagerLayers(const Job& job, const MemoryConstants& constants);

LayerActivationBytes LayerActivationsPerToken(const Job& job, const MemoryConstants& constants,
                                              const LayerSpec& layer);

/// Bytes per token one block keeps under torchtitan's op-level SAC (model/op_sac.h): its input,
/// the saved matmul outputs (a row-parallel one h wide on every token: TP partial sums), the
/// reduce-scatter outputs under TP with sequence parallelism, SDPA's output and fp32 LSE.
double OpSacSavedPerToken(const Job& job, const LayerSpec& layer);

struct ActivationMemory {
  std::vector<LedgerItem> items;
  /// Activations megatron-core's --cpu-offloading keeps in pinned host memory instead.
  std::vector<LedgerItem> host_items;
  double in_flight = 1;    // micro batches whose saved activations the stage holds at once
  Bytes stored;            // saved or checkpointed activations of all micro batches in flight
  Bytes forward_working;   // the largest forward-only buffer on top of `stored`
  Bytes backward_working;  // the largest backward-only buffer on top of `stored`
  Bytes forward_dynamic() const { return stored + forward_working; }
  Bytes backward_dynamic() const { return stored + backward_working; }
  /// A forward under torch.no_grad (verl's log-prob and values passes, megatron-core's
  /// forward_only schedule): no layer keeps anything for a backward and no micro batch waits in
  /// the pipeline for one, so the live activations are those of the layer running or, on the
  /// last stage, of the head.
  /// `no_grad_layer`: the largest layer's tensors of one micro batch: everything it would save
  /// for backward with no recompute (an upper bound: without autograd each is freed once its
  /// consumer has run) plus its forward transients (MoE dispatch copies, chunk states).
  /// `no_grad_logits`: the logits and the log-prob kernel's forward buffers (the loss's forward
  /// bytes per logit: the same computation, ChooseLoss), 0 off the last stage.
  /// `entropy_copy`: verl's megatron actor without fused kernels clones the logits before its
  /// entropy (megatron_actor.py, logits_processor: `logits_bak = logits.clone()`): 2 B per logit
  /// under megatron-core's loss kernel, 0 otherwise.
  Bytes no_grad_layer;
  Bytes no_grad_logits;
  Bytes entropy_copy;
};

/// With Detail::kNumbersOnly the items (and their text) are left empty; every number
/// (in_flight, stored, forward_working, backward_working) is the same.
ActivationMemory ComputeActivations(const Job& job, const MemoryConstants& constants, int64_t stage,
                                    Detail detail = Detail::kExplained);

/// The loss kernel the last stage runs (data/memory_overheads.yaml, `cross_entropy`):
/// loss.cross_entropy fused; native as the job's engine computes it (EngineChain):
/// megatron-core's vocab-parallel kernel, or PyTorch's F.cross_entropy on an fp32 upcast of
/// the logits (torchtitan, the HF Trainer's models), eager or compiled with the model.
enum class LossKernel { kFused, kMegatron, kTorchEager, kTorchCompiled, kTorchLossParallel };
struct LossChoice {
  LossKernel kernel = LossKernel::kFused;
  LossBytesPerLogit bytes;  // bf16 logits included
  std::string engine;       // "torchtitan 0.0.2"
};
LossChoice ChooseLoss(const Job& job, const MemoryConstants& constants);

/// Tokens of one micro batch on one rank: max_tokens x micro_batch / CP.
double TokensPerRank(const Job& job);

}  // namespace strata

#endif  // STRATA_MEMORY_ACTIVATIONS_H_
