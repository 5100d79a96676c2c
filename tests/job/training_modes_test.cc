// The job file's sharding/fp8 sections, uneven pipeline stages and optimizer names: what
// parses, what is refused and why.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "strata/job/job_validation.h"
#include "strata/job/resolved_job.h"
#include "strata/job/training_modes_parse.h"

namespace strata::training_modes_test {
namespace {

constexpr const char* kJob =
    "model: qwen3.6-35b-a3b\n"
    "cluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
    "parallel: {tp: 1, ep: 8}\n"
    "batch: {micro_batch: 1, global_batch: 80}\n"
    "sequence: {max_tokens: 4096}\n";

TEST(TrainingModes, DefaultsFollowTheDistributedOptimizer) {
  auto job = ParseJobSpec(kJob, "j.yaml");
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->sharding.mode, ShardingMode::kZero1);
  auto ddp = ParseJobSpec(kJob, "j.yaml", {"optimizer.distributed=false"});
  ASSERT_TRUE(ddp.ok()) << ddp.error().Format();
  EXPECT_EQ(ddp->sharding.mode, ShardingMode::kNone);
  auto z3 = ParseJobSpec(kJob, "j.yaml", {"sharding.mode=zero3", "sharding.offload_param=cpu"});
  ASSERT_TRUE(z3.ok()) << z3.error().Format();
  EXPECT_EQ(z3->sharding.mode, ShardingMode::kZero3);
  EXPECT_EQ(z3->sharding.offload_param, OffloadTarget::kCpu);
  EXPECT_TRUE(z3->optimizer.distributed);
  EXPECT_EQ(z3->sharding.prefetch_layers, 1.0);
  // DeepSpeed's prefetch bucket smaller than one layer: a fraction of a layer.
  auto part =
      ParseJobSpec(kJob, "j.yaml", {"sharding.mode=zero3", "sharding.prefetch_layers=0.0047"});
  ASSERT_TRUE(part.ok()) << part.error().Format();
  EXPECT_DOUBLE_EQ(part->sharding.prefetch_layers, 0.0047);
}

struct BadCase {
  const char* name;
  std::vector<std::string> sets;
  const char* field;    // the error's field (after "--set " when it came from --set)
  const char* message;  // a part of the message
};

TEST(TrainingModes, RefusesCombinationsNoFrameworkRuns) {
  const BadCase cases[] = {
      {"unknown mode", {"sharding.mode=zero4"}, "sharding.mode", "expected one of"},
      {"offload params without zero3",
       {"sharding.mode=zero2", "sharding.offload_param=cpu"},
       "sharding.offload_param",
       "zero3 or fsdp2"},
      {"fsdp2 optimizer-only offload",
       {"sharding.mode=fsdp2", "sharding.offload_optimizer=cpu"},
       "sharding.offload_optimizer",
       "together"},
      {"nvme optimizer below zero3",
       {"sharding.mode=zero2", "sharding.offload_optimizer=nvme"},
       "sharding.offload_optimizer",
       "ZeRO-Infinity"},
      {"reshard without sharded weights",
       {"sharding.mode=zero1", "sharding.reshard_after_forward=false"},
       "sharding.reshard_after_forward",
       "zero3 and fsdp2"},
      {"hsdp without sharding",
       {"sharding.mode=none", "sharding.replicate=2"},
       "sharding.replicate",
       "HSDP"},
      {"contradicting switch",
       {"sharding.mode=none", "optimizer.distributed=true"},
       "optimizer.distributed",
       "contradicts"},
      {"rowwise fp8 all-gather",
       {"sharding.mode=fsdp2", "fp8.recipe=torchao_rowwise", "fp8.param_gather=true"},
       "fp8.param_gather",
       "tensorwise"},
      {"amax history off delayed",
       {"fp8.recipe=blockwise", "fp8.amax_history=16"},
       "fp8.amax_history",
       "delayed"},
      {"unknown optimizer", {"optimizer.name=lion"}, "optimizer.name", "muon"},
      {"negative prefetch",
       {"sharding.mode=zero3", "sharding.prefetch_layers=-0.5"},
       "sharding.prefetch_layers",
       "0 or more layers"},
      {"prefetch not a number",
       {"sharding.mode=zero3", "sharding.prefetch_layers=one"},
       "sharding.prefetch_layers",
       "expected a number"},
      {"infinite prefetch",
       {"sharding.mode=zero3", "sharding.prefetch_layers=inf"},
       "sharding.prefetch_layers",
       "0 or more layers"},
      {"overlap_comm under fsdp2",
       {"sharding.mode=fsdp2", "sharding.overlap_comm=false"},
       "sharding.overlap_comm",
       "DeepSpeed's ZeRO-1/2/3 switch"},
      {"overlap_comm not a boolean",
       {"sharding.mode=zero3", "sharding.overlap_comm=sometimes"},
       "sharding.overlap_comm",
       "true or false"},
  };
  for (const BadCase& c : cases) {
    auto job = ParseJobSpec(kJob, "j.yaml", c.sets);
    ASSERT_FALSE(job.ok()) << c.name;
    EXPECT_NE(job.error().field.find(c.field), std::string::npos)
        << c.name << ": " << job.error().Format();
    EXPECT_NE(job.error().message.find(c.message), std::string::npos)
        << c.name << ": " << job.error().Format();
  }
}

TEST(TrainingModes, ModelRulesForHsdpAndFp8Params) {
  // Expert-DP is 40 / 8 = 5: replicate 2 divides DP 40 but not 5.
  auto spec = ParseJobSpec(kJob, "j.yaml", {"sharding.replicate=2"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "sharding.replicate");
  // FP8 weights at 1 byte are refused at parse time (the fp8 section models FP8).
  auto fp8 = ParseJobSpec(kJob, "j.yaml", {"precision.params=fp8"});
  ASSERT_FALSE(fp8.ok());
  EXPECT_EQ(fp8.error().field, "--set precision.params");
}

TEST(UnevenPipeline, StageCountsAsMegatronSplitsThem) {
  ParallelLayout l;
  l.pp = 2;
  l.last_stage_layers = 11;  // MS-03: Qwen1.5-MoE, 24 layers -> 13 + 11
  EXPECT_EQ(StageLayerCounts(l, 24), (std::vector<int64_t>{13, 11}));
  l.pp = 4;
  l.first_stage_layers = 5;  // 61 layers (DeepSeek-V3)
  l.last_stage_layers = 6;   // 61 - 5 - 6 = 50 over 2 middle stages: 25 each
  EXPECT_EQ(StageLayerCounts(l, 61), (std::vector<int64_t>{5, 25, 25, 6}));
  ParallelLayout even;
  even.pp = 4;
  EXPECT_EQ(StageLayerCounts(even, 48), (std::vector<int64_t>{12, 12, 12, 12}));
}

// StageLayerExtremes is StageLayerCounts' last entry and the largest of the others, on every
// shape the job accepts (even, first/last counts, accounted embedding/loss) for PP 1 to 16.
TEST(UnevenPipeline, ExtremesAgreeWithTheCounts) {
  for (int64_t layers : {24, 27, 61, 96, 126}) {
    for (int64_t pp = 1; pp <= 16; ++pp) {
      std::vector<ParallelLayout> shapes;
      ParallelLayout even;
      even.pp = pp;
      if (layers % pp == 0) shapes.push_back(even);
      for (int64_t first : {0, 3, 7}) {
        for (int64_t last : {0, 2, 5}) {
          ParallelLayout u = even;
          u.first_stage_layers = first;
          u.last_stage_layers = last;
          const int64_t others = pp - (first > 0) - (last > 0);
          const int64_t rest = layers - first - last;
          if ((first > 0 || last > 0) && pp > 1 && others > 0 && rest >= others &&
              rest % others == 0) {
            shapes.push_back(u);
          }
        }
      }
      for (int mask = 1; mask < 4; ++mask) {
        ParallelLayout a = even;
        a.account_for_embedding = (mask & 1) != 0;
        a.account_for_loss = (mask & 2) != 0;
        const int64_t total = layers + (mask & 1) + ((mask >> 1) & 1);
        if (pp > 1 && total % pp == 0 && total / pp >= 2) shapes.push_back(a);
      }
      for (const ParallelLayout& l : shapes) {
        const std::vector<int64_t> counts = StageLayerCounts(l, layers);
        const StageExtremes e = StageLayerExtremes(l, layers);
        EXPECT_EQ(e.last, counts.back()) << layers << " on PP " << pp;
        const int64_t other =
            pp > 1 ? *std::max_element(counts.begin(), counts.end() - 1) : int64_t{0};
        EXPECT_EQ(e.max_other, other) << layers << " on PP " << pp << StageSplitSuffix(l);
      }
    }
  }
}

TEST(UnevenPipeline, ExpressesAnOddLayerCountAndRefusesBadSplits) {
  // DeepSeek-V3 has 61 layers: PP 2 is refused evenly, accepted as 31 + 30.
  const std::vector<std::string> base = {"model=deepseek-v3", "parallel.pp=2", "parallel.ep=4"};
  auto even = ParseJobSpec(kJob, "j.yaml", base);
  ASSERT_TRUE(even.ok()) << even.error().Format();
  EXPECT_FALSE(ResolveJob(*even).ok());
  std::vector<std::string> uneven = base;
  uneven.push_back("parallel.last_stage_layers=30");
  auto ok = ParseJobSpec(kJob, "j.yaml", uneven);
  ASSERT_TRUE(ok.ok()) << ok.error().Format();
  auto job = ResolveJob(*ok);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  std::vector<std::string> bad = base;
  bad.push_back("parallel.first_stage_layers=40");
  bad.push_back("parallel.last_stage_layers=30");  // 70 > 61
  auto refused = ParseJobSpec(kJob, "j.yaml", bad);
  ASSERT_TRUE(refused.ok()) << refused.error().Format();
  auto r = ResolveJob(*refused);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("61 layers"), std::string::npos) << r.error().Format();
}

// docs/job-file.md gives 0 as the default of first/last_stage_layers (an even split): writing
// the default out must mean that, and only a negative count is refused.
TEST(UnevenPipeline, ZeroStageLayersIsTheEvenSplit) {
  const std::vector<std::string> base = {"model=llama-3.1-70b", "parallel.ep=1", "parallel.pp=4"};
  for (const char* key : {"parallel.first_stage_layers", "parallel.last_stage_layers"}) {
    std::vector<std::string> sets = base;
    sets.push_back(std::string(key) + "=0");
    auto spec = ParseJobSpec(kJob, "j.yaml", sets);
    ASSERT_TRUE(spec.ok()) << key << ": " << spec.error().Format();
    EXPECT_FALSE(spec->layout.uneven_pipeline()) << key;
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << job.error().Format();
    // 80 layers / PP 4 = 20 a stage, as without the key.
    EXPECT_EQ(StageLayerCounts(job->spec.layout, 80), (std::vector<int64_t>{20, 20, 20, 20}));
    sets.back() = std::string(key) + "=-1";
    auto refused = ParseJobSpec(kJob, "j.yaml", sets);
    ASSERT_FALSE(refused.ok()) << key;
    EXPECT_NE(
        refused.error().message.find("expected a number of layers, or 0 for an even split, got -1"),
        std::string::npos)
        << refused.error().Format();
  }
}

// megatron-core's --account-for-embedding/loss-in-pipeline-split: (L + accounted) / PP per stage,
// the first (last) stage one decoder layer short. Llama-3.1-405B's 126 layers with both on PP 16:
// 128 / 16 = 8, so 7 + 14 x 8 + 7 = 126.
TEST(UnevenPipeline, AccountingTheEmbeddingAndLossAsLayers) {
  ParallelLayout l;
  l.pp = 16;
  l.account_for_embedding = l.account_for_loss = true;
  std::vector<int64_t> expected(16, 8);
  expected.front() = expected.back() = 7;
  EXPECT_EQ(StageLayerCounts(l, 126), expected);
  EXPECT_TRUE(l.uneven_pipeline());
  EXPECT_EQ(StageSplitSuffix(l), " (embedding and loss each counted as a layer)");
  // Loss only, 61 layers (DeepSeek-V3) on PP 2: 62 / 2 = 31 -> 31 + 30.
  ParallelLayout loss;
  loss.pp = 2;
  loss.account_for_loss = true;
  EXPECT_EQ(StageLayerCounts(loss, 61), (std::vector<int64_t>{31, 30}));
  // Through the job: DeepSeek-V3 at PP 2 resolves with the loss accounted (62 = 2 x 31), is
  // refused with the embedding as well (63 is odd), and refuses a combination with stage counts.
  const std::vector<std::string> base = {"model=deepseek-v3", "parallel.pp=2", "parallel.ep=4",
                                         "parallel.account_for_loss=true"};
  auto spec = ParseJobSpec(kJob, "j.yaml", base);
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_TRUE(job->layout().account_for_loss);
  std::vector<std::string> both = base;
  both.push_back("parallel.account_for_embedding=true");
  auto odd = ResolveJob(*ParseJobSpec(kJob, "j.yaml", both));
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("61 layers + 2 accounted = 63"), std::string::npos)
      << odd.error().Format();
  std::vector<std::string> mixed = base;
  mixed.push_back("parallel.last_stage_layers=30");
  auto refused = ResolveJob(*ParseJobSpec(kJob, "j.yaml", mixed));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("not both"), std::string::npos)
      << refused.error().Format();
  auto not_bool = ParseJobSpec(kJob, "j.yaml", {"parallel.account_for_loss=maybe"});
  ASSERT_FALSE(not_bool.ok());
  EXPECT_NE(not_bool.error().field.find("parallel.account_for_loss"), std::string::npos);
}

}  // namespace
}  // namespace strata::training_modes_test

