#include "strata/rl/rl_constants.h"

#include <fmt/format.h>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"

namespace strata {

Result<RlConstants> ParseRlConstants(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  RlConstants c;

  STRATA_ASSIGN_OR_RETURN(YamlMap vllm, top.Map("vllm_memory"));
  STRATA_ASSIGN_OR_RETURN(c.non_torch_tp1, vllm.Size("non_torch_tp1"));
  STRATA_ASSIGN_OR_RETURN(c.non_torch_tp, vllm.Size("non_torch_tp"));
  STRATA_ASSIGN_OR_RETURN(c.activation_peak, vllm.Size("activation_peak"));
  STRATA_ASSIGN_OR_RETURN(c.cuda_graph, vllm.Size("cuda_graph"));
  STRATA_ASSIGN_OR_RETURN(std::string from, vllm.String("cuda_graph_counted_from"));
  auto version = ParseEngineVersion(from);
  if (!version) {
    return vllm.ErrorAt("cuda_graph_counted_from",
                        fmt::format("expected a version such as 0.21, got '{}'", from));
  }
  c.cuda_graph_counted_from = *version;
  STRATA_ASSIGN_OR_RETURN(c.sources["vllm_memory"], vllm.String("source"));
  STRATA_ASSIGN_OR_RETURN(c.sources["cuda_graph"], vllm.String("cuda_graph_source"));
  STRATA_RETURN_IF_ERROR(vllm.CheckNoUnknownKeys());

  STRATA_ASSIGN_OR_RETURN(YamlMap decode, top.Map("decode"));
  STRATA_ASSIGN_OR_RETURN(double overhead_ms, decode.Number("step_overhead_ms"));
  if (overhead_ms < 0) {
    return decode.ErrorAt("step_overhead_ms",
                          fmt::format("expected a time >= 0 ms, got {}", overhead_ms));
  }
  c.decode_step_overhead = Seconds::Of(overhead_ms / 1000);
  STRATA_ASSIGN_OR_RETURN(c.sources["decode"], decode.String("source"));
  STRATA_ASSIGN_OR_RETURN(c.eager_factor, decode.Number("eager_factor"));
  if (c.eager_factor < 1) {
    return decode.ErrorAt("eager_factor",
                          fmt::format("expected a factor >= 1, got {}", c.eager_factor));
  }
  STRATA_ASSIGN_OR_RETURN(c.sources["decode_eager"], decode.String("eager_source"));
  STRATA_RETURN_IF_ERROR(decode.CheckNoUnknownKeys());

  STRATA_ASSIGN_OR_RETURN(YamlMap sync, top.Map("weight_sync"));
  STRATA_ASSIGN_OR_RETURN(c.sync_convert_bandwidth, sync.Bandwidth("convert_bandwidth"));
  if (c.sync_convert_bandwidth.value() <= 0) {
    return sync.ErrorAt("convert_bandwidth", "expected a positive bandwidth");
  }
  STRATA_ASSIGN_OR_RETURN(c.sources["weight_sync"], sync.String("source"));
  STRATA_RETURN_IF_ERROR(sync.CheckNoUnknownKeys());

  STRATA_ASSIGN_OR_RETURN(YamlMap host, top.Map("host_copy"));
  STRATA_ASSIGN_OR_RETURN(c.pageable_h2d, host.Bandwidth("pageable_h2d"));
  STRATA_ASSIGN_OR_RETURN(c.pageable_d2h, host.Bandwidth("pageable_d2h"));
  if (c.pageable_h2d.value() <= 0) {
    return host.ErrorAt("pageable_h2d", "expected a positive bandwidth");
  }
  if (c.pageable_d2h.value() <= 0) {
    return host.ErrorAt("pageable_d2h", "expected a positive bandwidth");
  }
  STRATA_ASSIGN_OR_RETURN(c.sources["host_copy"], host.String("source"));
  STRATA_RETURN_IF_ERROR(host.CheckNoUnknownKeys());
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return c;
}

Result<RlConstants> LoadRlConstants() {
  const std::string path = DataDir() + "/rl_constants.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRlConstants(text, "data/rl_constants.yaml");
}

}  // namespace strata
