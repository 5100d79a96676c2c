#include "strata/hang/parsers/flight_recorder.h"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "strata/core/json_input.h"
#include "strata/hang/parsers/frames_json.h"
#include "strata/hang/parsers/pickle_reader.h"

namespace strata::hang {
namespace {

using nlohmann::json;

constexpr size_t kMaxJsonDepth = 100;  // the format nests five deep; the rest is hostile

// Reads torch's loosely typed values: the JSON variant writes pg_status numbers as strings, and
// fields come and go between versions. Every error names the file and the dotted field path.
class FieldReader {
 public:
  explicit FieldReader(const std::string& file) : file_(file) {}

  // Placeholders met while reading ("N/A" where a number belongs, -1 as a tensor dimension):
  // kept, with the field path, so the verdict can say they were not values.
  std::vector<std::pair<std::string, std::string>> TakePlaceholders() const {
    return std::exchange(placeholders_, {});
  }

  Error Fail(const std::string& path, const std::string& message) const {
    return InvalidInput(message).InFile(file_).InField(path);
  }

  // Bounded: a field holding a huge (or hugely shared) value is shown, not serialised whole.
  static std::string Show(const json& value) { return JsonPreview(value, 60); }

  const json* Find(const json& object, std::string_view key) const {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  Result<const json*> Require(const json& object, std::string_view key,
                              const std::string& path) const {
    const json* value = Find(object, key);
    if (value == nullptr) return Fail(Join(path, key), "missing required field");
    return value;
  }

  Result<int64_t> Int(const json& value, const std::string& path) const {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
        return Fail(path, fmt::format("integer {} does not fit 64 bits", Show(value)));
      }
      return value.get<int64_t>();
    }
    if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      int64_t parsed = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return parsed;
    }
    return Fail(path, fmt::format("expected an integer, got {}", Show(value)));
  }

  Result<std::string> String(const json& value, const std::string& path) const {
    if (!value.is_string())
      return Fail(path, fmt::format("expected a string, got {}", Show(value)));
    return value.get<std::string>();
  }

  Result<bool> Bool(const json& value, const std::string& path) const {
    if (!value.is_boolean()) {
      return Fail(path, fmt::format("expected true or false, got {}", Show(value)));
    }
    return value.get<bool>();
  }

  Status ExpectObject(const json& value, const std::string& path) const {
    if (value.is_object()) return OkStatus();
    return Fail(path, fmt::format("expected a dict, got {}", Show(value)));
  }
  Status ExpectArray(const json& value, const std::string& path) const {
    if (value.is_array()) return OkStatus();
    return Fail(path, fmt::format("expected a list, got {}", Show(value)));
  }

