#include "strata/memory/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "strata/job/engine_chain.h"
#include "strata/memory/activations.h"
#include "strata/memory/error_band.h"
#include "strata/memory/ledger_counters.h"
#include "strata/memory/ledger_statics.h"
#include "strata/memory/sharding.h"
#include "strata/memory/static_memory.h"

namespace strata {
namespace {

/// Calls `fn(name, size)` for each process group of more than one rank the step talks in; each
/// holds NCCL buffers. Under megatron-core two more groups than the parallel dimensions do
/// (NVIDIA/Megatron-LM@946357f8dd, core_r0.13.0, the release ms-swift 3.7 pins):
/// - ETPxEP: the all-to-all dispatcher gathers every rank's tokens-per-expert counts over the
///   expert-tensor-and-model-parallel group (transformer/moe/token_dispatcher.py,
///   MoEAlltoAllTokenDispatcher.preprocess, `group=self.tp_ep_group`), a group created apart
///   from the EP group even when it has the same ranks (parallel_state.py, generator 'tp-ep',
///   EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP);
/// - TPxCP: the router's load-balancing loss, when its coefficient is above 0;
/// - the gradient-statistics group: the gradient norm (clip_grad) is all-reduced over every
///   rank of the distributed-optimizer instance, the whole job with one instance
///   (optimizer/__init__.py, `grad_stats_parallel_group =
///   get_intra_distributed_optimizer_instance_group()`; optimizer.py, get_grad_norm), and over
///   the model-parallel groups (TP x PP; ETP x EP x PP for the experts) without it.
template <class Fn>
void ForEachCommunicator(const Job& job, bool megatron_core, Fn fn) {
  const ParallelLayout& l = job.spec.layout;
  auto add = [&](const char* name, int64_t size) {
    if (size > 1) fn(name, size);
  };
  add("DPxCP", l.dp * l.cp);
  add("TP", l.tp);
  add("PP", l.pp);
  add("CP", l.cp);
  const bool moe = job.model.HasLayers(FfnKind::kMoe);
  if (moe) {
    add("EP", l.ep);
    add("ETP", l.etp);
    add("expert-DP", l.expert_dp());
    if (megatron_core && l.ep > 1) add("ETPxEP", l.etp * l.ep);
    // The router's load-balancing loss all-reduces the tokens per expert over the TP x CP group
    // (transformer/moe/router.py, _apply_aux_loss: reduce_group=self.tp_cp_group, at
    // core_r0.13.0 lines 305-306 and NVIDIA/Megatron-LM@d98e8a6), a group created apart from TP
    // and CP (parallel_state.py, generator 'tp-cp'); no collective runs on it without the loss.
    if (megatron_core && job.spec.moe_aux_loss_coeff > 0) add("TPxCP (aux loss)", l.tp * l.cp);
  }
  if (megatron_core) {
    if (job.spec.optimizer.distributed && job.spec.sharding.mode == ShardingMode::kZero1) {
      add("grad norm, all ranks", l.world());
    } else {
      // Without it the dense optimizer reduces over TP x PP and the expert optimizer over its
      // own model-parallel group, ETP x EP x PP (optimizer/__init__.py,
      // get_expert_tensor_model_pipeline_parallel_group).
      add("grad norm, TPxPP", l.tp * l.pp);
      if (moe) add("grad norm, ETPxEPxPP", l.etp * l.ep * l.pp);
    }
  }
}

bool RunsMegatronCore(const Job& job, const MemoryConstants& constants) {
  return ResolveEngineChain(constants.engines, job.spec.framework, job.spec.sharding.mode)
      .Runs("megatron-core");
}

/// "TP 8, EP 8": the communicators' names, "none" when there are none.
std::string CommunicatorNames(const Job& job, const MemoryConstants& constants) {
  std::string out;
  ForEachCommunicator(job, RunsMegatronCore(job, constants), [&](const char* name, int64_t size) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, size);
  });
  return out.empty() ? "none" : out;
}

}  // namespace

int64_t CommunicatorCount(const Job& job, const MemoryConstants& constants) {
  int64_t n = 0;
  ForEachCommunicator(job, RunsMegatronCore(job, constants), [&](const char*, int64_t) { ++n; });
  return n;
}

