// PyTorch's CUDA caching allocator, as the memory ledger needs it: what each of the three memory
// counters a training job shows would read. Formulas: docs/formulas.md, "Memory counters".
//
//   torch.cuda.max_memory_allocated   the tensors (each rounded to its block)
//   torch.cuda.max_memory_reserved    + the allocator's cache: blocks kept after free, split
//                                       segments a request of another size cannot use, the
//                                       pools of other streams (FSDP2's collectives)
//   device used (nvidia-smi)          + the CUDA context, NCCL's buffers and whatever else
//                                       allocates outside PyTorch
//
// The rules (block rounding, segment sizes, pools per stream) are those of
// pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp; their values are in
// data/memory_overheads.yaml, `caching_allocator`.
#ifndef STRATA_MEMORY_ALLOCATOR_H_
#define STRATA_MEMORY_ALLOCATOR_H_

#include <string>

#include "strata/core/units.h"
#include "strata/memory/memory_constants.h"

namespace strata {

/// One request served from an empty cache.
struct AllocatorBlock {
  Bytes block;    // what the tensor takes: max_memory_allocated counts it
  Bytes segment;  // what cudaMalloc (or the first mapping) reserves for it
  bool small_pool = false;
};
/// round_size (a multiple of min_block), then get_allocation_size (the segment) and
/// should_split (a large segment's remainder above small_size is split off and stays cached;
/// otherwise the block takes the whole segment). With expandable segments, a request maps only
/// the pages it needs (small_segment pages in the small pool, large_segment pages in the large
/// one) and every remainder of min_block or more is split off.
AllocatorBlock AllocateFromEmpty(const AllocatorRules& rules, Bytes request,
                                 bool expandable_segments);

/// The allocator configuration of a job: PYTORCH_CUDA_ALLOC_CONF and whether its tensor shapes
/// change from one micro batch to the next.
struct AllocatorSetting {
  bool variable_shapes = false;
  bool expandable_segments = false;
};

/// The fraction of the activations and working buffers that the allocator keeps reserved
/// beyond them: `fixed_shapes` when one shape repeats every micro batch or when expandable
/// segments let a larger request grow the segment instead of leaving slivers, else
/// `variable_shapes` (data/memory_overheads.yaml, `allocator_fragmentation`).
double FragmentationFraction(const MemoryConstants& constants, AllocatorSetting setting);

/// What one phase of the ledger holds, by how the allocator sees it.
struct PhaseTensors {
  Bytes tensors;  // live tensors at the phase's peak
  Bytes dynamic;  // of which activations and working buffers, freed and allocated again each
                  // micro batch (the ones that fragment)
  /// Collective buffers allocated on their own CUDA streams (FSDP2's all-gather and
  /// reduce-scatter outputs), freed before the peak but cached in those streams' pools: no
  /// tensor of the compute stream can reuse them.
  Bytes side_stream;
  Bytes outside;  // CUDA context, NCCL buffers: on the device, not in PyTorch's allocator
};

struct AllocatorCounters {
  Bytes allocated;  // torch.cuda.max_memory_allocated
  Bytes fragmentation;
  Bytes side_stream;  // the cache of the other streams' pools
  Bytes reserved;     // torch.cuda.max_memory_reserved = allocated + fragmentation + side_stream
  Bytes outside;
  Bytes device_used;  // nvidia-smi = reserved + outside
};

/// The three counters of one phase.
AllocatorCounters PredictCounters(const MemoryConstants& constants, const PhaseTensors& phase,
                                  AllocatorSetting setting);

/// The side-stream cache of FSDP2's collectives: the all-gather outputs in flight (two
/// neighbouring units: each is copied out into the parameters' own storage and freed) and the
/// reduce-scatter output (one unit's gradients), each its own segment (AllocateFromEmpty) in its
/// stream's pool.
Bytes SideStreamCache(const AllocatorRules& rules, Bytes gathered, Bytes reduce_scatter,
                      bool expandable_segments);

/// "max_memory_allocated 72.87 GB = tensors", etc.: the three counters' formulas with the
/// numbers substituted (--explain).
std::string AllocatedFormula(const AllocatorCounters& c);
std::string ReservedFormula(const AllocatorCounters& c, double fraction, Bytes dynamic);
std::string DeviceUsedFormula(const AllocatorCounters& c);

}  // namespace strata

#endif  // STRATA_MEMORY_ALLOCATOR_H_
