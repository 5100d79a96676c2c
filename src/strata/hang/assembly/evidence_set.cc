#include "strata/hang/assembly/evidence_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/hang/parsers/flight_recorder.h"
#include "strata/hang/parsers/horovod_stall.h"
#include "strata/hang/parsers/horovod_timeline.h"
#include "strata/hang/parsers/log_signals.h"
#include "strata/hang/parsers/nccl_ras.h"
#include "strata/hang/parsers/pyspy.h"
#include "strata/hang/parsers/watchdog_log.h"

namespace strata::hang {
namespace fs = std::filesystem;
namespace {

// Loose directories are walked this deep: a directory of node bundles, each with fr/ and logs/.
constexpr int kMaxDirDepth = 3;

// An error as a reason beside its file name: "line 3: field: message (hint)".
std::string Reason(const Error& e) {
  std::string out = e.line > 0 ? fmt::format("line {}: ", e.line) : "";
  if (!e.field.empty()) out += e.field + ": ";
  out += e.message;
  if (!e.hint.empty()) out += " (" + e.hint + ")";
  return out;
}

enum class FileKind {
  kPySpy,
  kFrPickle,
  kFrJson,
  kRasText,
  kRasJson,
  kManifest,
  kComputeApps,
  kBinary,
  kUnknownJson,
  kHorovodTimeline,
  kLog
};

// py-spy's thread header: "Thread 1234 (idle)", or "Thread 0x7F81445A8440 (active): "MainThread""
// where py-spy has no native thread id (pytorch/torchtitan#1342). Not faulthandler's
// "Thread 0x00007f... (most recent call first):" nor gdb's "Thread 1 (Thread 0x7feb... (LWP
// 23530) "python"):" (NVIDIA/nccl#1777): py-spy's parenthesis holds its status only.
bool PySpyThreadLine(std::string_view line) {
  if (!line.starts_with("Thread ")) return false;
  std::string_view rest = line.substr(7);
  const size_t end = rest.find_first_of(" :");
  const std::string_view id = rest.substr(0, end);
  const bool hex = id.starts_with("0x") || id.starts_with("0X");
  if (id.empty() || (!hex && !std::isdigit(static_cast<unsigned char>(id[0])))) return false;
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (rest.starts_with(" (")) {
    return rest.starts_with(" (idle)") || rest.starts_with(" (active)") ||
           rest.starts_with(" (active+gil)") || rest.starts_with(" (gil)");
  }
  return !hex;
}

// py-spy's process header: "Process 3179904: /usr/bin/python3 -u train.py". torch's "Process
// Group destroyed on rank 0" (facebookresearch/metaseq#90) and "Process 0 exit with status
// code 137." (horovod/horovod#2907) open a line with the same word and are log lines.
bool PySpyProcessLine(std::string_view line) {
  if (!line.starts_with("Process ")) return false;
  const std::string_view rest = line.substr(8);
  const size_t digits = rest.find_first_not_of("0123456789");
  return digits != 0 && digits != std::string_view::npos && rest[digits] == ':';
}

FileKind Sniff(std::string_view contents) {
  if (!contents.empty() && static_cast<unsigned char>(contents[0]) == 0x80)
    return FileKind::kFrPickle;
  const std::string_view head = contents.substr(0, 4096);
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return FileKind::kPySpy;  // empty: py-spy killed early
  // A JSON object's first key is a double-quoted string. A log may open with a Python dict's
  // repr instead, "{'loss': 1.7157, ...}" (the Hugging Face Trainer's metrics lines,
  // deepspeedai/DeepSpeed#5394): that is a log, not JSON of an unknown kind.
  const size_t key = head.find_first_not_of(" \t\r\n", first + 1);
  const bool json_object =
      head[first] == '{' && (key == std::string_view::npos || head[key] == '"' || head[key] == '}');
  if (json_object) {
    if (Contains(head, "\"hang_bundle\"")) return FileKind::kManifest;
    if (Contains(head, "\"pg_config\"") || Contains(head, "\"pg_status\"") ||
        Contains(head, "\"entries\"")) {
      return FileKind::kFrJson;
    }
    if (Contains(head, "\"communicators\"") || Contains(head, "\"nccl_version\"")) {
      return FileKind::kRasJson;
    }
    return FileKind::kUnknownJson;
  }
  if (LooksLikeChromeTraceArray(head)) return FileKind::kHorovodTimeline;
  if (head[first] == '[') {  // py-spy --json is an array of objects; "[rank3]:" starts a log line
    const size_t second = head.find_first_not_of(" \t\r\n", first + 1);
    if (second == std::string_view::npos || head[second] == '{' || head[second] == ']') {
      return FileKind::kPySpy;
    }
  }
  if (head.find('\0') != std::string_view::npos) return FileKind::kBinary;
  if (head.substr(first).starts_with("pid, process_name")) return FileKind::kComputeApps;
  if (Contains(head, "Job summary") || head.substr(first).starts_with("NCCL version")) {
    return FileKind::kRasText;
  }
  // py-spy: a header in the first lines, possibly behind a pdsh/srun prefix.
  size_t pos = first;
  for (int n = 0; n < 6 && pos < head.size(); ++n) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view line = head.substr(pos, nl - pos);
    pos = nl + 1;
    if (const size_t colon = line.find(": ");
        colon != std::string_view::npos &&
        line.substr(0, colon).find(' ') == std::string_view::npos &&
        line.substr(0, colon) != "Error") {
      line = line.substr(colon + 2);
    }
    if (PySpyProcessLine(line) || PySpyThreadLine(line) || line.starts_with("Error: Failed") ||
        line.starts_with("Permission Denied")) {
      return FileKind::kPySpy;
    }
  }
  return FileKind::kLog;
}

void AddPySpy(EvidenceSet& set, std::string_view contents, const std::string& file,
              std::optional<int64_t> rank, const std::string& host, const ProcessRecord* record) {
  auto dumps = ParsePySpy(contents, file);
  if (!dumps.ok()) {
    set.unreadable.push_back({file, Reason(dumps.error())});
    if (record) {  // the process was there: keep it, without a stack
      RankEvidence r;
      r.process = *record;
      r.host = host;
      r.pyspy_file = file;
      set.ranks.push_back(std::move(r));
    }
    return;
  }
  for (PySpyDump& dump : *dumps) {
    RankEvidence r;
    if (record) r.process = *record;
    if (dump.pid == 0) dump.pid = r.process.pid;
    if (r.process.pid == 0) r.process.pid = dump.pid;
    if (!r.process.rank && dumps->size() == 1) r.process.rank = rank;
    if (r.process.cmdline.empty()) r.process.cmdline = dump.program;
    r.host = host;
    r.pyspy_file = file;
    r.pyspy = std::move(dump);
    set.ranks.push_back(std::move(r));
  }
}

// The ranks the lines of a log speak for (LoadedLog::speaking_ranks).
std::vector<int64_t> SpeakingRanks(std::string_view contents) {
  std::vector<int64_t> ranks;
  size_t start = 0;
  while (start < contents.size()) {
    size_t end = contents.find('\n', start);
    if (end == std::string_view::npos) end = contents.size();
    const std::string_view line = contents.substr(start, end - start);
    std::optional<int64_t> r = RankPrefix(line);
    if (!r) r = MpiTagRank(line);
    if (r) ranks.push_back(*r);
    start = end + 1;
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

void AddLog(EvidenceSet& set, std::string_view contents, const std::string& file,
            std::optional<int64_t> rank, const std::string& host, bool complete) {
  set.logs.push_back({file, host, rank, complete,
                      static_cast<size_t>(std::count(contents.begin(), contents.end(), '\n')) +
                          (contents.empty() || contents.back() == '\n' ? 0 : 1),
                      SpeakingRanks(contents)});
  for (FailureSignal& f : ScanFailures(contents, file)) {
    if (!f.global_rank && f.kind != FailureKind::kChildFailed) f.global_rank = rank;
    set.failures.push_back(std::move(f));
  }
  std::vector<LogSignal> signals = ScanLogSignals(contents, file);
  for (LogSignal& s : signals) {
    if (!s.global_rank) s.global_rank = rank;
    set.log_signals.push_back(std::move(s));
  }
  for (GlooSignal& g : ScanGlooLog(contents, file)) {
    if (!g.global_rank) g.global_rank = rank;
    set.gloo.push_back(std::move(g));
  }
  std::vector<WatchdogEvent> events = ParseWatchdogLog(contents, file);
  for (WatchdogEvent& e : events) {
    if (!e.global_rank) e.global_rank = rank;
    set.watchdog.push_back(std::move(e));
  }
}

void AddFile(EvidenceSet& set, std::string_view contents, const std::string& file,
             std::optional<int64_t> rank, const std::string& host, bool log_complete) {
  set.bytes_read += contents.size();
  switch (Sniff(contents)) {
    case FileKind::kPySpy:
      AddPySpy(set, contents, file, rank, host, nullptr);
      return;
    case FileKind::kFrPickle:
    case FileKind::kFrJson: {
      auto dump = ParseFlightRecorder(contents, file);
      if (!dump.ok()) {
        set.unreadable.push_back({file, Reason(dump.error())});
        return;
      }
      if (!dump->rank) dump->rank = RankFromFileName(file);
      if (!dump->rank) dump->rank = rank;
      set.fr_dumps.emplace_back(file, std::move(dump).value());
      return;
    }
    case FileKind::kRasText:
    case FileKind::kRasJson: {
      auto report = ParseNcclRas(contents, file);
      if (!report.ok()) {
        set.unreadable.push_back({file, Reason(report.error())});
        return;
      }
      set.ras.push_back(std::move(report).value());
      return;
    }
    case FileKind::kHorovodTimeline: {
      auto timeline = ParseHorovodTimeline(contents, file);
      if (!timeline.ok()) {
        set.unreadable.push_back({file, Reason(timeline.error())});
        return;
      }
      set.timelines.push_back(std::move(timeline).value());
      return;
    }
    case FileKind::kManifest:
      set.unreadable.push_back({file, "a bundle manifest: pass the bundle's directory instead"});
      return;
    case FileKind::kComputeApps: {
      auto apps = ParseComputeApps(contents, host);
      set.gpu_apps.insert(set.gpu_apps.end(), apps.begin(), apps.end());
      return;
    }
    case FileKind::kBinary:
      set.unreadable.push_back({file,
                                "binary file of no known kind (not a flight-recorder pickle: "
                                "those start with byte 0x80)"});
      return;
    case FileKind::kUnknownJson:
      set.unreadable.push_back({file,
                                "JSON of no known kind: expected a py-spy dump (array), a "
                                "flight-recorder dump (pg_config/entries) or NCCL RAS "
                                "(communicators)"});
      return;
    case FileKind::kLog:
      AddLog(set, contents, file, rank, host, log_complete);
      return;
  }
}

void LoadBundle(EvidenceSet& set, const fs::path& dir, const std::string& manifest_text) {
  const std::string manifest_path = (dir / kManifestName).string();
  auto manifest = ParseManifest(manifest_text, manifest_path);
  if (!manifest.ok()) {
    set.unreadable.push_back({manifest_path, Reason(manifest.error())});
    return;
  }
  const std::string& host = manifest->host;
  set.hosts.push_back(host);
  auto read = [&](const std::string& relative) -> std::optional<std::string> {
    const std::string path = (dir / relative).string();
    auto inside = PathInBundle(dir.string(), relative);
    if (!inside.ok()) {
      set.unreadable.push_back({path, inside.error().message});
      return std::nullopt;
    }
    auto text = ReadFile(path);
    if (!text.ok()) {
      set.unreadable.push_back({path, text.error().message});
      return std::nullopt;
    }
    set.bytes_read += text->size();
    return std::move(text).value();
  };
  for (const ProcessRecord& p : manifest->processes) {
    const size_t first = set.ranks.size();
    if (p.pyspy_file.empty()) {
      set.ranks.push_back({p, host, std::nullopt, "", ""});
    } else if (auto text = read(p.pyspy_file)) {
      AddPySpy(set, *text, (dir / p.pyspy_file).string(), p.rank, host, &p);
    } else {
      set.ranks.push_back({p, host, std::nullopt, (dir / p.pyspy_file).string(), ""});
    }
    for (size_t i = first; i < set.ranks.size(); ++i) set.ranks[i].snapshot = manifest->time_utc;
    for (const std::string& fr : p.fr_files) {
      const std::string path = (dir / fr).string();
      if (auto inside = PathInBundle(dir.string(), fr); !inside.ok()) {
        set.unreadable.push_back({path, inside.error().message});
      } else if (auto text = ReadFile(path); text.ok()) {
        AddFile(set, *text, path, p.rank, host, true);
      } else {
        set.unreadable.push_back({path, text.error().message});
      }
    }
  }
  for (const LogRecord& l : manifest->logs) {
    if (auto text = read(l.file))
      AddLog(set, *text, (dir / l.file).string(), l.rank, host, !l.truncated);
  }
  if (!manifest->nvidia_smi_file.empty()) {
    if (auto text = read(manifest->nvidia_smi_file)) {
      auto apps = ParseComputeApps(*text, host);
      set.gpu_apps.insert(set.gpu_apps.end(), apps.begin(), apps.end());
    }
  }
}

void LoadPath(EvidenceSet& set, const fs::path& path, int depth) {
  std::error_code ec;
  if (depth > 0 && fs::is_symlink(path, ec) && fs::is_directory(path, ec)) {
    set.unreadable.push_back(
        {path.string(), "a link to a directory: not followed (pass it directly)"});
    return;
  }
  if (fs::is_directory(path, ec)) {
    const fs::path manifest = path / kManifestName;
    if (fs::exists(manifest, ec)) {
      auto text = ReadFile(manifest.string());
      if (!text.ok()) {
        set.unreadable.push_back({manifest.string(), text.error().message});
      } else {
        LoadBundle(set, path, *text);
      }
      return;
    }
    if (depth >= kMaxDirDepth) {
      set.unreadable.push_back({path.string(), "directory nested too deep; pass it directly"});
      return;
    }
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      entries.push_back(it->path());
    }
    if (ec) set.unreadable.push_back({path.string(), ec.message()});
    std::sort(entries.begin(), entries.end());
    for (const fs::path& p : entries) LoadPath(set, p, depth + 1);
    return;
  }
  if (!fs::is_regular_file(path, ec)) {
    set.unreadable.push_back({path.string(), "not a regular file (a pipe or device?)"});
    return;
  }
  auto text = ReadFile(path.string());
  if (!text.ok()) {
    set.unreadable.push_back({path.string(), text.error().message});
    return;
  }
  AddFile(set, *text, path.string(), RankInFileName(path.filename().string()), "", true);
}

}  // namespace

std::optional<int64_t> RankInFileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (size_t at = name.find("rank"); at != std::string_view::npos;
       at = name.find("rank", at + 1)) {
    std::string_view rest = name.substr(at + 4);
    if (!rest.empty() && (rest.front() == '_' || rest.front() == '-')) rest.remove_prefix(1);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec == std::errc() && ptr != rest.data()) return v;
  }
  return std::nullopt;
}

