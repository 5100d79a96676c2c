// The memory fixes `strata memory` suggests when a job does not fit are layouts the job's
// framework can run (data/frameworks.yaml `parallel:`, as the planner reads it). Before, an HF
// Trainer job was told to double its pipeline parallelism, which the Trainer does not run
// ("the HF Trainer runs no pipeline, context or expert parallelism"), and to double TP on a model
// whose configuration has no tensor-parallel plan.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/eval/evaluation.h"

namespace strata::memory_fixes_scope_test {
namespace {

// Qwen2.5-32B under the HF Trainer's FSDP2 on 8 H100s, 4 micro batches: out of memory
// (every unit's fp32 gradient kept whole under no_sync, 32.8B x 4 B alone is 131 GB).
std::vector<MemoryFix> FixesOf(const std::string& framework) {
  const std::string text =
      "model: qwen2.5-32b\n"
      "cluster: {gpu: H100 SXM, gpus_per_node: 8, nodes: 1}\n"
      "framework: {name: " +
      framework +
      "}\n"
      "parallel: {tp: 1}\n"
      "sharding: {mode: fsdp2, runtime: fsdp2}\n"
      "batch: {micro_batch: 1, global_batch: 32}\n"
      "sequence: {max_tokens: 4096, packing: true}\n"
      "recompute: {granularity: full}\n"
      "precision: {params: bf16, grads: fp32}\n";
  auto spec = ParseJobSpec(text, "j.yaml");
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return {};
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return {};
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok());
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kMemory, .memory_fixes = true});
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().Format());
  if (!e.ok()) return {};
  EXPECT_FALSE(e->ledger.fits);
  return e->fixes;
}

bool Suggests(const std::vector<MemoryFix>& fixes, const std::string& change) {
  for (const MemoryFix& f : fixes) {
    if (f.change.find(change) != std::string::npos) return true;
  }
  return false;
}

TEST(MemoryFixesScope, NoPipelineOrTensorParallelismTheHfTrainerCannotRun) {
  const std::vector<MemoryFix> fixes = FixesOf("hf-trainer");
  ASSERT_FALSE(fixes.empty());
  EXPECT_FALSE(Suggests(fixes, "twice the PP"));
  // Qwen2's configuration class (model_type qwen2) is not among the models with a tensor-parallel
  // plan in data/frameworks.yaml (llama, qwen3_moe, qwen3_5_moe).
  EXPECT_FALSE(Suggests(fixes, "twice the TP"));
  EXPECT_TRUE(Suggests(fixes, "bf16 gradient buffer"));
  // torchtitan runs both (its `parallel:` entry under fsdp2): they are suggested there.
  const std::vector<MemoryFix> titan = FixesOf("torchtitan");
  EXPECT_TRUE(Suggests(titan, "twice the PP") || Suggests(titan, "twice the TP"));
}

}  // namespace
}  // namespace strata::memory_fixes_scope_test
