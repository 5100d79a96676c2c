#include "strata/importer/verl_actor_layout.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

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

// verl's megatron actor wraps each model chunk in megatron-core's DDP with
// {use_distributed_optimizer, grad_reduce_in_fp32: True, overlap_grad_reduce: False} updated by
// actor.megatron.override_ddp_config, as DistributedDataParallelConfig(**dict)
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/megatron_utils.py:139-146;
// megatron_workers.py:567-568 reads the key). The defaults are what the import writes without it;
// an override changes the gradient buffer's dtype (memory) and whether the DP collectives hide
// behind compute (step).
Status MapVerlDdpOverrides(Settings& s, JobBuilder& job) {
  const std::string prefix = "actor_rollout_ref.actor.megatron.override_ddp_config.";
  const auto bool_of = [&](const std::string& key) -> Result<std::optional<bool>> {
    return s.Bool(prefix + key);
  };
  STRATA_ASSIGN_OR_RETURN(const std::optional<bool> fp32, bool_of("grad_reduce_in_fp32"));
  if (fp32.has_value()) {
    // Off, the buffer holds the gradients in the parameters' dtype (megatron-core's
    // param_and_grad_buffer: grad_dtype = torch.float if grad_reduce_in_fp32 else param_dtype).
    const std::string params = job.Has("precision.params") ? job.Get("precision.params") : "bf16";
    job.Set("precision.grads", *fp32 ? "fp32" : params,
            s.Use(prefix + "grad_reduce_in_fp32")->source);
  }
  for (const auto& [key, field] :
       {std::pair{"overlap_grad_reduce", "overlap.grad_reduce"},
        std::pair{"overlap_param_gather", "overlap.param_gather"},
        std::pair{"use_distributed_optimizer", "optimizer.distributed"}}) {
    STRATA_ASSIGN_OR_RETURN(const std::optional<bool> on, bool_of(key));
    if (on.has_value()) job.Set(field, *on ? "true" : "false", s.Use(prefix + key)->source);
  }
  for (const auto& [key, v] : s.Unused()) {
    if (key.rfind(prefix, 0) != 0) continue;
    job.Note(fmt::format("{} = {} ({}): megatron-core's DDP setting, read and not modelled", key,
                         v.value, v.source));
    s.Ignore(key);
  }
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
