// ResolveJob: the one job every view reads. Expected values are read off the job file and the
// catalogs by hand (data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml, data/clusters/, data/gpus.yaml).
#include "strata/job/resolved_job.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/hw/bandwidth_map.h"
#include "strata/hw/interconnects.h"
#include "strata/job/job_json.h"

namespace strata {
namespace {

TEST(ResolveJob, NothingGivenIsTheReferenceJobWithEverythingAViewNeeds) {
  auto job = ResolveJob(JobRequest{});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_TRUE(job->reference);
  EXPECT_EQ(job->model.name, "qwen3.6-35b-a3b");
  // Cluster with its GPU: 5 nodes x 8 H20 (96 GB each).
  EXPECT_EQ(job->cluster.nodes, 5);
  EXPECT_EQ(job->cluster.gpus_per_node, 8);
  EXPECT_EQ(job->cluster.gpu.name, "H20");
  EXPECT_EQ(job->gpu().name, "H20");
  EXPECT_DOUBLE_EQ(job->gpu().memory.gb(), 96.0);
  // Layout TP1 PP1 EP8, DP = 40 / 1 = 40, sequence parallelism off.
  EXPECT_EQ(job->layout().ep, 8);
  EXPECT_EQ(job->layout().dp, 40);
  EXPECT_FALSE(job->layout().sequence_parallel);
  EXPECT_EQ(job->world(), 40);
  // Step: global batch 80 = 40 DP x 1 micro batch x 2 accumulation steps; mean 29,000 tokens
  // (the job states 29000), max 49,152 -> 80 x 29,000 = 2,320,000 tokens per step.
  EXPECT_EQ(job->spec.micro_batch, 1);
  EXPECT_EQ(job->spec.global_batch, 80);
  EXPECT_EQ(job->step.micro_batches, 2);
  EXPECT_DOUBLE_EQ(job->step.sequence.mean_tokens, 29000.0);
  EXPECT_DOUBLE_EQ(job->step.sequence.max_tokens, 49152.0);
  EXPECT_DOUBLE_EQ(job->step.tokens_per_step, 2320000.0);
}

TEST(ResolveJob, SetOverridesReachEveryDerivedField) {
  // TP 2 re-derives DP = 40 / 2 = 20; global batch 80 = 20 x 1 x 4 micro batches.
  auto job =
      ResolveJob(JobRequest{"", "", {"parallel.tp=2", "parallel.sequence_parallel=true"}, ""});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->layout().tp, 2);
  EXPECT_EQ(job->layout().dp, 20);
  EXPECT_TRUE(job->layout().sequence_parallel);
  EXPECT_EQ(job->step.micro_batches, 4);
}

TEST(ResolveJob, ThroughputFromARateOrAStep) {
  // 50,000 tokens/s given as a rate.
  auto rate = ResolveJob(JobRequest{"", "", {"throughput.tokens_per_s=50000"}, ""});
  ASSERT_TRUE(rate.ok()) << rate.error().Format();
  ASSERT_TRUE(rate->throughput.has_value());
  EXPECT_DOUBLE_EQ(rate->throughput->tokens_per_s, 50000.0);
  // A step time alone: tokens per step = 80 x 29,000 = 2,320,000; / 116 s = 20,000 tokens/s.
  auto step = ResolveJob(JobRequest{"", "", {"throughput.step_time=116s"}, ""});
  ASSERT_TRUE(step.ok()) << step.error().Format();
  ASSERT_TRUE(step->throughput.has_value());
  EXPECT_DOUBLE_EQ(step->throughput->tokens_per_s, 20000.0);
}

TEST(ResolveJob, AModelWithoutAJobFileNamesWhatIsMissing) {
  auto job = ResolveJob(JobRequest{"", "llama-3.1-70b", {}, ""});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().message.find("missing: cluster, parallel, batch, sequence"),
            std::string::npos)
      << job.error().Format();
  // Half given: only the rest is named.
  auto half =
      ResolveJob(JobRequest{"", "llama-3.1-70b", {"cluster=h100-8x8-ib400", "parallel.tp=8"}, ""});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message.find("missing: batch, sequence"), std::string::npos)
      << half.error().Format();
}

// A misspelt model is named first, with the catalog name it is closest to: the sections the
// user would be told to add cannot make it known. Before: "missing: cluster, parallel, batch,
// sequence", and the unknown name only after all of them were given.
TEST(ResolveJob, AMisspeltModelWithoutAJobFileIsNamedFirst) {
  auto job = ResolveJob(JobRequest{"", "llama-3.1-8bb", {}, ""});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().message.find("unknown model 'llama-3.1-8bb'"), std::string::npos)
      << job.error().Format();
  EXPECT_EQ(job.error().hint, "did you mean 'llama-3.1-8b'?");
  EXPECT_EQ(job.error().field, "--model");
}

