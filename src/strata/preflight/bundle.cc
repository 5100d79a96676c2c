#include "strata/preflight/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "strata/core/file_io.h"
#include "strata/core/json_input.h"
#include "strata/preflight/env_parse.h"
#include "strata/preflight/net_parse.h"
#include "strata/preflight/smi_parse.h"

namespace strata::preflight {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;
constexpr size_t kMaxManifestDepth = 8;
constexpr size_t kMaxPartBytes = size_t{64} << 20;

Status CheckKeys(const json& object, const std::vector<std::string>& allowed,
                 const std::string& file, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return InvalidInput(fmt::format("unknown key '{}' (expected one of: {})", key, list))
          .InFile(file)
          .InField(where.empty() ? key : where + "." + key);
    }
  }
  return OkStatus();
}

Error TypeError(const std::string& file, const std::string& field, const char* expected) {
  return InvalidInput(fmt::format("expected {}", expected)).InFile(file).InField(field);
}

}  // namespace

Json ManifestToJson(const NodeState& s) {
  Json j = JsonDocument(kNodeStateKind);
  j["host"] = s.host;
  j["time_utc"] = s.time_utc;
  if (s.uid) j["uid"] = *s.uid;
  Json processes = Json::array();
  for (const ProcessInfo& p : s.processes) {
    Json o;
    o["pid"] = p.pid;
    o["exists"] = p.exists;
    if (p.uid) o["uid"] = *p.uid;
    o["state"] = p.state;
    o["cmdline"] = p.cmdline;
    Json env = Json::object();
    for (const auto& [k, v] : p.env) env[k] = v;
    o["env"] = env;
    processes.push_back(o);
  }
  j["processes"] = processes;
  j["notes"] = s.notes;
  return j;
}

Status ParseManifestInto(std::string_view text, const std::string& file, NodeState& s) {
  STRATA_ASSIGN_OR_RETURN(
      json root, ParseUntrustedJson(text, file, kMaxManifestDepth, "a node-state manifest"));
  if (!root.is_object()) return TypeError(file, "", "a JSON object");
  STRATA_RETURN_IF_ERROR(CheckKeys(
      root,
      {"schema_version", "kind", "strata_version", "host", "time_utc", "uid", "processes", "notes"},
      file, ""));
  if (!root.contains("kind") || root["kind"] != kNodeStateKind) {
    return InvalidInput(fmt::format("expected \"kind\": \"{}\" (is this a node-state bundle?)",
                                    kNodeStateKind))
        .InFile(file)
        .InField("kind");
  }
  if (!root.contains("schema_version") || !root["schema_version"].is_number_integer() ||
      root["schema_version"].get<int64_t>() != kSchemaVersion) {
    return Error{ErrorCode::kUnsupportedVersion,
                 fmt::format("unsupported schema_version (this strata reads {})", kSchemaVersion),
                 file,
                 0,
                 0,
                 "schema_version",
                 ""};
  }
  if (!root.contains("host") || !root["host"].is_string() ||
      root["host"].get<std::string>().empty()) {
    return TypeError(file, "host", "a non-empty string");
  }
  s.host = root["host"].get<std::string>();
  if (root.contains("time_utc")) {
    if (!root["time_utc"].is_string()) return TypeError(file, "time_utc", "a string");
    s.time_utc = root["time_utc"].get<std::string>();
  }
  if (root.contains("uid")) {
    if (!root["uid"].is_number_integer()) return TypeError(file, "uid", "an integer");
    s.uid = root["uid"].get<int64_t>();
  }
  if (root.contains("processes")) {
    const json& list = root["processes"];
    if (!list.is_array()) return TypeError(file, "processes", "an array");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("processes[{}]", i);
      const json& o = list[i];
      if (!o.is_object()) return TypeError(file, where, "an object");
      STRATA_RETURN_IF_ERROR(
          CheckKeys(o, {"pid", "exists", "uid", "state", "cmdline", "env"}, file, where));
      ProcessInfo p;
      if (!o.contains("pid") || !o["pid"].is_number_integer())
        return TypeError(file, where + ".pid", "an integer");
      p.pid = o["pid"].get<int64_t>();
      if (o.contains("exists")) {
        if (!o["exists"].is_boolean()) return TypeError(file, where + ".exists", "true or false");
        p.exists = o["exists"].get<bool>();
      }
      if (o.contains("uid")) {
        if (!o["uid"].is_number_integer()) return TypeError(file, where + ".uid", "an integer");
        p.uid = o["uid"].get<int64_t>();
      }
      for (const char* key : {"state", "cmdline"}) {
        if (!o.contains(key)) continue;
        if (!o[key].is_string()) return TypeError(file, where + "." + key, "a string");
        (std::string(key) == "state" ? p.state : p.cmdline) = o[key].get<std::string>();
      }
      if (o.contains("env")) {
        if (!o["env"].is_object()) return TypeError(file, where + ".env", "an object of strings");
        for (const auto& [k, v] : o["env"].items()) {
          if (!v.is_string()) return TypeError(file, where + ".env." + k, "a string");
          p.env[k] = v.get<std::string>();
        }
      }
      s.processes.push_back(std::move(p));
    }
  }
  if (root.contains("notes")) {
    if (!root["notes"].is_array()) return TypeError(file, "notes", "an array of strings");
    for (const json& n : root["notes"]) {
      if (!n.is_string()) return TypeError(file, "notes", "an array of strings");
      s.notes.push_back(n.get<std::string>());
    }
  }
  return OkStatus();
}

