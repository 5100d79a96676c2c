// Each pipeline rank's data-parallel sync is its own (issue 27): a rank reduces the gradients of
// its own parameters (the embedding's rank and the output layer's hold far more than the model's
// mean per stage), behind its own last backward, and under 1F1B the first rank's last backward
// ends last, so its sync is what the step waits for.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_model.h"

namespace strata::stage_grad_sync_step_test {
namespace {

StepSetup LoadSetup(const std::string& name) {
  auto spec = LoadJobSpec(name);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  return *setup;
}

// DeepSeek-V3's parameters by hand (h 7168, V 129280):
//   MLA: 7168 x 1536 + 1536 (q norm) + 1536 x 128 x 192 + 7168 x 576 + 512 (kv norm)
//        + 512 x 128 x 256 + 128 x 128 x 7168                              =    187,107,328
//   a dense layer: MLA + 2 x 7168 norms + 3 x 7168 x 18432                  =    583,483,392
//   a MoE layer, non-expert: MLA + norms + router 256 x 7168 + shared 3 x 7168 x 2048
//                                                                          =    232,996,864
//   its routed experts: 256 x 3 x 7168 x 2048                              = 11,274,289,152
//   embedding = output layer: 7168 x 129280                                =    926,679,040
//   MTP block, non-expert: eh_proj 2 x 7168^2 + 2 x 7168 norms + a MoE layer + a final norm
//                                                                          =    335,778,816
//   all non-expert: 3 dense + 58 MoE + embedding + output + final norm 7168 + MTP
//                                                                          = 17,453,412,352
// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml, PP 16: the mean stage holds
// 17,453,412,352 / 16 non-expert parameters.
//   rank 0 (3 dense + 2 MoE + embedding): 3,143,122,944 x 16 / 17,453,412,352 = 2.88138
//   rank 1 (4 MoE):                         931,987,456 x 16 / ...            = 0.854377
//   rank 14 (2 MoE + MTP block):            801,772,544 x 16 / ...            = 0.735006
// Routed experts: 58 decoder MoE layers + the MTP block's: rank 1 holds 4 of 59 (x 16 =
// 1.08475), rank 0 2 of 59 (0.542373), rank 14 3 of 59 (0.813559). (The router's 256 bias
// terms, where counted, move these by under 1e-6.)
TEST(StageGradSync, DeepSeekV3StagesHoldTheirOwnParameters) {
  const StepSetup setup = LoadSetup("deepseek-v3-pp16-vpp2-layout-h800x1024");
  const StepTables& t = setup.tables;
  const ParallelLayout& l = setup.layout.layout;
  const std::vector<StageComposition> stages = StageCompositions(l, t.layer_kinds, t.mtp_layers);
  const auto [w0, e0] = StageParamWeights(t, l, stages[0]);
  const auto [w1, e1] = StageParamWeights(t, l, stages[1]);
  const auto [w14, e14] = StageParamWeights(t, l, stages[14]);
  EXPECT_NEAR(w0, 3143122944.0 * 16 / 17453412352.0, 1e-5);
  EXPECT_NEAR(w1, 931987456.0 * 16 / 17453412352.0, 1e-5);
  EXPECT_NEAR(w14, 801772544.0 * 16 / 17453412352.0, 1e-5);
  EXPECT_NEAR(e0, 2.0 * 16 / 59, 1e-9);
  EXPECT_NEAR(e1, 4.0 * 16 / 59, 1e-9);
  EXPECT_NEAR(e14, 3.0 * 16 / 59, 1e-9);
  // Every parameter is on some rank once: the weights sum to PP.
  double non_expert = 0, expert = 0;
  for (const StageComposition& s : stages) {
    const auto [w, e] = StageParamWeights(t, l, s);
    non_expert += w;
    expert += e;
  }
  EXPECT_NEAR(non_expert, 16.0, 1e-9);
  EXPECT_NEAR(expert, 16.0, 1e-9);
}

// The step waits for rank 0's sync: its last backward ends last and it holds 2.88 / 0.854 =
// 3.37 x the non-expert gradients of rank 1, the critical rank, whose traffic the step lists.
// The DP gradient row is rank 0's (before: rank 1's, the model's mean bytes x its buckets).
TEST(StageGradSync, DeepSeekV3FirstRankEndsTheStep) {
  const std::optional<StepResult> r =
      testing::EvaluateJobFile("deepseek-v3-pp16-vpp2-layout-h800x1024").result;
  EXPECT_EQ(r->critical_stage.composition.rank, 1);
  EXPECT_EQ(r->grad_sync_rank, 0);
  EXPECT_DOUBLE_EQ(r->grad_sync_lead.s(), 0.0);
  double rank1_dp_grad = 0;
  for (const PricedTraffic& p : r->traffic) {
    if ((p.item.group == GroupKind::kDp || p.item.group == GroupKind::kDpCp) &&
        p.item.op == CollectiveOp::kReduceScatter)
      rank1_dp_grad += p.time_per_step.s();
  }
  ASSERT_GT(rank1_dp_grad, 0);
  EXPECT_GT((*r)[StepPart::kDpGrad].total.s(), 2 * rank1_dp_grad);
}

}  // namespace
}  // namespace strata::stage_grad_sync_step_test
