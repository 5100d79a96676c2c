// strata model: parameters by module kind, totals, active parameters, a per-layer table and
// FLOPs per token of a Hugging Face config.json (a path or a catalog name; none: the
// reference model).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/model/model_catalog.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"
#include "strata/report/model_report.h"

namespace strata::cli {

int RunModel(int argc, char** argv) {
  CLI::App app{"Parameters and FLOPs per token of a model (no argument: the reference model)",
               "strata model"};
  std::string model = kReferenceModelName;
  std::string seq = "4096";
  OutputOptions out;
  app.add_option("model", model, "config.json path or catalog name in data/models/")
      ->capture_default_str();
  app.add_option("--seq", seq,
                 "sequence length the attention FLOPs are given at (4096, 32K = 32,768, 48Ki)")
      ->capture_default_str();
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag);
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  auto seq_tokens = ParseSequenceLength(seq);
  if (!seq_tokens.ok()) return ReportError(Error(seq_tokens.error()).InField("--seq"));
  auto config = LoadModelConfig(model);
  if (!config.ok()) return ReportError(config.error());
  auto entry = FindCatalogModel(config->name);
  if (!entry.ok()) return ReportError(entry.error());
  std::optional<int64_t> nominal;
  if (*entry) nominal = (*entry)->nominal_active_params;
  const ModelReport report = BuildModelReport(*config, *seq_tokens, nominal);
  const std::string text =
      out.json ? DumpJson(ModelJson(report)) : RenderModelText(report, out.explain);
  return EmitOutputs(out, text);
}

}  // namespace strata::cli
