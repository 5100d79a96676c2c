// Which imported keys have no effect on a step (data/import_cost_neutral_keys.yaml). Each
// expectation is read off the key's meaning in verl's config
// (verl/trainer/config/_generated_ppo_trainer.yaml at volcengine/verl@b178a3cd).
#include "strata/importer/cost_neutral_keys.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "strata/core/file_io.h"
#include "support/golden.h"
#include "support/scratch_dir.h"

namespace strata::cost_neutral_keys_test {
namespace {

std::string GroupOf(const CostNeutralKeys& keys, const std::string& key) {
  const CostNeutralGroup* g = keys.Match(key);
  return g == nullptr ? "" : g->name;
}

TEST(CostNeutralKeys, LearningRatesAndLoggingCostNothingOffloadAndTokenBudgetsMayCostAStep) {
  auto keys = LoadCostNeutralKeys();
  ASSERT_TRUE(keys.ok()) << keys.error().Format();
  // The learning rate and the critic's: the values the optimiser writes, not its work.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.optim.lr"), "optimiser schedule");
  EXPECT_EQ(GroupOf(*keys, "critic.optim.lr"), "optimiser schedule");
  // `*` spans dots: the clip ratios of the actor and the KL controller's nested keys.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.clip_ratio_high"),
            "loss and algorithm coefficients");
  EXPECT_EQ(GroupOf(*keys, "algorithm.kl_ctrl.kl_coef"), "loss and algorithm coefficients");
  EXPECT_EQ(GroupOf(*keys, "trainer.logger"), "paths, names and logging");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.val_kwargs.top_p"), "validation");
  // The reference model's offload moves its weights over PCIe every step, the rollout's token
  // budget sets vLLM's batch, ignore_eos runs every response to the cap: each may change a
  // step, so none is in a group.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.ref.fsdp_config.param_offload"), "");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.max_num_batched_tokens"), "");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.ignore_eos"), "");
  // A pattern is the whole key: "*.optim.lr" does not take the warm-up ratio by prefix (that
  // has its own pattern), nor a key that only ends like it.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.optim.lr_scheduler_custom"), "");
}

using testing::ScratchDir;

// The shipped file read through the path entry point is the file the default entry reads: the
// same groups, in order, matching the same keys.
TEST(CostNeutralKeys, TheShippedFileLoadsByItsPathAsByDefault) {
  auto shipped = LoadCostNeutralKeys();
  auto by_path = LoadCostNeutralKeys(DataDir() + "/import_cost_neutral_keys.yaml");
  ASSERT_TRUE(shipped.ok()) << shipped.error().Format();
  ASSERT_TRUE(by_path.ok()) << by_path.error().Format();
  ASSERT_EQ(by_path->groups.size(), shipped->groups.size());
  for (size_t i = 0; i < shipped->groups.size(); ++i) {
    EXPECT_EQ(by_path->groups[i].name, shipped->groups[i].name);
    EXPECT_EQ(by_path->groups[i].patterns, shipped->groups[i].patterns);
  }
  EXPECT_EQ(GroupOf(*by_path, "critic.optim.lr"), "optimiser schedule");
}

// A file of one's own: its one group matches by its globs, `*` spanning dots.
TEST(CostNeutralKeys, AFileGivenByPathIsRead) {
  const ScratchDir scratch("strata-neutral-own-");
  const std::string path = (scratch.path / "mine.yaml").string();
  ASSERT_TRUE(WriteFileAtomic(path,
                              "groups:\n"
                              "  - name: tracing\n"
                              "    why: a profiler's settings, off in the step priced\n"
                              "    patterns:\n"
                              "      - \"*.profiler.*\"\n")
                  .ok());
  auto keys = LoadCostNeutralKeys(path);
  ASSERT_TRUE(keys.ok()) << keys.error().Format();
  ASSERT_EQ(keys->groups.size(), 1u);
  EXPECT_EQ(keys->groups[0].why, "a profiler's settings, off in the step priced");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.ref.profiler.enable"), "tracing");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.optim.lr"), "");
}

