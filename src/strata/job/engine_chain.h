// Whose code trains a job. A wrapper (ms-swift, verl, deepspeed, megatron-bridge) trains through
// another framework's code, chosen by the sharding mode (data/frameworks.yaml, `runs_as`); the
// chain of names ends at the engine, the framework whose code runs. The step's framework
// profile, the memory ledger's loss kernel and error family and the planner's scope all walk
// this one chain, read by one parser.
#ifndef STRATA_JOB_ENGINE_CHAIN_H_
#define STRATA_JOB_ENGINE_CHAIN_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/checkpoint_format_rule.h"
#include "strata/job/job_spec.h"
#include "strata/job/overlap_rules.h"
#include "strata/job/pipeline_rules.h"
#include "strata/model/model_config.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace strata {

/// Whose Gated DeltaNet module a framework builds inside megatron-core (`gdn_module:`):
/// "megatron-core" (megatron-core's GatedDeltaNet, its heads split over TP) or "transformers"
/// (HF transformers' module, whole on every TP rank); from release `megatron_core_from` on, the
/// model types listed get megatron-core's.
struct GdnModuleRule {
  std::string module;
  std::string megatron_core_from;
  std::vector<std::string> megatron_core_models;
  /// megatron-core's own entry: the release from which its GatedDeltaNet runs under context
  /// parallelism ("" = always). Before it, TransformerConfig asserts context_parallel_size == 1.
  std::string context_parallel_from;
  /// megatron-core's own entry: the release from which its GatedDeltaNet takes packed
  /// (variable-length, THD) sequences ("" = always). Before it, GatedDeltaNet.forward raises
  /// NotImplementedError when given packed_seq_params.
  std::string packed_sequences_from;
};

/// A framework's eager attention code repeats grouped-query K and V to every query head
/// (`gqa_repeat:`), in releases before `until` ("" = every release): extra host ops per layer,
/// copies the step moves, and K and V at the query heads' width kept as SDPA's inputs. From
/// `until` on, the code passes enable_gqa to SDPA and repeats nothing.
struct GqaRepeatRule {
  std::string until;
  double ops = 0;  // host ops per decoder layer forward (unsqueeze, expand, reshape on K and V)
};

/// DeepSpeed's reduce_bucket_size as the framework that writes the DeepSpeed config fills it
/// (`reduce_bucket:`): `elements` where the config does not give it (the framework's own
/// shipped config, or DeepSpeed's default), and, with `auto_hidden_squared`, the hidden_size^2 it
/// writes for "auto" (the HF Trainer's and accelerate's DeepSpeed integrations).
/// `zero3_auto`: the framework's shipped ZeRO-3 config says "auto" instead of `elements`, which
/// the chain's "auto" filler fills.
struct ReduceBucketRule {
  double elements = 0;
  bool auto_hidden_squared = false;
  bool has_elements = false;
  bool zero3_auto = false;
};

/// data/frameworks.yaml's `runs_as` and `latest` of every framework.
struct FrameworkEngines {
  std::map<std::string, std::map<std::string, std::string>> runs_as;  // name -> mode -> name
  std::map<std::string, std::string> latest;        // the release assumed when a job names none
  std::map<std::string, GdnModuleRule> gdn;         // name -> its `gdn_module:`, where it has one
  std::map<std::string, GqaRepeatRule> gqa_repeat;  // name -> its `gqa_repeat:`, where it has one
  std::map<std::string, PipelineRule> pipeline;     // name -> its `pipeline:`, where it has one
  std::map<std::string, ReduceBucketRule> reduce_bucket;  // name -> its `reduce_bucket:`
  std::map<std::string, FsdpUnits> fsdp2_units;           // name -> its `fsdp2_units:`
  /// name -> its `accumulation_sync:` (true: every_micro_batch, false: last_micro_batch)
  std::map<std::string, bool> sync_each_micro_batch;
  std::map<std::string, MoeA2aOverlapRule> moe_a2a_overlap;  // name -> its `moe_a2a_overlap:`
  /// name -> sharding mode ("zero1", "zero2", "zero3") -> whose code runs that mode's sharding
  /// (`zero3_runtime:`, `zero12_runtime:`), where the entry states it.
  std::map<std::string, std::map<std::string, ShardingRuntime>> sharding_runtime;
  /// name -> its `checkpoint_format:` (job/checkpoint_format_rule.h), where it states one.
  std::map<std::string, CheckpointFormatRule> checkpoint_format;
  /// name -> its `moe_adapter_layout:`'s fused_experts_from: the first release whose MoE model
  /// code holds the routed experts as 3-D parameters and the router as a bare weight (transformers
  /// 5), which PEFT's nn.Linear matching does not reach. Absent: every release is 4.x's layout.
  std::map<std::string, std::string> fused_experts_from;

  /// `name`'s latest release, "" for a framework the map does not hold (a catalog built in code
  /// may lack engines the file parser always fills).
  std::string LatestOf(const std::string& name) const;
};

