// The RL job of a verl launch (`python3 -m verl.trainer.main_ppo key=value ...`, or verl's trainer
// YAML): the rollout engine and its layout, prompts x samples, the length caps, the critic and
// reference models and the placement around the actor's training job, each value with the line
// it came from or verl's default (data/verl_rl_defaults.yaml). Checked as verl checks it before a
// run (batch divisibility), so that a launch verl would refuse is refused here, by key and line.
#ifndef STRATA_IMPORTER_VERL_RL_MAPPING_H_
#define STRATA_IMPORTER_VERL_RL_MAPPING_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "strata/core/result.h"
#include "strata/importer/import_job.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/launch_bundle.h"
#include "strata/importer/settings.h"
#include "strata/importer/verl_entry_points.h"

namespace strata {

/// A verl launch script whose last line is continued ('\') with nothing after it: the command
/// was cut off (bash would run what is left); an error naming the line. A last line that is a
/// comment continues nothing, whatever it ends with.
Status CheckVerlCommandComplete(std::string_view text, const std::string& file);

/// verl's Hydra base config given with the launch (`strata import run.sh ppo_trainer.yaml`): the
/// YAML that `--config-name` names (main_ppo's own default: ppo_trainer), read under the
/// command's overrides, which win as in Hydra. Without it in the bundle, verl's defaults apply
/// (data/verl_rl_defaults.yaml).
Status MergeVerlBaseConfig(Settings& s, Bundle& bundle, const std::filesystem::path& base,
                           std::string_view module = "verl.trainer.main_ppo");

/// A verl trainer YAML that configures rollouts (actor_rollout_ref.rollout.*).
bool IsVerlRlConfig(const Settings& s);

/// verl's default of one key of its trainer config (data/verl_rl_defaults.yaml: `ppo_trainer`
/// for the FSDP actor, `ppo_megatron_trainer` for megatron), with the config it comes from.
struct VerlDefault {
  std::string value;
  std::string source;
};
Result<VerlDefault> VerlDefaultOf(bool megatron, const std::string& key);

/// Builds the RL job. `actor` holds the actor's job fields as MapVerl set them; `actor_job_ref`
/// is what the RL job's actor.job says; `input` names the launch for the header; `module` the
/// entry point (a recipe's keys strata does not model are noted).
Result<RlImport> MapVerlRl(Settings& s, const JobBuilder& actor, const std::string& actor_job_ref,
                           const std::string& input, const std::string& format,
                           std::string_view module = "verl.trainer.main_ppo");

}  // namespace strata

#endif  // STRATA_IMPORTER_VERL_RL_MAPPING_H_
