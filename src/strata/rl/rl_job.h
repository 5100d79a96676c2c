// An RL job: the actor's training job (a job file: model, cluster, Megatron layout, precision)
// plus what RL adds on top: the algorithm, prompts x samples per step, prompt and response
// lengths, the rollout engine's layout and memory setting, and where each side runs. Read from
// YAML (data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml is the reference), every key checked, unknown
// keys reported with "did you mean". Fields and their meaning: docs/rl.md, "The RL job file".
#ifndef STRATA_RL_RL_JOB_H_
#define STRATA_RL_RL_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/rl/kv_cache.h"
#include "strata/rl/response_lengths.h"

namespace strata {

enum class RlAlgorithm { kGrpo, kPpo };
std::string_view RlAlgorithmName(RlAlgorithm a);  // "grpo", "ppo"

/// kColocated: verl's hybrid engine, training and rollout take turns on every GPU.
/// kSplit: `rollout_gpus` GPUs generate, the rest train.
enum class RlPlacement { kColocated, kSplit };
std::string_view RlPlacementName(RlPlacement p);  // "colocated", "split"

/// A vLLM release as major.minor ("0.19").
struct EngineVersion {
  int64_t major = 0;
  int64_t minor = 19;
  bool AtLeast(int64_t ma, int64_t mi) const { return major > ma || (major == ma && minor >= mi); }
};

/// "0.19" or "0.19.1" (the patch level does not change what is modelled); nullopt otherwise.
std::optional<EngineVersion> ParseEngineVersion(std::string_view text);

struct RolloutSpec {
  std::string engine = "vllm";  // "vllm"; "sglang" is modelled as vLLM (docs/rl.md)
  EngineVersion vllm;
  int64_t tp = 1;                       // tensor parallelism of one vLLM instance
  double gpu_memory_utilization = 0.5;  // vLLM's fraction of the GPU's memory
  int64_t max_num_seqs = 1024;          // vLLM's cap on concurrently running sequences
  bool enforce_eager = false;           // vLLM enforce_eager: no CUDA graphs, eager kernels
  int64_t weight_bytes = 2;             // bf16 rollout weights
  CacheDtypes dtypes;                   // kv_cache_dtype, mamba_ssm_cache_dtype
};

/// Token counts of one sample (means and the cap; a sample never exceeds the max), and how
/// the responses spread around their mean (lengths.response_distribution).
struct RlLengths {
  double prompt_mean = 0;
  double prompt_max = 0;
  double response_mean = 0;
  double response_max = 0;
  ResponseShape response_shape = ResponseShape::kCappedExponential;