  // Optional scalars: absent (or None) keeps the default.
  Status OptionalInt(const json& object, std::string_view key, const std::string& path,
                     int64_t* out) const {
    const json* value = Find(object, key);
    if (value == nullptr || value->is_null()) return OkStatus();
    if (value->is_string() && value->get_ref<const std::string&>() == "N/A") {
      placeholders_.emplace_back(Join(path, key), "N/A");
      return OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(*out, Int(*value, Join(path, key)));
    return OkStatus();
  }
  Status OptionalString(const json& object, std::string_view key, const std::string& path,
                        std::string* out) const {
    const json* value = Find(object, key);
    if (value == nullptr || value->is_null()) return OkStatus();
    STRATA_ASSIGN_OR_RETURN(*out, String(*value, Join(path, key)));
    return OkStatus();
  }

  Result<std::vector<std::vector<int64_t>>> Shapes(const json& object, std::string_view key,
                                                   const std::string& path) const {
    std::vector<std::vector<int64_t>> shapes;
    const json* value = Find(object, key);
    if (value == nullptr || value->is_null()) return shapes;
    const std::string field = Join(path, key);
    STRATA_RETURN_IF_ERROR(ExpectArray(*value, field));
    for (size_t i = 0; i < value->size(); ++i) {
      const std::string item_path = fmt::format("{}[{}]", field, i);
      STRATA_RETURN_IF_ERROR(ExpectArray((*value)[i], item_path));
      std::vector<int64_t> shape;
      for (size_t d = 0; d < (*value)[i].size(); ++d) {
        STRATA_ASSIGN_OR_RETURN(int64_t dim,
                                Int((*value)[i][d], fmt::format("{}[{}]", item_path, d)));
        if (dim == -1) placeholders_.emplace_back(fmt::format("{}[{}]", item_path, d), "-1");
        shape.push_back(dim);
      }
      shapes.push_back(std::move(shape));
    }
    return shapes;
  }

  Result<std::vector<std::string>> Strings(const json& object, std::string_view key,
                                           const std::string& path) const {
    std::vector<std::string> out;
    const json* value = Find(object, key);
    if (value == nullptr || value->is_null()) return out;
    const std::string field = Join(path, key);
    STRATA_RETURN_IF_ERROR(ExpectArray(*value, field));
    for (size_t i = 0; i < value->size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(std::string s, String((*value)[i], fmt::format("{}[{}]", field, i)));
      out.push_back(std::move(s));
    }
    return out;
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }

 private:
  const std::string& file_;
  mutable std::vector<std::pair<std::string, std::string>> placeholders_;
};

// "[0, 1, 2]" (torch writes the member list as a string) or a real list.
Result<std::vector<int64_t>> ParseRanks(const FieldReader& reader, const json& value,
                                        const std::string& path) {
  std::vector<int64_t> ranks;
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(int64_t rank, reader.Int(value[i], fmt::format("{}[{}]", path, i)));
      ranks.push_back(rank);
    }
    return ranks;
  }
  STRATA_ASSIGN_OR_RETURN(std::string text, reader.String(value, path));
  const Error bad = reader.Fail(path, fmt::format("expected a rank list like \"[0, 1, 2]\", got "
                                                  "{}",
                                                  FieldReader::Show(value)));
  size_t pos = text.find_first_not_of(" \t");
  if (pos == std::string::npos || text[pos] != '[') return bad;
  ++pos;
  const auto skip_space = [&] {
    while (pos < text.size() && text[pos] == ' ') ++pos;
  };
  skip_space();
  if (pos < text.size() && text[pos] == ']') return ranks;
  while (true) {
    skip_space();
    int64_t rank = 0;
    const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), rank);
    if (ec != std::errc()) return bad;
    pos = static_cast<size_t>(end - text.data());
    ranks.push_back(rank);
    skip_space();
    if (pos >= text.size()) return bad;
    if (text[pos] == ']') break;
    if (text[pos] != ',') return bad;
    ++pos;
  }
  return ranks;
}

// "nccl:all_reduce" -> "all_reduce"; "nccl:send 0->1" -> "send", src 0, dst 1 (PG-local);
// "nccl:recv 1<-0" -> "recv", dst 1, src 0. Any backend prefix is accepted ("nccl2:", "xccl:").
void SplitProfilingName(FrEntry* entry) {
  std::string_view name = entry->profiling_name;
  const size_t colon = name.find(':');
  if (colon != std::string_view::npos) name.remove_prefix(colon + 1);
  const size_t space = name.find(' ');
  entry->op = std::string(name.substr(0, space));
  if (space == std::string_view::npos) return;
  const std::string_view peers = name.substr(space + 1);
  const bool is_send = peers.find("->") != std::string_view::npos;
  const size_t arrow = is_send ? peers.find("->") : peers.find("<-");
  if (arrow == std::string_view::npos) return;
  int64_t left = 0, right = 0;
  const auto l = std::from_chars(peers.data(), peers.data() + arrow, left);
  const auto r = std::from_chars(peers.data() + arrow + 2, peers.data() + peers.size(), right);
  if (l.ec != std::errc() || l.ptr != peers.data() + arrow || r.ec != std::errc() ||
      r.ptr != peers.data() + peers.size()) {
    return;
  }
  entry->p2p_src_rank = is_send ? left : right;
  entry->p2p_dst_rank = is_send ? right : left;
}

