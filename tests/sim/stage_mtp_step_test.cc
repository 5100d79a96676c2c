// The MTP block's compute is priced on the stage that holds it (issue 27): megatron-core builds
// the MultiTokenPredictionBlock after the decoder, on the stage with the output layer unless a
// pipeline layout places it ('m'), and a stage holding it can become the one that sets the pace.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_model.h"

namespace strata::stage_mtp_step_test {
namespace {

StepSetup LoadSetup(const std::string& name, const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(name, sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  return *setup;
}

double GemmFlop(const StepTables& t) {
  double sum = 0;
  for (const GemmGroup& g : t.gemms) sum += g.flop_per_token;
  return sum;
}

// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml: rank 14 holds 2 MoE layers and the MTP
// block (stage_composition_test.cc). DeepSeek-V3's MTP block, forward GEMM FLOP per token by
// hand (h 7168, V 129280, 2 FLOP a multiply-add):
//   eh_proj 2h -> h:         2 x 14336 x 7168                                 =   205,520,896
//   MLA projections:         2 x (7168 x 1536 + 1536 x 128 x 192 + 7168 x 576
//                                 + 512 x 128 x 256 + 128 x 128 x 7168)        =   374,210,560
//   MoE, 8 routed + 1 shared of 2048: 2 x 3 x 7168 x 2048 x 9                 =   792,723,456
//   router over 256 experts: 2 x 7168 x 256                                   =     3,670,016
//   its output layer: 2 x 7168 x 129280                                       = 1,853,358,080
//   total                                                                     = 3,229,483,008
// Its core attention is one more MLA layer's: rank 14 attends as 3 of the 61 decoder layers do.
// Its cross entropy is a second one over the vocabulary: rank 14 has none of its own (the loss
// is on rank 15), so it carries exactly one.
TEST(StageMtpStep, DeepSeekV3MtpStageCarriesTheBlock) {
  const StepSetup setup = LoadSetup("deepseek-v3-pp16-vpp2-layout-h800x1024");
  const StepTables& t = setup.tables;
  const std::vector<StageComposition> stages =
      StageCompositions(setup.layout.layout, t.layer_kinds, t.mtp_layers);
  ASSERT_EQ(stages[14].mtp_layers, 1);
  StageComposition without = stages[14];
  without.mtp_layers = 0;
  const StepTables with_block = StageTables(t, stages[14]);
  const StepTables no_block = StageTables(t, without);
  EXPECT_NEAR(GemmFlop(with_block) - GemmFlop(no_block), 3229483008.0, 1.0);
  EXPECT_NEAR(with_block.attention_flop_per_token / t.attention_flop_per_token, 3.0 / 61.0, 1e-12);
  EXPECT_DOUBLE_EQ(with_block.loss_bytes_per_vocab_entry, t.loss_bytes_per_vocab_entry);
  EXPECT_DOUBLE_EQ(no_block.loss_bytes_per_vocab_entry, 0.0);
  // Rank 15 holds the output layer, not the block: one cross entropy and the decoder's own
  // output layer (2 x 7168 x 129280 FLOP per token), no eh_proj.
  const StepTables rank15 = StageTables(t, stages[15]);
  EXPECT_DOUBLE_EQ(rank15.loss_bytes_per_vocab_entry, t.loss_bytes_per_vocab_entry);
  for (const GemmGroup& g : rank15.gemms) EXPECT_NE(g.module, ModuleKind::kMtp);
}

// A 4-stage toy of the same model: PP 4, VPP 2, "Et*9|t*9|t*9|t*9|t*9|t*8|t*8,m|L": virtual
// stage k on rank k % 4, so rank 0 holds the embedding and layers 0-8, 36-44 (3 dense + 15 MoE),
// rank 1 layers 9-17, 45-52 (17 MoE), rank 2 layers 18-26, 53-60 and the MTP block (17 MoE + the
// block), rank 3 layers 27-35 and the output layer (9 MoE). Rank 2 runs everything rank 1 runs
// plus a MoE layer (the block's own), eh_proj and the block's output layer and loss, and at least
// as much as rank 0 (18 MoE-sized layers against 15 MoE + 3 dense of the same GEMM FLOP, 3 x 7168 x
// 18432 = 9 x 3 x 7168 x 2048, without their all-to-alls): rank 2 sets the pace. Without the
// block priced, rank 2 was rank 1's twin, and rank 1 (priced first) set the pace.
TEST(StageMtpStep, MtpStageBecomesCritical) {
  const StepSetup setup =
      LoadSetup("deepseek-v3-pp16-vpp2-layout-h800x1024",
                {"parallel.pp=4", "parallel.pipeline_layout=Et*9|t*9|t*9|t*9|t*9|t*8|t*8,m|L"});
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok());
  auto comm = CollectiveModel::Create(setup.job.cluster, *links);
  ASSERT_TRUE(comm.ok());
  auto r = EvaluateStep(setup.tables, setup.layout, *comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->critical_stage.composition.rank, 2);
  EXPECT_EQ(r->critical_stage.composition.mtp_layers, 1);
  ASSERT_EQ(r->stage_times.size(), 4u);
  for (const StepResult::StageTime& s : r->stage_times) {
    if (s.stage.rank != 2) {
      EXPECT_LT(s.micro_batch.s(), r->micro_batch.s()) << s.stage.rank;
    }
  }
}

}  // namespace
}  // namespace strata::stage_mtp_step_test