namespace {

/// The weights the ledger lists (Total(kWeights)) from a stage's statics, whether or not the
/// items are kept.
Bytes StaticWeights(const StaticMemory& st, const ModeMemory& mode) {
  Bytes total;
  auto add = [&](const LedgerItem& item) {
    if (item.kind == ItemKind::kWeights) total += item.bytes;
  };
  for (const LedgerItem& item : st.weights) add(item);
  for (const LedgerItem* item : {&st.gradients, &st.master_weights, &st.moments, &st.step_transient,
                                 &mode.gathered, &mode.reduce_scatter, &mode.accumulated,
                                 &mode.reduce_buckets, &mode.fp8_copies, &mode.fp8_state}) {
    add(*item);
  }
  return total;
}

}  // namespace

std::string_view ItemKindName(ItemKind kind) {
  switch (kind) {
    case ItemKind::kWeights:
      return "weights";
    case ItemKind::kGradients:
      return "gradients";
    case ItemKind::kOptimizer:
      return "optimizer";
    case ItemKind::kActivations:
      return "activations";
    case ItemKind::kOverhead:
      return "overhead";
  }
  return "?";
}

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kAfterInit:
      return "after_init";
    case Phase::kForwardPeak:
      return "forward_peak";
    case Phase::kBackwardPeak:
      return "backward_peak";
    case Phase::kFirstOptimizerStep:
      return "first_optimizer_step";
    case Phase::kSteadyPeak:
      return "steady_peak";
  }
  return "?";
}

std::string_view PhaseDescription(Phase phase) {
  switch (phase) {
    case Phase::kAfterInit:
      return "after initialisation";
    case Phase::kForwardPeak:
      return "forward peak, step 1";
    case Phase::kBackwardPeak:
      return "backward peak, step 1";
    case Phase::kFirstOptimizerStep:
      return "first optimizer step";
    case Phase::kSteadyPeak:
      return "peak from step 2 on";
  }
  return "?";
}

Bytes MemoryLedger::Total(ItemKind kind) const {
  Bytes total;
  for (const auto& item : items) {
    if (item.kind == kind) total += item.bytes;
  }
  return total;
}

const PhaseMemory& MemoryLedger::PhaseOf(Phase phase) const {
  for (const auto& p : phases) {
    if (p.phase == phase) return p;
  }
  STRATA_CHECK(false);
  return phases.front();
}

namespace {
/// `communicators`: CommunicatorCount(job, constants), which the callers count once for all
/// stages (it scans the model's layers for experts).
MemoryLedger StageLedgerFrom(const Job& job, const MemoryConstants& constants, int64_t stage,
                             const StageStatics& statics, int64_t communicators,
                             Detail detail = Detail::kExplained);
}  // namespace

std::vector<StageStatics> ComputeStageStatics(const Job& job) {
  return ComputeStageStatics(job, CountParams(job.model));
}

std::vector<StageStatics> ComputeStageStatics(const Job& job, const ParamBreakdown& params,
                                              Detail detail) {
  std::vector<StageStatics> out;
  for (int64_t stage = 0; stage < std::max<int64_t>(1, job.spec.layout.pp); ++stage) {
    out.push_back({ComputeStaticMemory(job, params, stage, detail),
                   ComputeModeMemory(job, params, stage, detail)});
  }
  return out;
}

MemoryLedger ComputeStageLedger(const Job& job, const MemoryConstants& constants, int64_t stage) {
  const ParamBreakdown params = CountParams(job.model);
  return StageLedgerFrom(
      job, constants, stage,
      {ComputeStaticMemory(job, params, stage), ComputeModeMemory(job, params, stage)},
      CommunicatorCount(job, constants));
}

Bytes UsableCapacity(const Job& job, const MemoryConstants& constants, std::string* formula) {
  const GpuSpec& gpu = job.gpu();
  const DeviceCapacityConstants& d = constants.device_capacity;
  const auto card = d.cards.find(gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name);
  if (card == d.cards.end() || card->second.datasheet.count() != gpu.memory.count()) {
    if (formula != nullptr) {
      *formula = fmt::format(
          "the datasheet's {} ({}): no driver figure for a {} of this size in "
          "data/memory_overheads.yaml",
          FormatGB(gpu.memory), FormatGiB(gpu.memory), gpu.name);
    }
    return gpu.memory;
  }
  const Bytes usable = card->second.memory_total - d.driver_reserved;
  if (formula != nullptr) {
    *formula = fmt::format(
        "nvidia-smi memory.total {:.0f} MiB - the driver's reservation {:.1f} MiB = {} ({}) "
        "that the counters can reach (datasheet {})",
        card->second.memory_total.mib(), d.driver_reserved.mib(), FormatGB(usable),
        FormatGiB(usable), FormatGB(gpu.memory));
  }
  return usable;
}

