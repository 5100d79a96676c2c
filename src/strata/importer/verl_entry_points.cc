#include "strata/importer/verl_entry_points.h"

#include <fmt/format.h>

namespace strata {
namespace {

// verl's entry points and recipes, with the Hydra config each @hydra.main names. The recipes'
// sources: volcengine/verl@875788ef6e218d0b98cb64fff919d9fef014f986:recipe/<name>/main_*.py and
// recipe/<name>/config/*.yaml (`defaults: [ppo_trainer, _self_]`: verl's PPO trainer config
// under the recipe's keys); verl.experimental.*: volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7 (the recipes moved there and to verl-recipe).
//
// The pointers first, then the kind and the flag: no padding between the fields.
struct KnownEntry {
  const char* module;
  const char* recipe;
  const char* config;
  const char* reason;  // kRefused: why; kRl: what of the recipe strata rl does not price
  VerlEntryPoint::Kind kind;
  bool split = false;  // the rollout on GPUs of its own, one step off-policy
};

constexpr const char* kOneStepOffNote =
    "the rollout runs on GPUs of its own (rollout.nnodes x rollout.n_gpus_per_node) and "
    "generates step k+1 while the actor trains on step k: imported as strata's one-step-off "
    "split over the trainer's and the rollout's nodes, its NCCL weight sync priced as a split's";

constexpr const char* kFullyAsyncRefusal =
    "the rollout streams samples of several policy versions (partial rollouts, staleness) to "
    "a trainer on GPUs of its own; strata rl models on-policy and one-step-off pipelines only. "
    "Write the RL job by hand with placement: {mode: split, rollout_gpus: N, one_step_off: "
    "true} for its nearest, the one-step-off split";

const KnownEntry kVerlEntries[] = {
    {"verl.trainer.main_ppo", "", "ppo_trainer", "", VerlEntryPoint::Kind::kRl},
    {"verl.trainer.main_grpo", "", "ppo_trainer", "", VerlEntryPoint::Kind::kRl},
    {"recipe.dapo.main_dapo", "DAPO", "dapo_trainer", "", VerlEntryPoint::Kind::kRl},
    // DAPO's first layout (recipe/dapo/src/, @3a27a98647536fef2b848c4897aebdcfb0b42110): its
    // dapo_trainer.yaml is a whole copy of ppo_trainer.yaml with DAPO's keys.
    {"recipe.dapo.src.main_dapo", "DAPO", "dapo_trainer", "", VerlEntryPoint::Kind::kRl},
    {"recipe.entropy.main_entropy", "Clip-Cov / KL-Cov (entropy)", "entropy_trainer",
     "its covariance-based clipping changes the policy loss only: no pass is added",
     VerlEntryPoint::Kind::kRl},
    {"recipe.flowrl.main_flowrl", "FlowRL", "flowrl_trainer",
     "its trajectory-balance loss (with a learned partition function) changes the loss only",
     VerlEntryPoint::Kind::kRl},
    {"recipe.prime.main_prime", "PRIME", "prime_trainer",
     "the implicit process reward model it trains beside the actor (reward_model.*: a forward "
     "and an update each step) is not priced",
     VerlEntryPoint::Kind::kRl},
    {"recipe.sppo.main_sppo", "SPPO", "sppo_trainer",
     "its self-play preference loss changes the loss only", VerlEntryPoint::Kind::kRl},
    {"recipe.spin.main_spin", "SPIN", "spin_trainer",
     "its DPO update on generated and reference responses is priced as the policy update over "
     "the samples",
     VerlEntryPoint::Kind::kRl},
    {"recipe.transfer_queue.main_ppo", "TransferQueue", "ppo_trainer",
     "its data path between the workers (TransferQueue) is not priced", VerlEntryPoint::Kind::kRl},
    {"verl.experimental.transfer_queue.main_ppo", "TransferQueue", "ppo_trainer",
     "its data path between the workers (TransferQueue) is not priced", VerlEntryPoint::Kind::kRl},
    {"recipe.r1_ascend.main_ppo", "R1 (Ascend)", "ppo_trainer", "", VerlEntryPoint::Kind::kRl},
    {"recipe.one_step_off_policy.main_ppo", "one-step off-policy", "one_step_off_ppo_trainer",
     kOneStepOffNote, VerlEntryPoint::Kind::kRl, true},
    {"recipe.one_step_off_policy.async_main_ppo", "one-step off-policy", "one_step_off_ppo_trainer",
     kOneStepOffNote, VerlEntryPoint::Kind::kRl, true},
    {"verl.experimental.one_step_off_policy.main_ppo", "one-step off-policy",
     "one_step_off_ppo_trainer", kOneStepOffNote, VerlEntryPoint::Kind::kRl, true},
    {"recipe.fully_async_policy.fully_async_main", "fully async", "fully_async_ppo_trainer",
     kFullyAsyncRefusal, VerlEntryPoint::Kind::kRefused},
    {"verl.experimental.fully_async_policy.fully_async_main", "fully async",
     "fully_async_ppo_trainer", kFullyAsyncRefusal, VerlEntryPoint::Kind::kRefused},
    {"recipe.gkd.main_gkd", "on-policy distillation (GKD)", "on_policy_distill_trainer",
     "its config (on_policy_distill_trainer) is its own, not verl's PPO trainer config: a "
     "teacher model scores the student's rollouts, which strata rl does not model",
     VerlEntryPoint::Kind::kRefused},
    {"recipe.vla.main_ppo", "VLA (robotics)", "rob_ppo_trainer",
     "its config (rob_ppo_trainer) trains a vision-language-action policy in a simulator, not "
     "an LLM under verl's PPO trainer config",
     VerlEntryPoint::Kind::kRefused},
    {"recipe.r1.main_eval", "R1 evaluation", "evaluation",
     "it scores saved generations: nothing trains", VerlEntryPoint::Kind::kRefused},
    {"verl.trainer.main_eval", "", "evaluation", "it scores saved generations: nothing trains",
     VerlEntryPoint::Kind::kRefused},
    {"verl.trainer.main_generation", "", "generation",
     "it generates from a dataset: nothing trains", VerlEntryPoint::Kind::kRefused},
    {"verl.trainer.main_generation_server", "", "generation",
     "it generates from a dataset: nothing trains", VerlEntryPoint::Kind::kRefused},
    {"verl.model_merger", "", "", "it converts a checkpoint: nothing trains",
     VerlEntryPoint::Kind::kRefused},
};

std::string KnownRlEntries() {
  std::string out;
  for (const KnownEntry& e : kVerlEntries) {
    if (e.kind != VerlEntryPoint::Kind::kRl) continue;
    out += (out.empty() ? "" : ", ") + std::string(e.module);
  }
  return out;
}

}  // namespace

VerlEntryPoint ClassifyVerlModule(std::string_view word) {
  VerlEntryPoint v;
  // A module as `python3 -m` takes it: dotted, no override (=) and no path.
  if (word.find('=') != std::string_view::npos || word.find('/') != std::string_view::npos) {
    return v;
  }
  const bool verl = word.starts_with("verl.trainer.") || word.starts_with("verl.experimental.") ||
                    word == "verl.model_merger";
  const bool recipe = word.starts_with("recipe.") && word.find('.', 7) != std::string_view::npos;
  if (!verl && !recipe) return v;
  v.module = std::string(word);
  for (const KnownEntry& e : kVerlEntries) {
    if (word != e.module) continue;
    v.kind = e.kind;
    v.recipe = e.recipe;
    v.config_name = e.config;
    v.reason = e.reason;
    v.split = e.split;
    return v;
  }
  if (word.starts_with("verl.trainer.")) {
    // verl's SFT trainers (fsdp_sft_trainer, sft_trainer): a training job.
    v.kind = VerlEntryPoint::Kind::kTraining;
    return v;
  }
  v.kind = VerlEntryPoint::Kind::kRefused;
  v.unknown_recipe = recipe;
  v.reason = fmt::format(
      "a verl entry point strata does not know: its config may not be verl's PPO trainer "
      "config. Those imported as RL jobs: {}",
      KnownRlEntries());
  return v;
}

bool IsVerlRlEntryPoint(std::string_view module) {
  return ClassifyVerlModule(module).kind == VerlEntryPoint::Kind::kRl;
}

std::vector<std::string> VerlRecipeNotes(Settings& s, const VerlEntryPoint& entry) {
  std::vector<std::string> notes;
  if (entry.recipe.empty() || entry.kind != VerlEntryPoint::Kind::kRl) return notes;
  std::string what = fmt::format(
      "{} ({}, config {} over verl's ppo_trainer): priced as verl's "
      "PPO step",
      entry.recipe, entry.module, entry.config_name);
  if (!entry.reason.empty()) what += "; " + entry.reason;
  notes.push_back(what);
  if (entry.recipe != "DAPO") return notes;
  // DAPO's dynamic sampling (recipe/dapo/dapo_ray_trainer.py): with filter_groups.enable it
  // generates data.gen_batch_size prompts a round, drops the groups whose rewards all agree, and
  // generates again until train_batch_size groups remain, at most max_num_gen_batches rounds.
  const SourcedValue* filter = s.Use("algorithm.filter_groups.enable");
  if (filter != nullptr && (filter->value == "True" || filter->value == "true")) {
    const SourcedValue* gen = s.Use("data.gen_batch_size");
    const SourcedValue* rounds = s.Use("algorithm.filter_groups.max_num_gen_batches");
    const SourcedValue* metric = s.Use("algorithm.filter_groups.metric");
    notes.push_back(fmt::format(
        "algorithm.filter_groups.enable = {} ({}): DAPO's dynamic sampling generates {} prompts "
        "a round{} and keeps the groups whose {} differs among the samples, until "
        "train_batch_size groups remain ({}); priced as one generation of "
        "train_batch_size prompts: set batch.prompts to the prompts a step generates (a log's "
        "train/num_gen_batches x gen_batch_size)",
        filter->value, filter->source,
        gen != nullptr ? fmt::format("data.gen_batch_size = {}", gen->value)
                       : std::string("data.gen_batch_size (train_batch_size by default)"),
        gen != nullptr ? " (" + gen->source + ")" : "",
        metric != nullptr ? metric->value : "metric",
        rounds != nullptr ? fmt::format("at most {} rounds: {}", rounds->value, rounds->source)
                          : std::string("no limit on the rounds")));
  } else {
    notes.push_back(
        "algorithm.filter_groups (DAPO's dynamic sampling) is off (DAPO's default): one "
        "generation per step, as priced");
  }
  for (const char* key : {"reward_model.overlong_buffer.enable",
                          "reward_model.reward_kwargs.overlong_buffer_cfg.enable"}) {
    const SourcedValue* v = s.Use(key);
    if (v == nullptr) continue;
    notes.push_back(
        fmt::format("{} = {} ({}): DAPO's overlong penalty shapes the reward only (no pass "
                    "is added); responses still run to data.max_response_length",
                    key, v->value, v->source));
  }
  return notes;
}

}  // namespace strata
