// TP above the KV heads (query groups), as megatron-core runs it (NVIDIA/Megatron-LM d98e8a64,
// megatron/core/transformer/attention.py): with num_query_groups < TP, linear_qkv stays a
// column-parallel linear split 1 / TP over its q + 2 kv output columns; get_query_key_value_
// tensors all-gathers its output over TP (all_gather_last_dim_from_tensor_parallel_region, whose
// backward reduce-scatters the gradient), takes its query group's slice and keeps num_heads / TP
// query heads and the group's one K and V head. transformer_config.py accepts num_query_groups a
// multiple or a divisor of TP. NVIDIA's Megatron-Bridge card for Qwen3-30B-A3B ran it at TP 8
// (tests/sim/validation/cards/qwen3-30b-a3b.yaml, MBC-QWEN3-30B-H100-SFT-LONG-CONTEXT).
//
// By hand, from data/models/qwen3-30b-a3b.json: hidden 2048, 32 query heads and 4 KV heads of
// 128, qk norms, 48 layers, 128 experts.
//   q width 32 x 128 = 4,096; K and V widths 4 x 128 = 512 each; fused QKV 4,096 + 1,024 = 5,120
//   At TP 8 one rank holds: linear_qkv 5,120 / 8 = 640 rows x 2,048 = 1,310,720 parameters
//   (not replicated: the K and V rows are split with the q rows), linear_proj 2,048 x 4,096 / 8 =
//   1,048,576, the q and k norms 128 + 128 = 256 (whole on every rank). One layer 2,359,552;
//   48 layers 113,258,496 parameters, bf16 226,516,992 B.
//   K and V per rank: one head each (4 groups over 8 ranks, two ranks per group), 128 + 128
//   elements per token per layer, bf16 512 B (a split of 4 / 8 heads would say 256 B).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory_test_support.h"
#include "strata/comm/layout_traffic.h"
#include "strata/memory/activations.h"
#include "strata/model/model_config.h"

namespace strata {
namespace {

// The card row's job (MBC-QWEN3-30B-H100-SFT-LONG-CONTEXT) without recompute, so that the
// layers' saved activations count.
constexpr const char* kCardJob = R"(
model: qwen3-30b-a3b
cluster: {file: h100-8x8-ib400, gpu: H100 SXM, gpus_per_node: 8, nodes: 2}
framework: {name: megatron-bridge, version: "26.06"}
parallel: {tp: 8, pp: 1, cp: 2, ep: 8, etp: 1, sequence_parallel: true}
batch: {micro_batch: 1, global_batch: 32}
sequence: {max_tokens: 32768, packing: true}
recompute: {granularity: none}
precision: {params: bf16, grads: fp32}
optimizer: {name: adam, distributed: true, master_weights: fp32, moments: fp32}
loss: {cross_entropy: native}
)";

Result<Job> CardJob(const std::vector<std::string>& sets = {}, int64_t kv_heads = 0) {
  STRATA_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(kCardJob, "card-job.yaml", sets));
  STRATA_ASSIGN_OR_RETURN(ModelConfig model, LoadModelConfig(spec.model));
  if (kv_heads > 0) model.attention.num_kv_heads = kv_heads;
  return ResolveJobWithModel(spec, std::move(model));
}

TEST(QueryGroupsOverTp, MegatronCoreRunsTpAboveTheKvHeads) {
  auto job = CardJob();
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->model.attention.num_kv_heads, 4);
  EXPECT_EQ(job->query_groups(), QueryGroupSplit::kMultipleOrDivisor);
}

TEST(QueryGroupsOverTp, WholeHeadEnginesStillRefuseIt) {
  // torchtitan's DTensor plan shards k_proj and v_proj column-wise by whole heads.
  auto job = CardJob({"framework.name=torchtitan", "sharding.mode=fsdp2"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().Format(),
            "card-job.yaml: parallel.tp: KV heads (query groups) (4) must be divisible by TP (8)\n"
            "  hint: TP values that would work: 1, 2, 4; torchtitan with sharding fsdp2 does not "
            "train through megatron-core, which alone runs TP above the KV heads (one per rank); "
            "the others split whole heads");
}

TEST(QueryGroupsOverTp, MegatronCoreRefusesWhatIsNeitherMultipleNorDivisor) {
  // 6 KV heads at TP 8: 8 is not a multiple of 6 nor 6 of 8 (transformer_config.py raises).
  // TP values that would work on 16 GPUs at CP 2: dividing 32 heads, a multiple or divisor of
  // 6 groups, and TP x CP dividing 16: 1, 2.
  auto job = CardJob({}, 6);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().Format(),
            "card-job.yaml: parallel.tp: KV heads (query groups) (6) must be a multiple or divisor "
            "of TP (8) in megatron-core\n  hint: TP values that would work: 1, 2");
}