// A cluster given inline gets its intra-node fabric from the GPU: an SXM part's NVLink is a
// switch fabric; the H100 PCIe's NVLink is a bridge between two cards (data/gpus.yaml:
// "NVLink bridge 600 GB/s between GPU pairs"), so a collective over more than the pair crosses
// PCIe. Before, every GPU with an NVLink figure got an NVSwitch: an 8-GPU ring of H100 PCIe
// cards was priced at the bridge's 300 GB/s a direction (DP reduce 114 ms instead of 991 ms).
// The MI300X has no switch: AMD's platform data sheet joins each GPU to the other seven by its own
// xGMI link, a mesh (it was printed "NVSwitch (InfinityFabric)").
TEST(ResolveJob, AnInlineClusterTakesTheGpusFabricTopology) {
  for (const auto& [gpu, fabric] : std::vector<std::pair<std::string, IntraNodeFabric>>{
           {"H100 PCIe", IntraNodeFabric::kPcieOnly},
           {"H100 SXM", IntraNodeFabric::kNvSwitch},
           {"MI300X", IntraNodeFabric::kNvLinkMesh},
           {"L40S", IntraNodeFabric::kPcieOnly}}) {
    auto spec = ParseJobSpec("model: llama-3.1-8b\ncluster: {gpu: " + gpu +
                                 ", gpus_per_node: 8, nodes: 1}\nparallel: {tp: 1, pp: 1}\n"
                                 "batch: {micro_batch: 1, global_batch: 8}\n"
                                 "sequence: {max_tokens: 4096}\n",
                             "j.yaml");
    ASSERT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << job.error().Format();
    EXPECT_EQ(job->cluster.fabric, fabric) << gpu;
  }
}

TEST(ResolveJob, AModelWithEverythingSetResolves) {
  // Llama-3.1-70B on 8 nodes x 8 H100: TP8 PP2 -> DP = 64 / 16 = 4.
  auto job = ResolveJob(JobRequest{"",
                                   "llama-3.1-70b",
                                   {"cluster=h100-8x8-ib400", "parallel.tp=8", "parallel.pp=2",
                                    "parallel.sequence_parallel=true", "batch.micro_batch=1",
                                    "batch.global_batch=64", "sequence.max_tokens=8Ki"},
                                   ""});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_FALSE(job->reference);
  EXPECT_EQ(job->layout().dp, 4);
  EXPECT_EQ(job->cluster.name, "h100-8x8-ib400");
  EXPECT_EQ(job->step.micro_batches, 16);  // 64 / (1 x 4)
  EXPECT_DOUBLE_EQ(job->step.sequence.max_tokens, 8192.0);
}

TEST(ResolveJob, AModelNameGivenAsTheJobPointsAtModel) {
  auto job = ResolveJob(JobRequest{"llama-3.1-70b", "", {}, ""});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().hint.find("--model llama-3.1-70b"), std::string::npos)
      << job.error().Format();
}

TEST(ResolveJob, CommandLineRepeatsTheUsersJobAndSetFlags) {
  ResolvedJob job;
  job.request = JobRequest{"my job.yaml", "", {"precision.grads=fp32", "parallel.ep=4"}, ""};
  // An advice override of the same key replaces the user's value; others are appended.
  EXPECT_EQ(job.CommandLine("memory", {"parallel.ep=8", "recompute.granularity=full"}),
            "strata memory 'my job.yaml' --set precision.grads=fp32 --set parallel.ep=8 "
            "--set recompute.granularity=full");
}