std::vector<GpuApp> ParseComputeApps(std::string_view csv, const std::string& host) {
  std::vector<GpuApp> apps;
  size_t pos = 0;
  bool header = true;
  while (pos < csv.size()) {
    size_t nl = csv.find('\n', pos);
    if (nl == std::string_view::npos) nl = csv.size();
    std::string_view line = csv.substr(pos, nl - pos);
    pos = nl + 1;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    size_t start = 0;
    while (start <= line.size()) {
      size_t comma = line.find(',', start);
      if (comma == std::string_view::npos) comma = line.size();
      std::string_view cell = line.substr(start, comma - start);
      while (!cell.empty() && (cell.front() == ' ')) cell.remove_prefix(1);
      while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.remove_suffix(1);
      cells.emplace_back(cell);
      start = comma + 1;
    }
    if (cells.size() != 4) continue;
    GpuApp app;
    const auto [ptr, ec] =
        std::from_chars(cells[0].data(), cells[0].data() + cells[0].size(), app.pid);
    if (ec != std::errc()) continue;
    app.host = host;
    app.process_name = cells[1];
    app.used_memory = cells[2];
    app.gpu_uuid = cells[3];
    apps.push_back(std::move(app));
  }
  return apps;
}

void AddEvidenceFile(EvidenceSet& set, std::string_view contents, const std::string& file,
                     std::optional<int64_t> rank, const std::string& host) {
  AddFile(set, contents, file, rank ? rank : RankInFileName(file), host, true);
}

Result<EvidenceSet> LoadEvidence(const std::vector<std::string>& paths) {
  EvidenceSet set;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      return IoError("no such file or directory")
          .InFile(p)
          .WithHint(
              "pass bundle directories written by 'strata collect', or py-spy dumps, "
              "flight-recorder dumps, logs or NCCL RAS output");
    }
    LoadPath(set, p, 0);
  }
  return set;
}

}  // namespace strata::hang
