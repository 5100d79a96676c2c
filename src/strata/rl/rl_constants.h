// The constants of `strata rl` (data/rl_constants.yaml), each with the source the file gives:
// vLLM's memory besides weights and KV cache, from which version CUDA graphs count inside
// gpu_memory_utilization, the engine's time per decode step and its factor in eager mode (no
// CUDA graphs), and the weight-sync conversion rate. Generation's long tail is no constant: it
// is simulated from the response-length distribution (rollout.h, SimulateDecode).
#ifndef STRATA_RL_RL_CONSTANTS_H_
#define STRATA_RL_RL_CONSTANTS_H_

#include <map>
#include <string>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/rl/rl_job.h"

namespace strata {

struct RlConstants {
  Bytes non_torch_tp1;
  Bytes non_torch_tp;  // TP > 1
  Bytes activation_peak;
  Bytes cuda_graph;
  EngineVersion cuda_graph_counted_from;  // vLLM counts CUDA graphs inside its budget from here
  Seconds decode_step_overhead;           // the engine's time per decode step beyond the roofline
  double eager_factor = 1;                // a decode step's time without CUDA graphs over with them
  BytesPerSecond sync_convert_bandwidth;
  // Host copies through pageable (not pinned) memory: verl's FSDP2 parameter offload.
  BytesPerSecond pageable_h2d;
  BytesPerSecond pageable_d2h;
  std::map<std::string, std::string> sources;  // section -> source text

  Bytes NonTorch(int64_t tp) const { return tp > 1 ? non_torch_tp : non_torch_tp1; }
};

Result<RlConstants> ParseRlConstants(const std::string& text, const std::string& file);

/// Reads data/rl_constants.yaml (via DataDir()).
Result<RlConstants> LoadRlConstants();

}  // namespace strata

#endif  // STRATA_RL_RL_CONSTANTS_H_
