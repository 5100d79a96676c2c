#include "strata/importer/model_match.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/strings.h"

namespace strata {

namespace {

std::vector<std::string> CatalogNames() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(DataDir()) / "models", ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A published name whose architecture a catalog config already describes, so that no second
// copy of the file is kept.
struct CatalogAlias {
  const char* name;
  const char* model;
};

// Qwen/Qwen3.5-35B-A3B's config.json (as vendored in ai-dynamo/aiconfigurator@0b077da5e017cb8ceac
// 1ad14e91eb6e26c40207a:aic-core/src/aiconfigurator_core/model_configs/
// Qwen--Qwen3.5-35B-A3B_config.json) sets every architecture field of qwen3.6-35b-a3b.json to the
// same value; the Qwen3.6 file only repeats tie_word_embeddings inside text_config.
constexpr CatalogAlias kAliases[] = {
    {"qwen3.5-35b-a3b", "qwen3.6-35b-a3b"},
};

const CatalogAlias* FindAlias(const std::string& base) {
  for (const auto& alias : kAliases) {
    if (base == alias.name) return &alias;
  }
  return nullptr;
}

std::string DroppedSuffixes(const std::vector<std::string>& dropped) {
  std::string text;
  if (!dropped.empty()) {
    text += " after dropping";
    for (size_t i = 0; i < dropped.size(); ++i) text += (i ? ", " : " ") + dropped[i];
  }
  return text;
}

}  // namespace

Result<ModelMatch> MatchModel(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(name, ec) && fs::path(name).extension() == ".json") {
    return ModelMatch{name, "a config.json path"};
  }
  if (fs::is_directory(name, ec) && fs::exists(fs::path(name) / "config.json", ec)) {
    return ModelMatch{(fs::path(name) / "config.json").string(), "the checkpoint's config.json"};
  }
  const std::vector<std::string> names = CatalogNames();
  std::string base = name;
  while (!base.empty() && base.back() == '/') base.pop_back();
  base = AsciiLower(fs::path(base).filename().string());
  static const char* kSuffixes[] = {"-mcore",    "-megatron", "-hf",  "-instruct",
                                    "-base",     "-chat",     "-it",  "-fp8",
                                    "-thinking", "-2507",     "-0905"};
  std::vector<std::string> dropped;
  for (bool changed = true; changed;) {
    if (std::find(names.begin(), names.end(), base) != names.end()) {
      return ModelMatch{base, "catalog name" + DroppedSuffixes(dropped)};
    }
    if (const CatalogAlias* alias = FindAlias(base)) {
      return ModelMatch{alias->model, std::string("alias: ") + alias->name + " has the " +
                                          alias->model + " architecture" +
                                          DroppedSuffixes(dropped)};
    }
    changed = false;
    for (const char* suffix : kSuffixes) {
      const std::string s = suffix;
      if (base.size() > s.size() && base.ends_with(s)) {
        base.resize(base.size() - s.size());
        dropped.push_back(s);
        changed = true;
        break;
      }
    }
    if (!changed && base.starts_with("meta-")) {
      base = base.substr(5);
      dropped.push_back("meta-");
      changed = true;
    }
  }
  return InvalidInput("no model in the catalog matches '" + name + "'")
      .WithHint("pass --model with a catalog name or a config.json path; " +
                DidYouMeanHint(base, names));
}

}  // namespace strata
