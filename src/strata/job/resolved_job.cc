#include "strata/job/resolved_job.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "strata/core/strings.h"
#include "strata/job/engine_chain.h"
#include "strata/job/job_validation.h"
#include "strata/job/resolve_with_engines.h"
#include "strata/model/model_catalog.h"

namespace strata {
namespace {

/// A relative path in a job file is relative to that file, not to the working directory.
std::string BesideJobFile(const std::string& ref, const std::string& job_file) {
  const bool is_path = ref.ends_with(".json") || ref.find('/') != std::string::npos;
  if (!is_path || job_file.empty() || !std::filesystem::path(ref).is_relative()) return ref;
  const auto beside = std::filesystem::path(job_file).parent_path() / ref;
  std::error_code ec;
  return std::filesystem::exists(beside, ec) ? beside.string() : ref;
}

/// The cluster file the job names, or a cluster of `nodes` identical nodes built from the GPU
/// alone (no NICs known: views that need the network say so).
Result<Cluster> ClusterOf(const JobSpec& spec) {
  if (!spec.cluster.file.empty()) {
    auto cluster = LoadCluster(spec.cluster.file);
    if (!cluster.ok()) return Error(std::move(cluster).error()).InField("cluster");
    // The job's own node count and GPU (a --set on a named cluster) on the file's network.
    if (spec.cluster.nodes > 0) cluster->nodes = spec.cluster.nodes;
    if (spec.cluster.gpu_spec) cluster->gpu = *spec.cluster.gpu_spec;
    // Part of each node of a rack-scale NVLink domain (checked when the job was read).
    if (spec.cluster.gpus_per_node > 0) {
      auto part = spec.cluster.shared_nodes
                      ? SharedNodes(*std::move(cluster), spec.cluster.gpus_per_node)
                      : WithGpusPerNode(*std::move(cluster), spec.cluster.gpus_per_node);
      if (!part.ok()) return Error(std::move(part).error()).InField("cluster.gpus_per_node");
      return part;
    }
    return cluster;
  }
  // The GPU as the job file gave it (a catalog entry or a custom variant), else by name.
  auto gpu =
      spec.cluster.gpu_spec ? Result<GpuSpec>(*spec.cluster.gpu_spec) : FindGpu(spec.cluster.gpu);
  if (!gpu.ok()) {
    Error e = std::move(gpu).error();
    e.InField("cluster.gpu").InFile(spec.file);
    return e;
  }
  Cluster c;
  c.name = "";
  c.description = "described in the job file (GPU and counts only)";
  c.nodes = spec.cluster.nodes;
  c.gpus_per_node = spec.cluster.gpus_per_node;
  c.gpu = std::move(gpu).value();
  // The node's fabric is the GPU's (data/gpus.yaml `fabric_topology`): an NVLink switch fabric
  // (SXM boards) gets NVSwitch, a point-to-point mesh (MI300X's xGMI) a GPU mesh, and a PCIe card
  // whose NVLink only bridges pairs gets PCIe, which every collective over more than the pair
  // crosses (an 8-GPU ring on bridged H100 PCIe cards has at least four PCIe hops).
  c.fabric = IntraNodeFabric::kPcieOnly;
  if (c.gpu.has_gpu_fabric()) {
    switch (c.gpu.fabric_topology) {
      case GpuFabricTopology::kSwitch:
        c.fabric = IntraNodeFabric::kNvSwitch;
        break;
      case GpuFabricTopology::kMesh:
        c.fabric = IntraNodeFabric::kNvLinkMesh;
        break;
      case GpuFabricTopology::kBridge:
        c.fabric = IntraNodeFabric::kPcieOnly;
        break;
    }
  }
  c.pcie_generation = c.gpu.pcie_generation;  // the GPU's own host link (data/gpus.yaml)
  return c;
}

Result<SequenceLengths> SequenceOf(const JobSpec& spec) {
  if (!spec.sequence.histogram.empty()) {
    std::filesystem::path path = spec.sequence.histogram;
    if (path.is_relative() && !spec.file.empty()) {
      path = std::filesystem::path(spec.file).parent_path() / path;
    }
    STRATA_ASSIGN_OR_RETURN(SequenceLengths lengths, LoadSequenceHistogram(path.string()));
    // Activations are sized for max_tokens; a histogram with longer samples contradicts it.
    if (lengths.max_tokens > spec.sequence.max_tokens) {
      Error e = InvalidInput(
          fmt::format("the histogram's longest sample ({} tokens) exceeds max_tokens ({})",
                      lengths.max_tokens, spec.sequence.max_tokens));
      e.field = "sequence.histogram";
      e.file = spec.file;
      e.hint = fmt::format("set sequence.max_tokens to at least {}", lengths.max_tokens);
      return e;
    }
    return lengths;
  }
  if (spec.sequence.packing || spec.sequence.mean_tokens <= 0) {
    SequenceLengths fixed = SequenceLengths::Fixed(spec.sequence.max_tokens);
    // Packed samples attend only within themselves: with their mean given, a token's attention
    // sees PackedAttentionTokens, not the packed length (every view reads this). A spread not
    // given is 0, as docs/job-file.md states (every sample the mean's length), and said so.
    if (spec.sequence.packing && spec.sequence.mean_tokens > 0) {
      const bool spread_given = spec.sequence.std_tokens >= 0;
      const double std_tokens = spread_given ? spec.sequence.std_tokens : 0.0;
      const double attention =
          PackedAttentionTokens(spec.sequence.mean_tokens, std_tokens, spec.sequence.max_tokens);
      fixed.mean_square_tokens = fixed.mean_tokens * attention;
      if (!spread_given) {
        fixed.assumption = fmt::format(
            "packed samples' length spread ASSUMED 0 (every sample {} tokens; set "
            "sequence.std_tokens): attention sees {} tokens, not the packed {}",
            GroupDigits(spec.sequence.mean_tokens), GroupDigits(attention),
            GroupDigits(spec.sequence.max_tokens));
      }
    }
    return fixed;
  }
  return SequenceLengths::MeanMax(spec.sequence.mean_tokens, spec.sequence.max_tokens);
}

Status Derive(ResolvedJob& job);

/// A word as a POSIX shell reads it back: quoted only when it needs to be.
std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string ResolvedJob::CommandLine(std::string_view command,
                                     const std::vector<std::string>& extra) const {
  std::string out = fmt::format("strata {}", command);
  if (!request.job.empty()) out += " " + ShellWord(request.job);
  if (!request.from.empty()) out += " --from " + ShellWord(request.from);
  if (!request.model.empty()) out += " --model " + ShellWord(request.model);
  auto key_of = [](const std::string& assignment) {
    return assignment.substr(0, assignment.find('='));
  };
  for (const std::string& set : request.overrides) {
    bool replaced = false;
    for (const std::string& e : extra) replaced = replaced || key_of(e) == key_of(set);
    if (!replaced) out += " --set " + ShellWord(set);
  }
  for (const std::string& e : extra) out += " --set " + ShellWord(e);
  return out;
}

namespace {
Result<ModelConfig> ModelOf(const JobSpec& spec) {
  auto model = LoadModelConfig(BesideJobFile(spec.model, spec.file));
  if (!model.ok()) {
    Error e = std::move(model).error();
    if (e.field.empty() && e.file.empty()) e.field = "model";
    return e;
  }
  return model;
}
}  // namespace

Result<ResolvedJob> ResolveJob(const JobSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(ModelConfig model, ModelOf(spec));
  return ResolveJobWithModel(spec, std::move(model));
}

Result<ResolvedJob> ResolveJob(const JobSpec& spec, const FrameworkEngines& engines) {
  STRATA_ASSIGN_OR_RETURN(ModelConfig model, ModelOf(spec));
  return ResolveJobWithModel(spec, std::move(model), engines);
}

Result<ResolvedJob> ResolveJobWithModel(const JobSpec& spec, ModelConfig model) {
  STRATA_ASSIGN_OR_RETURN(FrameworkEngines engines, LoadFrameworkEngines());
  return ResolveJobWithModel(spec, std::move(model), engines);
}

Result<ResolvedJob> ResolveJobWithModel(const JobSpec& spec, ModelConfig model,
                                        const FrameworkEngines& engines) {
  ResolvedJob job;
  job.spec = spec;
  STRATA_RETURN_IF_ERROR(ResolveAdapterTargets(job.spec, engines, &model));
  job.gdn =
      ResolveGdnPlacement(engines, job.spec.framework, job.spec.sharding.mode, model.model_type);
  for (size_t m = 0; m < kShardingModeCount; ++m) {
    const EngineChain chain =
        ResolveEngineChain(engines, job.spec.framework, static_cast<ShardingMode>(m));
    job.query_groups_by_mode[m] = QueryGroupSplitOf(chain);
    job.megatron_core_by_mode[m] = chain.Runs("megatron-core");
    job.runtime_by_mode[m] =
        ResolveJobShardingRuntime(engines, job.spec, static_cast<ShardingMode>(m));
    if (job.spec.framework.given) {
      job.checkpoint_format_by_mode[m] = ResolveCheckpointFormatRule(
          engines.checkpoint_format, chain.names, job.runtime_by_mode[m]);
    }
    job.pipeline_by_mode[m] =
        ResolvePipelineRule(engines, job.spec.framework, static_cast<ShardingMode>(m));
    job.reduce_bucket_by_mode[m] =
        ResolveReduceBucket(engines, job.spec.framework, static_cast<ShardingMode>(m));
    job.moe_a2a_overlap_by_mode[m] =
        ResolveMoeA2aOverlapRule(engines, job.spec.framework, static_cast<ShardingMode>(m));
  }
  job.fsdp2_units = ResolveFsdp2Units(engines, job.spec.framework);
  job.accumulation_sync = ResolveAccumulationSync(engines, job.spec.framework);
  job.model = std::move(model);
  STRATA_ASSIGN_OR_RETURN(job.cluster, ClusterOf(spec));
  STRATA_ASSIGN_OR_RETURN(job.step.sequence, SequenceOf(spec));
  STRATA_RETURN_IF_ERROR(Derive(job));
  return job;
}

Status RederiveJob(ResolvedJob& job) {
  STRATA_RETURN_IF_ERROR(CheckLayoutArithmetic(job.spec));
  return Derive(job);
}

namespace {
// Context parallelism splits every sequence over the CP ranks; a Gated DeltaNet layer must then
// carry its recurrent state from rank to rank, which only some modules do (job/engine_chain.h,
// GdnPlacement::context_parallel).
Status CheckLinearAttentionContextParallel(const ResolvedJob& job) {
  const int64_t gdn_layers = job.model.CountLayers(MixerKind::kGatedDeltaNet);
  if (job.spec.layout.cp <= 1 || gdn_layers == 0 || job.gdn.context_parallel) return OkStatus();
  return InvalidInput(fmt::format("CP {} cannot run the model's {} Gated DeltaNet layers: {}",
                                  job.spec.layout.cp, gdn_layers, job.gdn.no_context_parallel))
      .InField("parallel.cp")
      .WithHint(
          "set parallel.cp=1, or a framework.version whose Gated DeltaNet runs context "
          "parallelism");
}

// Packed sequences reach a Gated DeltaNet layer as megatron-core's packed_seq_params, which only
// some releases' module takes (job/engine_chain.h, GdnPlacement::packed_sequences).
Status CheckLinearAttentionPacking(const ResolvedJob& job) {
  const int64_t gdn_layers = job.model.CountLayers(MixerKind::kGatedDeltaNet);
  if (!job.spec.sequence.packing || gdn_layers == 0 || job.gdn.packed_sequences) return OkStatus();
  return InvalidInput(fmt::format("packed sequences cannot run the model's {} Gated DeltaNet "
                                  "layers: {}",
                                  gdn_layers, job.gdn.no_packed_sequences))
      .InField("sequence.packing")
      .InFile(job.spec.file)
      .WithHint(
          "set sequence.packing: false (padded samples), or a framework.version whose Gated "
          "DeltaNet takes packed sequences");
}

// The schedule and micro-batch count the job's pipeline engine accepts (job/pipeline_rules.h).
Status CheckPipelineEngine(const ResolvedJob& job) {
  ChainPipelineRule p = job.pipeline_by_mode[static_cast<size_t>(job.spec.sharding.mode)];
  if (job.spec.micro_batches_by_packing) p.rule.looped = LoopedMicroBatches::kAny;
  Status st = CheckPipelineRule(p.rule, p.release, job.spec.layout, job.spec.num_micro_batches(),
                                job.spec.micro_batch);
  if (st.ok()) return st;
  Error e = st.error();
  e.file = job.spec.file;
  return e;
}

// The EP all-to-all overlap with the job's recompute and pipeline, as its framework's release
// launches them (job/overlap_rules.h).
Status CheckMoeA2aOverlap(const ResolvedJob& job) {
  const ChainMoeA2aOverlapRule& r =
      job.moe_a2a_overlap_by_mode[static_cast<size_t>(job.spec.sharding.mode)];
  const JobSpec& spec = job.spec;
  Status st = CheckMoeA2aOverlapRule(r.rule, r.release, spec.overlap.moe_a2a, spec.layout,
                                     spec.recompute.granularity, spec.recompute.modules.moe);
  if (st.ok()) return st;
  Error e = st.error();
  e.file = spec.file;
  return e;
}

// The job's sharding.runtime must be code its framework runs: megatron-core's own sharding
// (megatron, megatron-fsdp) only on a chain through megatron-core, DeepSpeed's and PyTorch's
// FSDP only on one that trains HF or torchtitan code (job/engine_chain.h).
Status CheckShardingRuntime(const ResolvedJob& job) {
  const ShardingRuntime r = job.spec.sharding.runtime;
  // A mode the runtime cannot run (a layout search's) takes the framework's own: nothing to check.
  if (r == ShardingRuntime::kUnstated || !ShardingRuntimeRuns(r, job.spec.sharding.mode)) {
    return OkStatus();
  }
  const bool megatron_side = r == ShardingRuntime::kMegatron || r == ShardingRuntime::kMegatronFsdp;
  const bool megatron_core = job.RunsMegatronCore(job.spec.sharding.mode);
  if (megatron_side == megatron_core) return OkStatus();
  return InvalidInput(
             fmt::format("sharding.runtime {} does not run under framework {} with sharding.mode "
                         "{}: {}",
                         ShardingRuntimeName(r), job.spec.framework.name,
                         ShardingModeName(job.spec.sharding.mode),
                         megatron_core ? "it trains through megatron-core, whose sharding is its "
                                         "own (megatron, megatron-fsdp)"
                                       : "megatron-core's sharding needs a framework that trains "
                                         "through megatron-core"))
      .InField("sharding.runtime")
      .InFile(job.spec.file)
      .WithHint(
          "leave sharding.runtime out (the framework's own), or name the framework that "
          "runs it");
}

// DeepSpeed's ZeRO-1/2 have one switch for running their gradient reduce on its own stream
// behind the backward: overlap_comm (deepspeed/runtime/zero/stage_1_and_2.py, reduce_ipg_grads
// on self.reduction_stream when overlap_comm; with it, the second reduce bucket). The job file
// has two spellings of it, sharding.overlap_comm (the memory ledger's buckets, the step's
// exposure) and overlap.grad_reduce (megatron's flag, the step's per-step reduce): overlap_comm
// is the source of truth and grad_reduce is derived from it; grad_reduce given alone sets it.
Status DeriveDeepSpeedOverlap(ResolvedJob& job) {
  ShardingSpec& sh = job.spec.sharding;
  OverlapSpec& o = job.spec.overlap;
  if (sh.mode != ShardingMode::kZero1 && sh.mode != ShardingMode::kZero2) return OkStatus();
  if (!job.RunsDeepSpeed(sh.mode)) return OkStatus();
  if (o.grad_reduce_given && sh.overlap_comm_given && o.grad_reduce != sh.overlap_comm) {
    return InvalidInput(fmt::format("overlap.grad_reduce {} contradicts sharding.overlap_comm {}: "
                                    "under DeepSpeed's ZeRO-{} both name its overlap_comm",
                                    o.grad_reduce, sh.overlap_comm,
                                    sh.mode == ShardingMode::kZero1 ? 1 : 2))
        .InField("overlap.grad_reduce")
        .InFile(job.spec.file)
        .WithHint("set sharding.overlap_comm alone (overlap.grad_reduce follows it)");
  }
  if (o.grad_reduce_given && !sh.overlap_comm_given) {
    sh.overlap_comm = o.grad_reduce;
    sh.overlap_comm_given = true;
  }
  DeriveDeepSpeedGradReduce(sh, job.RunsDeepSpeed(sh.mode), o);
  return OkStatus();
}

Status Derive(ResolvedJob& job) {
  job.spec.sharding.ApplyReshardDefault(job.spec.framework.name == "torchtitan",
                                        job.spec.layout.pp);
  if (!job.spec.sharding.units_given) job.spec.sharding.units = job.fsdp2_units.units;
  if (!job.spec.sharding.sync_each_micro_batch_given) {
    job.spec.sharding.sync_each_micro_batch = job.accumulation_sync.sync_each_micro_batch;
  }
  STRATA_RETURN_IF_ERROR(DeriveDeepSpeedOverlap(job));
  const JobSpec& spec = job.spec;
  STRATA_RETURN_IF_ERROR(CheckLayoutAgainstModel(spec, job.model, job.query_groups()));
  STRATA_RETURN_IF_ERROR(CheckLinearAttentionContextParallel(job));
  STRATA_RETURN_IF_ERROR(CheckLinearAttentionPacking(job));
  STRATA_RETURN_IF_ERROR(CheckPipelineEngine(job));
  STRATA_RETURN_IF_ERROR(CheckShardingRuntime(job));
  STRATA_RETURN_IF_ERROR(CheckMoeA2aOverlap(job));
  StepShape& step = job.step;
  step.micro_batches = spec.num_micro_batches();
  step.tokens_per_step = static_cast<double>(spec.global_batch) * step.sequence.mean_tokens;
  job.throughput.reset();
  if (spec.throughput.given()) {
    Throughput t;
    if (spec.throughput.tokens_per_s > 0) {
      t.tokens_per_s = spec.throughput.tokens_per_s;
    } else {
      t.step_time_s = spec.throughput.step_time_s;
      t.tokens_per_step = spec.throughput.tokens_per_step > 0 ? spec.throughput.tokens_per_step
                                                              : step.tokens_per_step;
      t.tokens_per_s = t.tokens_per_step / t.step_time_s;
    }
    job.throughput = t;
  }
  return OkStatus();
}
}  // namespace

namespace {
// `engines`: nullptr reads data/frameworks.yaml.
Result<ResolvedJob> ResolveRequest(const JobRequest& request, const FrameworkEngines* engines) {
  const bool reference = request.job.empty() && request.model.empty();
  Result<JobSpec> spec = [&]() -> Result<JobSpec> {
    if (!request.job.empty() || reference) {
      std::vector<std::string> overrides = request.overrides;
      if (!request.model.empty()) overrides.insert(overrides.begin(), "model=" + request.model);
      return LoadJobSpec(reference ? kReferenceJobName : request.job, overrides);
    }
    return BuildJobSpec(request.model, request.overrides);
  }();
  if (!spec.ok()) {
    Error e = std::move(spec).error();
    // `strata mfu llama-3.1-70b`: a model name where a job was expected.
    if (!request.job.empty() && request.model.empty()) {
      auto entry = FindCatalogModel(request.job);
      if (entry.ok() && entry->has_value()) {
        e.hint = fmt::format(
            "'{}' is a model, not a job: give --model {} with --set for the "
            "cluster, layout, batch and sequence, or a job file that names it",
            request.job, request.job);
      }
    }
    return e;
  }
  spec->micro_batches_by_packing = request.micro_batches_by_packing;
  STRATA_ASSIGN_OR_RETURN(ResolvedJob job,
                          engines != nullptr ? ResolveJob(*spec, *engines) : ResolveJob(*spec));
  job.request = request;
  job.reference = reference;
  return job;
}
}  // namespace

Result<ResolvedJob> ResolveJob(const JobRequest& request) {
  return ResolveRequest(request, nullptr);
}

Result<ResolvedJob> ResolveJob(const JobRequest& request, const FrameworkEngines& engines) {
  return ResolveRequest(request, &engines);
}

}  // namespace strata
