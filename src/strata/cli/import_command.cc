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
#include "strata/rl/rl_job.h"

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
  j["unused_no_step_cost"] = r.unused_no_step_cost;
  j["unused_not_modelled"] = r.unused_not_modelled;
  j["yaml"] = r.yaml;
  if (!r.model_json.empty()) j["model_json"] = r.model_json;
  if (r.rl) {
    Json rl_fields = Json::array();
    for (const auto& f : r.rl->fields) {
      rl_fields.push_back({{"key", f.key}, {"value", f.value}, {"source", f.source}});
    }
    j["rl"] = {{"fields", rl_fields},
               {"defaults", r.rl->defaults},
               {"notes", r.rl->notes},
               {"yaml", r.rl->yaml}};
  }
  return j;
}

// The RL job's verl defaults, as --explain lists the actor's.
std::string RenderRlDefaults(const RlImport& rl) {
  std::string out = "\n# RL job: " + std::to_string(rl.fields.size()) +
                    " fields; verl defaults "
                    "and strata's assumptions applied:\n";
  for (const auto& d : rl.defaults) out += "#   " + d + "\n";
  return out;
}

int EmitRlImport(const ImportReport& report, const std::string& output,
                 const std::string& actor_path, bool json, bool explain) {
  const RlImport& rl = *report.rl;
  if (!output.empty()) {
    if (auto st = WriteFileAtomic(actor_path, report.yaml); !st.ok()) {
      return ReportError(st.error());
    }
    if (int code = EmitOutput(rl.yaml, output); code != kExitOk) return code;
  }
  if (json) return EmitOutput(DumpJson(ImportJson(report)), "");
  const std::string actor_text = explain ? RenderImportText(report) : report.yaml;
  if (!output.empty()) {
    std::string summary = "wrote " + output + " (RL job; " + report.format + ")\n";
    summary += "wrote " + actor_path + " (the actor's training job)\n";
    summary += RenderImportNotes(report);
    if (!explain) summary += RenderIgnoredKeys(report);
    if (!rl.notes.empty()) {
      summary += "# what strata rl does not model of this launch:\n";
      for (const auto& n : rl.notes) summary += "#   " + n + "\n";
    }
    if (explain) summary += RenderRlDefaults(rl) + actor_text.substr(report.yaml.size());
    return EmitOutput(summary, "");
  }
  std::string text = rl.yaml;
  if (explain) text += RenderRlDefaults(rl);
  text +=
      "\n# ---- the actor's training job (-o writes it beside the RL job, as actor.job "
      "names it) ----\n";
  text += actor_text;
  if (!explain) {
    text += "\n# " + std::to_string(report.defaults.size() + rl.defaults.size()) +
            " framework defaults applied: --explain lists them\n";
    text += RenderIgnoredKeys(report);
  }
  return EmitOutput(text, "");
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
  // An RL launch (verl's main_ppo) is an RL job: it is written to -o and the actor's training
  // job beside it as <stem>.actor.yaml, which the RL job names (read relative to itself), the
  // way a Megatron-style model description goes beside its job as <stem>.model.json.
  std::string actor_path;
  if (!output.empty()) {
    const std::filesystem::path job_path(output);
    options.actor_job_ref = job_path.stem().string() + ".actor.yaml";
    actor_path = (job_path.parent_path() / options.actor_job_ref).string();
  }
  auto report = ImportJobFile(input, options);
  if (!report.ok()) return ReportError(report.error());
  if (report->rl) {
    // Parsed back: proves the imported file is a valid RL job.
    auto spec = ParseRlSpec(report->rl->yaml, input + " (imported RL job)");
    if (!spec.ok()) {
      Error e = std::move(spec).error();
      e.message = "the imported RL job is not valid: " + e.message;
      return ReportError(e);
    }
    return EmitRlImport(*report, output, actor_path, json, explain);
  }
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
