// PyTorch's caching allocator as the ledger models it (memory/allocator.h): the size rules of
// c10/cuda/CUDACachingAllocator.cpp worked by hand, the order of the three counters, what
// expandable segments change, and which framework family's error band a job gets.
#include "strata/memory/allocator.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/error_band.h"
#include "strata/memory/sharding.h"
#include "strata/model/param_count.h"
#include "support/golden.h"

namespace strata::allocator_test {
namespace {

constexpr double kMiB = 1048576.0;
constexpr double kGiB = 1073741824.0;

struct RoundingCase {
  const char* name;
  double request;
  bool expandable;
  double block;    // counted by max_memory_allocated
  double segment;  // reserved by cudaMalloc (or mapped, with expandable segments)
  bool small_pool;
};

// Each by hand from round_size, get_allocation_size and should_split (commit 001074d2):
const std::vector<RoundingCase>& RoundingCases() {
  static const std::vector<RoundingCase> cases = {
      // 1 B rounds to kMinBlockSize 512 B; <= 1 MiB: the small pool's 2 MiB segment, split
      // (remainder >= 512 B).
      {"one byte", 1, false, 512, 2 * kMiB, true},
      // 1000 B -> 1024 B (two 512 B units).
      {"1000 B", 1000, false, 1024, 2 * kMiB, true},
      // Exactly kSmallSize is still small.
      {"1 MiB", kMiB, false, kMiB, 2 * kMiB, true},
      // 1.5 MiB: large pool, below kMinLargeAlloc -> a 20 MiB kLargeBuffer segment; the
      // remainder 18.5 MiB > kSmallSize is split off and stays cached, so the tensor's block is
      // its rounded size, 1.5 MiB (512 B multiple), not 2 MiB.
      {"1.5 MiB", 1.5 * kMiB, false, 1.5 * kMiB, 20 * kMiB, false},
      // 3 GiB + 1 B: block 3 GiB + 512 B; segment rounded to kRoundLarge: 3 GiB + 2 MiB; the
      // remainder 2 MiB - 512 B > 1 MiB is split off.
      {"3 GiB + 1 B", 3 * kGiB + 1, false, 3 * kGiB + 512, 3 * kGiB + 2 * kMiB, false},
      // 11.5 MiB: segment 12 MiB; the remainder 0.5 MiB <= kSmallSize is not split, so the block
      // is the whole 12 MiB segment (max_memory_allocated counts it).
      {"11.5 MiB", 11.5 * kMiB, false, 12 * kMiB, 12 * kMiB, false},
      // Exactly kMinLargeAlloc is not "< 10 MiB": its own 10 MiB segment, nothing left over.
      {"10 MiB", 10 * kMiB, false, 10 * kMiB, 10 * kMiB, false},
      // Expandable segments map 20 MiB pages in the large pool: 3 GiB + 512 B needs
      // ceil(3072.0005 / 20) = 154 pages = 3080 MiB; every remainder >= 512 B is split off.
      {"3 GiB + 1 B, expandable", 3 * kGiB + 1, true, 3 * kGiB + 512, 3080 * kMiB, false},
      // 11.5 MiB expandable: one 20 MiB page, block 11.5 MiB (split, remainder 8.5 MiB).
      {"11.5 MiB, expandable", 11.5 * kMiB, true, 11.5 * kMiB, 20 * kMiB, false},
      // Small pool, expandable: 2 MiB pages.
      {"1000 B, expandable", 1000, true, 1024, 2 * kMiB, true},
  };
  return cases;
}

TEST(CachingAllocator, RoundingRulesByHand) {
  const AllocatorRules rules = testing::Constants().allocator;
  for (const RoundingCase& c : RoundingCases()) {
    const AllocatorBlock b = AllocateFromEmpty(rules, Bytes::Count(c.request), c.expandable);
    EXPECT_DOUBLE_EQ(b.block.count(), c.block) << c.name;
    EXPECT_DOUBLE_EQ(b.segment.count(), c.segment) << c.name;
    EXPECT_EQ(b.small_pool, c.small_pool) << c.name;
  }
}

// The data file holds PyTorch's constants (kMinBlockSize ... kRoundLarge), read back exactly.
TEST(CachingAllocator, ConstantsAreThoseOfThePyTorchSource) {
  const AllocatorRules r = testing::Constants().allocator;
  EXPECT_DOUBLE_EQ(r.min_block.count(), 512);
  EXPECT_DOUBLE_EQ(r.small_size.count(), 1048576);
  EXPECT_DOUBLE_EQ(r.small_segment.count(), 2097152);
  EXPECT_DOUBLE_EQ(r.large_segment.count(), 20971520);
  EXPECT_DOUBLE_EQ(r.min_large_alloc.count(), 10485760);
  EXPECT_DOUBLE_EQ(r.round_large.count(), 2097152);
}

Job LoadJob(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(path, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

// allocated <= reserved <= device used in every phase of every job: the cache is reserved on
// top of the tensors, and the CUDA context and NCCL sit on top of the reserve.
TEST(CachingAllocator, CountersAreOrdered) {
  const MemoryConstants c = testing::Constants();
  std::vector<Job> jobs = {testing::ReferenceJob(),
                           testing::ReferenceJob({"framework.expandable_segments=true"}),
                           testing::ReferenceJob({"sequence.packing=true"})};
  for (const char* row : {"h200-01", "h200-04", "h200-05", "ms-02", "ms-07"}) {
    jobs.push_back(LoadJob(testing::TestPath(std::string("memory/validation/") + row + ".yaml")));
  }
  for (const Job& job : jobs) {
    const MemoryLedger l = ComputeLedger(job, c);
    for (const PhaseMemory& p : l.phases) {
      EXPECT_LE(p.counters.allocated.count(), p.counters.reserved.count()) << job.spec.file;
      EXPECT_LE(p.counters.reserved.count(), p.counters.device_used.count()) << job.spec.file;
      EXPECT_DOUBLE_EQ(p.bytes.count(), p.counters.device_used.count()) << job.spec.file;
    }
    // Context and NCCL are never tensors: device used - reserved is exactly them.
    EXPECT_NEAR((l.peak_counters.device_used - l.peak_counters.reserved).value(),
                l.peak_counters.outside.count(), 1.0);
    EXPECT_GE(l.peak_counters.outside.count(), c.cuda_context.count());
    EXPECT_DOUBLE_EQ(l.peak_counters.device_used.count(), l.Peak().count());
  }
}

// Variable-length samples (the reference job: packing false) fragment the cache at 30% of the
// activations; expandable segments bring that to the fixed-shape 5%. The tensors do not move.
TEST(CachingAllocator, ExpandableSegmentsLowerReservedUnderVariableShapes) {
  const MemoryConstants c = testing::Constants();
  const MemoryLedger plain = ComputeLedger(testing::ReferenceJob(), c);
  const MemoryLedger expandable =
      ComputeLedger(testing::ReferenceJob({"framework.expandable_segments=true"}), c);
  EXPECT_DOUBLE_EQ(plain.peak_counters.allocated.count(),
                   expandable.peak_counters.allocated.count());
  EXPECT_LT(expandable.peak_counters.reserved.count(), plain.peak_counters.reserved.count());
  // The fragmentation term scales from 0.30 to 0.05 of the same activations.
  EXPECT_NEAR(expandable.peak_counters.fragmentation.count(),
              plain.peak_counters.fragmentation.count() * 0.05 / 0.30, 1.0);
  // With one shape per micro batch the setting changes nothing.
  const MemoryLedger packed = ComputeLedger(testing::ReferenceJob({"sequence.packing=true"}), c);
  const MemoryLedger packed_expandable = ComputeLedger(
      testing::ReferenceJob({"sequence.packing=true", "framework.expandable_segments=true"}), c);
  EXPECT_DOUBLE_EQ(packed.peak_counters.reserved.count(),
                   packed_expandable.peak_counters.reserved.count());
}

// FSDP2 (H200-04): the all-gather and reduce-scatter outputs live in their own streams' pools,
// cached beside the compute stream's: reserved - allocated holds them on top of the
// fragmentation. A megatron job (MS-07, distributed optimizer) has no such cache.
TEST(CachingAllocator, Fsdp2CollectivesStayCachedInTheirStreams) {
  const MemoryConstants c = testing::Constants();
  const MemoryLedger fsdp2 =
      ComputeLedger(LoadJob(testing::TestPath("memory/validation/h200-04.yaml")), c);
  EXPECT_GT(fsdp2.peak_counters.side_stream.count(), 0);
  EXPECT_NEAR((fsdp2.peak_counters.reserved - fsdp2.peak_counters.allocated).value(),
              (fsdp2.peak_counters.fragmentation + fsdp2.peak_counters.side_stream).value(), 1.0);
  const MemoryLedger megatron =
      ComputeLedger(LoadJob(testing::TestPath("memory/validation/ms-07.yaml")), c);
  EXPECT_DOUBLE_EQ(megatron.peak_counters.side_stream.count(), 0);
}

// FSDP2 copies each unit's all-gather output into the parameters' own unsharded storage (compute
// stream) and frees it once the next unit's copy-out is done (pytorch/pytorch
// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, wait_for_unshard and its note
// "Overlapping all-gather copy-in and all-gather"), so the copy-in stream's pool caches two
// neighbouring units' outputs, with reshard_after_forward true or false. Llama-3.1-8B through
// torchtitan on 8 H100s (FSDP2 units: embedding 128,256 x 4,096 = 525,336,576 params, 32 blocks
// of 218,112,000, final norm + output 4,096 + 525,336,576 = 525,340,672): the largest pair is the
// last block and the output, 743,452,672 params x 2 B = 1,486,905,344 B, one segment rounded up
// to 2 MiB: 710 x 2,097,152 = 1,488,977,920 B in forward. reshard_after_forward false used to
// size it as every unit gathered (8,030,261,248 params x 2 B = 16.06 GB), counting the stage's
// bf16 weights twice (they are already the "all-gathered" tensor item).
TEST(CachingAllocator, Fsdp2AllGatherCacheIsTwoUnitsWhetherOrNotResharded) {
  const MemoryConstants c = testing::Constants();
  const std::string file = testing::TestPath("golden/cli_memory/torchtitan_eager_8b/job.yaml");
  for (const bool reshard : {true, false}) {
    const MemoryLedger l = ComputeLedger(
        LoadJob(file, {fmt::format("sharding.reshard_after_forward={}", reshard)}), c);
    EXPECT_DOUBLE_EQ(l.PhaseOf(Phase::kForwardPeak).counters.side_stream.count(), 1488977920.0)
        << "reshard_after_forward " << reshard;
  }
  const Job resident = LoadJob(file, {"sharding.reshard_after_forward=false"});
  const ModeMemory mode = ComputeModeMemory(resident, CountParams(resident.model), 0);
  EXPECT_DOUBLE_EQ(mode.all_gather_in_flight.count(), 1486905344.0);
  EXPECT_DOUBLE_EQ(mode.gathered.bytes.count(), 8030261248.0 * 2);  // the stage, kept gathered
}

struct FamilyCase {
  std::vector<std::string> sets;  // on the reference job (ms-swift, zero1)
  const char* family;             // MemoryFamily
  const char* band;               // the band that applies
};

TEST(MemoryErrorBands, FamilySelection) {
  const MemoryConstants c = testing::Constants();
  const std::vector<FamilyCase> cases = {
      // ms-swift under zero1 is its `megatron sft` path (data/frameworks.yaml, runs_as).
      {{}, "megatron", "megatron"},
      {{"framework.name=megatron-core"}, "megatron", "megatron"},
      {{"framework.name=megatron-bridge"}, "megatron", "megatron"},
      {{"framework.name=torchtitan", "sharding.mode=fsdp2"}, "fsdp2", "fsdp2"},
      {{"framework.name=hf-trainer", "sharding.mode=fsdp2"}, "fsdp2", "fsdp2"},
      {{"framework.name=torchtitan"}, "fsdp2", "fsdp2"},
      // ms-swift with ZeRO-3 is `swift sft` under DeepSpeed: the deepspeed band (the corpus's
      // fit rows of ms-swift's DeepSpeed scripts).
      {{"sharding.mode=zero3"}, "deepspeed", "deepspeed"},
      {{"framework.name=deepspeed", "sharding.mode=zero2"}, "deepspeed", "deepspeed"},
      // ZeRO-2/3 run by PyTorch's FSDP (Accelerate's fsdp_version, verl's actor strategy) hold
      // what FSDP holds: FSDP2's rows under fully_shard; FSDP1 has no rows, so its own name and
      // the default band (every row) stand for it, not DeepSpeed's five ms-swift rows.
      {{"framework.name=hf-trainer", "sharding.mode=zero2", "sharding.runtime=fsdp2"},
       "fsdp2",
       "fsdp2"},
      {{"framework.name=hf-trainer", "sharding.mode=zero3", "sharding.runtime=fsdp1"},
       "fsdp1",
       "default"},
      {{"framework.name=hf-trainer", "sharding.mode=zero2", "sharding.runtime=fsdp1"},
       "fsdp1",
       "default"},
      {{"framework.name=hf-trainer", "sharding.mode=none", "optimizer.distributed=false"},
       "hf_trainer",
       "hf_trainer"},
  };
  for (const FamilyCase& fc : cases) {
    const Job job = testing::ReferenceJob(fc.sets);
    EXPECT_EQ(MemoryFamily(job.spec, c.engines), fc.family) << ::testing::PrintToString(fc.sets);
    const MemoryLedger l = ComputeLedger(job, c);
    EXPECT_EQ(l.band_family, fc.band) << ::testing::PrintToString(fc.sets);
    EXPECT_EQ(l.job_family, fc.family) << ::testing::PrintToString(fc.sets);
    EXPECT_EQ(l.band_rows, static_cast<int64_t>(c.error_bands.at(fc.band).rows.size()));
  }
}

// DeriveErrorBand by hand: errors (90 - 100) / 100 = -0.10 and (105 - 100) / 100 = +0.05.
TEST(MemoryErrorBands, DerivationByHand) {
  const MemoryErrorBand b = DeriveErrorBand("x", {{"A", 90, 100}, {"B", 105, 100}});
  EXPECT_NEAR(b.lowest, -0.10, 1e-12);
  EXPECT_NEAR(b.highest, 0.05, 1e-12);
  EXPECT_EQ(b.rows, (std::vector<std::string>{"A", "B"}));
}

TEST(MemoryErrorBands, TheJobFieldIsChecked) {
  auto bad = LoadJobSpec(kReferenceJobName, {"framework.expandable_segments=maybe"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--set framework.expandable_segments");
}

}  // namespace
}  // namespace strata::allocator_test
