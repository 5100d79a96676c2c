#include "strata/hang/analysis/framework_timeouts.h"

#include <cmath>
#include <cstdlib>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata::hang {

Result<std::vector<FrameworkTimeout>> LoadFrameworkTimeouts(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/hang/framework_timeouts.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, path, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("frameworks"));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  if (!list.IsSequence()) return top.ErrorAt("frameworks", "expected a list of frameworks");
  std::vector<FrameworkTimeout> table;
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m,
                            YamlMap::Of(list[i], path, "frameworks[" + std::to_string(i) + "]"));
    FrameworkTimeout f;
    STRATA_ASSIGN_OR_RETURN(f.name, m.String("name"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node match, m.Node("match"));
    if (!match.IsSequence()) return m.ErrorAt("match", "expected a list of strings");
    for (const auto& s : match) f.match.push_back(s.as<std::string>());
    STRATA_ASSIGN_OR_RETURN(f.flag, m.String("flag"));
    STRATA_ASSIGN_OR_RETURN(std::string unit, m.String("flag_unit"));
    auto one = ParseSeconds("1" + unit);
    if (!one.ok()) return m.ErrorAt("flag_unit", "expected a time unit such as s or min");
    f.flag_unit = *one;
    STRATA_ASSIGN_OR_RETURN(std::string default_text, m.String("default"));
    auto d = ParseSeconds(default_text);
    if (!d.ok()) return m.ErrorAt("default", d.error().message);
    f.default_timeout = *d;
    STRATA_ASSIGN_OR_RETURN(f.source, m.String("source"));
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    table.push_back(std::move(f));
  }
  return table;
}

const FrameworkTimeout* FindFramework(const std::vector<FrameworkTimeout>& table,
                                      const std::string& cmdline) {
  for (const FrameworkTimeout& f : table) {
    for (const std::string& m : f.match) {
      if (cmdline.find(m) != std::string::npos) return &f;
    }
  }
  return nullptr;
}

std::optional<Seconds> TimeoutFromCommandLine(const FrameworkTimeout& framework,
                                              const std::string& cmdline) {
  if (framework.flag.empty()) return std::nullopt;
  for (size_t at = cmdline.find(framework.flag); at != std::string::npos;
       at = cmdline.find(framework.flag, at + 1)) {
    size_t v = at + framework.flag.size();
    if (v >= cmdline.size() || (cmdline[v] != ' ' && cmdline[v] != '=')) continue;
    ++v;
    const char* begin = cmdline.c_str() + v;
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (end == begin || !(value > 0) || !std::isfinite(value)) continue;
    const Seconds timeout = framework.flag_unit * value;
    if (timeout.s() > kMaxTimeoutS) continue;  // "1e300" or binary debris: not a timeout
    return timeout;
  }
  return std::nullopt;
}

}  // namespace strata::hang
