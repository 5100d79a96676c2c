// The one walk of data/frameworks.yaml's runs_as: the chains, the engine's release, and the
// catalog errors the parser refuses.
#include "strata/job/engine_chain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/file_io.h"
#include "strata/job/inapplicable_fields.h"
#include "strata/job/resolve_with_engines.h"
#include "strata/model/adapter.h"
#include "strata/model/model_config.h"

namespace strata {
namespace {

FrameworkEngines Shipped() {
  const std::string path = DataDir() + "/frameworks.yaml";
  auto text = ReadFile(path);
  EXPECT_TRUE(text.ok());
  auto engines = ParseFrameworkEnginesText(*text, path);
  EXPECT_TRUE(engines.ok()) << engines.error().Format();
  return *engines;
}

FrameworkSpec Named(const std::string& name, const std::string& version = "") {
  FrameworkSpec spec;
  spec.name = name;
  spec.version = version;
  spec.given = true;
  return spec;
}

// The chains data/frameworks.yaml gives: ms-swift runs megatron-core's code under zero1 (its
// `megatron sft`) and DeepSpeed's wrapper of the HF Trainer under ZeRO-3 (`swift sft`).
TEST(EngineChain, FollowsRunsAsByShardingMode) {
  const FrameworkEngines e = Shipped();
  EXPECT_EQ(ResolveEngineChain(e, Named("ms-swift"), ShardingMode::kZero1).names,
            (std::vector<std::string>{"ms-swift", "megatron-core"}));
  const EngineChain zero3 = ResolveEngineChain(e, Named("ms-swift"), ShardingMode::kZero3);
  EXPECT_EQ(zero3.names, (std::vector<std::string>{"ms-swift", "deepspeed", "hf-trainer"}));
  EXPECT_EQ(zero3.engine(), "hf-trainer");
  EXPECT_TRUE(zero3.Runs("deepspeed"));
  EXPECT_FALSE(zero3.Runs("megatron-core"));
  EXPECT_EQ(zero3.mode, "zero3");
  EXPECT_EQ(ResolveEngineChain(e, Named("torchtitan"), ShardingMode::kFsdp2).names,
            (std::vector<std::string>{"torchtitan"}));
}

// The job's framework.version is the engine's release only when the engine is the framework
// the job names; a wrapper's release says nothing of its engine's, so the latest is assumed.
TEST(EngineChain, TheJobsReleaseIsTheEnginesOnlyWhenNotWrapped) {
  const FrameworkEngines e = Shipped();
  const EngineChain titan =
      ResolveEngineChain(e, Named("torchtitan", "0.1.0"), ShardingMode::kFsdp2);
  EXPECT_EQ(titan.version, "0.1.0");
  EXPECT_FALSE(titan.version_assumed);
  const EngineChain swift = ResolveEngineChain(e, Named("ms-swift", "3.5.0"), ShardingMode::kZero1);
  EXPECT_EQ(swift.version, e.latest.at("megatron-core"));
  EXPECT_TRUE(swift.version_assumed);
}

Result<FrameworkEngines> Parse(const std::string& text) {
  return ParseFrameworkEnginesText(text, "frameworks.yaml");
}

// DeepSpeed's reduce bucket as each framework writes it (data/frameworks.yaml, reduce_bucket):
// ms-swift's shipped zero2.json 2e8 first on its DeepSpeed chain [ms-swift, deepspeed,
// hf-trainer]; a DeepSpeed JSON alone DeepSpeed's 5e8; "auto" is filled by the HF Trainer under
// both with hidden^2 (hidden 5,120: 26,214,400 elements).
TEST(EngineChain, ReduceBucketByFramework) {
  const FrameworkEngines e = Shipped();
  const ReduceBucketDefault swift = ResolveReduceBucket(e, Named("ms-swift"), ShardingMode::kZero2);
  EXPECT_DOUBLE_EQ(swift.elements, 2e8);
  EXPECT_NE(swift.rule.find("ms-swift"), std::string::npos) << swift.rule;
  EXPECT_DOUBLE_EQ(ResolveReduceBucket(e, Named("deepspeed"), ShardingMode::kZero2).elements, 5e8);
  EXPECT_DOUBLE_EQ(ResolveReduceBucket(e, Named("hf-trainer"), ShardingMode::kZero1).elements, 5e8);
  const auto filled = ResolveReduceBucketAuto(e, Named("ms-swift"), ShardingMode::kZero2, 5120);
  ASSERT_TRUE(filled.has_value());
  EXPECT_DOUBLE_EQ(filled->elements, 26214400.0);
  EXPECT_EQ(filled->filled_by, "hf-trainer");
  // Under zero3 ms-swift's shipped zero3.json says "auto" (modelscope/ms-swift@3602360
  // swift/config/zero3.json), filled by the HF Trainer: hidden^2, not zero2.json's 2e8.
  const ReduceBucketDefault swift3 =
      ResolveReduceBucket(e, Named("ms-swift"), ShardingMode::kZero3);
  EXPECT_TRUE(swift3.auto_hidden_squared);
  EXPECT_NE(swift3.rule.find("hf-trainer"), std::string::npos) << swift3.rule;
  EXPECT_DOUBLE_EQ(ResolveReduceBucket(e, Named("deepspeed"), ShardingMode::kZero3).elements, 5e8);
  EXPECT_FALSE(
      ResolveReduceBucket(e, Named("deepspeed"), ShardingMode::kZero3).auto_hidden_squared);
  // torchtitan writes no DeepSpeed config: nobody on its chain fills "auto".
  EXPECT_FALSE(
      ResolveReduceBucketAuto(e, Named("torchtitan"), ShardingMode::kZero2, 5120).has_value());
  // A fill the parser does not know is refused, naming the field.
  auto bad = Parse("frameworks:\n  a: {latest: '1', reduce_bucket: {auto: hidden^3, source: x}}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("auto"), std::string::npos) << bad.error().Format();
  auto bad3 =
      Parse("frameworks:\n  a: {latest: '1', reduce_bucket: {elements: 1, zero3: 5, source: x}}\n");
  ASSERT_FALSE(bad3.ok());
  EXPECT_NE(bad3.error().Format().find("zero3"), std::string::npos) << bad3.error().Format();
}

// FSDP2's unit layout by framework (data/frameworks.yaml, fsdp2_units): the HF Trainer's is
// accelerate's fsdp2_prepare_model (root), ms-swift's `swift sft` reaches it through its chain
// [ms-swift, deepspeed, hf-trainer], verl states its own (it wraps FSDP2 itself: root_output),
// torchtitan and
// a job naming no framework keep torchtitan's separate units. An unknown layout is refused.
TEST(EngineChain, Fsdp2UnitsByFramework) {
  const FrameworkEngines e = Shipped();
  EXPECT_EQ(ResolveFsdp2Units(e, Named("hf-trainer")).units, FsdpUnits::kRoot);
  EXPECT_EQ(ResolveFsdp2Units(e, Named("ms-swift")).units, FsdpUnits::kRoot);
  EXPECT_NE(ResolveFsdp2Units(e, Named("ms-swift")).rule.find("hf-trainer"), std::string::npos);
  EXPECT_EQ(ResolveFsdp2Units(e, Named("verl")).units, FsdpUnits::kRootOutput);
  EXPECT_EQ(ResolveFsdp2Units(e, Named("torchtitan")).units, FsdpUnits::kSeparate);
  EXPECT_EQ(ResolveFsdp2Units(e, FrameworkSpec{}).units, FsdpUnits::kSeparate);
  auto bad = Parse("frameworks:\n  a: {latest: '1', fsdp2_units: rooted}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("fsdp2_units"), std::string::npos) << bad.error().Format();
}

// Gradient accumulation's sync by framework (data/frameworks.yaml, accumulation_sync): the HF
// Trainer's no_sync (last_micro_batch) reaches ms-swift's `swift sft` through its chain; verl
// states its own (every_micro_batch) before its chain's hf-trainer; torchtitan and a job naming
// no framework sync each micro batch. A value other than the two, a missing `after` or a missing
// source is refused by key.
TEST(EngineChain, AccumulationSyncByFramework) {
  const FrameworkEngines e = Shipped();
  EXPECT_FALSE(ResolveAccumulationSync(e, Named("hf-trainer")).sync_each_micro_batch);
  EXPECT_FALSE(ResolveAccumulationSync(e, Named("ms-swift")).sync_each_micro_batch);
  EXPECT_NE(ResolveAccumulationSync(e, Named("ms-swift")).rule.find("hf-trainer"),
            std::string::npos);
  EXPECT_TRUE(ResolveAccumulationSync(e, Named("verl")).sync_each_micro_batch);
  EXPECT_TRUE(ResolveAccumulationSync(e, Named("torchtitan")).sync_each_micro_batch);
  EXPECT_TRUE(ResolveAccumulationSync(e, FrameworkSpec{}).sync_each_micro_batch);
  for (const char* bad_entry :
       {"{after: sometimes, source: s}", "{source: s}", "{after: last_micro_batch}",
        "{after: last_micro_batch, source: s, extra: 1}", "last_micro_batch"}) {
    auto bad = Parse(std::string("frameworks:\n  a: {latest: '1', accumulation_sync: ") +
                     bad_entry + "}\n");
    ASSERT_FALSE(bad.ok()) << bad_entry;
    EXPECT_NE(bad.error().Format().find("accumulation_sync"), std::string::npos)
        << bad.error().Format();
  }
}

TEST(EngineChain, RefusesACatalogItCannotWalk) {
  // A wrapper needs a default engine for the modes it does not list.
  auto no_default =
      Parse("frameworks:\n  a: {latest: '1', runs_as: {zero1: b}}\n  b: {latest: '1'}\n");
  ASSERT_FALSE(no_default.ok());
  EXPECT_NE(no_default.error().Format().find("default"), std::string::npos);
  // An engine the catalog lacks.
  auto unknown = Parse("frameworks:\n  a: {latest: '1', runs_as: {default: c}}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().Format().find("no such framework"), std::string::npos);
  // A mode no job can have would never be taken: the chain silently fell back to `default`.
  auto typo = Parse(
      "frameworks:\n  a: {latest: '1', runs_as: {zer01: b, default: b}}\n  b: {latest: '1'}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().Format().find("did you mean 'zero1'"), std::string::npos)
      << typo.error().Format();
  // Every entry says which release is assumed.
  auto no_latest = Parse("frameworks:\n  a: {source: x}\n");
  ASSERT_FALSE(no_latest.ok());
  EXPECT_NE(no_latest.error().Format().find("latest"), std::string::npos);
}

// Two wrappers naming each other: the step profile's walk used to follow runs_as until an
// engine, so such a catalog hung `strata step`. The parser refuses it, naming the entry.
TEST(EngineChain, RefusesALoop) {
  auto loop = Parse(
      "frameworks:\n  a: {latest: '1', runs_as: {default: b}}\n"
      "  b: {latest: '1', runs_as: {default: a}}\n");
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.error().Format().find("loops"), std::string::npos) << loop.error().Format();
}

JobSpec LoraJob(const std::string& framework, ShardingMode mode, std::vector<std::string> targets) {
  JobSpec spec;
  spec.file = "j.yaml";
  spec.framework = Named(framework);
  spec.sharding.mode = mode;
  spec.adapter.kind = AdapterKind::kLora;
  spec.adapter.rank = 8;
  spec.adapter.targets = std::move(targets);
  return spec;
}

// The adapter's layers as the engine builds them. Before, a hand-written ms-swift (megatron-core)
// job with [all-linear] was priced as PEFT's seven separate adapters, where Megatron-SWIFT puts
// four on the fused linears (557,056 against 655,360 parameters a Llama-8B layer at r 8:
// Adapter.MegatronFusedLinearsCarryOneAdapterEach), and linear_qkv on HF code was accepted.
TEST(EngineChain, AdapterTargetsFollowTheEngine) {
  const FrameworkEngines engines = Shipped();
  JobSpec swift = LoraJob("ms-swift", ShardingMode::kZero1, {"all-linear"});
  ASSERT_TRUE(ResolveAdapterTargets(swift, engines).ok());
  EXPECT_EQ(swift.adapter.targets,
            (std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}));
  JobSpec peft_names = LoraJob("megatron-core", ShardingMode::kZero1, {"q_proj", "v_proj"});
  auto refused = ResolveAdapterTargets(peft_names, engines);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Format().find("'q_proj' is part of 'linear_qkv'"), std::string::npos)
      << refused.error().Format();
  // ms-swift under ZeRO-3 trains HF code through DeepSpeed: PEFT's names, not megatron's.
  JobSpec hf = LoraJob("ms-swift", ShardingMode::kZero3, {"linear_qkv"});
  auto wrong = ResolveAdapterTargets(hf, engines);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().Format().find("hf-trainer's code"), std::string::npos)
      << wrong.error().Format();
  JobSpec all = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  ASSERT_TRUE(ResolveAdapterTargets(all, engines).ok());
  EXPECT_EQ(all.adapter.targets, std::vector<std::string>{"all-linear"});
  // A job that names no framework is left as written (megatron-core is only assumed).
  JobSpec unnamed = LoraJob("megatron-core", ShardingMode::kZero1, {"all-linear"});
  unnamed.framework.given = false;
  ASSERT_TRUE(ResolveAdapterTargets(unnamed, engines).ok());
  EXPECT_EQ(unnamed.adapter.targets, std::vector<std::string>{"all-linear"});
}

// The catalog is the caller's, already loaded: one built in code, with a wrapper that
// data/frameworks.yaml does not hold, decides the engine. Before, ResolveAdapterTargets read
// data/frameworks.yaml itself, where 'my-wrapper' has no runs_as: its chain ended at itself and
// all-linear was kept as PEFT's names.
TEST(EngineChain, AdapterTargetsUseTheCatalogTheyAreGiven) {
  FrameworkEngines engines;
  engines.runs_as["my-wrapper"]["default"] = "megatron-core";
  engines.runs_as["my-wrapper"]["zero3"] = "hf-trainer";
  engines.latest = {{"my-wrapper", "1.0"}, {"megatron-core", "0.14"}, {"hf-trainer", "4.57"}};
  JobSpec fused = LoraJob("my-wrapper", ShardingMode::kZero1, {"all-linear"});
  ASSERT_TRUE(ResolveAdapterTargets(fused, engines).ok());
  EXPECT_EQ(fused.adapter.targets,
            (std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}));
  JobSpec hf = LoraJob("my-wrapper", ShardingMode::kZero3, {"linear_fc1"});
  auto refused = ResolveAdapterTargets(hf, engines);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "'linear_fc1' is megatron-core's fused module; my-wrapper with sharding zero3 trains "
            "hf-trainer's code, where PEFT adapts the separate linears");
  EXPECT_EQ(refused.error().field, "adapter.targets");
  EXPECT_EQ(refused.error().file, "j.yaml");
}

