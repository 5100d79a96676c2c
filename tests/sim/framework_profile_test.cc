// The framework profile read from data/frameworks.yaml and resolved for a job: which code
// trains (wrappers by sharding mode), which release-gated choices apply, and what is printed as
// an assumption.
#include "strata/sim/framework_profile.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace strata::framework_profile_test {
namespace {

FrameworkCatalog Catalog() {
  auto c = LoadFrameworkCatalog();
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().Format());
  return c.ok() ? *c : FrameworkCatalog{};
}

JobSpec Job(const std::string& name, const std::string& version,
            ShardingMode mode = ShardingMode::kZero1, int64_t dp = 8) {
  JobSpec job;
  job.framework = {name, version, false, true, ""};
  job.sharding.mode = mode;
  job.layout.dp = dp;
  return job;
}

TEST(FrameworkProfile, EveryJobNameHasAnEntry) {
  const FrameworkCatalog c = Catalog();
  for (const std::string& name : FrameworkNames()) {
    EXPECT_TRUE(c.frameworks.contains(name)) << name;
    auto p = ResolveFramework(c, Job(name, ""), "H100 SXM");
    EXPECT_TRUE(p.ok()) << name;
  }
  EXPECT_EQ(c.frameworks.size(), FrameworkNames().size());
}

TEST(FrameworkProfile, ReleaseOrder) {
  struct Case {
    const char* version;
    const char* from;
    bool at_least;
  };
  for (const Case& c :
       {Case{"5.0", "5.0", true}, Case{"4.57", "5.0", false},
        Case{"0.10", "0.9", true},  // numeric, not text, order
        Case{"v0.2.2", "0.2.0", true}, Case{"0.1.0", "0.2.0", false}, Case{"0.8.0rc1", "0.8", true},
        Case{"6985e58", "0.1", false}, Case{"", "0.1", false}}) {
    EXPECT_EQ(ReleaseAtLeast(c.version, c.from), c.at_least) << c.version << " vs " << c.from;
  }
}

// HF transformers ran MoE experts in a Python loop until 5.0 (huggingface/transformers#42697).
TEST(FrameworkProfile, HfExpertLoopEndsAtTransformers5) {
  const FrameworkCatalog c = Catalog();
  auto old = ResolveFramework(c, Job("hf-trainer", "4.57"), "H100 SXM");
  auto v5 = ResolveFramework(c, Job("hf-trainer", "5.0"), "H100 SXM");
  ASSERT_TRUE(old.ok() && v5.ok());
  EXPECT_DOUBLE_EQ(old->expert_loop_ops, 10);  // data/frameworks.yaml ops_per_expert
  EXPECT_DOUBLE_EQ(v5->expert_loop_ops, 0);
  auto mc = ResolveFramework(c, Job("megatron-core", ""), "H100 SXM");
  ASSERT_TRUE(mc.ok());
  EXPECT_DOUBLE_EQ(mc->expert_loop_ops, 0);  // grouped GEMM
}

// torchtitan put FlashAttention-2 first on Hopper until 6a3a9da95 (released in v0.2.0); the
// H200 measurements give FA2 0.52 / 0.56 of cuDNN's rate. B200 ran cuDNN all along.
TEST(FrameworkProfile, TorchtitanAttentionByReleaseAndGpu) {
  const FrameworkCatalog c = Catalog();
  auto old = ResolveFramework(c, Job("torchtitan", "0.1.0"), "H100 SXM");
  auto now = ResolveFramework(c, Job("torchtitan", "0.2.0"), "H100 SXM");
  auto b200 = ResolveFramework(c, Job("torchtitan", "0.1.0"), "B200");
  ASSERT_TRUE(old.ok() && now.ok() && b200.ok());
  EXPECT_DOUBLE_EQ(old->attention_forward_factor, 0.52);
  EXPECT_DOUBLE_EQ(old->attention_backward_factor, 0.56);
  EXPECT_DOUBLE_EQ(now->attention_forward_factor, 1);
  EXPECT_DOUBLE_EQ(b200->attention_forward_factor, 1);
}

