// The constants of the memory ledger that shapes cannot give (data/memory_overheads.yaml):
// CUDA context, NCCL buffers, allocator fragmentation and a few kernel properties, each with
// the source the file gives for it.
#ifndef STRATA_MEMORY_MEMORY_CONSTANTS_H_
#define STRATA_MEMORY_MEMORY_CONSTANTS_H_

#include <map>
#include <string>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

struct MemoryConstants {
  Bytes cuda_context;
  Bytes nccl_per_communicator;
  double fragmentation_fixed_shapes = 0;     // fraction of the activation peak
  double fragmentation_variable_shapes = 0;  // the same, when shapes vary per micro batch
  double backward_gradient_fraction = 0;     // live gradients / saved activations in backward
  int64_t gdn_chunk_tokens = 0;
  int64_t gdn_state_bytes_per_element = 0;
  int64_t moe_dispatch_transient_copies = 0;
  /// The ledger's error on the measured rows of docs/memory-validation.md, as
  /// (predicted - measured) / measured: the lowest and the highest. A measured peak is then
  /// predicted / (1 + error), between predicted / (1 + highest) and predicted / (1 + lowest).
  double model_error_lowest = 0;
  double model_error_highest = 0;
  std::map<std::string, std::string> sources;  // top-level key -> source text
};

/// Parses the YAML text; `file` names it in errors.
Result<MemoryConstants> ParseMemoryConstants(const std::string& text, const std::string& file);

/// Reads data/memory_overheads.yaml (via DataDir()).
Result<MemoryConstants> LoadMemoryConstants();

}  // namespace strata

#endif  // STRATA_MEMORY_MEMORY_CONSTANTS_H_