TEST(QueryGroupsOverTp, QkvWeightsStaySplitOverTp) {
  auto job = CardJob();
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const MemoryLedger ledger = ComputeLedger(*job, testing::Constants());
  // The GEMM weights of the header, 2,359,296 a layer x 48 = 113,246,208, with the q and k
  // norms' 48 x 256 = 12,288 divided by TP with the module as strata counts every attention
  // module (1,536; megatron-core keeps them whole, 10,752 parameters more, 21,504 B, not
  // modelled): 113,247,744 x 2 B.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "weights: attention").count(), 226'495'488.0);
}

TEST(QueryGroupsOverTp, EachRankKeepsOneKvHead) {
  const MemoryConstants c = testing::Constants();
  auto four = CardJob({}, 4);
  auto eight = CardJob({}, 8);
  auto sixteen = CardJob({}, 16);
  ASSERT_TRUE(four.ok() && eight.ok() && sixteen.ok());
  const LayerSpec& layer = four->model.layers.front();
  ASSERT_EQ(layer.mixer, MixerKind::kFullAttention);
  const double s4 = LayerActivationsPerToken(*four, c, layer).saved;
  const double s8 = LayerActivationsPerToken(*eight, c, layer).saved;
  const double s16 = LayerActivationsPerToken(*sixteen, c, layer).saved;
  // 4 and 8 KV heads at TP 8: one K and one V head per rank either way, the same bytes.
  EXPECT_NEAR(s4, s8, 1e-9);
  // 16 KV heads: two per rank, one head more of K, V and the k norm's input:
  // 3 x 128 x 2 B = 768 B per token.
  EXPECT_NEAR(s16 - s4, 768.0, 1e-9);
}

TEST(QueryGroupsOverTp, TheQkvOutputIsGatheredOverTp) {
  auto job =
      CardJob({"recompute.granularity=full", "recompute.method=uniform", "recompute.num_layers=1"});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  TrafficInputs in;
  in.layout = job->layout();
  in.micro_batch = 1;
  in.tokens_per_sample = 32768;
  in.micro_batches_per_step = job->step.micro_batches;
  in.full_recompute = true;
  const auto items = LayoutTraffic(TrafficShapeOf(job->model, false), in);
  // Tokens on a rank: 32,768 / CP 2 = 16,384; the gathered QKV output 16,384 x 5,120 x 2 B =
  // 167,772,160 B. All-gathers: forward and recompute, 2 per layer; one reduce-scatter per layer
  // in backward; 48 layers x 32 micro batches (DP 1).
  int found = 0;
  for (const TrafficItem& t : items) {
    if (t.purpose.find("TP QKV output") == std::string::npos) continue;
    ++found;
    EXPECT_EQ(t.group, GroupKind::kTp);
    EXPECT_DOUBLE_EQ(t.size.count(), 167'772'160.0);
    if (t.op == CollectiveOp::kAllGather) {
      EXPECT_DOUBLE_EQ(t.calls_per_step, 2.0 * 48 * 32);
    } else {
      EXPECT_EQ(t.op, CollectiveOp::kReduceScatter);
      EXPECT_DOUBLE_EQ(t.calls_per_step, 48.0 * 32);
    }
  }
  EXPECT_EQ(found, 2);
  // At TP 4 the 4 groups split whole: no gather.
  in.layout.tp = 4;
  in.layout.cp = 4;
  for (const TrafficItem& t : LayoutTraffic(TrafficShapeOf(job->model, false), in)) {
    EXPECT_EQ(t.purpose.find("TP QKV output"), std::string::npos) << t.purpose;
  }
}

}  // namespace
}  // namespace strata
