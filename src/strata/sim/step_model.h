// The step-time model: for one parallel layout, how long a training step takes and where the
// time goes (compute by kind of kernel, recompute, each group's communication and how much of
// it is hidden behind compute, the pipeline bubble, variable-length stragglers, MoE routing
// skew, the optimizer). Per-model work lives in StepTables (step_tables.h); this is the
// per-layout arithmetic the planner calls millions of times, so it formats no text.
// Formulas with the reference job substituted: docs/formulas.md, "Step time".
#ifndef STRATA_SIM_STEP_MODEL_H_
#define STRATA_SIM_STEP_MODEL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/traffic_pricing.h"
#include "strata/core/detail.h"
#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/job/engine_chain.h"
#include "strata/job/job_spec.h"
#include "strata/job/parallel_layout.h"
#include "strata/job/placement.h"
#include "strata/job/training_modes.h"
#include "strata/model/param_count.h"
#include "strata/sim/finalize_grads.h"
#include "strata/sim/stage_composition.h"
#include "strata/sim/step_modes.h"
#include "strata/sim/step_tables.h"

namespace strata {

/// What varies from layout to layout (the planner's search space) and the job's options.
struct StepLayout {
  ParallelLayout layout;
  int64_t micro_batch = 1;    // samples per micro batch
  int64_t micro_batches = 1;  // per DP rank per step (gradient accumulation)
  RecomputeGranularity recompute = RecomputeGranularity::kNone;
  double recompute_layer_fraction = 1;  // full recompute, block method: the layers it covers
  /// Selective recompute (megatron-core --recompute-modules): the modules whose forward re-runs.
  RecomputeModules recompute_modules;
  /// Module kinds without gradients (`frozen:`): their GEMMs need no weight gradient.
  std::array<bool, kModuleKindCount> frozen{};
  /// The busiest EP rank's routed tokens over the mean (moe.routing_imbalance); 0: the kernel
  /// efficiency file's default. EP 1 has no busiest rank: every rank holds every expert.
  double moe_routing_skew = 0;
  /// torchtitan's op-level SAC (selective_ac_option "op"): re-runs the unsaved matmuls, every
  /// routed expert and the memory-bound ops, not attention (StepTables' op_sac_* shares).
  bool op_sac = false;
  /// megatron-core --cpu-offloading: layers whose saved activations go to the host, and their
  /// saved bytes per token on the rank (all of them together); copied down in forward and up
  /// in backward, behind the next layer's compute.
  int64_t offload_activation_layers = 0;
  double offload_activation_bytes_per_token = 0;
  OverlapSpec overlap;
  /// The engine under the layout's sharding mode trains through megatron-core's schedules (its
  /// training arguments' defaults apply: PpP2pOverlapped).
  bool megatron_core = true;
  /// Whose code runs the sharding under the layout's mode (ResolvedJob::RuntimeOf, the resolved
  /// job's one answer): DeepSpeed's per-parameter hooks refetch in a zero3 recompute, and only
  /// DeepSpeed has overlap_comm; PyTorch's FSDP1/FSDP2 always issue their collectives on their
  /// own streams. Unstated for a layout built in code.
  ShardingRuntime runtime = ShardingRuntime::kUnstated;
  bool deepspeed() const { return runtime == ShardingRuntime::kDeepSpeed; }
  bool distributed_optimizer = true;
  int64_t activation_bytes = 2;  // bf16 activations; 4 for an fp32 job (TP/CP/EP traffic)
  int64_t param_bytes = 2;
  int64_t grad_bytes = 4;
  int64_t master_bytes = 4;  // fp32 master weights
  int64_t moment_bytes = 4;  // each Adam moment
  /// optimizer.name muon: one momentum on the hidden matrices (AdamW's two moments on the
  /// rest) and the Newton-Schulz iterations (StepTables::muon_ns_*).
  bool muon = false;
  ShardingSpec sharding;  // ZeRO-2/3, FSDP2, HSDP, offload (step_modes.h); zero1 by default
  Fp8Spec fp8;            // FP8 GEMMs and their casts (step_modes.h)
};

/// The rows of the breakdown, in the order they are printed.
enum class StepPart {
  kForward,
  kBackward,
  kRecompute,
  kMoeImbalance,
  kTp,
  kCp,
  kEp,
  kPp,
  kBubble,
  kStraggler,
  kTpGrad,  // finalize_model_grads: replicated layers over TP, the shared embedding, once a step
  kDpGrad,
  kDpParam,
  kExpertDpGrad,
  kExpertDpParam,
  kOptimizer,
  kOffload,  // host <-> GPU copies of offloaded state (step_modes.h)
  kFp8Cast,  // FP8 casts and transposes, memory-bound
  // What the framework adds beyond the kernels (framework_overhead.h), per micro batch x m.
  kFrameworkHostBound,
  kFrameworkFetchHooks,
  kFrameworkExpertLoop,
  kFrameworkAttention,
  kFrameworkEagerOps,      // the eager module code's extra element-wise traffic
  kFrameworkFsdp2CopyOut,  // FSDP2's copy of each gathered unit into its parameters (FSDP2 only)
};
inline constexpr size_t kStepPartCount = 24;
std::string_view StepPartName(StepPart part);  // "forward compute", "EP all-to-all", ...

struct StepPartTime {
  Seconds total;    // per step, before any overlap
  Seconds exposed;  // on the critical path; total - exposed is hidden behind compute
};

/// One micro batch's compute on the most loaded rank, by kind of kernel.
struct KernelTimes {
  Seconds dense_gemm;       // mixer projections, dense MLP, shared experts, router
  Seconds expert_gemm;      // routed experts at the mean load (the skew is its own row)
  Seconds attention;        // flash attention (core attention)
  Seconds gated_deltanet;   // the chunked linear-attention kernel
  Seconds memory_bound;     // norms, activations, rotary, residuals, router softmax, permutation
  Seconds logits_and_loss;  // the output layer GEMM and cross entropy (last stage)
  Seconds vision;           // the vision tower's GEMMs over the micro batch's image patches
  Seconds total() const {
    return dense_gemm + expert_gemm + attention + gated_deltanet + memory_bound + logits_and_loss +
           vision;
  }
};

/// LoRA/QLoRA terms inside the kernel times, for --explain: the adapters' forward A/B GEMMs
/// (within forward.dense_gemm and expert_gemm; backward runs them twice) and QLoRA's
/// dequantisation of the base weights (within the memory_bound of every pass), whole stack,
/// before the critical stage's cut.
struct AdapterTimes {
  double dense_flop = 0;        // forward FLOP on the rank, after the TP split
  double dense_efficiency = 0;  // GemmEfficiency(tokens, r, h)
  Seconds dense;
  double expert_flop = 0;        // the routed experts' adapters, on the rank
  double expert_efficiency = 0;  // GemmEfficiency(expert rows, r, h) x the grouped factor
  Seconds expert;
  double dequant_bytes = 0;  // one pass, on the rank (after the TP split)
  Seconds dequant;           // one pass
};

/// The pipeline stage whose layers set the pace: its share of the decoder layers and whether it
/// holds the output layer and the loss (the last stage, the first under a V schedule).
/// A model with one layer kind cuts the whole stack's times to the stage's share of the
/// layers; a model with several (first_k_dense, hybrids) prices the stage's own layers
/// (`own`: StageTables), and its composition says which.
struct StageShare {
  double layers = 1;  // the stage's decoder layers / all decoder layers
  bool last = true;
  bool own = false;  // the kernel times and GEMM terms are the stage's own layers' (no share)
  StageComposition composition;  // the rank's layers by kind, embedding, MTP, output layer
};

/// One GEMM group's forward on the most loaded rank as the model priced it, every layer of the
/// stack (before the stage's share), or the critical stage's own layers (StageShare::own). Recorded
/// for --explain, which prints these terms instead of redoing the arithmetic beside the model.
struct GemmTerm {
  GemmKind kind = GemmKind::kDense;
  double flop_per_token = 0;   // the group's, whole model, before any split
  double width = 0;            // the weight's output width before TP / ETP (GemmGroup::n)
  double rows = 0;             // tokens the rank multiplies (router with SP: tokens / TP)
  double split = 1;            // the FLOP's divisor over the TP ranks (1: the router)
  double flop = 0;             // flop_per_token x rows / split
  double m = 0, n = 0, k = 0;  // the shape the efficiency is read at
  double efficiency = 0;       // GemmEfficiency(m, n, k), x the grouped-GEMM factor (experts)
  FlopPerSecond peak;          // the rate it runs at: bf16, or FP8 x fp8_gemm
  bool fp8 = false;
  Seconds time;  // flop / (peak x efficiency)
};

struct StepResult {
  std::array<StepPartTime, kStepPartCount> parts{};
  KernelTimes forward;  // one micro batch
  KernelTimes backward;
  KernelTimes recompute;
  FrameworkOverhead framework;  // one micro batch's framework costs (framework_overhead.h)
  AdapterTimes adapter;         // within the kernel times above (zero without an adapter)
  Seconds micro_batch;  // one micro batch's compute, framework costs and exposed communication
  Seconds step;         // the sum of the exposed parts
  /// The weight-gradient GEMMs within `backward` (one micro batch): what zero-bubble schedules
  /// move into the bubble.
  Seconds weight_gradient;
  double bubble_fraction = 0;  // the schedule's bubble over m micro batches (pipeline_bubble.h)
  /// The micro batch the bubble counts: the critical stage's, or, where the ranks' micro batches
  /// differ (stages priced by their own layers), the mean of the other ranks'
  /// (OtherRanksMicroBatch): the pipeline fills and drains through each other rank once.
  Seconds bubble_micro_batch;
  /// The output layer and loss of one micro batch (forward and backward), on the output rank
  /// whichever stage is critical.
  Seconds output_layer;
  /// Stages priced apart: the rank whose data-parallel gradient sync ends the step (the first
  /// rank, whose last backward ends last, unless another's own sync outlasts its lead) and the
  /// lead its last backward has on the first rank's (0 for rank 0).
  int64_t grad_sync_rank = 0;
  Seconds grad_sync_lead;
  double tokens_per_step = 0;
  double tokens_per_s_per_gpu = 0;
  /// The FLOP the job needs per token, megatron-core's convention: the full training FLOP
  /// less the weight gradients of frozen GEMMs (an adapter or `frozen:` trains none of them),
  /// plus the adapters' forward, data and weight gradients. Equal to the convention's count
  /// when everything trains.
  double model_flop_per_token = 0;
  double mfu = 0;      // model_flop_per_token's rate over the bf16 dense peak
  double mfu_fp8 = 0;  // the same over the FP8 dense peak, with an FP8 recipe (0 without)
  /// Set when the MFU is above the best published run on this GPU at this precision
  /// (data/mfu_ceiling.yaml): "no published run reaches this", the ceiling and its source.
  std::string mfu_flag;
  double hfu = 0;  // with the recomputed forward counted
  /// Parameters the optimizer updates on one rank: on the pipeline rank (`optimizer_rank`,
  /// holding `optimizer_stage`) whose replicated-gradient all-reduces and optimizer together
  /// end the step (finalize_grads.h), with what it all-reduces (in `traffic` too).
  double local_params = 0;
  int64_t optimizer_rank = 0;
  StageComposition optimizer_stage;
  FinalizeGradParams finalize_grads;
  std::vector<PricedTraffic> finalize_traffic;
  Seconds muon_newton_schulz;  // within the optimizer step (optimizer.name muon)
  double muon_flop = 0;        // its FLOP: the optimizer rank's share of its stage's matrices
  std::vector<PricedTraffic> traffic;     // the layout's communication on the bandwidth map
  std::vector<HostTraffic> host_traffic;  // offload copies over PCIe
  /// What the model leaves out for this layout, said where the number is shown.
  std::vector<std::string> caveats;
  /// The terms of the compute (Detail::kExplained only; the planner's search leaves them empty).
  double rank_tokens = 0;     // tokens of one micro batch on one rank: micro batch x E[S] / CP
  StageShare critical_stage;  // the kernel times above are this stage's
  std::vector<GemmTerm> gemms;
  /// The stages priced by their own layers (a model with several layer kinds), each with its
  /// micro batch (compute, framework costs, exposed communication): why the critical one is.
  struct StageTime {
    StageComposition stage;
    Seconds micro_batch;
  };
  std::vector<StageTime> stage_times;

