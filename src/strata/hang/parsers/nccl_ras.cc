#include "strata/hang/parsers/nccl_ras.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "strata/core/json_input.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

using nlohmann::json;

constexpr size_t kMaxJsonDepth = 64;  // the RAS JSON nests four deep

std::string WordAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return "";
  std::string_view rest = s.substr(at + key.size());
  return std::string(rest.substr(0, rest.find_first_of(" \t,")));
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// "Process 3181122 on node 10.10.0.13 managing GPU 1" (also "GPUs 0,1" and the "-- GPU 1 managed
// by process 3181122 on node 10.10.0.13" form of rank lines).
RasProcess ReadProcess(std::string_view line, std::string status) {
  RasProcess p;
  p.status = std::move(status);
  if (auto pid = IntAfter(line, "Process ")) p.pid = *pid;
  if (auto pid = IntAfter(line, "process ")) p.pid = *pid;
  p.host = WordAfter(line, " on node ");
  p.gpu = IntAfter(line, "GPUs ");
  if (!p.gpu) p.gpu = IntAfter(line, "GPU ");
  return p;
}

class TextParser {
 public:
  explicit TextParser(const std::string& file) : file_(file) {}

  Result<RasReport> Parse(std::string_view text) {
    int number = 0;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      const std::string_view raw = text.substr(start, end - start);
      start = end + 1;
      if (number == 1 || first_content_line_ == 0) {
        const std::string_view t = TrimSpace(raw);
        if (!t.empty() && first_content_line_ == 0) {
          first_content_line_ = number;
          first_content_ = std::string(t.substr(0, 80));
          if (t.starts_with("ERROR:")) {
            return InvalidInput(fmt::format("the RAS server answered with an error: {}", t))
                .InFile(file_)
                .AtLine(number);
          }
        }
      }
      Line(raw);
    }
    if (!recognised_) {
      Error e = InvalidInput(
          first_content_line_ == 0
              ? std::string("the file is empty, expected NCCL RAS output (ncclras or 'echo "
                            "verbose status | nc localhost 28028')")
              : fmt::format("expected NCCL RAS output (a 'NCCL version' line, a 'Job summary' "
                            "or a communicator table), found '{}'",
                            first_content_));
      e.InFile(file_);
      if (first_content_line_ > 0) e.AtLine(first_content_line_);
      return e;
    }
    for (RasCommunicator& c : report_.communicators) {
      const size_t dash = c.id.find('-');
      if (c.id.size() > 1 && dash != std::string::npos) {
        if (auto group = ParseInt64(std::string_view(c.id).substr(1, dash - 1))) {
          if (auto it = group_ranks_.find(*group); it != group_ranks_.end()) c.nranks = it->second;
        }
      }
    }
    // A cut-off report keeps its table but loses the details: say so rather than look healthy.
    for (const auto& [group, errors] : group_errors_) {
      const std::string prefix = fmt::format("#{}-", group);
      const bool detailed =
          std::any_of(report_.communicators.begin(), report_.communicators.end(),
                      [&](const RasCommunicator& c) { return c.id.starts_with(prefix); });
      if (!detailed) {
        report_.notes.push_back(
            fmt::format("group {} reports {} but no details follow (is the "
                        "output truncated?)",
                        group, errors));
      }
    }
    return std::move(report_);
  }

 private:
  enum class Block { kNone, kJobSummary, kTable, kDead, kIncompleteProcesses, kComm, kTimeout };

  void Line(std::string_view raw) {
    const std::string_view line = TrimSpace(raw);
    if (line.empty()) return;
    const bool indented = raw.front() == ' ' || raw.front() == '\t';
    if (line.starts_with("NCCL version ")) {
      report_.nccl_version = WordAfter(line, "NCCL version ");
      recognised_ = true;
      return;
    }
    if (line.find_first_not_of('=') == std::string_view::npos) return;  // "=====" underlines
    if (line == "Job summary") {
      block_ = Block::kJobSummary;
      recognised_ = true;
      return;
    }
    if (line.starts_with("Group ") && Contains(line, "Comms")) {
      block_ = Block::kTable;
      recognised_ = true;
      return;
    }
    if (line == "Errors" || line == "Warnings") {
      block_ = Block::kNone;
      return;
    }
    if (line == "DEAD") {
      block_ = Block::kDead;
      return;
    }
    if (line == "INCOMPLETE") {
      block_ = Block::kIncompleteProcesses;
      return;
    }
    if (line == "TIMEOUT") {
      block_ = Block::kTimeout;
      return;
    }
    if (Contains(line, "PEER_DEAD: ")) {  // monitor mode
      report_.dead_or_unreachable.push_back(ReadProcess(line, "DEAD"));
      recognised_ = true;
      return;
    }
    if (!indented && line.front() == '#' && Contains(line, " (")) {
      StartCommunicator(line);
      return;
    }
    switch (block_) {
      case Block::kJobSummary: {
        // "      5          8            1         40       40": processes (total) is the 4th.
        const auto tokens = Tokens(line);
        if (tokens.size() >= 5) {
          if (auto total = ParseInt64(tokens[3])) report_.total_processes = *total;
        }
        return;
      }
      case Block::kTable: {
        // "    0         1         5       7-8        40        40   RUNNING  INCOMPLETE"
        const auto tokens = Tokens(line);
        if (tokens.size() >= 8) {
          const auto group = ParseInt64(tokens[0]);
          const auto ranks_per_comm = ParseInt64(tokens[4]);
          if (group && ranks_per_comm) group_ranks_[*group] = *ranks_per_comm;
          if (group && tokens[7] != "OK") group_errors_[*group] = std::string(tokens[7]);
        }
        return;
      }
      case Block::kDead:
        if (line.starts_with("Process ")) {
          report_.dead_or_unreachable.push_back(ReadProcess(line, "DEAD"));
        }
        return;
      case Block::kIncompleteProcesses:
        if (line.starts_with("Process ")) {
          // "Missing communicator data from N job processes": no answer in time, not a lost
          // connection. Kept apart from UNREACHABLE and DEAD.
          report_.dead_or_unreachable.push_back(ReadProcess(line, "INCOMPLETE"));
        }
        return;
      case Block::kTimeout:
        report_.notes.push_back(std::string(line));
        return;
      case Block::kComm:
        CommunicatorLine(line);
        return;
      case Block::kNone:
        return;
    }
  }

  // "#0-0 (cf264af53edbe986) INCOMPLETE": the same communicator can come back under Warnings.
  void StartCommunicator(std::string_view line) {
    block_ = Block::kComm;
    const size_t close = line.find(')');
    const std::string id(line.substr(0, close == std::string_view::npos ? line.size() : close + 1));
    const std::string status(
        TrimSpace(close == std::string_view::npos ? "" : line.substr(close + 1)));
    auto it = std::find_if(report_.communicators.begin(), report_.communicators.end(),
                           [&](const RasCommunicator& c) { return c.id == id; });
    if (it == report_.communicators.end()) {
      RasCommunicator c;
      c.id = id;
      const size_t open = id.find('(');
      if (open != std::string::npos) c.hash = id.substr(open + 1, id.size() - open - 2);
      c.status = status;
      report_.communicators.push_back(std::move(c));
      current_ = report_.communicators.size() - 1;
    } else {
      current_ = static_cast<size_t>(it - report_.communicators.begin());
      if (!Contains(it->status, status)) it->status += "," + status;
    }
    in_mismatch_ = status == "MISMATCH";
    coll_type_.clear();
    group_ = std::nullopt;
  }

  void CommunicatorLine(std::string_view line) {
    RasCommunicator& c = report_.communicators[current_];
    c.notes.push_back(std::string(line));
    if (line.starts_with("Communicator ranks have different ")) {
      // "... different collective operation counts" (untyped) or "... different AllReduce ..."
      std::string type = WordAfter(line, "have different ");
      coll_type_ = type == "collective" || type == "status" ? "" : type;
      group_ = std::nullopt;
      return;
    }
    if (line.starts_with("The missing rank: ") || line.starts_with("The missing ranks: ")) {
      std::string_view list = line.substr(line.find(':') + 1);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        if (auto r = ParseInt64(list.substr(0, comma))) {
          RasProcess p;
          p.comm_rank = *r;
          p.status = "MISSING";
          c.missing.push_back(p);
        }
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      return;
    }
    // "39 ranks have launched up to operation 1844" / "6 ranks have not launched any operations"
    // (also the singular "1 rank has launched ..." some reports print before the rank lines).
    if (line.front() >= '0' && line.front() <= '9' &&
        (Contains(line, " launched up to operation ") || Contains(line, " not launched any"))) {
      RasCountGroup g;
      g.coll_type = coll_type_;
      g.ranks_count = LeadingInt(line).value_or(0);
      g.op_count = IntAfter(line, "up to operation ").value_or(0);
      c.count_groups.push_back(g);
      group_ = c.count_groups.size() - 1;
      return;
    }
    if (!line.starts_with("Rank ")) return;
    const auto rank = LeadingInt(line.substr(5));
    if (!rank) return;
    if (!in_mismatch_) {  // INCOMPLETE: "Rank 17 -- GPU 1 managed by process 3181122 on node ..."
      RasProcess p = ReadProcess(line, "MISSING");
      p.comm_rank = *rank;
      c.missing.push_back(std::move(p));
      return;
    }
    // A lone outlier: "Rank 7 has launched up to operation 60 -- GPU 3 managed by ...".
    if (Contains(line, " has launched up to operation ") || Contains(line, " has not launched")) {
      RasCountGroup g;
      g.coll_type = coll_type_;
      g.ranks_count = 1;
      g.op_count = IntAfter(line, "up to operation ").value_or(0);
      g.ranks.push_back(*rank);
      c.count_groups.push_back(g);
      group_ = std::nullopt;
      c.coll_count_by_rank.emplace(*rank, g.op_count);
      return;
    }
    if (group_) {  // listed under "N ranks have launched up to operation X"
      RasCountGroup& g = c.count_groups[*group_];
      g.ranks.push_back(*rank);
      c.coll_count_by_rank.emplace(*rank, g.op_count);
    }
  }

  const std::string& file_;
  RasReport report_;
  Block block_ = Block::kNone;
  bool recognised_ = false;
  int first_content_line_ = 0;
  std::string first_content_;
  std::map<int64_t, int64_t> group_ranks_;       // table: group # -> ranks per communicator
  std::map<int64_t, std::string> group_errors_;  // table: group # -> Errors column, when not OK
  size_t current_ = 0;
  bool in_mismatch_ = false;
  std::string coll_type_;
  std::optional<size_t> group_;
};

