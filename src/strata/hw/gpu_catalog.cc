#include "strata/hw/gpu_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {
namespace {

// The values every entry must give, each with a matching key under `sources`.
const std::vector<std::string> kValueKeys = {
    "memory",     "hbm_bandwidth",     "bf16_dense",       "fp16_dense", "fp8_dense",
    "tf32_dense", "nvlink_generation", "nvlink_bandwidth", "tdp_watts"};

// "H100 SXM", "h100_sxm" and "h100-sxm" are one name.
std::string NormalizeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '_') c = '-';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Result<FlopPerSecond> ReadFlopRate(YamlMap& map, const std::string& key, bool none_allowed) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  if (none_allowed && text == "none") return FlopPerSecond::Of(0);
  auto rate = ParseFlopRate(text);
  if (!rate.ok()) {
    Error e = map.ErrorAt(key, rate.error().message);
    e.hint = none_allowed ? "write 'none' when the part lacks this precision" : rate.error().hint;
    return e;
  }
  return *rate;
}

Result<GpuSpec> ParseGpu(const YAML::Node& node, const std::string& file, const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Of(node, file, path));
  GpuSpec gpu;
  STRATA_ASSIGN_OR_RETURN(gpu.name, map.String("name"));
  if (gpu.name.empty()) return map.ErrorAt("name", "expected a non-empty GPU name");
  if (map.Has("aliases")) {
    STRATA_ASSIGN_OR_RETURN(YAML::Node aliases, map.Node("aliases"));
    if (!aliases.IsSequence()) return map.ErrorAt("aliases", "expected a list of names");
    for (const auto& a : aliases) {
      if (!a.IsScalar() || a.Scalar().empty())
        return map.ErrorAt("aliases", "expected each alias to be a non-empty name");
      gpu.aliases.push_back(a.Scalar());
    }
  }
  STRATA_ASSIGN_OR_RETURN(gpu.memory, map.Size("memory"));
  STRATA_ASSIGN_OR_RETURN(gpu.hbm_bandwidth, map.Bandwidth("hbm_bandwidth"));
  STRATA_ASSIGN_OR_RETURN(gpu.bf16_dense, ReadFlopRate(map, "bf16_dense", false));
  STRATA_ASSIGN_OR_RETURN(gpu.fp16_dense, ReadFlopRate(map, "fp16_dense", false));
  STRATA_ASSIGN_OR_RETURN(gpu.fp8_dense, ReadFlopRate(map, "fp8_dense", true));
  STRATA_ASSIGN_OR_RETURN(gpu.tf32_dense, ReadFlopRate(map, "tf32_dense", false));
  STRATA_ASSIGN_OR_RETURN(gpu.nvlink_generation, map.String("nvlink_generation"));
  STRATA_ASSIGN_OR_RETURN(std::string nvlink_text, map.String("nvlink_bandwidth"));
  if (nvlink_text != "none") {
    STRATA_ASSIGN_OR_RETURN(gpu.nvlink_bandwidth, map.Bandwidth("nvlink_bandwidth"));
  }
  if ((gpu.nvlink_generation == "none") != (nvlink_text == "none")) {
    return map.ErrorAt(
        "nvlink_bandwidth",
        "nvlink_generation and nvlink_bandwidth must both be 'none' or both be given");
  }
  // Optional: how the fabric joins a node's GPUs; sourced like every other value.
  const bool has_topology = map.Has("fabric_topology");
  if (has_topology) {
    STRATA_ASSIGN_OR_RETURN(std::string topology, map.String("fabric_topology"));
    const std::vector<std::pair<std::string, GpuFabricTopology>> kTopologies = {
        {"switch", GpuFabricTopology::kSwitch},
        {"mesh", GpuFabricTopology::kMesh},
        {"bridge", GpuFabricTopology::kBridge}};
    std::vector<std::string> names;
    bool found = false;
    for (const auto& [name, value] : kTopologies) {
      names.push_back(name);
      if (name == topology) {
        gpu.fabric_topology = value;
        found = true;
      }
    }
    if (!found) {
      Error e = map.ErrorAt("fabric_topology",
                            fmt::format("unknown fabric_topology '{}' (expected one of: {})",
                                        topology, fmt::join(names, ", ")));
      const std::string close = ClosestMatch(topology, names);
      if (!close.empty()) e.hint = fmt::format("did you mean '{}'?", close);
      return e;
    }
    if (nvlink_text == "none") {
      return map.ErrorAt("fabric_topology", "a part without a GPU fabric has no fabric_topology");
    }
  }
  STRATA_ASSIGN_OR_RETURN(gpu.tdp_watts, map.Number("tdp_watts"));
  if (!(gpu.tdp_watts > 0)) return map.ErrorAt("tdp_watts", "expected a positive power in watts");
  gpu.catalog_name = gpu.name;
  gpu.catalog_tdp_watts = gpu.tdp_watts;
  if (gpu.memory.value() <= 0) return map.ErrorAt("memory", "expected a positive memory size");
  if (gpu.hbm_bandwidth.value() <= 0)
    return map.ErrorAt("hbm_bandwidth", "expected a positive bandwidth");
  if (gpu.bf16_dense.value() <= 0) return map.ErrorAt("bf16_dense", "expected a positive rate");
  // Optional: a part whose host link is not PCIe (GB200's NVLink-C2C) leaves it out.
  const bool has_pcie = map.Has("pcie_generation");
  if (has_pcie) {
    STRATA_ASSIGN_OR_RETURN(gpu.pcie_generation, map.Int("pcie_generation"));
    if (gpu.pcie_generation < 3 || gpu.pcie_generation > 6) {
      return map.ErrorAt("pcie_generation", "expected a PCIe generation from 3 to 6");
    }
  }

  // Every value carries its source, and every source names a value.
  STRATA_ASSIGN_OR_RETURN(YamlMap sources, map.Map("sources"));
  std::vector<std::string> sourced = kValueKeys;
  if (has_pcie) sourced.emplace_back("pcie_generation");
  if (has_topology) sourced.emplace_back("fabric_topology");
  for (const auto& key : sourced) {
    if (!sources.Has(key)) {
      Error e = sources.ErrorAt("", fmt::format("'{}' has no source (datasheet name or URL)", key));
      e.field = sources.FieldPath(key);
      return e;
    }
    STRATA_ASSIGN_OR_RETURN(std::string source, sources.String(key));
    if (source.empty()) return sources.ErrorAt(key, "expected a non-empty source");
    gpu.sources[key] = source;
  }
  STRATA_RETURN_IF_ERROR(sources.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(map.CheckNoUnknownKeys());
  return gpu;
}

}  // namespace

