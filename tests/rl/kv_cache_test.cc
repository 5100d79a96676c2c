// KV-cache bytes per token and fixed state per sequence on one rollout GPU, each expected value
// worked out by hand from the model's config.json (data/models/) in the row's comment.
#include "strata/rl/kv_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

struct KvRow {
  const char* name;
  const char* model;
  int64_t tp;
  CacheDtypes dtypes;
  double full_per_token;      // bytes per token, full-attention + MLA layers, one GPU
  double sliding_per_token;   // bytes per token, sliding-window layers, one GPU
  double state_per_sequence;  // bytes per sequence, one GPU
  int64_t kv_heads_per_gpu;
};

// Qwen3.6-35B-A3B: 10 full-attention layers (2 KV heads x 256) and 30 Gated DeltaNet layers
// (32 value heads, d_k = d_v = 128, 16 key heads, conv kernel 4).
//   KV, TP1: 2 (K,V) x 2 heads x 256 x 2 B = 2,048 B/layer x 10 = 20,480 B/token.
//   TP2: 1 head per GPU: 10,240 B/token. TP4, TP8: still 1 head (replicated): 10,240 B/token.
//   GDN state, TP1, bf16: 32 x 128 x 128 x 2 B = 1,048,576 B; conv (2 x 16 x 128 + 32 x 128)
//   = 8,192 channels x 3 x 2 B = 49,152 B; 1,097,728 B/layer x 30 = 32,931,840 B/sequence.
//   TP2: halves, 16,465,920; TP4: 8,232,960; TP8: 4,116,480.
//   fp32 recurrent state, TP1: 32 x 128 x 128 x 4 = 2,097,152 + 49,152 = 2,146,304 x 30
//   = 64,389,120 B.
// Llama-3.1-8B (GQA): 32 layers x 2 x 8 KV heads x 128 x 2 B = 131,072 B/token (128 KiB);
//   TP8: 1 head per GPU, 16,384 B/token; fp8 cache at TP1: 65,536 B/token.
// DeepSeek-V3 (MLA): (kv_lora_rank 512 + rope 64) x 2 B = 1,152 B/layer x 61 = 70,272 B/token,
//   the same at any TP (the latent is not split by heads).
// GPT-OSS-120B: 18 full + 18 sliding (window 128) layers, 2 x 8 KV heads x 64 x 2 B
//   = 2,048 B/layer: 36,864 B/token in each group.
const KvRow kKvRows[] = {
    {"hybrid_tp1", "qwen3.6-35b-a3b", 1, {2, 2}, 20480, 0, 32931840, 2},
    {"hybrid_tp2", "qwen3.6-35b-a3b", 2, {2, 2}, 10240, 0, 16465920, 1},
    {"hybrid_tp4_kv_replicated", "qwen3.6-35b-a3b", 4, {2, 2}, 10240, 0, 8232960, 1},
    {"hybrid_tp8_kv_replicated", "qwen3.6-35b-a3b", 8, {2, 2}, 10240, 0, 4116480, 1},
    {"hybrid_fp32_state", "qwen3.6-35b-a3b", 1, {2, 4}, 20480, 0, 64389120, 2},
    {"gqa_tp1", "llama-3.1-8b", 1, {2, 2}, 131072, 0, 0, 8},
    {"gqa_tp8", "llama-3.1-8b", 8, {2, 2}, 16384, 0, 0, 1},
    {"gqa_fp8_cache", "llama-3.1-8b", 1, {1, 2}, 65536, 0, 0, 8},
    {"mla_tp1", "deepseek-v3", 1, {2, 2}, 70272, 0, 0, 0},
    {"mla_tp8_not_split", "deepseek-v3", 8, {2, 2}, 70272, 0, 0, 0},
    {"sliding_window", "gpt-oss-120b", 1, {2, 2}, 36864, 36864, 0, 8},
};