// A command resolves its job with the engines its workspace already loaded (ResolveJob's
// overloads that take them), not with data/frameworks.yaml read again. The QLoRA job names
// hf-trainer with adapters on [all-linear]: with the shipped engines hf-trainer runs its own
// code and all-linear stays PEFT's name; with engines where hf-trainer runs as megatron-core,
// the same job's targets become megatron-core's four fused linears, so the job was resolved
// with the engines given.
TEST(EngineChain, AJobIsResolvedWithTheEnginesPassedIn) {
  JobRequest request;
  request.job = "llama-3.1-8b-qlora-h200x1";
  auto shipped = ResolveJob(request, Shipped());
  ASSERT_TRUE(shipped.ok()) << shipped.error().Format();
  EXPECT_EQ(shipped->spec.adapter.targets, std::vector<std::string>{"all-linear"});
  EXPECT_EQ(shipped->request.job, request.job);

  FrameworkEngines megatron = Shipped();
  megatron.runs_as["hf-trainer"]["default"] = "megatron-core";
  const std::vector<std::string> fused = {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
  auto by_request = ResolveJob(request, megatron);
  ASSERT_TRUE(by_request.ok()) << by_request.error().Format();
  EXPECT_EQ(by_request->spec.adapter.targets, fused);
  // The spec's overload likewise (the shipped resolution left the targets [all-linear]).
  auto by_spec = ResolveJob(shipped->spec, megatron);
  ASSERT_TRUE(by_spec.ok()) << by_spec.error().Format();
  EXPECT_EQ(by_spec->spec.adapter.targets, fused);
}

// An MoE model's all-linear as each engine builds it. Before, every adapter on an MoE or Gated
// DeltaNet model was refused ("strata does not model adapters on routed experts").
// megatron-core: ms-swift's all-linear is the fused linears and, on Qwen3-Next, the Gated
// DeltaNet's three nn.Linear (transformers' module inside megatron-core); mcore-bridge's LoRA
// refuses DoRA and, on routed experts, ETP > 1. HF code: PEFT's names, and routed experts only
// in transformers 4.x's nn.ModuleList layout (qwen3_moe, qwen3_next).
TEST(EngineChain, AdapterTargetsOnMoeAndGatedDeltaNetModels) {
  const FrameworkEngines engines = Shipped();
  auto next = LoadModelConfig("qwen3-next-80b-a3b");
  ASSERT_TRUE(next.ok()) << next.error().Format();
  JobSpec swift = LoraJob("ms-swift", ShardingMode::kZero1, {"all-linear", "router"});
  ASSERT_TRUE(ResolveAdapterTargets(swift, engines, &*next).ok());
  EXPECT_EQ(swift.adapter.targets,
            (std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2",
                                      "in_proj_qkvz", "in_proj_ba", "out_proj", "router"}));
  JobSpec etp = LoraJob("ms-swift", ShardingMode::kZero1, {"all-linear"});
  etp.layout.etp = 2;
  auto etp_refused = ResolveAdapterTargets(etp, engines, &*next);
  ASSERT_FALSE(etp_refused.ok());
  EXPECT_EQ(etp_refused.error().field, "parallel.etp");
  JobSpec dora = LoraJob("ms-swift", ShardingMode::kZero1, {"linear_qkv"});
  dora.adapter.kind = AdapterKind::kDora;
  auto dora_refused = ResolveAdapterTargets(dora, engines, &*next);
  ASSERT_FALSE(dora_refused.ok());
  EXPECT_EQ(dora_refused.error().field, "adapter.kind");
  JobSpec gate = LoraJob("ms-swift", ShardingMode::kZero1, {"gate"});
  auto gate_refused = ResolveAdapterTargets(gate, engines, &*next);
  ASSERT_FALSE(gate_refused.ok());
  EXPECT_EQ(gate_refused.error().hint, "name router (what ms-swift's all-router adds)");
  // HF code: all-linear stays PEFT's; the router is 'gate' there, not 'router'.
  JobSpec hf = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  ASSERT_TRUE(ResolveAdapterTargets(hf, engines, &*next).ok());
  EXPECT_EQ(hf.adapter.targets, std::vector<std::string>{"all-linear"});
  JobSpec hf_router = LoraJob("hf-trainer", ShardingMode::kNone, {"router"});
  auto router_refused = ResolveAdapterTargets(hf_router, engines, &*next);
  ASSERT_FALSE(router_refused.ok());
  EXPECT_NE(router_refused.error().message.find("'router' is megatron-core's TopKRouter"),
            std::string::npos)
      << router_refused.error().message;
  // Qwen3.6 (qwen3_5_moe) exists in transformers 5 only, whose experts are 3-D parameters.
  auto q36 = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(q36.ok()) << q36.error().Format();
  JobSpec hf36 = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  auto q36_refused = ResolveAdapterTargets(hf36, engines, &*q36);
  ASSERT_FALSE(q36_refused.ok());
  EXPECT_NE(q36_refused.error().message.find("model_type qwen3_5_moe"), std::string::npos)
      << q36_refused.error().message;
  JobSpec hf36_attention = LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj", "v_proj"});
  EXPECT_TRUE(ResolveAdapterTargets(hf36_attention, engines, &*q36).ok());
}

