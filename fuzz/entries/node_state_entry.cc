// `strata preflight`'s node-state parsers: one bundle's files concatenated in a fixed order
// (split at a line "----8<----"; an empty part is a file not collected), each given to the parser
// LoadNodeState uses for it, then the checks over that node and a copy of it under another host
// name (so the cross-node comparisons run), and the report's JSON.
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "entries/fuzz_entries.h"
#include "strata/hang/analysis/framework_timeouts.h"
#include "strata/preflight/bundle.h"
#include "strata/preflight/checks.h"
#include "strata/preflight/env_parse.h"
#include "strata/preflight/net_parse.h"
#include "strata/preflight/report_json.h"
#include "strata/preflight/rules.h"
#include "strata/preflight/smi_parse.h"

namespace strata::fuzz {
namespace {

using namespace strata::preflight;

// The order of the parts in an input (fuzz/run.sh builds the seeds in this order).
constexpr std::array<const char*, 13> kParts = {
    "node-state.json", "nvidia-smi.txt", "gpus.csv",         "compute-apps.csv", "xid.txt",
    "ip-addr.json",    "ip-route.json",  "ibdev2netdev.txt", "rdma-link.txt",    "gids.txt",
    "shell-env.txt",   "nccl.conf",      "versions.txt"};
// The part each fills, as LoadNodeState records it in NodeState::read.
constexpr std::array<const char*, 13> kWhat = {
    "manifest", "driver",    "gpus", "compute_apps", "xid",       "interfaces", "routes",
    "rdma",     "rdma_link", "gids", "shells",       "nccl_conf", "versions"};

Status ParsePart(size_t index, const std::string& t, preflight::NodeState& s) {
  const std::string f = kParts[index];
  switch (index) {
    case 0: {
      return ParseManifestInto(t, f, s);
    }
    case 1: {
      STRATA_ASSIGN_OR_RETURN(DriverInfo d, ParseDriverBanner(t, f));
      s.driver_version = d.driver_version;
      s.cuda_version = d.cuda_version;
      return OkStatus();
    }
    case 2: {
      STRATA_ASSIGN_OR_RETURN(s.gpus, ParseGpuCsv(t, f));
      return OkStatus();
    }
    case 3: {
      STRATA_ASSIGN_OR_RETURN(s.compute_apps, ParseComputeAppsCsv(t, f));
      return OkStatus();
    }
    case 4: {
      s.xids = ParseXidLines(t);
      return OkStatus();
    }
    case 5: {
      STRATA_ASSIGN_OR_RETURN(s.interfaces, ParseIpAddrJson(t, f));
      return OkStatus();
    }
    case 6: {
      STRATA_ASSIGN_OR_RETURN(s.routes, ParseIpRouteJson(t, f));
      return OkStatus();
    }
    case 7: {
      STRATA_ASSIGN_OR_RETURN(s.rdma, ParseIbdev2netdev(t, f));
      return OkStatus();
    }
    case 8: {
      return MergeRdmaLink(t, f, s.rdma);
    }
    case 9: {
      STRATA_ASSIGN_OR_RETURN(s.gids, ParseShowGids(t, f));
      return OkStatus();
    }
    case 10: {
      STRATA_ASSIGN_OR_RETURN(s.shells, ParseShellEnv(t, f));
      return OkStatus();
    }
    case 11: {
      STRATA_ASSIGN_OR_RETURN(s.nccl_conf, ParseNcclConf(t, f));
      return OkStatus();
    }
    default: {
      STRATA_ASSIGN_OR_RETURN(s.versions, ParseVersions(t, f));
      return OkStatus();
    }
  }
}

// The report's JSON, or "" when a part did not parse (its error is checked as text).
std::string Check(std::string_view input) {
  static const auto rules = LoadRules();
  static const auto compat = LoadCudaCompat();
  static const auto timeouts = hang::LoadFrameworkTimeouts();
  preflight::NodeState node;
  node.host = "node1";
  constexpr std::string_view kSplit = "\n----8<----\n";
  for (size_t i = 0; !input.empty() && i < kParts.size(); ++i) {
    const size_t cut = input.find(kSplit);
    const std::string part(input.substr(0, cut));
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + kSplit.size());
    if (part.empty()) continue;
    if (Status st = ParsePart(i, part, node); !st.ok()) {
      CheckTextOutput(st.error().Format());
      return "";
    }
    node.read.push_back(kWhat[i]);
  }
  CheckJsonOutput(ManifestToJson(node));
  if (!rules.ok() || !compat.ok() || !timeouts.ok()) return "";
  preflight::NodeState other = node;
  other.host = "node2";
  const PreflightReport report = RunPreflight({node, other}, *rules, *compat, *timeouts, {});
  return CheckJsonOutput(ReportToJson(report));
}

}  // namespace

void NodeState(std::string_view input) {
  RequireSame(Check(input), Check(input), "node state: checking twice gives one report");
}

}  // namespace strata::fuzz
