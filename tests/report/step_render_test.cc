// The step's text, JSON and explain output, rendered from one evaluation (report/step_*.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/eval/evaluation.h"
#include "strata/report/step_explain.h"
#include "strata/report/step_json.h"
#include "strata/report/step_text.h"
#include "support/golden.h"

namespace strata::step_render_test {
namespace {

Evaluation Evaluate(const std::string& job_file, const std::vector<std::string>& sets,
                    const std::string& model = "") {
  JobRequest request;
  request.job = job_file;
  request.model = model;
  request.overrides = sets;
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok());
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
  EXPECT_TRUE(e.ok()) << e.error().Format();
  return *std::move(e);
}

// The reference job's EP8 dispatch: 40 layers x 2 (dispatch, combine) x 3 passes (forward,
// recompute, backward) x 2 micro batches = 480 all-to-alls per step.
TEST(StepRender, ExplainAndTimelineSubstituteTheNumbers) {
  const Evaluation e = Evaluate("qwen3.6-35b-a3b-sft-h20x40", {});
  bool found = false;
  for (const StepFormula& f : ExplainStep(e.setup->tables, e.setup->layout, *e.step)) {
    if (f.name.find("ep: MoE token dispatch") != std::string::npos) {
      found = true;
      EXPECT_NE(f.formula.find("480 calls per step"), std::string::npos) << f.formula;
    }
  }
  EXPECT_TRUE(found);
  const auto timeline = MicroBatchTimeline(e.setup->layout, *e.step);
  ASSERT_GE(timeline.size(), 4u);
  EXPECT_NE(timeline.front().find("forward compute"), std::string::npos);
}

// The timeline's framework phase lists the framework costs the job has, not a fixed list: under
// megatron-core (eager clamp, no FSDP2, no fetch hooks, no per-expert loop) the label names the
// unfused element-wise ops and no FSDP2 copy; torchtitan under FSDP2 adds
// the copy-out. Before, every job's label read "(host, loops, attention backend, eager ops, FSDP2
// copies)".
TEST(StepRender, TimelineNamesTheFrameworkCostsTheJobHas) {
  auto framework_line = [](const Evaluation& e) {
    for (const std::string& line : MicroBatchTimeline(e.setup->layout, *e.step)) {
      if (line.find("framework overhead") != std::string::npos) return line;
    }
    return std::string();
  };
  // The reference job with GPT-OSS-120B, whose clamped GLU megatron-core runs in eager code.
  const std::string ref = "qwen3.6-35b-a3b-sft-h20x40";
  const Evaluation mc = Evaluate(ref, {"framework.name=megatron-core"}, "gpt-oss-120b");
  ASSERT_GT(mc.step->framework.eager_elementwise.s(), 0);
  ASSERT_EQ(mc.step->framework.fsdp2_copy_out.s(), 0);
  const std::string mc_line = framework_line(mc);
  EXPECT_NE(mc_line.find("unfused elementwise ops"), std::string::npos) << mc_line;
  EXPECT_EQ(mc_line.find("FSDP2"), std::string::npos) << mc_line;
  EXPECT_EQ(mc_line.find("loops"), std::string::npos) << mc_line;

  const Evaluation tt =
      Evaluate(ref, {"framework.name=torchtitan", "sharding.mode=fsdp2"}, "gpt-oss-120b");
  ASSERT_GT(tt.step->framework.fsdp2_copy_out.s(), 0);
  const std::string tt_line = framework_line(tt);
  EXPECT_NE(tt_line.find("FSDP2 copy-out"), std::string::npos) << tt_line;
}

// The last "= X ms" of a formula: the time it arrives at.
double LastMs(const std::string& formula) {
  const size_t end = formula.rfind(" ms");
  const size_t start = formula.rfind("= ", end);
  return std::stod(formula.substr(start + 2, end - start - 2));
}

// --explain prints the model's own GEMM terms. Uneven stages (40 layers, PP 4, 4 on the first
// and last stage): the middle stages' 16 layers set the pace. This hybrid's layers differ
// (full attention every 4th layer): rank 1 holds layers 4-19, 4 full-attention (7, 11, 15, 19)
// and 12 Gated DeltaNet, and each GEMM line is those layers' own term; the dense and router
// lines add up to the forward's dense GEMM time the breakdown shows (to the 0.1 ms each line
// prints). Before, explain redid the arithmetic with an even "/ 4 (PP)": 0.25 of the stack,
// 5/8 of what the model priced; then it cut the stack's terms to 0.4, as if every layer were
// the average one.
TEST(StepRender, ExplainPrintsTheCriticalStagesShareOfTheGemms) {
  const Evaluation e =
      Evaluate("",
               {"cluster=h20-5x8", "parallel.tp=1", "parallel.ep=1", "parallel.pp=4",
                "parallel.first_stage_layers=4", "parallel.last_stage_layers=4",
                "batch.micro_batch=1", "batch.global_batch=80", "sequence.max_tokens=4096"},
               "qwen3.6-35b-a3b");
  EXPECT_DOUBLE_EQ(e.step->critical_stage.layers, 0.4);
  EXPECT_EQ(e.step->critical_stage.composition.rank, 1);
  double dense_ms = 0;
  int lines = 0;
  for (const StepFormula& f : ExplainStep(e.setup->tables, e.setup->layout, *e.step)) {
    if (f.name.starts_with("dense GEMMs") || f.name.starts_with("router GEMMs")) {
      EXPECT_NE(f.formula.find("the critical stage's own layers"), std::string::npos) << f.formula;
      dense_ms += LastMs(f.formula);
      ++lines;
    }
  }
  ASSERT_GE(lines, 2);
  EXPECT_NEAR(dense_ms, e.step->forward.dense_gemm.ms(), 0.05 * lines);
}

// --json names torchtitan's selective_ac_option and megatron-core's offloaded layers; a job
// without them keeps its JSON as before.
TEST(StepRender, JsonNamesTheRecomputeOptionAndTheOffloadedLayers) {
  const std::string h200 = testing::TestPath("memory/validation/h200-03.yaml");
  const Evaluation op =
      Evaluate(h200, {"recompute.granularity=selective", "recompute.selective_ac_option=op"});
  const Evaluation none = Evaluate(h200, {});
  const Evaluation offload = Evaluate(h200, {"activation_offload.num_layers=8"});
  EXPECT_EQ(StepToJson(*op.setup, *op.step)["job"]["selective_ac_option"], "op");
  EXPECT_FALSE(StepToJson(*none.setup, *none.step)["job"].contains("selective_ac_option"));
  EXPECT_EQ(StepToJson(*offload.setup, *offload.step)["job"]["activation_offload_layers"], 8);
}

// The reference job's text puts the course's measured 120 s beside the prediction; another
// job's does not.
TEST(StepRender, OnlyTheReferenceJobIsComparedWithTheCourse) {
  const Evaluation e = Evaluate("qwen3.6-35b-a3b-sft-h20x40", {});
  EXPECT_NE(RenderStepText(e, false, true).find("the course measured 120 s per step"),
            std::string::npos);
  EXPECT_EQ(RenderStepText(e, false, false).find("the course measured"), std::string::npos);
}

// A dense model has no expert-DP group: Llama-3.1-70B at TP8 PP2 on 64 GPUs is DP4, and the
// step's header says so without an "(expert-DP 32)" that no rank forms (the memory view never
// printed it; the step, map, rl and report headers did).
TEST(StepRender, DenseModelShowsNoExpertDpGroup) {
  const Evaluation e =
      Evaluate("",
               {"cluster=h100-8x8-ib400", "parallel.tp=8", "parallel.pp=2", "parallel.ep=1",
                "batch.micro_batch=1", "batch.global_batch=64", "sequence.max_tokens=4096"},
               "llama-3.1-70b");
  const std::string text = RenderStepText(e, false, false);
  EXPECT_NE(text.find("layout: TP8 PP2 VPP1 CP1 EP1 ETP1 DP4, SP off"), std::string::npos) << text;
  EXPECT_EQ(text.find("expert-DP"), std::string::npos);
}

}  // namespace
}  // namespace strata::step_render_test
