// strata checkpoint [job.yaml]: what a checkpoint of the job costs (size per rank and in total,
// in the format that writes it (megatron, DeepSpeed, torch DCP) and HF safetensors; time to write
// and load on the cluster's storage) and how often to take one for a failure rate (Young/Daly),
// with the GPU-hours lost per day.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/eval/workspace.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/preflight/checkpoint.h"
#include "strata/report/checkpoint_report.h"

namespace strata::cli {

int RunCheckpoint(int argc, char** argv) {
  CLI::App app{
      "What a checkpoint of the job costs (size, write and load time on the cluster's storage) and "
      "how "
      "often to take one (Young/Daly interval for a failure rate), with the GPU-hours lost per "
      "day.",
      "strata checkpoint"};
  JobRequest request;
  std::string cluster_name;
  double failure_rate = 0;
  OutputOptions out;
  AddJobOptions(app, request);  // JOB, --from, --model, --set as every job command takes them
  app.add_option("--cluster", cluster_name,
                 "cluster file or name for the storage level (default: the job's)");
  app.add_option("--failure-rate", failure_rate,
                 "interruptions per GPU-hour (default: data/checkpoint/failure_rate.yaml, from the "
                 "Llama 3 run)");
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag);
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto job = ResolveJobRequest(request, workspace->memory.engines);
  if (!job.ok()) return ReportError(job.error());
  auto cluster = preflight::CheckpointCluster(*job, cluster_name);
  if (!cluster.ok()) return ReportError(cluster.error());
  auto map = BuildBandwidthMap(cluster->cluster, workspace->links);
  if (!map.ok()) return ReportError(map.error());
  auto rate = preflight::LoadFailureRate();
  if (!rate.ok()) return ReportError(rate.error());
  if (app.count("--failure-rate") > 0) {
    if (!(failure_rate > 0)) {
      return ReportError(
          InvalidInput(
              fmt::format("{} is not a positive rate (interruptions per GPU-hour, e.g. 2e-5)",
                          failure_rate))
              .InField("--failure-rate"));
    }
    rate->per_gpu_hour = failure_rate;
    rate->source = "--failure-rate";
  }

  auto plan = preflight::PlanCheckpoint(*job, *cluster, *map, *rate);
  if (!plan.ok()) return ReportError(plan.error());
  const std::string text =
      out.json ? DumpJson(CheckpointToJson(*job, *plan, *rate))
               : RenderCheckpointText(*job, cluster->cluster.name, *plan, *rate, out.explain);
  return EmitOutputs(out, text);
}

}  // namespace strata::cli