// The attention line names the library that runs it: Transformer Engine under megatron-core only;
// torchtitan (from v0.2.0) and HF code reach cuDNN through PyTorch's SDPA, with no Transformer
// Engine installed (both printed "(Transformer Engine)").
TEST(FrameworkProfile, TheAttentionLineNamesWhoCallsCudnn) {
  const FrameworkCatalog c = Catalog();
  auto attention_line = [&](const std::string& name, const std::string& version) {
    auto p = ResolveFramework(c, Job(name, version), "H100 SXM");
    EXPECT_TRUE(p.ok()) << name;
    for (const std::string& a : p->assumptions) {
      if (a.starts_with("attention:")) return a;
    }
    return std::string();
  };
  EXPECT_NE(attention_line("megatron-core", "").find("Transformer Engine"), std::string::npos);
  const std::string titan = attention_line("torchtitan", "0.2.0");
  EXPECT_EQ(titan.find("Transformer Engine"), std::string::npos) << titan;
  EXPECT_NE(titan.find("PyTorch SDPA's cuDNN backend"), std::string::npos) << titan;
  const std::string hf = attention_line("hf-trainer", "4.57");
  EXPECT_EQ(hf.find("Transformer Engine"), std::string::npos) << hf;
  EXPECT_NE(hf.find("PyTorch SDPA"), std::string::npos) << hf;
}

// moe.grouped_gemm on megatron-core: unset, the grouped GEMM is assumed (and said so); false runs
// SequentialMLP at data/frameworks.yaml's 6 ops an expert with no per-expert sync; true is the
// job's own. A wrapper (ms-swift, zero1) resolves through megatron-core alike.
TEST(FrameworkProfile, MegatronGroupedGemmFollowsTheJob) {
  const FrameworkCatalog c = Catalog();
  auto with = [&](const std::string& name, std::optional<bool> grouped) {
    JobSpec job = Job(name, "");
    job.moe_grouped_gemm = grouped;
    auto p = ResolveFramework(c, job, "H100 SXM");
    EXPECT_TRUE(p.ok()) << name;
    return *p;
  };
  const FrameworkProfile unset = with("megatron-core", std::nullopt);
  EXPECT_TRUE(unset.experts_grouped);
  EXPECT_TRUE(unset.experts_grouped_assumed);
  EXPECT_EQ(unset.expert_loop_ops, 0);
  EXPECT_NE(unset.experts_assumption.find("ASSUMED"), std::string::npos);
  const FrameworkProfile seq = with("ms-swift", false);
  EXPECT_FALSE(seq.experts_grouped);
  EXPECT_FALSE(seq.experts_grouped_assumed);
  EXPECT_EQ(seq.expert_loop_ops, 6);
  EXPECT_EQ(seq.expert_loop_syncs, 0);
  const FrameworkProfile grouped = with("megatron-core", true);
  EXPECT_FALSE(grouped.experts_grouped_assumed);
  EXPECT_EQ(grouped.expert_loop_ops, 0);
  // HF code's experts follow the transformers release, not the flag.
  EXPECT_EQ(with("hf-trainer", false).expert_loop_syncs, 1);
}

// ms-swift trains megatron-core models with `megatron sft` (zero1) and HF models under DeepSpeed
// with `swift sft`; ZeRO-3's per-parameter fetch is 1 cat + 2 ops per DP rank.
TEST(FrameworkProfile, WrappersFollowTheShardingMode) {
  const FrameworkCatalog c = Catalog();
  auto mcore = ResolveFramework(c, Job("ms-swift", ""), "A800");
  ASSERT_TRUE(mcore.ok());
  EXPECT_EQ(mcore->engine, "megatron-core");
  EXPECT_DOUBLE_EQ(mcore->Zero3OpsPerParam(8), 0);
  auto z3 = ResolveFramework(c, Job("ms-swift", "", ShardingMode::kZero3, 16), "A800");
  ASSERT_TRUE(z3.ok());
  EXPECT_EQ(z3->engine, "hf-trainer");
  EXPECT_DOUBLE_EQ(z3->Zero3OpsPerParam(16), 1 + 2 * 16);
  EXPECT_DOUBLE_EQ(z3->expert_loop_ops, 10);
  // The planner's zero3 candidate of a zero1 ms-swift job is priced as swift sft would run it.
  EXPECT_EQ(mcore->ForMode(ShardingMode::kZero3).engine, "hf-trainer");
  EXPECT_EQ(mcore->ForMode(ShardingMode::kZero1).engine, "megatron-core");
  // The HF Trainer's zero3 is DeepSpeed's; megatron-core with zero3 has no DeepSpeed hooks.
  auto hf = ResolveFramework(c, Job("hf-trainer", "", ShardingMode::kZero3, 8), "A800");
  auto mz3 = ResolveFramework(c, Job("megatron-core", "", ShardingMode::kZero3, 8), "A800");
  ASSERT_TRUE(hf.ok() && mz3.ok());
  EXPECT_DOUBLE_EQ(hf->Zero3OpsPerParam(8), 17);
  EXPECT_DOUBLE_EQ(mz3->Zero3OpsPerParam(8), 0);
  // torchtitan runs no DeepSpeed: no per-parameter hooks (it was charged 1 + 2 x DP = 17 ops a
  // parameter at DP 8 before the cost was keyed on DeepSpeed running).
  auto titan = ResolveFramework(c, Job("torchtitan", "", ShardingMode::kZero3, 8), "A800");
  ASSERT_TRUE(titan.ok());
  EXPECT_DOUBLE_EQ(titan->Zero3OpsPerParam(8), 0);
  // verl's FSDP workers (strategy fsdp) are PyTorch FSDP1 (its zero3_runtime): per-unit gathers,
  // no DeepSpeed hooks. They were charged 17 ops a parameter at DP 8, which made the verl
  // practice row moe30b-2 +91% (998.6 s against 523 s measured).
  auto verl = ResolveFramework(c, Job("verl", "", ShardingMode::kZero3, 8), "H100 SXM");
  ASSERT_TRUE(verl.ok()) << verl.error().Format();
  EXPECT_DOUBLE_EQ(verl->Zero3OpsPerParam(8), 0);
  // The deepspeed wrapper runs them (1 + 2 x 8).
  auto ds = ResolveFramework(c, Job("deepspeed", "", ShardingMode::kZero3, 8), "A800");
  ASSERT_TRUE(ds.ok());
  EXPECT_DOUBLE_EQ(ds->Zero3OpsPerParam(8), 17);
}

