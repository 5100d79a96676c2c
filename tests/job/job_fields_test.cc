// The job-file reference (docs/job-file.md) is generated from the table the parser uses, so it
// cannot drift: this test fails when the document differs from the table, and when a field's
// example value does not parse (the table would then document a field the parser does not take).
#include "strata/job/job_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "support/golden.h"

namespace strata {
namespace {

TEST(JobFields, TheDocumentIsGeneratedFromTheTable) {
  // Compared like a golden file: UPDATE_GOLDEN=1 rewrites docs/job-file.md.
  EXPECT_TRUE(testing::MatchesGolden("../docs/job-file.md", JobFieldsMarkdown()));
}

TEST(JobFields, EveryFieldsExampleParsesThroughSet) {
  // A job from a model and --set alone: cluster by its parts, the reference layout.
  const std::vector<std::string> base = {
      "cluster.gpu=H20",     "cluster.gpus_per_node=8", "cluster.nodes=5",          "parallel.ep=8",
      "batch.micro_batch=1", "batch.global_batch=80",   "sequence.max_tokens=49152"};
  for (const JobField& f : JobFields()) {
    SCOPED_TRACE(f.key);
    if (std::string(f.example).empty()) continue;  // a path: nothing portable to give
    std::vector<std::string> sets = base;
    // Fields that only mean something beside another (full-recompute settings, tokens per
    // step) get their partner, as the table's meaning column says.
    const std::string key = f.key;
    if (key == "recompute.method" || key == "recompute.num_layers") {
      sets.push_back("recompute.granularity=full");
    }
    if (key == "throughput.tokens_per_step") sets.push_back("throughput.step_time=120s");
    if (key == "recompute.modules" || key == "recompute.selective_ac_option") {
      sets.push_back("recompute.granularity=selective");
    }
    if (key == "sharding.reshard_after_forward" || key == "sharding.offload_param") {
      sets.push_back("sharding.mode=zero3");
    }
    if (key == "sharding.fsdp_units" || key == "sharding.use_orig_params" ||
        key == "sharding.sync_each_micro_batch")
      sets.push_back("sharding.mode=fsdp2");
    if (key == "sharding.runtime") {
      // FSDP1 runs FSDP's strategies, under a framework that runs PyTorch's FSDP.
      sets.push_back("sharding.mode=zero3");
      sets.push_back("framework.name=hf-trainer");
    }
    if (key == "sharding.reduce_bucket_elements" || key == "sharding.overlap_comm") {
      sets.push_back("sharding.mode=zero2");
    }
    if (key == "fp8.param_gather") sets.push_back("fp8.recipe=blockwise");
    if (key == "sequence.std_tokens") {
      sets.push_back("sequence.packing=true");
      sets.push_back("sequence.mean_tokens=5009");
    }
    if (key == "fp8.amax_history") sets.push_back("fp8.recipe=delayed");
    if (key == "cluster.shared_nodes") sets.push_back("cluster.file=h20-5x8");
    if (key.starts_with("adapter.")) {
      // kind, rank and targets are required together; the field's own example comes after.
      for (const char* partner :
           {"adapter.kind=lora", "adapter.rank=8", "adapter.targets=[q_proj]"})
        sets.push_back(partner);
    }
    sets.push_back(key + "=" + f.example);
    auto spec = BuildJobSpec("qwen3.6-35b-a3b", sets);
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
  }
}

TEST(JobFields, SetRejectsAKeyNotInTheTable) {
  auto spec = LoadJobSpec(kReferenceJobName, {"parallel.tensor=2"});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().Format().find("did you mean"), std::string::npos) << spec.error().Format();
}

}  // namespace
}  // namespace strata
