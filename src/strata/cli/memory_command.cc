// strata memory [job.yaml] [--set key=value ...] [--explain] [--json]: will the job fit, and
// what eats the memory? Per-GPU items in GB and GiB, the peak of each phase against the card,
// the verdict and, for an OOM, the cheapest changes that make it fit.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/table.h"
#include "strata/memory/ledger_json.h"
#include "strata/memory/oom_advice.h"
#include "strata/memory/static_memory.h"

namespace strata::cli {
namespace {

std::string Gb(Bytes b) { return fmt::format("{:.2f}", b.gb()); }
std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

std::string Header(const Job& job, const MemoryLedger& ledger) {
  const JobSpec& s = job.spec;
  const ParallelLayout& l = s.layout;
  std::string recompute(RecomputeGranularityName(s.recompute.granularity));
  if (s.recompute.granularity == RecomputeGranularity::kFull) {
    recompute += fmt::format(" ({}, {} layer{})", RecomputeMethodName(s.recompute.method),
                             s.recompute.num_layers, s.recompute.num_layers == 1 ? "" : "s");
  }
  std::string out;
  out += fmt::format("job: {} on {} x {} ({} per GPU{}){}\n", job.model.name, s.cluster.world(),
                     job.gpu.name, FormatGB(job.gpu.memory),
                     s.cluster.name.empty() ? "" : ", cluster " + s.cluster.name,
                     s.file.empty() ? "" : fmt::format(", from {}", s.file));
  out += fmt::format("layout: TP {} PP {} VPP {} CP {} EP {} ETP {} DP {} (expert-DP {}){}\n",
                     l.tp, l.pp, l.vpp, l.cp, l.ep, l.etp, l.dp, l.expert_dp(),
                     l.sequence_parallel ? ", sequence parallel" : "");
  out += fmt::format(
      "step: micro batch {} x {} tokens (longest sample), {} recompute, {} params, {} gradient "
      "buffer, {} optimizer, {} cross entropy\n",
      s.micro_batch, FormatCount(s.sequence.max_tokens), recompute, DTypeName(s.param_dtype),
      DTypeName(s.grad_dtype), s.optimizer.distributed ? "distributed" : "replicated",
      CrossEntropyImplName(s.cross_entropy));
  // Training modes beyond megatron-core's defaults (distributed optimizer, bf16 GEMMs).
  const ShardingSpec& sh = s.sharding;
  if (sh.mode != ShardingMode::kZero1 || sh.replicate > 1 || s.fp8.on() ||
      sh.offload_optimizer != OffloadTarget::kNone) {
    out += fmt::format("modes: sharding {}{}{}{}{}{}\n", ShardingModeName(sh.mode),
                       sh.replicate > 1 ? fmt::format(" (HSDP: replicate {})", sh.replicate) : "",
                       sh.shards_weights() && !sh.reshard_after_forward ? ", no reshard after forward" : "",
                       sh.offload_optimizer != OffloadTarget::kNone
                           ? fmt::format(", optimizer offloaded to {}", OffloadTargetName(sh.offload_optimizer))
                           : "",
                       sh.offload_param != OffloadTarget::kNone
                           ? fmt::format(", parameters offloaded to {}", OffloadTargetName(sh.offload_param))
                           : "",
                       s.fp8.on() ? fmt::format(", FP8 {}{}", Fp8RecipeName(s.fp8.recipe),
                                                s.fp8.param_gather ? " with param gather" : "")
                                  : "");
  }
  out += fmt::format("rank: {}; {} parameters on it ({} trainable)\n\n", ledger.rank,
                     FormatCount(static_cast<double>(ledger.params_per_gpu)),
                     FormatCount(static_cast<double>(ledger.trainable_params_per_gpu)));
  return out;
}

std::string RenderText(const Job& job, const MemoryLedger& ledger,
                       const std::vector<MemoryFix>& fixes, bool explain) {
  std::string out = Header(job, ledger);
  Table items({{"item", Align::kLeft}, {"size (GB)"}, {"size (GiB)"}, {"note", Align::kLeft}});
  for (const auto& item : ledger.items) {
    items.AddRow({item.name, Gb(item.bytes), Gib(item.bytes), item.note});
  }
  out += items.Render();
  if (!ledger.host_items.empty()) {
    Table host({{"offloaded to host memory or NVMe", Align::kLeft}, {"size (GB)"}, {"size (GiB)"}});
    for (const auto& item : ledger.host_items) host.AddRow({item.name, Gb(item.bytes), Gib(item.bytes)});
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
  if (ledger.fits) {
    out += "verdict: fits\n";
  } else {
    out += fmt::format("verdict: OOM in phase '{}'\n", PhaseDescription(ledger.oom_phase));
  }
  for (const bool fitting : {true, false}) {
    std::string list;
    for (const auto& f : fixes) {
      if (f.fits != fitting) continue;
      std::string sets;
      for (const auto& o : f.overrides) sets += " --set " + o;
      list += fmt::format("  {}: peak {}; cost: {}\n    strata memory{}\n", f.change,
                          FormatGB(f.peak), f.cost, sets);
    }
    if (list.empty()) continue;
    out += fitting ? "\nchanges that make it fit, cheapest first:\n"
                   : "\nchanges that help but do not fit alone (combine them), best first:\n";
    out += list;
  }
  return out;
}

}  // namespace

int RunMemory(int argc, char** argv) {
  CLI::App app{"Per-GPU memory of a training job, item by item and phase by phase.",
               "strata memory"};
  std::string job_path;
  std::vector<std::string> sets;
  bool explain = false;
  bool json = false;
  std::string output;
  app.add_option("job", job_path,
                 "job file (YAML) or a name from data/jobs/; default: the reference job");
  app.add_option("--set", sets, "override a job field: --set parallel.ep=16 (repeatable)");
  app.add_flag("--explain", explain, "print each item's formula with the numbers substituted");
  app.add_flag("--json", json, "print JSON for scripts");
  app.add_option("-o,--output", output, "write the output to this file (atomically)");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto spec = LoadJobSpec(job_path.empty() ? kReferenceJobName : job_path, sets);
  if (!spec.ok()) return ReportError(spec.error());
  auto job = ResolveJob(*spec);
  if (!job.ok()) return ReportError(job.error());
  auto constants = LoadMemoryConstants();
  if (!constants.ok()) return ReportError(constants.error());

  const MemoryLedger ledger = ComputeLedger(*job, *constants);
  const std::vector<MemoryFix> fixes =
      ledger.fits ? std::vector<MemoryFix>{} : SuggestMemoryFixes(*job, *constants);
  if (ledger.only_after_step1_exceeds) {
    Warn(fmt::format(
        "step 1 fits ({}) but the Adam moments allocated at its end take the peak to {}, over "
        "the {} card: the job would OOM after the first optimizer step",
        FormatGB(ledger.peak_before_step1), FormatGB(ledger.peak_after_step1),
        FormatGB(ledger.capacity)));
  }
  const std::string text = json ? DumpJson(LedgerToJson(*job, ledger, fixes))
                                : RenderText(*job, ledger, fixes, explain);
  if (int rc = EmitOutput(text, output); rc != kExitOk) return rc;
  return ledger.fits ? kExitOk : kExitCheckFailed;
}

}  // namespace strata::cli
