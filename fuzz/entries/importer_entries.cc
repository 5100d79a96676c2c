// `strata import`: one target per input family, each named so that ImportJob reads it as that
// family (the file's extension chooses TOML and YAML; JSON is also recognised by a leading '{';
// anything else is a command line, a launch script or a log with Megatron's argument dump).
#include <string>

#include "entries/fuzz_entries.h"
#include "strata/importer/import_job.h"
#include "strata/report/import_report.h"

namespace strata::fuzz {
namespace {

// The import as the CLI does it, the text it prints, and the same result from a second import.
// The GPU is given, as `--gpu` does, so that inputs which do not name one get past that check.
void Import(std::string_view input, const std::string& file) {
  static const ImportOptions options = [] {
    ImportOptions o;
    o.gpu = "H20";
    return o;
  }();
  auto report = ImportJob(input, file, options);
  if (!report.ok()) {
    CheckTextOutput(report.error().Format());
    return;
  }
  Require(!report->yaml.empty(), "import: a successful import writes a job");
  const std::string text = RenderImportText(*report);
  CheckTextOutput(text);
  auto again = ImportJob(input, file, options);
  Require(again.ok(), "import: a second import succeeds");
  RequireSame(text, RenderImportText(*again), "import: importing twice gives one job");
}

}  // namespace

void ImportCmdline(std::string_view input) { Import(input, "fuzz-launch.sh"); }
void ImportToml(std::string_view input) { Import(input, "fuzz-train.toml"); }
void ImportJson(std::string_view input) { Import(input, "fuzz-config.json"); }
void ImportYaml(std::string_view input) { Import(input, "fuzz-trainer.yaml"); }

}  // namespace strata::fuzz