namespace {
MemoryLedger StageLedgerFrom(const Job& job, const MemoryConstants& constants, int64_t stage,
                             const StageStatics& statics, int64_t communicators, Detail detail) {
  const bool explain = detail == Detail::kExplained;
  const ParallelLayout& l = job.spec.layout;
  MemoryLedger ledger;
  ledger.stage = stage;
  ledger.datasheet_capacity = job.gpu().memory;
  ledger.capacity = UsableCapacity(job, constants, explain ? &ledger.capacity_formula : nullptr);
  const StaticMemory& st = statics.st;
  const ModeMemory& mode = statics.mode;
  ledger.params_per_gpu = st.params;
  ledger.trainable_params_per_gpu = st.trainable_params;
  const ActivationMemory act = ComputeActivations(job, constants, stage, detail);
  const Bytes nccl = constants.nccl_per_communicator * static_cast<double>(communicators);
  const AllocatorSetting alloc{job.spec.sequence.variable_length(),
                               job.spec.framework.expandable_segments};
  const bool variable = alloc.variable_shapes;
  const double fraction = FragmentationFraction(constants, alloc);
  const PhaseCounters counters =
      PredictPhaseCounters(constants, alloc, st, mode, act, nccl, StaticWeights(st, mode),
                           FsdpHoldingOf(job).side_streams);
  const AllocatorCounters& at_peak = counters.peak();

  if (explain) {
    ledger.rank = fmt::format("pipeline stage {} of {}{}", stage, l.pp,
                              l.pp == 1    ? " (first and last)"
                              : stage == 0 ? " (first: embedding, most micro batches in flight)"
                              : stage == l.output_stage() ? " (last: output layer and logits)"
                                                          : "");
    ledger.items = st.weights;
    ledger.items.push_back(st.gradients);
    ledger.items.push_back(st.master_weights);
    ledger.items.push_back(st.moments);
    ledger.items.push_back(st.step_transient);
    ledger.host_items = st.host;
    // ZeRO-3/FSDP2 gathered weights and reduce-scatter buffers, FP8 weight copies: only the
    // items this job has (a bf16 megatron job's ledger is unchanged).
    for (const LedgerItem* item : {&mode.gathered, &mode.reduce_scatter, &mode.accumulated,
                                   &mode.reduce_buckets, &mode.fp8_copies, &mode.fp8_state}) {
      if (item->bytes.value() > 0) ledger.items.push_back(*item);
    }
    ledger.items.insert(ledger.items.end(), act.items.begin(), act.items.end());
    ledger.host_items.insert(ledger.host_items.end(), act.host_items.begin(), act.host_items.end());
    ledger.items.push_back(
        {ItemKind::kOverhead, "CUDA context", constants.cuda_context,
         fmt::format("{} (data/memory_overheads.yaml)", FormatGBAndGiB(constants.cuda_context)),
         "seen by nvidia-smi, not by torch.cuda.max_memory_*"});
    ledger.items.push_back(
        {ItemKind::kOverhead, "NCCL buffers", nccl,
         fmt::format("{} communicators ({}) x {} = {}", communicators,
                     CommunicatorNames(job, constants), FormatGiB(constants.nccl_per_communicator),
                     FormatGBAndGiB(nccl)),
         ""});
    ledger.items.push_back(
        {ItemKind::kOverhead, "allocator cache (reserved, not allocated)",
         at_peak.reserved - at_peak.allocated,
         fmt::format("{:.2f} ({} shapes{}) x {} activations and working buffers = {}{}", fraction,
                     variable ? "variable" : "fixed",
                     alloc.expandable_segments ? ", expandable segments" : "",
                     FormatGB(counters.peak_dynamic()), FormatGB(at_peak.fragmentation),
                     at_peak.side_stream.value() > 0
                         ? fmt::format(" + collective buffers cached in their streams' pools {}",
                                       FormatGB(at_peak.side_stream))
                         : ""),
         "counted by max_memory_reserved and nvidia-smi, not by max_memory_allocated"});
  }

  const Bytes weights = StaticWeights(st, mode) - mode.gathered.bytes - mode.fp8_copies.bytes;
  const Bytes init = counters.init.device_used;
  const Bytes forward = counters.forward.device_used;
  const Bytes backward = counters.backward.device_used;
  const Bytes step = counters.step.device_used;
  const Bytes steady = counters.steady.device_used;
  ledger.phases = {{Phase::kAfterInit, init, "", counters.init},
                   {Phase::kForwardPeak, forward, "", counters.forward},
                   {Phase::kBackwardPeak, backward, "", counters.backward},
                   {Phase::kFirstOptimizerStep, step, "", counters.step},
                   {Phase::kSteadyPeak, steady, "", counters.steady}};
  ledger.no_grad = {counters.no_grad.log_probs.device_used,
                    counters.no_grad.with_entropy.device_used,
                    counters.no_grad.values.device_used,
                    act.no_grad_layer,
                    act.no_grad_logits,
                    act.entropy_copy};
  if (explain) {
    ledger.no_grad_formula = fmt::format(
        "after init {} + max(the largest layer's tensors of one micro batch {}, logits and "
        "log-prob buffers {}{}) x (1 + {:.2f} fragmentation): no activations kept for a "
        "backward, no micro batch in flight",
        FormatGB(init), FormatGB(act.no_grad_layer), FormatGB(act.no_grad_logits),
        act.entropy_copy.value() > 0
            ? fmt::format(" + the entropy's copy of the logits {}", FormatGB(act.entropy_copy))
            : "",
        fraction);
    std::string mode_text;
    if (mode.persistent().value() > 0)
      mode_text += fmt::format(" + FP8 copies {}", FormatGB(mode.persistent()));
    std::string fwd_mode = mode_text, bwd_mode = mode_text;
    if (mode.forward_working().value() > 0) {
      fwd_mode += fmt::format(" + gathered weights {}", FormatGB(mode.forward_working()));
    }
    if (mode.backward_working().value() > 0) {
      bwd_mode += fmt::format(" + gathered weights and reduce-scatter buffer {}",
                              FormatGB(mode.backward_working()));
    }
    auto reserve_text = [&](const AllocatorCounters& c) {
      std::string out = fmt::format(" x (1 + {:.2f} fragmentation)", fraction);
      if (c.side_stream.value() > 0) {
        out += fmt::format(" + collective buffers cached in their streams' pools {}",
                           FormatGB(c.side_stream));
      }
      return out;
    };
    ledger.phases[0].formula = fmt::format(
        "weights {} + gradients {} + master weights {}{} + CUDA context {} + NCCL {}",
        FormatGB(weights), FormatGB(st.gradients.bytes), FormatGB(st.master_weights.bytes),
        mode.kept_from_init().value() > 0
            ? fmt::format(" + reduce bucket {}", FormatGB(mode.kept_from_init()))
            : "",
        FormatGB(constants.cuda_context), FormatGB(nccl));
    ledger.phases[1].formula =
        fmt::format("after init {}{} + (stored activations {} + forward working set {}){}",
                    FormatGB(init), fwd_mode, FormatGB(act.stored), FormatGB(act.forward_working),
                    reserve_text(counters.forward));
    ledger.phases[2].formula =
        fmt::format("after init {}{} + (stored activations {} + backward working set {}){}",
                    FormatGB(init), bwd_mode, FormatGB(act.stored), FormatGB(act.backward_working),
                    reserve_text(counters.backward));
    ledger.phases[3].formula = fmt::format(
        "after init {}{} + Adam moments {} (allocated now) + gradient shard copy {}{}",
        FormatGB(init), mode_text, FormatGB(st.moments.bytes), FormatGB(st.step_transient.bytes),
        counters.step.side_stream.value() > 0
            ? fmt::format(" + collective buffers cached in their streams' pools {}",
                          FormatGB(counters.step.side_stream))
            : "");
    ledger.phases[4].formula =
        fmt::format("step-1 peak {} + Adam moments {}{}", FormatGB(std::max(forward, backward)),
                    FormatGB(st.moments.bytes),
                    counters.steady.device_used > std::max(forward, backward) + st.moments.bytes
                        ? fmt::format(" + the collective buffers' cache of step 2 on {}",
                                      FormatGB(counters.steady.device_used -
                                               std::max(forward, backward) - st.moments.bytes))
                        : "");
    ledger.allocated_formula = AllocatedFormula(at_peak);
    ledger.reserved_formula = ReservedFormula(at_peak, fraction, counters.peak_dynamic());
    ledger.device_used_formula =
        fmt::format("{}; the card: {}", DeviceUsedFormula(at_peak), ledger.capacity_formula);
  }
  ledger.peak_before_step1 = std::max({init, forward, backward});
  ledger.peak_after_step1 = std::max(step, steady);
  for (const auto& p : ledger.phases) {
    if (p.bytes > ledger.capacity) {
      ledger.fits = false;
      ledger.oom_phase = p.phase;
      break;
    }
  }
  ledger.only_after_step1_exceeds =
      ledger.peak_before_step1 <= ledger.capacity && ledger.peak_after_step1 > ledger.capacity;
  ledger.peak_counters = at_peak;
  // measured = predicted / (1 + error): the highest error gives the lowest measured peak.
  ledger.job_family = MemoryFamily(job.spec, constants.engines);
  const MemoryErrorBand& band = BandFor(constants, ledger.job_family);
  ledger.band_family = band.family;
  ledger.band_rows = static_cast<int64_t>(band.rows.size());
  ledger.band_low = ledger.Peak() / (1.0 + band.highest);
  ledger.band_high = ledger.Peak() / (1.0 + band.lowest);
  if (!ledger.fits || ledger.headroom().value() < 0) {
    ledger.fits = false;
    ledger.verdict = MemoryVerdict::kOom;
  } else {
    ledger.verdict =
        ledger.band_high > ledger.capacity ? MemoryVerdict::kAtRisk : MemoryVerdict::kFits;
  }
  return ledger;
}
}  // namespace