Result<FrEntry> ParseEntry(const FieldReader& r, const json& value, const std::string& path) {
  STRATA_RETURN_IF_ERROR(r.ExpectObject(value, path));
  FrEntry e;
  STRATA_ASSIGN_OR_RETURN(const json* record_id, r.Require(value, "record_id", path));
  STRATA_ASSIGN_OR_RETURN(e.record_id, r.Int(*record_id, path + ".record_id"));
  STRATA_ASSIGN_OR_RETURN(const json* pg_id, r.Require(value, "pg_id", path));
  STRATA_ASSIGN_OR_RETURN(e.pg_id, r.Int(*pg_id, path + ".pg_id"));

  STRATA_ASSIGN_OR_RETURN(const json* group, r.Require(value, "process_group", path));
  if (!group->is_array() || group->size() != 2) {
    return r.Fail(path + ".process_group",
                  fmt::format("expected a (name, desc) pair, got {}", FieldReader::Show(*group)));
  }
  STRATA_ASSIGN_OR_RETURN(e.pg_name, r.String((*group)[0], path + ".process_group[0]"));
  STRATA_ASSIGN_OR_RETURN(e.pg_desc, r.String((*group)[1], path + ".process_group[1]"));

  // Early dumps called the collective counter seq_id.
  const json* seq = r.Find(value, "collective_seq_id");
  if (seq == nullptr) seq = r.Find(value, "seq_id");
  if (seq == nullptr) return r.Fail(path + ".collective_seq_id", "missing required field");
  STRATA_ASSIGN_OR_RETURN(e.collective_seq_id, r.Int(*seq, path + ".collective_seq_id"));
  STRATA_RETURN_IF_ERROR(r.OptionalInt(value, "p2p_seq_id", path, &e.p2p_seq_id));
  STRATA_RETURN_IF_ERROR(r.OptionalInt(value, "op_id", path, &e.op_id));

  STRATA_ASSIGN_OR_RETURN(const json* name, r.Require(value, "profiling_name", path));
  STRATA_ASSIGN_OR_RETURN(e.profiling_name, r.String(*name, path + ".profiling_name"));
  SplitProfilingName(&e);
  e.is_p2p = e.op == "send" || e.op == "recv";
  if (const json* p2p = r.Find(value, "is_p2p"); p2p != nullptr && !p2p->is_null()) {
    STRATA_ASSIGN_OR_RETURN(e.is_p2p, r.Bool(*p2p, path + ".is_p2p"));
  }

  STRATA_ASSIGN_OR_RETURN(const json* state, r.Require(value, "state", path));
  STRATA_ASSIGN_OR_RETURN(e.state, r.String(*state, path + ".state"));
  if (const json* retired = r.Find(value, "retired"); retired != nullptr && !retired->is_null()) {
    STRATA_ASSIGN_OR_RETURN(e.retired, r.Bool(*retired, path + ".retired"));
  }
  STRATA_RETURN_IF_ERROR(r.OptionalInt(value, "timeout_ms", path, &e.timeout_ms));
  STRATA_RETURN_IF_ERROR(r.OptionalInt(value, "time_created_ns", path, &e.time_created_ns));
  if (const json* d = r.Find(value, "duration_ms"); d != nullptr && !d->is_null()) {
    if (!d->is_number()) {
      return r.Fail(path + ".duration_ms", fmt::format("expected a number of milliseconds, got "
                                                       "{}",
                                                       FieldReader::Show(*d)));
    }
    e.duration_ms = d->get<double>();
  }
  STRATA_ASSIGN_OR_RETURN(e.input_sizes, r.Shapes(value, "input_sizes", path));
  STRATA_ASSIGN_OR_RETURN(e.output_sizes, r.Shapes(value, "output_sizes", path));
  STRATA_ASSIGN_OR_RETURN(e.input_dtypes, r.Strings(value, "input_dtypes", path));
  STRATA_ASSIGN_OR_RETURN(e.output_dtypes, r.Strings(value, "output_dtypes", path));

  if (const json* frames = r.Find(value, "frames"); frames != nullptr && !frames->is_null()) {
    STRATA_RETURN_IF_ERROR(r.ExpectArray(*frames, path + ".frames"));
    for (size_t i = 0; i < frames->size(); ++i) {
      const std::string frame_path = fmt::format("{}.frames[{}]", path, i);
      const json& f = (*frames)[i];
      STRATA_RETURN_IF_ERROR(r.ExpectObject(f, frame_path));
      PyFrame frame;
      STRATA_RETURN_IF_ERROR(r.OptionalString(f, "name", frame_path, &frame.function));
      STRATA_RETURN_IF_ERROR(r.OptionalString(f, "filename", frame_path, &frame.file));
      int64_t line = 0;
      STRATA_RETURN_IF_ERROR(r.OptionalInt(f, "line", frame_path, &line));
      if (line < 0 || line > INT32_MAX) {
        return r.Fail(frame_path + ".line", fmt::format("expected a line number, got {}", line));
      }
      frame.line = static_cast<int>(line);
      e.frames.push_back(std::move(frame));
    }
  }
  return e;
}

