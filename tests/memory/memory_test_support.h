// Shared by the memory tests: the reference job with overrides, and the ledger of a job.
#ifndef STRATA_TESTS_MEMORY_MEMORY_TEST_SUPPORT_H_
#define STRATA_TESTS_MEMORY_MEMORY_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/memory/ledger.h"

namespace strata::testing {

/// The reference job (data/jobs/) with --set overrides, resolved; fails the test on error.
inline Job ReferenceJob(const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(kReferenceJobName, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

inline MemoryConstants Constants() {
  auto c = LoadMemoryConstants();
  EXPECT_TRUE(c.ok()) << c.error().Format();
  return *c;
}

/// The item with this exact name; fails the test when absent.
inline Bytes ItemBytes(const MemoryLedger& ledger, const std::string& name) {
  for (const auto& item : ledger.items) {
    if (item.name == name) return item.bytes;
  }
  ADD_FAILURE() << "no ledger item '" << name << "'";
  return Bytes();
}

/// What a memory counter would read for the ledger's steady peak (MemoryLedger::Peak()), or
/// nullopt for a counter name it does not know. The one place the corpus test maps a counter to
/// the ledger; to be replaced by the library's allocator model.
///   nvidia_smi, unknown: the device's used memory, the whole peak.
///   max_memory_reserved: PyTorch's caching allocator's blocks: the peak without the CUDA
///     context and NCCL's buffers (both allocated outside the caching allocator; NCCL's come from
///     cudaMalloc/cuMem in ncclCommInitRank). The allocator's cache stays in.
///   max_memory_allocated: the live tensors: also without the allocator's reserve and
///     fragmentation.
inline std::optional<Bytes> PredictForCounter(const MemoryLedger& ledger,
                                              std::string_view counter) {
  Bytes outside = Bytes::Count(0);  // what the counter does not see
  if (counter == "nvidia_smi" || counter == "unknown") {
    return ledger.Peak();
  }
  if (counter != "max_memory_reserved" && counter != "max_memory_allocated") return std::nullopt;
  for (const auto& item : ledger.items) {
    if (item.kind != ItemKind::kOverhead) continue;
    const bool not_in_allocator = item.name == "CUDA context" || item.name == "NCCL buffers";
    const bool cache = item.name == "allocator reserve and fragmentation";
    if (not_in_allocator || (cache && counter == "max_memory_allocated")) outside += item.bytes;
  }
  return Bytes::Count(ledger.Peak().count() - outside.count());
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_MEMORY_MEMORY_TEST_SUPPORT_H_