std::string_view MemoryVerdictName(MemoryVerdict v) {
  switch (v) {
    case MemoryVerdict::kFits:
      return "fits";
    case MemoryVerdict::kAtRisk:
      return "at_risk";
    case MemoryVerdict::kOom:
      return "oom";
  }
  return "?";
}

std::string_view MemoryVerdictText(MemoryVerdict v) {
  switch (v) {
    case MemoryVerdict::kFits:
      return "fits, within the model's error";
    case MemoryVerdict::kAtRisk:
      return "at risk";
    case MemoryVerdict::kOom:
      return "OOM";
  }
  return "?";
}

MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants) {
  Bytes floor;
  return ComputeLedger(job, constants, floor);
}

MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants, Bytes& floor) {
  return ComputeLedger(job, constants, ComputeStageStatics(job), floor);
}

namespace {
/// A no_grad forward's peak is the largest over the stages, which need not be the stage whose
/// training step peaks (the last stage's logits against the first stage's micro batches in
/// flight): each head's peak is taken over every stage computed, its parts with it.
void KeepLargestNoGrad(MemoryLedger& most, const MemoryLedger& other) {
  MemoryLedger::NoGradForward& m = most.no_grad;
  const MemoryLedger::NoGradForward& o = other.no_grad;
  if (o.with_entropy > m.with_entropy) {
    m.layer = o.layer;
    m.logits = o.logits;
    m.entropy_copy = o.entropy_copy;
    if (!other.no_grad_formula.empty()) most.no_grad_formula = other.no_grad_formula;
  }
  m.log_probs = std::max(m.log_probs, o.log_probs);
  m.with_entropy = std::max(m.with_entropy, o.with_entropy);
  m.values = std::max(m.values, o.values);
}

Bytes ActivationFree(const MemoryLedger& l) {
  return std::max(l.PhaseOf(Phase::kAfterInit).bytes, l.PhaseOf(Phase::kFirstOptimizerStep).bytes);
}
}  // namespace

