// optimizer.name muon in the step: the Newton-Schulz iterations and the one momentum buffer.
// Keller Jordan's Muon (KellerJordan/Muon muon.py, zeropower_via_newtonschulz5, steps=5),
// Moonlight (arXiv 2502.16982, "Distributed Muon") and megatron-core's TensorParallelMuon
// (NVIDIA/Megatron-LM core_v0.16.1 megatron/core/optimizer/muon.py: num_ns_steps = 5, under the
// layer-wise distributed optimizer; muon_tp_mode "blockwise" by default: each TP rank
// orthogonalises its own shard, sim/muon_cost.h) all run 5 iterations of
//     A = X X^T;  B = b A + c A A;  X = a X + B X
// on the m x n momentum (m <= n, transposed when taller): 2 m^2 n + 2 m^3 + 2 m^2 n =
// 4 m^2 n + 2 m^3 FLOP each. Before, `step` priced Muon as Adam (two moments, no iteration).
//
// Llama-3.1-8B under megatron-core, per layer and iteration (its shapes, sim/muon_cost.h:
// linear_qkv split into q, k, v by muon_split_qkv; linear_fc1 one fused 2 f x h matrix, nothing
// splits it: NVIDIA/Megatron-LM core_v0.16.1 megatron/core/optimizer/muon.py:136-159, 249-258):
// q, o (4096 x 4096) 6 x 4096^3 = 412,316,860,416 each; k, v (1024 x 4096) 4 x 1024^2 x 4096 +
// 2 x 1024^3 = 19,327,352,832 each; linear_fc1 (28,672 x 4,096) 4 x 4096^2 x 28672 + 2 x 4096^3
// = 2,061,584,302,080; linear_fc2 (4,096 x 14,336) 4 x 4096^2 x 14336 + 2 x 4096^3 =
// 1,099,511,627,776: 4,024,384,356,352; x 5 iterations x 32 layers = 643,901,497,016,320 FLOP a
// step. Before, gate and up were priced as two 14,336 x 4,096 matrices (4,161,823,309,824 a
// layer, 665,891,729,571,840 a step), the shape transformers' modules have, not megatron-core's.
// The matrices hold 32 x 218,103,808 = 6,979,321,856 parameters (Muon's one momentum); the
// embedding, output layer and norms keep AdamW's two.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"
#include "support/golden.h"

namespace strata::step_muon_test {
namespace {

using MuonRun = testing::JobFileStep;

MuonRun Evaluate(const std::vector<std::string>& sets) {
  return testing::EvaluateJobFile(testing::TestPath("job/data/l8-dense.yaml"), sets);
}

TEST(StepMuon, NewtonSchulzAndOneMomentum) {
  const MuonRun adam = Evaluate({});
  const MuonRun muon = Evaluate({"optimizer.name=muon"});
  const StepTables& t = muon.setup.tables;
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_megatron_core, 643'901'497'016'320.0);
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_separate, 665'891'729'571'840.0);  // gate, up apart
  EXPECT_DOUBLE_EQ(t.muon_matrix_params, 6'979'321'856.0);
  // The time: each TP rank's shard at the bf16 peak x the GEMM efficiency of its X X^T shape,
  // the whole model's over DP 32 (64 H100 / TP 2; layer-wise distributed). megatron-core's
  // default blockwise mode orthogonalises the TP 2 shards: q 2,048 x 4,096 and o 4,096 x 2,048
  // (q's rows, o's columns halved), k, v 512 x 4,096, linear_fc1 14,336 x 4,096 (its 28,672
  // rows halved), linear_fc2 4,096 x 7,168.
  const KernelEfficiency& e = t.efficiency;
  const double peak = t.peak.flop_per_s();
  auto seconds = [&](double m, double n) {
    return 5 * (4 * m * m * n + 2 * m * m * m) / (peak * GemmEfficiency(e, m, m, n));
  };
  const double per_layer =
      2 * seconds(2048, 4096) + 2 * seconds(512, 4096) + seconds(4096, 14336) + seconds(4096, 7168);
  const double ns = 32 * per_layer / 32;
  // Its FLOP: per layer 5 x (2 x (4 x 2048^2 x 4096 + 2 x 2048^3) (q, o) + 2 x (4 x 512^2 x 4096
  // + 2 x 512^3) (k, v) + 4 x 4096^2 x 14336 + 2 x 4096^3 (linear_fc1) + 4 x 4096^2 x 7168 +
  // 2 x 4096^3 (linear_fc2)) = 5 x (171,798,691,840 + 9,126,805,504 + 1,099,511,627,776 +
  // 618,475,290,624) = 9,494,562,078,720, x 32 layers / DP 32. Before (gate, up, down three
  // 4,096 x 7,168 shards): 10,181,756,846,080.
  EXPECT_DOUBLE_EQ(muon.result.muon_flop, 9'494'562'078'720.0);
  EXPECT_NEAR(muon.result.muon_newton_schulz.s(), ns, 1e-12);
  EXPECT_GT(ns, 0.01);  // over 10 ms a step: not negligible
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

// Each pipeline rank orthogonalises its own stage's matrices, and the slowest stage's ends the
// step. Llama-3.1-8B over PP 4 with 5, 8, 8 and 11 layers (megatron-core's first/last stage
// counts), TP 1, DP 2: the last rank holds 11 layers of the whole matrices (q, o 4,096 x 4,096;
// k, v 1,024 x 4,096; linear_fc1 28,672 x 4,096; linear_fc2 4,096 x 14,336) and the output
// layer, so it ends the step with 11 layers' Newton-Schulz over DP 2. Before, every rank was
// priced on the model's mean, 32 / 4 = 8 layers.
TEST(StepMuon, TheLastStagesOwnMatricesEndTheStep) {
  const std::string job = std::string(testing::kLlama8Pp4Uneven) + "optimizer: {name: muon}\n";
  const std::optional<StepResult> r = testing::EvaluateJobText(job);
  ASSERT_TRUE(r.has_value());
  auto spec = ParseJobSpec(job, "j.yaml");
  ASSERT_TRUE(spec.ok());
  auto resolved = ResolveJob(*spec);
  ASSERT_TRUE(resolved.ok());
  auto setup = PrepareStep(*resolved);
  ASSERT_TRUE(setup.ok());
  const StepTables& t = setup->tables;
  const KernelEfficiency& e = t.efficiency;
  const double peak = t.peak.flop_per_s();
  auto seconds = [&](double m, double n) {
    return 5 * (4 * m * m * n + 2 * m * m * m) / (peak * GemmEfficiency(e, m, m, n));
  };
  const double per_layer = 2 * seconds(4096, 4096) + 2 * seconds(1024, 4096) +
                           seconds(4096, 28672) + seconds(4096, 14336);
  EXPECT_EQ(r->optimizer_rank, 3);
  EXPECT_NEAR(r->muon_newton_schulz.s(), 11 * per_layer / 2, 1e-12);
  // 11 layers x 4,024,384,356,352 x 5 FLOP (the per-layer figure above) / DP 2.
  EXPECT_DOUBLE_EQ(r->muon_flop, 11 * 5 * 4'024'384'356'352.0 / 2);
}

}  // namespace
}  // namespace strata::step_muon_test