namespace strata::training_modes_test {
namespace {

TEST(CustomGpu, DerivedFromTheCatalogInAJob) {
  // An H100 SXM variant with 96 GB and a 500 W cap: everything else from the catalog entry.
  auto spec = ParseJobSpec(
      "model: qwen3.6-35b-a3b\n"
      "cluster:\n"
      "  gpu: {base: H100-SXM, memory: 96GB, power_w: 500}\n"
      "  gpus_per_node: 8\n"
      "  nodes: 5\n"
      "parallel: {tp: 1, ep: 8}\n"
      "batch: {micro_batch: 1, global_batch: 80}\n"
      "sequence: {max_tokens: 4096}\n",
      "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto catalog = FindGpu("H100-SXM");
  ASSERT_TRUE(catalog.ok());
  EXPECT_DOUBLE_EQ(job->gpu().memory.value(), 96e9);
  EXPECT_DOUBLE_EQ(job->gpu().tdp_watts, 500.0);
  EXPECT_DOUBLE_EQ(job->gpu().bf16_dense.value(), catalog->bf16_dense.value());
  EXPECT_EQ(job->gpu().sources.at("memory"), "given in j.yaml");
  EXPECT_NE(job->gpu().name.find("custom"), std::string::npos);
}

// B200's catalog entry has no PCIe generation (the part supports Gen6, a DGX B200's Xeon hosts
// run Gen5), so a job of one node could not be stepped: the bandwidth map needs the host link.
// The variant states it (failed before: 'pcie_generation' was an unknown key).
TEST(CustomGpu, VariantStatesTheHostLinksPcieGeneration) {
  auto spec = ParseJobSpec(
      "model: llama-3.1-8b\n"
      "cluster:\n"
      "  gpu: {base: B200, pcie_generation: 5}\n"
      "  gpus_per_node: 4\n"
      "  nodes: 1\n"
      "parallel: {tp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 4}\n"
      "sequence: {max_tokens: 2048}\n",
      "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->cluster.pcie_generation, 5);
  EXPECT_EQ(job->gpu().sources.at("pcie_generation"), "given in j.yaml");
}

TEST(CustomGpu, IncompleteOrWrongDefinitionsAreErrors) {
  const std::string head = "model: qwen3.6-35b-a3b\ncluster:\n  gpu: ";
  const std::string tail =
      "\n  gpus_per_node: 8\n  nodes: 5\nparallel: {tp: 1, ep: 8}\n"
      "batch: {micro_batch: 1, global_batch: 80}\nsequence: {max_tokens: 4096}\n";
  struct Case {
    const char* gpu;
    const char* message;
  } cases[] = {
      {"{name: X1, memory: 80GB}", "needs 'hbm_bandwidth'"},
      {"{base: H100-SMX}", "did you mean"},
      {"{base: H100-SXM, memory: 96}", "memory"},
      {"{base: H100-SXM, power_w: -5}", "positive power"},
      {"{base: H100-SXM, memroy: 96GB}", "memory"},
      {"{base: B200, pcie_generation: 7}", "PCIe generation from 3 to 6"},
  };
  for (const Case& c : cases) {
    auto spec = ParseJobSpec(head + c.gpu + tail, "j.yaml");
    ASSERT_FALSE(spec.ok()) << c.gpu;
    const std::string text = spec.error().Format();
    EXPECT_NE(text.find(c.message), std::string::npos) << c.gpu << ": " << text;
  }
}

// sharding.runtime: whose code runs the sharding, where the job says (Accelerate's fsdp_version,
// verl's actor strategy); else the framework's (data/frameworks.yaml). Before, the field did not
// exist and an HF Trainer job's zero3 was always DeepSpeed's.
TEST(TrainingModes, ShardingRuntimeField) {
  auto typo = ParseJobSpec(kJob, "j.yaml", {"sharding.mode=zero3", "sharding.runtime=fsdp"});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().field, "--set sharding.runtime") << typo.error().Format();
  EXPECT_NE(typo.error().Format().find("unknown value 'fsdp'"), std::string::npos)
      << typo.error().Format();
  EXPECT_NE(typo.error().Format().find("did you mean"), std::string::npos) << typo.error().Format();
  // FSDP has no strategy that shards the optimizer state alone.
  auto zero1 = ParseJobSpec(kJob, "j.yaml", {"sharding.mode=zero1", "sharding.runtime=fsdp1"});
  ASSERT_FALSE(zero1.ok());
  EXPECT_EQ(zero1.error().field, "--set sharding.runtime");
  EXPECT_NE(zero1.error().Format().find("fsdp1 does not run sharding.mode zero1"),
            std::string::npos)
      << zero1.error().Format();
  EXPECT_NE(zero1.error().Format().find("under zero1: deepspeed, megatron"), std::string::npos)
      << zero1.error().Format();

  // The HF Trainer's zero3 is DeepSpeed's unless the job says FSDP1 runs it.
  const std::vector<std::string> hf = {"framework.name=hf-trainer", "parallel.ep=1",
                                       "sharding.mode=zero3"};
  auto ds = ParseJobSpec(kJob, "j.yaml", hf);
  ASSERT_TRUE(ds.ok()) << ds.error().Format();
  auto ds_job = ResolveJob(*ds);
  ASSERT_TRUE(ds_job.ok()) << ds_job.error().Format();
  EXPECT_EQ(ds_job->runtime(), ShardingRuntime::kDeepSpeed);
  std::vector<std::string> sets = hf;
  sets.push_back("sharding.runtime=fsdp1");
  auto f1 = ParseJobSpec(kJob, "j.yaml", sets);
  ASSERT_TRUE(f1.ok()) << f1.error().Format();
  auto f1_job = ResolveJob(*f1);
  ASSERT_TRUE(f1_job.ok()) << f1_job.error().Format();
  EXPECT_EQ(f1_job->runtime(), ShardingRuntime::kFsdp1);
  // A mode the runtime does not run (a layout search's zero1) keeps the framework's answer.
  EXPECT_EQ(f1_job->RuntimeOf(ShardingMode::kZero1), ShardingRuntime::kDeepSpeed);

  // megatron-core runs its own sharding: PyTorch's FSDP1 is refused there, naming the field.
  auto mc = ParseJobSpec(kJob, "j.yaml", {"sharding.mode=zero3", "sharding.runtime=fsdp1"});
  ASSERT_TRUE(mc.ok()) << mc.error().Format();
  auto mc_job = ResolveJob(*mc);
  ASSERT_FALSE(mc_job.ok());
  EXPECT_EQ(mc_job.error().field, "sharding.runtime") << mc_job.error().Format();
  EXPECT_NE(mc_job.error().Format().find("trains through megatron-core"), std::string::npos)
      << mc_job.error().Format();
}

}  // namespace
}  // namespace strata::training_modes_test
