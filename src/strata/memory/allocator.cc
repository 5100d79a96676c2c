#include "strata/memory/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace strata {
namespace {

int64_t RoundUp(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

int64_t Count(Bytes b) { return static_cast<int64_t>(b.count()); }

}  // namespace

// pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (commit 001074d2): DeviceCachingAllocator::
// malloc calls round_size(orig_size) (kMinBlockSize multiples, without
// roundup_power2_divisions), get_pool (size <= kSmallSize: the small pool),
// get_allocation_size (<= kSmallSize: kSmallBuffer; < kMinLargeAlloc: kLargeBuffer; else
// kRoundLarge multiples) and should_split (small pool or expandable segments: remaining >=
// kMinBlockSize; large pool: remaining > kSmallSize, max_split_size unlimited by default);
// alloc_found_block then counts block->size in allocated_bytes and alloc_block the segment in
// reserved_bytes.
AllocatorBlock AllocateFromEmpty(const AllocatorRules& rules, Bytes request,
                                 bool expandable_segments) {
  const int64_t min_block = Count(rules.min_block);
  const int64_t size = RoundUp(std::max<int64_t>(Count(request), 1), min_block);
  AllocatorBlock out;
  out.small_pool = size <= Count(rules.small_size);
  int64_t segment = 0;
  if (expandable_segments) {
    // find_expandable_block/map_block: the segment grows by pages of kSmallBuffer (small pool)
    // or kLargeBuffer (large pool), only as many as the request needs.
    segment = RoundUp(size, Count(out.small_pool ? rules.small_segment : rules.large_segment));
  } else if (out.small_pool) {
    segment = Count(rules.small_segment);
  } else if (size < Count(rules.min_large_alloc)) {
    segment = Count(rules.large_segment);
  } else {
    segment = RoundUp(size, Count(rules.round_large));
  }
  const int64_t remaining = segment - size;
  const bool split = out.small_pool || expandable_segments ? remaining >= min_block
                                                           : remaining > Count(rules.small_size);
  out.block = Bytes::Count(static_cast<double>(split ? size : segment));
  out.segment = Bytes::Count(static_cast<double>(segment));
  return out;
}

double FragmentationFraction(const MemoryConstants& constants, AllocatorSetting setting) {
  return setting.variable_shapes && !setting.expandable_segments
             ? constants.fragmentation_variable_shapes
             : constants.fragmentation_fixed_shapes;
}

Bytes SideStreamCache(const AllocatorRules& rules, Bytes gathered, Bytes reduce_scatter,
                      bool expandable_segments) {
  Bytes total;
  for (Bytes b : {gathered, reduce_scatter}) {
    if (b.value() > 0) total += AllocateFromEmpty(rules, b, expandable_segments).segment;
  }
  return total;
}

AllocatorCounters PredictCounters(const MemoryConstants& constants, const PhaseTensors& phase,
                                  AllocatorSetting setting) {
  AllocatorCounters c;
  c.allocated = phase.tensors;
  c.fragmentation = phase.dynamic * FragmentationFraction(constants, setting);
  c.side_stream = phase.side_stream;
  c.reserved = c.allocated + c.fragmentation + c.side_stream;
  c.outside = phase.outside;
  c.device_used = c.reserved + c.outside;
  return c;
}

std::string AllocatedFormula(const AllocatorCounters& c) {
  return fmt::format("the phase's tensors = {} (no CUDA context, no NCCL buffers)",
                     FormatGBAndGiB(c.allocated));
}

std::string ReservedFormula(const AllocatorCounters& c, double fraction, Bytes dynamic) {
  std::string out =
      fmt::format("allocated {} + fragmentation {} (= {:.2f} x activations and working buffers {})",
                  FormatGB(c.allocated), FormatGB(c.fragmentation), fraction, FormatGB(dynamic));
  if (c.side_stream.value() > 0) {
    out += fmt::format(" + collective buffers cached in their own streams' pools {}",
                       FormatGB(c.side_stream));
  }
  return out + fmt::format(" = {}", FormatGBAndGiB(c.reserved));
}

std::string DeviceUsedFormula(const AllocatorCounters& c) {
  return fmt::format("reserved {} + CUDA context and NCCL buffers {} = {}", FormatGB(c.reserved),
                     FormatGB(c.outside), FormatGBAndGiB(c.device_used));
}

}  // namespace strata
