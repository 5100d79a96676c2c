// What torchtitan prints before its first step (torchtitan/train.py and
// distributed/parallel_dims.py): the model it built, the GPU, the peak it divides by, the batch
// and the device mesh. With them a torchtitan log alone names its job, so throughput and MFU
// are recomputed with the right model instead of asking for --job.
//
//   Building llama3 8B with TransformerModelArgs(...)
//   CUDA capacity: NVIDIA H100 with 94.99GiB memory       (2024: "GPU capacity: ... (0) with")
//   Model llama3 8B size: 8,030,261,248 total parameters
//   Peak FLOPS used for computing MFU: 9.890e+14
//   Building 1-D device mesh with ['dp_shard'], [8]       (2026: "... with parallelism: tp=2, ...")
//   Trainer is initialized with local batch size 1, global batch size 8, gradient accumulation
//     steps 1, sequence length 8192, total steps 10 (warmup 200)
//   Training starts at step 1, with local batch size 1, global batch size 8, sequence length
//     8192, ...                                            (before 2025)
#ifndef STRATA_LOGS_TITAN_HEADER_H_
#define STRATA_LOGS_TITAN_HEADER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

struct TitanHeader {
  std::string model_name;    // "llama3"
  std::string model_flavor;  // "8B"
  int64_t model_line = 0;
  std::optional<int64_t> total_params;
  std::string device_name;  // "NVIDIA H100"
  double device_gib = 0;
  int64_t device_line = 0;
  std::optional<double> peak_flop_per_s;
  int64_t peak_line = 0;
  std::optional<int64_t> local_batch, global_batch, accumulation, seq_len;
  int64_t batch_line = 0;
  std::vector<std::pair<std::string, int64_t>> mesh;  // {"dp_shard", 8}, {"tp", 2}
  int64_t mesh_line = 0;

  bool Any() const { return model_line > 0 || device_line > 0 || batch_line > 0; }
};

/// Reads one log line (launcher prefix removed) into `header`; the first rank to print a
/// field keeps it. True when the line was one of the header's.
bool ParseTitanHeaderLine(std::string_view text, int64_t line, TitanHeader& header);

}  // namespace strata

#endif  // STRATA_LOGS_TITAN_HEADER_H_
