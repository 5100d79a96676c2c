#include "strata/preflight/report_json.h"

#include <nlohmann/json.hpp>

namespace strata::preflight {

Json ReportToJson(const PreflightReport& r) {
  Json j = JsonDocument("preflight");
  j["errors"] = r.Count(Severity::kError);
  j["warnings"] = r.Count(Severity::kWarning);
  Json nodes = Json::array();
  for (const NodeSummary& n : r.nodes) {
    Json o;
    o["host"] = n.host;
    o["driver_version"] = n.driver_version;
    o["cuda_version"] = n.cuda_version;
    o["env_source"] = n.env_source;
    o["socket_interfaces"] = n.socket.interfaces;
    o["socket_addresses"] = n.socket.addresses;
    o["socket_rule"] = n.socket.rule;
    o["ib_ports"] = n.hca.ports;
    o["ib_ports_down"] = n.hca.ignored_down;
    o["ib_disabled"] = n.hca.disabled;
    o["ib_rule"] = n.hca.rule;
    o["gids"] = n.gids;
    o["unread"] = n.unread;
    nodes.push_back(o);
  }
  j["nodes"] = nodes;
  Json findings = Json::array();
  for (const Finding& f : r.findings) {
    Json o;
    o["severity"] = SeverityName(f.severity);
    o["check"] = f.check;
    o["node"] = f.node;
    o["message"] = f.message;
    o["fix"] = f.fix;
    findings.push_back(o);
  }
  j["findings"] = findings;
  if (r.compat) {
    Json c;
    c["cuda"] = r.compat->cuda;
    Json newest = Json::object();
    for (const auto& [k, v] : r.compat->newest) newest[k] = v;
    c["newest_runnable"] = newest;
    Json sources = Json::object();
    for (const auto& [k, v] : r.compat->sources) sources[k] = v;
    c["sources"] = sources;
    j["compat"] = c;
  }
  if (r.timeout) {
    Json t;
    t["framework"] = r.timeout->framework;
    t["collective_timeout_s"] = RoundSig(r.timeout->collective_timeout.s());
    t["from"] = r.timeout->from;
    t["source"] = r.timeout->source;
    t["ib_retry_window_s"] = RoundSig(r.timeout->ib_retry_window.s());
    t["ib_formula"] = r.timeout->ib_formula;
    j["timeouts"] = t;
  }
  return j;
}

}  // namespace strata::preflight