TEST(FrameworkProfile, DefaultsArePrintedAsAssumptions) {
  const FrameworkCatalog c = Catalog();
  JobSpec job;  // no framework: section
  auto p = ResolveFramework(c, job, "H20");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "megatron-core");
  EXPECT_EQ(p->version, "0.16");
  ASSERT_GE(p->assumptions.size(), 2u);
  EXPECT_EQ(p->assumptions[0],
            "framework ASSUMED megatron-core (the job names none; set framework.name)");
  EXPECT_EQ(p->assumptions[1],
            "megatron-core release ASSUMED 0.16, the latest data/frameworks.yaml knows (set "
            "framework.version)");
}

// A catalog assembled in code (as tests and embedders do) may hold frameworks without the
// engines the file parser fills; resolving against it used to throw std::out_of_range from
// `latest.at(name)`. Now the release is said to be unknown.
TEST(FrameworkProfile, ACatalogWithoutEnginesDoesNotThrow) {
  FrameworkCatalog c = Catalog();
  c.engines = FrameworkEngines{};
  auto p = ResolveFramework(c, Job("torchtitan", ""), "H100 SXM");
  ASSERT_TRUE(p.ok()) << p.error().Format();
  EXPECT_EQ(p->version, "");
  bool said = false;
  for (const std::string& a : p->assumptions)
    said = said || a.starts_with("torchtitan release unknown");
  EXPECT_TRUE(said);
}

TEST(FrameworkProfile, BadCatalogNamesTheField) {
  const std::string text =
      "host: {op_s: 1e-5, rows: [], source: s}\n"
      "sdpa_flash2: {forward: 0.5, backward: 0.5, gpus: [H100 SXM], rows: [], source: s}\n"
      "fsdp2_fetch: {ops_per_fetch: 3, ops_per_param: 1, copy_out_bytes_per_byte: 2, rows: [],\n"
      "              source: s}\n"
      "frameworks:\n"
      "  x: {latest: '1', layer_ops: 1, moe_ops: 1, moe_host_syncs: 0, attention: flash3,\n"
      "      rows: [], source: s}\n";
  auto c = ParseFrameworkCatalog(text, "f.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().Format(),
            "f.yaml:6: frameworks.x.attention: unknown attention 'flash3', expected cudnn or "
            "sdpa_flash2");
  // An eager factor below 1 (eager code moving fewer bytes than the fused kernel) is refused.
  std::string eager = text;
  eager.replace(eager.find("attention: flash3"), 17,
                "attention: cudnn, eager_traffic: {norm: 0.5, rotary: 1, mlp_activation: 1, "
                "attention_copies: false}");
  auto e = ParseFrameworkCatalog(eager, "f.yaml");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().Format().find("frameworks.x.eager_traffic.norm"), std::string::npos)
      << e.error().Format();
}