// transformers 5 holds the routed experts as 3-D parameters and the router as a bare weight
// (data/frameworks.yaml, hf-trainer's moe_adapter_layout), so PEFT's all-linear reaches neither.
// Before, a qwen3.6-35b-a3b (qwen3_5_moe) job under hf-trainer 5.x with all-linear was refused
// like any MoE model other than qwen3_moe and qwen3_next, whatever its release.
// Expected at r 8 from data/models/qwen3.6-35b-a3b.json (h 2048; 40 layers, every fourth full
// attention, the other 30 Gated DeltaNet, all 40 MoE), r x (d_in + d_out) per matrix:
//  - full attention (output gate: q 2048 -> 2 x 16 x 256 = 8192; kv 2 x 256 = 512): q 8 x 10240
//    + k 8 x 2560 + v 8 x 2560 + o 8 x (4096 + 2048) = 81920 + 20480 + 20480 + 49152 = 172032,
//    x 10 layers = 1,720,320;
//  - Gated DeltaNet (key_dim 16 x 128 = 2048, value_dim 32 x 128 = 4096): in_proj_qkvz 2048 ->
//    12288: 114688; in_proj_ba 2048 -> 64: 16896; out_proj 4096 -> 2048: 49152; 180736 x 30 =
//    5,422,080;
//  - shared expert (width 512): gate, up, down 3 x 8 x 2560 = 61440; shared_expert_gate 2048 ->
//    1: 8 x 2049 = 16392; 77832 x 40 = 3,113,280;
//  - no routed expert, no router: 0.
// Total 10,255,680. Explicit gate_proj reaches the shared expert's only: 8 x 2560 x 40 = 819,200.
TEST(EngineChain, TransformersFiveAllLinearLeavesRoutedExpertsAndRouterOut) {
  const FrameworkEngines engines = Shipped();
  auto q36 = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(q36.ok()) << q36.error().Format();
  JobSpec v5 = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  v5.framework.version = "5.2";
  auto resolved = ResolveAdapterTargets(v5, engines, &*q36);
  ASSERT_TRUE(resolved.ok()) << resolved.error().Format();
  EXPECT_TRUE(v5.adapter.fused_experts);
  const AdapterCoverage cov = CoverageOf(*q36, v5.adapter);
  EXPECT_EQ(cov.params, 10255680);
  EXPECT_EQ(cov.routed_params, 0);
  for (const std::string& m : cov.matrices) {
    EXPECT_EQ(m.find("routed experts"), std::string::npos) << m;
    EXPECT_EQ(m.find("(router)"), std::string::npos) << m;
  }
  JobSpec gate_proj = LoraJob("hf-trainer", ShardingMode::kNone, {"gate_proj"});
  gate_proj.framework.version = "5.2";
  ASSERT_TRUE(ResolveAdapterTargets(gate_proj, engines, &*q36).ok());
  EXPECT_EQ(CoverageOf(*q36, gate_proj.adapter).params, 819200);
  // 'gate' is the TopKRouter under 5.x, which PEFT's LoRA refuses.
  JobSpec router = LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj", "gate"});
  router.framework.version = "5.2";
  auto router_refused = ResolveAdapterTargets(router, engines, &*q36);
  ASSERT_FALSE(router_refused.ok());
  EXPECT_NE(router_refused.error().message.find("TopKRouter"), std::string::npos)
      << router_refused.error().message;
  // The same job at 4.57 (the latest known, and an explicit 4.57) keeps today's answer: refused.
  for (const std::string& version : {std::string(), std::string("4.57")}) {
    JobSpec v4 = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
    v4.framework.version = version;
    EXPECT_FALSE(ResolveAdapterTargets(v4, engines, &*q36).ok()) << version;
    EXPECT_FALSE(v4.adapter.fused_experts);
  }
  // A wrapper's chain reads hf-trainer at its latest (4.57): DeepSpeed's own release says
  // nothing of transformers'.
  JobSpec wrapped = LoraJob("deepspeed", ShardingMode::kZero3, {"all-linear"});
  wrapped.framework.version = "5.2";
  EXPECT_FALSE(ResolveAdapterTargets(wrapped, engines, &*q36).ok());
}

