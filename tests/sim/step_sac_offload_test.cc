// The step-time side of torchtitan's selective activation checkpointing and megatron-core's
// activation offload, on Llama-3.1-8B at 2048 tokens on one H200 (the H200-03 job file), each
// against a value derived by hand in the comment above it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/hw/interconnects.h"
#include "strata/model/op_sac.h"
#include "strata/sim/step_job.h"
#include "support/golden.h"

namespace strata::step_sac_offload_test {
namespace {

struct Evaluated {
  StepSetup setup;
  StepResult result;
};

Evaluated Evaluate(const std::vector<std::string>& sets) {
  JobRequest request;
  request.job = testing::TestPath("memory/validation/h200-03.yaml");
  // Liger's kernels: the layers keep the fused count the offload derivations use.
  request.overrides = sets;
  request.overrides.insert(request.overrides.begin(), "framework.liger_kernel=true");
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << setup.error().Format();
  auto links = LoadInterconnects();
  EXPECT_TRUE(links.ok());
  auto comm = CollectiveModel::Create(setup->job.cluster, *links);
  EXPECT_TRUE(comm.ok());
  auto r = EvaluateStep(setup->tables, setup->layout, *comm);
  EXPECT_TRUE(r.ok()) << r.error().Format();
  return {*setup, *r};
}

// Llama-3.1-8B block matmuls (h 4096, q 4096, kv 1024, f 14,336), FLOP per token / 2:
//   recomputed: wk 4096 x 1024 + wo 4096 x 4096 + w3 4096 x 14,336 = 4096 x 19,456
//   all: wq, wk, wv, wo 4096 x (4096 + 1024 + 1024 + 4096) + w1, w3, w2 3 x 4096 x 14,336
//        = 4096 x 53,248
//   share re-run: 19,456 / 53,248 = 0.365385
TEST(StepSac, OpLevelReRunsTheUnsavedMatmulsNotAttention) {
  const Evaluated e =
      Evaluate({"recompute.granularity=selective", "recompute.selective_ac_option=op"});
  EXPECT_DOUBLE_EQ(OpSacRecomputedMatmulFraction(e.setup.job.model), 19456.0 / 53248.0);
  const StepResult& r = e.result;
  EXPECT_NEAR(r.recompute.dense_gemm.s(), r.forward.dense_gemm.s() * 19456.0 / 53248.0, 1e-12);
  EXPECT_EQ(r.recompute.attention.s(), 0.0);  // SDPA's output is on the save list
  EXPECT_EQ(r.recompute.memory_bound.s(), r.forward.memory_bound.s());
  EXPECT_EQ(r.recompute.logits_and_loss.s(), 0.0);
  // HFU counts the re-run FLOP: 32 blocks x 2 x 4096 x 19,456 = 5,100,273,664 per token.
  EXPECT_NEAR(r.hfu / r.mfu,
              (e.setup.tables.megatron_flop_per_token + 5'100'273'664.0) /
                  e.setup.tables.megatron_flop_per_token,
              1e-9);
  // Dearer than no recompute, cheaper than full.
  const Evaluated none = Evaluate({});
  const Evaluated full = Evaluate({"recompute.granularity=full"});
  EXPECT_GT(r.step.s(), none.result.step.s());
  EXPECT_LT(r.step.s(), full.result.step.s());
}

// selective_ac_option 2: 16 of the 32 blocks re-run their whole forward, so the recompute is
// half the layers' forward (the output layer is not in a block).
TEST(StepSac, EverySecondLayerReRunsHalfTheForward) {
  const Evaluated e =
      Evaluate({"recompute.granularity=selective", "recompute.selective_ac_option=2"});
  const StepResult& r = e.result;
  EXPECT_DOUBLE_EQ(e.setup.layout.recompute_layer_fraction, 0.5);
  EXPECT_NEAR(r.recompute.dense_gemm.s(), 0.5 * r.forward.dense_gemm.s(), 1e-12);
  EXPECT_NEAR(r.recompute.attention.s(), 0.5 * r.forward.attention.s(), 1e-12);
  EXPECT_EQ(r.recompute.logits_and_loss.s(), 0.0);
}

// --cpu-offloading-num-layers 8: 8 layers x 139,392 B per token (the ledger's decomposition,
// tests/memory/sac_offload_test.cc) x 2048 tokens = 2,283,798,528 B down in forward and up in
// backward, one micro batch: 4,567,597,056 B at the map's PCIe Gen5 x16 63 GB/s = 72.5015 ms.
// One layer's copy x = 285,474,816 B / 63 GB/s = 4.5313 ms; what is not hidden behind one
// layer's compute y: 8 (max(0, x - y_fwd) + max(0, x - y_bwd)).
TEST(StepOffload, ActivationCopiesOverPcieBehindTheNextLayer) {
  const Evaluated e = Evaluate({"activation_offload.num_layers=8"});
  const StepResult& r = e.result;
  const StepPartTime& off = r[StepPart::kOffload];
  EXPECT_NEAR(off.total.s(), 4'567'597'056.0 / 63e9, 1e-6);
  const double x = 285'474'816.0 / 63e9;
  const double y_fwd = (r.forward.total() - r.forward.logits_and_loss).value() / 32;
  const double y_bwd =
      (r.backward.total() - r.backward.logits_and_loss + r.recompute.total()).value() / 32;
  EXPECT_NEAR(off.exposed.s(), 8 * (std::max(0.0, x - y_fwd) + std::max(0.0, x - y_bwd)), 1e-9);
  // An 8B block at 2048 tokens computes its forward in less than its copy takes: PCIe-bound.
  EXPECT_GT(off.exposed.s(), 0.0);
  ASSERT_EQ(r.host_traffic.size(), 2u);
  EXPECT_NE(r.host_traffic[0].level.find("PCIe"), std::string::npos);
  EXPECT_NEAR(r.host_traffic[0].size_per_step.count(), 2'283'798'528.0, 1);
  EXPECT_FALSE(r.caveats.empty());
  // Nothing else of the step moves.
  const Evaluated none = Evaluate({});
  EXPECT_NEAR(r.step.s() - none.result.step.s(), off.exposed.s(), 1e-12);
}

}  // namespace
}  // namespace strata::step_sac_offload_test