const StageStatics& LazyStageStatics::Of(const Job& job, const ParamBreakdown& params,
                                         int64_t stage) {
  const auto stages = static_cast<size_t>(std::max<int64_t>(1, job.spec.layout.pp));
  if (stages_.size() != stages) stages_.resize(stages);
  std::optional<StageStatics>& s = stages_.at(static_cast<size_t>(stage));
  if (!s) {
    s = StageStatics{ComputeStaticMemory(job, params, stage, Detail::kNumbersOnly),
                     ComputeModeMemory(job, params, stage, Detail::kNumbersOnly)};
  }
  return *s;
}

bool LazyStageStatics::MiddleStagesAlike(const Job& job, const ParamBreakdown& params) {
  if (middle_alike_) return *middle_alike_;
  const int64_t pp = job.spec.layout.pp;
  bool alike = true;
  if (pp > 3) {
    const StageLayers first = StageLayerIndices(job, 1);
    for (int64_t stage = 2; stage < pp - 1 && alike; ++stage) {
      const StageLayers other = StageLayerIndices(job, stage);
      alike = other.size() == first.size();
      for (int64_t i = 0; alike && i < first.size(); ++i) {
        const auto a = static_cast<size_t>(first[i]), b = static_cast<size_t>(other[i]);
        const LayerSpec& la = job.model.layers.at(a);
        const LayerSpec& lb = job.model.layers.at(b);
        alike = la.mixer == lb.mixer && la.ffn == lb.ffn &&
                params.layers.at(a).modules == params.layers.at(b).modules;
      }
    }
  }
  middle_alike_ = alike;
  return alike;
}