TEST(KvCacheTest, BytesPerTokenAndStatePerSequence) {
  for (const KvRow& row : kKvRows) {
    SCOPED_TRACE(row.name);
    auto model = LoadModelConfig(row.model);
    ASSERT_TRUE(model.ok()) << model.error().Format();
    const KvFootprint f = ComputeKvFootprint(*model, row.tp, row.dtypes);
    EXPECT_NEAR(f.full_per_token.count(), row.full_per_token, 0.5);
    EXPECT_NEAR(f.sliding_per_token.count(), row.sliding_per_token, 0.5);
    EXPECT_NEAR(f.state_per_sequence.count(), row.state_per_sequence, 0.5);
    EXPECT_EQ(f.kv_heads_per_gpu, row.kv_heads_per_gpu);
  }
}

// MHA (GPT-2 small's shape: 12 layers, 12 heads = 12 KV heads, head_dim 64): the well-known
// 2 x 12 layers x 768 x 2 B = 36,864 B/token in fp16; TP4: 3 heads per GPU, 9,216 B/token.
TEST(KvCacheTest, MultiHeadAttentionSplitsEveryHead) {
  ModelConfig mha;
  mha.attention.num_heads = 12;
  mha.attention.num_kv_heads = 12;
  mha.attention.head_dim = 64;
  mha.layers.assign(12, LayerSpec{MixerKind::kFullAttention, FfnKind::kDense});
  EXPECT_NEAR(ComputeKvFootprint(mha, 1, {}).full_per_token.count(), 36864, 0.5);
  EXPECT_NEAR(ComputeKvFootprint(mha, 4, {}).full_per_token.count(), 9216, 0.5);
}

// Mamba-2 (Nemotron-H 8B's mixer: 128 heads x 64, d_state 128, 8 groups, conv 4), one layer:
// state 128 x 64 x 128 x 4 B (fp32) = 4,194,304 B; conv (8,192 + 2 x 8 x 128 = 10,240 channels)
// x 3 x 2 B = 61,440 B; 4,255,744 B per sequence.
TEST(KvCacheTest, MambaStateIsFixedPerSequence) {
  ModelConfig m;
  m.mamba.num_heads = 128;
  m.mamba.head_dim = 64;
  m.mamba.state_size = 128;
  m.mamba.n_groups = 8;
  m.mamba.conv_kernel = 4;
  m.layers.assign(1, LayerSpec{MixerKind::kMamba2, FfnKind::kNone});
  const KvFootprint f = ComputeKvFootprint(m, 1, {2, 4});
  EXPECT_NEAR(f.state_per_sequence.count(), 4255744, 0.5);
  EXPECT_NEAR(f.full_per_token.count(), 0, 0.5);
}

// A sequence's bytes: full x tokens + sliding x min(tokens, window) + state.
// GPT-OSS at 1,000 tokens: 36,864 x 1,000 + 36,864 x 128 = 41,582,592 B.
// Qwen3.6 TP2 at 8,192 tokens: 10,240 x 8,192 + 16,465,920 = 100,352,000 B.
TEST(KvCacheTest, SequenceBytesCapTheWindow) {
  auto oss = LoadModelConfig("gpt-oss-120b");
  ASSERT_TRUE(oss.ok());
  EXPECT_NEAR(ComputeKvFootprint(*oss, 1, {}).ForSequence(1000).count(), 41582592, 0.5);
  auto qwen = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(qwen.ok());
  EXPECT_NEAR(ComputeKvFootprint(*qwen, 2, {}).ForSequence(8192).count(), 100352000, 0.5);
}