Result<FlopPerSecond> ParseFlopRate(std::string_view text) {
  const std::string_view s = text;
  double number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || ptr == s.data() || !std::isfinite(number) || number < 0) {
    return InvalidInput(fmt::format("expected a FLOP rate with a unit, got '{}'", text))
        .WithHint("write e.g. 148TFLOP/s or 2.25PFLOP/s (dense, not with sparsity)");
  }
  std::string_view unit(ptr, static_cast<size_t>(s.data() + s.size() - ptr));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit == "GFLOP/s") return FlopPerSecond::Of(number * 1e9);
  if (unit == "TFLOP/s") return FlopPerSecond::Tera(number);
  if (unit == "PFLOP/s") return FlopPerSecond::Peta(number);
  return InvalidInput(fmt::format("unknown FLOP-rate unit '{}' in '{}' (expected one of: "
                                  "GFLOP/s, TFLOP/s, PFLOP/s)",
                                  unit, text))
      .WithHint("write e.g. 148TFLOP/s or 2.25PFLOP/s (dense, not with sparsity)");
}

Result<std::vector<GpuSpec>> ParseGpuCatalog(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("gpus"));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  if (!list.IsSequence() || list.size() == 0) {
    return top.ErrorAt("gpus", "expected a non-empty list of GPU entries");
  }
  std::vector<GpuSpec> catalog;
  std::map<std::string, std::string> owner;  // normalized name or alias -> GPU name
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(GpuSpec gpu, ParseGpu(list[i], file, fmt::format("gpus[{}]", i)));
    std::vector<std::string> names = gpu.aliases;
    names.push_back(gpu.name);
    for (const auto& n : names) {
      auto [it, inserted] = owner.emplace(NormalizeName(n), gpu.name);
      if (!inserted && it->second != gpu.name) {
        Error e = InvalidInput(fmt::format("name '{}' is already used by '{}'", n, it->second));
        e.file = file;
        e.field = fmt::format("gpus[{}]", i);
        e.line = list[i].Mark().line + 1;
        return e;
      }
    }
    catalog.push_back(std::move(gpu));
  }
  return catalog;
}

Result<std::vector<GpuSpec>> LoadGpuCatalog(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseGpuCatalog(text, path);
}

Result<GpuSpec> FindGpuIn(const std::vector<GpuSpec>& catalog, std::string_view name) {
  const std::string wanted = NormalizeName(name);
  std::vector<std::string> candidates;
  for (const auto& gpu : catalog) {
    if (NormalizeName(gpu.name) == wanted) return gpu;
    for (const auto& a : gpu.aliases) {
      if (NormalizeName(a) == wanted) return gpu;
    }
    candidates.push_back(gpu.name);
  }
  std::vector<std::string> all = candidates;
  for (const auto& gpu : catalog) all.insert(all.end(), gpu.aliases.begin(), gpu.aliases.end());
  std::string hint = DidYouMeanHint(name, all);
  if (hint.rfind("did you mean", 0) != 0) {
    hint = "known GPUs: " + fmt::format("{}", fmt::join(candidates, ", "));
  }
  return InvalidInput(fmt::format("unknown GPU '{}'", name)).WithHint(hint);
}

Result<GpuSpec> FindGpu(std::string_view name) {
  // The catalog was parsed on every lookup: yaml-cpp's parse of it was a tenth of `strata plan`
  // (several lookups per job) and most of the cluster parser's fuzzing time. The file is still
  // read every time (a few kilobytes), and parsed again only when its text changed, so an edited
  // catalog or another STRATA_DATA_DIR is never served stale.
  const std::string path = DataDir() + "/gpus.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  static std::mutex mutex;
  static std::string parsed_text;
  static std::vector<GpuSpec> parsed;
  const std::lock_guard<std::mutex> lock(mutex);
  if (parsed.empty() || text != parsed_text) {
    STRATA_ASSIGN_OR_RETURN(std::vector<GpuSpec> catalog, ParseGpuCatalog(text, path));
    parsed = std::move(catalog);
    parsed_text = std::move(text);
  }
  return FindGpuIn(parsed, name);
}

}  // namespace strata