// Each malformed file is refused with the file, the line and the field that is wrong. The lines
// are counted in the texts below (1 = "groups:"); the fields are the loader's paths.
TEST(CostNeutralKeys, MalformedFilesNameTheFileTheLineAndTheField) {
  const ScratchDir scratch("strata-neutral-bad-");
  struct Case {
    const char* name;
    const char* text;      // nullptr: the file does not exist
    const char* expected;  // Error::Format()'s first line after "<path>"
  };
  const Case cases[] = {
      {"missing", nullptr, ": cannot read: no such file"},
      // Cut inside a quoted pattern (line 5): the YAML does not parse (the parser's own words
      // follow "malformed YAML: ").
      {"truncated",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    patterns:\n"
       "      - \"*.lr",
       ":5:"},
      // The group (line 2) has a name and patterns but no why.
      {"no_why",
       "groups:\n"
       "  - name: a\n"
       "    patterns: [\"x\"]\n",
       ":2: groups[0].why: missing required field"},
      // An empty why (line 3) is no reason either.
      {"empty_why",
       "groups:\n"
       "  - name: a\n"
       "    why:\n"
       "    patterns: [\"x\"]\n",
       ":3: groups[0].why: expected a non-empty string"},
      // The second pattern (line 6) is a list, not a glob.
      {"pattern_not_a_string",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    patterns:\n"
       "      - \"x\"\n"
       "      - [y, z]\n",
       ":6: groups[0].patterns[1]: expected a non-empty string, a shell glob on the key"},
      // A field whose key is a list (line 4), not a name.
      {"key_not_a_string",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    ? [c, d]\n"
       "    : e\n"
       "    patterns: [\"x\"]\n",
       ":4: groups[0]: a key that is not a name (a YAML sequence or map used as a key)"},
      // The first pattern of the second group (line 8) is the empty string.
      {"empty_glob",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    patterns: [\"x\"]\n"
       "  - name: c\n"
       "    why: d\n"
       "    patterns:\n"
       "      - \"\"\n",
       ":8: groups[1].patterns[0]: expected a non-empty string, a shell glob on the key"},
      // A field the format does not have (line 5).
      {"unknown_field",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    patterns: [\"x\"]\n"
       "    examples: [\"y\"]\n",
       ":5: groups[0].examples: unknown field 'examples'"},
      // A top-level field beside groups (line 5).
      {"unknown_top_field",
       "groups:\n"
       "  - name: a\n"
       "    why: b\n"
       "    patterns: [\"x\"]\n"
       "version: 2\n",
       ":5: version: unknown field 'version'"},
      {"empty_groups", "groups: []\n", ":1: groups: expected a non-empty list of groups"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = (scratch.path / (std::string(c.name) + ".yaml")).string();
    if (c.text != nullptr) {
      ASSERT_TRUE(WriteFileAtomic(path, c.text).ok());
    }
    auto keys = LoadCostNeutralKeys(path);
    ASSERT_FALSE(keys.ok());
    const std::string formatted = keys.error().Format();
    const std::string first_line = formatted.substr(0, formatted.find('\n'));
    if (std::string(c.name) == "truncated") {
      EXPECT_TRUE(first_line.starts_with(path + c.expected)) << formatted;
      EXPECT_NE(first_line.find(": malformed YAML: "), std::string::npos) << formatted;
    } else {
      EXPECT_EQ(first_line, path + c.expected) << formatted;
    }
  }
}

// `strata import` reports a broken shipped file as bad input (exit 2), naming the file, the line
// and the field. The data folder is the real one but for this file (STRATA_DATA_DIR).
TEST(CostNeutralKeys, ImportReportsABrokenShippedFileWithExitTwo) {
  const ScratchDir scratch("strata-neutral-cli-");
  const std::filesystem::path data = scratch.path / "data";
  std::filesystem::create_directories(data);
  for (const auto& entry : std::filesystem::directory_iterator(DataDir())) {
    if (entry.path().filename() == "import_cost_neutral_keys.yaml") continue;
    std::filesystem::create_symlink(std::filesystem::absolute(entry.path()),
                                    data / entry.path().filename());
  }
  // The group on line 2 lost its why.
  ASSERT_TRUE(WriteFileAtomic((data / "import_cost_neutral_keys.yaml").string(),
                              "groups:\n"
                              "  - name: optimiser schedule\n"
                              "    patterns: [\"*.optim.lr\"]\n")
                  .ok());
  const std::string script = (scratch.path / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const char* old = std::getenv("STRATA_DATA_DIR");
  const std::string saved = old == nullptr ? "" : old;
  ::setenv("STRATA_DATA_DIR", data.c_str(), 1);
  const testing::CliResult r = testing::RunCli({"import", script, "--gpu", "H20"});
  if (old == nullptr) {
    ::unsetenv("STRATA_DATA_DIR");
  } else {
    ::setenv("STRATA_DATA_DIR", saved.c_str(), 1);
  }
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("strata: error: data/import_cost_neutral_keys.yaml:2: groups[0].why: "
                       "missing required field"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace strata::cost_neutral_keys_test
