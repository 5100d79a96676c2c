#include "strata/preflight/net_parse.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/core/json_input.h"
#include "strata/core/text_scan.h"

namespace strata::preflight {
namespace {

constexpr size_t kMaxJsonDepth = 8;  // ip -j nests three levels deep

using nlohmann::json;

Error FieldError(const std::string& file, const std::string& field, const std::string& message) {
  return InvalidInput(message).InFile(file).InField(field);
}

Result<std::string> StringField(const json& object, const char* key, const std::string& file,
                                const std::string& where, bool required) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (!required) return std::string();
    return FieldError(file, where + "." + key, "missing (expected the output of ip -j)");
  }
  if (!it->is_string()) return FieldError(file, where + "." + key, "expected a string");
  return it->get<std::string>();
}

Result<json> TopArray(std::string_view text, const std::string& file, std::string_view what) {
  STRATA_ASSIGN_OR_RETURN(json root, ParseUntrustedJson(text, file, kMaxJsonDepth, what));
  if (!root.is_array())
    return InvalidInput(fmt::format("expected a JSON array ({})", what)).InFile(file);
  return root;
}

}  // namespace

Result<std::vector<NetInterface>> ParseIpAddrJson(std::string_view text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(json root, TopArray(text, file, "the output of ip -j addr"));
  std::vector<NetInterface> interfaces;
  for (size_t i = 0; i < root.size(); ++i) {
    const json& o = root[i];
    const std::string where = fmt::format("[{}]", i);
    if (!o.is_object()) return FieldError(file, where, "expected an interface object");
    NetInterface n;
    STRATA_ASSIGN_OR_RETURN(n.name, StringField(o, "ifname", file, where, true));
    STRATA_ASSIGN_OR_RETURN(n.operstate, StringField(o, "operstate", file, where, false));
    if (auto f = o.find("flags"); f != o.end()) {
      if (!f->is_array()) return FieldError(file, where + ".flags", "expected an array of strings");
      for (const json& flag : *f) {
        if (!flag.is_string())
          return FieldError(file, where + ".flags", "expected an array of strings");
        n.flags.push_back(flag.get<std::string>());
      }
    }
    if (auto a = o.find("addr_info"); a != o.end()) {
      if (!a->is_array()) return FieldError(file, where + ".addr_info", "expected an array");
      for (size_t k = 0; k < a->size(); ++k) {
        const json& ai = (*a)[k];
        const std::string at = fmt::format("{}.addr_info[{}]", where, k);
        if (!ai.is_object()) return FieldError(file, at, "expected an address object");
        // `ip -j addr` prints an empty {} for an interface's non-IP entries on some versions.
        if (ai.empty()) continue;
        IpAddress addr;
        STRATA_ASSIGN_OR_RETURN(addr.family, StringField(ai, "family", file, at, true));
        STRATA_ASSIGN_OR_RETURN(addr.local, StringField(ai, "local", file, at, true));
        STRATA_ASSIGN_OR_RETURN(addr.scope, StringField(ai, "scope", file, at, false));
        auto p = ai.find("prefixlen");
        if (p == ai.end() || !p->is_number_integer() || p->get<int64_t>() < 0 ||
            p->get<int64_t>() > 128) {
          return FieldError(file, at + ".prefixlen", "expected an integer from 0 to 128");
        }
        addr.prefixlen = static_cast<int>(p->get<int64_t>());
        if (addr.family == "inet" && addr.prefixlen > 32) {
          return FieldError(file, at + ".prefixlen",
                            fmt::format("expected an integer from 0 to 32 for an IPv4 (inet) "
                                        "address, got {}",
                                        addr.prefixlen));
        }
        n.addresses.push_back(std::move(addr));
      }
    }
    interfaces.push_back(std::move(n));
  }
  return interfaces;
}

