#include "strata/preflight/env_parse.h"

#include <fmt/format.h>

#include <cctype>

#include "strata/core/text_scan.h"

namespace strata::preflight {
namespace {

bool ValidKey(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

Result<std::pair<std::string, std::string>> KeyValue(std::string_view line, const std::string& file,
                                                     int number) {
  const size_t eq = line.find('=');
  const std::string_view key = eq == std::string_view::npos ? line : line.substr(0, eq);
  if (eq == std::string_view::npos || !ValidKey(key)) {
    return InvalidInput(fmt::format("'{}' is not KEY=VALUE", line)).InFile(file).AtLine(number);
  }
  return std::make_pair(std::string(key), std::string(line.substr(eq + 1)));
}

}  // namespace

bool IsTrackedVariable(std::string_view key) {
  for (std::string_view prefix : {"NCCL_", "CUDA_", "TORCH_", "UCX_", "GLOO_", "MASTER_"}) {
    if (key.substr(0, prefix.size()) == prefix) return true;
  }
  return key == "PYTORCH_CUDA_ALLOC_CONF" || key == "RANK" || key == "LOCAL_RANK" ||
         key == "WORLD_SIZE";
}

Result<std::vector<ShellEnv>> ParseShellEnv(std::string_view text, const std::string& file) {
  std::vector<ShellEnv> shells;
  std::map<std::string, std::string> previous;  // the shell's environment before this section
  std::map<std::string, std::string> current;
  std::string section_file;
  auto close_section = [&]() {
    if (shells.empty()) return;
    ShellEnv& s = shells.back();
    std::map<std::string, ShellVar> vars;
    for (const auto& [k, v] : current) {
      auto old = s.vars.find(k);
      auto before = previous.find(k);
      if (old != s.vars.end() && before != previous.end() && before->second == v) {
        vars[k] = old->second;  // unchanged by this file
      } else {
        vars[k] = ShellVar{v, section_file};
      }
    }
    s.vars = std::move(vars);
    previous = current;
    current.clear();
  };
  for (const TextLine& l : SplitLines(text)) {
    const std::string_view line = l.text;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("== ", 0) == 0) {
      close_section();
      const std::vector<std::string_view> w = SplitWords(line.substr(3));
      if (w.size() < 2) {
        return InvalidInput(fmt::format("'{}' is not '== <shell> <file>'", line))
            .InFile(file)
            .AtLine(l.number);
      }
      const std::string shell(w[0]);
      const std::string source(line.substr(line.find(w[1])));
      if (source == "(start)") {
        shells.push_back(ShellEnv{shell, {}, {}});
        previous.clear();
        section_file = kInherited;
      } else {
        if (shells.empty() || shells.back().shell != shell) {
          return InvalidInput(fmt::format("section '{}' comes before '== {} (start)'", line, shell))
              .InFile(file)
              .AtLine(l.number);
        }
        shells.back().files.push_back(source);
        section_file = source;
      }
      continue;
    }
    if (shells.empty()) {
      return InvalidInput("a variable before the first '== <shell> (start)' line")
          .InFile(file)
          .AtLine(l.number);
    }
    STRATA_ASSIGN_OR_RETURN(auto kv, KeyValue(line, file, l.number));
    current[kv.first] = kv.second;
  }
  close_section();
  if (shells.empty())
    return InvalidInput("no '== <shell> (start)' section (a truncated file?)").InFile(file);
  return shells;
}

Result<std::map<std::string, std::string>> ParseNcclConf(std::string_view text,
                                                         const std::string& file) {
  std::map<std::string, std::string> conf;
  for (const TextLine& l : SplitLines(text)) {
    const std::string_view line = TrimSpace(l.text);
    if (line.empty() || line[0] == '#') continue;
    STRATA_ASSIGN_OR_RETURN(auto kv, KeyValue(line, file, l.number));
    conf[kv.first] = kv.second;
  }
  return conf;
}

Result<std::map<std::string, std::string>> ParseVersions(std::string_view text,
                                                         const std::string& file) {
  std::map<std::string, std::string> versions;
  for (const TextLine& l : SplitLines(text)) {
    const std::vector<std::string_view> w = SplitWords(l.text);
    if (w.empty()) continue;
    if (w.size() != 2) {
      return InvalidInput(fmt::format("'{}' is not '<package> <version>' (or '<package> -')",
                                      TrimSpace(l.text)))
          .InFile(file)
          .AtLine(l.number);
    }
    if (w[1] != "-") versions[std::string(w[0])] = std::string(w[1]);
  }
  return versions;
}

}  // namespace strata::preflight
