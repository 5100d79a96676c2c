#include "strata/hw/interconnects.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {
namespace {

// Levels a collective runs on must say how efficient they are; storage and HBM need not.
const std::vector<std::string> kCommLevels = {"nvswitch",   "nvswitch_nvls", "nvlink_mesh", "pcie",
                                              "infiniband", "roce",          "ethernet"};

Result<LinkCalibration> ParseLevel(YamlMap& levels, const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(YamlMap map, levels.Map(name));
  LinkCalibration cal;
  STRATA_ASSIGN_OR_RETURN(std::string latency_text, map.String("latency"));
  auto latency = ParseSeconds(latency_text);
  if (!latency.ok()) return map.ErrorAt("latency", latency.error().message);
  cal.latency = *latency;
  const bool needs_fraction =
      std::find(kCommLevels.begin(), kCommLevels.end(), name) != kCommLevels.end();
  if (needs_fraction || map.Has("busbw_fraction")) {
    STRATA_ASSIGN_OR_RETURN(double fraction, map.Number("busbw_fraction"));
    // NVLS busbw exceeds the line rate (it counts ring-equivalent traffic), hence up to 2.
    if (!(fraction > 0 && fraction <= 2)) {
      return map.ErrorAt("busbw_fraction",
                         fmt::format("expected a fraction in (0, 2], got {}", fraction));
    }
    cal.busbw_fraction = fraction;
  }
  STRATA_ASSIGN_OR_RETURN(YamlMap sources, map.Map("sources"));
  std::vector<std::string> needed = {"latency"};
  if (cal.busbw_fraction) needed.push_back("busbw_fraction");
  for (const auto& key : needed) {
    if (!sources.Has(key)) {
      Error e = sources.ErrorAt("", fmt::format("'{}' has no source", key));
      e.field = sources.FieldPath(key);
      return e;
    }
    STRATA_ASSIGN_OR_RETURN(cal.sources[key], sources.String(key));
  }
  STRATA_RETURN_IF_ERROR(sources.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(map.CheckNoUnknownKeys());
  return cal;
}

Result<Seconds> LatencyAt(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto t = ParseSeconds(text);
  if (!t.ok()) return map.ErrorAt(key, t.error().message);
  return *t;
}

Result<std::pair<Seconds, Seconds>> RingTree(YamlMap& parent, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YamlMap m, parent.Map(key));
  STRATA_ASSIGN_OR_RETURN(Seconds ring, LatencyAt(m, "ring"));
  STRATA_ASSIGN_OR_RETURN(Seconds tree, LatencyAt(m, "tree"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return std::pair{ring, tree};
}

Result<std::vector<NcclProtocol>> ParseProtocols(YamlMap& top) {
  STRATA_ASSIGN_OR_RETURN(YamlMap table, top.Map("nccl_protocols"));
  std::vector<NcclProtocol> out;
  for (const NcclProto id : kNcclProtos) {
    STRATA_ASSIGN_OR_RETURN(YamlMap p, table.Map(std::string(NcclProtoName(id))));
    NcclProtocol proto;
    proto.proto = id;
    STRATA_ASSIGN_OR_RETURN(auto base, RingTree(p, "base"));
    proto.base_ring = base.first;
    proto.base_tree = base.second;
    STRATA_ASSIGN_OR_RETURN(YamlMap hop, p.Map("hop"));
    for (const char* kind : {"nvlink", "pci", "net"}) {
      STRATA_ASSIGN_OR_RETURN(proto.hop[kind], RingTree(hop, kind));
      // Simple's ring hop is the scale every other protocol's hop is divided by.
      if (out.empty() && !(proto.hop[kind].first.s() > 0)) {
        STRATA_ASSIGN_OR_RETURN(YamlMap m, hop.Map(kind));
        return m.ErrorAt("ring",
                         "the Simple ring hop scales the other protocols' hops: it must "
                         "be above 0");
      }
    }
    STRATA_RETURN_IF_ERROR(hop.CheckNoUnknownKeys());
    STRATA_ASSIGN_OR_RETURN(YamlMap bw, p.Map("bandwidth"));
    STRATA_ASSIGN_OR_RETURN(proto.bandwidth_ring, bw.Number("ring"));
    STRATA_ASSIGN_OR_RETURN(proto.bandwidth_tree, bw.Number("tree"));
    for (const char* key : {"ring", "tree"}) {
      STRATA_ASSIGN_OR_RETURN(double f, bw.Number(key));
      if (!(f > 0 && f <= 1))
        return bw.ErrorAt(key, fmt::format("expected a fraction in (0, 1], got {}", f));
    }
    STRATA_RETURN_IF_ERROR(bw.CheckNoUnknownKeys());
    STRATA_RETURN_IF_ERROR(p.CheckNoUnknownKeys());
    out.push_back(std::move(proto));
  }
  STRATA_ASSIGN_OR_RETURN(std::string source, table.String("source"));
  STRATA_RETURN_IF_ERROR(table.CheckNoUnknownKeys());
  return out;
}

}  // namespace

std::string_view NcclProtoName(NcclProto proto, ProtoSpelling spelling) {
  const bool key = spelling == ProtoSpelling::kKey;
  switch (proto) {
    case NcclProto::kSimple:
      return key ? "simple" : "Simple";
    case NcclProto::kLl128:
      return key ? "ll128" : "LL128";
    case NcclProto::kLl:
      return key ? "ll" : "LL";
  }
  return "unknown";
}

std::string HopKindOf(const std::string& level) {
  if (level == "nvswitch" || level == "nvswitch_nvls" || level == "nvlink_mesh") return "nvlink";
  if (level == "pcie") return "pci";
  if (level == "infiniband" || level == "roce" || level == "ethernet") return "net";
  return "";
}

const std::vector<std::string>& RequiredLevelNames() {
  static const std::vector<std::string> kNames = {
      "hbm",  "nvswitch", "nvswitch_nvls", "nvlink_mesh", "pcie",      "infiniband",
      "roce", "ethernet", "nfs",           "lustre",      "local_nvme"};
  return kNames;
}

const LinkCalibration& Interconnects::Level(const std::string& name) const {
  auto it = levels.find(name);
  STRATA_CHECK(it != levels.end());
  return it->second;
}

bool Interconnects::SupportsNvls(const std::string& nvlink_generation) const {
  return std::find(nvls_nvlink_generations.begin(), nvls_nvlink_generations.end(),
                   nvlink_generation) != nvls_nvlink_generations.end();
}

Result<Interconnects> ParseInterconnects(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  Interconnects out;
  STRATA_ASSIGN_OR_RETURN(std::string base, top.String("nccl_base_latency"));
  auto base_latency = ParseSeconds(base);
  if (!base_latency.ok()) return top.ErrorAt("nccl_base_latency", base_latency.error().message);
  out.nccl_base_latency = *base_latency;
  STRATA_ASSIGN_OR_RETURN(std::string base_source, top.String("nccl_base_latency_source"));
  STRATA_ASSIGN_OR_RETURN(YAML::Node nvls, top.Node("nvls_nvlink_generations"));
  if (!nvls.IsSequence()) return top.ErrorAt("nvls_nvlink_generations", "expected a list");
  for (const auto& g : nvls) {
    if (!g.IsScalar()) return top.ErrorAt("nvls_nvlink_generations", "expected a list of names");
    out.nvls_nvlink_generations.push_back(g.Scalar());
  }
  STRATA_ASSIGN_OR_RETURN(std::string nvls_source, top.String("nvls_source"));

  STRATA_ASSIGN_OR_RETURN(YamlMap levels, top.Map("levels"));
  for (const auto& name : RequiredLevelNames()) {
    STRATA_ASSIGN_OR_RETURN(out.levels[name], ParseLevel(levels, name));
  }
  STRATA_RETURN_IF_ERROR(levels.CheckNoUnknownKeys());
  STRATA_ASSIGN_OR_RETURN(out.protocols, ParseProtocols(top));

  STRATA_ASSIGN_OR_RETURN(YAML::Node pcie, top.Node("pcie_x16"));
  if (!pcie.IsSequence()) return top.ErrorAt("pcie_x16", "expected a list");
  for (size_t i = 0; i < pcie.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap entry,
                            YamlMap::Of(pcie[i], file, fmt::format("pcie_x16[{}]", i)));
    STRATA_ASSIGN_OR_RETURN(int64_t generation, entry.PositiveInt("generation"));
    STRATA_ASSIGN_OR_RETURN(BytesPerSecond bandwidth, entry.Bandwidth("bandwidth"));
    STRATA_ASSIGN_OR_RETURN(std::string source, entry.String("source"));
    STRATA_RETURN_IF_ERROR(entry.CheckNoUnknownKeys());
    out.pcie_x16_per_direction[generation] = bandwidth;
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return out;
}

Result<Interconnects> LoadInterconnects() {
  const std::string path = DataDir() + "/interconnects.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseInterconnects(text, path);
}

}  // namespace strata
