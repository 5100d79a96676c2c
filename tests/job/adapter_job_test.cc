// The job file's adapter section: what parses, and the full error for malformed input.
#include <gtest/gtest.h>

#include <string>

#include "strata/job/job_spec.h"

namespace strata::adapter_job_test {
namespace {

constexpr const char* kHead =
    "model: llama-3.1-8b\n"
    "cluster: {gpu: H200, gpus_per_node: 1, nodes: 1}\n"
    "parallel: {tp: 1}\n"
    "batch: {micro_batch: 1, global_batch: 1}\n"
    "sequence: {max_tokens: 2048}\n";

TEST(AdapterJob, ParsesEveryField) {
  auto job = ParseJobSpec(std::string(kHead) +
                              "adapter:\n"
                              "  kind: qlora\n"
                              "  rank: 16\n"
                              "  alpha: 32\n"
                              "  targets: [q_proj, v_proj]\n"
                              "  dropout: 0.05\n",
                          "j.yaml");
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->adapter.kind, AdapterKind::kQlora);
  EXPECT_EQ(job->adapter.rank, 16);
  EXPECT_DOUBLE_EQ(job->adapter.alpha, 32.0);
  EXPECT_EQ(job->adapter.targets, (std::vector<std::string>{"q_proj", "v_proj"}));
  EXPECT_DOUBLE_EQ(job->adapter.dropout, 0.05);
  // An adapter freezes the whole base: the `frozen:` rule answers for every module kind.
  EXPECT_TRUE(IsFrozen(*job, ModuleKind::kAttention));
  EXPECT_TRUE(IsFrozen(*job, ModuleKind::kEmbedding));
  // Without one, alpha defaults to the rank and nothing is frozen.
  auto plain = ParseJobSpec(kHead, "j.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->adapter.on());
  EXPECT_FALSE(IsFrozen(*plain, ModuleKind::kAttention));
  auto no_alpha = ParseJobSpec(
      std::string(kHead) + "adapter: {kind: lora, rank: 8, targets: [all-linear]}\n", "j.yaml");
  ASSERT_TRUE(no_alpha.ok()) << no_alpha.error().Format();
  EXPECT_DOUBLE_EQ(no_alpha->adapter.alpha, 8.0);
}

struct BadCase {
  const char* name;
  const char* adapter;   // the adapter section, from line 6 of the file
  const char* expected;  // Error::Format()
};

TEST(AdapterJob, MalformedInputIsRefusedWithItsPlace) {
  const BadCase cases[] = {
#include "adapter_job_errors.inc"
  };
  for (const BadCase& c : cases) {
    auto job = ParseJobSpec(std::string(kHead) + c.adapter, "j.yaml");
    ASSERT_FALSE(job.ok()) << c.name;
    EXPECT_EQ(job.error().Format(), c.expected) << c.name;
  }
}

}  // namespace
}  // namespace strata::adapter_job_test
