// Gated DeltaNet under tensor parallelism depends on the framework (job/engine_chain.h,
// ResolveGdnPlacement; data/frameworks.yaml gdn_module): megatron-core's GatedDeltaNet (what
// Megatron-Bridge trains, and ms-swift >= 4.1 for Qwen3.5 / Qwen3.6) splits its heads over TP;
// transformers' module, which ms-swift's Megatron path wraps up to 4.0 (and for Qwen3-Next
// still), is whole on every TP rank.
//
// By hand, from data/models/qwen3.6-35b-a3b.json (text_config): hidden 2048, 16 key heads and
// 32 value heads of 128, conv kernel 4, 40 layers with every 4th full attention: 30 GDN layers.
//   key_dim = 16 x 128 = 2,048; value_dim = 32 x 128 = 4,096;
//   conv_dim = 2 x 2,048 + 4,096 = 8,192
//   in_proj_qkv 2,048 x 8,192 = 16,777,216; in_proj_z 2,048 x 4,096 = 8,388,608;
//   in_proj_a and in_proj_b 2 x 2,048 x 32 = 131,072; conv 8,192 x 4 = 32,768;
//   A_log and dt_bias 2 x 32 = 64; gated norm 128; out_proj 4,096 x 2,048 = 8,388,608
//   one layer: 33,718,464; 30 layers: 1,011,553,920 parameters (PP 1: all on every GPU).
// At TP 2: split 505,776,960 per GPU (bf16: 1,011,553,920 B); replicated 1,011,553,920
// (2,023,107,840 B), 505,776,960 more parameters per GPU, and with them their bf16 gradients,
// fp32 master weights and Adam moments (sharded over DP x CP = 20 by the distributed
// optimizer). TP 2 with EP 8 needs sequence parallelism in megatron-core: on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory_test_support.h"
#include "strata/job/engine_chain.h"
#include "strata/memory/activations.h"

namespace strata {
namespace {

constexpr double kGdnParams = 1'011'553'920;

Job AtTp2(const std::vector<std::string>& framework) {
  std::vector<std::string> sets = {"parallel.tp=2", "parallel.dp=20",
                                   "parallel.sequence_parallel=true"};
  sets.insert(sets.end(), framework.begin(), framework.end());
  return testing::ReferenceJob(sets);
}

TEST(GdnTensorParallel, MsSwiftReplicatesTheLayerMegatronBridgeSplitsIt) {
  const MemoryConstants c = testing::Constants();
  const Job swift = AtTp2({});  // the reference job's framework: ms-swift, release not stated
  const Job bridge = AtTp2({"framework.name=megatron-bridge"});
  ASSERT_EQ(swift.model.CountLayers(MixerKind::kGatedDeltaNet), 30);
  EXPECT_TRUE(swift.gdn.replicated_over_tp);
  EXPECT_EQ(swift.gdn.module, "transformers");
  EXPECT_FALSE(bridge.gdn.replicated_over_tp);
  EXPECT_EQ(bridge.gdn.module, "megatron-core");
  const MemoryLedger s = ComputeLedger(swift, c);
  const MemoryLedger b = ComputeLedger(bridge, c);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(s, "weights: linear_attention").count(), 2 * kGdnParams);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(b, "weights: linear_attention").count(), kGdnParams);
  EXPECT_EQ(s.params_per_gpu - b.params_per_gpu, static_cast<int64_t>(kGdnParams / 2));
  // The gradient buffer (bf16, not sharded under the distributed optimizer) follows: 2 B x
  // 505,776,960 more.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(s, "gradient buffer (bf16)").count() -
                       testing::ItemBytes(b, "gradient buffer (bf16)").count(),
                   kGdnParams);
  // --explain names the rule.
  const std::string how = testing::ItemFormula(s, "weights: linear_attention");
  EXPECT_NE(how.find("not divided by TP 2: Gated DeltaNet replicated over TP (ms-swift 3.8"),
            std::string::npos)
      << how;
  EXPECT_NE(how.find("builds it from transformers' module inside megatron-core"), std::string::npos)
      << how;
}

