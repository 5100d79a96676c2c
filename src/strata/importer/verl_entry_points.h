// verl's entry points (`python3 -m MODULE`): its trainers and the recipes built on them, which
// of them train with RL under verl's PPO trainer config, which strata refuses and why, and what
// each recipe adds that `strata rl` does not price (docs/rl.md, "Recipes").
#ifndef STRATA_IMPORTER_VERL_ENTRY_POINTS_H_
#define STRATA_IMPORTER_VERL_ENTRY_POINTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/importer/settings.h"

namespace strata {

/// What a `python3 -m MODULE` of verl is: kRl, an RL trainer whose config is verl's PPO trainer
/// config (verl.trainer.main_ppo, and recipes such as recipe.dapo.main_dapo); kTraining, verl's
/// SFT trainer (verl.trainer.fsdp_sft_trainer); kRefused, a verl entry point strata does not
/// import (generation, evaluation, a recipe with its own config or placement), `reason` says
/// why; kNone, not a verl module.
struct VerlEntryPoint {
  enum class Kind { kNone, kRl, kTraining, kRefused };
  Kind kind = Kind::kNone;
  std::string module;
  std::string recipe;       // "DAPO"; "" for verl's own trainer
  std::string config_name;  // the Hydra config its @hydra.main names ("dapo_trainer")
  std::string reason;       // kRefused: why, and what to do instead
  /// kRl: the rollout runs on GPUs of its own (rollout.nnodes x rollout.n_gpus_per_node), one
  /// step off-policy (the one-step-off recipe): a split placement, not the hybrid engine.
  bool split = false;
  /// kRefused for a `recipe.*` module verl's recipe list does not hold: the command may be
  /// another project's `recipe` package, which only verl's Hydra overrides tell apart.
  bool unknown_recipe = false;
};
VerlEntryPoint ClassifyVerlModule(std::string_view word);

/// The verl entry points that train with RL (ClassifyVerlModule's kRl).
bool IsVerlRlEntryPoint(std::string_view module);

/// A recipe's notes for the RL job: the recipe and what it adds that is not priced (DAPO's
/// dynamic sampling and overlong buffer, read from the launch's keys). Empty for verl's own
/// trainer.
std::vector<std::string> VerlRecipeNotes(Settings& s, const VerlEntryPoint& entry);

}  // namespace strata

#endif  // STRATA_IMPORTER_VERL_ENTRY_POINTS_H_