// `zero3_runtime:` says whose ZeRO-3 a framework runs; a bad value names the file, the key and
// the values allowed, and an engine (no runs_as) that leaves it out is refused.
TEST(FrameworkProfile, Zero3RuntimeIsCheckedAndRequiredOfEngines) {
  const std::string text =
      "host: {op_s: 1e-5, rows: [], source: s}\n"
      "sdpa_flash2: {forward: 0.5, backward: 0.5, gpus: [H100 SXM], rows: [], source: s}\n"
      "fsdp2_fetch: {ops_per_fetch: 3, ops_per_param: 1, copy_out_bytes_per_byte: 2, rows: [],\n"
      "              source: s}\n"
      "frameworks:\n"
      "  x: {latest: '1', layer_ops: 1, moe_ops: 1, moe_host_syncs: 0, attention: cudnn,\n"
      "      zero3_runtime: zero3, rows: [], source: s}\n";
  auto bad = ParseFrameworkCatalog(text, "f.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(),
            "f.yaml:7: frameworks.x.zero3_runtime: unknown zero3_runtime 'zero3', expected "
            "deepspeed, fsdp1, fsdp2 or megatron-fsdp");
  std::string missing = text;
  missing.replace(missing.find("zero3_runtime: zero3, "), 22, "");
  auto none = ParseFrameworkCatalog(missing, "f.yaml");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().Format().find("frameworks.x.zero3_runtime: missing"), std::string::npos)
      << none.error().Format();
  std::string good = text;
  good.replace(good.find("zero3, "), 7, "fsdp1, ");
  auto ok = ParseFrameworkCatalog(good, "f.yaml");
  ASSERT_TRUE(ok.ok()) << ok.error().Format();
  EXPECT_EQ(ok->engines.sharding_runtime.at("x").at("zero3"), ShardingRuntime::kFsdp1);
  EXPECT_EQ(ShardingRuntimeName(ShardingRuntime::kMegatronFsdp), "megatron-fsdp");
}

// DeepSpeed's hooks follow the chain's first `zero3_runtime:` from the named framework, not a
// framework's name: verl's own fsdp1 wins over its engine's (hf-trainer's) deepspeed; restated as
// deepspeed, verl pays DeepSpeed's 1 + 2 x 8 = 17 ops a parameter at DP 8; a wrapper that states
// none takes the next entry's (ms-swift -> deepspeed -> hf-trainer).
TEST(FrameworkProfile, DeepSpeedHooksFollowTheChainsZero3Runtime) {
  FrameworkCatalog c = Catalog();
  const auto ops = [&](const char* name) {
    auto p = ResolveFramework(c, Job(name, "", ShardingMode::kZero3, 8), "H100 SXM");
    EXPECT_TRUE(p.ok()) << name;
    return p.ok() ? p->Zero3OpsPerParam(8) : -1.0;
  };
  EXPECT_DOUBLE_EQ(ops("verl"), 0);
  auto& runtime = c.engines.sharding_runtime;
  runtime["verl"]["zero3"] = ShardingRuntime::kDeepSpeed;
  EXPECT_DOUBLE_EQ(ops("verl"), 17);
  runtime["verl"].erase("zero3");  // hf-trainer's decides
  EXPECT_DOUBLE_EQ(ops("verl"), 17);
  runtime["ms-swift"].erase("zero3");
  runtime["deepspeed"].erase("zero3");
  EXPECT_DOUBLE_EQ(ops("ms-swift"), 17);
  runtime["hf-trainer"]["zero3"] = ShardingRuntime::kFsdp1;
  EXPECT_DOUBLE_EQ(ops("ms-swift"), 0);
  EXPECT_DOUBLE_EQ(ops("hf-trainer"), 0);
}

// torchtitan repeats K and V to the query heads (repeat_kv: unsqueeze, expand, reshape on K and
// on V, 6 host ops a layer, and the copies' bytes) in v0.1.0 to v0.2.1 only: pytorch/torchtitan
// ff0829c10 "GQA without kv repeats (#2259)", first released in v0.2.2 (73a0e69), passes
// enable_gqa to SDPA instead. The output's contiguous() copy stays in every release.
TEST(FrameworkProfile, TorchtitanRepeatsKvBefore022Only) {
  const FrameworkCatalog c = Catalog();
  auto old = ResolveFramework(c, Job("torchtitan", "0.2.1", ShardingMode::kFsdp2), "H100 SXM");
  ASSERT_TRUE(old.ok()) << old.error().Format();
  EXPECT_TRUE(old->eager_attention_copies);
  EXPECT_TRUE(old->eager_gqa_repeat);
  EXPECT_DOUBLE_EQ(old->gqa_repeat_ops, 6);
  for (const std::string version : {"0.2.2", ""}) {  // "" = the latest, 0.2.2
    auto now = ResolveFramework(c, Job("torchtitan", version, ShardingMode::kFsdp2), "H100 SXM");
    ASSERT_TRUE(now.ok()) << now.error().Format();
    EXPECT_TRUE(now->eager_attention_copies);
    EXPECT_FALSE(now->eager_gqa_repeat) << version;
    EXPECT_DOUBLE_EQ(now->gqa_repeat_ops, 0) << version;
  }
}

