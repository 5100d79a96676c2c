// strata comm: the cost of one collective on a cluster, with time, algbw and busbw as
// nccl-tests reports them, and the level it runs on. Example:
//   strata comm --op all_reduce --size 1GiB --ranks 40 --cluster h20-5x8
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/comm/collective_cost.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"
#include "strata/report/collective_report.h"

namespace strata::cli {
namespace {

struct CommOptions {
  std::string op = "all_reduce";
  std::string size = "1GiB";
  std::optional<int64_t> ranks;  // unset: the whole cluster
  std::string cluster = "h20-5x8";
  std::string algorithm = "auto";
  OutputOptions out;
};

Result<CollectiveReport> Build(const CommOptions& o) {
  STRATA_ASSIGN_OR_RETURN(CollectiveOp op, ParseCollectiveOp(o.op));
  auto size = ParseBytes(o.size);
  if (!size.ok()) return Error(size.error()).InField("--size");
  STRATA_ASSIGN_OR_RETURN(CommAlgorithm algorithm, ParseCommAlgorithm(o.algorithm));
  STRATA_ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(o.cluster));
  STRATA_ASSIGN_OR_RETURN(Interconnects links, LoadInterconnects());
  STRATA_ASSIGN_OR_RETURN(CollectiveModel model, CollectiveModel::Create(cluster, links));
  // An explicit --ranks 0 ran on the whole cluster, exit 0: a group has at least one rank.
  if (o.ranks && *o.ranks < 1) {
    return InvalidInput(fmt::format("expected at least 1 rank, got {}", *o.ranks))
        .InField("--ranks")
        .WithHint(fmt::format("omit --ranks for every GPU of the cluster ({} ranks)",
                              cluster.world_size()));
  }
  auto shape = model.ContiguousShape(o.ranks ? *o.ranks : cluster.world_size());
  if (!shape.ok()) return Error(shape.error()).InField("--ranks");
  return BuildCollectiveReport(model, op, *size, *shape, algorithm);
}

}  // namespace

int RunComm(int argc, char** argv) {
  CLI::App app{
      "The cost of one collective on a cluster: time, algbw and busbw (as nccl-tests "
      "defines them) and the level of the bandwidth map it runs on",
      "strata comm"};
  CommOptions o;
  app.add_option("--op", o.op,
                 "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv")
      ->capture_default_str();
  app.add_option("--size", o.size,
                 "nccl-tests' size: one rank's buffer (all-reduce), the whole gathered buffer "
                 "(all-gather); a unit is required: 1GiB, 256MB")
      ->capture_default_str();
  app.add_option("--ranks", o.ranks,
                 "ranks in the group, placed on consecutive GPUs (default: "
                 "every GPU of the cluster)");
  app.add_option("--cluster", o.cluster, "cluster file, or a name under data/clusters/")
      ->capture_default_str();
  app.add_option("--algorithm", o.algorithm,
                 "auto, ring, tree, hierarchical, nvls, nvls_tree or p2p")
      ->capture_default_str();
  AddOutputOptions(app, o.out, kJsonFlag);
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  auto report = Build(o);
  if (!report.ok()) return ReportError(report.error());
  return EmitOutputs(
      o.out, o.out.json ? DumpJson(CollectiveJson(*report)) : RenderCollectiveText(*report));
}

}  // namespace strata::cli
