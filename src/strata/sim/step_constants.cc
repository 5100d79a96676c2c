#include "strata/sim/step_constants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"

namespace strata {
namespace {

Result<YamlMap> Section(YamlMap& top, const std::string& key, KernelEfficiencyFile& out) {
  return SourcedSection(top, key, out.sources);
}

Result<double> Fraction(YamlMap& map, const std::string& key) {
  return FractionAt(map, key, ZeroFraction::kRefused);
}

Result<double> Positive(YamlMap& map, const std::string& key) { return PositiveAt(map, key); }

// `per_gpu:` maps a GPU name to a value (gemm) or to a mapping (attention); `apply` stores it.
template <class Apply>
Status PerGpu(YamlMap& section, KernelEfficiencyFile& out, Apply apply) {
  if (!section.Has("per_gpu")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, section.Node("per_gpu"));
  STRATA_ASSIGN_OR_RETURN(YamlMap gpus,
                          YamlMap::Of(node, section.file(), section.FieldPath("per_gpu")));
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return section.ErrorAt("per_gpu", "a GPU name must be plain text");
    const std::string name = entry.first.as<std::string>();
    auto [it, inserted] = out.per_gpu.try_emplace(name, out.defaults);
    STRATA_RETURN_IF_ERROR(apply(gpus, name, it->second));
  }
  return gpus.CheckNoUnknownKeys();
}

// A section whose per-GPU values are one fraction each, stored in `field`.
Status PerGpuFraction(YamlMap& section, KernelEfficiencyFile& out,
                      double KernelEfficiency::*field) {
  return PerGpu(section, out,
                [field](YamlMap& gpus, const std::string& name, KernelEfficiency& e) -> Status {
                  STRATA_ASSIGN_OR_RETURN(e.*field, Fraction(gpus, name));
                  return OkStatus();
                });
}

}  // namespace

const KernelEfficiency& KernelEfficiencyFile::For(const std::string& gpu_name) const {
  auto it = per_gpu.find(gpu_name);
  return it == per_gpu.end() ? defaults : it->second;
}

double PowerLimitedClock(double sustained_clock, double power_w, double catalog_power_w,
                         double exponent) {
  if (!(power_w > 0) || !(catalog_power_w > 0)) return sustained_clock;
  return std::min(1.0, sustained_clock * std::pow(power_w / catalog_power_w, exponent));
}

