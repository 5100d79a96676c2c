#include "strata/rl/rl_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string_view>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/eval/evaluation.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/hw/interconnects.h"
#include "strata/job/resolve_with_engines.h"
#include "strata/memory/sharding.h"
#include "strata/model/flops.h"
#include "strata/model/param_count.h"
#include "strata/rl/response_lengths.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/step_job.h"

namespace strata {
namespace {

std::string TokensArg(double tokens) { return fmt::format("{}", std::llround(tokens)); }

// The actor's job at the RL batch: one mini batch of samples per optimizer step, sequences of
// prompt + response; for a split, on its training side's GPUs (`side`: whole nodes, or the same
// share of every node). `packed`: verl's dynamic
// batch, each DP rank's samples packed into micro batches of a token budget (micro_batch.h), one
// packed row per micro batch; `whole_batch`: the pass takes every sample at once (the forward
// passes), not one mini batch.
// `largest`: the row is the largest micro batch verl's partition can form (the memory's), not
// the balanced one (the time's).
JobRequest ActorRequest(const RlSpec& spec, const SplitShape* side, const ResolvedJob* whole,
                        const PackedMicroBatches* packed = nullptr, int64_t dp = 1, int64_t cp = 1,
                        bool largest = false) {
  JobRequest r;
  r.job = spec.actor_job;
  r.overrides = spec.actor_overrides;
  r.overrides.push_back(fmt::format("batch.global_batch={}", spec.samples() / spec.mini_batches));
  r.overrides.push_back("sequence.max_tokens=" +
                        TokensArg(spec.lengths.prompt_max + spec.lengths.response_max));
  r.overrides.push_back("sequence.mean_tokens=" + TokensArg(spec.TrainerRowTokens()));
  if (whole != nullptr && side != nullptr) {
    const ParallelLayout& l = whole->layout();
    r.overrides.push_back(fmt::format("cluster.nodes={}", side->train_nodes));
    if (side->train_per_node != whole->cluster.gpus_per_node) {
      // Part of every node: the rest of each node generates (a cluster file's node is shared;
      // a cluster written inline has no NICs to share).
      r.overrides.push_back(fmt::format("cluster.gpus_per_node={}", side->train_per_node));
      if (!whole->spec.cluster.file.empty()) {
        r.overrides.push_back(
            fmt::format("cluster.shared_nodes={}", side->shared_nodes ? "true" : "false"));
      }
    }
    // Where the side's GPUs do not divide by TP x PP x CP no DP is given, so the job's own
    // check names the layout that does not fit (a DP of 0 was refused as "got 0").
    const int64_t model_parallel = l.tp * l.pp * l.cp;
    if (side->train_gpus() % model_parallel == 0) {
      r.overrides.push_back(fmt::format("parallel.dp={}", side->train_gpus() / model_parallel));
    }
    // HSDP keeps its shard group (verl's fsdp_size is a GPU count): the side replicates it
    // as often as its GPUs hold it.
    const int64_t replicate = whole->spec.sharding.replicate;
    const int64_t shard = replicate > 1 ? l.dp * l.cp / replicate : 0;
    const int64_t side_dense = side->train_gpus() / (l.tp * l.pp);
    if (shard > 0 && side_dense % shard == 0) {
      r.overrides.push_back(fmt::format("sharding.replicate={}", side_dense / shard));
    }
  }
  if (packed != nullptr) {
    // A packed row attends within each sample (the mean, no spread assumed: the RL job gives a
    // mean and a cap), its length rounded up to what CP's 2 x CP chunks divide.
    const int64_t chunks = 2 * cp;
    auto row = static_cast<int64_t>(
        std::ceil(largest ? packed->largest_micro_batch_tokens : packed->tokens_per_micro_batch));
    row = (row + chunks - 1) / chunks * chunks;
    r.overrides.push_back("batch.micro_batch=1");
    r.overrides.push_back(fmt::format("batch.global_batch={}", packed->micro_batches * dp));
    r.overrides.push_back("sequence.packing=true");
    r.overrides.push_back(fmt::format("sequence.max_tokens={}", row));
    r.overrides.push_back("sequence.std_tokens=0");
  }
  return r;
}

// One pass of the actor's job: its step, and the forward-only part of it.
struct PassTimes {
  MemoryLedger ledger;
  Seconds step;                 // forward, backward and optimizer over the job's global batch
  Seconds forward;              // a forward-only pass over the same batch
  Seconds cp_a2a;               // of `step`: the exposed Ulysses (a2a CP) all-to-alls
  KernelEfficiency efficiency;  // the GPU's, as the step tables resolved it
};

Result<PassTimes> EvaluatePass(const Workspace& workspace, const ResolvedJob& job) {
  PassTimes a;
  STRATA_ASSIGN_OR_RETURN(Evaluation e, EvaluateJob(workspace, job, {.depth = EvalDepth::kStep}));
  a.ledger = std::move(e.ledger);
  a.efficiency = e.setup->tables.efficiency;
  const StepResult& r = *e.step;
  a.step = r.step;
  // A forward-only pass: the forward share of the step's compute, with the same share of its
  // per-micro-batch communication and bubble; no optimizer, no gradient sync.
  const double f = r[StepPart::kForward].total.s();
  const double compute = f + r[StepPart::kBackward].total.s() + r[StepPart::kRecompute].total.s();
  const double once = r.step.s() - r[StepPart::kOptimizer].exposed.s() -
                      r[StepPart::kDpGrad].exposed.s() - r[StepPart::kDpParam].exposed.s() -
                      r[StepPart::kExpertDpGrad].exposed.s() -
                      r[StepPart::kExpertDpParam].exposed.s();
  a.forward = Seconds::Of(compute > 0 ? once * f / compute : 0);
  if (job.layout().cp > 1 && job.layout().cp_comm_type == CpCommType::kA2a) {
    a.cp_a2a = r[StepPart::kCp].exposed;
  }
  return a;
}

struct ActorTimes {
  ResolvedJob job;  // the update's: one mini batch, packed under the dynamic batch
  MemoryLedger ledger;
  Seconds log_prob;       // one forward pass over every sample of the step
  Seconds update;         // every mini batch, every epoch
  Seconds update_cp_a2a;  // of `update`: the exposed Ulysses all-to-alls
  // The log-prob passes run under torch.no_grad (MemoryLedger::no_grad), at the logits and the
  // log-prob kernel's buffers. The old log-prob pass computes the entropy too, and verl's
  // megatron actor without use_fused_kernels clones the logits for it (no_grad.with_entropy);
  // with use_fused_kernels it never materialises them. The RL job does not say which, so
  // neither is added: the clone's 2 B per logit is left out (docs/rl.md).
  Bytes log_prob_forward_peak;
  Bytes reference_forward_peak;
  // PPO's critic: the actor's model and layout, at the critic's own micro batches.
  Seconds critic_values;
  Seconds critic_update;
  MemoryLedger critic_ledger;
  Bytes critic_values_forward_peak;  // no_grad, a value head instead of the logits
  KernelEfficiency efficiency;
  std::vector<RlMicroBatch> micro_batches;  // dynamic batch: each pass's packing
  int64_t fixed_micro_batch = 1;            // the job's own batch.micro_batch
};

// The resolve error of the actor's job, pointed at the RL job.
Error ActorJobError(const RlSpec& spec, const Error& inner, const std::string& what) {
  // The overrides are strata's (batch, sequence) or the RL file's actor.set / actor.* keys.
  std::string field = inner.field;
  if (field.starts_with("--set")) field = field.substr(std::min<size_t>(field.size(), 6));
  Error error = InvalidInput(fmt::format(
      "the actor's job ({}) at {} samples per mini batch ({} prompts x {} samples / {} mini "
      "batches) and {}-token sequences{}: {}{}",
      spec.actor_job, spec.samples() / spec.mini_batches, spec.prompts, spec.samples_per_prompt,
      spec.mini_batches, std::llround(spec.lengths.prompt_max + spec.lengths.response_max), what,
      field.empty() ? "" : field + ": ", inner.message));
  error.file = spec.file;
  error.field = "actor";
  error.hint = inner.hint;
  if (inner.message.starts_with("unknown key")) {
    error.hint += " (a key of the actor's job is set as actor.<key>)";
  }
  return error;
}

// The actor's passes on a split's training side (nullptr: every GPU of the actor's job): the
// update, the log-prob forward and PPO's critic, each at its micro batch (fixed: the job's;
// dynamic: verl's packing).
Result<ActorTimes> EvaluateActor(const Workspace& workspace, const RlSpec& spec,
                                 const SplitShape* side, const ResolvedJob* whole) {
  ActorTimes a;
  const FrameworkEngines& engines = workspace.memory.engines;  // read once by the workspace
  auto fixed = ResolveJob(ActorRequest(spec, side, whole), engines);
  int64_t asked_micro = 0;
  if (!fixed.ok() && spec.dynamic_batch()) {
    // Under the dynamic batch the job's fixed micro batch is not what runs (verl ignores
    // ppo_micro_batch_size_per_gpu): its layout is read at one sample a micro batch.
    JobRequest one = ActorRequest(spec, side, whole);
    one.overrides.push_back("batch.micro_batch=1");
    // verl's packing sets the count, a multiple of PP under interleaving (checked below).
    one.micro_batches_by_packing = true;
    auto layout_only = ResolveJob(one, engines);
    if (layout_only.ok()) {
      fixed = std::move(layout_only);
      // The micro batch the job asks, for the report's comparison.
      for (const std::string& o : spec.actor_overrides) {
        if (!o.starts_with("batch.micro_batch=")) continue;
        if (auto v = ParseInt64(o.substr(18)); v.has_value()) asked_micro = *v;
      }
    }
  }
  // A split's training side is said in a placement row: the job module's reason alone.
  if (!fixed.ok() && whole != nullptr) return std::move(fixed).error();
  if (!fixed.ok()) return ActorJobError(spec, fixed.error(), "");
  a.fixed_micro_batch = asked_micro > 0 ? asked_micro : fixed->spec.micro_batch;
  const auto mini = static_cast<double>(spec.mini_batches);
  const double passes = mini * static_cast<double>(spec.epochs);
  const bool ppo = spec.algorithm == RlAlgorithm::kPpo;
  if (!spec.dynamic_batch()) {
    STRATA_ASSIGN_OR_RETURN(PassTimes p, EvaluatePass(workspace, *fixed));
    a.job = std::move(fixed).value();
    a.ledger = p.ledger;
    a.efficiency = p.efficiency;
    a.update = p.step * passes;
    a.update_cp_a2a = p.cp_a2a * passes;
    a.log_prob = p.forward * mini;
    a.log_prob_forward_peak = p.ledger.no_grad.log_probs;
    a.reference_forward_peak = p.ledger.no_grad.log_probs;
    a.critic_values = ppo ? a.log_prob : Seconds();
    a.critic_update = ppo ? a.update : Seconds();
    a.critic_ledger = p.ledger;
    a.critic_values_forward_peak = ppo ? p.ledger.no_grad.values : Bytes();
    return a;
  }
  const ParallelLayout& l = fixed->layout();
  const double longest = spec.lengths.prompt_max + spec.lengths.response_max;
  const double mean = spec.TrainerRowTokens();
  // The samples one rank packs, as generation has them (the response distribution's quantiles
  // at (i + 0.5) / n after the mean prompt); without remove_padding each at its caps.
  auto sample_tokens = [&](double samples_per_rank) {
    const auto n = static_cast<int64_t>(std::ceil(samples_per_rank));
    if (!spec.remove_padding) return std::vector<double>(static_cast<size_t>(n), longest);
    std::vector<double> out = QuantileLengths(spec.lengths.Responses(), n);
    for (double& tokens : out) tokens += spec.lengths.prompt_mean;
    return out;
  };
  const double per_rank_mini =
      static_cast<double>(spec.samples()) / mini / static_cast<double>(l.dp);
  const double per_rank_all = static_cast<double>(spec.samples()) / static_cast<double>(l.dp);
  // verl packs the whole batch's samples padded to prompt_max + response_max and asserts the
  // budget holds one of them (seqlen_balancing.py rearrange_micro_batches).
  struct Budget {
    const char* key;
    int64_t tokens;
  };
  for (const Budget& b : {Budget{"batch.max_tokens_per_gpu", spec.max_tokens_per_gpu},
                          Budget{"batch.log_prob_max_tokens_per_gpu", spec.LogProbBudget()},
                          Budget{"batch.critic_max_tokens_per_gpu", spec.CriticBudget()}}) {
    if (std::string_view(b.key).starts_with("batch.critic") && !ppo) continue;
    if (static_cast<double>(b.tokens * l.cp) < longest) {
      return InvalidInput(
                 fmt::format("{} {} x CP {} = {} tokens is less than one sample of prompt_max + "
                             "response_max = {} tokens: verl refuses it (max_token_len must be "
                             "greater than the sequence length)",
                             b.key, GroupDigits(static_cast<double>(b.tokens)), l.cp,
                             GroupDigits(static_cast<double>(b.tokens * l.cp)),
                             GroupDigits(longest)))
          .InFile(spec.file)
          .InField(b.key)
          .WithHint(fmt::format(
              "a budget of at least {} tokens per GPU (volcengine/verl@"
              "b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/seqlen_balancing.py:382)",
              GroupDigits(std::ceil(longest / static_cast<double>(l.cp)))));
    }
  }
  // One resolved and evaluated pass per distinct packing.
  auto pass = [&](const char* name, double samples_per_rank, int64_t budget,
                  bool mini_batch) -> Result<std::pair<ResolvedJob, PassTimes>> {
    // Interleaved pipelining: megatron-core's microbatch_group_size_per_vp_stage defaults to
    // the pipeline size (megatron/core/transformer/transformer_config.py, __post_init__).
    const PackedMicroBatches packed =
        PackMicroBatches(samples_per_rank, mean, budget, l.cp, l.vpp > 1 ? l.pp : 1,
                         sample_tokens(samples_per_rank));
    // verl asserts num_micro_batches <= len(seq_len_effective) after rounding the count up to
    // the pipeline's group (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/
    // seqlen_balancing.py, rearrange_micro_batches).
    const auto samples = static_cast<int64_t>(std::ceil(samples_per_rank));
    if (packed.micro_batches > samples) {
      return InvalidInput(
                 fmt::format("{}: the micro batch count rounds up to {} per DP rank (a multiple of "
                             "PP {} under interleaved pipelining) but each rank has {} sample{}: "
                             "verl refuses it (num_micro_batches must not exceed the samples)",
                             name, packed.micro_batches, l.pp, samples, samples == 1 ? "" : "s"))
          .InFile(spec.file)
          .InField("actor")
          .WithHint(fmt::format(
              "give each DP rank at least {} samples (more prompts, fewer mini batches or a "
              "smaller DP), or turn interleaving off (actor.parallel.vpp=1)",
              packed.micro_batches));
    }
    a.micro_batches.push_back({name, packed, mini_batch});
    auto job = ResolveJob(ActorRequest(spec, side, whole, &packed, l.dp, l.cp), engines);
    if (!job.ok() && whole != nullptr) return std::move(job).error();
    if (!job.ok()) {
      return ActorJobError(
          spec, job.error(),
          fmt::format(", packed by verl's dynamic batch ({}: {})", name, DescribePacked(packed)));
    }
    STRATA_ASSIGN_OR_RETURN(PassTimes p, EvaluatePass(workspace, *job));
    // The time is the balanced micro batches'; the memory peak is the largest one's.
    if (packed.largest_micro_batch_tokens > packed.tokens_per_micro_batch + 0.5) {
      auto largest =
          ResolveJob(ActorRequest(spec, side, whole, &packed, l.dp, l.cp, true), engines);
      if (!largest.ok() && whole != nullptr) return std::move(largest).error();
      if (!largest.ok()) {
        return ActorJobError(
            spec, largest.error(),
            fmt::format(", packed by verl's dynamic batch ({}: {})", name, DescribePacked(packed)));
      }
      STRATA_ASSIGN_OR_RETURN(Evaluation m,
                              EvaluateJob(workspace, *largest, {.depth = EvalDepth::kMemory}));
      p.ledger = std::move(m.ledger);
    }
    return std::pair{std::move(job).value(), std::move(p)};
  };
  STRATA_ASSIGN_OR_RETURN(auto update,
                          pass("actor update", per_rank_mini, spec.max_tokens_per_gpu, true));
  STRATA_ASSIGN_OR_RETURN(auto log_prob,
                          pass("log-prob passes", per_rank_all, spec.LogProbBudget(), false));
  a.job = std::move(update.first);
  a.ledger = update.second.ledger;
  a.efficiency = update.second.efficiency;
  a.update = update.second.step * passes;
  a.update_cp_a2a = update.second.cp_a2a * passes;
  a.log_prob = log_prob.second.forward;
  a.log_prob_forward_peak = log_prob.second.ledger.no_grad.log_probs;
  a.reference_forward_peak = log_prob.second.ledger.no_grad.log_probs;
  a.critic_ledger = a.ledger;
  if (ppo) {
    STRATA_ASSIGN_OR_RETURN(auto critic,
                            pass("critic update", per_rank_mini, spec.CriticBudget(), true));
    STRATA_ASSIGN_OR_RETURN(auto values,
                            pass("critic values", per_rank_all, spec.CriticBudget(), false));
    a.critic_update = critic.second.step * passes;
    a.critic_values = values.second.forward;
    a.critic_ledger = critic.second.ledger;
    a.critic_values_forward_peak = values.second.ledger.no_grad.values;
  }
  return a;
}

struct RolloutSetup {
  const ResolvedJob* job = nullptr;
  const RlSpec* spec = nullptr;
  const RlConstants* constants = nullptr;
  KernelEfficiency efficiency;
  ParamBreakdown params;
  // What the counters reach on one GPU (the memory ledger's UsableCapacity): vLLM's budget is
  // gpu_memory_utilization x torch.cuda.mem_get_info()'s total (gpu_worker.py), not x the
  // datasheet's "GB".
  Bytes capacity;
  // The cluster's collective model: the rollout's TP all-reduces inside a node.
  std::shared_ptr<const CollectiveModel> comm;
};

Bytes RolloutModelBytes(const RolloutSetup& s) {
  const auto total = static_cast<double>(s.params.text_total() + s.params.vision.total);
  return Bytes::Count(total * static_cast<double>(s.spec->rollout.weight_bytes));
}

RolloutMemory RolloutMemoryOf(const RolloutSetup& s, int64_t tp, double utilization,
                              Bytes resident) {
  const RlSpec& spec = *s.spec;
  RolloutMemoryInput in;
  in.capacity = s.capacity;
  in.weights = RolloutModelBytes(s) / static_cast<double>(tp);
  in.resident = resident;
  in.kv = ComputeKvFootprint(s.job->model, tp, spec.rollout.dtypes);
  in.max_sequence_tokens = spec.lengths.prompt_max + spec.lengths.response_max;
  in.mean_sequence_tokens = spec.lengths.prompt_mean + spec.lengths.response_mean;
  in.utilization = utilization;
  in.cuda_graph_inside = spec.rollout.vllm.AtLeast(s.constants->cuda_graph_counted_from.major,
                                                   s.constants->cuda_graph_counted_from.minor);
  in.non_torch = s.constants->NonTorch(tp);
  in.activation_peak = s.constants->activation_peak;
  in.cuda_graph = spec.rollout.enforce_eager ? Bytes() : s.constants->cuda_graph;  // none captured
  in.max_num_seqs = spec.rollout.max_num_seqs;
  return ComputeRolloutMemory(in);
}

GenerationTime GenerationOf(const RolloutSetup& s, int64_t rollout_gpus,
                            const RolloutMemory& memory, DecodeInput* used = nullptr) {
  const RlSpec& spec = *s.spec;
  const ModelConfig& model = s.job->model;
  const int64_t tp = spec.rollout.tp;
  const double instances = static_cast<double>(std::max<int64_t>(1, rollout_gpus / tp));
  const auto wbytes = static_cast<double>(spec.rollout.weight_bytes);
  GenerationInput g;
  DecodeInput& d = g.decode;
  const auto expert = static_cast<double>(s.params.text_expert());
  // Every step reads all weights but the input embedding (only the batch's rows) and the
  // routed experts the batch does not touch.
  const auto dense = static_cast<double>(s.params.text_total()) - expert -
                     static_cast<double>(s.params.text[ModuleKind::kEmbedding]);
  d.dense_weights = Bytes::Count(dense * wbytes);
  d.expert_weights = Bytes::Count(expert * wbytes);
  d.experts = model.moe.num_experts;
  d.top_k = model.moe.top_k;
  d.tp = tp;
  d.kv = ComputeKvFootprint(model, tp, spec.rollout.dtypes);
  const double context = spec.lengths.prompt_mean + spec.lengths.response_mean / 2;
  d.flop_per_token = CountForwardFlops(model, context, AttentionMask::kNonCausal).main();
  d.hbm_bandwidth = s.job->gpu().hbm_bandwidth;
  d.hbm_efficiency = s.efficiency.hbm_efficiency;
  d.peak = s.job->gpu().bf16_dense;
  d.compute_efficiency = s.efficiency.gemm_large * s.efficiency.sustained_clock;
  d.step_overhead = s.constants->decode_step_overhead;
  d.eager_factor = spec.rollout.enforce_eager ? s.constants->eager_factor : 1;
  // vLLM's row-parallel layers end in an all-reduce over the instance's TP ranks: the attention
  // output projection and the MLP's (or the MoE's) down projection, once each a layer and a
  // decode step, of one token's bf16 hidden state per sequence.
  d.tp_comm = s.comm;
  d.tp_allreduces_per_step = 2 * static_cast<int64_t>(model.layers.size());
  d.tp_allreduce_bytes_per_sequence = Bytes::Count(static_cast<double>(model.hidden_size) * 2.0);
  g.prompts = static_cast<double>(spec.prompts) / instances;
  g.samples = static_cast<double>(spec.samples()) / instances;
  g.prompt_mean = spec.lengths.prompt_mean;
  g.response = spec.lengths.Responses();
  g.prefill_flop_per_token =
      CountForwardFlops(model, spec.lengths.prompt_mean, AttentionMask::kCausal).main();
  g.prefill_efficiency = d.compute_efficiency;
  g.concurrent_sequences = std::max<int64_t>(1, memory.concurrent_sequences);
  const GenerationTime t = ComputeGeneration(g);
  if (used != nullptr) {
    *used = d;
    used->batch = t.batch;
    used->context_tokens = context;
  }
  return t;
}

// The link a split's weight sync crosses. verl's one-step-off recipe broadcasts every tensor
// from the trainer's rank 0 to the rollout's workers over one NCCL group (its README,
// "Parameter Synchronization"): with both sides in one node the bytes stay on the node's GPU
// link (NVLink, else PCIe); once a rollout GPU is on another node the broadcast crosses the data
// NICs, each node taking the whole model in at its NICs' bandwidth.
struct SyncLink {
  std::string name;
  BytesPerSecond rate;
};

SyncLink SplitSyncLink(const ResolvedJob& job, const BandwidthMap* map, const SplitShape& shape) {
  if (shape.one_node()) {
    const MapLevel* fabric = nullptr;
    const MapLevel* pcie = nullptr;
    for (size_t i = 0; map != nullptr && i < map->levels.size(); ++i) {
      if (map->levels[i].kind == MapLevelKind::kGpuFabric) fabric = &map->levels[i];
      if (map->levels[i].kind == MapLevelKind::kPcie) pcie = &map->levels[i];
    }
    if (fabric != nullptr) return {fabric->name + " inside the node", fabric->per_gpu};
    if (pcie != nullptr) return {pcie->name + " inside the node", pcie->per_gpu};
    if (job.gpu().has_gpu_fabric()) {
      return {"NVLink inside the node", job.gpu().nvlink_bandwidth_per_direction()};
    }
  }
  return {"the data NICs of a node", job.cluster.DataNicBandwidthPerNode()};
}

// `link`: nullptr colocated (CUDA IPC handles, no transfer).
WeightSync SyncOf(const RolloutSetup& s, const ParallelLayout& train, const SyncLink* link) {
  WeightSync w;
  const ResolvedJob& job = *s.job;
  w.model_bytes = RolloutModelBytes(s);
  const double expert_share =
      static_cast<double>(s.params.text_expert()) /
      static_cast<double>(std::max<int64_t>(1, s.params.text_total() + s.params.vision.total));
  const auto expert_shards = static_cast<double>(train.ep * train.etp * train.pp);
  const auto dense_shards = static_cast<double>(train.tp * train.pp);
  const Bytes gathered = w.model_bytes * (expert_share * (1 - 1 / expert_shards) +
                                          (1 - expert_share) * (1 - 1 / dense_shards));
  const BytesPerSecond gather_link = job.gpu().has_gpu_fabric()
                                         ? job.gpu().nvlink_bandwidth_per_direction()
                                         : job.cluster.DataNicBandwidthPerGpu();
  w.gather = gathered / gather_link;
  w.convert = w.model_bytes / s.constants->sync_convert_bandwidth;
  if (link != nullptr) {
    w.link = link->name;
    w.rate = link->rate;
    w.transfer = w.model_bytes / link->rate;
  }
  w.load = (w.model_bytes / static_cast<double>(s.spec->rollout.tp)) /
           (job.gpu().hbm_bandwidth * s.efficiency.hbm_efficiency);
  w.total = w.gather + w.convert + w.transfer + w.load;
  return w;
}

// One trained model's states in the actor's ledger, split as verl's hybrid engine moves them.
struct ModelStates {
  Bytes weights;
  Bytes gradients;  // the gradient buffer
  Bytes master;     // fp32 master weights
  Bytes moments;    // optimizer moments; not the step's transient gradient copy
  Bytes All() const { return weights + gradients + master + moments; }
};

// The runtime's working sets (FSDP2's gathered units, the unsharded gradients before their
// reduce-scatter) are allocated and freed inside a pass: verl offloads the sharded parameters
// and optimizer states (fsdp_utils.py offload_fsdp_model_to_cpu, offload_fsdp_optimizer), and a
// forward's peak does not hold the backward's gradients, so neither is a state here.
ModelStates StatesOf(const MemoryLedger& ledger) {
  ModelStates s;
  for (const LedgerItem& item : ledger.items) {
    if (IsShardingWorkingSet(item)) continue;
    if (item.kind == ItemKind::kWeights) s.weights += item.bytes;
    if (item.kind == ItemKind::kGradients) s.gradients += item.bytes;
    if (item.kind != ItemKind::kOptimizer) continue;
    if (item.name.starts_with("optimizer: master weights")) {
      s.master += item.bytes;
    } else if (!item.name.starts_with("optimizer step:")) {
      s.moments += item.bytes;
    }
  }
  return s;
}

// The trainer's CUDA context and NCCL buffers. Its allocator cache does not stay between
// phases: the hybrid engine empties it before waking the rollout (verl fsdp_workers.py
// rollout_mode: aggressive_empty_cache(force_sync=True), before loading weights or resuming the
// KV cache) and after each pass (compute_ref_log_prob, megatron_workers.py).
Bytes TrainerOverhead(const MemoryLedger& ledger) {
  const Bytes cache = ledger.peak_counters.reserved - ledger.peak_counters.allocated;
  return ledger.Total(ItemKind::kOverhead) - cache;
}

// megatron-core's DDP gradient buffer stays between steps (the distributed optimizer shards the
// states, not it); verl's FSDP actor (sharded parameters: ZeRO-3, FSDP2, and zero2 on its FSDP1
// workers, FsdpHoldingOf) frees its gradients.
bool KeepsGradientBuffer(const ResolvedJob& job) { return !FsdpHoldingOf(job).weights_sharded; }

// Each training phase's peak per GPU: its own working set plus what the other models keep on
// the GPU then. What stays between phases follows verl's offload settings per role
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7: verl/workers/megatron_workers.py
// compute_log_prob, compute_ref_log_prob, compute_values, update_actor, update_critic;
// fsdp_workers.py likewise). Not offloaded, a trained model keeps its weights, optimizer states
// and (megatron-core's DDP buffer) gradients between its passes; FSDP's gradients are freed by
// the update's closing zero_grad (verl/workers/actor/dp_actor.py:668, critic/dp_critic.py:262).
// Offloaded, a forward loads the parameters only (load_megatron_model_to_gpu(load_grad=False) for
// the actor; the critic's compute_values loads the gradient buffer with them) and an update loads
// everything. The frozen reference keeps its weights unless ref.megatron.param_offload (FSDP's
// reference always runs under CPUOffload, fsdp_workers.py:526 and 552).
struct PhasePeaks {
  Bytes beside_rollout;  // the trainer's context and every model kept, while vLLM generates
  Bytes log_prob;        // the actor's old log-prob pass
  Bytes reference;       // the reference's pass
  Bytes critic_values;
  Bytes update;
  Bytes critic_update;
  Bytes other_models;  // what the other models keep beside the actor's update
};

PhasePeaks PhasePeaksOf(const RlSpec& spec, const ResolvedJob& job, const ActorTimes& a,
                        bool offload_trainer) {
  const bool ppo = spec.algorithm == RlAlgorithm::kPpo;
  const ModelStates st = StatesOf(a.ledger);
  const bool grad_buffer = KeepsGradientBuffer(job);
  const Bytes kept_grads = grad_buffer ? st.gradients : Bytes();
  const Bytes idle = st.weights + kept_grads + st.master + st.moments;
  const Bytes actor_kept = offload_trainer ? Bytes() : idle;
  const Bytes critic_kept = ppo && !offload_trainer ? idle : Bytes();
  const Bytes reference_kept =
      spec.reference_weights() && !spec.offload_reference ? st.weights : Bytes();
  // The passes' forward peaks are step 1's under torch.no_grad (MemoryLedger::no_grad): weights,
  // gradients, master weights (no moments yet), one layer's or the head's tensors. A forward's
  // own working set is the weights and those tensors. verl runs each pass without autograd
  // (volcengine/verl@025e52287947d339b1d55317a18727ab9e0b84e1: verl/workers/actor/
  // megatron_actor.py, compute_log_prob: `with torch.no_grad(): self.forward_backward_batch(...,
  // forward_only=True)`; megatron-core's forward_only schedule keeps no micro batch's tensors
  // for a backward); the old log-prob pass computes the entropy beside the log-probs, the
  // reference's does not (megatron_workers.py, compute_log_prob calculate_entropy=True,
  // compute_ref_log_prob calculate_entropy=False).
  const Bytes beyond_weights = st.gradients + st.master;
  const Bytes own_actor = offload_trainer ? Bytes() : idle - st.weights;
  const Bytes own_critic = offload_trainer ? kept_grads : Bytes(idle - st.weights);
  PhasePeaks p;
  p.beside_rollout = TrainerOverhead(a.ledger) + actor_kept + critic_kept + reference_kept;
  // verl's bypass mode runs no old log-prob pass, so that phase never happens.
  p.log_prob = spec.old_log_prob_pass ? a.log_prob_forward_peak - beyond_weights + own_actor +
                                            critic_kept + reference_kept
                                      : Bytes();
  // The actor's own forward with its adapter disabled (ref_in_actor) holds what the old
  // log-prob pass holds; a separate reference's forward its own weights beside the actor's states.
  p.reference = !spec.reference_model ? Bytes()
                : spec.reference_in_actor
                    ? a.reference_forward_peak - beyond_weights + own_actor + critic_kept
                    : a.reference_forward_peak - beyond_weights + actor_kept + critic_kept;
  if (ppo) {
    p.critic_values =
        a.critic_values_forward_peak - beyond_weights + own_critic + actor_kept + reference_kept;
    p.critic_update = a.critic_ledger.Peak() + actor_kept + reference_kept;
  }
  p.other_models = critic_kept + reference_kept;
  p.update = a.ledger.Peak() + p.other_models;
  return p;
}

// The copies verl's offload settings make each step on one GPU (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7: verl/workers/megatron_workers.py rollout_mode,
// compute_log_prob, compute_ref_log_prob, compute_values, update_actor, update_critic; the FSDP
// workers likewise; verl/utils/megatron_utils.py load_megatron_model_to_gpu,
// offload_megatron_model_to_cpu, load_megatron_optimizer, offload_megatron_optimizer). An
// offloaded trained model's weights go up before and down after each pass that needs them (the
// actor: the weight sync's rollout_mode, the old log-prob pass, the update; PPO's critic: its
// values pass and its update), its master weights and moments around its update; the gradient
// buffer is resized and zeroed on the GPU, not copied. A state the ledger keeps in host memory
// (a CPU optimizer: megatron's optimizer_cpu_offload) is not moved: it never leaves the host. The
// megatron reference's weights go up and down around its pass; FSDP's reference runs under
// CPUOffload, which copies its shards up and keeps the host copy. Priced at the PCIe level's
// per-direction rate per GPU (the bandwidth map's x16 line rate: an upper bound on the rate)
// where the host buffer is pinned; verl's FSDP2 workers move a trained model's parameters
// through pageable memory (model.cpu(), model.to(device): verl-project/verl@
// 0094eb2057e6f3210c2a4fca88704689d02879aa:verl/utils/fsdp_utils.py:196-225), whose rate is the
// host's (data/rl_constants.yaml, host_copy): half of each up-and-down pair at the pageable
// host-to-device rate, half at the device-to-host one, neither above the link's.
OffloadTransfers OffloadOf(const RlSpec& spec, const ResolvedJob& job, const ActorTimes& a,
                           const MapLevel& pcie, bool offload_trainer,
                           const RlConstants& constants) {
  OffloadTransfers o;
  o.level = pcie.name;
  o.rate = pcie.per_gpu;
  auto add = [&](std::string what, Bytes bytes) {
    if (bytes.value() <= 0 || o.rate.value() <= 0) return;
    const Seconds t = bytes / o.rate;
    o.copies.push_back({std::move(what), bytes, t});
    o.bytes += bytes;
    o.total = o.total + t;
  };
  // FSDP2's parameters (its bf16 weights and the fp32 copy the ledger calls master weights: one
  // module's tensors) go through pageable memory; the optimizer's moments stay pinned.
  const bool pageable = job.spec.sharding.mode == ShardingMode::kFsdp2;
  const BytesPerSecond up =
      BytesPerSecond::Of(std::min(o.rate.value(), constants.pageable_h2d.value()));
  const BytesPerSecond down =
      BytesPerSecond::Of(std::min(o.rate.value(), constants.pageable_d2h.value()));
  auto add_params = [&](std::string what, Bytes bytes) {
    if (!pageable) return add(std::move(what), bytes);
    if (bytes.value() <= 0 || o.rate.value() <= 0) return;
    const Seconds t = bytes * 0.5 / up + bytes * 0.5 / down;
    o.copies.push_back({std::move(what) + fmt::format(" (pageable: {} up, {} down)", FormatGBps(up),
                                                      FormatGBps(down)),
                        bytes, t});
    o.bytes += bytes;
    o.total = o.total + t;
  };
  const ModelStates st = StatesOf(a.ledger);
  if (offload_trainer) {
    // Without the old log-prob pass (verl's bypass mode) its load and offload are not made.
    if (spec.old_log_prob_pass) {
      add_params(
          "actor weights: up and down around the weight sync, the old log-prob pass and the "
          "update",
          st.weights * 6.0);
    } else {
      add_params("actor weights: up and down around the weight sync and the update",
                 st.weights * 4.0);
    }
    if (pageable) {
      add_params("actor master weights: up and down around the update", st.master * 2.0);
      add("actor moments: up and down around the update", st.moments * 2.0);
    } else {
      add("actor master weights and moments: up and down around the update",
          (st.master + st.moments) * 2.0);
    }
    // ref_in_actor: the reference pass loads the actor's weights and offloads them after
    // (fsdp_workers.py compute_ref_log_prob -> compute_log_prob; megatron_workers.py likewise).
    if (spec.reference_model && spec.reference_in_actor) {
      add_params("actor weights: up and down around the reference pass (its adapter disabled)",
                 st.weights * 2.0);
    }
    if (spec.algorithm == RlAlgorithm::kPpo) {
      const ModelStates cs = StatesOf(a.critic_ledger);
      add_params("critic weights: up and down around the values pass and the update",
                 cs.weights * 4.0);
      if (pageable) {
        add_params("critic master weights: up and down around the update", cs.master * 2.0);
        add("critic moments: up and down around the update", cs.moments * 2.0);
      } else {
        add("critic master weights and moments: up and down around the update",
            (cs.master + cs.moments) * 2.0);
      }
    }
  }
  if (spec.reference_weights() && spec.offload_reference) {
    const bool fsdp = !KeepsGradientBuffer(job);
    add(fsdp ? "reference weights: up for its pass (FSDP's CPUOffload keeps the host copy)"
             : "reference weights: up and down around its pass",
        st.weights * (fsdp ? 1.0 : 2.0));
  }
  return o;
}

}  // namespace

Seconds TrainingOf(const RlTimes& t) {
  return t.old_log_prob + t.reference + t.critic_values + t.update + t.critic_update + t.offload;
}

namespace {

// Why the best split stops where it does, from the splits' own numbers (docs/rl.md, "Which
// splits"): one step off, the longer side bounds the step; else the next split with more rollout
// GPUs shows what grows (training on fewer GPUs, or the sync over more nodes) against what
// generation gains, and generation near its floor (the longest sample decoded alone) gains
// nothing.
SplitLimit LimitOf(const RlEvaluation& e, const RlSpec& spec) {
  SplitLimit l;
  const RlPlacementResult& best = e.splits[static_cast<size_t>(e.best_split)];
  DecodeInput alone = e.decode;
  alone.batch = 1;
  l.longest_sample =
      SimulateDecode({spec.lengths.response_max}, 1, spec.lengths.prompt_mean, alone).time;
  for (size_t i = 0; i < e.splits.size(); ++i) {
    const RlPlacementResult& r = e.splits[i];
    if (!r.valid || r.one_step_off != best.one_step_off || r.rollout_gpus <= best.rollout_gpus) {
      continue;
    }
    if (l.next < 0 || r.rollout_gpus < e.splits[static_cast<size_t>(l.next)].rollout_gpus) {
      l.next = static_cast<int>(i);
    }
  }
  const Seconds training = TrainingOf(best.times);
  // Within 10% of its floor, generation has nothing left to gain from more instances.
  const bool at_floor = best.times.generation <= l.longest_sample * 1.1;
  if (best.one_step_off && training >= best.times.generation) {
    l.bound = "the training side";
  } else if (at_floor || l.next < 0) {
    l.bound = "the longest sample's decode";
  } else {
    const RlPlacementResult& next = e.splits[static_cast<size_t>(l.next)];
    const Seconds train_growth = TrainingOf(next.times) - training;
    const Seconds sync_growth = next.times.weight_sync - best.times.weight_sync;
    l.bound = train_growth >= sync_growth ? "the training side" : "the weight sync";
  }
  return l;
}

// A split's actor job on part of each node (cluster.shared_nodes: its training side, the rest
// of each node the rollout's) widened to whole nodes: the actor's overrides that put it on every
// GPU of the cluster file's nodes, its HSDP groups kept (as a split's side keeps them). The
// rollout's share must be the rest of each node.
Result<std::vector<std::string>> WholeNodeOverrides(const RlSpec& spec, const ResolvedJob& job) {
  auto file = LoadCluster(job.spec.cluster.file);
  if (!file.ok()) return Error(file.error()).InFile(spec.file).InField("actor");
  const int64_t nodes = job.cluster.nodes;
  const int64_t node_gpus = file->gpus_per_node;
  const int64_t rollout_share = node_gpus - job.cluster.gpus_per_node;
  if (spec.rollout_gpus != rollout_share * nodes) {
    return InvalidInput(
               fmt::format("placement.rollout_gpus {} is not the other {} GPUs of each of the "
                           "actor's {} nodes ({} of {} GPUs a node train: cluster.shared_nodes "
                           "of its job): {} x {} = {}",
                           spec.rollout_gpus, rollout_share, nodes, job.cluster.gpus_per_node,
                           node_gpus, rollout_share, nodes, rollout_share * nodes))
        .InFile(spec.file)
        .InField("placement.rollout_gpus")
        .WithHint(fmt::format("set placement.rollout_gpus: {}", rollout_share * nodes));
  }
  std::vector<std::string> out = {fmt::format("cluster.gpus_per_node={}", node_gpus),
                                  "cluster.shared_nodes=false"};
  const ParallelLayout& l = job.layout();
  const int64_t model_parallel = l.tp * l.pp * l.cp;
  if ((nodes * node_gpus) % model_parallel == 0) {
    out.push_back(fmt::format("parallel.dp={}", nodes * node_gpus / model_parallel));
  }
  const int64_t replicate = job.spec.sharding.replicate;
  const int64_t shard = replicate > 1 ? l.dp * l.cp / replicate : 0;
  const int64_t dense = nodes * node_gpus / (l.tp * l.pp);
  if (shard > 0 && dense % shard == 0) {
    out.push_back(fmt::format("sharding.replicate={}", dense / shard));
  }
  return out;
}

// The actor over every GPU (`wide`: the actor's overrides widened to whole nodes). Where it
// cannot run there (its batch does not divide over the wider DP, which verl would refuse
// colocated too), `refusal` says why and the job returned holds the layout alone (one sample a
// micro batch), for the cluster every split is cut from; the passes stay the side's.
Result<ActorTimes> WholeClusterActor(const Workspace& workspace, const RlSpec& wide,
                                     const ActorTimes& side, std::string* refusal) {
  const int64_t nodes = side.job.cluster.nodes;
  const int64_t gpus = nodes * side.job.cluster.gpus_per_node + wide.rollout_gpus;
  // Every GPU as one side of the split (its error alone, as a split's row says it).
  const SplitShape all{.train_nodes = nodes, .train_per_node = gpus / nodes};
  auto whole = EvaluateActor(workspace, wide, &all, &side.job);
  if (whole.ok()) return whole;
  *refusal = fmt::format("the actor over all {} GPUs: {}", gpus, whole.error().message);
  JobRequest layout = ActorRequest(wide, nullptr, nullptr);
  layout.overrides.push_back("batch.micro_batch=1");
  const ParallelLayout& l = side.job.layout();
  layout.overrides.push_back(fmt::format("batch.global_batch={}", gpus / (l.tp * l.pp * l.cp)));
  auto resolved = ResolveJob(layout, workspace.memory.engines);
  if (!resolved.ok()) return ActorJobError(wide, resolved.error(), "over every GPU");
  ActorTimes wide_times = side;
  wide_times.job = std::move(resolved).value();
  return wide_times;
}

// A split whose actor's job, over every GPU of its whole nodes, cannot take the RL batch (a
// mini batch that divides over some split's training side and not over every GPU, as verl would
// refuse the same launch colocated): the colocated placement is not possible (`refusal` says
// why) and the splits are still priced. The cluster every split is cut from is the job's layout
// alone, read at one sample a micro batch: first at a global batch that any DP of up to 2^12 x
// 3^4 x 5^2 x 7 x 11 x 13 x 17 x 19 x 23 divides, to learn the DP, then at DP x PP. The passes
// priced for the colocated row are the first split's training side that runs (they are not
// shown: that row is not possible). `whole_error`, the job's own error, is returned where no
// split trains either, or where the job holds part of each node (its own split's side).
Result<ActorTimes> SplitsOnlyActor(const Workspace& workspace, const RlSpec& spec,
                                   const Error& whole_error, std::string* refusal) {
  constexpr int64_t kAnyDp = int64_t{4096} * 81 * 25 * 7 * 11 * 13 * 17 * 19 * 23;
  const FrameworkEngines& engines = workspace.memory.engines;
  JobRequest probe = ActorRequest(spec, nullptr, nullptr);
  probe.overrides.push_back("batch.micro_batch=1");
  probe.overrides.push_back(fmt::format("batch.global_batch={}", kAnyDp));
  auto probed = ResolveJob(probe, engines);
  if (!probed.ok() || probed->spec.cluster.shared_nodes) return whole_error;
  const ParallelLayout& l = probed->layout();
  JobRequest layout = ActorRequest(spec, nullptr, nullptr);
  layout.overrides.push_back("batch.micro_batch=1");
  layout.overrides.push_back(fmt::format("batch.global_batch={}", l.dp * l.pp));
  auto whole = ResolveJob(layout, engines);
  if (!whole.ok()) return whole_error;
  const int64_t nodes = whole->cluster.nodes;
  const int64_t per_node = whole->cluster.gpus_per_node;
  // Every GPU as one side of a split: the job module's reason alone, as a split's row says it.
  const SplitShape all{.train_nodes = nodes, .train_per_node = per_node};
  auto over_all = EvaluateActor(workspace, spec, &all, &*whole);
  if (over_all.ok()) return whole_error;  // not the batch over every GPU: the job's own error
  for (const SplitShape& shape : SplitShapes(nodes, per_node, spec.rollout.tp)) {
    auto side = EvaluateActor(workspace, spec, &shape, &*whole);
    if (!side.ok()) continue;
    *refusal =
        fmt::format("the actor over all {} GPUs: {}", nodes * per_node, over_all.error().message);
    ActorTimes times = std::move(side).value();
    times.job = std::move(whole).value();
    return times;
  }
  return whole_error;
}

}  // namespace

Result<RlEvaluation> EvaluateRl(const Workspace& workspace, const RlSpec& rl_spec) {
  RlEvaluation e;
  e.spec = rl_spec;
  // The actor's overrides may widen its job below (a split's training side to whole nodes).
  RlSpec spec = rl_spec;
  STRATA_ASSIGN_OR_RETURN(e.constants, LoadRlConstants());
  std::string colocated_refusal;
  auto evaluated = EvaluateActor(workspace, spec, 0, nullptr);
  if (!evaluated.ok() && spec.placement == RlPlacement::kSplit) {
    evaluated = SplitsOnlyActor(workspace, spec, evaluated.error(), &colocated_refusal);
  }
  STRATA_ASSIGN_OR_RETURN(ActorTimes actor, std::move(evaluated));
  // A split whose actor's job holds part of each node (cluster.shared_nodes, as `strata import`
  // writes verl's one-step-off recipe with trainer and rollout on every node) is its own
  // training side: the split comes first, and the whole cluster (its node, every GPU) is priced
  // from it. The colocated placement runs the actor over every GPU; where that layout cannot
  // take the batch (verl would refuse the same launch colocated), it is not possible, not an
  // error of the job.
  if (spec.placement == RlPlacement::kSplit && actor.job.spec.cluster.shared_nodes) {
    STRATA_ASSIGN_OR_RETURN(std::vector<std::string> widen, WholeNodeOverrides(spec, actor.job));
    spec.actor_overrides.insert(spec.actor_overrides.end(), widen.begin(), widen.end());
    STRATA_ASSIGN_OR_RETURN(actor, WholeClusterActor(workspace, spec, actor, &colocated_refusal));
  }
  e.actor = actor.job;
  e.micro_batches = actor.micro_batches;
  e.fixed_micro_batch = actor.fixed_micro_batch;
  const ResolvedJob& job = e.actor;
  const int64_t world = job.world();
  const int64_t per_node = job.cluster.gpus_per_node;
  if (spec.rollout.tp > per_node || per_node % spec.rollout.tp != 0) {
    Error error = InvalidInput(
        fmt::format("rollout.tp {} does not divide a node's {} GPUs", spec.rollout.tp, per_node));
    if (spec.rollout.tp > per_node) {
      // vLLM can run one instance's TP group over several nodes (its Ray executor), but strata's
      // decode roofline prices an instance inside one node and no TP all-reduce between nodes: a
      // number for it would leave out the cost that decides it.
      error.message += fmt::format(
          ": an instance over {} nodes, which vLLM can run but strata does not price (its decode "
          "prices an instance inside one node, with no TP all-reduce between nodes)",
          (spec.rollout.tp + per_node - 1) / per_node);
      error.hint = fmt::format(
          "to price instances inside one node instead: --set rollout.tp={} (another layout, not "
          "a bound on this one)",
          per_node);
    }
    return std::move(error).InFile(spec.file).InField("rollout.tp");
  }
  e.ledger = actor.ledger;
  // The host link the offload copies cross: the bandwidth map's PCIe level. The map also
  // gives the GPU link a split inside one node syncs over.
  MapLevel pcie;
  auto map = BuildBandwidthMap(job.cluster, workspace.links);
  if (spec.offload_trainer || (spec.reference_weights() && spec.offload_reference)) {
    if (!map.ok()) {
      Error error = map.error();
      error.message = "pricing the offload copies over the host link: " + error.message;
      error.file = spec.file;
      return error;
    }
    for (const MapLevel& level : map->levels) {
      if (level.kind == MapLevelKind::kPcie) pcie = level;
    }
  }

  RolloutSetup s;
  s.job = &job;
  s.spec = &spec;
  s.constants = &e.constants;
  // The step tables' efficiencies: a GPU written as a variant ({base: H20}) keeps its catalog
  // entry's factors, as in `strata step`.
  s.efficiency = actor.efficiency;
  s.params = CountParams(job.model);
  s.capacity = e.ledger.capacity;
  if (spec.rollout.tp > 1) {
    auto comm = CollectiveModel::Create(job.cluster, workspace.links);
    if (!comm.ok()) {
      Error error = comm.error();
      error.message = "pricing the rollout's TP all-reduces inside a node: " + error.message;
      error.file = spec.file;
      return error;
    }
    s.comm = std::make_shared<const CollectiveModel>(std::move(comm).value());
    // One all-reduce of the TP group, checked once: the decode roofline prices it at every batch.
    DecodeInput probe;
    probe.tp = spec.rollout.tp;
    probe.tp_comm = s.comm;
    probe.tp_allreduce_bytes_per_sequence =
        Bytes::Count(2.0 * static_cast<double>(job.model.hidden_size));
    if (auto one = DecodeTpAllReduce(probe, 1); !one.ok()) {
      Error error = one.error();
      error.message = fmt::format("pricing the rollout's TP{} all-reduce inside a node: {}",
                                  spec.rollout.tp, error.message);
      error.file = spec.file;
      return std::move(error).InField("rollout.tp");
    }
  }
  e.links = workspace.links;
  e.kv = ComputeKvFootprint(job.model, spec.rollout.tp, spec.rollout.dtypes);

  // Colocated: every GPU generates, then trains.
  RlPlacementResult& c = e.colocated;
  c.placement = RlPlacement::kColocated;
  c.rollout_gpus = world;
  c.train_gpus = world;
  // PPO's critic is the actor's model in the actor's layout (verl's default: critic.model.path
  // is the actor's), so its passes cost what the actor's do and its states what the actor's do.
  const bool ppo = spec.algorithm == RlAlgorithm::kPpo;
  const double trained_models = ppo ? 2 : 1;
  const PhasePeaks peaks = PhasePeaksOf(spec, job, actor, spec.offload_trainer);
  const Bytes resident = peaks.beside_rollout;
  c.rollout_memory =
      RolloutMemoryOf(s, spec.rollout.tp, spec.rollout.gpu_memory_utilization, resident);
  c.train_peak = e.ledger.Peak();
  c.generation = GenerationOf(s, world, c.rollout_memory, &e.decode);
  c.sync = SyncOf(s, job.layout(), nullptr);
  c.times.generation = c.generation.total;
  c.times.old_log_prob = spec.old_log_prob_pass ? actor.log_prob : Seconds();
  c.times.reference = spec.reference_model ? actor.log_prob : Seconds();
  c.times.critic_values = actor.critic_values;
  c.times.update = actor.update;
  c.times.update_cp_a2a = actor.update_cp_a2a;
  c.times.critic_update = actor.critic_update;
  c.times.weight_sync = c.sync.total;
  c.offload = OffloadOf(spec, job, actor, pcie, spec.offload_trainer, e.constants);
  c.times.offload = c.offload.total;
  c.times.step = c.times.generation + c.times.old_log_prob + c.times.reference +
                 c.times.critic_values + c.times.update + c.times.critic_update +
                 c.times.weight_sync + c.times.offload;
  // Under the dynamic batch PPO's critic packs its own micro batches: its update peaks apart.
  const MemoryLedger& critic = actor.critic_ledger;
  const bool ledgers_fit = e.ledger.fits && (!ppo || critic.fits);
  c.valid = c.rollout_memory.fits && ledgers_fit;
  if (!c.rollout_memory.fits) c.reason = "rollout: " + c.rollout_memory.reason;
  if (!e.ledger.fits) c.reason = "the actor's update does not fit the GPU";
  if (e.ledger.fits && !ledgers_fit) c.reason = "the critic's update does not fit the GPU";
  if (!colocated_refusal.empty()) {
    c.valid = false;
    c.reason = colocated_refusal;
  }

  const std::string_view engine = RolloutEngineLabel(spec);
  const ModelStates st = StatesOf(e.ledger);
  const bool kept = !spec.offload_trainer;
  const bool reference_kept = spec.reference_weights() && !spec.offload_reference;
  const std::string others = fmt::format("{}{}", kept && ppo ? " + the critic's states" : "",
                                         reference_kept ? " + the reference's weights" : "");
  e.phases = {
      {fmt::format("rollout ({} beside the resident trainer)", engine), c.rollout_memory.total,
       fmt::format("{} budget + trainer's CUDA context and NCCL{}{}", engine,
                   kept ? fmt::format(" + {} weights, {}optimizer states",
                                      ppo ? "actor's and critic's" : "actor's",
                                      KeepsGradientBuffer(job) ? "gradients, " : "")
                        : " (states offloaded)",
                   reference_kept ? " + the reference's weights" : "")},
      {"log-prob and reference forward", std::max(peaks.log_prob, peaks.reference),
       fmt::format("the actor's weights + one layer or the logits, no autograd{} ({} "
                   "asleep){}{}",
                   spec.dynamic_batch() ? " at the log-prob micro batch" : "", engine,
                   kept ? (KeepsGradientBuffer(job) ? " + its optimizer states and gradients"
                                                    : " + its optimizer states")
                        : "",
                   others)},
      {"actor update", peaks.update, "the actor ledger's peak" + others},
  };
  // No forward pass at all: no old log-prob pass (bypass mode) and no reference.
  if (!spec.old_log_prob_pass && !spec.reference_model) e.phases.erase(e.phases.begin() + 1);
  if (ppo) {
    e.phases.push_back({"critic values forward", peaks.critic_values,
                        fmt::format("the critic's weights{} + one layer, no autograd{}{}{}",
                                    kept || st.gradients.value() == 0 ? "" : ", gradient buffer",
                                    spec.dynamic_batch() ? " at the critic-values micro batch" : "",
                                    kept ? " + its optimizer states + the actor's states" : "",
                                    reference_kept ? " + the reference's weights" : "")});
    e.phases.push_back({"critic update", peaks.critic_update,
                        fmt::format("the critic's ledger (the actor's model and layout){}{}",
                                    kept ? " + the actor's states" : "",
                                    reference_kept ? " + the reference's weights" : "")});
  }
  // Every training phase's peak on the card, the forward passes too: under the dynamic batch the
  // log-prob and critic-values passes pack their own, often larger, micro batches (verl recipes
  // set log_prob_max_token_len_per_gpu above the update's).
  for (size_t i = 1; i < e.phases.size() && c.valid; ++i) {
    if (e.phases[i].bytes > s.capacity) {
      c.valid = false;
      c.reason = fmt::format("the {} phase needs {} of {}", e.phases[i].phase,
                             FormatGiB(e.phases[i].bytes), FormatGiB(s.capacity));
    }
  }
  if (spec.offload_trainer) {
    e.host_offload_per_node = (st.All() * trained_models) * static_cast<double>(per_node);
  }
  if (spec.reference_weights() && spec.offload_reference) {
    e.host_offload_per_node += st.weights * static_cast<double>(per_node);
  }
  // What the actor's job itself keeps in host memory (a CPU optimizer: megatron-core's
  // optimizer_cpu_offload, the job's sharding.offload_optimizer: cpu), for each trained model.
  Bytes host_states;
  for (const LedgerItem& item : e.ledger.host_items) host_states += item.bytes;
  e.host_offload_per_node += host_states * trained_models * static_cast<double>(per_node);

  // Every split verl can place (whole nodes, or the same share of every node), synchronous and
  // one step off-policy.
  for (const SplitShape& shape : SplitShapes(job.cluster.nodes, per_node, spec.rollout.tp)) {
    const int64_t m = shape.rollout_gpus();
    const int64_t n = shape.train_gpus();
    RlPlacementResult base;
    base.placement = RlPlacement::kSplit;
    base.rollout_gpus = m;
    base.train_gpus = n;
    base.shape = shape;
    auto train = EvaluateActor(workspace, spec, &shape, &job);
    if (!train.ok()) {
      base.reason = "training side: " + train.error().message;
      for (bool off : {false, true}) {
        base.one_step_off = off;
        e.splits.push_back(base);
      }
      continue;
    }
    base.train_layout = train->job.layout();
    base.rollout_memory =
        RolloutMemoryOf(s, spec.rollout.tp, spec.rollout.gpu_memory_utilization, Bytes());
    base.generation = GenerationOf(s, m, base.rollout_memory);
    const SyncLink link = SplitSyncLink(job, map.ok() ? &*map : nullptr, shape);
    base.sync = SyncOf(s, train->job.layout(), &link);
    // A split's training GPUs follow the job's offload settings too: verl's workers load and
    // offload each role's states around its passes whatever the placement (megatron_workers.py
    // checks _is_offload_param / _is_offload_optimizer, not the hybrid engine), so the memory
    // is the offloaded phases' and the copies are priced. Each pass peaks apart: the updates,
    // and the forward passes at their own micro batches.
    // Unwritten, the offload default is the hybrid engine's; verl's own is False.
    const bool offload_trainer = spec.offload_trainer && spec.offload_trainer_written;
    const PhasePeaks side = PhasePeaksOf(spec, train->job, *train, offload_trainer);
    base.offload = OffloadOf(spec, train->job, *train, pcie, offload_trainer, e.constants);
    const std::pair<const char*, Bytes> train_phases[] = {
        {ppo ? "update beside the other model's states" : "actor's update",
         std::max(side.update, side.critic_update)},
        {"log-prob and reference forward", std::max(side.log_prob, side.reference)},
        {"critic values forward", side.critic_values},
    };
    const auto* worst = &train_phases[0];
    for (const auto& p : train_phases) {
      if (p.second > worst->second) worst = &p;
    }
    // What the training GPUs hold, pass by pass: the actor's ledger at the side's own layout,
    // no rollout beside it.
    const std::string side_others =
        fmt::format("{}{}", !offload_trainer && ppo ? " + the critic's states" : "",
                    reference_kept ? " + the reference's weights" : "");
    const std::string own = offload_trainer ? "" : " + its optimizer states";
    base.train_phases.push_back({train_phases[0].first, train_phases[0].second,
                                 fmt::format("the {} ledger's peak on {} GPUs{}",
                                             ppo ? "larger update" : "actor's", n, side_others)});
    if (spec.old_log_prob_pass || spec.reference_model) {
      base.train_phases.push_back(
          {train_phases[1].first, train_phases[1].second,
           fmt::format("the actor's weights + one layer or the logits, no autograd{}{}", own,
                       side_others)});
    }
    if (ppo) {
      base.train_phases.push_back(
          {train_phases[2].first, train_phases[2].second,
           fmt::format("the critic's weights + one layer, no autograd{}{}", own, side_others)});
    }
    const Bytes train_peak = worst->second;
    base.train_peak = train_peak;
    const bool train_fits =
        train->ledger.fits && (!ppo || train->critic_ledger.fits) && train_peak <= s.capacity;
    base.valid = base.rollout_memory.fits && train_fits;
    if (!base.rollout_memory.fits) base.reason = "rollout: " + base.rollout_memory.reason;
    if (!train_fits) {
      base.reason = fmt::format("training side: the {} needs {} of {} per GPU", worst->first,
                                FormatGiB(train_peak), FormatGiB(s.capacity));
    }
    RlTimes t;
    t.generation = base.generation.total;
    t.old_log_prob = spec.old_log_prob_pass ? train->log_prob : Seconds();
    t.reference = spec.reference_model ? train->log_prob : Seconds();
    t.critic_values = train->critic_values;
    t.update = train->update;
    t.update_cp_a2a = train->update_cp_a2a;
    t.critic_update = train->critic_update;
    t.weight_sync = base.sync.total;
    t.offload = base.offload.total;
    const Seconds training = TrainingOf(t);
    const auto dm = static_cast<double>(m);
    const auto dn = static_cast<double>(n);
    for (bool off : {false, true}) {
      RlPlacementResult r = base;
      r.one_step_off = off;
      r.times = t;
      if (off) {
        r.times.step = std::max(t.generation, training) + t.weight_sync;
        r.times.idle = ((r.times.step - t.weight_sync - t.generation) * dm +
                        (r.times.step - t.weight_sync - training) * dn) /
                       (dm + dn);
      } else {
        r.times.step = t.generation + training + t.weight_sync;
        r.times.idle = (training * dm + t.generation * dn) / (dm + dn);
      }
      e.splits.push_back(r);
    }
  }
  for (size_t i = 0; i < e.splits.size(); ++i) {
    if (!e.splits[i].valid) continue;
    if (e.best_split < 0 ||
        e.splits[i].times.step < e.splits[static_cast<size_t>(e.best_split)].times.step) {
      e.best_split = static_cast<int>(i);
    }
  }

  if (e.best_split >= 0) e.split_limit = LimitOf(e, spec);

  e.configured = c;
  if (spec.placement == RlPlacement::kSplit) {
    e.configured = RlPlacementResult{};
    e.configured.placement = RlPlacement::kSplit;
    e.configured.rollout_gpus = spec.rollout_gpus;
    e.configured.one_step_off = spec.one_step_off;
    e.configured.reason =
        SplitRefusal(spec.rollout_gpus, job.cluster.nodes, per_node, spec.rollout.tp);
    // Where both forms give the count, whole nodes (the first listed) are the configured one.
    for (const RlPlacementResult& r : e.splits) {
      if (r.rollout_gpus == spec.rollout_gpus && r.one_step_off == spec.one_step_off) {
        e.configured = r;
        break;
      }
    }
  }

  // The smallest change that lets the configured rollout fit.
  const RolloutMemory& rm = e.configured.rollout_memory;
  if (!rm.fits && rm.max_utilization > 0) {
    const Bytes res = spec.placement == RlPlacement::kColocated ? resident : Bytes();
    if (rm.min_utilization <= rm.max_utilization) {
      // The fitting value nearest the one given, in hundredths: down to the largest that fits
      // when it asks too much, up to the smallest when it leaves no room for one sequence (the
      // minimum would cut a too-high budget's KV cache to a few sequences).
      const double lowest = std::ceil(rm.min_utilization * 100) / 100;
      const double highest = std::floor(rm.max_utilization * 100) / 100;
      const double given = spec.rollout.gpu_memory_utilization;
      const double u = given > rm.max_utilization ? highest : std::min(lowest, highest);
      e.fix = fmt::format("--set rollout.gpu_memory_utilization={:.2f}", u);
      e.fix_note =
          lowest <= highest
              ? fmt::format("the nearest to {:.2f} that fits; {:.2f} to {:.2f} fits", given, lowest,
                            highest)
              : fmt::format("only {:.4f} to {:.4f} fits", rm.min_utilization, rm.max_utilization);
    } else {
      for (int64_t tp = spec.rollout.tp * 2; tp <= per_node && e.fix.empty(); tp *= 2) {
        const RolloutMemory t = RolloutMemoryOf(s, tp, 1.0, res);
        if (t.min_utilization <= t.max_utilization) {
          e.fix = fmt::format("--set rollout.tp={} --set rollout.gpu_memory_utilization={:.2f}", tp,
                              std::floor(t.max_utilization * 100) / 100);
        }
      }
      // Offloading what the job keeps beside vLLM: each proposal re-runs the rollout's check
      // with the change applied (the phases' residents as PhasePeaksOf gives them) and names
      // every key it changes, the memory fraction too when the job's no longer fits.
      const bool colocated = spec.placement == RlPlacement::kColocated;
      const bool ref_kept = spec.reference_weights() && !spec.offload_reference;
      const std::pair<bool, bool> proposals[] = {
          {!spec.offload_trainer, false}, {false, ref_kept}, {!spec.offload_trainer, ref_kept}};
      for (const auto& [trainer, reference] : proposals) {
        if (!colocated || !e.fix.empty() || (!trainer && !reference)) continue;
        RlSpec changed = spec;
        changed.offload_trainer = spec.offload_trainer || trainer;
        changed.offload_reference = spec.offload_reference || reference;
        const Bytes beside =
            PhasePeaksOf(changed, job, actor, changed.offload_trainer).beside_rollout;
        const RolloutMemory any = RolloutMemoryOf(s, spec.rollout.tp, 1.0, beside);
        if (any.min_utilization > any.max_utilization) continue;
        std::string keys;
        if (trainer) keys += " --set placement.offload_trainer=true";
        if (reference) keys += " --set placement.offload_reference=true";
        const RolloutMemory as_set =
            RolloutMemoryOf(s, spec.rollout.tp, spec.rollout.gpu_memory_utilization, beside);
        if (!as_set.fits) {
          keys += fmt::format(" --set rollout.gpu_memory_utilization={:.2f}",
                              std::min(std::ceil(any.min_utilization * 100) / 100,
                                       std::floor(any.max_utilization * 100) / 100));
        }
        e.fix = keys.substr(1);
      }
    }
  }
  return e;
}

int64_t PlacementGpus(const RlPlacementResult& r) {
  return r.placement == RlPlacement::kSplit ? r.rollout_gpus + r.train_gpus : r.train_gpus;
}

double GpuTimeShare(const RlPlacementResult& r, Seconds time, int64_t gpus) {
  const double all = r.times.step.s() * static_cast<double>(PlacementGpus(r));
  return all > 0 ? time.s() * static_cast<double>(gpus) / all : 0;
}

Result<std::vector<GpuDecode>> CompareDecode(const RlEvaluation& e,
                                             const std::vector<std::string>& gpus) {
  std::vector<GpuDecode> out;
  std::vector<std::string> names = {e.actor.gpu().name};
  for (const std::string& g : gpus) {
    if (g != e.actor.gpu().name) names.push_back(g);
  }
  for (const std::string& name : names) {
    STRATA_ASSIGN_OR_RETURN(GpuSpec gpu, FindGpu(name));
    DecodeInput d = e.decode;
    d.hbm_bandwidth = gpu.hbm_bandwidth;
    d.peak = gpu.bf16_dense;
    if (d.tp_comm != nullptr && gpu.name != e.actor.gpu().name) {
      // The TP all-reduces on that GPU's own link, in the same node and network.
      Cluster other = e.actor.cluster;
      other.gpu = gpu;
      STRATA_ASSIGN_OR_RETURN(CollectiveModel comm, CollectiveModel::Create(other, e.links));
      d.tp_comm = std::make_shared<const CollectiveModel>(std::move(comm));
    }
    GpuDecode r;
    r.gpu = gpu.name;
    r.step = DecodeRoofline(d);
    r.tokens_per_s_per_gpu = d.batch / static_cast<double>(d.tp) / r.step.time.s();
    r.tokens_per_s_per_watt = gpu.tdp_watts > 0 ? r.tokens_per_s_per_gpu / gpu.tdp_watts : 0;
    out.push_back(r);
  }
  return out;
}

}  // namespace strata
