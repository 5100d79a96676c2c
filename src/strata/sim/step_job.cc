#include "strata/sim/step_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/memory/activations.h"
#include "strata/memory/memory_constants.h"
#include "strata/memory/static_memory.h"
#include "strata/model/adapter.h"
#include "strata/model/param_count.h"
#include "strata/sim/recompute_share.h"

namespace strata {
namespace {

// The parameters of the layers every TP rank holds whole (ResolvedJob::gdn): all of them (what
// ZeRO-3 / FSDP would gather) and the trained ones, whose gradients megatron-core averages over
// TP once a step: megatron-core's HuggingFaceModule marks every parameter of a module assigned
// to it (megatron/core/models/huggingface/module.py), a PEFT adapter swapped in for a projection
// too, and finalize_model_grads all-reduces those that have a gradient
// (NVIDIA/Megatron-LM@d98e8a64). Under an adapter the base is frozen: the adapters alone.
struct TpWholeLayers {
  int64_t params = 0;
  int64_t trained = 0;
};

TpWholeLayers TpWholeLayersOf(const ResolvedJob& job) {
  TpWholeLayers out;
  if (!job.gdn.replicated_over_tp) return out;
  const bool frozen = IsFrozen(job.spec, ModuleKind::kLinearAttention);
  for (const LayerSpec& layer : job.model.layers) {
    if (layer.mixer != MixerKind::kGatedDeltaNet) continue;
    const int64_t base =
        CountLayerParams(job.model, layer, 0).modules[ModuleKind::kLinearAttention];
    out.params += base;
    if (job.spec.adapter.on()) {
      out.trained += AdapterCostOfLayer(job.model, job.spec.adapter, layer).gdn_params;
    } else if (!frozen) {
      out.trained += base;
    }
  }
  return out;
}

// The trained parameters of the whole model, split non-expert / expert: the memory ledger's
// count (frozen modules and an adapter's base left out, the adapters in) on the job laid out
// on one GPU, so that the planner can share them over any candidate layout.
void SetTrainableParams(const ResolvedJob& job, ModelTrafficShape& shape) {
  ResolvedJob whole = job;
  whole.spec.layout = ParallelLayout{};
  const StaticMemory s =
      ComputeStaticMemory(whole, CountParams(whole.model), 0, Detail::kNumbersOnly);
  shape.trainable_non_expert_params = std::llround(s.dense_trainable);
  shape.trainable_expert_params = std::llround(s.expert_trainable);
}

}  // namespace

StepLayout StepLayoutOf(const ResolvedJob& job) {
  const JobSpec& spec = job.spec;
  StepLayout s;
  s.layout = job.layout();
  s.micro_batch = job.spec.micro_batch;
  s.micro_batches = std::max<int64_t>(1, job.step.micro_batches);
  const RecomputeShare recompute = RecomputeShareOf(
      spec, static_cast<int64_t>(job.model.layers.size()), job.layout().pp, job.layout().vpp);
  s.recompute = recompute.granularity;
  s.recompute_layer_fraction = recompute.full_layer_fraction;
  const TitanSelectiveAc& titan = spec.recompute.titan;
  if (spec.recompute.granularity == RecomputeGranularity::kSelective && titan.op) s.op_sac = true;
  s.recompute_modules = spec.recompute.modules;
  for (ModuleKind kind : AllModuleKinds()) {
    s.frozen[static_cast<size_t>(kind)] = IsFrozen(spec, kind);
  }
  if (spec.moe_routing_imbalance_given) s.moe_routing_skew = spec.moe_routing_imbalance;
  s.overlap = spec.overlap;
  s.megatron_core = job.RunsMegatronCore(spec.sharding.mode);
  s.distributed_optimizer = spec.optimizer.distributed;
  // An fp32 job runs its activations in fp32: its TP/CP/EP collectives move 4-byte elements.
  s.activation_bytes = spec.param_dtype == DType::kFp32 ? 4 : 2;
  s.param_bytes = DTypeBytes(spec.param_dtype);
  s.grad_bytes = DTypeBytes(spec.grad_dtype);
  s.master_bytes = DTypeBytes(spec.optimizer.master_dtype);
  s.moment_bytes = DTypeBytes(spec.optimizer.moment_dtype);
  s.muon = spec.optimizer.name == "muon";
  s.sharding = spec.sharding;
  s.fp8 = spec.fp8;
  return s;
}

Result<StepSetup> PrepareStep(const ResolvedJob& job) {
  STRATA_ASSIGN_OR_RETURN(KernelEfficiencyFile efficiency, LoadKernelEfficiency());
  STRATA_ASSIGN_OR_RETURN(std::vector<MfuCeiling> ceilings, LoadMfuCeilings());
  STRATA_ASSIGN_OR_RETURN(MemoryConstants memory, LoadMemoryConstants());
  STRATA_ASSIGN_OR_RETURN(FrameworkCatalog frameworks, LoadFrameworkCatalog());
  return PrepareStep(job, efficiency, ceilings, memory, frameworks);
}

Result<StepSetup> PrepareStep(const ResolvedJob& job, const KernelEfficiencyFile& efficiency,
                              const std::vector<MfuCeiling>& mfu_ceilings,
                              const MemoryConstants& constants,
                              const FrameworkCatalog& frameworks) {
  if (job.layout().world() > job.cluster.gpus_per_node &&
      job.cluster.DataNicBandwidthPerNode().value() <= 0) {
    return InvalidInput(
               fmt::format("the job spans {} nodes but its cluster describes no data NICs, "
                           "so the network between nodes is unknown",
                           (job.layout().world() + job.cluster.gpus_per_node - 1) /
                               job.cluster.gpus_per_node))
        .InField("cluster")
        .WithHint(
            "name a cluster file in the job (cluster: h20-5x8) or give one with --set "
            "cluster=PATH");
  }
  StepSetup setup{job, efficiency, frameworks, mfu_ceilings, {}, {}};
  StepTableInputs in;
  in.model = &setup.job.model;
  in.sequence = job.step.sequence;
  in.packed = job.spec.sequence.packing;
  if (in.packed) in.packed_attention_tokens = job.step.sequence.AttentionTokens();
  in.gpu = &setup.job.gpu();
  in.efficiency = &setup.efficiency;
  in.mtp = job.spec.mtp;
  in.cross_entropy = job.spec.cross_entropy;
  in.attention = job.spec.attention;
  in.mfu_ceilings = &setup.mfu_ceilings;
  in.image_tokens = job.spec.sequence.image_tokens;
  in.adapter = job.spec.adapter;
  setup.tables = BuildStepTables(in);
  // The kernel file's per-GPU calibration is keyed by the catalog name, as is the FA2 list.
  const std::string& gpu_key =
      job.gpu().catalog_name.empty() ? job.gpu().name : job.gpu().catalog_name;
  STRATA_ASSIGN_OR_RETURN(setup.tables.framework, ResolveFramework(frameworks, job.spec, gpu_key));
  setup.tables.framework_counts = CountFrameworkModel(job.model);
  if (setup.tables.framework_counts.moe_layers > 0 && setup.tables.framework.on &&
      !setup.tables.framework.experts_assumption.empty()) {
    setup.tables.framework.assumptions.push_back(setup.tables.framework.experts_assumption);
  }
  if (setup.tables.framework.on) {
    for (std::string& line : ModelCodeAssumptions(setup.tables, setup.tables.framework))
      setup.tables.framework.assumptions.push_back(std::move(line));
  }
  if (job.spec.adapter.on()) {
    for (std::string& line : AdapterAssumptions(job.model, job.spec.adapter))
      setup.tables.framework.assumptions.push_back(std::move(line));
  }
  setup.tables.gdn_chunk_tokens = static_cast<double>(constants.gdn_chunk_tokens);
  // Whose GDN module, with the model type's release rule (the resolved job's); the same fact
  // the memory ledger splits (or not) the layer's weights and activations by.
  if (!job.gdn.module.empty()) setup.tables.framework.gdn_module = job.gdn.module;
  setup.tables.gdn_replicated = job.gdn.replicated_over_tp;
  const TpWholeLayers tp_whole = TpWholeLayersOf(job);
  setup.tables.traffic.tp_averaged_params = tp_whole.trained;
  setup.tables.traffic.tp_whole_params = tp_whole.params;
  SetTrainableParams(job, setup.tables.traffic);
  if (setup.tables.gdn_layers > 0 && setup.tables.framework.on) {
    setup.tables.framework.assumptions.push_back(GdnKernelAssumption(setup.tables.framework));
  }
  if (setup.tables.gdn_layers > 0 && job.spec.layout.tp > 1 && !job.gdn.rule.empty()) {
    setup.tables.framework.assumptions.push_back(job.gdn.rule);
  }
  setup.layout = StepLayoutOf(job);
  setup.layout.runtime = job.runtime();
  if (job.spec.activation_offload.on()) {
    // What the offloaded layers save, from the memory ledger's per-layer decomposition.
    const int64_t n = job.spec.activation_offload.num_layers;
    double bytes = 0;
    for (int64_t i = 0; i < n && i < static_cast<int64_t>(job.model.layers.size()); ++i) {
      bytes +=
          LayerActivationsPerToken(job, constants, job.model.layers[static_cast<size_t>(i)]).saved;
    }
    setup.layout.offload_activation_layers = n;
    setup.layout.offload_activation_bytes_per_token = bytes;
  }
  return setup;
}

}  // namespace strata
