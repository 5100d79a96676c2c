// One mapper per framework: from that framework's settings to strata job fields. Each applies
// the framework's own defaults (named in the report) and leaves unused settings unmarked so
// they are listed.
#ifndef STRATA_IMPORTER_FRAMEWORK_MAPPERS_H_
#define STRATA_IMPORTER_FRAMEWORK_MAPPERS_H_

#include <map>
#include <string>

#include "strata/core/result.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/settings.h"

namespace strata {

enum class MegatronFlavor {
  kMegatronLm,    // pretrain_gpt.py and friends, or the argument dump of its log
  kMsSwiftMcore,  // ms-swift `megatron sft|pt|rlhf` (Megatron-SWIFT) and its args.json
};

struct MapContext {
  const ImportOptions* options = nullptr;
  std::map<std::string, std::string> env;         // environment of the launch command
  std::map<std::string, std::string> env_origin;  // variables a sourced file set: "cluster.sh:3"
  std::string model_json;                         // out: a Megatron-style model description
  bool ms_swift = false;           // `swift sft`: ms-swift's defaults over the HF Trainer's
  bool trl_sft = false;            // TRL's SFTConfig (`trl sft`, TRL's sft.py, a TRL recipe YAML)
  std::string llamafactory_stage;  // LLaMA-Factory's stage (pt, sft, rm, ppo, dpo, kto)
  bool verl_rl = false;            // a verl RL launch: an RL job is written around this job
  bool verl_split = false;  // verl's one-step-off recipe: the rollout's nodes are the job's too
  /// A config file alone (a torchtitan TOML): no launch line says the node count, so a cluster
  /// named with --cluster gives it (torchrun's --nnodes default is no evidence here).
  bool config_alone = false;
};

Status MapMegatron(MegatronFlavor flavor, Settings& s, MapContext& ctx, JobBuilder& job);
Status MapTorchtitan(Settings& s, MapContext& ctx, JobBuilder& job);
Status MapHfDeepSpeed(Settings& s, MapContext& ctx, JobBuilder& job);
Status MapVerl(Settings& s, MapContext& ctx, JobBuilder& job);

/// verl's actor strategy as written (actor.strategy: fsdp, fsdp2, megatron), megatron for a
/// --config-name of the megatron trainer, else verl's default fsdp.
std::string VerlActorStrategy(Settings& s);

/// LoRA, QLoRA and DoRA as the job's adapter: TRL's use_peft with its lora_* keys, and
/// LLaMA-Factory's finetuning_type lora (its stage set in `ctx`), each with its own defaults.
/// megatron-core's recompute_modules (--recompute-modules, ms-swift's --recompute_modules, a
/// TransformerConfig override in verl), however the list is written, as recompute.modules; a
/// name megatron-core's selective recompute does not know is an error naming it and its source.
Status SetRecomputeModules(const SourcedValue& v, JobBuilder& job);
Status MapAdapter(Settings& s, const MapContext& ctx, JobBuilder& job);

/// `megatron sft`'s LoRA (train_type / tuner_type lora) on megatron-core's linears, with
/// Megatron-SWIFT's defaults.
Status MapMegatronSwiftAdapter(Settings& s, const MapContext& ctx, JobBuilder& job);

/// verl's LoRA on the actor (FSDP: model.lora_rank, lora_alpha, target_modules; megatron:
/// model.lora.rank, alpha, dropout, target_modules), with verl's defaults; `on` says whether the
/// launch trains adapters (a rank above 0).
Status MapVerlAdapter(Settings& s, const MapContext& ctx, JobBuilder& job, bool megatron, bool& on);

/// ms-swift's train_type (LoRA, ...) and quant_bits: run modes strata does not model, named as
/// approximations of the import.
void NoteTuningMode(Settings& s, JobBuilder& job);

/// ms-swift's padding_free (Megatron-SWIFT: on unless told otherwise; `swift sft`: off): unpacked
/// samples are concatenated without padding, so a micro batch holds its samples' real tokens,
/// which no launch states. Without the data's lengths (sequence.mean_tokens or a histogram) the
/// job sizes every sample at max_length, and the import notes that memory and step time are then
/// upper bounds. Off, batches are padded to their longest sample: nothing to add.
Status NoteUnpaddedSamples(Settings& s, JobBuilder& job, bool default_on,
                           const std::string& why_default);

/// Fields every mapper ends with: cluster from the options when the input lacks it, dp derived
/// from the world size, the unused settings listed.
Status FinishCommon(Settings& s, MapContext& ctx, JobBuilder& job, int64_t world_divisor);

}  // namespace strata

#endif  // STRATA_IMPORTER_FRAMEWORK_MAPPERS_H_
