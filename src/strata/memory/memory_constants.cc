#include "strata/memory/memory_constants.h"

#include <fmt/format.h>

#include <utility>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"

namespace strata {
namespace {

Result<YamlMap> Section(YamlMap& top, const std::string& key, MemoryConstants& out) {
  return SourcedSection(top, key, out.sources);
}

Result<double> Fraction(YamlMap& map, const std::string& key) {
  return FractionAt(map, key, ZeroFraction::kAllowed);
}

}  // namespace

Result<MemoryConstants> ParseMemoryConstants(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  MemoryConstants c;
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "cuda_context", c));
    STRATA_ASSIGN_OR_RETURN(c.cuda_context, s.Size("bytes"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "nccl_per_communicator", c));
    STRATA_ASSIGN_OR_RETURN(c.nccl_per_communicator, s.Size("bytes"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "allocator_fragmentation", c));
    STRATA_ASSIGN_OR_RETURN(c.fragmentation_fixed_shapes, Fraction(s, "fixed_shapes"));
    STRATA_ASSIGN_OR_RETURN(c.fragmentation_variable_shapes, Fraction(s, "variable_shapes"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "backward_gradient_fraction", c));
    STRATA_ASSIGN_OR_RETURN(c.backward_gradient_fraction, Fraction(s, "value"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "hf_eager_layer", c));
    STRATA_ASSIGN_OR_RETURN(YAML::Node engines, s.Node("engines"));
    if (!engines.IsSequence()) return s.ErrorAt("engines", "expected a list of frameworks");
    for (const auto& e : engines) {
      if (!e.IsScalar()) return s.ErrorAt("engines", "expected a list of frameworks");
      c.hf_eager_engines.push_back(e.Scalar());
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "torchtitan_eager_layer", c));
    STRATA_ASSIGN_OR_RETURN(YAML::Node engines, s.Node("engines"));
    if (!engines.IsSequence()) return s.ErrorAt("engines", "expected a list of frameworks");
    for (const auto& e : engines) {
      if (!e.IsScalar()) return s.ErrorAt("engines", "expected a list of frameworks");
      c.titan_eager_engines.push_back(e.Scalar());
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "gated_deltanet", c));
    STRATA_ASSIGN_OR_RETURN(c.gdn_chunk_tokens, s.PositiveInt("chunk_tokens"));
    STRATA_ASSIGN_OR_RETURN(c.gdn_state_bytes_per_element,
                            s.PositiveInt("state_bytes_per_element"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "moe_dispatch", c));
    STRATA_ASSIGN_OR_RETURN(c.moe_dispatch_transient_copies, s.Int("transient_copies"));
    if (c.moe_dispatch_transient_copies < 0) {
      return s.ErrorAt("transient_copies", "expected a count of 0 or more");
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "te_fp8_activations", c));
    TeFp8ActivationConstants& te = c.te_fp8;
    STRATA_ASSIGN_OR_RETURN(YAML::Node engines, s.Node("engines"));
    if (!engines.IsSequence()) return s.ErrorAt("engines", "expected a list of frameworks");
    for (const auto& e : engines) {
      if (!e.IsScalar()) return s.ErrorAt("engines", "expected a list of frameworks");
      te.engines.push_back(e.Scalar());
    }
    STRATA_ASSIGN_OR_RETURN(te.fp8_bytes_per_element, PositiveAt(s, "fp8_bytes_per_element"));
    STRATA_ASSIGN_OR_RETURN(YamlMap scales, s.Map("scale_bytes_per_element"));
    for (const char* recipe : {"delayed", "tensorwise", "blockwise", "mxfp8"}) {
      STRATA_ASSIGN_OR_RETURN(double bytes, scales.Number(recipe));
      if (bytes < 0 || bytes >= 1) {
        return scales.ErrorAt(recipe, "expected bytes per element from 0 to below 1");
      }
      te.scale_bytes_per_element[recipe] = bytes;
    }
    STRATA_RETURN_IF_ERROR(scales.CheckNoUnknownKeys());
    STRATA_ASSIGN_OR_RETURN(te.save_original_input_from, s.String("save_original_input_from"));
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "caching_allocator", c));
    AllocatorRules& a = c.allocator;
    for (auto [key, target] : {std::pair{"min_block", &a.min_block},
                               {"small_size", &a.small_size},
                               {"small_segment", &a.small_segment},
                               {"large_segment", &a.large_segment},
                               {"min_large_alloc", &a.min_large_alloc},
                               {"round_large", &a.round_large}}) {
      STRATA_ASSIGN_OR_RETURN(*target, s.Size(key));
      if (target->value() <= 0) return s.ErrorAt(key, "expected a size above 0");
    }
    if (!(a.small_size < a.small_segment && a.small_size < a.min_large_alloc)) {
      return s.ErrorAt("small_size", "expected small_size below small_segment and min_large_alloc");
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "cross_entropy", c));
    CrossEntropyConstants& ce = c.cross_entropy;
    for (auto [key, target] : {std::pair{"megatron", &ce.megatron},
                               {"torch_eager", &ce.torch_eager},
                               {"torch_compiled", &ce.torch_compiled},
                               {"torch_loss_parallel", &ce.torch_loss_parallel}}) {
      STRATA_ASSIGN_OR_RETURN(YamlMap k, s.Map(key));
      STRATA_ASSIGN_OR_RETURN(target->forward, PositiveAt(k, "forward"));
      STRATA_ASSIGN_OR_RETURN(target->backward, PositiveAt(k, "backward"));
      STRATA_RETURN_IF_ERROR(k.CheckNoUnknownKeys());
    }
    for (auto [key, target] : {std::pair{"torch_engines", &ce.torch_engines},
                               {"loss_parallel_engines", &ce.loss_parallel_engines},
                               {"fused_logprob_frameworks", &ce.fused_logprob_frameworks}}) {
      STRATA_ASSIGN_OR_RETURN(YAML::Node engines, s.Node(key));
      if (!engines.IsSequence()) return s.ErrorAt(key, "expected a list of frameworks");
      for (const auto& e : engines) {
        if (!e.IsScalar()) return s.ErrorAt(key, "expected a list of frameworks");
        target->push_back(e.Scalar());
      }
    }
    STRATA_ASSIGN_OR_RETURN(YAML::Node from, s.Node("compiled_from"));
    if (!from.IsMap()) return s.ErrorAt("compiled_from", "expected {framework: release, ...}");
    for (const auto& kv : from) ce.compiled_from[kv.first.Scalar()] = kv.second.Scalar();
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "device_capacity", c));
    DeviceCapacityConstants& d = c.device_capacity;
    STRATA_ASSIGN_OR_RETURN(d.driver_reserved, s.Size("driver_reserved"));
    STRATA_ASSIGN_OR_RETURN(YAML::Node cards, s.Node("cards"));
    STRATA_ASSIGN_OR_RETURN(YamlMap by_name, s.Map("cards"));
    for (const auto& kv : cards) {
      const std::string name = kv.first.Scalar();
      STRATA_ASSIGN_OR_RETURN(YamlMap card, by_name.Map(name));
      DriverMemory m;
      STRATA_ASSIGN_OR_RETURN(m.datasheet, card.Size("datasheet"));
      STRATA_ASSIGN_OR_RETURN(m.memory_total, card.Size("memory_total"));
      if (!(m.memory_total > d.driver_reserved)) {
        return card.ErrorAt("memory_total", "expected more than driver_reserved");
      }
      STRATA_RETURN_IF_ERROR(card.CheckNoUnknownKeys());
      d.cards[name] = m;
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "model_error", c));
    for (const char* family : {"megatron", "fsdp2", "deepspeed", "hf_trainer", "default"}) {
      STRATA_ASSIGN_OR_RETURN(YamlMap f, s.Map(family));
      MemoryErrorBand band;
      band.family = family;
      STRATA_ASSIGN_OR_RETURN(YAML::Node rows, f.Node("rows"));
      if (!rows.IsSequence()) return f.ErrorAt("rows", "expected a list of row names");
      for (const auto& row : rows) {
        if (!row.IsScalar()) return f.ErrorAt("rows", "expected a list of row names");
        band.rows.push_back(row.Scalar());
      }
      if (!band.rows.empty() || f.Has("lowest") || f.Has("highest")) {
        STRATA_ASSIGN_OR_RETURN(band.lowest, f.Number("lowest"));
        STRATA_ASSIGN_OR_RETURN(band.highest, f.Number("highest"));
        if (!(band.lowest > -1) || band.highest < band.lowest || band.highest > 10) {
          return f.ErrorAt("highest", fmt::format("expected -1 < lowest <= highest, got {} and {}",
                                                  band.lowest, band.highest));
        }
      }
      STRATA_RETURN_IF_ERROR(f.CheckNoUnknownKeys());
      c.error_bands[family] = band;
    }
    if (c.error_bands.at("default").rows.empty()) {
      return s.ErrorAt("default",
                       "the default band needs rows: it stands for every family "
                       "without rows of its own");
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return c;
}

Result<MemoryConstants> LoadMemoryConstants() {
  const std::string path = DataDir() + "/memory_overheads.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(MemoryConstants c, ParseMemoryConstants(text, path));
  STRATA_ASSIGN_OR_RETURN(c.engines, LoadFrameworkEngines());
  return c;
}

}  // namespace strata