MemoryLedger ComputeLedgerUntilOver(const Job& job, const MemoryConstants& constants,
                                    const ParamBreakdown& params, LazyStageStatics& statics,
                                    Bytes& floor, bool& complete) {
  const int64_t pp = std::max<int64_t>(1, job.spec.layout.pp);
  const int64_t communicators = CommunicatorCount(job, constants);
  complete = false;
  std::optional<MemoryLedger> most;
  MemoryLedger no_grad;  // the largest no_grad forward over the stages computed
  Bytes seen;            // the activation-free phases of the stages computed
  // 0, PP - 1, 1, 2, ..., PP - 2; or only 0, PP - 1 and 1 when stage 1 stands for the middle.
  const int64_t stages = pp > 3 && statics.MiddleStagesAlike(job, params) ? 3 : pp;
  for (int64_t k = 0; k < stages; ++k) {
    const int64_t stage = k == 0 ? 0 : k == 1 ? pp - 1 : k - 1;
    MemoryLedger ledger = StageLedgerFrom(job, constants, stage, statics.Of(job, params, stage),
                                          communicators, Detail::kNumbersOnly);
    seen = std::max(seen, ActivationFree(ledger));
    KeepLargestNoGrad(no_grad, ledger);
    if (!ledger.fits) {
      floor = std::max(floor, seen);
      KeepLargestNoGrad(ledger, no_grad);
      return ledger;
    }
    // The most loaded stage, ties to the lower stage as in ComputeLedger.
    if (!most || ledger.Peak() > most->Peak() ||
        (ledger.Peak() == most->Peak() && ledger.stage < most->stage)) {
      most = std::move(ledger);
    }
  }
  complete = true;
  floor = seen;
  KeepLargestNoGrad(*most, no_grad);
  return std::move(*most);
}

MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants,
                           const std::vector<StageStatics>& statics, Bytes& floor, Detail detail) {
  auto activation_free = [](const MemoryLedger& l) { return ActivationFree(l); };
  // Every stage: with an uneven split a middle stage can hold the most.
  const int64_t communicators = CommunicatorCount(job, constants);
  MemoryLedger most = StageLedgerFrom(job, constants, 0, statics.at(0), communicators, detail);
  floor = activation_free(most);
  MemoryLedger no_grad = most;
  for (int64_t stage = 1; stage < job.spec.layout.pp; ++stage) {
    MemoryLedger other = StageLedgerFrom(
        job, constants, stage, statics.at(static_cast<size_t>(stage)), communicators, detail);
    floor = std::max(floor, activation_free(other));
    KeepLargestNoGrad(no_grad, other);
    if (other.Peak() > most.Peak()) most = std::move(other);
  }
  KeepLargestNoGrad(most, no_grad);
  return most;
}

}  // namespace strata
