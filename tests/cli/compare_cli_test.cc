// strata compare as a user meets it: two job files, one job with --variant, --json, and the
// errors (nothing to compare, a bad --tokens, a misspelt key in a variant).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata {
namespace {

constexpr const char* kMegatron = "qwen3.6-35b-a3b-sft-h20x40";
constexpr const char* kZero3 = "qwen3.6-35b-a3b-sft-h20x40-zero3";

TEST(CompareCli, TheReferenceJobAgainstItsDeepSpeedZero3Version) {
  const auto r = testing::RunCli({"compare", kMegatron, kZero3, "--tokens", "1000M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want : {"days to train", "days / A", "memory peak per GPU (GB)",
                           "why B differs from A", "RoCE", "expert-DP parameter all-gather",
                           "TP1 PP1 EP8 DP40 (expert-DP 5), mb1, recompute full, zero1, bf16",
                           "TP1 PP1 EP1 DP40 (expert-DP 40), mb1, recompute full, zero3, bf16"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

// days = tokens / tokens per step x step time / 86,400 s, and the ratio is B's over A's.
TEST(CompareCli, JsonHasTheDaysAndTheirRatio) {
  const auto r = testing::RunCli({"compare", kMegatron, kZero3, "--tokens", "2.32M", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["systems"].size(), 2u);
  const auto& a = doc["systems"][0];
  const auto& b = doc["systems"][1];
  // 2.32M tokens = one step of 80 x 29,000 tokens: days = step time / 86,400.
  EXPECT_NEAR(a["steps"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(a["days"].get<double>(), a["step_time_s"].get<double>() / 86400, 1e-12);
  EXPECT_NEAR(b["days_ratio_to_first"].get<double>(),
              b["days"].get<double>() / a["days"].get<double>(), 1e-12);
  EXPECT_FALSE(b["reason"].get<std::string>().empty());
  EXPECT_GT(b["links"].size(), 0u);
}

TEST(CompareCli, OneJobWithVariants) {
  const auto r =
      testing::RunCli({"compare", kMegatron, "--variant", "sharding.mode=zero3,parallel.ep=1",
                       "--variant", "sharding.offload_optimizer=cpu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["systems"].size(), 3u);
  EXPECT_NE(doc["systems"][1]["label"].get<std::string>().find("--set sharding.mode=zero3"),
            std::string::npos);
  EXPECT_NE(doc["systems"][2]["system"].get<std::string>().find("optimizer on cpu"),
            std::string::npos);
}

// Two systems that differ only in VPP printed the same layout line ("TP8 PP8 (embedding and loss
// each counted as a layer) EP1 DP8 CP2, zero1, fp8 tensorwise") above a "pipeline bubble" line
// that VPP explains; the label now names VPP, the micro batch and the recompute choice. The
// memory row printed the 84.88 GB H100 (data/gpus.yaml usable capacity) as "85", so an OOM at
// 85.30 GB read "85.3 of 85": two decimals show the card as the ledger has it.
TEST(CompareCli, LabelsNameVppMicroBatchAndRecompute) {
  const auto r =
      testing::RunCli({"compare", testing::TestPath("fixtures/plan/mb-405b-h100x1024.yaml"),
                       "--variant", "parallel.vpp=4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string split = "TP8 PP8 (embedding and loss each counted as a layer)";
  EXPECT_NE(r.out.find(split + " VPP8 EP1 DP8 CP2, mb1, recompute none, zero1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(split + " VPP4 EP1 DP8 CP2, mb1, recompute none, zero1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" of 84.88 ("), std::string::npos) << r.out;
}

TEST(CompareCli, ExplainWritesTheDaysFormula) {
  const auto r = testing::RunCli({"compare", kMegatron, kZero3, "--explain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tokens per step ="), std::string::npos);
  EXPECT_NE(r.out.find("sharded data parallelism"), std::string::npos);
}

TEST(CompareCli, RefusesWhatItCannotCompare) {
  const auto alone = testing::RunCli({"compare", kMegatron});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("nothing to compare"), std::string::npos) << alone.err;
  const auto tokens = testing::RunCli({"compare", kMegatron, kZero3, "--tokens", "lots"});
  EXPECT_EQ(tokens.exit_code, 2);
  EXPECT_NE(tokens.err.find("--tokens"), std::string::npos) << tokens.err;
  const auto typo = testing::RunCli({"compare", kMegatron, "--variant", "sharding.mdoe=zero3"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("sharding.mode"), std::string::npos) << typo.err;
  const auto missing = testing::RunCli({"compare", kMegatron, "no-such-job.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
}

}  // namespace
}  // namespace strata