Status ParseVersion(const FieldReader& r, const json& top, FrDump* dump) {
  STRATA_ASSIGN_OR_RETURN(const json* version, r.Require(top, "version", ""));
  STRATA_ASSIGN_OR_RETURN(dump->version, r.String(*version, "version"));
  const std::string& v = dump->version;
  int major = 0, minor = 0;
  const char* end = v.data() + v.size();
  const auto m = std::from_chars(v.data(), end, major);
  bool ok = m.ec == std::errc() && m.ptr < end && *m.ptr == '.';
  if (ok) {
    const auto n = std::from_chars(m.ptr + 1, end, minor);
    ok = n.ec == std::errc() && n.ptr == end;
  }
  if (!ok || major != 2 || minor < kFrMinMinorVersion || minor > kFrMaxMinorVersion) {
    Error error = r.Fail("version", fmt::format("Flight Recorder format version '{}' is not "
                                                "supported, expected 2.{} to 2.{}",
                                                v, kFrMinMinorVersion, kFrMaxMinorVersion));
    error.code = ErrorCode::kUnsupportedVersion;
    return error.WithHint(ok && major == 2 && minor > kFrMaxMinorVersion
                              ? "the dump is newer than this strata; a newer strata may read it"
                              : "is this file a PyTorch Flight Recorder dump?");
  }
  return OkStatus();
}

Result<FrDump> DumpFromJson(const json& top, const std::string& file) {
  const FieldReader r(file);
  if (!top.is_object()) {
    return InvalidInput(fmt::format("expected a dict at the top level of a Flight Recorder dump, "
                                    "got {}",
                                    FieldReader::Show(top)))
        .InFile(file);
  }
  FrDump dump;
  STRATA_RETURN_IF_ERROR(ParseVersion(r, top, &dump));
  // Earlier copies named the library version key nccl_version.
  STRATA_RETURN_IF_ERROR(r.OptionalString(top, "comm_lib_version", "", &dump.comm_lib_version));
  if (dump.comm_lib_version.empty()) {
    STRATA_RETURN_IF_ERROR(r.OptionalString(top, "nccl_version", "", &dump.comm_lib_version));
  }
  if (const json* rank = r.Find(top, "rank"); rank != nullptr && !rank->is_null()) {
    STRATA_ASSIGN_OR_RETURN(dump.rank, r.Int(*rank, "rank"));
  }
  if (const json* config = r.Find(top, "pg_config"); config != nullptr) {
    STRATA_RETURN_IF_ERROR(r.ExpectObject(*config, "pg_config"));
    for (const auto& [key, value] : config->items()) {
      const std::string path = "pg_config." + key;
      STRATA_RETURN_IF_ERROR(r.ExpectObject(value, path));
      FrPgConfig pg;
      pg.name = key;
      STRATA_RETURN_IF_ERROR(r.OptionalString(value, "name", path, &pg.name));
      STRATA_RETURN_IF_ERROR(r.OptionalString(value, "desc", path, &pg.desc));
      if (const json* ranks = r.Find(value, "ranks"); ranks != nullptr) {
        STRATA_ASSIGN_OR_RETURN(pg.ranks, ParseRanks(r, *ranks, path + ".ranks"));
      }
      dump.pg_config[key] = std::move(pg);
    }
  }
  if (const json* status = r.Find(top, "pg_status"); status != nullptr) {
    STRATA_RETURN_IF_ERROR(r.ExpectObject(*status, "pg_status"));
    for (const auto& [key, value] : status->items()) {
      const std::string path = "pg_status." + key;
      STRATA_RETURN_IF_ERROR(r.ExpectObject(value, path));
      FrPgStatus pg;
      STRATA_RETURN_IF_ERROR(
          r.OptionalInt(value, "last_enqueued_collective", path, &pg.last_enqueued));
      STRATA_RETURN_IF_ERROR(
          r.OptionalInt(value, "last_started_collective", path, &pg.last_started));
      STRATA_RETURN_IF_ERROR(
          r.OptionalInt(value, "last_completed_collective", path, &pg.last_completed));
      dump.pg_status[key] = pg;
    }
  }
  // The JSON variant omits "entries" when there are none.
  if (const json* entries = r.Find(top, "entries"); entries != nullptr && !entries->is_null()) {
    STRATA_RETURN_IF_ERROR(r.ExpectArray(*entries, "entries"));
    dump.entries.reserve(entries->size());
    for (size_t i = 0; i < entries->size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(FrEntry entry,
                              ParseEntry(r, (*entries)[i], fmt::format("entries[{}]", i)));
      dump.entries.push_back(std::move(entry));
    }
  }
  dump.placeholders = r.TakePlaceholders();
  return dump;
}

