#include "strata/memory/ledger_counters.h"

#include <algorithm>

namespace strata {

PhaseCounters PredictPhaseCounters(const MemoryConstants& constants, AllocatorSetting alloc,
                                   const StaticMemory& st, const ModeMemory& mode,
                                   const ActivationMemory& act, Bytes nccl, Bytes listed_weights,
                                   bool fsdp2) {
  const Bytes outside = constants.cuda_context + nccl;
  const Bytes weights = listed_weights - mode.gathered.bytes - mode.fp8_copies.bytes;
  // FP8 copies exist from the first forward on; gathered weights and reduce-scatter buffers
  // only while layers run; DeepSpeed ZeRO-3's reduce bucket from the engine's start.
  const Bytes init = weights + st.gradients.bytes + st.master_weights.bytes + mode.kept_from_init();
  const Bytes kept = init + mode.persistent();
  const Bytes forward = kept + act.forward_dynamic() + mode.forward_working();
  const Bytes backward = kept + act.backward_dynamic() + mode.backward_working();
  const AllocatorRules& rules = constants.allocator;
  // FSDP2's all-gather outputs in flight (not the gathered weights: those live in the compute
  // stream once copied out, ModeMemory::all_gather_in_flight).
  const Bytes gather_cache =
      fsdp2 ? SideStreamCache(rules, mode.all_gather_in_flight, Bytes(), alloc.expandable_segments)
            : Bytes();
  const Bytes full_cache =
      fsdp2 ? SideStreamCache(rules, mode.all_gather_in_flight, mode.reduce_scatter.bytes,
                              alloc.expandable_segments)
            : Bytes();
  auto counters = [&](Bytes tensors, Bytes dynamic, Bytes side) {
    return PredictCounters(constants, {tensors, dynamic, side, outside}, alloc);
  };
  PhaseCounters c;
  c.init = counters(init, Bytes(), Bytes());
  c.forward = counters(forward, act.forward_dynamic(), gather_cache);
  c.backward = counters(backward, act.backward_dynamic(), full_cache);
  c.step = counters(kept + st.moments.bytes + st.step_transient.bytes, Bytes(), full_cache);
  // From step 2 on the moments are there and both collectives' caches are.
  const AllocatorCounters fwd2 =
      counters(forward + st.moments.bytes, act.forward_dynamic(), full_cache);
  const AllocatorCounters bwd2 =
      counters(backward + st.moments.bytes, act.backward_dynamic(), full_cache);
  // No autograd: the weights' working state of a forward, then the layer running or the head,
  // whichever is larger; the same allocator rules as the training forward.
  auto no_grad = [&](Bytes head) {
    const Bytes dynamic = std::max(act.no_grad_layer, head);
    return counters(kept + mode.forward_working() + dynamic, dynamic, gather_cache);
  };
  c.no_grad.log_probs = no_grad(act.no_grad_logits);
  c.no_grad.with_entropy = no_grad(act.no_grad_logits + act.entropy_copy);
  c.no_grad.values = no_grad(Bytes());
  const bool forward_higher = fwd2.device_used > bwd2.device_used;
  c.steady = forward_higher ? fwd2 : bwd2;
  c.steady_dynamic = forward_higher ? act.forward_dynamic() : act.backward_dynamic();
  return c;
}

}  // namespace strata
