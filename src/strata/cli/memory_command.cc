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
#include "strata/memory/oom_advice.h"
#include "strata/report/html_report.h"
#include "strata/report/memory_json.h"
#include "strata/report/memory_text.h"

namespace strata::cli {

int RunMemory(int argc, char** argv) {
  CLI::App app{"Per-GPU memory of a training job, item by item and phase by phase.",
               "strata memory"};
  JobRequest request;
  bool explain = false;
  bool json = false;
  std::string output;
  AddJobOptions(app, request);
  app.add_flag("--explain", explain, "print each item's formula with the numbers substituted");
  app.add_flag("--json", json, "print JSON for scripts");
  app.add_option("-o,--output", output, "write the output to this file (atomically)");
  std::string svg;
  AddSvgOption(app, svg);
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto job = ResolveJobRequest(request);
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
                                : RenderMemoryText(*job, ledger, fixes, explain);
  if (int rc = EmitOutput(text, output); rc != kExitOk) return rc;
  if (int rc = WriteSvg(svg, MemoryFigure(ledger).svg); rc != kExitOk) return rc;
  return ledger.fits ? kExitOk : kExitCheckFailed;
}

}  // namespace strata::cli
