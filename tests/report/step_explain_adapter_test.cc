// `step --explain` on the shipped QLoRA job (Llama-3.1-8B, NF4 base, LoRA r 16 on every linear,
// one H200, micro batch 4 x 2,048 = 8,192 tokens, full recompute, hf-trainer): every term the
// step adds has its own line, and each line's numbers give the value it prints.
//
// By hand (docs/formulas.md, "Adapters (LoRA, QLoRA, DoRA)"):
//   adapters: 2 r (d_in + d_out) per adapted linear and token: q, o 2 x 16 x 8192; k, v
//     2 x 16 x 5120; gate, up, down 2 x 16 x 18432: 2,621,440 a layer, x 32 = 83,886,080 FLOP
//     per token, x 8,192 tokens = 687,194,767,360 FLOP a forward.
//   NF4 dequantisation: (4 + 8/64 + 32/(64 x 256)) / 8 + 2 = 2.51587 B per base weight (read the
//     packed weight and its constants, write a bf16 copy); 32 x 218,103,808 = 6,979,321,856 base
//     GEMM weights (the output layer is not quantised): 17.559e9 B / (4,800 GB/s x 0.70) =
//     5.226 ms a pass.
//   the fused memory-bound ops: (2,621,440 + 3,407,872) B/token x 8,192 / 3.36e12 B/s =
//     14.700 ms; the forward's memory-bound row is 14.700 + 5.226 = 19.93 ms.
// Before, the dequantisation and the adapters had no line (the memory-bound formula gave 14.7
// ms and printed 19.9), the backward read "2x the forward's GEMMs" (a frozen base computes its
// data gradient only) and the hf-trainer's eager-op time was "exposed TP/CP/EP/PP" on one GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "strata/eval/evaluation.h"
#include "strata/report/step_explain.h"
#include "support/golden.h"

namespace strata {
namespace {

std::map<std::string, std::string> Explained(const std::string& job_name,
                                             const std::vector<std::string>& sets) {
  JobRequest request;
  request.job = job_name;
  request.overrides = sets;
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok());
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
  EXPECT_TRUE(e.ok()) << e.error().Format();
  std::map<std::string, std::string> out;
  for (const StepFormula& f : ExplainStep(e->setup->tables, e->setup->layout, *e->step)) {
    out[f.name] = f.formula;
  }
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StepExplainAdapter, QloraTermsHaveTheirOwnFormulas) {
  const auto lines = Explained("llama-3.1-8b-qlora-h200x1", {});
  ASSERT_TRUE(lines.contains("adapter GEMMs (LoRA A and B, r = 16, forward)"));
  EXPECT_TRUE(Has(lines.at("adapter GEMMs (LoRA A and B, r = 16, forward)"), "6.872e+11 FLOP"))
      << lines.at("adapter GEMMs (LoRA A and B, r = 16, forward)");
  const std::string dequant = "QLoRA dequantisation of the NF4 base weights (each pass)";
  ASSERT_TRUE(lines.contains(dequant));
  EXPECT_TRUE(Has(lines.at(dequant), "= 2.516 B per base weight x 6.979e+09 weights"))
      << lines.at(dequant);
  EXPECT_TRUE(Has(lines.at(dequant), "= 5.2 ms a pass")) << lines.at(dequant);
  const std::string& memory = lines.at("memory-bound operations (forward)");
  EXPECT_TRUE(Has(memory,
                  "(2621440 B/token + 3407872 B/token / 1 (TP)) x 8192 tokens / "
                  "(4800 GB/s x 0.70) + QLoRA dequantisation 5.2 ms = 19.9 ms"))
      << memory;
  const std::string& mb = lines.at("one micro batch");
  EXPECT_TRUE(Has(mb, "(1x the frozen base's GEMMs (data gradients only) + 2x the adapters'"))
      << mb;
  // One GPU: no TP, CP, EP or PP traffic; the 125 ms are the framework's.
  EXPECT_TRUE(Has(mb, "+ exposed TP/CP/EP/PP 0.0 ms")) << mb;
  EXPECT_TRUE(Has(mb, "+ framework (host, eager ops, attention backend, fetches) 125.3 ms")) << mb;
}

// A `frozen:` module keeps its data gradient and drops its weight gradient: the backward's
// GEMMs are not "2x the forward's" for it.
TEST(StepExplainAdapter, FrozenModulesSayTheirBackwardIsOnce) {
  // Llama-3.1-8B, TP2 SP on 64 H100 (the audit's l8-dense.yaml).
  const auto lines = Explained(testing::TestPath("job/data/l8-dense.yaml"), {"frozen=[attention]"});
  const std::string& mb = lines.at("one micro batch");
  EXPECT_TRUE(Has(mb, "1x those of the frozen attention: no weight gradient")) << mb;
}

}  // namespace
}  // namespace strata
