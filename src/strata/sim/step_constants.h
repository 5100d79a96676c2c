// The kernel efficiencies of the step-time model (data/kernel_efficiency.yaml): what fraction of
// the GPU's dense peak each kind of kernel reaches, and of HBM bandwidth the memory-bound ones,
// each with the source the file gives. Resolved for one GPU, so the hot path reads plain numbers.
#ifndef STRATA_SIM_STEP_CONSTANTS_H_
#define STRATA_SIM_STEP_CONSTANTS_H_

#include <map>
#include <string>

#include "strata/core/result.h"

namespace strata {

/// One Gated DeltaNet kernel's rates: fractions of the dense bf16 peak on the FLOP the model
/// counts for the delta rule (4 d_k d_v per value head per token), the backward on twice it.
struct GdnKernelRate {
  double forward = 0;
  double backward = 0;
};

/// Gated DeltaNet's chunked delta rule by implementation (framework.gdn_kernel). fla and
/// FlashQLA are rates; transformers' PyTorch fallback (torch_chunk_gated_delta_rule, what HF code
/// runs without flash-linear-attention) is host-bound: it issues a few small kernels per chunk
/// of the sequence, one chunk after another, and solves each chunk's triangular system row by
/// row over all chunks at once in fp32.
struct GdnKernels {
  GdnKernelRate fla;
  GdnKernelRate flashqla;
  double torch_forward_ops_per_chunk = 0;    // kernels the host issues per chunk, forward
  double torch_backward_ops_per_chunk = 0;   // and backward (autograd of the same loop)
  double torch_solve_ops_per_row = 0;        // kernels per row of the triangular solve
  double torch_solve_bytes_per_element = 0;  // HBM bytes per element of a row's i x i block
  double other_linear_mixers = 0;  // Mamba and lightning attention state kernels (one rate)
};

/// The values for one GPU (per-GPU overrides applied).
struct KernelEfficiency {
  double gemm_large = 0;           // dense GEMM on large, well-shaped operands
  double gemm_half_dim = 0;        // a dimension d reaches d / (d + half_dim) of gemm_large
  double grouped_gemm_factor = 0;  // MoE grouped GEMM vs a dense GEMM of the same shape
  double attention_forward = 0;    // flash attention, long sequences
  double attention_backward = 0;
  double attention_half_seq = 0;        // tokens: S / (S + half) of the long-sequence value
  GdnKernels gated_deltanet;            // linear-attention state kernels
  double hbm_efficiency = 0;            // memory-bound kernels: achieved / HBM bandwidth
  double moe_routing_skew = 1;          // busiest expert rank's tokens / the mean
  double async_tp_max_step_saving = 0;  // the most of a step async TP hides (overlap.tp_comm)
  // Tensor-core kernels under a training step's sustained load run at the power-capped clock,
  // not the boost clock the kernel benchmarks above caught: sustained / burst matmul rate.
  double sustained_clock = 1;
  // FP8 GEMMs: the fraction of the FP8 peak they sustain, relative to what bf16 GEMMs sustain of
  // the bf16 peak (the FP8 tensor cores draw more power per second at the power cap).
  double fp8_gemm = 1;
};

struct KernelEfficiencyFile {
  KernelEfficiency defaults;
  std::map<std::string, KernelEfficiency> per_gpu;  // canonical GPU name -> values
  std::map<std::string, std::string> sources;       // section -> source text
  /// A part at another power limit than its catalog entry's: clock ~ power^exponent.
  double power_clock_exponent = 0;

  /// The values for `gpu_name` (its overrides, else the defaults).
  const KernelEfficiency& For(const std::string& gpu_name) const;
};

/// The sustained clock factor of a part run at `power_w` whose calibration was measured at
/// `catalog_power_w`: sustained x (power_w / catalog_power_w)^exponent, at most 1 (the burst
/// clock). Unchanged when either power is unknown (0).
double PowerLimitedClock(double sustained_clock, double power_w, double catalog_power_w,
                         double exponent);

/// Parses the YAML text; `file` names it in errors.
Result<KernelEfficiencyFile> ParseKernelEfficiency(const std::string& text,
                                                   const std::string& file);

/// Reads data/kernel_efficiency.yaml (via DataDir()).
Result<KernelEfficiencyFile> LoadKernelEfficiency();

}  // namespace strata

#endif  // STRATA_SIM_STEP_CONSTANTS_H_
