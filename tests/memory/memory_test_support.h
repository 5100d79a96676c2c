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

/// The formula of the item with this exact name; fails the test when absent.
inline std::string ItemFormula(const MemoryLedger& ledger, const std::string& name) {
  for (const auto& item : ledger.items) {
    if (item.name == name) return item.formula;
  }
  ADD_FAILURE() << "no ledger item '" << name << "'";
  return "";
}

/// What a memory counter would read for the ledger's peak (the library's allocator model,
/// memory/ledger_counters.h), or nullopt for a counter name it does not know.
///   nvidia_smi, unknown: the device's used memory (a counter not named is most often
///     nvidia-smi's, and the card runs out of memory on this one).
///   max_memory_reserved, max_memory_allocated: PyTorch's two counters.
inline std::optional<Bytes> PredictForCounter(const MemoryLedger& ledger,
                                              std::string_view counter) {
  if (counter == "nvidia_smi" || counter == "unknown") return ledger.peak_counters.device_used;
  if (counter == "max_memory_reserved") return ledger.peak_counters.reserved;
  if (counter == "max_memory_allocated") return ledger.peak_counters.allocated;
  return std::nullopt;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_MEMORY_MEMORY_TEST_SUPPORT_H_
