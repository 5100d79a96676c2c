// The predicted rows of docs/rl-validation.md, regenerated: every RL job of tests/rl/validation/
// that the doc compares with a published step, weight sync or decode throughput is run through
// the model, and the section "The predicted rows, as the model gives them today" is what this
// test writes (per-row seconds, their parts, the error, and the summary by framework and part),
// so the figures there cannot go stale when a term is added to the model; UPDATE_GOLDEN=1
// rewrites the section. The measured values and the split (fit or held-out, chosen by the rule
// in the doc before any row was predicted) are the published ones; nothing here asserts a
// target: a change that moves any row fails until the doc is regenerated with it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/eval/evaluation.h"
#include "strata/job/resolved_job.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rl_step.h"
#include "strata/rl/rollout.h"
#include "support/doc_section.h"
#include "support/error_stats.h"
#include "support/golden.h"

namespace strata::rl_validation_doc_test {
namespace {

constexpr const char* kDoc = "../docs/rl-validation.md";
constexpr const char* kSectionTitle = "## The predicted rows, as the model gives them today";
constexpr const char* kSectionEnd = "<!-- end of the generated predicted-rows section -->";

struct StepRow {
  const char* id;         // the job file's name under tests/rl/validation/, without .yaml
  const char* framework;  // what the doc groups the summary by
  const char* part;       // "fit" or "held-out" (docs/rl-validation.md, the split rule)
  bool one_step_off;      // read the one-step-off result of the job's split
  double measured_s;      // the published step
};

// The published steps: NeMo RL's performance summaries (v0.4, v0.5, v0.7) and verl's docs; the
// sources and inputs of each are in the doc's tables and in each job file's header.
const std::vector<StepRow>& StepRows() {
  static const std::vector<StepRow> rows = {
      {"nemo-rl-qwen3-30b-a3b", "NeMo RL (H100)", "fit", false, 225.0},
      {"nemo-rl-llama-3.1-8b", "NeMo RL (H100)", "fit", false, 97.7},
      {"nemo-rl-llama-3.1-8b-1off", "NeMo RL (H100)", "fit", true, 74.6},
      {"nemo-rl-qwen3-30b-a3b-1off", "NeMo RL (H100)", "fit", true, 244.0},
      {"nemo-rl-v0.4-qwen3-32b", "NeMo RL (H100)", "held-out", false, 393.0},
      {"nemo-rl-v0.4-qwen3-32b-1off", "NeMo RL (H100)", "held-out", true, 215.0},
      {"nemo-rl-v0.5-llama-3.1-8b", "NeMo RL (H100)", "fit", false, 92.8},
      {"nemo-rl-v0.5-llama-3.1-8b-1off", "NeMo RL (H100)", "held-out", true, 64.8},
      {"nemo-rl-v0.5-qwen3-30b-a3b", "NeMo RL (H100)", "held-out", false, 198.0},
      {"nemo-rl-v0.5-qwen3-30b-a3b-1off", "NeMo RL (H100)", "held-out", true, 154.0},
      {"nemo-rl-v0.5-qwen3-32b", "NeMo RL (H100)", "fit", false, 376.0},
      {"nemo-rl-v0.5-qwen3-32b-1off", "NeMo RL (H100)", "fit", true, 200.0},
      {"nemo-rl-v0.7-qwen3-30b-a3b", "NeMo RL (H100)", "fit", false, 171.0},
      {"nemo-rl-v0.7-qwen3-30b-a3b-1off", "NeMo RL (H100)", "held-out", true, 141.0},
      {"nemo-rl-v0.7-qwen3-32b", "NeMo RL (H100)", "fit", false, 323.0},
      {"nemo-rl-v0.7-qwen3-32b-1off", "NeMo RL (H100)", "held-out", true, 161.0},
      {"nemo-rl-v0.7-qwen3-30b-a3b-40k", "NeMo RL (H100)", "fit", false, 2022.0},
      // verl docs/advance/fully_async.md, H20, response mean assumed (3,670 tokens).
      {"verl-qwen3-30b-a3b-h20x128", "verl (H20)", "fit", false, 497.89},
      {"verl-qwen2.5-math-7b-h20x32", "verl (H20)", "held-out", false, 790.10},
      {"verl-qwen2.5-math-7b-h20x64", "verl (H20)", "held-out", false, 365.28},
      {"verl-qwen2.5-math-7b-h20x128", "verl (H20)", "fit", false, 356.30},
      {"verl-qwen2.5-math-7b-h20x16-10k", "verl (H20)", "fit", false, 484.623},
      // verl docs/advance/one_step_off.md, the Megatron colocate baseline, 16 H20.
      {"verl-qwen2.5-math-7b-megatron-h20x16", "verl (H20)", "fit", false, 699.0},
      // ISEEKYAN/verl_megatron_practice's CSVs (dapo7b.csv, dapo_moe30b.csv), each row's own
      // script imported; response mean assumed (3,670 tokens) as for every verl row.
      {"verl-practice-dapo7b-9", "verl practice (H100)", "fit", false, 175.0},
      {"verl-practice-dapo7b-15", "verl practice (H100)", "held-out", false, 171.0},
      {"verl-practice-dapo7b-16", "verl practice (H100)", "held-out", false, 389.0},
      {"verl-practice-dapo7b-18", "verl practice (H100)", "held-out", false, 196.0},
      {"verl-practice-dapo7b-19", "verl practice (H20)", "fit", false, 336.0},
      {"verl-practice-dapo7b-22", "verl practice (H20)", "fit", false, 300.0},
      {"verl-practice-moe30b-2", "verl practice (H100)", "fit", false, 522.0},
      {"verl-practice-moe30b-3", "verl practice (H100)", "held-out", false, 633.0},
      {"verl-practice-moe30b-4", "verl practice (H100)", "held-out", false, 562.0},
      {"verl-practice-moe30b-5", "verl practice (H100)", "fit", false, 669.0},
      {"verl-practice-moe30b-6", "verl practice (H100)", "fit", false, 686.0},
      {"verl-practice-moe30b-7", "verl practice (H100)", "fit", false, 486.0},
      {"verl-practice-moe30b-8", "verl practice (H100)", "held-out", false, 466.0},
      {"verl-practice-moe30b-9", "verl practice (H100)", "held-out", false, 530.0},
      {"verl-practice-moe30b-17", "verl practice (H20)", "held-out", false, 602.0},
      // dapo32b.csv row 5: Qwen2.5-32B, its response mean stated (the CSV's response_length).
      {"verl-practice-dapo32b-5", "verl practice (H20)", "fit", false, 2257.136},
      // The same page's one-step-off row with the Megatron trainer: 2 + 6 GPUs of each of 2
      // nodes (4 + 12), predicted once splits inside a node were modelled.
      {"verl-qwen2.5-math-7b-megatron-h20x16-1off", "verl (H20)", "fit", true, 566.0},
  };
  return rows;
}

// verl's checkpoint-engine ablation (docs/advance/fully_async.md): one sync, engine off.
const std::vector<StepRow>& SyncRows() {
  static const std::vector<StepRow> rows = {
      // 4 -> 4 GPUs of one node: predicted once splits inside a node were modelled.
      {"verl-sync-qwen2.5-math-7b-4to4", "verl (H20)", "fit", false, 0.12},
      {"verl-sync-qwen3-30b-a3b-16to16", "verl (H20)", "fit", false, 15.76},
      {"verl-sync-qwen3-235b-a22b-64to64", "verl (H20)", "fit", false, 58.57},
      // The practice CSVs' reshard column (timing_s/reshard: the colocated sharding manager's
      // sync, parameters reloaded from the host when offloaded), one per step.
      {"verl-practice-dapo7b-9", "", "fit", false, 3.0},
      {"verl-practice-dapo7b-15", "", "held-out", false, 1.3},
      {"verl-practice-dapo7b-16", "", "held-out", false, 4.4},
      {"verl-practice-dapo7b-18", "", "held-out", false, 6.0},
      {"verl-practice-dapo7b-19", "", "fit", false, 4.5},
      {"verl-practice-moe30b-2", "", "fit", false, 13.0},
      {"verl-practice-moe30b-3", "", "held-out", false, 5.5},
      {"verl-practice-moe30b-4", "", "held-out", false, 8.5},
      {"verl-practice-moe30b-5", "", "fit", false, 5.6},
      {"verl-practice-moe30b-6", "", "fit", false, 5.7},
      {"verl-practice-moe30b-7", "", "fit", false, 4.5},
      {"verl-practice-moe30b-8", "", "held-out", false, 7.8},
      {"verl-practice-moe30b-9", "", "held-out", false, 7.8},
      {"verl-practice-moe30b-17", "", "held-out", false, 12.0},
      {"verl-practice-dapo32b-5", "", "fit", false, 2.614},
  };
  return rows;
}

// The practice CSVs' phases (seconds; 0 where the CSV leaves the cell blank): generation
// (timing_s/generate_sequences), old_logp, update_actor, and rollout (timing_s/gen, which holds
// the reshard and the generation).
struct PhaseRow {
  const char* id;
  const char* part;
  double generation_s;
  double old_log_prob_s;
  double update_s;
  double rollout_s;
  double reshard_s;
};

const std::vector<PhaseRow>& PhaseRows() {
  static const std::vector<PhaseRow> rows = {
      {"verl-practice-dapo7b-9", "fit", 74, 24, 55, 90, 3.0},
      {"verl-practice-dapo7b-15", "held-out", 74, 17, 60, 88, 1.3},
      {"verl-practice-dapo7b-16", "held-out", 148, 57, 168, 158, 4.4},
      {"verl-practice-dapo7b-18", "held-out", 76, 28, 66, 97, 6.0},
      {"verl-practice-dapo7b-19", "fit", 105, 58, 137, 132, 4.5},
      {"verl-practice-dapo7b-22", "fit", 0, 0, 100, 0, 0},
      {"verl-practice-moe30b-2", "fit", 303, 16, 167, 334, 13.0},
      {"verl-practice-moe30b-3", "held-out", 395, 63, 175, 420, 5.5},
      {"verl-practice-moe30b-4", "held-out", 331, 41, 160, 355, 8.5},
      {"verl-practice-moe30b-5", "fit", 411, 64, 164, 436, 5.6},
      {"verl-practice-moe30b-6", "fit", 424, 56, 171, 454, 5.7},
      {"verl-practice-moe30b-7", "fit", 308, 45, 105, 331, 4.5},
      {"verl-practice-moe30b-8", "held-out", 329, 23, 83, 356, 7.8},
      {"verl-practice-moe30b-9", "held-out", 361, 25, 76, 425, 7.8},
      {"verl-practice-moe30b-17", "held-out", 418, 41, 122, 448, 12.0},
      {"verl-practice-dapo32b-5", "fit", 1070.415, 218.051, 819.309, 1203.142, 2.614},
  };
  return rows;
}

struct DecodeRow {
  const char* id;
  const char* part;
  double concurrency;
  double measured_tokens_per_s;
};

// Llama-3.1-8B-Instruct bf16 on one A100 40GB, vLLM 0.23 TP1, 1,024-token prompts and 128-token
// outputs (the doc's "Decode throughput" section); priced at the row's concurrency and the
// mid-response context 1,024 + 128 / 2 = 1,088 tokens.
const std::vector<DecodeRow>& DecodeRows() {
  static const std::vector<DecodeRow> rows = {
      {"vllm-decode-llama-3.1-8b-a100-40gb-c1", "fit", 1, 75.0},
      {"vllm-decode-llama-3.1-8b-a100-40gb-c8", "held-out", 8, 495.0},
  };
  return rows;
}

struct Evaluated {
  RlSpec spec;
  RlEvaluation eval;
};

Result<Evaluated> Evaluate(const std::string& id) {
  STRATA_ASSIGN_OR_RETURN(RlSpec spec,
                          LoadRlSpec(testing::TestPath("rl/validation/" + id + ".yaml")));
  STRATA_ASSIGN_OR_RETURN(RlEvaluation eval, EvaluateRl(*Workspace::Load(), spec));
  return Evaluated{std::move(spec), std::move(eval)};
}

std::string Pct(double x) { return fmt::format("{:+.0f}%", 100 * x); }

// The step's parts that are not zero. Colocated, they add up to the step; split, generation runs
// on the rollout GPUs while the training parts run on the others, and idle is the GPU time each
// side waits, averaged over all GPUs (RlTimes), so they do not add up to the step.
std::string PartsOf(const RlPlacementResult& r) {
  const RlTimes& t = r.times;
  const std::pair<const char*, Seconds> parts[] = {
      {"generation", t.generation},
      {"log-probs", t.old_log_prob},
      {"reference", t.reference},
      {"critic values", t.critic_values},
      {"update", t.update},
      {"critic update", t.critic_update},
      {"sync", t.weight_sync},
      {"offload copies", t.offload},
      {"idle", t.idle},
  };
  std::string out;
  for (const auto& [name, s] : parts) {
    if (s.s() <= 0) continue;
    out += fmt::format("{}{} {:.1f}", out.empty() ? "" : ", ", name, s.s());
  }
  return out;
}

std::string PlacementOf(const RlPlacementResult& r) {
  if (r.placement == RlPlacement::kColocated) return "colocated";
  return fmt::format("split {}+{}{}", r.rollout_gpus, r.train_gpus,
                     r.one_step_off ? " one-step-off" : "");
}

struct Outcome {
  const StepRow* row;
  std::string text;  // the table line
  double error = 0;
};

std::string Render() {
  std::string d;
  d += std::string(kSectionTitle) + "\n\n";
  d += "<!-- generated by tests/rl/rl_validation_doc_test.cc from tests/rl/validation/; "
       "UPDATE_GOLDEN=1 rewrites it -->\n\n";
  d += "Every row the sections below compare with a published figure, run through the model at "
       "this commit: `strata rl tests/rl/validation/<id>.yaml` (the configured placement's step, "
       "or the one-step-off result of the job's split for a 1-step off-policy row). Error = "
       "predicted / measured - 1. A colocated row's parts add up to its step; a split row's "
       "generation and training parts run on different GPUs at once, and its idle is the time "
       "each side waits averaged over all GPUs, so they do not. The sections below give each "
       "row's source, inputs and split; their before / after tables keep the figures of the "
       "change they describe.\n\n";
  d += "| id | framework | part | placement | measured step | strata step | strata's parts (s) "
       "| error |\n|---|---|---|---|---|---|---|---|\n";
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
  std::map<std::string, std::vector<double>> all;
  for (const StepRow& row : StepRows()) {
    auto eval = Evaluate(row.id);
    EXPECT_TRUE(eval.ok()) << row.id << ": " << (eval.ok() ? "" : eval.error().Format());
    if (!eval.ok()) continue;
    const RlPlacementResult* r = &eval->eval.configured;
    if (row.one_step_off) {
      r = nullptr;
      for (const RlPlacementResult& s : eval->eval.splits) {
        // The first, as the configured split takes it (whole nodes where both forms give it).
        if (s.one_step_off && s.rollout_gpus == eval->spec.rollout_gpus && r == nullptr) r = &s;
      }
    }
    EXPECT_NE(r, nullptr) << row.id << ": no one-step-off result at the job's split";
    if (r == nullptr) continue;
    if (!r->valid) {
      // A job strata refuses (its memory does not fit) is listed with the reason, outside the
      // error summaries: no step to compare.
      d += fmt::format("| {} | {} | {} | {} | {:g} s | refused | {} | not predicted |\n", row.id,
                       row.framework, row.part, PlacementOf(*r), row.measured_s, r->reason);
      continue;
    }
    const double error = r->times.step.s() / row.measured_s - 1;
    d += fmt::format("| {} | {} | {} | {} | {:g} s | {:.1f} s | {} | {} |\n", row.id, row.framework,
                     row.part, PlacementOf(*r), row.measured_s, r->times.step.s(), PartsOf(*r),
                     Pct(error));
    groups[{row.framework, row.part}].push_back(error);
    all[row.part].push_back(error);
  }
  d += "\nBy framework and part (whole steps):\n\n";
  d += "| framework | part | rows | median error | median \\|error\\| | worst | within 25% "
       "|\n|---|---|---|---|---|---|---|\n";
  auto summary = [&](const std::string& framework, const std::string& part,
                     const std::vector<double>& errors) {
    const testing::ErrorSummary s = testing::SummarizeErrors(errors);
    double worst = 0;
    for (double e : errors) worst = std::fabs(e) > std::fabs(worst) ? e : worst;
    d += fmt::format("| {} | {} | {} | {} | {:.0f}% | {} | {} |\n", framework, part, s.n,
                     Pct(s.signed_median), 100 * s.median, Pct(worst), s.within25);
  };
  for (const auto& [key, errors] : groups) summary(key.first, key.second, errors);
  for (const auto& [part, errors] : all) summary("all", part, errors);

  d += "\nWeight syncs (one sync of the job's configured split, checkpoint-engine off):\n\n";
  d += "| id | part | measured | strata (gather, convert, transfer) | error |\n"
       "|---|---|---|---|---|\n";
  for (const StepRow& row : SyncRows()) {
    auto eval = Evaluate(row.id);
    EXPECT_TRUE(eval.ok()) << row.id << ": " << (eval.ok() ? "" : eval.error().Format());
    if (!eval.ok()) continue;
    const WeightSync& w = eval->eval.configured.sync;
    if (w.total.s() <= 0) {
      d += fmt::format("| {} | {} | {:g} s | not predicted: {} | |\n", row.id, row.part,
                       row.measured_s, eval->eval.configured.reason);
      continue;
    }
    d += fmt::format("| {} | {} | {:g} s | {:.1f} s ({:.2f}, {:.2f}, {:.2f}) | {} |\n", row.id,
                     row.part, row.measured_s, w.total.s(), w.gather.s(), w.convert.s(),
                     w.transfer.s(), Pct(w.total.s() / row.measured_s - 1));
  }

  d +=
      "\nPer phase, verl's practice CSVs (measured / strata, error; generation is "
      "timing_s/generate_sequences, without the reshard; the last column is what verl's "
      "timing_s/gen holds beyond the generation and the reshard, which strata does not price):\n\n";
  d += "| id | part | generation (s) | old log-prob (s) | actor update (s) | rollout - generation "
       "- reshard (s) |\n|---|---|---|---|---|---|\n";
  std::map<std::pair<std::string, std::string>, std::vector<double>> phase_errors;
  auto cell = [&](const std::string& part, const char* phase, double measured, Seconds strata) {
    if (measured <= 0) return std::string("not in the CSV");
    const double error = strata.s() / measured - 1;
    phase_errors[{phase, part}].push_back(error);
    return fmt::format("{:g} / {:.1f}, {}", measured, strata.s(), Pct(error));
  };
  for (const PhaseRow& row : PhaseRows()) {
    auto eval = Evaluate(row.id);
    EXPECT_TRUE(eval.ok()) << row.id << ": " << (eval.ok() ? "" : eval.error().Format());
    if (!eval.ok()) continue;
    const RlTimes& t = eval->eval.configured.times;
    if (!eval->eval.configured.valid) {
      d += fmt::format("| {} | {} | refused: {} | | | |\n", row.id, row.part,
                       eval->eval.configured.reason);
      continue;
    }
    const std::string other =
        row.rollout_s > 0 ? fmt::format("{:g}", row.rollout_s - row.generation_s - row.reshard_s)
                          : std::string("not in the CSV");
    d += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row.id, row.part,
                     cell(row.part, "generation", row.generation_s, t.generation),
                     cell(row.part, "old log-prob", row.old_log_prob_s, t.old_log_prob),
                     cell(row.part, "actor update", row.update_s, t.update), other);
  }
  d += "\nBy phase and part:\n\n| phase | part | rows | median error | median \\|error\\| | "
       "worst |\n|---|---|---|---|---|---|\n";
  for (const char* phase : {"generation", "old log-prob", "actor update"}) {
    for (const char* part : {"fit", "held-out"}) {
      const std::vector<double>& errors = phase_errors[{phase, part}];
      if (errors.empty()) continue;
      const testing::ErrorSummary s = testing::SummarizeErrors(errors);
      double worst = 0;
      for (double e : errors) worst = std::fabs(e) > std::fabs(worst) ? e : worst;
      d += fmt::format("| {} | {} | {} | {} | {:.0f}% | {} |\n", phase, part, s.n,
                       Pct(s.signed_median), 100 * s.median, Pct(worst));
    }
  }

