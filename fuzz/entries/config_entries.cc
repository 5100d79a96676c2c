// Entries for the configuration parsers: HF model config.json, job YAML, cluster YAML, sequence
// length histograms, and the unit strings every flag and file uses.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "entries/fuzz_entries.h"
#include "strata/comm/collective.h"
#include "strata/comm/collective_cost.h"
#include "strata/core/units.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/job/job_validation.h"
#include "strata/job/placement.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"
#include "strata/report/map_report.h"
#include "strata/report/model_report.h"

namespace strata::fuzz {

void HfModelConfig(std::string_view input) {
  auto config = ParseModelConfig(input, "config.json");
  if (!config.ok()) return;
  const ModelReport report = BuildModelReport(*config, 4096, std::nullopt);
  const std::string json = CheckJsonOutput(ModelJson(report));
  CheckTextOutput(RenderModelText(report, /*explain=*/true));
  auto again = ParseModelConfig(input, "config.json");
  Require(again.ok(), "model config: a second parse succeeds");
  RequireSame(json, CheckJsonOutput(ModelJson(BuildModelReport(*again, 4096, std::nullopt))),
              "model config: parsing twice gives one report");
}

void JobYaml(std::string_view input) {
  const std::string text(input);
  auto job = ParseJobSpec(text, "job.yaml");
  if (!job.ok()) return;
  static_cast<void>(CheckLayoutArithmetic(*job));
  Require(ParseJobSpec(text, "job.yaml").ok(), "job: a second parse succeeds");
}

void ClusterYaml(std::string_view input) {
  static const auto links = LoadInterconnects();
  const std::string text(input);
  auto cluster = ParseCluster(text, "cluster.yaml");
  if (!cluster.ok() || !links.ok()) return;
  auto map = BuildBandwidthMap(*cluster, *links);
  if (!map.ok()) return;
  const MapReport report{*cluster, *map, std::nullopt};
  const std::string json = CheckJsonOutput(MapJson(report));
  CheckTextOutput(RenderMapText(report));
  auto again = ParseCluster(text, "cluster.yaml");
  Require(again.ok(), "cluster: a second parse succeeds");
  auto map_again = BuildBandwidthMap(*again, *links);
  Require(map_again.ok(), "cluster: a second bandwidth map succeeds");
  RequireSame(json, CheckJsonOutput(MapJson(MapReport{*again, *map_again, std::nullopt})),
              "cluster: parsing twice gives one map");
}

void SeqHistogram(std::string_view input) {
  auto lengths = ParseSequenceHistogram(input, "histogram.csv");
  if (!lengths.ok()) return;
  // Never a silent wrong number: a histogram that parses has a finite, positive mean no larger
  // than its maximum, and E[S^2] >= E[S]^2 (up to rounding) when it is exact.
  Require(std::isfinite(lengths->mean_tokens) && lengths->mean_tokens > 0,
          "histogram: the mean is finite and positive");
  Require(lengths->max_tokens >= lengths->mean_tokens * (1 - 1e-9),
          "histogram: the maximum is at least the mean");
  Require(std::isfinite(lengths->AttentionTokens()), "histogram: attention tokens are finite");
}

// The first byte picks the parser; the rest is the string.
void UnitStrings(std::string_view input) {
  if (input.empty()) return;
  const char which = input[0];
  const std::string_view text = input.substr(1);
  switch (which % 8) {
    case 0:
      if (auto b = ParseBytes(text); b.ok()) CheckTextOutput(FormatBytesAuto(*b));
      break;
    case 1:
      if (auto r = ParseBandwidth(text); r.ok()) CheckTextOutput(FormatGBps(*r));
      break;
    case 2:
      if (auto s = ParseSeconds(text); s.ok()) CheckTextOutput(FormatSeconds(*s));
      break;
    case 3:
      if (auto f = ParseFlopRate(text); f.ok()) CheckTextOutput(FormatTflops(*f));
      break;
    case 4:
      if (auto t = ParseTokenCount(text); t.ok()) Require(std::isfinite(*t), "token count finite");
      break;
    case 5:
      static_cast<void>(ParseRankOrder(text));
      break;
    case 6:
      static_cast<void>(ParseCollectiveOp(text));
      break;
    default:
      static_cast<void>(ParseCommAlgorithm(text));
      break;
  }
}

}  // namespace strata::fuzz