Result<NodeState> LoadNodeState(const std::string& dir) {
  NodeState s;
  s.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return IoError(
               "not a directory (expected a node-state bundle written by 'strata collect "
               "--node-state')")
        .InFile(dir);
  }
  const std::string manifest = (fs::path(dir) / kNodeStateManifest).string();
  if (fs::exists(manifest, ec)) {
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(manifest, kMaxPartBytes));
    STRATA_RETURN_IF_ERROR(ParseManifestInto(text, manifest, s));
    s.read.push_back("manifest");
  } else {
    s.host = fs::path(dir).filename().string();
    s.unread.push_back(std::string(kNodeStateManifest) +
                       ": not found (no process list, no collector notes)");
  }
  // Each part: a file name, the part it fills, and the parser.
  auto part = [&](const char* name, const char* what, auto&& parse) -> Status {
    const std::string path = (fs::path(dir) / name).string();
    if (!fs::exists(path, ec)) {
      // /etc/nccl.conf and ~/.nccl.conf are optional on a node: their absence is not a gap in
      // the evidence. gpu-repair.csv's absence is said once below, with what it leaves unchecked.
      const std::string_view n(name);
      if (n != "nccl.conf" && n != "nccl-user.conf" && n != "gpu-repair.csv")
        s.unread.push_back(fmt::format("{}: not collected ({})", name, what));
      return OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxPartBytes));
    STRATA_RETURN_IF_ERROR(parse(text, path));
    s.read.push_back(what);
    return OkStatus();
  };
  STRATA_RETURN_IF_ERROR(
      part("nvidia-smi.txt", "driver", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(DriverInfo d, ParseDriverBanner(t, f));
        s.driver_version = d.driver_version;
        s.cuda_version = d.cuda_version;
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("gpus.csv", "gpus", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.gpus, ParseGpuCsv(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(part(
      "gpu-repair.csv", "gpu_repair",
      [&](const std::string& t, const std::string& f) { return MergeGpuRepairCsv(t, f, s.gpus); }));
  // A100 and later GPUs repair memory by remapping rows and print [N/A] for retired_pages.*:
  // without the remapped_rows.* columns (older bundles, or a pasted gpus.csv) the repair state is
  // unknown.
  bool remap_known = false;
  for (const GpuRow& g : s.gpus) remap_known |= g.remap_pending.has_value();
  if (!s.gpus.empty() && !remap_known) {
    s.unread.push_back(
        "gpu-repair.csv: not collected (row remapping: pending and failed remaps of A100 and later "
        "GPUs not checked)");
  }
  STRATA_RETURN_IF_ERROR(part("compute-apps.csv", "compute_apps",
                              [&](const std::string& t, const std::string& f) -> Status {
                                STRATA_ASSIGN_OR_RETURN(s.compute_apps, ParseComputeAppsCsv(t, f));
                                return OkStatus();
                              }));
  STRATA_RETURN_IF_ERROR(
      part("xid.txt", "xid", [&](const std::string& t, const std::string&) -> Status {
        s.xids = ParseXidLines(t);
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("ip-addr.json", "interfaces", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.interfaces, ParseIpAddrJson(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("ip-route.json", "routes", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.routes, ParseIpRouteJson(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("ibdev2netdev.txt", "rdma", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.rdma, ParseIbdev2netdev(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("rdma-link.txt", "rdma_link", [&](const std::string& t, const std::string& f) -> Status {
        return MergeRdmaLink(t, f, s.rdma);
      }));
  STRATA_RETURN_IF_ERROR(
      part("gids.txt", "gids", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.gids, ParseShowGids(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("ibstat.txt", "ibstat", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.ibstat, ParseIbstat(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("shell-env.txt", "shells", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.shells, ParseShellEnv(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(
      part("nccl.conf", "nccl_conf", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.nccl_conf, ParseNcclConf(t, f));
        return OkStatus();
      }));
  STRATA_RETURN_IF_ERROR(part("nccl-user.conf", "nccl_user_conf",
                              [&](const std::string& t, const std::string& f) -> Status {
                                const size_t eol = t.find('\n');
                                const std::string first = t.substr(0, eol);
                                s.user_nccl_conf_path =
                                    first.starts_with(kUserNcclConfHeader)
                                        ? first.substr(std::string(kUserNcclConfHeader).size())
                                        : "~/.nccl.conf";
                                STRATA_ASSIGN_OR_RETURN(s.user_nccl_conf, ParseNcclConf(t, f));
                                return OkStatus();
                              }));
  STRATA_RETURN_IF_ERROR(
      part("versions.txt", "versions", [&](const std::string& t, const std::string& f) -> Status {
        STRATA_ASSIGN_OR_RETURN(s.versions, ParseVersions(t, f));
        return OkStatus();
      }));
  return s;
}

}  // namespace strata::preflight