  d += "\nDecode throughput (`tests/rl/validation/vllm-decode-llama-3.1-8b-a100-40gb.yaml`, "
       "one decode step at the row's concurrency and a 1,088-token context; output tokens/s = "
       "concurrency / step):\n\n";
  d += "| id | part | measured | strata | error |\n|---|---|---|---|---|\n";
  auto decode = Evaluate("vllm-decode-llama-3.1-8b-a100-40gb");
  EXPECT_TRUE(decode.ok()) << (decode.ok() ? "" : decode.error().Format());
  if (decode.ok()) {
    for (const DecodeRow& row : DecodeRows()) {
      DecodeInput in = decode->eval.decode;
      in.batch = row.concurrency;
      in.context_tokens = 1088;
      const DecodeStep step = DecodeRoofline(in);
      const double tokens_per_s = row.concurrency / step.time.s();
      d += fmt::format(
          "| {} | {} | {:g} output tokens/s | {:.0f} output tokens/s ({:.1f} ms a step: {:.1f} "
          "HBM + {:.1f} engine) | {} |\n",
          row.id, row.part, row.measured_tokens_per_s, tokens_per_s, 1e3 * step.time.s(),
          1e3 * step.memory_time.s(), 1e3 * step.overhead.s(),
          Pct(tokens_per_s / row.measured_tokens_per_s - 1));
    }
  }
  d += "\n" + std::string(kSectionEnd) + "\n";
  return d;
}

TEST(RlValidationDoc, PredictedRowsAreCurrent) {
  const std::string section = Render();
  const std::optional<std::string> expected = testing::WithSectionReplaced(
      testing::ReadTestFile(kDoc), kSectionTitle, kSectionEnd, section);
  ASSERT_TRUE(expected) << kDoc << " has no section \"" << kSectionTitle << "\" with its end mark";
  EXPECT_TRUE(testing::MatchesGolden(kDoc, *expected));
}

}  // namespace
}  // namespace strata::rl_validation_doc_test
