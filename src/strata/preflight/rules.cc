#include "strata/preflight/rules.h"

#include <algorithm>
#include <cstdlib>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata::preflight {
namespace {

Result<std::vector<std::string>> StringList(YamlMap& m, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, m.Node(key));
  if (!node.IsSequence()) return m.ErrorAt(key, "expected a list of strings");
  std::vector<std::string> out;
  for (const auto& item : node) {
    if (!item.IsScalar()) return m.ErrorAt(key, "expected a list of strings");
    out.push_back(item.as<std::string>());
  }
  return out;
}

Result<std::vector<int64_t>> CodeList(YamlMap& m, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, m.Node(key));
  if (!node.IsSequence() || node.size() == 0)
    return m.ErrorAt(key, "expected a list of Xid codes such as [48, 79]");
  std::vector<int64_t> out;
  for (const auto& item : node) {
    int64_t code = 0;
    if (!item.IsScalar() || !YAML::convert<int64_t>::decode(item, code) || code <= 0)
      return m.ErrorAt(key, "expected a list of Xid codes such as [48, 79]");
    out.push_back(code);
  }
  return out;
}

Result<Severity> SeverityField(YamlMap& m) {
  STRATA_ASSIGN_OR_RETURN(std::string severity, m.String("severity"));
  if (severity != "error" && severity != "warning")
    return m.ErrorAt("severity", "expected error or warning");
  return severity == "error" ? Severity::kError : Severity::kWarning;
}

Result<Seconds> Duration(YamlMap& m, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string text, m.String(key));
  auto s = ParseSeconds(text);
  if (!s.ok()) return m.ErrorAt(key, s.error().message);
  return *s;
}

}  // namespace

std::string_view SeverityName(Severity s) { return s == Severity::kError ? "error" : "warning"; }

const XidRule* Rules::XidRuleFor(int64_t code) const {
  for (const XidRule& x : xid) {
    if (std::find(x.codes.begin(), x.codes.end(), code) != x.codes.end()) return &x;
  }
  return nullptr;
}

int CompareVersions(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const long x = i < a.size() ? std::strtol(a.c_str() + i, nullptr, 10) : 0;
    const long y = j < b.size() ? std::strtol(b.c_str() + j, nullptr, 10) : 0;
    if (x != y) return x < y ? -1 : 1;
    i = a.find('.', i);
    i = i == std::string::npos ? a.size() : i + 1;
    j = b.find('.', j);
    j = j == std::string::npos ? b.size() : j + 1;
  }
  return 0;
}

Result<Rules> LoadRules(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/preflight/rules.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, path, ""));
  Rules rules;
  STRATA_ASSIGN_OR_RETURN(YamlMap t, top.Map("thresholds"));
  STRATA_ASSIGN_OR_RETURN(rules.dirty_memory, t.Size("dirty_memory"));
  STRATA_ASSIGN_OR_RETURN(rules.release_wait, Duration(t, "release_wait"));
  STRATA_ASSIGN_OR_RETURN(rules.max_collective_timeout, Duration(t, "max_collective_timeout"));
  STRATA_RETURN_IF_ERROR(t.CheckNoUnknownKeys());
  STRATA_ASSIGN_OR_RETURN(YAML::Node sources, top.Node("sources"));
  if (!sources.IsMap()) return top.ErrorAt("sources", "expected a mapping of field -> source");
  for (const auto& kv : sources) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
      return top.ErrorAt("sources", "expected field: source, both plain text");
    }
    rules.sources[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("dangerous"));
  if (!list.IsSequence()) return top.ErrorAt("dangerous", "expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m,
                            YamlMap::Of(list[i], path, "dangerous[" + std::to_string(i) + "]"));
    DangerousSetting d;
    STRATA_ASSIGN_OR_RETURN(d.variable, m.String("variable"));
    STRATA_ASSIGN_OR_RETURN(d.values, StringList(m, "values"));
    if (m.Has("ignore_case")) {
      STRATA_ASSIGN_OR_RETURN(d.ignore_case, m.Bool("ignore_case"));
    }
    STRATA_ASSIGN_OR_RETURN(d.severity, SeverityField(m));
    STRATA_ASSIGN_OR_RETURN(d.why, m.String("why"));
    STRATA_ASSIGN_OR_RETURN(d.fix, m.String("fix"));
    STRATA_ASSIGN_OR_RETURN(d.source, m.String("source"));
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    rules.dangerous.push_back(std::move(d));
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node xids, top.Node("xid"));
  if (!xids.IsSequence()) return top.ErrorAt("xid", "expected a list");
  for (size_t i = 0; i < xids.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m,
                            YamlMap::Of(xids[i], path, "xid[" + std::to_string(i) + "]"));
    XidRule x;
    STRATA_ASSIGN_OR_RETURN(x.codes, CodeList(m, "codes"));
    for (int64_t code : x.codes) {
      if (rules.XidRuleFor(code))
        return m.ErrorAt("codes", "Xid " + std::to_string(code) + " is already in an earlier rule");
    }
    STRATA_ASSIGN_OR_RETURN(x.severity, SeverityField(m));
    STRATA_ASSIGN_OR_RETURN(x.why, m.String("why"));
    STRATA_ASSIGN_OR_RETURN(x.fix, m.String("fix"));
    STRATA_ASSIGN_OR_RETURN(x.source, m.String("source"));
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    rules.xid.push_back(std::move(x));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return rules;
}

Result<CudaCompat> LoadCudaCompat(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/preflight/cuda_compat.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, path, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node packages, top.Node("packages"));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  if (!packages.IsMap())
    return top.ErrorAt("packages", "expected a mapping of package -> releases");
  CudaCompat compat;
  for (const auto& kv : packages) {
    if (!kv.first.IsScalar()) return top.ErrorAt("packages", "a package name must be plain text");
    const std::string name = kv.first.as<std::string>();
    STRATA_ASSIGN_OR_RETURN(YamlMap p, YamlMap::Of(kv.second, path, "packages." + name));
    PackageReleases pr;
    STRATA_ASSIGN_OR_RETURN(pr.source, p.String("source"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node releases, p.Node("releases"));
    STRATA_RETURN_IF_ERROR(p.CheckNoUnknownKeys());
    if (!releases.IsSequence()) return p.ErrorAt("releases", "expected a list");
    for (size_t i = 0; i < releases.size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(
          YamlMap r, YamlMap::Of(releases[i], path,
                                 "packages." + name + ".releases[" + std::to_string(i) + "]"));
      STRATA_ASSIGN_OR_RETURN(std::string version, r.String("version"));
      STRATA_ASSIGN_OR_RETURN(std::vector<std::string> cuda, StringList(r, "cuda"));
      STRATA_RETURN_IF_ERROR(r.CheckNoUnknownKeys());
      pr.releases.emplace_back(version, cuda);
    }
    compat.packages[name] = std::move(pr);
  }
  return compat;
}

}  // namespace strata::preflight
