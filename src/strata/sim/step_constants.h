// The kernel efficiencies of the step-time model (data/kernel_efficiency.yaml): what fraction of
// the GPU's dense peak each kind of kernel reaches, and of HBM bandwidth the memory-bound ones,
// each with the source the file gives. Resolved for one GPU, so the hot path reads plain numbers.
#ifndef STRATA_SIM_STEP_CONSTANTS_H_
#define STRATA_SIM_STEP_CONSTANTS_H_

#include <map>
#include <string>

#include "strata/core/result.h"

namespace strata {

/// The values for one GPU (per-GPU overrides applied).
struct KernelEfficiency {
  double gemm_large = 0;           // dense GEMM on large, well-shaped operands
  double gemm_half_dim = 0;        // a dimension d reaches d / (d + half_dim) of gemm_large
  double grouped_gemm_factor = 0;  // MoE grouped GEMM vs a dense GEMM of the same shape
  double attention_forward = 0;    // flash attention, long sequences
  double attention_backward = 0;
  double attention_half_seq = 0;        // tokens: S / (S + half) of the long-sequence value
  double gated_deltanet = 0;            // on the FLOP megatron-core counts for the GDN state
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