Result<KernelEfficiencyFile> ParseKernelEfficiency(const std::string& text,
                                                   const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  KernelEfficiencyFile out;
  KernelEfficiency& d = out.defaults;
  // Scalars first, so the per-GPU copies start from complete defaults.
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "grouped_gemm", out));
    STRATA_ASSIGN_OR_RETURN(d.grouped_gemm_factor, Fraction(s, "factor"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "gated_deltanet", out));
    GdnKernels& g = d.gated_deltanet;
    for (auto [key, rate] : {std::pair<const char*, GdnKernelRate*>{"fla", &g.fla},
                             std::pair<const char*, GdnKernelRate*>{"flashqla", &g.flashqla}}) {
      STRATA_ASSIGN_OR_RETURN(YamlMap k, s.Map(key));
      STRATA_ASSIGN_OR_RETURN(rate->forward, Fraction(k, "forward"));
      STRATA_ASSIGN_OR_RETURN(rate->backward, Fraction(k, "backward"));
      STRATA_RETURN_IF_ERROR(k.CheckNoUnknownKeys());
    }
    STRATA_ASSIGN_OR_RETURN(YamlMap torch, s.Map("torch"));
    STRATA_ASSIGN_OR_RETURN(g.torch_forward_ops_per_chunk,
                            Positive(torch, "forward_ops_per_chunk"));
    STRATA_ASSIGN_OR_RETURN(g.torch_backward_ops_per_chunk,
                            Positive(torch, "backward_ops_per_chunk"));
    STRATA_ASSIGN_OR_RETURN(g.torch_solve_ops_per_row, Positive(torch, "solve_ops_per_row"));
    STRATA_ASSIGN_OR_RETURN(g.torch_solve_bytes_per_element,
                            Positive(torch, "solve_bytes_per_element"));
    STRATA_RETURN_IF_ERROR(torch.CheckNoUnknownKeys());
    STRATA_ASSIGN_OR_RETURN(g.other_linear_mixers, Fraction(s, "other_linear_mixers"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "memory_bound", out));
    STRATA_ASSIGN_OR_RETURN(d.hbm_efficiency, Fraction(s, "hbm_efficiency"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "moe_routing_skew", out));
    STRATA_ASSIGN_OR_RETURN(d.moe_routing_skew, Positive(s, "factor"));
    if (d.moe_routing_skew < 1) {
      return s.ErrorAt("factor", fmt::format("the busiest rank receives at least the mean: "
                                             "expected >= 1, got {}",
                                             d.moe_routing_skew));
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "power_limit", out));
    STRATA_ASSIGN_OR_RETURN(out.power_clock_exponent, Fraction(s, "clock_exponent"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "async_tp", out));
    STRATA_ASSIGN_OR_RETURN(d.async_tp_max_step_saving, Fraction(s, "max_step_saving"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  STRATA_ASSIGN_OR_RETURN(YamlMap sustained, Section(top, "sustained_clock", out));
  STRATA_ASSIGN_OR_RETURN(d.sustained_clock, Fraction(sustained, "default"));
  STRATA_ASSIGN_OR_RETURN(YamlMap fp8, Section(top, "fp8_gemm", out));
  STRATA_ASSIGN_OR_RETURN(d.fp8_gemm, Fraction(fp8, "default"));
  STRATA_ASSIGN_OR_RETURN(YamlMap gemm, Section(top, "gemm", out));
  STRATA_ASSIGN_OR_RETURN(d.gemm_large, Fraction(gemm, "default"));
  STRATA_ASSIGN_OR_RETURN(d.gemm_half_dim, Positive(gemm, "half_dim"));
  STRATA_ASSIGN_OR_RETURN(YamlMap attention, Section(top, "flash_attention", out));
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap a, attention.Map("default"));
    STRATA_ASSIGN_OR_RETURN(d.attention_forward, Fraction(a, "forward"));
    STRATA_ASSIGN_OR_RETURN(d.attention_backward, Fraction(a, "backward"));
    STRATA_RETURN_IF_ERROR(a.CheckNoUnknownKeys());
  }
  STRATA_ASSIGN_OR_RETURN(d.attention_half_seq, Positive(attention, "half_seq_tokens"));
  STRATA_RETURN_IF_ERROR(PerGpuFraction(gemm, out, &KernelEfficiency::gemm_large));
  STRATA_RETURN_IF_ERROR(PerGpu(
      attention, out, [](YamlMap& gpus, const std::string& name, KernelEfficiency& e) -> Status {
        STRATA_ASSIGN_OR_RETURN(YamlMap a, gpus.Map(name));
        STRATA_ASSIGN_OR_RETURN(e.attention_forward, Fraction(a, "forward"));
        STRATA_ASSIGN_OR_RETURN(e.attention_backward, Fraction(a, "backward"));
        return a.CheckNoUnknownKeys();
      }));
  STRATA_RETURN_IF_ERROR(PerGpuFraction(sustained, out, &KernelEfficiency::sustained_clock));
  STRATA_RETURN_IF_ERROR(sustained.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(PerGpuFraction(fp8, out, &KernelEfficiency::fp8_gemm));
  STRATA_RETURN_IF_ERROR(fp8.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(gemm.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(attention.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return out;
}

Result<KernelEfficiencyFile> LoadKernelEfficiency() {
  const std::string path = DataDir() + "/kernel_efficiency.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseKernelEfficiency(text, path);
}

}  // namespace strata
