// One job, many views: `memory`, `step`, `plan` (its "current" row, the user's own layout) and
// `compare` (its first system) read the same job through ResolveJob and must print the same
// memory peak (to the byte), the same step time and the same MFU. Before JsonBytes, the same
// ledger peak of the reference job came out as 82836996757 (memory, rounded), 82836996756
// (plan, truncated) and 82836996756.8 (compare, a fractional byte count).
// The jobs cover the training modes that take different code paths: the reference (EP8, full
// recompute, variable lengths), its DeepSpeed ZeRO-3 twin, a PP2 MoE variant, an FP8 variant and
// a single-GPU FSDP2 run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

using nlohmann::json;

json RunJson(std::vector<std::string> args) {
  args.push_back("--json");
  const auto r = testing::RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
  if (r.exit_code != 0) return json::object();
  return json::parse(r.out);
}

void ExpectSameDouble(double a, double b, const std::string& what) {
  EXPECT_LE(std::fabs(a - b), 1e-12 * std::fabs(a)) << what << ": " << a << " vs " << b;
}

// A job: its name in the test list and the arguments that give it to every command.
struct JobArgs {
  std::string name;
  std::vector<std::string> args;
};

// gtest prints a parameter with this instead of its bytes.
void PrintTo(const JobArgs& job, std::ostream* os) { *os << job.name; }

class ViewsAgree : public ::testing::TestWithParam<JobArgs> {};

std::vector<std::string> With(const char* command, const std::vector<std::string>& job) {
  std::vector<std::string> out{command};
  out.insert(out.end(), job.begin(), job.end());
  return out;
}

TEST_P(ViewsAgree, MemoryStepPlanAndCompareGiveTheSameNumbers) {
  const std::vector<std::string>& job = GetParam().args;
  std::vector<std::string> compare_args = With("compare", job);
  compare_args.insert(compare_args.begin() + 2, job.front());  // the same job twice
  const json memory = RunJson(With("memory", job));
  const json step = RunJson(With("step", job));
  std::vector<std::string> plan_args = With("plan", job);
  plan_args.insert(plan_args.end(), {"--top", "1"});
  const json plan = RunJson(plan_args);
  const json compare = RunJson(compare_args);
  ASSERT_FALSE(memory.empty() || step.empty() || plan.empty() || compare.empty());

  // Bytes are integers in every view, and the same integer.
  const json& peak_before = memory["peak_before_step1_bytes"];
  const json& peak_after = memory["peak_after_step1_bytes"];
  ASSERT_TRUE(peak_before.is_number_integer() && peak_after.is_number_integer());
  const int64_t peak = std::max(peak_before.get<int64_t>(), peak_after.get<int64_t>());
  const json& current = plan["current"];
  const json& first = compare["systems"][0];
  ASSERT_TRUE(current["peak_memory_bytes"].is_number_integer()) << current["peak_memory_bytes"];
  ASSERT_TRUE(first["memory_peak_bytes"].is_number_integer()) << first["memory_peak_bytes"];
  EXPECT_EQ(current["peak_memory_bytes"].get<int64_t>(), peak);
  EXPECT_EQ(first["memory_peak_bytes"].get<int64_t>(), peak);
  EXPECT_EQ(current["capacity_bytes"], memory["capacity_bytes"]);
  EXPECT_EQ(first["memory_capacity_bytes"], memory["capacity_bytes"]);
  EXPECT_EQ(current["memory_verdict"], memory["verdict"]);
  EXPECT_EQ(first["memory_verdict"], memory["verdict"]);

  // The layout: the same fields with the same values in memory's and step's "job" and plan's
  // "current" (one AddLayoutJson), the uneven split included.
  for (const char* key :
       {"tp", "pp", "vpp", "first_stage_layers", "last_stage_layers", "account_for_embedding",
        "account_for_loss", "cp", "ep", "etp", "dp", "expert_dp", "sequence_parallel"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(memory["job"].contains(key));
    EXPECT_EQ(memory["job"][key], step["job"][key]);
    EXPECT_EQ(memory["job"][key], current[key]);
  }

  // The step time and the MFU.
  const double t = step["step_time_s"].get<double>();
  ExpectSameDouble(current["step_time_s"].get<double>(), t, "plan step time");
  ExpectSameDouble(first["step_time_s"].get<double>(), t, "compare step time");
  ExpectSameDouble(current["mfu"].get<double>(), step["mfu"].get<double>(), "plan MFU");
  ExpectSameDouble(first["mfu"].get<double>(), step["mfu"].get<double>(), "compare MFU");
  ExpectSameDouble(first["tokens_per_s_per_gpu"].get<double>(),
                   step["tokens_per_s_per_gpu"].get<double>(), "compare tokens/s/GPU");
}

// `map` prices the job's traffic as `step` does: the same items, sizes and times. Before, the map
// built its own traffic inputs: activations of an fp32 job at 4 bytes where step used 2 (the map
// priced its TP/CP/EP traffic at twice step's), and no sharding mode (a ZeRO-3 job's
// once-per-step traffic at megatron-core's reduce-scatter + all-gather, 1.59 s, where step and
// compare price ZeRO-3's per-layer gathers, 4.87 s).
TEST_P(ViewsAgree, MapPricesTheStepsTraffic) {
  const std::vector<std::string>& job = GetParam().args;
  const json step = RunJson(With("step", job));
  const json map = RunJson(With("map", job));
  ASSERT_FALSE(step.empty() || map.empty());
  const json& items = map["traffic"];
  ASSERT_EQ(items.size(), step["traffic"].size()) << map["traffic"].dump(1);
  double step_total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& a = items[i];
    const json& b = step["traffic"][i];
    SCOPED_TRACE(b["purpose"].get<std::string>());
    EXPECT_EQ(a["group"], b["group"]);
    EXPECT_EQ(a["purpose"], b["purpose"]);
    EXPECT_EQ(a["size_bytes"], b["size_bytes"]);
    ExpectSameDouble(a["time_per_step_s"].get<double>(), b["time_per_step_s"].get<double>(),
                     "time per step");
    step_total += b["time_per_step_s"].get<double>();
  }
  ExpectSameDouble(map["comm_time_per_step_s"].get<double>(), step_total, "communication per step");
}