  /// The responses' distribution. A parsed job's shape always fits its mean and max (the parser
  /// refuses one that does not); a spec built in code that does not fit gets the capped
  /// exponential, which fits every mean up to the max.
  ResponseDistribution Responses() const;
};

struct RlSpec {
  std::string file;                          // where it was read from ("" when built in code)
  std::string actor_job;                     // a job file or data/jobs/ name
  std::vector<std::string> actor_overrides;  // "parallel.tp=2": --set on the actor's job
  RlAlgorithm algorithm = RlAlgorithm::kGrpo;
  int64_t prompts = 1;             // prompts per RL step (verl data.train_batch_size)
  int64_t samples_per_prompt = 1;  // responses per prompt (verl rollout.n)
  int64_t mini_batches = 1;        // optimizer steps per epoch (train_batch / ppo_mini_batch)
  int64_t epochs = 1;              // passes over the step's samples (verl ppo_epochs)
  /// verl's dynamic batch (use_dynamic_bsz): the actor's micro batches packed up to this many
  /// tokens per GPU (ppo_max_token_len_per_gpu); 0: a fixed micro batch of the actor's job's
  /// batch.micro_batch samples. The log-prob passes and PPO's critic have their own budgets
  /// (0: this one). micro_batch.h.
  int64_t max_tokens_per_gpu = 0;
  int64_t log_prob_max_tokens_per_gpu = 0;  // verl rollout.log_prob_max_token_len_per_gpu
  int64_t critic_max_tokens_per_gpu = 0;    // verl critic.ppo_max_token_len_per_gpu
  bool reference_model = true;  // a KL term against a frozen reference: one more forward pass
  /// The reference is the actor with its LoRA adapter disabled (verl's ref_in_actor): its pass
  /// runs on the actor's weights, and there are no reference weights to keep or offload.
  bool reference_in_actor = false;
  /// The reference has weights of its own beside the actor's.
  bool reference_weights() const { return reference_model && !reference_in_actor; }
  /// The trainer recomputes the old log-probs in a forward over every sample (verl's default,
  /// "decoupled" mode). false: the RL job's `old_log_prob: rollout`, verl's
  /// algorithm.rollout_correction.bypass_mode=True: the rollout's log-probs are the old ones
  /// and the trainer's pass does not run (verl/trainer/ppo/ray_trainer.py, fit: the
  /// `old_log_prob` timer only wraps the recompute branch).
  bool old_log_prob_pass = true;
  /// verl's use_remove_padding: false runs the trainer's passes (update, old log-prob,
  /// reference) on rows padded to prompt max + response max, whatever the samples' lengths.
  bool remove_padding = true;
  /// The tokens of one row in the trainer's passes: the mean sample, or the padded row.
  double TrainerRowTokens() const {
    return remove_padding ? lengths.prompt_mean + lengths.response_mean
                          : lengths.prompt_max + lengths.response_max;
  }
  RlLengths lengths;
  RolloutSpec rollout;
  RlPlacement placement = RlPlacement::kColocated;
  int64_t rollout_gpus = 0;   // kSplit: GPUs that generate
  bool one_step_off = false;  // kSplit: generation of step k+1 overlaps training on step k
  /// kColocated: the actor's weights, gradients and optimizer states leave the GPU while vLLM
  /// generates (verl's megatron param/grad/optimizer offload).
  bool offload_trainer = true;
  /// The job writes offload_trainer. A split's training GPUs follow it only then: unwritten, the
  /// default above is the hybrid engine's, and verl's own param/grad/optimizer_offload default to
  /// False.
  bool offload_trainer_written = false;
  /// The frozen reference model's weights leave the GPU between its passes (verl: the megatron
  /// ref.megatron.param_offload; the FSDP reference always runs under FSDP's CPU offload).
  /// Not written: as offload_trainer. Kept, they stay beside every other phase.
  bool offload_reference = true;

  int64_t samples() const { return prompts * samples_per_prompt; }
  bool dynamic_batch() const { return max_tokens_per_gpu > 0; }
  int64_t LogProbBudget() const {
    return log_prob_max_tokens_per_gpu > 0 ? log_prob_max_tokens_per_gpu : max_tokens_per_gpu;
  }
  int64_t CriticBudget() const {
    return critic_max_tokens_per_gpu > 0 ? critic_max_tokens_per_gpu : max_tokens_per_gpu;
  }
};

/// Parses RL job YAML; `overrides` are "key=value" (`--set`): RL keys as in the file
/// ("rollout.tp=4"), and "actor.<job key>=value" passed on to the actor's job.
/// The rollout engine as printed: "SGLang" or "vLLM" (SGLang is priced with vLLM's model).
std::string_view RolloutEngineLabel(const RlSpec& spec);

Result<RlSpec> ParseRlSpec(const std::string& text, const std::string& file,
                           const std::vector<std::string>& overrides = {});

/// Reads an RL job by path, or by name from data/jobs/. A relative file path in actor.job is
/// read beside the RL job file.
Result<RlSpec> LoadRlSpec(const std::string& path_or_name,
                          const std::vector<std::string>& overrides = {});

/// Every key an RL job may hold, dotted ("rollout.gpu_memory_utilization").
const std::vector<std::string>& RlSpecKeys();

/// The reference RL job, run when `strata rl` is given none.
inline constexpr const char* kReferenceRlJobName = "qwen3.6-35b-a3b-grpo-h20x40";

}  // namespace strata

#endif  // STRATA_RL_RL_JOB_H_
