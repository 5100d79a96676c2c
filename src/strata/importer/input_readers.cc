#include "strata/importer/input_readers.h"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/core/yaml_duplicates.h"

namespace strata {

namespace {

std::string Base(const std::string& file) {
  return std::filesystem::path(file).filename().string();
}

void FlattenJson(const nlohmann::json& j, const std::string& prefix, const std::string& file,
                 Settings& out) {
  if (j.is_object()) {
    for (const auto& item : j.items()) {
      FlattenJson(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), file, out);
    }
    return;
  }
  if (j.is_null()) return;
  std::string value = j.is_string() ? j.get<std::string>() : j.dump();
  out.Set(prefix, value, fmt::format("{}: {}", Base(file), prefix));
}

void FlattenYaml(const YAML::Node& node, const std::string& prefix, const std::string& file,
                 Settings& out) {
  if (node.IsMap()) {
    for (const auto& item : node) {
      const std::string key = item.first.Scalar();
      FlattenYaml(item.second, prefix.empty() ? key : prefix + "." + key, file, out);
    }
    return;
  }
  if (node.IsNull() || !node.IsDefined()) return;
  std::string value;
  if (node.IsScalar()) {
    value = node.Scalar();
    if (value == "null" || value == "~") return;
  } else {
    YAML::Emitter e;
    e << YAML::Flow << node;
    value = e.c_str();
  }
  out.Set(prefix, value, fmt::format("{}:{}: {}", Base(file), node.Mark().line + 1, prefix));
}

void FlattenToml(const toml::table& table, const std::string& prefix, const std::string& file,
                 Settings& out) {
  for (const auto& [k, v] : table) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      FlattenToml(*sub, key, file, out);
      continue;
    }
    std::string value;
    if (auto s = v.value<std::string>()) {
      value = *s;
    } else if (const auto* b = v.as_boolean()) {
      value = b->get() ? "true" : "false";
    } else if (const auto* i = v.as_integer()) {
      value = std::to_string(i->get());
    } else if (const auto* d = v.as_floating_point()) {
      // The node's own type first: value<int64_t>() on a float such as 1e38 converts it out
      // of range, undefined behaviour (fuzz finding 10).
      value = fmt::format("{}", d->get());
    } else {
      std::ostringstream os;
      if (const toml::array* arr = v.as_array()) {
        os << *arr;
      } else {
        os << "(a TOML " << v.type() << ")";
      }
      value = os.str();
    }
    out.Set(key, value, fmt::format("{}:{}: {}", Base(file), v.source().begin.line, key));
  }
}

// "--tp (line 12)", "--tp (line 12; $TP from cluster.sh:3)", "--tp (cluster.sh:7)", "--tp
// (line 4)": where the flag was written (for a word split from a variable, where its text was
// written) and, when a sourced file set what its value expanded, that file's line.
std::string WordSource(const std::string& flag, const ShellWord& word, const ShellWord* value) {
  auto where = [](const ShellWord& w) {
    if (w.origin.empty()) return fmt::format("line {}", w.line);
    if (w.origin.starts_with("$")) return fmt::format("line {}; {}", w.line, w.origin);
    return w.origin;
  };
  std::string out = flag + " (" + where(word);
  // The flag and its value split from one variable share an origin: said once. A value
  // written elsewhere than its flag (--tp ${TP} in CONFIG.sh, TP=8 in the script) says where.
  if (value != nullptr && !value->origin.empty() && value->origin != word.origin) {
    out += value->origin.starts_with("$") ? "; " + value->origin : "; value from " + value->origin;
  }
  return out + ")";
}

}  // namespace

void ReadCommandArgs(const std::vector<ShellWord>& words, size_t start, Settings& out,
                     FlagValues values) {
  // A Hydra override (a.b.c=value), never a flag's value.
  auto hydra = [](const std::string& w) {
    const size_t eq = w.find('=');
    return eq != std::string::npos && eq > 0 && w.find('.') < eq;
  };
  // The script's own arguments passed on ("$@", $*): unknown here, never a flag's value.
  auto passed_on = [](const std::string& w) { return w == "$@" || w == "$*"; };
  for (size_t i = start; i < words.size(); ++i) {
    const std::string& w = words[i].text;
    if (w.starts_with("--") && w.size() > 2) {
      const size_t eq = w.find('=');
      if (eq != std::string::npos) {
        out.Set(w.substr(0, eq), w.substr(eq + 1), WordSource(w.substr(0, eq), words[i], nullptr));
        continue;
      }
      const bool has_value = i + 1 < words.size() && !words[i + 1].text.starts_with("--") &&
                             !passed_on(words[i + 1].text);
      if (has_value) {
        const size_t flag_at = i;
        std::string value = words[i + 1].text;
        const ShellWord& first = words[i + 1];
        ++i;
        // argparse's nargs='+' (`--target_modules q_proj v_proj`): the words up to the next flag.
        while (values == FlagValues::kList && i + 1 < words.size() &&
               !words[i + 1].text.starts_with("--") && !hydra(words[i + 1].text) &&
               !passed_on(words[i + 1].text)) {
          value += " " + words[++i].text;
        }
        out.Set(w, std::move(value), WordSource(w, words[flag_at], &first));
      } else {
        out.Set(w, "true", WordSource(w, words[i], nullptr));
      }
      continue;
    }
    // Hydra overrides: a.b.c=value (also +a.b=value).
    const size_t eq = w.find('=');
    if (hydra(w)) {
      std::string key = w.substr(0, eq);
      if (key.starts_with("+")) key = key.substr(1);
      out.Set(key, w.substr(eq + 1), WordSource(key, words[i], nullptr));
    }
  }
}

