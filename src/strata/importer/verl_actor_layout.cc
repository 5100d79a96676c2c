#include "strata/importer/verl_actor_layout.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "strata/core/text_scan.h"

namespace strata {

// verl's megatron actor does not read actor_rollout_ref.model.enable_gradient_checkpointing: at
// volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7 the key is read by fsdp_workers.py
// (:439, :797) and the FSDP/veomni engines alone, and megatron-core's TransformerConfig is built
// from override_transformer_config (megatron_workers.py:230, hf_to_mcore_config(hf_config, dtype,
// **override_transformer_config)); docs/examples/config.rst:237 calls the key "FSDP only" and says
// "Megatron uses recompute options in override_transformer_config". Since 244481ac8 (2025-07-22,
// #2675) no megatron code reads it; before, single_controller/base/megatron/worker.py (028af31be
// :73-77) took the recompute from model.gradient_checkpointing_kwargs, whose granularity defaults
// to null (ppo_megatron_trainer.yaml:33), so the key alone recomputed nothing there either. A
// launch that sets those old kwargs runs a release-dependent recompute: refused.
Status NoteMegatronIgnoresGradientCheckpointing(Settings& s, JobBuilder& job) {
  const std::string kwargs =
      "actor_rollout_ref.model.gradient_checkpointing_kwargs.activations_checkpoint_granularity";
  if (const SourcedValue* g = s.Use(kwargs);
      g != nullptr && g->value != "null" && g->value != "None" && g->value != "~") {
    return InvalidInput(fmt::format("{} = {}: verl's megatron workers read it only before "
                                    "volcengine/verl@244481ac8 (2025-07-22) and ignore it since",
                                    kwargs, g->value))
        .InField(kwargs)
        .WithHint(
            "read from " + g->source +
            "; state the recompute as "
            "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity");
  }
  const SourcedValue* v = s.Use("actor_rollout_ref.model.enable_gradient_checkpointing");
  if (v == nullptr) return OkStatus();
  job.Note(
      fmt::format("actor_rollout_ref.model.enable_gradient_checkpointing = {} ({}): not read "
                  "by verl's megatron workers (FSDP only); the recompute is "
                  "override_transformer_config.recompute_*",
                  v->value, v->source));
  return OkStatus();
}

// verl's FSDP workers build their device mesh with create_device_mesh(world_size, fsdp_size)
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/fsdp_workers.py:98-104,
// called at :166 with actor.fsdp_config.fsdp_size): one "fsdp" dimension over every rank when
// fsdp_size < 0 (the default -1, _generated_ppo_trainer.yaml:34) or >= world_size, else
// (world_size // fsdp_size, fsdp_size) named ["ddp", "fsdp"]: HSDP, the states sharded over
// groups of fsdp_size consecutive ranks and replicated world_size / fsdp_size times.
Status MapVerlFsdpSize(Settings& s, JobBuilder& job, int64_t world, int64_t job_gpus) {
  const std::string key = "actor_rollout_ref.actor.fsdp_config.fsdp_size";
  const SourcedValue* v = s.Use(key);
  if (v == nullptr || v->value == "null" || v->value == "None") return OkStatus();
  const std::optional<int64_t> size = ParseInt64(v->value);
  if (!size.has_value() || *size == 0) {
    return InvalidInput(fmt::format("{} = '{}': expected a positive GPU count, or -1 for every "
                                    "rank (verl divides the world size by it)",
                                    key, v->value))
        .InField(key)
        .WithHint("read from " + v->source);
  }
  if (*size < 0 || *size >= world) return OkStatus();
  if (world % *size != 0 || job_gpus % *size != 0) {
    return InvalidInput(fmt::format("{} = {} does not divide the {} training GPUs: verl's "
                                    "device mesh ({} x {}) would not cover them",
                                    key, *size, world, world / *size, *size))
        .InField(key)
        .WithHint("read from " + v->source);
  }
  job.Derive("sharding.replicate", std::to_string(job_gpus / *size),
             fmt::format("fsdp_config.fsdp_size = {} ({}): verl's HSDP mesh, FSDP groups of {} "
                         "GPUs, {} of them",
                         *size, v->source, *size, job_gpus / *size));
  return OkStatus();
}

}  // namespace strata
