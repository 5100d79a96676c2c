#include "strata/hang/collect/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "strata/core/did_you_mean.h"

namespace strata::hang {
namespace {

Json OptionalInt(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

// A strict reader of one JSON object: typed getters, and unknown keys reported by name.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string file, std::string field)
      : object_(object), file_(std::move(file)), field_(std::move(field)) {}

  Error Bad(const std::string& key, const std::string& message) const {
    return InvalidInput(message).InFile(file_).InField(field_.empty() ? key : field_ + "." + key);
  }
  const Json* Get(const std::string& key) {
    seen_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  Status String(const std::string& key, std::string& out) {
    const Json* v = Get(key);
    if (!v) return OkStatus();
    if (!v->is_string()) return Bad(key, fmt::format("expected a string, got {}", v->type_name()));
    out = v->get<std::string>();
    return OkStatus();
  }
  Status Int(const std::string& key, std::optional<int64_t>& out) {
    const Json* v = Get(key);
    if (!v) return OkStatus();
    if (!v->is_number_integer())
      return Bad(key, fmt::format("expected an integer, got {}", v->type_name()));
    out = v->get<int64_t>();
    return OkStatus();
  }
  Status Int(const std::string& key, int64_t& out) {
    std::optional<int64_t> v;
    STRATA_RETURN_IF_ERROR(Int(key, v));
    if (v) out = *v;
    return OkStatus();
  }
  Status Bool(const std::string& key, bool& out) {
    const Json* v = Get(key);
    if (!v) return OkStatus();
    if (!v->is_boolean())
      return Bad(key, fmt::format("expected true or false, got {}", v->type_name()));
    out = v->get<bool>();
    return OkStatus();
  }
  Status Strings(const std::string& key, std::vector<std::string>& out) {
    const Json* v = Get(key);
    if (!v) return OkStatus();
    if (!v->is_array()) return Bad(key, "expected an array of strings");
    for (const Json& s : *v) {
      if (!s.is_string()) return Bad(key, "expected an array of strings");
      out.push_back(s.get<std::string>());
    }
    return OkStatus();
  }
  Status NoUnknownKeys() const {
    std::vector<std::string> known(seen_.begin(), seen_.end());
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (!seen_.count(it.key())) {
        return Bad(it.key(), fmt::format("unknown key '{}'", it.key()))
            .WithHint(DidYouMeanHint(it.key(), known));
      }
    }
    return OkStatus();
  }

 private:
  const Json& object_;
  std::string file_;
  std::string field_;
  std::set<std::string> seen_;
};

Result<ProcessRecord> ParseProcess(const Json& j, const std::string& file,
                                   const std::string& field) {
  if (!j.is_object())
    return InvalidInput("expected an object (one process)").InFile(file).InField(field);
  ObjectReader r(j, file, field);
  ProcessRecord p;
  STRATA_RETURN_IF_ERROR(r.Int("pid", p.pid));
  STRATA_RETURN_IF_ERROR(r.Int("rank", p.rank));
  STRATA_RETURN_IF_ERROR(r.Int("local_rank", p.local_rank));
  STRATA_RETURN_IF_ERROR(r.Int("world_size", p.world_size));
  STRATA_RETURN_IF_ERROR(r.String("cmdline", p.cmdline));
  STRATA_RETURN_IF_ERROR(r.String("state", p.state));
  if (const Json* env = r.Get("env")) {
    if (!env->is_object()) return r.Bad("env", "expected an object of NAME: value strings");
    for (auto it = env->begin(); it != env->end(); ++it) {
      if (!it->is_string()) return r.Bad("env." + it.key(), "expected a string value");
      p.env[it.key()] = it->get<std::string>();
    }
  }
  STRATA_RETURN_IF_ERROR(r.String("pyspy_file", p.pyspy_file));
  int64_t exit_code = 0;
  STRATA_RETURN_IF_ERROR(r.Int("pyspy_exit_code", exit_code));
  p.pyspy_exit_code = static_cast<int>(exit_code);
  STRATA_RETURN_IF_ERROR(r.Bool("pyspy_timed_out", p.pyspy_timed_out));
  STRATA_RETURN_IF_ERROR(r.Strings("fr_files", p.fr_files));
  STRATA_RETURN_IF_ERROR(r.NoUnknownKeys());
  return p;
}

Result<LogRecord> ParseLog(const Json& j, const std::string& file, const std::string& field) {
  if (!j.is_object())
    return InvalidInput("expected an object (one log)").InFile(file).InField(field);
  ObjectReader r(j, file, field);
  LogRecord l;
  STRATA_RETURN_IF_ERROR(r.String("file", l.file));
  STRATA_RETURN_IF_ERROR(r.String("source", l.source));
  STRATA_RETURN_IF_ERROR(r.Int("rank", l.rank));
  STRATA_RETURN_IF_ERROR(r.Int("bytes_total", l.bytes_total));
  STRATA_RETURN_IF_ERROR(r.Bool("truncated", l.truncated));
  STRATA_RETURN_IF_ERROR(r.NoUnknownKeys());
  if (l.file.empty()) return r.Bad("file", "missing: the log tail's path inside the bundle");
  return l;
}

}  // namespace

Json ManifestToJson(const Manifest& m) {
  Json j = JsonDocument(kManifestKind);
  j["host"] = m.host;
  j["time_utc"] = m.time_utc;
  j["strata_version"] = m.strata_version;
  Json processes = Json::array();
  for (const ProcessRecord& p : m.processes) {
    Json e;
    e["pid"] = p.pid;
    e["rank"] = OptionalInt(p.rank);
    e["local_rank"] = OptionalInt(p.local_rank);
    e["world_size"] = OptionalInt(p.world_size);
    e["cmdline"] = p.cmdline;
    e["state"] = p.state;
    e["env"] = Json::object();
    for (const auto& [k, v] : p.env) e["env"][k] = v;
    e["pyspy_file"] = p.pyspy_file;
    e["pyspy_exit_code"] = p.pyspy_exit_code;
    e["pyspy_timed_out"] = p.pyspy_timed_out;
    e["fr_files"] = p.fr_files;
    processes.push_back(std::move(e));
  }
  j["processes"] = std::move(processes);
  j["nvidia_smi_file"] = m.nvidia_smi_file;
  Json logs = Json::array();
  for (const LogRecord& l : m.logs) {
    Json e;
    e["file"] = l.file;
    e["source"] = l.source;
    e["rank"] = OptionalInt(l.rank);
    e["bytes_total"] = l.bytes_total;
    e["truncated"] = l.truncated;
    logs.push_back(std::move(e));
  }
  j["logs"] = std::move(logs);
  j["notes"] = m.notes;
  return j;
}

Result<Manifest> ParseManifest(std::string_view text, const std::string& file) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidInput(fmt::format("malformed bundle manifest (truncated?): {}", e.what()))
        .InFile(file);
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number such as 1e400
    return InvalidInput(fmt::format("malformed bundle manifest: {}", e.what())).InFile(file);
  }
  if (!j.is_object()) return InvalidInput("a bundle manifest must be a JSON object").InFile(file);
  ObjectReader r(j, file, "");
  std::optional<int64_t> version;
  std::string kind;
  STRATA_RETURN_IF_ERROR(r.Int("schema_version", version));
  STRATA_RETURN_IF_ERROR(r.String("kind", kind));
  if (kind != kManifestKind) {
    return r.Bad("kind", fmt::format("expected '{}', got '{}'", kManifestKind, kind));
  }
  if (!version || *version > kSchemaVersion) {
    return Error{ErrorCode::kUnsupportedVersion,
                 fmt::format("bundle schema_version {} is not one this strata reads (<= {})",
                             version ? std::to_string(*version) : "missing", kSchemaVersion),
                 file,
                 0,
                 0,
                 "schema_version",
                 "collect the bundle with the same strata version"};
  }
  Manifest m;
  STRATA_RETURN_IF_ERROR(r.String("host", m.host));
  STRATA_RETURN_IF_ERROR(r.String("time_utc", m.time_utc));
  STRATA_RETURN_IF_ERROR(r.String("strata_version", m.strata_version));
  STRATA_RETURN_IF_ERROR(r.String("nvidia_smi_file", m.nvidia_smi_file));
  STRATA_RETURN_IF_ERROR(r.Strings("notes", m.notes));
  if (const Json* processes = r.Get("processes")) {
    if (!processes->is_array()) return r.Bad("processes", "expected an array");
    for (size_t i = 0; i < processes->size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(ProcessRecord p,
                              ParseProcess((*processes)[i], file, fmt::format("processes[{}]", i)));
      m.processes.push_back(std::move(p));
    }
  }
  if (const Json* logs = r.Get("logs")) {
    if (!logs->is_array()) return r.Bad("logs", "expected an array");
    for (size_t i = 0; i < logs->size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(LogRecord l, ParseLog((*logs)[i], file, fmt::format("logs[{}]", i)));
      m.logs.push_back(std::move(l));
    }
  }
  STRATA_RETURN_IF_ERROR(r.NoUnknownKeys());
  return m;
}

Result<std::string> PathInBundle(const std::string& dir, const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path rel(relative);
  const auto outside = [&](std::string_view why) {
    return InvalidInput(fmt::format("the manifest names '{}', {}; expected a path inside the "
                                    "bundle",
                                    relative, why))
        .InFile((fs::path(dir) / kManifestName).string());
  };
  if (rel.empty()) return outside("an empty path");
  if (rel.is_absolute()) return outside("an absolute path");
  for (const fs::path& part : rel) {
    if (part == "..") return outside("a path with '..'");
  }
  const fs::path joined = fs::path(dir) / rel;
  std::error_code ec1, ec2;
  const fs::path real_dir = fs::weakly_canonical(dir, ec1);
  const fs::path real = fs::weakly_canonical(joined, ec2);
  if (!ec1 && !ec2) {
    const auto [d, r] = std::mismatch(real_dir.begin(), real_dir.end(), real.begin(), real.end());
    if (d != real_dir.end()) return outside("a link that leads outside the bundle");
  }
  return joined.string();
}

}  // namespace strata::hang
