// The step-time side of the training modes (job/training_modes.h): what ZeRO-2/3, FSDP2, HSDP,
// CPU offload and FP8 add to a step beyond megatron-core's distributed optimizer in bf16.
//
//   ZeRO-3 / FSDP2  each layer's parameters are all-gathered before its forward and again before
//                   its backward (unless reshard_after_forward is off), and its gradients are
//                   reduce-scattered right after its backward, every micro batch; the gathers
//                   run one layer ahead (prefetch), so per pass what stays exposed is one
//                   layer's communication plus, on every other layer, what exceeds that layer's
//                   compute:  exposed = x + (L - 1) max(0, x - y).
//   ZeRO-2          gradients are sharded, so they are reduce-scattered every micro batch
//                   (bucketed, behind the backward as above); updated weights all-gathered once
//                   per step as with ZeRO-1.
//   HSDP            the same over the shard group (DP / replicate ranks) plus an all-reduce of
//                   the gradient shard over the replicate group once per step.
//   offload         optimizer: gradients down to the CPU and updated weights back up over PCIe
//                   once per step; params: each gather first copies the layer's shard up, and its
//                   gradient shard goes down, every micro batch. PCIe at the cluster map's x16
//                   per-direction rate.
//   FP8             the linear layers' GEMMs (dense and expert) at the GPU's FP8 peak times the
//                   same GEMM efficiency; plus the casts (Fp8CastBytesPerMicroBatch).
// Formulas with numbers substituted: docs/formulas.md, "ZeRO-2/3, FSDP2, HSDP, offload and FP8";
// tests: tests/sim/step_modes_test.cc.
#ifndef STRATA_SIM_STEP_MODES_H_
#define STRATA_SIM_STEP_MODES_H_

#include <string>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/traffic_pricing.h"
#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/job/placement.h"
#include "strata/job/training_modes.h"
#include "strata/sim/step_tables.h"

namespace strata {

struct StepLayout;

/// Traffic that is not a collective: host <-> GPU copies of offloaded state.
struct HostTraffic {
  std::string purpose;  // "gradients to the CPU (offload_optimizer)"
  std::string level;    // the bandwidth-map level it runs on: "PCIe Gen5 x16"
  Bytes size_per_step;  // one rank
  Seconds time_per_step;
};

/// True when the data-parallel traffic is not megatron-core's (DDP all-reduce or ZeRO-1's
/// reduce-scatter + all-gather once per step): ZeRO-2/3, FSDP2 or HSDP.
bool ShardingOwnsDpTraffic(const StepLayout& s);

/// The data-parallel items of a ZeRO-2/3, FSDP2 or HSDP layout, priced on the groups' shapes
/// (HSDP: the shard and replicate sub-groups of the DP group). Calls are per step.
Result<std::vector<PricedTraffic>> PriceShardedTraffic(
    const ModelTrafficShape& model, const StepLayout& s, const std::vector<GroupPlacement>& groups,
    const CollectiveModel& comm, Detail detail = Detail::kExplained, PricingCache* cache = nullptr);

/// What of the sharded traffic stays exposed, by step part, given one micro batch's forward
/// and backward (with recompute) compute on the rank.
struct ShardedExposure {
  double dp_grad = 0, dp_param = 0, edp_grad = 0, edp_param = 0;  // exposed, s per step
};
/// Whose switch hides a ZeRO-2/3 layout's per-layer collectives. DeepSpeed's overlap_comm
/// (sharding.overlap_comm, default true under zero3 only): off, every gather and reduce-scatter
/// runs on the compute stream (ShardedOnComputeStream). megatron-core's own sharding
/// (Megatron-FSDP) overlaps the gradient reduce-scatters with the backward only under
/// --overlap-grad-reduce (overlap.grad_reduce); DeepSpeed's switch does not apply there.
bool ShardedOnComputeStream(const StepLayout& s);
bool ShardedGradsOverlapBackward(const StepLayout& s);
/// The same in words, for --explain ("" outside ZeRO-2/3).
std::string ShardedOverlapRule(const StepLayout& s);

ShardedExposure ExposeShardedTraffic(const std::vector<PricedTraffic>& sharded, const StepLayout& s,
                                     double layers_per_stage, Seconds forward_mb,
                                     Seconds backward_mb);

/// exposed = x + (L - 1) max(0, x - y): L layers, x one layer's communication, y its compute,
/// the next layer's communication running behind this layer's compute.
double LayerPipelinedExposure(double layers, double comm_per_layer, double compute_per_layer);

/// The same when only a fraction f = min(1, prefetch_layers) of the next layer's weight gather
/// g may start early (a prefetch buffer smaller than a layer); r, the layer's other traffic
/// (reduce-scatters), still runs behind compute y:
///   exposed = (g + r) + (L - 1) [(1 - f) g + max(0, f g + r - y)]
/// f = 1 is LayerPipelinedExposure(L, g + r, y); f = 0 leaves every gather on the critical path.
/// Split by cause: the first layer's g and r, the gathers' (1 - f) g, and the overlapped
/// remainder in proportion f g : r.
struct PassExposure {
  double gather = 0;  // s, weight all-gathers on the critical path
  double other = 0;   // s, reduce-scatters on the critical path
};
PassExposure PartlyPrefetchedExposure(double layers, double gather_per_layer,
                                      double other_per_layer, double compute_per_layer,
                                      double prefetch_layers);

/// The offload copies over PCIe of one step on one rank. `local_params` is the rank's shard of
/// the parameters the optimizer updates. Fails for NVMe offload (not modelled).
Result<std::vector<HostTraffic>> OffloadTraffic(const ModelTrafficShape& model, const StepLayout& s,
                                                double local_params, const CollectiveModel& comm);

/// FP8 cast and transpose bytes of one micro batch on the rank, memory-bound:
///   forward: every FP8 GEMM input element read in bf16, written in FP8 and as its FP8
///            transpose (2 + 1 + 1 = 4 B), again for the recomputed forward;
///   backward: every output-gradient element likewise (4 B);
///   weights: TE recipes cast (and transpose) each local weight once per step, 4 B per
///            parameter (amortised over the micro batches); torchao casts them every micro
///            batch, 4 B per parameter per micro batch.
/// `tokens` is the rank's tokens of the micro batch; `tp` and `stage` split them as the GEMMs
/// are split.
double Fp8CastBytesPerMicroBatch(const StepTables& t, const StepLayout& s, double tokens,
                                 double stage, double recompute_fraction);

}  // namespace strata

#endif  // STRATA_SIM_STEP_MODES_H_