  const StepPartTime& operator[](StepPart p) const { return parts[static_cast<size_t>(p)]; }
  StepPartTime& operator[](StepPart p) { return parts[static_cast<size_t>(p)]; }
};

/// The traffic inputs of one layout: the one builder every view uses (step, plan, compare and
/// the map's layout section), so each prices the same bytes. With a `stage` that prices its
/// own layers (StageShare::own), the per-layer collectives count that stage's layers; without
/// one, the critical stage ComputeMicroBatch picks.
TrafficInputs StepTrafficInputs(const StepTables& tables, const StepLayout& layout,
                                const StageShare* stage = nullptr);

/// Evaluates one layout. Fails when the layout does not fit the cluster the collective model
/// describes (placement or pricing errors).
/// FLOP per token that a job with frozen modules or adapters needs beyond (negative: short of)
/// the full-training count: minus the weight gradients of frozen GEMMs, plus the adapters'
/// forward, data and weight gradients. Independent of the sequence length. 0 when all trains.
double TrainedFlopAdjustmentPerToken(const StepTables& tables,
                                     const std::array<bool, kModuleKindCount>& frozen);

/// The ceiling check on a predicted MFU (of the bf16 dense peak): "no published run reaches
/// this ..." with the best published MFU on the tables' GPU at this GEMM precision and its
/// source (data/mfu_ceiling.yaml), or "" when the MFU is at or below it or none is listed.
/// `step` (StepResult::mfu_flag) and `plan` (every ranked layout) both call it.
std::string MfuCeilingFlag(const StepTables& tables, bool fp8, double mfu);

Result<StepResult> EvaluateStep(const StepTables& tables, const StepLayout& layout,
                                const CollectiveModel& comm);

/// The same evaluation on groups already placed for `layout.layout` (AlignedGroupShapes or
/// PlaceGroups with the default rank order): the planner places each layout once and reuses the
/// groups for every micro batch, recompute and VPP choice. EvaluateStep = placement + this.
/// kNumbersOnly (the planner's search): every number is the same; the traffic's purposes and
/// level names and the caveats are left empty, and a `cache` (one per thread) answers the
/// collective costs it has already priced.
Result<StepResult> EvaluateStepOn(const StepTables& tables, const StepLayout& layout,
                                  const CollectiveModel& comm,
                                  const std::vector<GroupPlacement>& groups,
                                  Detail detail = Detail::kExplained,
                                  PricingCache* cache = nullptr);

/// One micro batch's compute on the most loaded rank, before any communication: the kernel
/// times EvaluateStep reports and the MoE skew row's per-micro-batch time.
struct MicroBatchCompute {
  KernelTimes forward;
  KernelTimes backward;
  KernelTimes recompute;
  Seconds skew;             // the routed experts' GEMMs of the three passes x (routing skew - 1)
  Seconds weight_gradient;  // the weight-gradient GEMMs within `backward`
  // The sliding-window layers' part of the three passes' attention: it grows with S (a fixed
  // window per query), not with S^2 as the full-span layers' part does (the stragglers' fit).
  Seconds windowed_attention;
  StageShare critical;  // the stage the kernel times above were cut to
  /// Stages priced by their own layers (PricesStages): the least compute of a micro batch among
  /// them, what StepComputeBound counts the bubble in. 0 otherwise.
  Seconds least_stage_compute;
  AdapterTimes adapter;  // the adapters' share of the kernel times (before the cut)
  /// The output layer and loss, forward and backward, whichever stage is critical: the output
  /// rank's share of a one-kind pipeline's timeline (OneKindRankMicroBatches).
  Seconds output_layer;
};

/// A model with one layer kind at PP > 1 (no stage priced by its own tables): each pipeline
/// rank's micro batch, from `critical_s`, that of the stage CriticalStageOf picked (`c`). What
/// grows with the layers (`critical_s` less the output layer and loss and the vision tower)
/// is scaled to the rank's own layer count (StageLayerCounts), the output layer and loss added
/// on the output rank, the vision tower on the first; the critical rank keeps `critical_s`.
/// Empty at PP 1.
std::vector<double> OneKindRankMicroBatches(const ParallelLayout& layout, int64_t layers,
                                            const MicroBatchCompute& c, double critical_s);
/// `gemms`, when given, receives each GEMM group's forward term (GemmTerm). A model with one
/// layer kind: the stage CriticalStageOf picks. Several kinds: the stage (of the distinct
/// compositions, StageCandidates) whose own layers' compute is the longest; EvaluateStep then
/// picks among the same candidates by the whole micro batch (compute, framework costs and
/// exposed communication).
MicroBatchCompute ComputeMicroBatch(const StepTables& tables, const StepLayout& layout,
                                    std::vector<GemmTerm>* gemms = nullptr);

/// The compute of one stage of a model with several layer kinds: its own tables (StageTables),
/// with nothing cut afterwards (StageShare::own).
MicroBatchCompute ComputeStageMicroBatch(const StepTables& stage_tables, const StepLayout& layout,
                                         const StageComposition& stage, int64_t model_layers,
                                         std::vector<GemmTerm>* gemms = nullptr);

/// Whether the step prices its stages by their own layers (StageTables): a model with several
/// layer kinds at PP > 1, or one that builds MTP blocks (the whole model's tables leave them out).
bool PricesStages(const StepTables& tables, const ParallelLayout& l);

/// A stage's own parameters over the model's mean per stage (non-expert, routed experts): its
/// layers by kind, the embedding and vision tower on the first stage, the output layer, final
/// norm (and a tied head's copy at PP > 1) on the output stage, and its MTP blocks. {1, 1}
/// without StepTables::stage_params.
std::pair<double, double> StageParamWeights(const StepTables& tables, const ParallelLayout& l,
                                            const StageComposition& stage);

/// The ranks whose compositions differ (the first rank of each), the output stage first: the
/// stages that may set the pace. Empty where PricesStages is false (CriticalStageOf).
std::vector<StageComposition> StageCandidates(const StepTables& tables, const ParallelLayout& l);

/// The routing skew the step uses for this layout: 1 at EP 1, else the job's or the default.
double RoutingSkew(const KernelEfficiency& e, const StepLayout& layout);

/// The pipeline stage that sets the pace of every schedule (StageShare, above). Even stages:
/// that stage, with layers / PP. Uneven (first/last counts, accounted, a layout string,
/// torchtitan's split): the output stage unless a fuller stage's layers take longer than the
/// output stage's layers plus the output layer. `whole` holds the kernel times of every layer
/// (stage share 1).
StageShare CriticalStageOf(const ParallelLayout& layout, int64_t layers,
                           const MicroBatchCompute& whole);

/// A lower bound on EvaluateStep(...).step, from compute alone: m micro batches of compute plus
/// the bubble's share ((p - 1) / (m v)) of the least compute of a stage (of the only one with
/// one layer kind). Every other row of the step
/// (communication, stragglers, DP sync, optimizer, offload, FP8 casts) is >= 0, so the step is
/// never below it (up to rounding: callers keep a relative margin). No allocation, no placement.
Seconds StepComputeBound(const StepTables& tables, const StepLayout& layout);

/// The efficiency of a dense GEMM of m x k by k x n on this GPU (gemm_large x sustained_clock x
/// f(m) f(n) f(k), f(d) = d / (d + half_dim)). Exposed for tests and --explain.
double GemmEfficiency(const KernelEfficiency& e, double m, double n, double k);

/// Flash attention's efficiency at `tokens` attended (forward or backward), at the sustained
/// clock.
double AttentionEfficiency(const KernelEfficiency& e, double tokens, bool backward);

/// Core attention run unfused (attention.kernel unfused), per micro batch on one rank, for
/// `rank_tokens` query tokens of that rank (tokens / TP: its heads' share). The full S x S
/// product (the causal mask is applied after, so twice the causal FLOP) as two batched GEMMs
/// (S x d)(d x S) and (S x S)(S x d_v) at the GEMM shape rule, plus the element-wise passes over
/// the 2-byte scores in HBM: forward softmax 4 B per score (+ dropout 5 B: read, write, 1-byte
/// mask), backward softmax 6 B (+ dropout 5 B). Formulas: docs/formulas.md, "Unfused attention".
struct UnfusedAttentionTimes {
  Seconds forward;                  // both GEMMs and the forward passes
  Seconds backward;                 // twice the GEMM FLOP and the backward passes
  double scores = 0;                // score elements on the rank
  double gemm_flop = 0;             // forward, both batched GEMMs
  double score_bytes_forward = 0;   // per score element
  double score_bytes_backward = 0;  // per score element
  double gemm_efficiency = 0;
};
UnfusedAttentionTimes UnfusedAttention(const StepTables& t, double rank_tokens,
                                       double hbm_bytes_per_s);

/// Whether the pipeline's send/recv runs behind compute: the job's overlap.pp_p2p when it gives
/// one; else megatron-core's training default, on for the interleaved schedule (VPP > 1) and
/// off for 1F1B (Megatron-LM megatron/training/arguments.py: --no-overlap-p2p-communication is
/// a store_false flag, so overlap_p2p_comm defaults to true, and validate_args sets it false
/// "since non-interleaved schedule does not support overlapping p2p communication"), and off
/// under any other engine.
bool PpP2pOverlapped(const StepLayout& s);

/// The pipeline bubble of 1F1B (v = 1) and interleaved 1F1B as a fraction of the ideal time:
/// (p - 1) / (m v). Other schedules: ScheduleBubbleFraction (pipeline_bubble.h).
double BubbleFraction(int64_t pp, int64_t micro_batches, int64_t vpp);

/// The schedule's bubble fraction for a micro batch's compute `c` on the critical stage.
double BubbleFractionOf(const ParallelLayout& layout, int64_t micro_batches,
                        const MicroBatchCompute& c);

}  // namespace strata

#endif  // STRATA_SIM_STEP_MODEL_H_
