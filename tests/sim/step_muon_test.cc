// optimizer.name muon in the step: the Newton-Schulz iterations and the one momentum buffer.
// Keller Jordan's Muon (KellerJordan/Muon muon.py, zeropower_via_newtonschulz5, steps=5),
// Moonlight (arXiv 2502.16982, "Distributed Muon") and megatron-core's TensorParallelMuon
// (NVIDIA/Megatron-LM core_v0.16.0 megatron/core/optimizer/muon.py: num_ns_steps = 5, mode
// "duplicated": every TP rank orthogonalises the whole matrix, under the layer-wise distributed
// optimizer) all run 5 iterations of
//     A = X X^T;  B = b A + c A A;  X = a X + B X
// on the m x n momentum (m <= n, transposed when taller): 2 m^2 n + 2 m^3 + 2 m^2 n =
// 4 m^2 n + 2 m^3 FLOP each. Before, `step` priced Muon as Adam (two moments, no iteration).
//
// Llama-3.1-8B, per layer and iteration: q, o (4096 x 4096) 6 x 4096^3 = 412,316,860,416 each;
// k, v (1024 x 4096) 4 x 1024^2 x 4096 + 2 x 1024^3 = 19,327,352,832 each; gate, up, down
// (4096 x 14336) 4 x 4096^2 x 14336 + 2 x 4096^3 = 1,099,511,627,776 each: 4,161,823,309,824;
// x 5 iterations x 32 layers = 665,891,729,571,840 FLOP a step (6.7e14, the audit's figure).
// The matrices hold 32 x 218,103,808 = 6,979,321,856 parameters (Muon's one momentum); the
// embedding, output layer and norms keep AdamW's two.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"
#include "support/golden.h"

namespace strata {
namespace {

using MuonRun = testing::JobFileStep;

MuonRun Evaluate(const std::vector<std::string>& sets) {
  return testing::EvaluateJobFile(testing::TestPath("job/data/l8-dense.yaml"), sets);
}

TEST(StepMuon, NewtonSchulzAndOneMomentum) {
  const MuonRun adam = Evaluate({});
  const MuonRun muon = Evaluate({"optimizer.name=muon"});
  const StepTables& t = muon.setup.tables;
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_non_expert, 665'891'729'571'840.0);
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_expert, 0);
  EXPECT_DOUBLE_EQ(t.muon_matrix_params, 6'979'321'856.0);
  // The time: each matrix at the bf16 peak x the GEMM efficiency of its X X^T shape, the whole
  // model's over DP 32 (64 H100 / TP 2; layer-wise distributed, each matrix whole).
  const KernelEfficiency& e = t.efficiency;
  const double peak = t.peak.flop_per_s();
  auto seconds = [&](double m, double n) {
    return 5 * (4 * m * m * n + 2 * m * m * m) / (peak * GemmEfficiency(e, m, m, n));
  };
  const double per_layer =
      2 * seconds(4096, 4096) + 2 * seconds(1024, 4096) + 3 * seconds(4096, 14336);
  const double ns = 32 * per_layer / 32;
  EXPECT_NEAR(muon.result.muon_newton_schulz.s(), ns, 1e-12);
  EXPECT_GT(ns, 0.02);  // tens of ms a step: not negligible
  // The optimizer's memory traffic: master 2 x 4 + gradient 2 x 4 + bf16 weight 2 B, and the
  // moments: Adam 4 x 4 B; Muon 2 x 4 B on the matrices' share, 4 x 4 B on the rest.
  const double local = muon.result.local_params;
  EXPECT_DOUBLE_EQ(local, adam.result.local_params);
  const double trainable = 8'030'261'248.0;  // Llama-3.1-8B's parameters
  const double adamw_share = 1 - 6'979'321'856.0 / trainable;
  const double hbm = t.hbm.bytes_per_s() * e.hbm_efficiency;
  EXPECT_NEAR(adam.result[StepPart::kOptimizer].total.s(), local * (8 + 16 + 8 + 2) / hbm, 1e-12);
  EXPECT_NEAR(muon.result[StepPart::kOptimizer].total.s(),
              local * (8 + 8 * (1 + adamw_share) + 8 + 2) / hbm + ns, 1e-9);
}

}  // namespace
}  // namespace strata
