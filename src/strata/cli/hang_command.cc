// strata hang BUNDLE_DIR... | FILE...: the culprit rank of a hung job, from whatever evidence was
// collected. Also `strata hang --synth CASE --out DIR`: synthetic bundles to try it on.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/json_output.h"
#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/collect/synth.h"
#include "strata/report/hang_verdict.h"

namespace strata::cli {
namespace {

int RunSynth(const std::string& name, const hang::SynthOptions& base, const std::string& out_dir) {
  auto kind = hang::ParseSynthCase(name);
  if (!kind.ok()) return ReportError(kind.error());
  if (out_dir.empty()) {
    return ReportError(InvalidInput("--synth needs --out DIR, the directory to write bundles into")
                           .InField("--out"));
  }
  hang::SynthOptions options = base;
  options.kind = *kind;
  if (auto st = hang::WriteSynthBundles(options, out_dir); !st.ok()) return ReportError(st.error());
  const int64_t nodes = (options.ranks + options.ranks_per_node - 1) / options.ranks_per_node;
  fmt::print("wrote {} bundle{} ({} ranks, case {}) under {}\n", nodes, nodes == 1 ? "" : "s",
             options.ranks, name, out_dir);
  return kExitOk;
}

}  // namespace

int RunHang(int argc, char** argv) {
  CLI::App app{
      "Find the culprit rank of a hung job: reads bundle directories written by 'strata collect' "
      "and/or loose files (py-spy dumps, flight-recorder dumps, logs, NCCL RAS output).\n"
      "Exit codes: 0 the evidence shows a healthy job, 1 a hang or problem found, 2 bad usage or "
      "no readable input, 3 no verdict: files were read but nothing in them could be used.",
      "strata hang"};
  std::vector<std::string> paths;
  OutputOptions out;
  size_t frames = 8;
  std::string synth;
  std::string out_dir;
  hang::SynthOptions synth_options;
  app.add_option("paths", paths, "bundle directories or evidence files");
  AddOutputOptions(app, out, kJsonFlag, "", "the verdict");
  app.add_option("--frames", frames, "frames shown per stack group in the text summary")
      ->capture_default_str();
  app.add_option(
      "--synth", synth,
      "write synthetic bundles instead: oom-teardown, wrong-nic, mismatch, p2p-deadlock, clean");
  app.add_option("--out", out_dir, "with --synth: the directory to write the bundles into");
  app.add_option("--ranks", synth_options.ranks, "with --synth: world size")->capture_default_str();
  app.add_option("--ranks-per-node", synth_options.ranks_per_node,
                 "with --synth: ranks on each node")
      ->capture_default_str();
  app.add_option("--culprit", synth_options.culprit, "with --synth: the odd rank")
      ->capture_default_str();
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  if (!synth.empty()) return RunSynth(synth, synth_options, out_dir);
  if (paths.empty()) {
    return ReportError(
        InvalidInput("no evidence given: pass bundle directories from 'strata collect' "
                     "or py-spy dumps, flight-recorder dumps, logs")
            .WithHint("strata hang bundles/*   (see 'strata hang --help')"));
  }
  auto frameworks = hang::LoadFrameworkTimeouts();
  if (!frameworks.ok()) return ReportError(frameworks.error());
  auto evidence = hang::LoadEvidence(paths);
  if (!evidence.ok()) return ReportError(evidence.error());
  for (const hang::Unreadable& u : evidence->unreadable) {
    Warn(fmt::format("skipped unreadable file {}: {}", u.file, u.reason));
  }
  const hang::Verdict verdict = hang::Analyze(*evidence, {std::move(frameworks).value()});
  const std::string text =
      out.json ? DumpJson(hang::VerdictToJson(verdict)) : hang::VerdictToText(verdict, frames);
  if (int code = EmitOutputs(out, text); code != kExitOk) return code;
  // Every file unreadable is bad input, not "no hang": the verdict above says which and why.
  const bool nothing_read = evidence->ranks.empty() && evidence->fr_dumps.empty() &&
                            evidence->watchdog.empty() && evidence->ras.empty() &&
                            evidence->logs.empty() && evidence->gpu_apps.empty() &&
                            evidence->timelines.empty();
  if (nothing_read && !verdict.hang) return kExitBadInput;
  // Files were read but nothing in them could be used: not "no hang", and not bad input either.
  if (!verdict.hang && verdict.finding.kind == "unknown") return kExitNoVerdict;
  return verdict.hang ? kExitCheckFailed : kExitOk;
}

}  // namespace strata::cli