// --- JSON (ncclras -f json) -------------------------------------------------------------

int64_t IntField(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return it->get<int64_t>();
}

std::string StringField(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool BoolField(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

RasProcess ProcessFromJson(const json& j, std::string status) {
  RasProcess p;
  p.host = StringField(j, "host");
  p.pid = IntField(j, "pid");
  if (j.contains("rank") && j["rank"].is_number_integer()) p.comm_rank = j["rank"].get<int64_t>();
  if (j.contains("cuda_dev") && j["cuda_dev"].is_number_integer())
    p.gpu = j["cuda_dev"].get<int64_t>();
  p.status = std::move(status);
  return p;
}

Result<RasReport> FromJson(const json& top, const std::string& file) {
  const auto fail = [&](const std::string& field, const std::string& what) {
    return InvalidInput(what).InFile(file).InField(field);
  };
  if (!top.is_object()) return fail("", "expected a JSON object at the top level of a RAS report");
  RasReport report;
  // Monitor mode: one event per line, {"event": "PEER_DEAD", "peer": {...}}.
  if (top.contains("event")) {
    if (StringField(top, "event") == "PEER_DEAD" && top.contains("peer") &&
        top["peer"].is_object()) {
      RasProcess p = ProcessFromJson(top["peer"], "DEAD");
      const auto& devs = top["peer"].value("cuda_devs", json::array());
      if (devs.is_array() && !devs.empty() && devs[0].is_number_integer())
        p.gpu = devs[0].get<int64_t>();
      report.dead_or_unreachable.push_back(std::move(p));
    }
    return report;
  }
  if (!top.contains("communicators")) {
    return fail("communicators", "missing required field (is this `ncclras -f json` output?)");
  }
  report.nccl_version = StringField(top, "nccl_version");
  report.total_processes = IntField(top, "processes_count");
  const json& comms = top["communicators"];
  if (!comms.is_array()) return fail("communicators", "expected a list");
  std::set<std::pair<std::string, int64_t>> seen;
  for (size_t i = 0; i < comms.size(); ++i) {
    const json& cj = comms[i];
    if (!cj.is_object()) return fail(fmt::format("communicators[{}]", i), "expected an object");
    RasCommunicator c;
    c.hash = StringField(cj, "hash");
    if (c.hash.substr(0, 2) == "0x") c.hash = c.hash.substr(2);  // text prints %016lx, no 0x
    c.id = c.hash;
    c.nranks = IntField(cj, "size");
    bool error = false;
    std::set<int64_t> totals;
    std::map<std::string, std::set<int64_t>> per_type;
    if (cj.contains("ranks") && cj["ranks"].is_array()) {
      for (const json& r : cj["ranks"]) {
        if (!r.is_object()) continue;
        int64_t total = 0;
        if (r.contains("collective_counts") && r["collective_counts"].is_object()) {
          for (const auto& [type, n] : r["collective_counts"].items()) {
            if (!n.is_number_integer()) continue;
            total += n.get<int64_t>();
            per_type[type].insert(n.get<int64_t>());
          }
        }
        if (r.contains("rank") && r["rank"].is_number_integer()) {
          c.coll_count_by_rank[r["rank"].get<int64_t>()] = total;
        }
        totals.insert(total);
        if (r.contains("status") && r["status"].is_object()) {
          error = error || IntField(r["status"], "async_error") != 0 ||
                  IntField(r["status"], "init_state") != 0;
        }
      }
    }
    if (cj.contains("missing_ranks") && cj["missing_ranks"].is_array()) {
      for (const json& m : cj["missing_ranks"]) {
        if (!m.is_object()) continue;
        const json status = m.value("status", json::object());
        const bool dead = status.is_object() && BoolField(status, "considered_dead");
        const bool unresponsive = status.is_object() && BoolField(status, "unresponsive");
        RasProcess p = ProcessFromJson(m, dead ? "DEAD" : unresponsive ? "UNREACHABLE" : "MISSING");
        if ((dead || unresponsive) && seen.insert({p.host, p.pid}).second) {
          RasProcess q = p;
          q.comm_rank.reset();  // the process, not its rank in this communicator
          report.dead_or_unreachable.push_back(std::move(q));
        }
        c.missing.push_back(std::move(p));
      }
    }
    std::vector<std::string> statuses;
    if (!c.missing.empty()) statuses.push_back("INCOMPLETE");
    const bool mismatch =
        totals.size() > 1 || std::any_of(per_type.begin(), per_type.end(),
                                         [](const auto& t) { return t.second.size() > 1; });
    if (mismatch) statuses.push_back("MISMATCH");
    if (error) statuses.push_back("ERROR");
    c.status = statuses.empty() ? "OK" : fmt::format("{}", fmt::join(statuses, ","));
    report.communicators.push_back(std::move(c));
  }
  return report;
}

Result<json> ParseJsonText(std::string_view text, const std::string& file) {
  return ParseUntrustedJson(text, file, kMaxJsonDepth, "NCCL RAS output");
}

Result<RasReport> ParseJsonReport(std::string_view text, const std::string& file) {
  auto whole = ParseJsonText(text, file);
  if (whole.ok()) return FromJson(*whole, file);
  // Monitor mode writes one JSON object per line.
  RasReport merged;
  int number = 0;
  size_t start = 0;
  bool any = false;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    const std::string_view line = TrimSpace(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    auto value = ParseJsonText(line, file);
    if (!value.ok() || !value->is_object() || !value->contains("event")) {
      return std::move(whole).error();
    }
    STRATA_ASSIGN_OR_RETURN(RasReport one, FromJson(*value, file));
    for (RasProcess& p : one.dead_or_unreachable)
      merged.dead_or_unreachable.push_back(std::move(p));
    any = true;
  }
  if (!any) return std::move(whole).error();
  return merged;
}

}  // namespace

Result<RasReport> ParseNcclRas(std::string_view text, const std::string& file) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return ParseJsonReport(text, file);
  return TextParser(file).Parse(text);
}