// A release after the latest data/frameworks.yaml knows still takes the rules the file dates by
// release: hf-trainer's expert loop ends at 5.0 (the step prints "one grouped GEMM (hf-trainer 5.2
// >= 5.0)") and its MoE adapter layout starts there. Before, the warning said "4.57's behaviour is
// used" for such a job, which the step and the adapter resolution then contradicted.
TEST(EngineChain, ANewerReleaseIsSaidToKeepTheRulesDatedAfterTheLatest) {
  const FrameworkEngines engines = Shipped();
  auto q3 = LoadModelConfig("qwen3-30b-a3b");
  ASSERT_TRUE(q3.ok()) << q3.error().Format();
  JobSpec v5 = LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj"});
  v5.framework.version = "5.2";
  const std::vector<std::string> lines = InapplicableFields(v5, *q3, engines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("4.57's behaviour is used"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("the rules the file dates by release apply at 5.2"), std::string::npos)
      << lines[0];
  JobSpec v4 = LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj"});
  v4.framework.version = "4.57";
  EXPECT_TRUE(InapplicableFields(v4, *q3, engines).empty());
}

// qwen3_moe under transformers 5: PEFT 0.19+ turns 4.x's expert and router names into adapters
// on the 3-D parameters (gate_up_proj at rank 2r), which strata does not model, so names that
// reach the experts are refused rather than priced as 4.x's or as none. Attention-only adapters
// cost the same in both releases. Expected from data/models/qwen3-30b-a3b.json (h 2048, 32 q
// heads and 4 kv heads of 128, 48 layers), r 8: q 8 x (2048 + 4096) + k 8 x (2048 + 512) + v the
// same + o 8 x (4096 + 2048) = 49152 + 20480 + 20480 + 49152 = 139264 a layer, x 48 = 6,684,672.
// At 4.57 all-linear adds the router 8 x (2048 + 128) = 17408 and 128 routed experts x 3 x
// 8 x (2048 + 768) = 8,650,752 a layer.
TEST(EngineChain, TransformersFiveRefusesConvertedMoeExpertNames) {
  const FrameworkEngines engines = Shipped();
  auto q3 = LoadModelConfig("qwen3-30b-a3b");
  ASSERT_TRUE(q3.ok()) << q3.error().Format();
  JobSpec v5 = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  v5.framework.version = "5.2";
  auto refused = ResolveAdapterTargets(v5, engines, &*q3);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("PEFT 0.19+"), std::string::npos)
      << refused.error().message;
  JobSpec attention5 =
      LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj", "k_proj", "v_proj", "o_proj"});
  attention5.framework.version = "5.2";
  ASSERT_TRUE(ResolveAdapterTargets(attention5, engines, &*q3).ok());
  JobSpec attention4 =
      LoraJob("hf-trainer", ShardingMode::kNone, {"q_proj", "k_proj", "v_proj", "o_proj"});
  ASSERT_TRUE(ResolveAdapterTargets(attention4, engines, &*q3).ok());
  EXPECT_EQ(CoverageOf(*q3, attention5.adapter).params, 6684672);
  EXPECT_EQ(CoverageOf(*q3, attention4.adapter).params, 6684672);
  JobSpec v4 = LoraJob("hf-trainer", ShardingMode::kNone, {"all-linear"});
  ASSERT_TRUE(ResolveAdapterTargets(v4, engines, &*q3).ok());
  EXPECT_FALSE(v4.adapter.fused_experts);
  EXPECT_EQ(CoverageOf(*q3, v4.adapter).params, 48 * (139264 + 17408 + 8650752));
  EXPECT_EQ(CoverageOf(*q3, v4.adapter).routed_params, 48 * 8650752);
}