TEST(GdnTensorParallel, MsSwiftFrom41SplitsQwen35ButNotQwen3Next) {
  const Job swift41 = AtTp2({"framework.version=4.1.0"});
  EXPECT_FALSE(swift41.gdn.replicated_over_tp);
  EXPECT_EQ(swift41.gdn.module, "megatron-core");
  const MemoryLedger l = ComputeLedger(swift41, testing::Constants());
  EXPECT_DOUBLE_EQ(testing::ItemBytes(l, "weights: linear_attention").count(), kGdnParams);
  // Qwen3-Next keeps transformers' module in every release (mcore-bridge's Qwen3NextLoader).
  auto engines = LoadFrameworkEngines();
  ASSERT_TRUE(engines.ok());
  FrameworkSpec spec;
  spec.name = "ms-swift";
  spec.version = "4.2.0";
  const GdnPlacement next = ResolveGdnPlacement(*engines, spec, ShardingMode::kZero1, "qwen3_next");
  EXPECT_TRUE(next.replicated_over_tp);
  // Under DeepSpeed (HF code, no TP) the module is transformers' but nothing splits it.
  const GdnPlacement hf = ResolveGdnPlacement(*engines, spec, ShardingMode::kZero3, "qwen3_5_moe");
  EXPECT_EQ(hf.module, "transformers");
  EXPECT_FALSE(hf.replicated_over_tp);
}

TEST(GdnTensorParallel, ActivationsOfAReplicatedLayerAreNotDividedByTp) {
  // Per token, saved for backward by one GDN layer (activations.cc): conv input and output
  // 2 x 8,192, z, core and gated-norm outputs 3 x 4,096, the WY matrix 32 heads x 64-token chunk
  // = 30,720 values in bf16 (61,440 B) and the decay and beta gates 2 x 4 B x 32 = 256 B.
  // Split over TP 2 that is half (30,848 B); replicated, all of it, and in_proj keeps the input
  // gathered from the sequence-parallel region, h = 2,048 values (4,096 B): 65,792 B.
  const MemoryConstants c = testing::Constants();
  const Job swift = AtTp2({});
  const Job bridge = AtTp2({"framework.name=megatron-bridge"});
  const LayerSpec& gdn = swift.model.layers[0];
  ASSERT_EQ(gdn.mixer, MixerKind::kGatedDeltaNet);
  EXPECT_DOUBLE_EQ(LayerActivationsPerToken(swift, c, gdn).saved -
                       LayerActivationsPerToken(bridge, c, gdn).saved,
                   65'792.0 - 30'848.0);
}

TEST(GdnTensorParallel, AdaptersOnAReplicatedLayerAreWholeOnEveryTpRank) {
  // LoRA r = 8 on the three GDN projections (no dropout): per layer r x (d_in + d_out) =
  // 8 x ((2,048 + 12,288) + (2,048 + 64) + (4,096 + 2,048)) = 180,736 parameters, 30 layers:
  // 5,422,080, in bf16 (megatron-core's Float16Module casts PEFT's fp32 adapters back to the
  // parameters' dtype): 10,844,160 B on every TP rank, as the layer they sit on is (split over
  // TP 2 it would be 5,422,080 B).
  const std::vector<std::string> lora = {"adapter.kind=lora", "adapter.rank=8",
                                         "adapter.targets=[in_proj_qkvz,in_proj_ba,out_proj]",
                                         "adapter.dropout=0"};
  const Job swift = AtTp2(lora);
  ASSERT_TRUE(swift.gdn.replicated_over_tp);
  const MemoryConstants c = testing::Constants();
  const MemoryLedger l = ComputeLedger(swift, c);
  EXPECT_DOUBLE_EQ(
      testing::ItemBytes(l, "weights: adapters (lora r=8 on in_proj_qkvz, in_proj_ba, out_proj)")
          .count(),
      10'844'160.0);
  // Saved for backward per token and GDN layer: each adapter's r-wide A x, 3 x 8 bf16 values =
  // 48 B, whole (24 B split over TP 2); nothing else of the layer changes with the adapters.
  const Job base = AtTp2({});
  const LayerSpec& gdn = swift.model.layers[0];
  ASSERT_EQ(gdn.mixer, MixerKind::kGatedDeltaNet);
  EXPECT_DOUBLE_EQ(
      LayerActivationsPerToken(swift, c, gdn).saved - LayerActivationsPerToken(base, c, gdn).saved,
      48.0);
}

}  // namespace
}  // namespace strata