// `strata mfu` at the throughput `strata step` predicts: with only the mean (29,000) and the max
// (49,152) length known, mfu reports the megatron-convention MFU at both bounds of E[S^2]/E[S]
// and, between them, at the length step prices: E[S^2]/E[S] (33,650) of the lengths step assumes
// uniform on [2 mean - max, max]. Step's MFU lies between the bounds and is the middle row.
TEST(ViewsAgree, StepMfuLiesBetweenTheMfuCommandsBounds) {
  const json step = RunJson({"step"});
  ASSERT_FALSE(step.empty());
  const json mfu = RunJson(
      {"mfu", "--tokens-per-s", std::to_string(step["tokens_per_s_per_gpu"].get<double>() * 40)});
  ASSERT_FALSE(mfu.empty());
  std::vector<double> megatron;
  for (const json& point : mfu["points"]) {
    for (const json& row : point["conventions"]) {
      if (row["convention"] == "megatron") megatron.push_back(row["mfu_percent"].get<double>());
    }
  }
  ASSERT_EQ(megatron.size(), 3u);
  const double step_mfu = 100 * step["mfu"].get<double>();
  EXPECT_GT(step_mfu, megatron[0]);
  EXPECT_LT(step_mfu, megatron[2]);
  EXPECT_NEAR(step_mfu, megatron[1], 1e-9);
}

const char* const kReference = "qwen3.6-35b-a3b-sft-h20x40";

// The layout line of the text views: memory and step print LayoutHeader, so an uneven pipeline
// is named the same way in both (step printed its own header, without the split, before).
TEST(ViewsAgree, MemoryAndStepNameTheLayoutAlike) {
  auto layout_line = [](const std::string& out) {
    const size_t at = out.find("\nlayout: ");
    if (at == std::string::npos) return std::string();
    return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  const std::vector<std::string> job = {kReference,
                                        "--set",
                                        "parallel.pp=2",
                                        "--set",
                                        "parallel.ep=4",
                                        "--set",
                                        "parallel.last_stage_layers=19"};
  const auto memory = testing::RunCli(With("memory", job));
  const auto step = testing::RunCli(With("step", job));
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  ASSERT_EQ(step.exit_code, 0) << step.err;
  const std::string line = layout_line(step.out);
  EXPECT_EQ(line, "layout: TP1 PP2 (last 19 layers) VPP1 CP1 EP4 ETP1 DP20 (expert-DP 5), SP off");
  EXPECT_EQ(layout_line(memory.out), line) << memory.out.substr(0, 400);
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, ViewsAgree,
    ::testing::Values(JobArgs{"reference", {kReference}},
                      JobArgs{"reference_zero3", {"qwen3.6-35b-a3b-sft-h20x40-zero3"}},
                      JobArgs{"reference_pp2_ep4",
                              {kReference, "--set", "parallel.pp=2", "--set", "parallel.ep=4"}},
                      JobArgs{"reference_fp8", {kReference, "--set", "fp8.recipe=blockwise"}},
                      JobArgs{"reference_pp2_last19",
                              {kReference, "--set", "parallel.pp=2", "--set", "parallel.ep=4",
                               "--set", "parallel.last_stage_layers=19"}},
                      JobArgs{"h200_fsdp2", {testing::TestPath("memory/validation/h200-04.yaml")}},
                      // fp32 weights and activations: TP/EP traffic of 4-byte elements (PP2 EP4
                      // so that the fp32 states fit the card).
                      JobArgs{"reference_fp32_tp2_pp2",
                              {kReference, "--set", "precision.params=fp32", "--set",
                               "parallel.sequence_parallel=true", "--set", "precision.grads=fp32",
                               "--set", "parallel.tp=2", "--set", "parallel.pp=2", "--set",
                               "parallel.ep=4"}}),
    [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace strata
