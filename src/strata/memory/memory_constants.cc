#include "strata/memory/memory_constants.h"

#include <fmt/format.h>

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
    STRATA_ASSIGN_OR_RETURN(YamlMap s, Section(top, "model_error", c));
    STRATA_ASSIGN_OR_RETURN(c.model_error_lowest, s.Number("lowest"));
    STRATA_ASSIGN_OR_RETURN(c.model_error_highest, s.Number("highest"));
    if (!(c.model_error_lowest > -1) || c.model_error_highest < c.model_error_lowest ||
        c.model_error_highest > 10) {
      return s.ErrorAt("highest", fmt::format("expected -1 < lowest <= highest, got {} and {}",
                                              c.model_error_lowest, c.model_error_highest));
    }
    STRATA_RETURN_IF_ERROR(s.CheckNoUnknownKeys());
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return c;
}

Result<MemoryConstants> LoadMemoryConstants() {
  const std::string path = DataDir() + "/memory_overheads.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseMemoryConstants(text, path);
}

}  // namespace strata