/// The `frameworks:` map (`file` names it in errors): each entry needs `latest`; a `runs_as`
/// needs a `default:` entry, may name only frameworks of the map, and may not loop.
Result<FrameworkEngines> ParseFrameworkEngines(const YAML::Node& frameworks,
                                               const std::string& file);

/// The same from the whole text of data/frameworks.yaml.
Result<FrameworkEngines> ParseFrameworkEnginesText(const std::string& text,
                                                   const std::string& file);

/// data/frameworks.yaml's engines, read from disk (a workspace holds them already loaded).
Result<FrameworkEngines> LoadFrameworkEngines();

struct EngineChain {
  std::vector<std::string> names;  // the framework the job names first, the engine last
  std::string mode;                // the sharding mode the chain was walked for
  std::string version;             // the engine's release ("" when the catalog has none)
  bool version_assumed = true;     // not the job's framework.version (the latest known)

  const std::string& named() const { return names.front(); }
  const std::string& engine() const { return names.back(); }
  bool wrapped() const { return names.size() > 1; }
  bool Runs(std::string_view name) const;  // `name` is on the chain
};

/// The chain of `spec` under sharding `mode` (ms-swift under zero1: [ms-swift, megatron-core];
/// under zero3: [ms-swift, deepspeed, hf-trainer]). The engine's release is the job's
/// framework.version when the engine is the framework it names, else the catalog's latest.
EngineChain ResolveEngineChain(const FrameworkEngines& engines, const FrameworkSpec& spec,
                               ShardingMode mode);

/// Whose code runs the chain's sharding (chain.mode), from data/frameworks.yaml alone: under
/// zero3 the chain's first `zero3_runtime:` from the framework the job names (verl's fsdp1
/// before its engine's deepspeed), under zero1 and zero2 its first `zero12_runtime:`; fsdp2 is
/// megatron-core's FSDP on a chain through megatron-core, else PyTorch's fully_shard; none has
/// no sharding (kUnstated). Resolved once per job and mode (ResolvedJob::runtime_by_mode): the
/// one answer memory, step and plan read.
ShardingRuntime ResolveShardingRuntime(const FrameworkEngines& engines, const EngineChain& chain);

/// The runtime of `spec`'s sharding under `mode` (a layout search may try another mode than the
/// job's own): the job's sharding.runtime where it runs `mode` (ShardingRuntimeRuns), else its
/// chain's, from data/frameworks.yaml. The one place that answers "whose code runs this
/// sharding"; ResolvedJob::runtime_by_mode keeps its answers.
ShardingRuntime ResolveJobShardingRuntime(const FrameworkEngines& engines, const JobSpec& spec,
                                          ShardingMode mode);

/// The chain's engine's `gqa_repeat:` rule when its release (chain.version) still repeats K and
/// V for grouped-query attention, else null (no rule, or a release at or after `until`).
const GqaRepeatRule* GqaRepeatOf(const FrameworkEngines& engines, const EngineChain& chain);

/// A job's Gated DeltaNet layers as its framework builds them: the module, and whether tensor
/// parallelism splits it (megatron-core's, heads over TP) or every TP rank holds and runs the
/// whole layer (transformers' module inside megatron-core, its gradients averaged over TP by
/// megatron-core's finalize_model_grads). `rule` says which framework and release decided, in
/// words ("" when no framework on the chain states a module).
struct GdnPlacement {
  std::string module;  // "megatron-core" | "transformers" | "" (not stated)
  bool replicated_over_tp = false;
  std::string rule;
  /// Whether the module runs under context parallelism (CP > 1): megatron-core's from its
  /// `context_parallel_from` release; transformers' never (a recurrent scan over the tokens it
  /// is given, with no state exchanged between CP ranks). `no_context_parallel` says why not.
  bool context_parallel = true;
  std::string no_context_parallel;
  /// Whether the module takes packed sequences (sequence.packing: samples attend only within
  /// themselves, megatron-core's packed_seq_params): megatron-core's from its
  /// `packed_sequences_from` release. `no_packed_sequences` says why not.
  bool packed_sequences = true;
  std::string no_packed_sequences;
};

/// Walks the job's chain (ResolveEngineChain) from the framework it names: the first with a
/// `gdn_module:` decides, at the job's framework.version when it is the named framework, else
/// its latest; `model_type` is the model's (config.json's model_type).
GdnPlacement ResolveGdnPlacement(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                 ShardingMode mode, const std::string& model_type);

/// The reduce bucket a DeepSpeed ZeRO job gets when its config does not say (`elements`), and
/// the framework whose `reduce_bucket:` decided, in words (`rule`): the first framework on the
/// job's chain under `mode` with an `elements` value; DeepSpeed's own default (5e8) when none has
/// one. Under zero3, a framework whose shipped config says "auto" (`zero3_auto`) decides
/// instead: hidden_size^2 (`auto_hidden_squared`; ResolvedJob::ReduceBucketElements applies the
/// model's hidden size), filled by the chain's "auto" filler.
struct ReduceBucketDefault {
  double elements = 5e8;
  bool auto_hidden_squared = false;
  std::string rule = "DeepSpeed's default reduce_bucket_size";
};
ReduceBucketDefault ResolveReduceBucket(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                        ShardingMode mode);