// One answer to "does DeepSpeed run this job's sharding?", from data/frameworks.yaml's
// zero3_runtime and zero12_runtime. Before, memory asked EngineChain::RunsDeepSpeed (a test of
// the names: not verl, a chain through deepspeed or ending at hf-trainer), which also said yes
// for the HF Trainer, deepspeed and ms-swift under sharding none and fsdp2, where no ZeRO runs;
// step and plan asked the profile's zero3_runtime walk, zero3 only. Expected, by mode, from the
// entries' sources: the Trainer's ZeRO is DeepSpeed's (accelerate's DeepSpeed plugin); ms-swift's
// zero1 is `megatron sft` (megatron-core's distributed optimizer), its zero2/zero3 `swift sft`
// under DeepSpeed; verl's FSDP workers are FSDP1 and its zero1 the megatron workers.
TEST(EngineChain, ShardingRuntimeIsOneAnswerFromData) {
  const FrameworkEngines e = Shipped();
  auto runtime = [&](const char* name, ShardingMode mode) {
    return ShardingRuntimeName(ResolveShardingRuntime(e, ResolveEngineChain(e, Named(name), mode)));
  };
  using M = ShardingMode;
  EXPECT_EQ(runtime("hf-trainer", M::kNone), "unstated");
  EXPECT_EQ(runtime("hf-trainer", M::kZero1), "deepspeed");
  EXPECT_EQ(runtime("hf-trainer", M::kZero2), "deepspeed");
  EXPECT_EQ(runtime("hf-trainer", M::kZero3), "deepspeed");
  EXPECT_EQ(runtime("hf-trainer", M::kFsdp2), "fsdp2");
  EXPECT_EQ(runtime("ms-swift", M::kZero1), "megatron");
  EXPECT_EQ(runtime("ms-swift", M::kZero2), "deepspeed");
  EXPECT_EQ(runtime("ms-swift", M::kZero3), "deepspeed");
  EXPECT_EQ(runtime("deepspeed", M::kZero1), "deepspeed");
  EXPECT_EQ(runtime("verl", M::kZero1), "megatron");
  EXPECT_EQ(runtime("verl", M::kZero2), "fsdp1");
  EXPECT_EQ(runtime("verl", M::kZero3), "fsdp1");
  EXPECT_EQ(runtime("megatron-core", M::kZero1), "megatron");
  EXPECT_EQ(runtime("megatron-core", M::kZero3), "megatron-fsdp");
  EXPECT_EQ(runtime("megatron-core", M::kFsdp2), "megatron-fsdp");
  EXPECT_EQ(runtime("torchtitan", M::kZero3), "fsdp2");
  EXPECT_EQ(runtime("torchtitan", M::kFsdp2), "fsdp2");
  // A zero12_runtime the parser does not know names the key and the values allowed.
  auto bad =
      Parse("frameworks:\n  a: {latest: '1', zero3_runtime: fsdp1, zero12_runtime: zero9}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("unknown zero12_runtime 'zero9', expected deepspeed, fsdp1, "
                                      "fsdp2 or megatron"),
            std::string::npos)
      << bad.error().Format();
}

}  // namespace
}  // namespace strata
