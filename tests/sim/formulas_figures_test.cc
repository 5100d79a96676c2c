// docs/formulas.md quotes the reference job's step figures. Each quoted figure is marked
// <!--step:KEY--> just before it (invisible when rendered); this test recomputes every marked
// figure with the model, at the decimals the document gives, so a quoted figure cannot drift
// from the code. UPDATE_GOLDEN=1 rewrites the figures in place.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"
#include "support/golden.h"

namespace strata {
namespace {

using testing::LoadReferenceStep;

std::map<std::string, double> ReferenceFigures() {
  auto ref = LoadReferenceStep();
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  EXPECT_TRUE(r.ok()) << r.error().Format();
  const double m = static_cast<double>(ref.setup.layout.micro_batches);
  auto exposed = [&](StepPart p) { return (*r)[p].exposed.s(); };
  return {
      {"forward_s", r->forward.total().s()},
      {"backward_s", r->backward.total().s()},
      {"recompute_s", r->recompute.total().s()},
      {"expert_gemm_s",
       (r->forward.expert_gemm + r->backward.expert_gemm + r->recompute.expert_gemm).value()},
      {"skew_s", exposed(StepPart::kMoeImbalance) / m},
      {"micro_batch_s", r->micro_batch.s()},
      {"straggler_s", exposed(StepPart::kStraggler)},
      {"straggler_pct", 100 * exposed(StepPart::kStraggler) / r->step.s()},
      {"optimizer_ms", 1e3 * exposed(StepPart::kOptimizer)},
      {"part_forward_s", exposed(StepPart::kForward)},
      {"part_backward_s", exposed(StepPart::kBackward)},
      {"part_recompute_s", exposed(StepPart::kRecompute)},
      {"part_skew_s", exposed(StepPart::kMoeImbalance)},
      {"part_ep_s", exposed(StepPart::kEp)},
      {"part_straggler_s", exposed(StepPart::kStraggler)},
      {"part_dp_grad_s", exposed(StepPart::kDpGrad)},
      {"part_dp_param_s", exposed(StepPart::kDpParam)},
      {"part_edp_grad_s", exposed(StepPart::kExpertDpGrad)},
      {"part_edp_param_s", exposed(StepPart::kExpertDpParam)},
      {"part_optimizer_s", exposed(StepPart::kOptimizer)},
      {"step_s", r->step.s()},
      {"measured_gap_pct", 100 * (r->step.s() - 120.0) / 120.0},
      {"mfu_pct", 100 * r->mfu},
  };
}

// The figure after each marker, rewritten from the model at the decimals the document uses.
TEST(FormulasFigures, QuotedReferenceFiguresAreTheModels) {
  const std::map<std::string, double> figures = ReferenceFigures();
  const std::string doc = testing::ReadTestFile("../docs/formulas.md");
  const std::regex marker(R"(<!--step:([a-z_0-9]+)-->([+-]?[0-9][0-9,]*(\.[0-9]+)?))");
  std::string rewritten;
  size_t last = 0, found = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), marker); it != std::sregex_iterator();
       ++it) {
    const std::smatch& match = *it;
    const std::string key = match[1].str();
    const auto figure = figures.find(key);
    ASSERT_NE(figure, figures.end()) << "docs/formulas.md marks an unknown figure: " << key;
    const std::string quoted = match[2].str();
    const size_t dot = quoted.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(quoted.size() - dot - 1);
    std::string value = fmt::format("{:.{}f}", figure->second, decimals);
    if (quoted[0] == '+' && figure->second >= 0) value = "+" + value;
    rewritten += doc.substr(last, static_cast<size_t>(match.position(0)) - last);
    rewritten += fmt::format("<!--step:{}-->{}", key, value);
    last = static_cast<size_t>(match.position(0) + match.length(0));
    ++found;
  }
  rewritten += doc.substr(last);
  // Every figure of the table is quoted somewhere: a marker lost in an edit fails here.
  EXPECT_GE(found, figures.size());
  EXPECT_TRUE(testing::MatchesGolden("../docs/formulas.md", rewritten));
}

}  // namespace
}  // namespace strata