// GPT-OSS alternates 18 full-attention and 18 sliding-window (128-token) layers, 8 KV heads of
// 64: at TP4, 2 heads a GPU, 2 (K, V) x 2 x 64 x 2 B = 512 B a layer and token, so 18 x 512 =
// 9,216 B per token of context in the full layers, and 9,216 B per token up to 128 tokens in the
// sliding ones. The rl header printed 18.00 KiB per token for "36 attention layers", counting
// the window's layers at every token; it now counts them apart (tests/golden/cli_rl/
// sliding_window_kv).
TEST(KvCacheTest, SlidingLayersAreCountedApart) {
  auto oss = LoadModelConfig("gpt-oss-120b");
  ASSERT_TRUE(oss.ok());
  const KvFootprint f = ComputeKvFootprint(*oss, 4, {});
  EXPECT_EQ(f.attention_layers, 36);
  EXPECT_EQ(f.sliding_layers, 18);
  EXPECT_NEAR(f.full_per_token.count(), 9216, 0.5);
  EXPECT_NEAR(f.sliding_per_token.count(), 9216, 0.5);
  EXPECT_EQ(f.sliding_window, 128);
}

// vLLM unifies a hybrid model's page sizes (vllm-project/vllm@
// 1936cf3841edb9781b06c50fc4daf4bac9d3b23e: vllm/model_executor/models/config.py,
// HybridAttentionMambaModelConfig.verify_and_update_config, prefix caching off): the attention
// block is 16 x ceil(state page / (16 x attention page of one token)) tokens, and each state
// page is padded to the attention page. Qwen3.6 at TP2 (the rows above):
//   one layer's state page = 16,465,920 / 30 = 548,864 B; one token's attention page on one
//   layer = 2 x 1 head x 256 x 2 B = 1,024 B;
//   block = 16 x ceil(548,864 / 16,384 = 33.5) = 16 x 34 = 544 tokens; page = 544 x 1,024 =
//   557,056 B; padding = (557,056 - 548,864) x 30 layers = 245,760 B a sequence.
//   A 5,120-token sequence takes ceil(5,120 / 544) = 10 blocks = 5,440 tokens: 5,440 x 10,240 +
//   16,465,920 + 245,760 = 72,417,280 B allocated (68,894,720 B read).
// TP4: the state halves (274,432 B a layer), the KV head does not (1,024 B): 16 x ceil(16.75) =
//   272 tokens; page 278,528 B; padding (278,528 - 274,432) x 30 = 122,880 B.
// Llama-3.1-8B has no state layers: no blocks, nothing padded.
TEST(KvCacheTest, HybridPagesAreUnifiedAsVllmDoes) {
  auto qwen = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(qwen.ok());
  const KvFootprint tp2 = ComputeKvFootprint(*qwen, 2, {});
  EXPECT_EQ(tp2.block_tokens, 544);
  EXPECT_NEAR(tp2.state_padding_per_sequence.count(), 245760, 0.5);
  EXPECT_NEAR(tp2.AllocatedForSequence(5120).count(), 72417280, 0.5);
  EXPECT_NEAR(tp2.ForSequence(5120).count(), 68894720, 0.5);
  const KvFootprint tp4 = ComputeKvFootprint(*qwen, 4, {});
  EXPECT_EQ(tp4.block_tokens, 272);
  EXPECT_NEAR(tp4.state_padding_per_sequence.count(), 122880, 0.5);
  auto llama = LoadModelConfig("llama-3.1-8b");
  ASSERT_TRUE(llama.ok());
  const KvFootprint dense = ComputeKvFootprint(*llama, 1, {});
  EXPECT_EQ(dense.block_tokens, 0);
  EXPECT_NEAR(dense.AllocatedForSequence(5000).count(), dense.ForSequence(5000).count(), 0.5);
  // The rule on its own: a state page that fills exactly 34 aligned blocks is not rounded up.
  EXPECT_EQ(UnifiedBlockTokens(Bytes::Count(557056), Bytes::Count(1024), 16), 544);
  EXPECT_EQ(UnifiedBlockTokens(Bytes::Count(557057), Bytes::Count(1024), 16), 560);
}

}  // namespace
}  // namespace strata