Result<Settings> ReadJsonSettings(std::string_view text, const std::string& file) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    return InvalidInput("malformed JSON: " + what).InFile(file);
  }
  if (!root.is_object()) {
    return InvalidInput("expected a JSON object at the top level").InFile(file);
  }
  Settings out;
  FlattenJson(root, "", file, out);
  return out;
}

Result<Settings> ReadYamlSettings(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidInput("malformed YAML: " + e.msg).InFile(file).AtLine(e.mark.line + 1);
  }
  if (!root.IsMap()) return InvalidInput("expected a YAML mapping at the top level").InFile(file);
  STRATA_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, file));
  Settings out;
  FlattenYaml(root, "", file, out);
  return out;
}

Result<Settings> ReadTomlSettings(std::string_view text, const std::string& file) {
  toml::table table;
  try {
    table = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return InvalidInput("malformed TOML: " + std::string(e.description()))
        .InFile(file)
        .AtLine(static_cast<int>(e.source().begin.line));
  }
  Settings out;
  FlattenToml(table, "", file, out);
  return out;
}

bool HasMegatronArgumentDump(std::string_view text) {
  return text.find("------------------------ arguments ------------------------") !=
         std::string_view::npos;
}

Result<Settings> ReadMegatronArgumentDump(std::string_view text, const std::string& file) {
  Settings out;
  const size_t start = text.find("------------------------ arguments ------------------------");
  if (start == std::string_view::npos) {
    return InvalidInput("no Megatron argument dump ('---- arguments ----') in the file")
        .InFile(file);
  }
  const size_t end = text.find("end of arguments", start);
  if (end == std::string_view::npos) {
    return InvalidInput("the Megatron argument dump is truncated: no 'end of arguments' line")
        .InFile(file);
  }
  int line = 1;
  for (size_t i = 0; i < start; ++i) line += text[i] == '\n' ? 1 : 0;
  size_t pos = text.find('\n', start);
  while (pos != std::string_view::npos && pos < end) {
    ++line;
    const size_t next = text.find('\n', pos + 1);
    std::string_view row =
        text.substr(pos + 1, (next == std::string_view::npos ? text.size() : next) - pos - 1);
    pos = next;
    // "  name ........... value" (some logs prefix each line, e.g. "> " or "[rank0]: ").
    const size_t dots = row.find(" ..");
    if (dots == std::string_view::npos) continue;
    size_t name_start = row.find_last_of(" >:]", dots - 1);
    name_start = name_start == std::string_view::npos ? 0 : name_start + 1;
    const std::string name(row.substr(name_start, dots - name_start));
    size_t value_start = row.find_first_not_of('.', dots + 1);
    if (value_start == std::string_view::npos) continue;
    value_start = row.find_first_not_of(' ', value_start);
    std::string value =
        value_start == std::string_view::npos ? "" : std::string(row.substr(value_start));
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
    if (name.empty() || value == "None") continue;
    out.Set(name, value, fmt::format("{}:{}: {}", Base(file), line, name));
  }
  if (out.size() == 0) {
    return InvalidInput("the Megatron argument dump has no 'name ..... value' lines").InFile(file);
  }
  // "> padded vocab (size: 50257) with 431 dummy tokens (new size: 50688)"
  const std::string_view padded_head = "padded vocab (size: ";
  if (size_t p = text.find(padded_head); p != std::string_view::npos) {
    const size_t ns = text.find("(new size: ", p);
    const size_t close = ns == std::string_view::npos ? ns : text.find(')', ns);
    if (close != std::string_view::npos) {
      int at = 1;
      for (size_t i = 0; i < p; ++i) at += text[i] == '\n' ? 1 : 0;
      out.Set("padded_vocab_size", std::string(text.substr(ns + 11, close - ns - 11)),
              fmt::format("{}:{}: padded vocab", Base(file), at));
    }
  }
  return out;
}

}  // namespace strata