// ms-swift's `swift sft --deepspeed zero3 --use_liger_kernel true` (modelscope/ms-swift
// examples/train/full/qwen2_5_32b.sh): the job trains through DeepSpeed and the HF Trainer, where
// Liger applies. The planner's other modes include zero1, which ms-swift runs through
// megatron-core (data/frameworks.yaml, runs_as); that mode's profile refused Liger and failed
// `strata step` and `plan` on the job as a whole. That mode is now priced without the flag.
TEST(FrameworkProfile, LigerOnTheJobsModeDoesNotFailTheOtherModes) {
  const FrameworkCatalog c = Catalog();
  JobSpec job = Job("ms-swift", "", ShardingMode::kZero3);
  job.framework.liger_kernel = true;
  auto p = ResolveFramework(c, job, "H100 SXM");
  ASSERT_TRUE(p.ok()) << p.error().Format();
  EXPECT_EQ(p->engine, "hf-trainer");
  EXPECT_DOUBLE_EQ(p->eager_norm, 1);  // Liger's fused RMSNorm on the job's own launch
  EXPECT_EQ(p->ForMode(ShardingMode::kZero1).engine, "megatron-core");
  EXPECT_EQ(p->ForMode(ShardingMode::kZero3).engine, "hf-trainer");
  // The job's own mode still refuses the flag where its engine is not HF code.
  job.sharding.mode = ShardingMode::kZero1;
  EXPECT_FALSE(ResolveFramework(c, job, "H100 SXM").ok());
}

// torchtitan's eager module code moves more bytes than fused kernels (data/frameworks.yaml:
// norm 9, rotary 5, activation 1.667, with attention's layout copies); under torch.compile the
// profile carries none of it.
TEST(FrameworkProfile, TorchtitanEagerTrafficOnlyWithoutCompile) {
  const FrameworkCatalog c = Catalog();
  JobSpec job = Job("torchtitan", "0.0.2", ShardingMode::kFsdp2);
  auto eager = ResolveFramework(c, job, "H100 SXM");
  ASSERT_TRUE(eager.ok());
  EXPECT_DOUBLE_EQ(eager->eager_norm, 9);
  EXPECT_DOUBLE_EQ(eager->eager_rotary, 5);
  EXPECT_DOUBLE_EQ(eager->eager_activation, 1.667);
  EXPECT_TRUE(eager->eager_attention_copies);
  EXPECT_DOUBLE_EQ(eager->fsdp2_copy_out_bytes_per_byte, 2);
  job.framework.compile = true;
  auto compiled = ResolveFramework(c, job, "H100 SXM");
  ASSERT_TRUE(compiled.ok());
  EXPECT_DOUBLE_EQ(compiled->eager_norm, 1);
  EXPECT_FALSE(compiled->eager_attention_copies);
  // Liger patches HF transformers' code, not torchtitan's: refused, naming the field (it used to
  // drop torchtitan's eager traffic silently).
  job.framework.compile = false;
  job.framework.liger_kernel = true;
  auto titan_liger = ResolveFramework(c, job, "H100 SXM");
  ASSERT_FALSE(titan_liger.ok());
  EXPECT_NE(titan_liger.error().Format().find("framework.liger_kernel"), std::string::npos)
      << titan_liger.error().Format();
  // Under DeepSpeed (HF code) Liger removes the eager traffic; without it, HF's factors apply.
  JobSpec ds = Job("deepspeed", "", ShardingMode::kZero3);
  auto hf = ResolveFramework(c, ds, "H100 SXM");
  ASSERT_TRUE(hf.ok());
  EXPECT_DOUBLE_EQ(hf->eager_norm, 9);
  EXPECT_FALSE(hf->eager_attention_copies);
  ds.framework.liger_kernel = true;
  auto liger = ResolveFramework(c, ds, "H100 SXM");
  ASSERT_TRUE(liger.ok()) << liger.error().Format();
  EXPECT_DOUBLE_EQ(liger->eager_norm, 1);
  EXPECT_DOUBLE_EQ(liger->eager_activation, 1);
  // megatron-core's fused kernels: nothing either.
  auto mcore = ResolveFramework(c, Job("megatron-core", ""), "H100 SXM");
  ASSERT_TRUE(mcore.ok());
  EXPECT_DOUBLE_EQ(mcore->eager_norm, 1);
}

}  // namespace
}  // namespace strata::framework_profile_test
