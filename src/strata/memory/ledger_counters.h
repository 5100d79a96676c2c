// The three memory counters (memory/allocator.h) of each phase of one stage's ledger. What the
// allocator sees: the tensors of the phase; the activations and working buffers that fragment;
// FSDP2's collective outputs cached in their own streams' pools (the all-gather outputs in
// flight, two neighbouring units, from the first forward on; the reduce-scatter's from the
// first backward on); the CUDA context and
// NCCL outside it. DeepSpeed ZeRO-3 gathers into the parameters' own storage on its all-gather
// stream, so what that pool caches is the gathered weights themselves, already counted: no
// extra cache. Formulas: docs/formulas.md, "Memory counters".
#ifndef STRATA_MEMORY_LEDGER_COUNTERS_H_
#define STRATA_MEMORY_LEDGER_COUNTERS_H_

#include "strata/memory/activations.h"
#include "strata/memory/allocator.h"
#include "strata/memory/sharding.h"
#include "strata/memory/static_memory.h"

namespace strata {

/// A forward under torch.no_grad at step 1's states (ActivationMemory::no_grad_layer): the
/// three heads verl's passes put on the model.
struct NoGradCounters {
  AllocatorCounters log_probs;     // the logits and the log-prob kernel (the reference's pass)
  AllocatorCounters with_entropy;  // and the entropy's copy of the logits (the old log-prob pass)
  AllocatorCounters values;        // no logits: a critic's value head (hidden -> 1)
};

struct PhaseCounters {
  AllocatorCounters init, forward, backward, step, steady;
  NoGradCounters no_grad;
  Bytes steady_dynamic;  // the activations and working buffers of the steady peak
  /// The phase of the device-used peak: the steady peak or the first optimizer step.
  const AllocatorCounters& peak() const {
    return step.device_used > steady.device_used ? step : steady;
  }
  Bytes peak_dynamic() const {
    return step.device_used > steady.device_used ? Bytes() : steady_dynamic;
  }
};

/// `nccl`: the NCCL buffers of the stage; `listed_weights`: the weights the ledger lists (with
/// the gathered weights and FP8 copies, which the mode's phases add themselves); `fsdp2`: the
/// job shards with FSDP2 (side-stream collective buffers).
PhaseCounters PredictPhaseCounters(const MemoryConstants& constants, AllocatorSetting alloc,
                                   const StaticMemory& st, const ModeMemory& mode,
                                   const ActivationMemory& act, Bytes nccl, Bytes listed_weights,
                                   bool fsdp2);

}  // namespace strata

#endif  // STRATA_MEMORY_LEDGER_COUNTERS_H_
