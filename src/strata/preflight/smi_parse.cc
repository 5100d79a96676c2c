#include "strata/preflight/smi_parse.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>

#include "strata/core/text_scan.h"

namespace strata::preflight {
namespace {

// nvidia-smi separates cells with ", ".
std::vector<std::string> SplitCells(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t at = line.find(',', start);
    cells.emplace_back(TrimSpace(
        line.substr(start, at == std::string_view::npos ? line.size() - start : at - start)));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return cells;
}

// "memory.used [MiB]" -> "memory.used"
std::string ColumnName(const std::string& header) {
  const size_t bracket = header.find(" [");
  return header.substr(0, bracket);
}

bool NoValue(const std::string& cell) {
  return cell.empty() || (cell.front() == '[' && cell.back() == ']');
}

// nvidia-smi prints a field NVML could not read as the NVML error string in brackets
// (nvmlErrorString): "[N/A]" and "[Not Supported]" for a field this GPU does not have, and for a
// failed query e.g. "[GPU requires reset]" (NVML_ERROR_RESET_REQUIRED), "[GPU is lost]"
// (NVML_ERROR_GPU_IS_LOST) or "[Unknown Error]". The failures are kept: a row of them is a GPU
// that nvidia-smi still lists but cannot query, not a GPU without those fields.
std::optional<std::string> QueryError(const std::string& cell) {
  if (cell.size() < 2 || cell.front() != '[' || cell.back() != ']') return std::nullopt;
  const std::string inner = cell.substr(1, cell.size() - 2);
  if (inner == "N/A" || inner == "Not Supported") return std::nullopt;
  return inner;
}

// "97871 MiB", "97871", "0 %" -> the number; nullopt for "[N/A]"; an error for anything else.
Result<std::optional<double>> Number(const std::string& cell, const std::string& file, int line,
                                     const std::string& column) {
  if (NoValue(cell)) return std::optional<double>{};
  std::string digits = cell;
  for (const char* unit : {" MiB", " %", "MiB", "%"}) {
    const std::string u = unit;
    if (digits.size() > u.size() && digits.compare(digits.size() - u.size(), u.size(), u) == 0) {
      digits.resize(digits.size() - u.size());
      break;
    }
  }
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || *end != '\0') {
    return InvalidInput(
               fmt::format("'{}' is not a number (expected e.g. '97871 MiB' or '[N/A]')", cell))
        .InFile(file)
        .AtLine(line)
        .InField(column);
  }
  return std::optional<double>(v);
}

struct Csv {
  std::map<std::string, size_t> columns;
  std::vector<std::pair<int, std::vector<std::string>>> rows;  // line number, cells
};

Result<Csv> ReadCsv(std::string_view text, const std::string& file,
                    const std::vector<std::string>& required, std::string_view what) {
  Csv csv;
  const std::vector<TextLine> lines = SplitLines(text);
  size_t i = 0;
  while (i < lines.size() && TrimSpace(lines[i].text).empty()) ++i;
  if (i == lines.size()) return csv;
  const std::vector<std::string> header = SplitCells(lines[i].text);
  for (size_t c = 0; c < header.size(); ++c) csv.columns[ColumnName(header[c])] = c;
  for (const std::string& r : required) {
    if (!csv.columns.count(r)) {
      return InvalidInput(
                 fmt::format("the header has no '{}' column (expected the header line of {})", r,
                             what))
          .InFile(file)
          .AtLine(lines[i].number);
    }
  }
  for (++i; i < lines.size(); ++i) {
    if (TrimSpace(lines[i].text).empty()) continue;
    std::vector<std::string> cells = SplitCells(lines[i].text);
    if (cells.size() != header.size()) {
      return InvalidInput(
                 fmt::format("expected {} cells as in the header, found {} (a truncated file?)",
                             header.size(), cells.size()))
          .InFile(file)
          .AtLine(lines[i].number);
    }
    csv.rows.emplace_back(lines[i].number, std::move(cells));
  }
  return csv;
}

const std::string* Cell(const Csv& csv, const std::vector<std::string>& cells,
                        const std::string& column) {
  auto it = csv.columns.find(column);
  return it == csv.columns.end() ? nullptr : &cells[it->second];
}

// A Yes/No column ("retired_pages.pending", "remapped_rows.pending"); nullopt when absent or
// "[N/A]".
Result<std::optional<bool>> YesNo(const Csv& csv, const std::vector<std::string>& cells,
                                  const std::string& file, int line, const char* column) {
  const std::string* c = Cell(csv, cells, column);
  if (!c || NoValue(*c)) return std::optional<bool>{};
  if (*c != "Yes" && *c != "No") {
    return InvalidInput(fmt::format("'{}' is neither Yes nor No", *c))
        .InFile(file)
        .AtLine(line)
        .InField(column);
  }
  return std::optional<bool>(*c == "Yes");
}

// The memory-repair and recovery columns, in gpus.csv or in the collector's separate
// gpu-repair.csv (nvidia-smi --query-gpu=index,remapped_rows.pending,remapped_rows.failure and
// gpu_recovery_action, queried apart because a driver that lacks one field fails the whole
// query).
Status ReadRepairFields(const Csv& csv, const std::vector<std::string>& cells,
                        const std::string& file, int line, GpuRow& g) {
  STRATA_ASSIGN_OR_RETURN(g.remap_pending, YesNo(csv, cells, file, line, "remapped_rows.pending"));
  STRATA_ASSIGN_OR_RETURN(g.remap_failure, YesNo(csv, cells, file, line, "remapped_rows.failure"));
  if (auto* c = Cell(csv, cells, "gpu_recovery_action"); c && !NoValue(*c)) {
    g.recovery_action = *c;
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<GpuRow>> ParseGpuCsv(std::string_view text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(Csv csv,
                          ReadCsv(text, file, {"index", "memory.used"}, "nvidia-smi --query-gpu"));
  std::vector<GpuRow> gpus;
  for (const auto& [line, cells] : csv.rows) {
    GpuRow g;
    auto index = ParseInt64(*Cell(csv, cells, "index"));
    if (!index) {
      return InvalidInput(
                 fmt::format("GPU index '{}' is not an integer", *Cell(csv, cells, "index")))
          .InFile(file)
          .AtLine(line)
          .InField("index");
    }
    g.index = *index;
    for (const auto& [column, at] : csv.columns) {
      if (auto error = QueryError(cells[at])) g.query_errors[column] = *error;
    }
    if (auto* c = Cell(csv, cells, "uuid")) g.uuid = *c;
    if (auto* c = Cell(csv, cells, "name")) g.name = *c;
    STRATA_ASSIGN_OR_RETURN(g.memory_used_mib,
                            Number(*Cell(csv, cells, "memory.used"), file, line, "memory.used"));
    if (auto* c = Cell(csv, cells, "memory.total")) {
      STRATA_ASSIGN_OR_RETURN(g.memory_total_mib, Number(*c, file, line, "memory.total"));
    }
    if (auto* c = Cell(csv, cells, "utilization.gpu")) {
      STRATA_ASSIGN_OR_RETURN(g.utilization_pct, Number(*c, file, line, "utilization.gpu"));
    }
    for (const char* name : {"clocks_throttle_reasons.active", "clocks_event_reasons.active"}) {
      const std::string* c = Cell(csv, cells, name);
      if (!c || NoValue(*c)) continue;
      char* end = nullptr;
      const unsigned long long v = std::strtoull(c->c_str(), &end, 16);
      if (c->rfind("0x", 0) != 0 || *end != '\0') {
        return InvalidInput(
                   fmt::format("'{}' is not a hexadecimal bitmask such as 0x0000000000000004", *c))
            .InFile(file)
            .AtLine(line)
            .InField(name);
      }
      g.throttle_reasons = static_cast<uint64_t>(v);
    }
    if (auto* c = Cell(csv, cells, "ecc.errors.uncorrected.volatile.total"); c && !NoValue(*c)) {
      auto v = ParseInt64(*c);
      if (!v) {
        return InvalidInput(fmt::format("'{}' is not an error count", *c))
            .InFile(file)
            .AtLine(line)
            .InField("ecc.errors.uncorrected.volatile.total");
      }
      g.ecc_uncorrected = *v;
    }
    STRATA_ASSIGN_OR_RETURN(g.retired_pages_pending,
                            YesNo(csv, cells, file, line, "retired_pages.pending"));
    STRATA_RETURN_IF_ERROR(ReadRepairFields(csv, cells, file, line, g));
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Result<std::vector<ComputeApp>> ParseComputeAppsCsv(std::string_view text,
                                                    const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(
      Csv csv, ReadCsv(text, file, {"pid", "gpu_uuid"}, "nvidia-smi --query-compute-apps"));
  std::vector<ComputeApp> apps;
  for (const auto& [line, cells] : csv.rows) {
    ComputeApp a;
    auto pid = ParseInt64(*Cell(csv, cells, "pid"));
    if (!pid) {
      return InvalidInput(fmt::format("pid '{}' is not an integer", *Cell(csv, cells, "pid")))
          .InFile(file)
          .AtLine(line)
          .InField("pid");
    }
    a.pid = *pid;
    for (const char* name : {"process_name", "name"}) {
      if (auto* c = Cell(csv, cells, name)) a.process_name = *c;
    }
    for (const char* name : {"used_gpu_memory", "used_memory"}) {
      if (auto* c = Cell(csv, cells, name)) {
        STRATA_ASSIGN_OR_RETURN(a.used_mib, Number(*c, file, line, name));
      }
    }
    a.gpu_uuid = *Cell(csv, cells, "gpu_uuid");
    apps.push_back(std::move(a));
  }
  return apps;
}

Result<DriverInfo> ParseDriverBanner(std::string_view text, const std::string& file) {
  DriverInfo info;
  auto value_after = [&](std::string_view key) -> std::string {
    const size_t at = text.find(key);
    if (at == std::string_view::npos) return "";
    size_t v = at + key.size();
    while (v < text.size() && (text[v] == ' ' || text[v] == ':' || text[v] == '\t')) ++v;
    size_t end = v;
    while (end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
      ++end;
    return std::string(text.substr(v, end - v));
  };
  info.driver_version = value_after("Driver Version");
  if (info.driver_version.empty()) info.driver_version = value_after("KMD Version");
  info.cuda_version = value_after("CUDA UMD Version");
  if (info.cuda_version.empty()) info.cuda_version = value_after("CUDA Version");
  if (info.driver_version.empty() || info.cuda_version.empty()) {
    return InvalidInput(
               "no 'Driver Version: X ... CUDA Version: Y' (or 'KMD Version' / 'CUDA UMD Version') "
               "found "
               "(expected the output of nvidia-smi or nvidia-smi -q)")
        .InFile(file);
  }
  return info;
}

std::vector<XidEvent> ParseXidLines(std::string_view text) {
  std::vector<XidEvent> events;
  for (const TextLine& l : SplitLines(text)) {
    const size_t at = l.text.find("NVRM: Xid (");
    if (at == std::string_view::npos) continue;
    const size_t close = l.text.find("):", at);
    if (close == std::string_view::npos) continue;
    XidEvent e;
    e.pci = std::string(l.text.substr(at + 11, close - at - 11));
    auto code = LeadingInt(l.text.substr(close + 2));
    if (!code) continue;
    e.code = *code;
    e.line = std::string(TrimSpace(l.text));
    events.push_back(std::move(e));
  }
  return events;
}

Status MergeGpuRepairCsv(std::string_view text, const std::string& file,
                         std::vector<GpuRow>& gpus) {
  STRATA_ASSIGN_OR_RETURN(Csv csv, ReadCsv(text, file, {"index"}, "nvidia-smi --query-gpu"));
  for (const auto& [line, cells] : csv.rows) {
    auto index = ParseInt64(*Cell(csv, cells, "index"));
    GpuRow* g = nullptr;
    for (GpuRow& row : gpus) {
      if (index && row.index == *index) g = &row;
    }
    if (!g) {
      return InvalidInput(
                 fmt::format("GPU index '{}' is not a GPU of gpus.csv", *Cell(csv, cells, "index")))
          .InFile(file)
          .AtLine(line)
          .InField("index");
    }
    STRATA_RETURN_IF_ERROR(ReadRepairFields(csv, cells, file, line, *g));
  }
  return OkStatus();
}

}  // namespace strata::preflight