TEST(ResolveJob, RederiveRunsTheRulesAgain) {
  auto job = ResolveJob(JobRequest{});
  ASSERT_TRUE(job.ok());
  ResolvedJob changed = *job;
  changed.spec.layout.tp = 2;
  changed.spec.layout.dp = 0;
  changed.spec.layout.sequence_parallel = true;  // TP with EP needs it (megatron-core)
  ASSERT_TRUE(RederiveJob(changed).ok());
  EXPECT_EQ(changed.layout().dp, 20);
  changed.spec.layout.tp = 3;  // 40 GPUs are not divisible by 3
  changed.spec.layout.dp = 0;
  EXPECT_FALSE(RederiveJob(changed).ok());
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(ResolveJob, AnInlineClusterTakesTheHostLinkOfItsGpu) {
  // A job that names only the GPU and counts (as `strata import` writes for an HF Trainer run):
  // the host link is the GPU's own, PCIe Gen4 x16 on an A100 (datasheet: PCIe Gen4 64 GB/s),
  // so the bandwidth map can be built without a cluster file.
  auto job = ResolveJob(
      JobRequest{"",
                 "llama-3.1-8b",
                 {"cluster.gpu=A100 80GB", "cluster.gpus_per_node=1", "cluster.nodes=1",
                  "parallel.tp=1", "parallel.pp=1", "parallel.ep=1", "batch.micro_batch=1",
                  "batch.global_batch=8", "sequence.max_tokens=2048"},
                 ""});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_TRUE(job->cluster.name.empty());
  EXPECT_EQ(job->cluster.pcie_generation, 4);
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok()) << links.error().Format();
  auto map = BuildBandwidthMap(job->cluster, *links);
  ASSERT_TRUE(map.ok()) << map.error().Format();
  bool pcie = false;
  for (const auto& level : map->levels) pcie = pcie || level.name == "PCIe Gen4 x16";
  EXPECT_TRUE(pcie);
  // GB200's host link is NVLink-C2C: the catalog gives no PCIe generation, and the map asks for
  // a cluster file instead of guessing.
  Cluster gb200 = job->cluster;
  auto gpu = FindGpu("GB200");
  ASSERT_TRUE(gpu.ok());
  gb200.gpu = *gpu;
  gb200.pcie_generation = gpu->pcie_generation;
  auto none = BuildBandwidthMap(gb200, *links);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().Format().find("cluster.file"), std::string::npos) << none.error().Format();
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// A dense model has no expert-DP group: the job JSON says null, not the DP degree (it printed
// "expert_dp": 1 for Llama). The reference MoE job keeps 40 / 8 = 5.
TEST(JobJson, ExpertDpIsNullForADenseModel) {
  JobRequest dense;
  dense.job = "llama-3.1-8b-qlora-h200x1";
  auto d = ResolveJob(dense);
  ASSERT_TRUE(d.ok()) << d.error().Format();
  EXPECT_TRUE(JobToJson(*d)["expert_dp"].is_null());
  auto moe = ResolveJob(JobRequest{});
  ASSERT_TRUE(moe.ok()) << moe.error().Format();
  EXPECT_EQ(JobToJson(*moe)["expert_dp"], 5);
}

// DeepSpeed's ZeRO-1 has one switch for its gradient reduce running behind the backward,
// overlap_comm (deepspeed/runtime/zero/stage_1_and_2.py: reduce_ipg_grads on its reduction
// stream, and a second reduce bucket), which the job file could spell twice:
// sharding.overlap_comm (read by the memory ledger's buckets) and overlap.grad_reduce (read by the
// step's per-step reduce). Before, `--set sharding.overlap_comm=true` on a ZeRO-1 HF Trainer job
// left the step's reduce exposed (grad_reduce false) while memory counted two buckets, and
// `--set overlap.grad_reduce=true` hid the reduce while memory counted one. Now either setting
// gives both views the same switch; the two set against each other are refused.
TEST(ResolveJob, DeepSpeedZero1OverlapIsOneSwitchWhicheverKeyIsSet) {
  // Eight one-GPU nodes, DP 8: global batch 32 = micro batch 4 x DP 8.
  const std::vector<std::string> base = {"sharding.mode=zero1", "cluster.nodes=8",
                                         "batch.global_batch=32"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = base;
    all.insert(all.end(), extra.begin(), extra.end());
    return ResolveJob(JobRequest{"llama-3.1-8b-qlora-h200x1", "", all, ""});
  };
  for (const char* set : {"sharding.overlap_comm=true", "overlap.grad_reduce=true"}) {
    auto job = with({set});
    ASSERT_TRUE(job.ok()) << set << ": " << job.error().Format();
    ASSERT_TRUE(job->RunsDeepSpeed(ShardingMode::kZero1));  // hf-trainer's zero12_runtime
    EXPECT_TRUE(job->spec.overlap.grad_reduce) << set;
    EXPECT_TRUE(job->spec.sharding.OverlapComm()) << set;
  }
  // Neither given: DeepSpeed's ZeRO-1 default, overlap_comm false, for both.
  auto neither = with({});
  ASSERT_TRUE(neither.ok()) << neither.error().Format();
  EXPECT_FALSE(neither->spec.overlap.grad_reduce);
  EXPECT_FALSE(neither->spec.sharding.OverlapComm());
  auto both = with({"sharding.overlap_comm=true", "overlap.grad_reduce=false"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().Format().find("overlap.grad_reduce false contradicts "
                                       "sharding.overlap_comm true"),
            std::string::npos)
      << both.error().Format();
  // megatron-core's ZeRO-1 (the reference job, ms-swift's megatron sft) keeps its own flag.
  auto megatron = ResolveJob(JobRequest{"", "", {"overlap.grad_reduce=true"}, ""});
  ASSERT_TRUE(megatron.ok()) << megatron.error().Format();
  EXPECT_FALSE(megatron->RunsDeepSpeed(ShardingMode::kZero1));
  EXPECT_TRUE(megatron->spec.overlap.grad_reduce);
  EXPECT_FALSE(megatron->spec.sharding.overlap_comm_given);
}

}  // namespace
}  // namespace strata
