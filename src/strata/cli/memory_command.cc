// strata memory [JOB] [--model M] [--set key=value ...] [--explain] [--json]: will the job fit, and
// what eats the memory? Per-GPU items in GB and GiB, the peak of each phase against the card,
// the verdict and, for an OOM, the cheapest changes that make it fit.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/eval/evaluation.h"
#include "strata/report/html_report.h"
#include "strata/report/memory_json.h"
#include "strata/report/memory_text.h"

namespace strata::cli {

int RunMemory(int argc, char** argv) {
  CLI::App app{"Per-GPU memory of a training job, item by item and phase by phase.",
               "strata memory"};
  JobRequest request;
  OutputOptions out;
  AddJobOptions(app, request);
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag | kSvgFlag,
                   "print each item's formula with the numbers substituted");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto job = ResolveJobRequest(request, workspace->memory.engines);
  if (!job.ok()) return ReportError(job.error());
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kMemory, .memory_fixes = true});
  if (!e.ok()) return ReportError(e.error());
  const MemoryLedger& ledger = e->ledger;
  const std::vector<MemoryFix>& fixes = e->fixes;
  if (ledger.only_after_step1_exceeds) {
    Warn(fmt::format(
        "step 1 fits ({}) but the Adam moments allocated at its end take the peak to {}, over "
        "the {} card: the job would OOM after the first optimizer step",
        FormatGB(ledger.peak_before_step1), FormatGB(ledger.peak_after_step1),
        FormatGB(ledger.capacity)));
  }
  const std::string text = out.json ? DumpJson(LedgerToJson(*job, ledger, fixes))
                                    : RenderMemoryText(*job, ledger, fixes, out.explain);
  if (int rc = EmitOutputs(out, text, [&] { return MemoryFigure(ledger).svg; }); rc != kExitOk) {
    return rc;
  }
  return ledger.fits ? kExitOk : kExitCheckFailed;
}

}  // namespace strata::cli