Result<json> ParseJsonText(std::string_view text, const std::string& file) {
  return ParseUntrustedJson(text, file, kMaxJsonDepth, "a Flight Recorder dump");
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<int64_t> RankFromFileName(std::string_view name) {
  name = BaseName(name);
  for (std::string_view ext : {".pkl", ".pickle", ".json"}) {
    if (name.size() > ext.size() && name.ends_with(ext)) {
      name.remove_suffix(ext.size());
      break;
    }
  }
  size_t start = name.size();
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  const std::string_view digits = name.substr(start);
  if (digits.empty() || digits.size() > 18) return std::nullopt;  // 18 digits always fit int64
  int64_t rank = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  return rank;
}

Result<FrDump> ParseFlightRecorder(std::string_view bytes, const std::string& file) {
  if (bytes.empty()) {
    return InvalidInput(
               "the file is empty, expected a Flight Recorder dump (a pickle or JSON); "
               "torch writes empty or tiny dumps when the dump was interrupted")
        .InFile(file);
  }
  json top;
  const auto first = static_cast<unsigned char>(bytes[0]);
  const size_t text_start = bytes.find_first_not_of(" \t\r\n");
  if (first == 0x80) {
    STRATA_ASSIGN_OR_RETURN(const std::string text, ReadPickle(bytes, file));
    STRATA_ASSIGN_OR_RETURN(top, ParseJsonText(text, file));
  } else if (text_start != std::string_view::npos && bytes[text_start] == '{') {
    const PickleLimits limits;
    if (bytes.size() > limits.max_input_bytes) {
      return InvalidInput(fmt::format("the file is {} bytes, over the limit of {} bytes",
                                      bytes.size(), limits.max_input_bytes))
          .InFile(file);
    }
    STRATA_ASSIGN_OR_RETURN(top, ParseJsonText(bytes, file));
  } else {
    return InvalidInput(fmt::format("byte 0: found 0x{:02x}, expected a Flight Recorder dump: a "
                                    "pickle (first byte 0x80) or JSON (first character '{{')",
                                    first))
        .InFile(file);
  }
  STRATA_ASSIGN_OR_RETURN(FrDump dump, DumpFromJson(top, file));
  if (!dump.rank) dump.rank = RankFromFileName(file);
  return dump;
}

Json ToJson(const FrDump& dump) {
  Json out;
  out["version"] = dump.version;
  out["rank"] = dump.rank ? Json(*dump.rank) : Json(nullptr);
  out["comm_lib_version"] = dump.comm_lib_version;
  out["pg_config"] = Json::object();
  for (const auto& [key, pg] : dump.pg_config) {
    out["pg_config"][key] = {{"name", pg.name}, {"desc", pg.desc}, {"ranks", pg.ranks}};
  }
  out["pg_status"] = Json::object();
  for (const auto& [key, pg] : dump.pg_status) {
    out["pg_status"][key] = {{"last_enqueued_collective", pg.last_enqueued},
                             {"last_started_collective", pg.last_started},
                             {"last_completed_collective", pg.last_completed}};
  }
  Json entries = Json::array();
  for (const FrEntry& e : dump.entries) {
    Json j;
    j["record_id"] = e.record_id;
    j["pg_id"] = e.pg_id;
    j["pg_name"] = e.pg_name;
    j["pg_desc"] = e.pg_desc;
    j["collective_seq_id"] = e.collective_seq_id;
    j["p2p_seq_id"] = e.p2p_seq_id;
    j["op_id"] = e.op_id;
    j["profiling_name"] = e.profiling_name;
    j["op"] = e.op;
    j["is_p2p"] = e.is_p2p;
    j["p2p_src_rank"] = e.p2p_src_rank ? Json(*e.p2p_src_rank) : Json(nullptr);
    j["p2p_dst_rank"] = e.p2p_dst_rank ? Json(*e.p2p_dst_rank) : Json(nullptr);
    j["state"] = e.state;
    j["retired"] = e.retired;
    j["timeout_ms"] = e.timeout_ms;
    j["time_created_ns"] = e.time_created_ns;
    j["duration_ms"] = e.duration_ms ? Json(RoundSig(*e.duration_ms)) : Json(nullptr);
    j["input_sizes"] = e.input_sizes;
    j["output_sizes"] = e.output_sizes;
    j["input_dtypes"] = e.input_dtypes;
    j["output_dtypes"] = e.output_dtypes;
    j["frames"] = FramesToJson(e.frames);
    entries.push_back(std::move(j));
  }
  out["entries"] = std::move(entries);
  return out;
}

}  // namespace strata::hang
