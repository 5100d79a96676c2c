// Golden tests of `strata rl` (tests/golden/cli_rl; the case layout is in support/golden.h). The
// numbers are checked independently by kv_cache_test, rollout_test and rl_step_test; these pin
// the presentation (units in every header, JSON field names, error text and exit codes).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata {
namespace {

TEST(RlCliGoldenTest, Rl) { testing::RunCliGoldenSuite("cli_rl", 10); }

// A split job's text gives each side's own memory per GPU (the rollout GPUs vLLM alone, the
// training GPUs each pass's peak); --json carried only the colocated phases. Its configured split
// now carries the same figures, in bytes: each one, in GiB to the text's two decimals, is the
// text's. The job: verl's one-step-off 4 + 12 DAPO run (tests/rl/validation/, 2 + 6 a node).
TEST(RlCliGoldenTest, SplitJsonCarriesEachSidesMemory) {
  const std::string job =
      testing::TestPath("rl/validation/verl-qwen2.5-math-7b-megatron-h20x16-1off.yaml");
  const testing::CliResult text = testing::RunCli({"rl", job});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const testing::CliResult json = testing::RunCli({"rl", job, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto& c = j["configured"];
  ASSERT_TRUE(c.contains("rollout_side_peak_bytes")) << c.dump();
  ASSERT_TRUE(c.contains("train_side_peak_bytes")) << c.dump();
  auto gib = [](const nlohmann::json& bytes) {
    return fmt::format("{:.2f}", bytes.get<double>() / (1024.0 * 1024.0 * 1024.0));
  };
  // The text's rows: "rollout GPUs (4)  <GiB>  ..." and "training GPUs (12): <phase>  <GiB>".
  const std::string rollout_row = "rollout GPUs (4)";
  const size_t at = text.out.find(rollout_row);
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string row = text.out.substr(at, text.out.find('\n', at) - at);
  EXPECT_NE(row.find(" " + gib(c["rollout_side_peak_bytes"]) + " "), std::string::npos)
      << row << " against " << c["rollout_side_peak_bytes"];
  ASSERT_FALSE(c["train_side_phases"].empty());
  double peak = 0;
  for (const auto& p : c["train_side_phases"]) {
    const std::string name = "training GPUs (12): " + p["phase"].get<std::string>();
    const size_t t = text.out.find(name);
    ASSERT_NE(t, std::string::npos) << name << "\n" << text.out;
    const std::string line = text.out.substr(t, text.out.find('\n', t) - t);
    EXPECT_NE(line.find(" " + gib(p["bytes"]) + " "), std::string::npos)
        << line << " against " << p["bytes"];
    peak = std::max(peak, p["bytes"].get<double>());
  }
  // The training side's peak is its largest pass.
  EXPECT_EQ(c["train_side_peak_bytes"].get<double>(), peak);
}

// A configured split's header shows each side on its own GPUs. verl's 4 -> 4 sync job
// (tests/rl/validation/verl-sync-qwen2.5-math-7b-4to4.yaml): one 8-GPU H20 node, the actor at
// TP1 PP1 CP1, 4 rollout GPUs at TP 4. The training side's 4 GPUs hold DP 4 (4 / (1 x 1 x 1));
// the rollout's 4 GPUs one TP-4 instance (4 / 4). Before, the header gave the whole node's
// layout, DP 8 and 8 / 4 = 2 instances, which no side of this split runs.
TEST(RlCliGoldenTest, SplitHeaderShowsEachSidesOwnLayout) {
  const std::string job = testing::TestPath("rl/validation/verl-sync-qwen2.5-math-7b-4to4.yaml");
  const testing::CliResult text = testing::RunCli({"rl", job});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("actor (megatron-core ASSUMED, sharding zero1) on the split's 4 "
                          "training GPUs: TP1 PP1 VPP1 CP1 EP1 ETP1 DP4, SP off, from "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("rollout (vLLM 0.10) on the split's 4 rollout GPUs: TP4 x 1 instances, "),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("DP8"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace strata
