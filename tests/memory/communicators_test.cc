// The NCCL communicators a rank holds (memory/ledger.h, CommunicatorCount): the parallel groups
// of more than one rank, and under megatron-core the expert token-count group and the
// gradient-norm group, counted by hand from the job's layout and megatron-core's code
// (NVIDIA/Megatron-LM@946357f8dd, core_r0.13.0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/ledger.h"
#include "support/golden.h"

namespace strata::communicators_test {
namespace {

constexpr double kMiB = 1048576.0;

Job LoadRow(const std::string& file, const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/" + file), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

struct CommunicatorCase {
  const char* name;
  const char* file;
  std::vector<std::string> sets;
  int64_t expected;
};

TEST(NcclCommunicators, CountedFromMegatronCoresGroups) {
  const CommunicatorCase cases[] = {
      // MS-03, 8 GPUs TP1 PP2 EP4 DP4 (expert-DP 8 / (1 x 4 x 2) = 1): DPxCP 4 (the gradient
      // reduce-scatter and the parameter all-gather), PP 2 (1F1B's sends and receives), EP 4
      // (the dispatcher's all-to-all), ETPxEP 4 (the dispatcher's all-gather of the tokens per
      // expert, token_dispatcher.py, group=self.tp_ep_group) and all 8 ranks (the gradient
      // norm over the distributed-optimizer instance) = 5. The ledger counted 3 before.
      {"MS-03", "ms-03.yaml", {}, 5},
      // The same job without the distributed optimizer: the dense optimizer's gradient norm is
      // all-reduced over the model-parallel group, TP 1 x PP 2 = 2 ranks, the expert
      // optimizer's over ETP 1 x EP 4 x PP 2 = 8 ranks (optimizer/__init__.py): DPxCP, PP, EP,
      // ETPxEP and these two = 6.
      {"MS-03, plain optimizer", "ms-03.yaml", {"optimizer.distributed=false"}, 6},
      // MS-02, 16 GPUs TP2 EP8 ETP2 DP8 (expert-DP 16 / (2 x 8) = 1), --moe_aux_loss_coeff 0.01:
      // DPxCP 8, TP 2, EP 8, ETP 2, ETPxEP 16, the router's TPxCP 2 (the aux loss's token
      // counts, router.py reduce_group=self.tp_cp_group) and all 16 ranks = 7. Without the loss
      // no collective runs on TPxCP: 6.
      {"MS-02", "ms-02.yaml", {}, 7},
      {"MS-02, no aux loss", "ms-02.yaml", {"moe.aux_loss_coeff=0"}, 6},
      // MS-03 at TP1 CP1: the TPxCP group is one rank, nothing to add with the loss on.
      {"MS-03, aux loss", "ms-03.yaml", {"moe.aux_loss_coeff=0.01"}, 5},
      // MS-01, dense, 8 GPUs TP4 DP2: DPxCP 2, TP 4, all 8 ranks = 3 (no expert groups).
      {"MS-01", "ms-01.yaml", {}, 3},
      // MS-07, 4 GPUs TP4 DP1: TP 4 and the gradient-norm group of all 4 ranks, a group of its
      // own even with the TP group's ranks = 2.
      {"MS-07", "ms-07.yaml", {}, 2},
      // H200-04: one GPU under the HF Trainer: no group of more than one rank = 0.
      {"H200-04", "h200-04.yaml", {}, 0},
  };
  const MemoryConstants constants = testing::Constants();
  for (const auto& c : cases) {
    EXPECT_EQ(CommunicatorCount(LoadRow(c.file, c.sets), constants), c.expected) << c.name;
  }
}

TEST(NcclCommunicators, Ms03LedgerLine) {
  // 5 communicators x 512 MiB (data/memory_overheads.yaml, nccl_per_communicator) =
  // 2,684,354,560 B, and the line names them.
  const MemoryConstants constants = testing::Constants();
  const MemoryLedger ledger = ComputeLedger(LoadRow("ms-03.yaml"), constants);
  EXPECT_NEAR(testing::ItemBytes(ledger, "NCCL buffers").count(), 5 * 512 * kMiB, 1);
  EXPECT_NE(testing::ItemFormula(ledger, "NCCL buffers")
                .find("DPxCP 4, PP 2, EP 4, ETPxEP 4, grad norm, all ranks 8"),
            std::string::npos)
      << testing::ItemFormula(ledger, "NCCL buffers");
}

// The coefficient is a loss weight: a negative one is refused with the field named, exit 2.
TEST(NcclCommunicators, ANegativeAuxLossCoefficientIsRefused) {
  auto bad =
      LoadJobSpec(testing::TestPath("memory/validation/ms-02.yaml"), {"moe.aux_loss_coeff=-0.01"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("aux_loss_coeff"), std::string::npos) << bad.error().Format();
  EXPECT_NE(bad.error().Format().find("expected a coefficient of 0"), std::string::npos)
      << bad.error().Format();
}

}  // namespace
}  // namespace strata::communicators_test
