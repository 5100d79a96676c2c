#include "strata/core/yaml_fields.h"

#include <fmt/format.h>

#include <charconv>

#include "strata/core/did_you_mean.h"
#include "strata/core/yaml_duplicates.h"

namespace strata {

Result<YAML::Node> ParseYaml(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidInput("the file is empty, expected a YAML mapping").InFile(file);
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Error err = InvalidInput("malformed YAML: " + e.msg);
    err.file = file;
    err.line = e.mark.line + 1;
    err.column = e.mark.column + 1;
    return err;
  }
  STRATA_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, file));
  return root;
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

Result<YamlMap> YamlMap::Of(const YAML::Node& node, std::string file, std::string path) {
  if (!node || !node.IsMap()) {
    Error e = InvalidInput("expected a mapping of key: value");
    e.file = file;
    e.field = path;
    if (node) e.line = node.Mark().line + 1;
    return e;
  }
  return YamlMap(node, std::move(file), std::move(path));
}

std::string YamlMap::FieldPath(const std::string& key) const {
  if (path_.empty()) return key;
  if (key.empty()) return path_;
  return path_ + "." + key;
}

Error YamlMap::ErrorAt(const std::string& key, std::string message) const {
  Error e = InvalidInput(std::move(message));
  e.file = file_;
  e.field = FieldPath(key);
  const YAML::Node& self = node_;
  const YAML::Node n = key.empty() ? self : self[key];
  if (n && n.Mark().line >= 0) {
    e.line = n.Mark().line + 1;
  } else if (node_.Mark().line >= 0) {
    e.line = node_.Mark().line + 1;
  }
  return e;
}

bool YamlMap::Has(const std::string& key) const {
  read_.insert(key);
  const YAML::Node& self = node_;
  return static_cast<bool>(self[key]);
}

Result<YAML::Node> YamlMap::Node(const std::string& key) {
  read_.insert(key);
  const YAML::Node& self = node_;
  YAML::Node n = self[key];
  if (!n) return ErrorAt(key, "missing required field");
  return n;
}

Result<YAML::Node> YamlMap::Scalar(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Node(key));
  if (!n.IsScalar()) return ErrorAt(key, "expected a single value, got a list or mapping");
  return n;
}

Result<std::string> YamlMap::String(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  return n.Scalar();
}

Result<int64_t> YamlMap::Int(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  const std::string& s = n.Scalar();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return ErrorAt(key, fmt::format("expected an integer, got '{}'", s));
  }
  return v;
}

Result<int64_t> YamlMap::PositiveInt(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(int64_t v, Int(key));
  if (v <= 0) return ErrorAt(key, fmt::format("expected a positive integer, got {}", v));
  return v;
}

Result<double> YamlMap::Number(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  const std::string& s = n.Scalar();
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return ErrorAt(key, fmt::format("expected a number, got '{}'", s));
  }
  return v;
}

Result<bool> YamlMap::Bool(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  const std::string& s = n.Scalar();
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  return ErrorAt(key, fmt::format("expected true or false, got '{}'", s));
}

Result<Bytes> YamlMap::Size(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  auto r = ParseBytes(n.Scalar());
  if (!r.ok()) {
    Error e = ErrorAt(key, r.error().message);
    e.hint = r.error().hint;
    return e;
  }
  return *r;
}

Result<BytesPerSecond> YamlMap::Bandwidth(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Scalar(key));
  auto r = ParseBandwidth(n.Scalar());
  if (!r.ok()) {
    Error e = ErrorAt(key, r.error().message);
    e.hint = r.error().hint;
    return e;
  }
  return *r;
}

Result<YamlMap> YamlMap::Map(const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node n, Node(key));
  return YamlMap::Of(n, file_, FieldPath(key));
}

Status YamlMap::CheckNoUnknownKeys(const std::vector<std::string>& also_allowed) const {
  // Each name once: the allowed list may repeat what was read.
  std::vector<std::string> known(read_.begin(), read_.end());
  for (const std::string& key : also_allowed) {
    if (!read_.count(key) && std::find(known.begin(), known.end(), key) == known.end()) {
      known.push_back(key);
    }
  }
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) {  // "? [a, b]: c" or "{a: b}: c": YAML allows it, a job never
      Error e = InvalidInput("a key that is not a name (a YAML sequence or map used as a key)");
      e.file = file_;
      e.field = path_.empty() ? "(top level)" : path_;
      e.line = kv.first.Mark().line + 1;
      return e.WithHint("keys are plain names, as in the examples under data/");
    }
    const std::string key = kv.first.as<std::string>();
    if (read_.count(key) ||
        std::find(also_allowed.begin(), also_allowed.end(), key) != also_allowed.end())
      continue;
    Error e = InvalidInput(fmt::format("unknown field '{}'", key));
    e.file = file_;
    e.field = FieldPath(key);
    e.line = kv.first.Mark().line + 1;
    e.hint = DidYouMeanHint(key, known);
    return e;
  }
  return OkStatus();
}

}  // namespace strata
