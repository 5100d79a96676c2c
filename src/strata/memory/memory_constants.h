// The constants of the memory ledger that shapes cannot give (data/memory_overheads.yaml):
// CUDA context, NCCL buffers, allocator fragmentation and a few kernel properties, each with
// the source the file gives for it.
#ifndef STRATA_MEMORY_MEMORY_CONSTANTS_H_
#define STRATA_MEMORY_MEMORY_CONSTANTS_H_

#include <map>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/job/engine_chain.h"

namespace strata {

/// PyTorch's caching allocator's size rules (c10/cuda/CUDACachingAllocator.cpp), read from
/// data/memory_overheads.yaml, `caching_allocator`.
struct AllocatorRules {
  Bytes min_block;        // kMinBlockSize: every request rounds up to a multiple of it
  Bytes small_size;       // kSmallSize: the largest request of the small pool
  Bytes small_segment;    // kSmallBuffer: the small pool's segment
  Bytes large_segment;    // kLargeBuffer: the segment of a request below min_large_alloc
  Bytes min_large_alloc;  // kMinLargeAlloc
  Bytes round_large;      // kRoundLarge: larger requests' segments round up to it
};

/// The ledger's error on the measured rows of one framework family (docs/memory-validation.md),
/// as (predicted - measured) / measured of the device-used prediction: the lowest and the
/// highest, and the rows they came from. A measured peak is then predicted / (1 + error).
struct MemoryErrorBand {
  std::string family;  // "megatron", "fsdp2", "deepspeed", "hf_trainer", "default"
  double lowest = 0;
  double highest = 0;
  std::vector<std::string> rows;  // "SEED-01", "MS-01", ...; empty: no rows of its own yet
};

/// Bytes per logit element (tokens x vocab / TP) the loss holds at the peak of its forward and
/// of its backward, over the activations stored (data/memory_overheads.yaml, `cross_entropy`).
struct LossBytesPerLogit {
  double forward = 0;
  double backward = 0;
};

/// The loss kernels a job's engine runs (loss.cross_entropy native; fused writes the gradient
/// over the bf16 logits and holds nothing else).
struct CrossEntropyConstants {
  LossBytesPerLogit megatron;              // megatron-core vocab_parallel_cross_entropy
  LossBytesPerLogit torch_eager;           // F.cross_entropy(logits.float()), eager
  LossBytesPerLogit torch_compiled;        // the same under torch.compile (Inductor)
  LossBytesPerLogit torch_loss_parallel;   // eager, on vocab-sharded DTensor logits (TP > 1)
  std::vector<std::string> torch_engines;  // engines whose loss is F.cross_entropy
  std::vector<std::string> loss_parallel_engines;  // those that shard it over TP
  // Wrappers whose own code computes the token log-probs with a fused kernel (verl's actor):
  // the loss of their engine's code never runs.
  std::vector<std::string> fused_logprob_frameworks;
  std::map<std::string, std::string> compiled_from;  // engine -> first release compiling it
};

/// What the counters can reach on a card: the driver's memory.total (nvidia-smi) less what the
/// driver keeps for itself, by catalog GPU (data/memory_overheads.yaml, `device_capacity`).
struct DriverMemory {
  Bytes datasheet;     // the catalog's memory the entry applies to ("80GB")
  Bytes memory_total;  // nvidia-smi memory.total
};
struct DeviceCapacityConstants {
  Bytes driver_reserved;                      // memory.total - cudaMemGetInfo's total
  std::map<std::string, DriverMemory> cards;  // catalog GPU name -> its driver's figures
};

/// What Transformer Engine's FP8 recipes keep of a saved GEMM input (`te_fp8_activations`):
/// 1 byte per element plus the recipe's scales, in the engines that run TE's layers.
struct TeFp8ActivationConstants {
  std::vector<std::string> engines;  // engines whose layers are TE modules (megatron-core)
  double fp8_bytes_per_element = 0;
  /// Fp8RecipeName of each TE recipe -> scale bytes stored per element of a saved input.
  std::map<std::string, double> scale_bytes_per_element;
  /// The first megatron-core release whose linear_proj (and shared experts' linear_fc1) keep
  /// the original bf16 input under every TE recipe but delayed, instead of an FP8 copy.
  std::string save_original_input_from;
};

struct MemoryConstants {
  Bytes cuda_context;
  Bytes nccl_per_communicator;
  double fragmentation_fixed_shapes = 0;     // fraction of the activation peak
  double fragmentation_variable_shapes = 0;  // the same, when shapes vary per micro batch
  double backward_gradient_fraction = 0;     // live gradients / saved activations in backward
  int64_t gdn_chunk_tokens = 0;
  int64_t gdn_state_bytes_per_element = 0;
  int64_t moe_dispatch_transient_copies = 0;
  /// Engines whose decoder layers are HF transformers' eager modules (`hf_eager_layer`): they
  /// save RMSNorm's fp32 input and a fourth MLP intermediate (LayerActivationsPerToken).
  std::vector<std::string> hf_eager_engines;
  /// Engines whose decoder layers are torchtitan's eager modules when torch.compile is off
  /// (`torchtitan_eager_layer`): a fourth MLP intermediate and K, V repeated to every query head.
  std::vector<std::string> titan_eager_engines;
  AllocatorRules allocator;
  TeFp8ActivationConstants te_fp8;
  CrossEntropyConstants cross_entropy;
  DeviceCapacityConstants device_capacity;
  FrameworkEngines engines;  // from data/frameworks.yaml (LoadMemoryConstants)
  /// One band per framework family (MemoryErrorBand), "default" always among them.
  std::map<std::string, MemoryErrorBand> error_bands;
  std::map<std::string, std::string> sources;  // top-level key -> source text
};

/// Parses the YAML text; `file` names it in errors.
Result<MemoryConstants> ParseMemoryConstants(const std::string& text, const std::string& file);

/// Reads data/memory_overheads.yaml and the engines of data/frameworks.yaml (via DataDir()).
Result<MemoryConstants> LoadMemoryConstants();

}  // namespace strata

#endif  // STRATA_MEMORY_MEMORY_CONSTANTS_H_