Result<std::vector<Route>> ParseIpRouteJson(std::string_view text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(json root, TopArray(text, file, "the output of ip -j route"));
  std::vector<Route> routes;
  for (size_t i = 0; i < root.size(); ++i) {
    const std::string where = fmt::format("[{}]", i);
    if (!root[i].is_object()) return FieldError(file, where, "expected a route object");
    Route r;
    STRATA_ASSIGN_OR_RETURN(r.dst, StringField(root[i], "dst", file, where, true));
    STRATA_ASSIGN_OR_RETURN(r.dev, StringField(root[i], "dev", file, where, false));
    STRATA_ASSIGN_OR_RETURN(r.gateway, StringField(root[i], "gateway", file, where, false));
    routes.push_back(std::move(r));
  }
  return routes;
}

Result<std::vector<RdmaPort>> ParseIbdev2netdev(std::string_view text, const std::string& file) {
  std::vector<RdmaPort> ports;
  for (const TextLine& l : SplitLines(text)) {
    const std::vector<std::string_view> w = SplitWords(l.text);
    if (w.empty()) continue;
    // <ibdev> port <n> ==> <netdev> (<Up|Down>)
    if (w.size() != 6 || w[1] != "port" || w[3] != "==>" || w[5].size() < 3 ||
        w[5].front() != '(' || w[5].back() != ')') {
      return InvalidInput(fmt::format("'{}' is not '<ibdev> port <n> ==> <netdev> (Up|Down)'",
                                      TrimSpace(l.text)))
          .InFile(file)
          .AtLine(l.number);
    }
    RdmaPort p;
    p.device = std::string(w[0]);
    auto port = ParseInt64(w[2]);
    if (!port || *port < 1 || *port > 255) {
      return InvalidInput(fmt::format("port '{}' is not a port number", w[2]))
          .InFile(file)
          .AtLine(l.number);
    }
    p.port = static_cast<int>(*port);
    p.netdev = std::string(w[4]);
    const std::string_view state = w[5].substr(1, w[5].size() - 2);
    if (state != "Up" && state != "Down") {
      return InvalidInput(fmt::format("state '{}' is neither Up nor Down", state))
          .InFile(file)
          .AtLine(l.number);
    }
    p.netdev_up = state == "Up";
    ports.push_back(std::move(p));
  }
  return ports;
}

Status MergeRdmaLink(std::string_view text, const std::string& file, std::vector<RdmaPort>& ports) {
  for (const TextLine& l : SplitLines(text)) {
    const std::vector<std::string_view> w = SplitWords(l.text);
    if (w.empty()) continue;
    if (w.size() < 4 || w[0] != "link" || w[1].find('/') == std::string_view::npos) {
      return InvalidInput(fmt::format("'{}' is not 'link <dev>/<port> state <STATE> ...'",
                                      TrimSpace(l.text)))
          .InFile(file)
          .AtLine(l.number);
    }
    const size_t slash = w[1].find('/');
    const std::string device(w[1].substr(0, slash));
    auto port = ParseInt64(w[1].substr(slash + 1));
    if (!port || *port < 1 || *port > 255) {
      return InvalidInput(fmt::format("'{}' does not end in a port number", w[1]))
          .InFile(file)
          .AtLine(l.number);
    }
    std::string state, netdev;
    for (size_t i = 2; i + 1 < w.size(); ++i) {
      if (w[i] == "state") state = std::string(w[i + 1]);
      if (w[i] == "netdev") netdev = std::string(w[i + 1]);
    }
    if (state.empty())
      return InvalidInput("no 'state <STATE>' on the line").InFile(file).AtLine(l.number);
    RdmaPort* target = nullptr;
    for (RdmaPort& p : ports) {
      if (p.device == device && p.port == *port) target = &p;
    }
    if (!target) {
      ports.push_back(RdmaPort{device, static_cast<int>(*port), "", std::nullopt, std::nullopt});
      target = &ports.back();
    }
    target->port_active = state == "ACTIVE";
    if (target->netdev.empty()) target->netdev = netdev;
  }
  return OkStatus();
}

