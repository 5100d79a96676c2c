// strata import FILE: a strata job YAML from how the job is launched (Megatron-LM command or log,
// ms-swift command or args.json, torchtitan TOML, DeepSpeed JSON + HF TrainingArguments, verl
// YAML). All reading and mapping is in the library (importer/import_job.h); this parses flags,
// writes the files atomically and renders the report.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/file_io.h"
#include "strata/core/json_output.h"
#include "strata/importer/import_job.h"
#include "strata/report/import_report.h"

namespace strata::cli {

namespace {

Json ImportJson(const ImportReport& r) {
  Json j = JsonDocument("import");
  j["format"] = r.format;
  Json fields = Json::array();
  for (const auto& f : r.fields) {
    fields.push_back({{"key", f.key}, {"value", f.value}, {"source", f.source}});
  }
  j["fields"] = fields;
  j["defaults"] = r.defaults;
  j["notes"] = r.notes;
  j["unused"] = r.unused;
  j["yaml"] = r.yaml;
  if (!r.model_json.empty()) j["model_json"] = r.model_json;
  return j;
}

}  // namespace

int RunImport(int argc, char** argv) {
  CLI::App app{
      "Write a strata job YAML from a launch command, a Megatron log, ms-swift "
      "args.json, a torchtitan TOML, a DeepSpeed/HF config or a verl YAML",
      "strata import"};
  std::vector<std::string> inputs;
  OutputOptions out;
  ImportOptions options;
  app.add_option("file", inputs,
                 "launch script, log, JSON, TOML or YAML to import; then the other files of the "
                 "bundle it names (an Accelerate YAML, a DeepSpeed JSON, a sourced script), "
                 "used where it names a file of that name")
      ->required();
  app.add_option("--gpu", options.gpu, "GPU catalog name (launch commands do not say: H20, ...)");
  app.add_option("--nodes", options.nodes, "node count, when the input does not give it")
      ->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-node", options.gpus_per_node,
                 "GPUs per node, when the input does not give it")
      ->check(CLI::PositiveNumber);
  app.add_option("--model", options.model, "catalog name or config.json path to use instead");
  app.add_option("--cluster", options.cluster,
                 "cluster file or name under data/clusters/ the job runs on (its network for "
                 "step and map; its GPU and GPUs per node when the input lacks them)");
  app.add_option("--set", options.overrides,
                 "job field the input cannot give, key=value (sequence.mean_tokens=29K)");
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag,
                   "also list every framework default applied and every setting not used",
                   "the job YAML (a Megatron-style model description goes beside it as "
                   "<stem>.model.json)");
  if (auto code = ParseArgs(app, argc, argv)) return *code;
  const std::string input = inputs.front();
  options.files.assign(inputs.begin() + 1, inputs.end());
  const std::string& output = out.output;
  const bool json = out.json;
  const bool explain = out.explain;

  std::string model_json_path;
  if (!output.empty()) {
    const std::filesystem::path job_path(output);
    model_json_path =
        (job_path.parent_path() / (job_path.stem().string() + ".model.json")).string();
    options.model_json_path = model_json_path;
  }
  auto report = ImportJobFile(input, options);
  if (!report.ok()) return ReportError(report.error());
  if (!report->model_json.empty() && !model_json_path.empty()) {
    if (auto st = WriteFileAtomic(model_json_path, report->model_json); !st.ok()) {
      return ReportError(st.error());
    }
  }
  if (!output.empty()) {
    if (int code = EmitOutput(report->yaml, output); code != kExitOk) return code;
  }
  if (json) return EmitOutput(DumpJson(ImportJson(*report)), "");
  if (!output.empty()) {
    std::string summary = "wrote " + output + " (" + report->format + ")\n";
    if (!report->model_json.empty()) summary += "wrote " + model_json_path + "\n";
    summary += RenderImportNotes(*report);
    if (explain) summary += RenderImportText(*report).substr(report->yaml.size());
    return EmitOutput(summary, "");
  }
  std::string text = explain ? RenderImportText(*report) : report->yaml;
  if (!report->model_json.empty()) {
    text += "\n# model.json (Megatron-style description; written beside the job with -o):\n";
    text += report->model_json;
  }
  if (!explain) {
    text += "\n# " + std::to_string(report->defaults.size()) + " framework defaults applied, " +
            std::to_string(report->unused.size()) +
            " settings read but not used by a strata job: --explain lists them\n";
  }
  return EmitOutput(text, "");
}

}  // namespace strata::cli
