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

struct MemoryConstants {
  Bytes cuda_context;
  Bytes nccl_per_communicator;
  double fragmentation_fixed_shapes = 0;     // fraction of the activation peak
  double fragmentation_variable_shapes = 0;  // the same, when shapes vary per micro batch
  double backward_gradient_fraction = 0;     // live gradients / saved activations in backward
  int64_t gdn_chunk_tokens = 0;
  int64_t gdn_state_bytes_per_element = 0;
  int64_t moe_dispatch_transient_copies = 0;
  AllocatorRules allocator;
  /// One band per framework family (MemoryErrorBand), "default" always among them.
  std::map<std::string, MemoryErrorBand> error_bands;
  std::map<std::string, std::string> sources;  // top-level key -> source text
};

/// Parses the YAML text; `file` names it in errors.
Result<MemoryConstants> ParseMemoryConstants(const std::string& text, const std::string& file);

/// Reads data/memory_overheads.yaml (via DataDir()).
Result<MemoryConstants> LoadMemoryConstants();

}  // namespace strata

#endif  // STRATA_MEMORY_MEMORY_CONSTANTS_H_