Result<std::vector<GidEntry>> ParseShowGids(std::string_view text, const std::string& file) {
  std::vector<GidEntry> gids;
  for (const TextLine& l : SplitLines(text)) {
    const std::vector<std::string_view> w = SplitWords(l.text);
    if (w.empty() || w[0] == "DEV" || w[0].find_first_not_of('-') == std::string_view::npos ||
        w[0].rfind("n_gids_found", 0) == 0) {
      continue;
    }
    // DEV PORT INDEX GID [IPv4] VER DEV
    if (w.size() != 6 && w.size() != 7) {
      return InvalidInput(
                 fmt::format("'{}' is not a show_gids row (DEV PORT INDEX GID IPv4 VER DEV)",
                             TrimSpace(l.text)))
          .InFile(file)
          .AtLine(l.number);
    }
    GidEntry g;
    g.device = std::string(w[0]);
    auto port = ParseInt64(w[1]);
    auto index = ParseInt64(w[2]);
    if (!port || !index || *port < 1 || *index < 0 || *index > 65535) {
      return InvalidInput(fmt::format("port '{}' or index '{}' is not a number", w[1], w[2]))
          .InFile(file)
          .AtLine(l.number);
    }
    g.port = static_cast<int>(*port);
    g.index = static_cast<int>(*index);
    g.gid = std::string(w[3]);
    size_t next = 4;
    if (w.size() == 7) g.ipv4 = std::string(w[next++]);
    g.version = std::string(w[next++]);
    g.netdev = std::string(w[next]);
    if (g.version != "v1" && g.version != "v2") {
      return InvalidInput(fmt::format("version '{}' is neither v1 nor v2", g.version))
          .InFile(file)
          .AtLine(l.number);
    }
    gids.push_back(std::move(g));
  }
  return gids;
}

Result<std::vector<IbstatCa>> ParseIbstat(std::string_view text, const std::string& file) {
  std::vector<IbstatCa> cas;
  for (const TextLine& l : SplitLines(text)) {
    const std::string_view line = TrimSpace(l.text);
    if (line.empty()) continue;
    if (line.starts_with("CA '")) {
      const size_t end = line.find('\'', 4);
      if (end == std::string_view::npos) {
        return InvalidInput(fmt::format("'{}' is not \"CA '<device>'\"", line))
            .InFile(file)
            .AtLine(l.number);
      }
      cas.push_back(IbstatCa{std::string(line.substr(4, end - 4)), "", "", {}});
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = TrimSpace(line.substr(0, colon));
    const std::string value(TrimSpace(line.substr(colon + 1)));
    if (cas.empty()) {
      return InvalidInput(fmt::format("'{}' comes before any \"CA '<device>'\" line", line))
          .InFile(file)
          .AtLine(l.number);
    }
    IbstatCa& ca = cas.back();
    if (key == "CA type") {
      ca.type = value;
    } else if (key == "Firmware version") {
      ca.firmware = value;
    } else if (key.starts_with("Port ") && value.empty()) {
      auto n = ParseInt64(key.substr(5));
      if (!n) {
        return InvalidInput(fmt::format("'{}' is not \"Port <number>:\"", line))
            .InFile(file)
            .AtLine(l.number);
      }
      ca.ports.push_back(IbstatPort{static_cast<int>(*n), "", "", std::nullopt, ""});
    } else if (!ca.ports.empty()) {
      IbstatPort& port = ca.ports.back();
      if (key == "State") {
        port.state = value;
      } else if (key == "Physical state") {
        port.physical_state = value;
      } else if (key == "Link layer") {
        port.link_layer = value;
      } else if (key == "Rate") {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0') {
          return InvalidInput(fmt::format("'{}' is not a rate in Gb/s such as 200", value))
              .InFile(file)
              .AtLine(l.number)
              .InField("Rate");
        }
        port.rate_gbps = v;
      }
    }
  }
  return cas;
}

}  // namespace strata::preflight
