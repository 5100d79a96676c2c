#include "strata/report/checkpoint_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/core/strings.h"
#include "strata/core/table.h"
#include "strata/model/adapter.h"

namespace strata {
namespace {

std::string Hours(Seconds t) { return fmt::format("{:.1f} h", t.s() / 3600); }

// Whole GB from 10 GB up; below, a rounded "1 GB" would double a 0.5 GB adapter checkpoint.
std::string VerdictGb(Bytes b) {
  return b.gb() >= 10 ? fmt::format("{:.0f}", b.gb()) : fmt::format("{:.2f}", b.gb());
}

}  // namespace

std::string RenderCheckpointText(const Job& job, const std::string& cluster,
                                 const preflight::CheckpointPlan& p,
                                 const preflight::FailureRate& rate, bool explain) {
  const ParallelLayout& l = job.spec.layout;
  const preflight::CheckpointSizes& s = p.sizes;
  const preflight::CheckpointTimes& t = p.times;
  const preflight::CheckpointInterval& c = p.interval;
  std::string out = fmt::format("job: {} on {} x {} (TP {} PP {} EP {} DP {}){}\n\n",
                                job.model.name, s.world, job.gpu().name, l.tp, l.pp, l.ep, l.dp,
                                job.spec.file.empty() ? "" : ", from " + job.spec.file);
  Table sizes({{"checkpoint", Align::kLeft}, {"per rank (GB)"}, {"total (GB)"}, {"total (GiB)"}});
  auto row = [&](const std::string& name, Bytes per_rank, Bytes total) {
    sizes.AddRow({name, per_rank.count() > 0 ? fmt::format("{:.2f}", per_rank.gb()) : "-",
                  fmt::format("{:.1f}", total.gb()), fmt::format("{:.1f}", total.gib())});
  };
  const std::string_view master_dtype = DTypeName(job.spec.optimizer.master_dtype);
  if (s.adapters_only) {
    row(fmt::format(
            "adapters ({}, {} r={}, {} params)", master_dtype,
            AdapterKindName(job.spec.adapter.kind), job.spec.adapter.rank,
            GroupDigits(static_cast<double>(CoverageOf(job.model, job.spec.adapter).params))),
        s.weights_per_rank, s.adapter_total);
    row(fmt::format("frozen base ({}), not saved; a merged model is this size",
                    DTypeName(job.spec.param_dtype)),
        Bytes(), s.weights_total);
  } else {
    row(fmt::format("weights ({}){}", DTypeName(job.spec.param_dtype),
                    s.weights_saved ? "" : ", not a tensor of the checkpoint"),
        s.weights_per_rank, s.weights_total);
  }
  if (!s.optimizer_saved) {
    // Megatron's --no-save-optim, the Trainer's save_only_model: say what is left out rather
    // than print zeros.
    sizes.AddRow({fmt::format("master weights ({}) + optimizer states, not saved "
                              "(checkpoint.optimizer: false)",
                              master_dtype),
                  "-", "-", "-"});
  }
  if (s.master_total.count() > 0) {
    row(s.master_is_model_state
            ? fmt::format("{} parameters ({}, the model state)",
                          job.spec.sharding.mode == ShardingMode::kFsdp2 &&
                                  s.format != preflight::CheckpointFormat::kFsdpFullStateDict
                              ? "FSDP2 sharded"
                              : "whole",
                          master_dtype)
            : fmt::format("master weights ({})", master_dtype),
        s.master_per_rank, s.master_total);
  }
  if (s.optimizer_saved) {
    row("optimizer states (Adam moments)", s.moments_per_rank, s.moments_total);
  }
  if (s.consolidated_total.count() > 0) {
    row(fmt::format("whole model by rank 0 (model.safetensors, {})",
                    DTypeName(s.consolidated_dtype)),
        s.consolidated_total, s.consolidated_total);
  }
  sizes.AddSeparator();
  // PEFT models save adapter_model.safetensors in the Trainer's checkpoint, not the model.
  const bool hf = s.format == preflight::CheckpointFormat::kHfTrainer;
  const std::string format =
      hf && s.adapters_only
          ? std::string(s.optimizer_saved ? "HF Trainer adapter_model.safetensors + optimizer.pt"
                                          : "HF Trainer adapter_model.safetensors")
      : hf && !s.optimizer_saved ? "HF Trainer model.safetensors (save_only_model)"
                                 : std::string(preflight::CheckpointFormatName(s.format));
  row(format, s.checkpoint_per_rank(), s.checkpoint_total());
  row(s.adapters_only ? "PEFT adapter_model.safetensors (adapters only)"
                      : "HF safetensors (weights only)",
      Bytes(), s.hf_total());
  out += sizes.Render();
  const std::string_view mode = ShardingModeName(job.spec.sharding.mode);
  out +=
      job.spec.framework.given
          ? fmt::format("  written by: framework {}, sharding {}\n", job.spec.framework.name, mode)
          : fmt::format(
                "  written by: ASSUMED from sharding {} (the job names no framework; "
                "set framework.name)\n",
                mode);
  out += fmt::format(
      "  per rank: what the busiest rank writes; total: the whole model once, whatever the "
      "sharding{}\n",
      s.consolidated_total.count() > 0 ? ", and the whole model once more" : "");
  if (s.adapters_only) {
    out += fmt::format("  adapters on: {}\n",
                       fmt::join(CoverageOf(job.model, job.spec.adapter).matrices, "; "));
  }
  if (s.format == preflight::CheckpointFormat::kFsdpFullStateDict) {
    out +=
        "  full state dict (checkpoint.state_dict: full, Accelerate's FULL_STATE_DICT): rank 0 "
        "gathers the model and the optimizer state and writes them alone, and the Trainer's "
        "save_model writes model.safetensors from the same gathered model; the time is for one "
        "writer at its node's full storage bandwidth, a best case\n";
  } else if (s.consolidated_total.count() > 0) {
    out +=
        "  16-bit model: the HF Trainer's save_model writes model.safetensors from rank 0 beside "
        "DeepSpeed's files (under ZeRO-1/2 always; under ZeRO-3 with "
        "stage3_gather_16bit_weights_on_model_save, checkpoint.save_16bit_model)\n";
  }
  if (explain) {
    out += fmt::format(
        "\n  weights total = every parameter once ({} B each) = {}\n"
        "  optimizer total = master weights and states of every trainable parameter once = {}\n"
        "  busiest node writes {} (the write and the restart wait for it)\n",
        DTypeBytes(job.spec.param_dtype), FormatGB(s.weights_total), FormatGB(s.optimizer_total()),
        FormatGB(s.busiest_node));
  }
  if (!p.timed()) {
    out += fmt::format(
        "\nstorage: {}\n  the sizes above need none; the write and load times and the "
        "checkpoint interval need a storage entry\n",
        p.untimed_reason);
    out += fmt::format("\nverdict: a checkpoint holds {} GB; its time is unknown without storage\n",
                       VerdictGb(s.checkpoint_total()));
    return out;
  }
  out += fmt::format("\nstorage: {} of cluster {}, {} per node x {} node{}\n", t.storage, cluster,
                     FormatGBps(t.per_node), t.nodes, t.nodes == 1 ? "" : "s");
  if (p.storage_assumed) {
    out += fmt::format(
        "  ASSUMED: the job names no cluster file, so the storage is {}'s (a shipped cluster of "
        "the same GPU and GPUs per node); pass --cluster with your own storage\n",
        cluster);
  }
  // Where rank 0 writes everything (the Trainer without sharding, FSDP's full state dict), one
  // process on the first node writes; elsewhere every node writes its part at once.
  const bool rank0_writes = s.format == preflight::CheckpointFormat::kHfTrainer ||
                            s.format == preflight::CheckpointFormat::kFsdpFullStateDict;
  const std::string_view note = preflight::StorageNote(t.storage_kind);
  out += fmt::format("  {}: write {}, load {} ({}{}{})\n", format,
                     FormatSeconds(t.checkpoint_write), FormatSeconds(t.checkpoint_load),
                     rank0_writes   ? "rank 0 alone, on the first node"
                     : t.nodes == 1 ? "the one node"
                                    : fmt::format("all {} nodes at once", t.nodes),
                     note.empty() ? "" : "; ", note);
  out += fmt::format(
      "  HF safetensors: write {} (one writer), load {} (every node reads the whole model)\n",
      FormatSeconds(t.hf_write), FormatSeconds(t.hf_load));
  const bool async = job.spec.checkpoint.async_save;
  if (async) {
    out += fmt::format(
        "  asynchronous save (checkpoint.async_save): training waits for the busiest rank's {} "
        "copied to host memory over {} ({} a GPU, the line rate: a lower bound) = {}; the "
        "write above runs in the background\n",
        FormatGB(s.checkpoint_per_rank()), t.staging_link, FormatGBps(t.staging_rate),
        FormatSeconds(t.staging));
  }
  out += fmt::format(
      "\nfailures: {:.4g} interruptions per GPU-hour x {} GPU{}: one every {} ({:.1f} days)\n",
      c.failure_rate_per_gpu_hour, c.gpus, c.gpus == 1 ? "" : "s", Hours(c.mtbf),
      c.mtbf.s() / 86400);
  out += fmt::format("  source: {}\n", rate.source);
  out += fmt::format("interval: Young sqrt(2 x {} x {:.0f} s) = {}; Daly {}\n",
                     FormatSeconds(c.cost), c.mtbf.s(), Hours(c.young), Hours(c.daly));
  if (c.backed_up) {
    out += fmt::format(
        "  the background write ({}) is longer than the interval the copy alone would allow: "
        "each save waits for the previous one, so the write is priced as if synchronous\n",
        FormatSeconds(t.checkpoint_write));
  }
  if (explain) {
    out += fmt::format("  delta = {} {}; R = its load time {}; M = 3600 s / ({:.4g} x {})\n",
                       async && !c.backed_up ? "the copy to host memory" : "checkpoint write time",
                       FormatSeconds(c.cost), FormatSeconds(c.restart), c.failure_rate_per_gpu_hour,
                       c.gpus);
    if (c.background.s() > 0) {
      out += fmt::format(
          "  lost fraction = delta/tau + (tau/2 + W + R)/M, W the background write = {:.3g} "
          "s/{:.0f} s + ({:.0f} s/2 + {:.3g} s + {:.3g} s)/{:.0f} s\n",
          c.cost.s(), c.daly.s(), c.daly.s(), c.background.s(), c.restart.s(), c.mtbf.s());
    } else {
      out += fmt::format(
          "  lost fraction = delta/tau + (tau/2 + R)/M = {:.3g} s/{:.0f} s + ({:.0f} s/2 + "
          "{:.3g} s)/{:.0f} s\n",
          c.cost.s(), c.daly.s(), c.daly.s(), c.restart.s(), c.mtbf.s());
    }
  }
  out += fmt::format(
      "lost: {:.2f}% of the job's time = {:.1f} GPU-hours per day ({:.1f} checkpoints per day)\n",
      100 * c.lost_fraction, c.gpu_hours_lost_per_day, c.checkpoints_per_day);
  if (async && !c.backed_up) {
    out += fmt::format(
        "\nverdict: a checkpoint costs {} of training ({} GB, written in the background in {}); "
        "take one every {}\n",
        FormatSeconds(c.cost), VerdictGb(s.checkpoint_total()), FormatSeconds(t.checkpoint_write),
        Hours(c.daly));
    return out;
  }
  out += fmt::format("\nverdict: a checkpoint costs {} of training ({} GB); take one every {}\n",
                     FormatSeconds(c.cost), VerdictGb(s.checkpoint_total()), Hours(c.daly));
  return out;
}

Json CheckpointToJson(const Job& job, const preflight::CheckpointPlan& p,
                      const preflight::FailureRate& rate) {
  Json j = JsonDocument("checkpoint");
  j["model"] = job.model.name;
  j["gpus"] = p.sizes.world;
  Json sizes;
  sizes["format"] = std::string(preflight::CheckpointFormatName(p.sizes.format));
  sizes["weights_saved"] = p.sizes.weights_saved;
  sizes["master_is_model_state"] = p.sizes.master_is_model_state;
  sizes["busiest_node_bytes"] = JsonBytes(p.sizes.busiest_node);
  sizes["weights_per_rank_bytes"] = JsonBytes(p.sizes.weights_per_rank);
  sizes["master_per_rank_bytes"] = JsonBytes(p.sizes.master_per_rank);
  sizes["moments_per_rank_bytes"] = JsonBytes(p.sizes.moments_per_rank);
  sizes["weights_total_bytes"] = JsonBytes(p.sizes.weights_total);
  sizes["master_total_bytes"] = JsonBytes(p.sizes.master_total);
  sizes["moments_total_bytes"] = JsonBytes(p.sizes.moments_total);
  sizes["checkpoint_total_bytes"] = JsonBytes(p.sizes.checkpoint_total());
  sizes["checkpoint_per_rank_bytes"] = JsonBytes(p.sizes.checkpoint_per_rank());
  sizes["hf_safetensors_total_bytes"] = JsonBytes(p.sizes.hf_total());
  if (p.sizes.adapters_only) {
    sizes["adapters_only"] = true;
    sizes["adapter_total_bytes"] = JsonBytes(p.sizes.adapter_total);
    const AdapterCoverage cov = CoverageOf(job.model, job.spec.adapter);
    sizes["adapter_params"] = cov.params;
    sizes["adapter_matrices"] = cov.matrices;
    sizes["merged_model_bytes"] = JsonBytes(p.sizes.weights_total);
  }
  sizes["optimizer_saved"] = p.sizes.optimizer_saved;
  sizes["consolidated_16bit_model_bytes"] = JsonBytes(p.sizes.consolidated_total);
  j["sizes"] = sizes;
  if (!p.timed()) {
    j["times"] = nullptr;
    j["interval"] = nullptr;
    j["untimed_reason"] = p.untimed_reason;
    return j;
  }
  Json times;
  times["storage"] = p.times.storage;
  times["storage_assumed"] = p.storage_assumed;
  times["per_node_bytes_per_s"] = p.times.per_node.bytes_per_s();
  times["nodes"] = p.times.nodes;
  times["checkpoint_write_s"] = RoundSig(p.times.checkpoint_write.s());
  times["checkpoint_load_s"] = RoundSig(p.times.checkpoint_load.s());
  times["hf_write_s"] = RoundSig(p.times.hf_write.s());
  times["hf_load_s"] = RoundSig(p.times.hf_load.s());
  times["async_save"] = job.spec.checkpoint.async_save;
  if (job.spec.checkpoint.async_save) {
    times["staging_s"] = RoundSig(p.times.staging.s());
    times["staging_link"] = p.times.staging_link;
    times["staging_bytes_per_s"] = p.times.staging_rate.bytes_per_s();
  }
  j["times"] = times;
  Json c;
  c["failure_rate_per_gpu_hour"] = p.interval.failure_rate_per_gpu_hour;
  c["failure_rate_source"] = rate.source;
  c["mtbf_s"] = RoundSig(p.interval.mtbf.s());
  c["checkpoint_cost_s"] = RoundSig(p.interval.cost.s());
  c["restart_s"] = RoundSig(p.interval.restart.s());
  c["background_write_s"] = RoundSig(p.interval.background.s());
  c["saves_back_up"] = p.interval.backed_up;
  c["young_interval_s"] = RoundSig(p.interval.young.s());
  c["daly_interval_s"] = RoundSig(p.interval.daly.s());
  c["lost_fraction"] = RoundSig(p.interval.lost_fraction);
  c["gpu_hours_lost_per_day"] = RoundSig(p.interval.gpu_hours_lost_per_day);
  c["checkpoints_per_day"] = RoundSig(p.interval.checkpoints_per_day);
  j["interval"] = c;
  return j;
}

}  // namespace strata