Json ToJson(const RasReport& report) {
  const auto process = [](const RasProcess& p) {
    Json j;
    j["host"] = p.host;
    j["pid"] = p.pid;
    j["comm_rank"] = p.comm_rank ? Json(*p.comm_rank) : Json(nullptr);
    j["gpu"] = p.gpu ? Json(*p.gpu) : Json(nullptr);
    j["status"] = p.status;
    return j;
  };
  Json out;
  out["nccl_version"] = report.nccl_version;
  out["total_processes"] = report.total_processes;
  out["dead_or_unreachable"] = Json::array();
  for (const RasProcess& p : report.dead_or_unreachable)
    out["dead_or_unreachable"].push_back(process(p));
  out["communicators"] = Json::array();
  for (const RasCommunicator& c : report.communicators) {
    Json j;
    j["id"] = c.id;
    j["hash"] = c.hash;
    j["status"] = c.status;
    j["nranks"] = c.nranks;
    j["missing"] = Json::array();
    for (const RasProcess& p : c.missing) j["missing"].push_back(process(p));
    j["coll_count_by_rank"] = Json::object();
    for (const auto& [rank, count] : c.coll_count_by_rank) {
      j["coll_count_by_rank"][std::to_string(rank)] = count;
    }
    j["count_groups"] = Json::array();
    for (const RasCountGroup& g : c.count_groups) {
      j["count_groups"].push_back({{"coll_type", g.coll_type},
                                   {"ranks_count", g.ranks_count},
                                   {"op_count", g.op_count},
                                   {"ranks", g.ranks}});
    }
    j["notes"] = c.notes;
    out["communicators"].push_back(std::move(j));
  }
  out["notes"] = report.notes;
  return out;
}

}  // namespace strata::hang
