// strata map [JOB] [--model M] [--set k=v] [--cluster C] [--no-layout]: the cluster's bandwidth
// map from HBM down to storage and, for the job's layout, which parallel group talks on which
// level, how much and how often. The job is read as every command reads it (job_options.h);
// with nothing given, the reference job on its cluster (data/clusters/h20-5x8.yaml).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/comm/collective_cost.h"
#include "strata/eval/evaluation.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"
#include "strata/job/placement.h"
#include "strata/report/html_report.h"
#include "strata/report/map_report.h"

namespace strata::cli {
namespace {

struct MapOptions {
  JobRequest request;
  std::string cluster;
  std::string rank_order = kDefaultRankOrder;
  bool no_layout = false;
  OutputOptions out;
};

Result<MapReport> Build(const MapOptions& o) {
  STRATA_ASSIGN_OR_RETURN(Workspace workspace, Workspace::Load());
  std::optional<ResolvedJob> job;
  Cluster cluster;
  if (o.no_layout && !o.cluster.empty() && o.request.empty()) {
    STRATA_ASSIGN_OR_RETURN(cluster, LoadCluster(o.cluster));
  } else {
    JobRequest request = o.request;
    if (!o.cluster.empty()) request.overrides.push_back("cluster=" + o.cluster);
    STRATA_ASSIGN_OR_RETURN(job, ResolveJobRequest(request, workspace.memory.engines));
    cluster = job->cluster;
    if (cluster.nics.empty() && cluster.nodes > 1) {
      return InvalidInput(
                 "the job describes its GPUs only (cluster.gpu, gpus_per_node, nodes): "
                 "the bandwidth map needs a cluster file with the network")
          .InField("cluster")
          .WithHint(fmt::format("--cluster NAME or --set cluster=NAME; shipped: {}",
                                fmt::join(ShippedClusterNames(), ", ")));
    }
  }
  if (o.no_layout) {
    STRATA_ASSIGN_OR_RETURN(CollectiveModel model,
                            CollectiveModel::Create(cluster, workspace.links));
    return MapReport{cluster, model.map(), std::nullopt};
  }
  // The layout section is the job's evaluation: the step model's own traffic.
  STRATA_ASSIGN_OR_RETURN(Evaluation e, EvaluateJob(workspace, *job, {.rank_order = o.rank_order}));
  return MapReport{cluster, e.comm->map(), std::move(e.traffic)};
}

}  // namespace

int RunMap(int argc, char** argv) {
  CLI::App app{
      "The bandwidth map of a cluster (HBM, GPU fabric, PCIe, data NICs, management "
      "network, storage) and where a job's traffic runs on it. No arguments: the "
      "reference job on its cluster.",
      "strata map"};
  MapOptions o;
  AddJobOptions(app, o.request);
  app.add_option("--cluster", o.cluster,
                 "cluster file or a name under data/clusters/ (= --set cluster=NAME)");
  app.add_option("--rank-order", o.rank_order, "megatron-core rank order, fastest first")
      ->capture_default_str();
  app.add_flag("--no-layout", o.no_layout, "the bandwidth map only");
  AddOutputOptions(app, o.out, kJsonFlag | kSvgFlag);
  if (auto code = ParseArgs(app, argc, argv)) return *code;
  if (!o.out.svg.empty() && o.no_layout) {
    return ReportError(InvalidInput("--svg draws the layout's traffic on the map, and "
                                    "--no-layout leaves the layout out")
                           .InField("--svg")
                           .WithHint("drop --no-layout, or --svg"));
  }

  auto report = Build(o);
  if (!report.ok()) return ReportError(report.error());
  return EmitOutputs(o.out, o.out.json ? DumpJson(MapJson(*report)) : RenderMapText(*report),
                     [&] { return MapFigure(report->map, *report->layout).svg; });
}

}  // namespace strata::cli
