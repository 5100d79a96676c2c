#include "strata/report/memory_text.h"

#include <fmt/format.h>

#include "strata/core/strings.h"
#include "strata/core/table.h"

namespace strata {
namespace {

std::string Gb(Bytes b) { return fmt::format("{:.2f}", b.gb()); }
std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

// How the optimizer's states are held: megatron-core's distributed optimizer is ZeRO-1; the
// other modes name their own sharding (an FSDP2 job has no "distributed optimizer").
std::string_view OptimizerSharding(ShardingMode mode) {
  switch (mode) {
    case ShardingMode::kNone:
      return "replicated";
    case ShardingMode::kZero1:
      return "distributed";
    case ShardingMode::kZero2:
      return "ZeRO-2 sharded";
    case ShardingMode::kZero3:
      return "ZeRO-3 sharded";
    case ShardingMode::kFsdp2:
      return "FSDP2 sharded";
  }
  return "?";
}

std::string Header(const Job& job, const MemoryLedger& ledger) {
  const JobSpec& s = job.spec;
  const ParallelLayout& l = s.layout;
  std::string recompute(RecomputeGranularityName(s.recompute.granularity));
  if (s.recompute.granularity == RecomputeGranularity::kFull) {
    recompute += fmt::format(" ({}, {} layer{})", RecomputeMethodName(s.recompute.method),
                             s.recompute.num_layers, s.recompute.num_layers == 1 ? "" : "s");
  }
  if (s.recompute.titan.op) recompute += " (torchtitan per-op)";
  if (s.recompute.titan.every_n_layers > 0) {
    recompute += fmt::format(" (torchtitan: every {}-th layer)", s.recompute.titan.every_n_layers);
  }
  std::string out;
  // The datasheet's figure ("80 GB", "96 GB") is a marketing size, often GiB written as GB; the
  // ledger compares against what the counters can reach. Print both, named, so the header's
  // "80 GB" and the card line's 84.88 GB do not read as a contradiction.
  const std::string card =
      ledger.capacity == ledger.datasheet_capacity
          ? fmt::format("{} per GPU: the datasheet's, no nvidia-smi total known for it",
                        FormatGB(ledger.capacity))
          : fmt::format("\"{:g} GB\" on the datasheet, {} usable per GPU",
                        ledger.datasheet_capacity.gb(), FormatGB(ledger.capacity));
  out += fmt::format("job: {} on {} x {} ({}{}){}{}\n", job.model.name, job.world(), job.gpu().name,
                     card, job.cluster.name.empty() ? "" : ", cluster " + job.cluster.name,
                     s.file.empty() ? "" : fmt::format(", from {}", s.file),
                     job.reference ? " (the reference job: no job or model was given)" : "");
  out += fmt::format("layout: {}\n", LayoutHeader(l, job.model.HasLayers(FfnKind::kMoe)));
  out += fmt::format(
      "step: micro batch {} x {} tokens (longest sample), {} recompute, {} params, {} gradient "
      "buffer, {} optimizer, {} cross entropy\n",
      s.micro_batch, GroupDigits(s.sequence.max_tokens), recompute, DTypeName(s.param_dtype),
      DTypeName(s.grad_dtype), OptimizerSharding(s.sharding.mode),
      CrossEntropyImplName(s.cross_entropy));
  if (s.activation_offload.on()) {
    out += fmt::format("activation offload: the first {} layers' activations to host memory\n",
                       s.activation_offload.num_layers);
  }
  // Training modes beyond megatron-core's defaults (distributed optimizer, bf16 GEMMs).
  const ShardingSpec& sh = s.sharding;
  if (sh.mode != ShardingMode::kZero1 || sh.replicate > 1 || s.fp8.on() ||
      sh.offload_optimizer != OffloadTarget::kNone) {
    std::string modes = fmt::format("sharding {}", ShardingModeName(sh.mode));
    if (sh.replicate > 1) modes += fmt::format(" (HSDP: replicate {})", sh.replicate);
    if (sh.shards_weights() && !sh.reshard_after_forward) modes += ", no reshard after forward";
    if (sh.offload_optimizer != OffloadTarget::kNone) {
      modes += fmt::format(", optimizer offloaded to {}", OffloadTargetName(sh.offload_optimizer));
    }
    if (sh.offload_param != OffloadTarget::kNone) {
      modes += fmt::format(", parameters offloaded to {}", OffloadTargetName(sh.offload_param));
    }
    if (s.fp8.on()) {
      modes += fmt::format(", FP8 {}{}", Fp8RecipeName(s.fp8.recipe),
                           s.fp8.param_gather ? " with param gather" : "");
    }
    out += fmt::format("modes: {}\n", modes);
  }
  out += fmt::format("rank: {}; {} parameters on it ({} trainable)\n\n", ledger.rank,
                     GroupDigits(static_cast<double>(ledger.params_per_gpu)),
                     GroupDigits(static_cast<double>(ledger.trainable_params_per_gpu)));
  return out;
}

}  // namespace

std::string RenderMemoryText(const Job& job, const MemoryLedger& ledger,
                             const std::vector<MemoryFix>& fixes, bool explain) {
  std::string out = Header(job, ledger);
  Table items({{"item", Align::kLeft}, {"size (GB)"}, {"size (GiB)"}, {"note", Align::kLeft}});
  for (const auto& item : ledger.items) {
    items.AddRow({item.name, Gb(item.bytes), Gib(item.bytes), item.note});
  }
  out += items.Render();
  if (!ledger.host_items.empty()) {
    Table host({{"offloaded to host memory or NVMe", Align::kLeft}, {"size (GB)"}, {"size (GiB)"}});
    for (const auto& item : ledger.host_items) {
      host.AddRow({item.name, Gb(item.bytes), Gib(item.bytes)});
    }
    out += "\n" + host.Render();
  }
  if (explain) {
    out += "\nhow each item is computed (docs/formulas.md, \"Memory\"):\n";
    for (const auto& item : ledger.items) {
      out += fmt::format("  {}\n    = {}\n", item.name, item.formula);
    }
  }
  out += "\n";
  Table phases({{"phase", Align::kLeft}, {"peak (GB)"}, {"peak (GiB)"}, {"of card (%)"}});
  for (const auto& p : ledger.phases) {
    phases.AddRow({std::string(PhaseDescription(p.phase)), Gb(p.bytes), Gib(p.bytes),
                   fmt::format("{:.1f}", 100.0 * (p.bytes / ledger.capacity))});
  }
  out += phases.Render();
  if (explain) {
    out += "\nhow each phase adds up:\n";
    for (const auto& p : ledger.phases) {
      out += fmt::format("  {}\n    = {}\n", PhaseDescription(p.phase), p.formula);
    }
  }
  out += fmt::format("\npeak before the first optimizer step: {} ({})\n",
                     FormatGB(ledger.peak_before_step1), FormatGiB(ledger.peak_before_step1));
  out += fmt::format("peak after it (Adam moments allocated): {} ({})\n",
                     FormatGB(ledger.peak_after_step1), FormatGiB(ledger.peak_after_step1));
  out += fmt::format("card: {} ({}); headroom {} ({})\n", FormatGB(ledger.capacity),
                     FormatGiB(ledger.capacity), FormatGB(ledger.headroom()),
                     FormatGiB(ledger.headroom()));
  const AllocatorCounters& c = ledger.peak_counters;
  out += "\ncounters at the peak (what a running job shows):\n";
  Table counters(
      {{"counter", Align::kLeft}, {"size (GB)"}, {"size (GiB)"}, {"counts", Align::kLeft}});
  counters.AddRow(
      {"torch.cuda.max_memory_allocated", Gb(c.allocated), Gib(c.allocated), "tensors"});
  counters.AddRow({"torch.cuda.max_memory_reserved", Gb(c.reserved), Gib(c.reserved),
                   "+ the caching allocator's cache"});
  counters.AddRow({"device used (nvidia-smi)", Gb(c.device_used), Gib(c.device_used),
                   "+ CUDA context and NCCL buffers"});
  out += counters.Render();
  if (explain) {
    out += fmt::format(
        "\nhow each counter adds up (memory/allocator.h; docs/formulas.md, \"Memory counters\"):\n"
        "  max_memory_allocated\n    = {}\n  max_memory_reserved\n    = {}\n"
        "  device used\n    = {}\n",
        ledger.allocated_formula, ledger.reserved_formula, ledger.device_used_formula);
  }
  const std::string fallback = ledger.job_family != ledger.band_family
                                   ? fmt::format(" (no {} rows yet)", ledger.job_family)
                                   : "";
  out += fmt::format(
      "\nmodel's error band (band: {}{}, from {} rows): a measured device-used peak of {} to {} "
      "(measured / predicted ran from {:.3f} to {:.3f} on those rows of "
      "docs/memory-validation.md)\n",
      ledger.band_family, fallback, ledger.band_rows, FormatGB(ledger.band_low),
      FormatGB(ledger.band_high), ledger.band_low / ledger.Peak(),
      ledger.band_high / ledger.Peak());
  if (ledger.verdict == MemoryVerdict::kOom) {
    out += fmt::format("verdict: OOM in phase '{}'\n", PhaseDescription(ledger.oom_phase));
  } else if (ledger.verdict == MemoryVerdict::kAtRisk) {
    out += fmt::format(
        "verdict: at risk: fits by {} as predicted, but the top of the error band "
        "({}) is over the card\n",
        FormatGB(ledger.headroom()), FormatGB(ledger.band_high));
  } else {
    out += "verdict: fits, within the model's error\n";
  }
  for (const bool fitting : {true, false}) {
    std::string list;
    for (const auto& f : fixes) {
      if (f.fits != fitting) continue;
      list += fmt::format("  {}: peak {}; cost: {}\n    {}\n", f.change, FormatGB(f.peak), f.cost,
                          job.CommandLine("memory", f.overrides));
    }
    if (list.empty()) continue;
    out += fitting ? "\nchanges that make it fit, cheapest first:\n"
                   : "\nchanges that help but do not fit alone (combine them), best first:\n";
    out += list;
  }
  return out;
}

}  // namespace strata
