// The memory ledger: per-GPU memory of one pipeline stage, item by item (weights by module
// kind, gradients, optimizer states, activations, framework overheads) and phase by phase
// (after initialisation, forward and backward peaks, the first optimizer step, steady state).
// Formulas: docs/formulas.md, "Memory".
#ifndef STRATA_MEMORY_LEDGER_H_
#define STRATA_MEMORY_LEDGER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/detail.h"
#include "strata/core/units.h"
#include "strata/job/job_validation.h"
#include "strata/memory/allocator.h"
#include "strata/memory/memory_constants.h"

namespace strata {

enum class ItemKind { kWeights, kGradients, kOptimizer, kActivations, kOverhead };
std::string_view ItemKindName(ItemKind kind);  // "weights", "gradients", ...

struct LedgerItem {
  ItemKind kind = ItemKind::kWeights;
  std::string name;  // "weights: routed_experts", "activations: logits"
  Bytes bytes;
  std::string formula;  // with the job's numbers substituted (--explain)
  std::string note;     // "replicated over TP", "allocated lazily at the first optimizer step"
};

enum class Phase { kAfterInit, kForwardPeak, kBackwardPeak, kFirstOptimizerStep, kSteadyPeak };
std::string_view PhaseName(Phase phase);         // "after_init", ...
std::string_view PhaseDescription(Phase phase);  // "after initialisation", ...

struct PhaseMemory {
  Phase phase = Phase::kAfterInit;
  Bytes bytes;                 // device used (nvidia-smi): counters.device_used
  std::string formula;         // which items add up to it
  AllocatorCounters counters;  // allocated, reserved, device used (memory/allocator.h)
};

/// The verdict from the device-used counter with its framework's error band: kFits when even
/// the top of the band fits the card,
/// kAtRisk when the prediction fits but the band reaches over the card, kOom when the
/// prediction itself does not fit.
enum class MemoryVerdict { kFits, kAtRisk, kOom };
std::string_view MemoryVerdictName(MemoryVerdict v);  // "fits", "at_risk", "oom"
/// "fits, within the model's error", "at risk", "OOM".
std::string_view MemoryVerdictText(MemoryVerdict v);

struct MemoryLedger {
  int64_t stage = 0;  // the pipeline stage this ledger is for (the most loaded one)
  std::string rank;   // "pipeline stage 0 of 1 (first and last)"
  int64_t params_per_gpu = 0;
  int64_t trainable_params_per_gpu = 0;
  std::vector<LedgerItem> items;
  std::vector<PhaseMemory> phases;
  /// What offload (DeepSpeed offload_optimizer/offload_param, FSDP2 CPUOffloadPolicy) keeps in
  /// host memory or on NVMe instead of the GPU; those items read 0 bytes in `items`.
  std::vector<LedgerItem> host_items;
  Bytes capacity;                // what the device-used counter can reach (UsableCapacity)
  Bytes datasheet_capacity;      // the GPU's memory as the catalog (or the job) gives it
  std::string capacity_formula;  // how `capacity` follows from the driver's figures
  Bytes peak_before_step1;       // the largest of after_init, forward and backward peak of step 1
  Bytes peak_after_step1;        // with the lazily allocated optimizer moments
  bool fits = true;
  Phase oom_phase = Phase::kAfterInit;  // the first phase over capacity, when !fits
  /// The trap of lazy optimizer states: step 1 fits, the moments allocated at its end do not.
  bool only_after_step1_exceeds = false;
  /// A forward-only pass under torch.no_grad at step 1's states (not one of `phases`: a
  /// training step runs none): weights, gradients and master weights as after init, the
  /// largest layer's live tensors of one micro batch or the head's, whichever is larger
  /// (ActivationMemory::no_grad_layer). `log_probs`: the head is the logits and the log-prob
  /// kernel's buffers; `with_entropy`: and the entropy's copy of the logits; `values`: no
  /// logits (a value head). Device-used bytes; `no_grad_formula` says the parts (--explain).
  struct NoGradForward {
    Bytes log_probs, with_entropy, values;
    Bytes layer, logits, entropy_copy;  // the activations' parts, one micro batch
  } no_grad;
  std::string no_grad_formula;
  /// The three counters at the peak (the phase of Peak()) and their formulas (--explain).
  AllocatorCounters peak_counters;
  std::string allocated_formula, reserved_formula, device_used_formula;
  /// Where the measured device-used peak would lie given the model's error on the validation
  /// rows of the job's framework family (memory/error_band.h).
  Bytes band_low;
  Bytes band_high;
  std::string band_family;  // the family whose band applies ("megatron", or "default")
  std::string job_family;   // the job's family (MemoryFamily), when it has no band of its own
  int64_t band_rows = 0;
  MemoryVerdict verdict = MemoryVerdict::kFits;

  Bytes Total(ItemKind kind) const;
  Bytes headroom() const { return capacity - Peak(); }
  Bytes Peak() const {
    return peak_after_step1 > peak_before_step1 ? peak_after_step1 : peak_before_step1;
  }
  const PhaseMemory& PhaseOf(Phase phase) const;
};

/// What the device-used counter can reach on the job's GPU (data/memory_overheads.yaml,
/// `device_capacity`): nvidia-smi's memory.total less the driver's own reservation (torch's
/// total_memory), when the catalog lists the card at the job's memory size; else the
/// datasheet's figure. `formula` says which, with the numbers.
Bytes UsableCapacity(const Job& job, const MemoryConstants& constants, std::string* formula);

/// The NCCL communicators of more than one rank a rank of the job uses in a step: the parallel
/// groups, and under megatron-core its expert token-count group and its gradient-norm group
/// (ledger.cc, ForEachCommunicator). Each holds `nccl_per_communicator` of buffers.
int64_t CommunicatorCount(const Job& job, const MemoryConstants& constants);

/// The ledger of one pipeline stage.
MemoryLedger ComputeStageLedger(const Job& job, const MemoryConstants& constants, int64_t stage);

/// The ledger of the most loaded stage (the largest peak over all pipeline stages).
MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants);

/// The same ledger, and in `floor` the largest after-initialisation or first-optimizer-step
/// phase over all stages. Neither phase holds activations (weights, gradients, optimizer states,
/// mode buffers, CUDA context, NCCL), so no micro batch or recompute choice changes the floor,
/// and every ledger of the same parallel layout peaks at or above it: the planner rules out a
/// layout's other micro batches and recompute choices when it is over the card.
MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants, Bytes& floor);

}  // namespace strata

#endif  // STRATA_MEMORY_LEDGER_H_
