#include "strata/hang/analysis/placeholders.h"

#include <fmt/format.h>

#include <set>
#include <tuple>

#include "strata/hang/analysis/gloo_sequences.h"

namespace strata::hang {
namespace {

std::string Base(const std::string& file) {
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

std::string Meaning(const std::string& field, const std::string& value) {
  if (value == "18446744073709551615") {
    return "unknown: 2^64-1 is -1 printed unsigned, torch's placeholder for a value it does not "
           "have";
  }
  if (value == "N/A") return "unknown: the recorder wrote N/A, not a number";
  if (value == "<unknown>") return "unknown frame: the recorder or py-spy could not name it";
  if (field.find("completed") != std::string::npos || field.find("enqueued") != std::string::npos ||
      field.find("started") != std::string::npos) {
    return "unknown: -1 is torch's placeholder (no work of this kind recorded yet), not a counter";
  }
  if (field.find("sizes") != std::string::npos)
    return "unknown dimension: -1 is a placeholder, not a size";
  return "unknown: -1 is torch's placeholder, not a value";
}

}  // namespace

std::vector<Placeholder> FindPlaceholders(const EvidenceSet& ev) {
  std::vector<Placeholder> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;  // file, field, value
  auto add = [&](const std::string& file, const std::string& where, const std::string& field,
                 const std::string& value, const std::string& meaning = "") {
    if (!seen.emplace(file, field, value).second) return;
    out.push_back({where, field, value, meaning.empty() ? Meaning(field, value) : meaning});
  };
  for (const WatchdogEvent& e : ev.watchdog) {
    for (const auto& [field, value] : e.placeholders) {
      add(e.file, fmt::format("{}:{}", Base(e.file), e.line), field, value);
    }
  }
  for (const auto& [file, dump] : ev.fr_dumps) {
    if (IsGlooDump(dump)) {
      // Gloo's recorder never updates these (torch 2.10 and 2.11 dumps written on an H200,
      // tests/golden/hang-real/strata-h200-gloo*): every entry stays "scheduled" and retired, the
      // discovery times stay null, and pg_status's completion counter repeats the enqueue
      // counter. The ranks' sequences of collectives are compared instead (gloo_sequences.h).
      const std::string where = fmt::format("{}: every Gloo entry", Base(file));
      const std::string gloo = "not tracked by Gloo: a fixed value, not evidence of progress";
      add(file, where, "state", "scheduled", gloo);
      add(file, where, "retired", "true", gloo);
      add(file, where, "time_discovered_started_ns", "null", gloo);
      add(file, where, "time_discovered_completed_ns", "null", gloo);
      add(file, fmt::format("{}: pg_status", Base(file)), "last_completed_collective",
          "= last_enqueued_collective", gloo);
    }
    for (const auto& [path, value] : dump.placeholders) {
      // "entries[3].input_sizes[0][1]" -> field "input_sizes": one line per kind of field.
      std::string field = path;
      if (const size_t dot = field.rfind('.'); dot != std::string::npos)
        field = field.substr(dot + 1);
      field = field.substr(0, field.find('['));
      add(file, fmt::format("{}: {}", Base(file), path), field, value);
    }
    for (size_t i = 0; i < dump.entries.size(); ++i) {
      for (const PyFrame& f : dump.entries[i].frames) {
        if (f.function == "<unknown>" || f.file == "<unknown>") {
          add(file, fmt::format("{}: entries[{}].frames", Base(file), i), "frame", "<unknown>");
        }
      }
    }
  }
  for (const RankEvidence& r : ev.ranks) {
    if (!r.pyspy) continue;
    for (const PyThread& t : r.pyspy->threads) {
      for (const PyFrame& f : t.frames) {
        if (f.function == "<unknown>" || f.file == "<unknown>") {
          add(r.pyspy_file, fmt::format("{}: thread {}", Base(r.pyspy_file), t.thread_id), "frame",
              "<unknown>");
        }
      }
    }
  }
  return out;
}

}  // namespace strata::hang