/// The FSDP2 unit layout a job gets when it does not give sharding.fsdp_units: the first
/// framework on its chain under fsdp2 with an `fsdp2_units:` entry decides (`rule` names it);
/// torchtitan's separate units when none does.
struct Fsdp2UnitsDefault {
  FsdpUnits units = FsdpUnits::kSeparate;
  std::string rule;  // "" when no framework on the chain states one
};
Fsdp2UnitsDefault ResolveFsdp2Units(const FrameworkEngines& engines, const FrameworkSpec& spec);

/// Whether FSDP reduce-scatters after every micro batch of a step when the job does not give
/// sharding.sync_each_micro_batch: the first framework on its chain under fsdp2 with an
/// `accumulation_sync:` entry decides (`rule` names it); every micro batch when none does (the
/// training loops of torchtitan, megatron-core and verl call backward alone).
struct AccumulationSyncDefault {
  bool sync_each_micro_batch = true;
  std::string rule;  // "" when no framework on the chain states one
};
AccumulationSyncDefault ResolveAccumulationSync(const FrameworkEngines& engines,
                                                const FrameworkSpec& spec);

/// What the chain's framework writes for reduce_bucket_size "auto": hidden_size^2 from the
/// first framework on the chain that fills "auto" (`auto: hidden^2`), with that framework's
/// name; nullopt when none on the chain fills it (DeepSpeed alone rejects "auto").
struct ReduceBucketAuto {
  double elements = 0;
  std::string filled_by;
};
std::optional<ReduceBucketAuto> ResolveReduceBucketAuto(const FrameworkEngines& engines,
                                                        const FrameworkSpec& spec,
                                                        ShardingMode mode, int64_t hidden_size);

/// The pipeline rule of the job's chain under `mode` (job/pipeline_rules.h): the first framework
/// on the chain with a `pipeline:` entry decides, at the job's framework.version when it is the
/// named framework, else its latest (`release`); none known when no framework on it has one, or
/// when the job names no framework (framework.given false).
struct ChainPipelineRule {
  PipelineRule rule;
  std::string release;
};
ChainPipelineRule ResolvePipelineRule(const FrameworkEngines& engines, const FrameworkSpec& spec,
                                      ShardingMode mode);

/// The EP all-to-all overlap rule of the job's chain under `mode` (job/overlap_rules.h): the first
/// framework on the chain with a `moe_a2a_overlap:` entry decides, at the job's framework.version
/// when it is the named framework, else its latest. The overlap is megatron-core's flag, so a job
/// that names no framework is checked as megatron-core's (the framework it is priced as).
struct ChainMoeA2aOverlapRule {
  MoeA2aOverlapRule rule;
  std::string release;
};
ChainMoeA2aOverlapRule ResolveMoeA2aOverlapRule(const FrameworkEngines& engines,
                                                const FrameworkSpec& spec, ShardingMode mode);

/// The adapter's layers as the job's engine builds them. megatron-core fuses q, k and v into
/// linear_qkv and gate and up into linear_fc1, and Megatron-SWIFT puts one adapter on each fused
/// linear: under a framework whose chain runs megatron-core, `all-linear` is
/// MegatronAllLinear(model) (the four fused linears, and a Gated DeltaNet's projections; not the
/// router) and PEFT's separate names are refused, as are DoRA and, on routed experts, ETP > 1
/// (mcore-bridge's LoraParallelLinear raises for both); on any other engine (HF code under PEFT)
/// megatron-core's names are refused. There, before the engine's `moe_adapter_layout:` release
/// (hf-trainer: transformers 5.0), routed experts are modelled only in transformers 4.x's
/// nn.ModuleList layout (qwen3_moe, qwen3_next); from it on, on qwen3_5_moe (which PEFT does not
/// convert), AdapterSpec::fused_experts is set: PEFT's names reach the attention, Gated DeltaNet,
/// dense and shared-expert nn.Linear only, and 'gate' (a TopKRouter) is refused; qwen3_moe and
/// qwen3_next, whose v4 names PEFT 0.19+ turns into 3-D parameter adapters, are refused with
/// names that reach the experts. The release is chain.version: the job's framework.version when
/// it names hf-trainer, else the catalog's latest. A job that names no framework is left as
/// written. `engines` is the catalog already loaded (data/frameworks.yaml's, or one built in
/// code); nothing is read here. `model` may be null (the names alone are checked then).
Status ResolveAdapterTargets(JobSpec& spec, const FrameworkEngines& engines,
                             const ModelConfig* model = nullptr);

}  // namespace strata

#endif  // STRATA_JOB_ENGINE_CHAIN_H_
