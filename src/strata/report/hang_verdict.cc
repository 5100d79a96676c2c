#include "strata/report/hang_verdict.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/hang/analysis/pg_stall.h"
#include "strata/hang/analysis/rank_places.h"
#include "strata/hang/analysis/stack_tree.h"
#include "strata/hang/parsers/frames_json.h"

namespace strata::hang {
namespace {

std::string Frame(const PyFrame& f) {
  return f.line > 0 ? fmt::format("{} ({}:{})", f.function, f.file, f.line)
                    : fmt::format("{} ({})", f.function, f.file);
}

std::string RangesOrNone(const std::vector<int64_t>& ranks) {
  return ranks.empty() ? "none" : FormatRankRanges(ranks);
}

std::string Count(size_t n, const char* what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// "ranges" ("16-23,40") for people; "list" ([16, 17, ..., 23, 40]) for scripts. Every set is
// bounded by the evidence (ranks absent beyond those collected are "uncollected": a count and
// runs), never by a rank count read from it.
Json RankSet(const std::vector<int64_t>& ranks) {
  Json j;
  j["count"] = ranks.size();
  j["ranges"] = FormatRankRanges(ranks);
  j["list"] = ranks;
  return j;
}

// {"rank": 17, "host": "node3", "local_rank": 1, "pid": 4242, "source": "manifest"}: null where
// the evidence does not say.
Json Places(const std::vector<RankPlace>& places) {
  Json out = Json::array();
  for (const RankPlace& p : places) {
    out.push_back({{"rank", p.rank},
                   {"host", p.host.empty() ? Json(nullptr) : Json(p.host)},
                   {"local_rank", p.local_rank ? Json(*p.local_rank) : Json(nullptr)},
                   {"pid", p.pid ? Json(*p.pid) : Json(nullptr)},
                   {"source", p.source}});
  }
  return out;
}

}  // namespace

Json VerdictToJson(const Verdict& v) {
  Json j = JsonDocument(kVerdictKind);
  j["hang"] = v.hang;
  j["headline"] = v.headline;
  j["finding"] = {
      {"kind", v.finding.kind},
      {"ranks", v.finding.ranks},
      {"op", v.finding.op},
      {"seq", v.finding.seq ? Json(*v.finding.seq) : Json(nullptr)},
      {"timeout_ms", v.finding.timeout_ms ? Json(*v.finding.timeout_ms) : Json(nullptr)},
      {"peer", v.finding.peer},
      {"setting", v.finding.setting},
      {"summary", v.finding.summary},
      {"evidence", v.finding.evidence},
      {"processes", Places(PlacesOf(v.places, v.finding.ranks))}};
  j["expected_world_size"] = v.expected_world ? Json(*v.expected_world) : Json(nullptr);
  j["hosts"] = v.hosts;
  j["evidence_bytes"] = v.bytes_read;
  j["ranks"] = {{"seen", RankSet(v.ranks_seen)},
                {"dead", RankSet(v.dead)},
                {"missing", RankSet(v.missing)},
                {"no_stack", RankSet(v.no_stack)},
                {"moved", RankSet(v.moved)},
                {"silent", RankSet(v.silent)},
                {"uncollected", {{"count", v.uncollected}, {"ranges", v.uncollected_ranges}}}};
  j["processes"] = Places(v.places);
  Json groups = Json::array();
  for (const StackGroup& g : v.groups) {
    Json e;
    e["ranks"] = RankSet(g.ranks);
    e["activity"] = ActivityName(g.activity.kind);
    e["op"] = g.activity.op;
    e["phase"] = g.activity.phase;
    e["diverges_below"] = g.diverges_below;
    e["frames"] = FramesToJson(g.frames);
    groups.push_back(std::move(e));
  }
  j["stack_groups"] = std::move(groups);
  Json stalls = Json::array();
  for (const PgStall& s : v.pg_stalls) {
    Json e;
    e["process_group"] = s.pg;
    e["desc"] = s.desc;
    e["source"] = s.source;
    e["stalled_seq"] = s.stalled_seq;
    e["op"] = s.op;
    e["input_sizes"] = s.input_sizes;
    e["members"] = RankSet(s.members);
    e["waiting"] = RankSet(s.waiting);
    e["behind"] = RankSet(s.behind);
    e["missing"] = RankSet(s.missing);
    if (!s.ahead.empty()) e["ahead"] = RankSet(s.ahead);
    e["timeout_ms"] = s.timeout_ms ? Json(*s.timeout_ms) : Json(nullptr);
    e["mismatch"] = s.mismatch;
    e["mismatch_minority"] = RankSet(s.mismatch_minority);
    stalls.push_back(std::move(e));
  }
  j["process_groups"] = std::move(stalls);
  Json patterns = Json::array();
  for (const Pattern& p : v.patterns) {
    patterns.push_back(
        {{"id", p.id}, {"title", p.title}, {"ranks", RankSet(p.ranks)}, {"evidence", p.evidence}});
  }
  j["patterns"] = std::move(patterns);
  if (v.culprit) {
    j["culprit"] = {{"ranks", RankSet(v.culprit->ranks)},
                    {"host", v.culprit->host},
                    {"processes", Places(PlacesOf(v.places, v.culprit->ranks))},
                    {"phase", v.culprit->phase},
                    {"evidence", v.culprit->chain}};
  } else {
    j["culprit"] = nullptr;
  }
  j["timeout"] = {{"effective_timeout_s",
                   v.timeout.effective_s ? Json(RoundSig(*v.timeout.effective_s)) : Json(nullptr)},
                  {"source", v.timeout.source},
                  {"framework", v.timeout.framework},
                  {"watchdog_applies", v.timeout.watchdog_applies},
                  {"note", v.timeout.note}};
  Json unreadable = Json::array();
  for (const Unreadable& u : v.unreadable)
    unreadable.push_back({{"file", u.file}, {"reason", u.reason}});
  j["unreadable_files"] = std::move(unreadable);
  Json placeholders = Json::array();
  for (const Placeholder& p : v.placeholders) {
    placeholders.push_back(
        {{"where", p.where}, {"field", p.field}, {"value", p.value}, {"meaning", p.meaning}});
  }
  j["placeholders"] = std::move(placeholders);
  j["notes"] = v.notes;
  return j;
}

std::string VerdictToText(const Verdict& v, size_t max_frames) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line(fmt::format("{}{}", v.hang ? "HANG: " : "",
                   v.headline.substr(v.headline.rfind("hang: ", 0) == 0 ? 6 : 0)));
  line(fmt::format("finding: {}{}{}{}{}", v.finding.kind,
                   v.finding.ranks.empty() ? "" : ", rank " + FormatRankRanges(v.finding.ranks),
                   v.finding.op.empty() ? "" : ", " + v.finding.op,
                   v.finding.seq ? fmt::format(" #{}", *v.finding.seq) : "",
                   v.finding.peer.empty() ? "" : ", peer " + v.finding.peer));
  if (!v.finding.setting.empty()) line("  check first: " + v.finding.setting);
  for (const std::string& e : v.finding.evidence) line("  " + e);
  line("");
  // Processes known only by pid are not ranks: the line says which it counts.
  const bool all_pids = !v.ranks_seen.empty() && v.pid_only.size() == v.ranks_seen.size();
  const char* counted = v.pid_only.empty() ? "ranks"
                        : all_pids         ? "processes (by pid, no RANK known)"
                                           : "ranks and processes (by pid where no RANK is known)";
  line(fmt::format("{}: expected {}, live {} ({}), dead {}, missing {}, without a stack {}",
                   counted, v.expected_world ? std::to_string(*v.expected_world) : "unknown",
                   v.ranks_seen.size(), RangesOrNone(v.ranks_seen), RangesOrNone(v.dead),
                   v.uncollected > 0 ? fmt::format("none named ({} not collected: {})",
                                                   v.uncollected, v.uncollected_ranges)
                                     : RangesOrNone(v.missing),
                   RangesOrNone(v.no_stack)));
  if (!v.silent.empty()) {
    line(fmt::format(
        "silent: {} ({}): expected, but no line, dump or stack of theirs in the evidence",
        Count(v.silent.size(), "rank"), FormatRankRanges(v.silent)));
  }
  line(fmt::format("evidence: {}, {:.2f} MB read",
                   v.hosts ? Count(v.hosts, "node bundle") : "loose files",
                   static_cast<double>(v.bytes_read) / 1e6));
  if (!v.groups.empty()) {
    line("");
    line(fmt::format("stack groups (py-spy main threads, innermost frame first): {}",
                     v.groups.size()));
    for (size_t i = 0; i < v.groups.size(); ++i) {
      const StackGroup& g = v.groups[i];
      const bool pids = IdsText(v.pid_only, g.ranks).starts_with("pid");
      line(fmt::format(
          "  #{} {:<9} {}: {} {}{}", i + 1,
          pids ? fmt::format("{} process{}", g.ranks.size(), g.ranks.size() == 1 ? "" : "es")
               : Count(g.ranks.size(), "rank"),
          FormatRankRanges(g.ranks), ActivityName(g.activity.kind), g.activity.op,
          g.activity.phase.empty() ? "" : " [" + g.activity.phase + "]"));
      if (!g.diverges_below.empty()) line("      parts from group #1 below " + g.diverges_below);
      for (size_t f = 0; f < g.frames.size() && f < max_frames; ++f)
        line("      " + Frame(g.frames[f]));
      if (g.frames.size() > max_frames)
        line(fmt::format("      ... {} outer frames", g.frames.size() - max_frames));
    }
  }
  if (!v.pg_stalls.empty()) {
    line("");
    line("process groups:");
    for (const PgStall& s : v.pg_stalls) {
      line(fmt::format("  PG {} from the {}: stalled at collective #{} {}", GroupLabel(s), s.source,
                       s.stalled_seq, s.op.empty() ? "(op unknown)" : s.op));
      line(fmt::format("      waiting {} ({}), behind {} ({}), missing {} ({})", s.waiting.size(),
                       RangesOrNone(s.waiting), s.behind.size(), RangesOrNone(s.behind),
                       s.missing.size(), RangesOrNone(s.missing)));
      if (!s.ahead.empty()) {
        line(fmt::format("      past it already {} ({})", s.ahead.size(), RangesOrNone(s.ahead)));
      }
      if (!s.mismatch.empty()) line("      mismatch: " + s.mismatch);
    }
  }
  if (!v.patterns.empty()) {
    line("");
    line("patterns:");
    for (const Pattern& p : v.patterns) {
      line(fmt::format("  [{}] {}", p.id, p.title));
      for (const std::string& e : p.evidence) line("      " + e);
    }
  }
  if (v.culprit) {
    line("");
    line(fmt::format("culprit: {}{}{}", IdsText(v.pid_only, v.culprit->ranks),
                     v.culprit->host.empty() ? "" : " on " + v.culprit->host,
                     v.culprit->phase.empty() ? "" : ", phase: " + v.culprit->phase));
    line("  chain of evidence:");
    for (const std::string& c : v.culprit->chain) line("    " + c);
  }
  line("");
  if (v.timeout.effective_s) {
    line(fmt::format("collective timeout: {:.0f} s, from {}", *v.timeout.effective_s,
                     v.timeout.source));
  } else {
    line("collective timeout: unknown (no flight recorder, watchdog line or known framework)");
  }
  if (!v.timeout.note.empty()) line("  " + v.timeout.note);
  if (!v.unreadable.empty()) {
    line("");
    line(fmt::format("unreadable files (skipped): {}", v.unreadable.size()));
    for (const Unreadable& u : v.unreadable) line(fmt::format("  {}: {}", u.file, u.reason));
  }
  if (!v.placeholders.empty()) {
    line("");
    line(fmt::format("placeholders (read as unknown, not as values): {}", v.placeholders.size()));
    for (const Placeholder& p : v.placeholders) {
      line(fmt::format("  {}: {}={}: {}", p.where, p.field, p.value, p.meaning));
    }
  }
  if (!v.notes.empty()) {
    line("");
    line("notes:");
    for (const std::string& n : v.notes) line("  " + n);
  }
  return out;
}

}  // namespace strata::hang
