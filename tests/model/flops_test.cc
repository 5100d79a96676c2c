// FLOPs per token from first principles (2 FLOP per multiply-add), the Megatron convention, and
// sequence-length statistics. Expected values are worked out by hand in the comments.
#include "strata/model/flops.h"

#include <gtest/gtest.h>

#include "strata/model/flop_conventions.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"

namespace strata::flops_test {
namespace {

ModelConfig Load(const char* name) {
  auto c = LoadModelConfig(name);
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : ModelConfig{};
}

struct LayerFlopCase {
  const char* name;
  const char* model;
  size_t layer;
  double seq;
  AttentionMask mask;
  double projections, core_attention, linear_state, ffn;
};

const LayerFlopCase kLayerCases[] = {
    // Llama-3.1-8B: q and o 4096x4096, k and v 4096x1024 -> 2 x 41,943,040 = 83,886,080;
    // causal attention at S = 4096: 2 x 2 x 4096 (q width) x 4096/2 = 33,554,432;
    // SwiGLU 2 x 3 x 4096 x 14336 = 352,321,536.
    {"llama causal", "llama-3.1-8b", 0, 4096, AttentionMask::kCausal, 83'886'080, 33'554'432, 0,
     352'321'536},
    // Non-causal doubles only the core attention: 67,108,864.
    {"llama non-causal", "llama-3.1-8b", 0, 4096, AttentionMask::kNonCausal, 83'886'080, 67'108'864,
     0, 352'321'536},
    // Qwen3.6 GDN layer: in_proj 2048 x (8192 + 4096 + 64) + out 4096 x 2048 -> 2 x 33,685,504
    // = 67,371,008; conv 2 x 4 x 8192 = 65,536 + delta rule 2 x 4 x 32 x 128 x 128 = 4,194,304
    // -> 4,259,840; FFN 2 x 3 x 2048 x (8 x 512 + 512) = 56,623,104.
    {"qwen3.6 gdn", "qwen3.6-35b-a3b", 0, 29000, AttentionMask::kCausal, 67'371'008, 0, 4'259'840,
     56'623'104},
    // Qwen3.6 gated attention: q+gate 2048x8192, k/v 2x2048x512, o 4096x2048 -> 2 x 27,262,976
    // = 54,525,952; attention 2 x 2 x 4096 x 29,000/2 = 237,568,000.
    {"qwen3.6 attention", "qwen3.6-35b-a3b", 3, 29000, AttentionMask::kCausal, 54'525'952,
     237'568'000, 0, 56'623'104},
    // GPT-OSS sliding layer, window 128, S = 4096: mean attended 128 - 128^2/(2 x 4096) = 126;
    // 2 x 2 x 4096 (64 heads x 64) x 126 = 2,064,384. Projections: q and o 2880 x 4096, k and
    // v 2880 x 512 -> 2 x 2880 x 9216 = 53,084,160; 4 of 128 experts: 2 x 3 x 2880^2 x 4.
    {"gpt-oss sliding", "gpt-oss-120b", 0, 4096, AttentionMask::kCausal, 53'084'160, 2'064'384, 0,
     2 * 3 * 2880.0 * 2880 * 4},
};

TEST(FlopsTest, PerLayer) {
  for (const auto& c : kLayerCases) {
    const ForwardFlops f = CountForwardFlops(Load(c.model), c.seq, c.mask);
    const LayerFlops& l = f.layers[c.layer];
    EXPECT_NEAR(l.projections.count(), c.projections, 0.5) << c.name;
    EXPECT_NEAR(l.core_attention.count(), c.core_attention, 0.5) << c.name;
    EXPECT_NEAR(l.linear_state.count(), c.linear_state, 0.5) << c.name;
    EXPECT_NEAR(l.ffn.count(), c.ffn, 0.5) << c.name;
  }
}

TEST(FlopsTest, LogitsAndRouter) {
  const ForwardFlops f = CountForwardFlops(Load("qwen3.6-35b-a3b"), 4096, AttentionMask::kCausal);
  // 2 x 2048 x 248,320 = 1,017,118,720.
  EXPECT_NEAR(f.logits.count(), 1'017'118'720, 0.5);
  // 40 layers x 2 x (256 x 2048 router + 2048 shared gate) = 42,106,880.
  EXPECT_NEAR(f.router.count(), 42'106'880, 0.5);
}

TEST(FlopsTest, MegatronDenseMatchesSixNPlusAttention) {
  // Llama-3.1-8B, S = 8192: megatron counts 6 x (non-embedding matmul weights 6,979,321,856
  // + head 525,336,576) + 6 x 32 layers x 4096 x 8192 = 45,027,950,592 + 6,442,450,944
  // = 51,470,401,536 FLOP/token (norms are not counted).
  EXPECT_NEAR(MegatronTrainingFlopsPerToken(Load("llama-3.1-8b"), 8192, false).count(),
              51'470'401'536.0, 1.0);
}

struct SequenceCase {
  const char* name;
  std::vector<HistogramBin> bins;
  double mean, attention_tokens, max;
};

TEST(SequenceLengthsTest, Histogram) {
  const SequenceCase cases[] = {
      // Half at 1000, half at 3000: E[S] = 2000, E[S^2] = (1e6 + 9e6)/2 = 5e6, ratio 2500.
      {"two bins", {{1000, 1}, {3000, 1}}, 2000, 2500, 3000},
      // One length: the ratio is the length itself.
      {"fixed", {{4096, 7}}, 4096, 4096, 4096},
      // Weights 3:1 at 2000 and 6000: E[S] = 3000, E[S^2] = (3 x 4e6 + 36e6)/4 = 12e6 -> 4000.
      {"weighted", {{2000, 3}, {6000, 1}}, 3000, 4000, 6000},
  };
  for (const auto& c : cases) {
    auto s = FromHistogram(c.bins);
    ASSERT_TRUE(s.ok()) << c.name;
    EXPECT_NEAR(s->mean_tokens, c.mean, 1e-9) << c.name;
    EXPECT_NEAR(s->AttentionTokens(), c.attention_tokens, 1e-9) << c.name;
    EXPECT_NEAR(s->max_tokens, c.max, 1e-9) << c.name;
  }
}

struct HistogramErrorCase {
  const char* name;
  const char* text;
  const char* expected_error;
};

TEST(SequenceLengthsTest, HistogramFileErrors) {
  const HistogramErrorCase cases[] = {
      {"empty", "# only a comment\n\n", "h.txt: no 'length count' lines: the histogram is empty"},
      {"one column", "1000 5\n2000\n", "h.txt:2: expected 'length count' on each line, got '2000'"},
      {"not a number", "1000 five\n", "h.txt:1: count: expected a number, got 'five'"},
      {"zero length", "0 3\n", "h.txt:1: length: a sequence length must be positive, got 0"},
      {"negative count", "100 -1\n", "h.txt:1: count: a count must be >= 0, got -1"},
      {"all zero", "100 0\n", "h.txt: the histogram has no samples (all counts are zero)"},
      {"truncated", "1000 5\n20", "h.txt:2: expected 'length count' on each line, got '20'"},
      // Fuzz finding 11: 1e308 squared is inf, and E[S^2]/E[S] was printed as inf.
      {"length beyond 1e9", "1e308 1\n",
       "h.txt:1: length: a sequence length must be at most 1e9 tokens, got 1e308"},
      // 1e300 samples of 1e9 tokens: count x length^2 = 1e318, beyond double range.
      {"totals overflow", "1000000000 1e300\n",
       "h.txt: the histogram's totals overflow (sum of count x length^2 is not finite): counts "
       "too large"},
  };
  for (const auto& c : cases) {
    auto s = ParseSequenceHistogram(c.text, "h.txt");
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.error().Format(), c.expected_error) << c.name;
  }
}

struct TokenCountCase {
  const char* text;
  double expected;
};

TEST(SequenceLengthsTest, TokenCounts) {
  const TokenCountCase cases[] = {
      {"29000", 29000},
      {"29K", 29000},
      {"48Ki", 49152},
      {"2.31M", 2310000},
      {"4096", 4096},
      // "4Mi" like "48Ki": 4 x 1,048,576; G is 1e9 in a count.
      {"4Mi", 4194304},
      {"12G", 12e9},
      // Budgets are quoted in B and T (audit k5: `compare --tokens 100B` was refused): 100B =
      // 100 x 1e9, 15T = 15 x 1e12 (Llama 3's pre-training tokens), 1.5B = 1.5e9.
      {"100B", 100e9},
      {"15T", 15e12},
      {"1.5B", 1.5e9},
  };
  for (const auto& c : cases) {
    auto v = ParseTokenCount(c.text);
    ASSERT_TRUE(v.ok()) << c.text;
    EXPECT_NEAR(*v, c.expected, 1e-6) << c.text;
  }
  for (const char* bad : {"", "0", "-3K", "12GB", "K", "Mi"})
    EXPECT_FALSE(ParseTokenCount(bad).ok()) << bad;
}

// Sequence lengths are quoted in binary: an "8K context" is 8,192 tokens, "128K" 131,072.
TEST(SequenceLengthsTest, SequenceLengthsReadKAsBinary) {
  const TokenCountCase cases[] = {
      {"8K", 8192},     {"128K", 131072}, {"1M", 1048576},  {"8Ki", 8192},
      {"4Mi", 4194304}, {"8192", 8192},   {"29000", 29000},
  };
  for (const auto& c : cases) {
    auto v = ParseSequenceLength(c.text);
    ASSERT_TRUE(v.ok()) << c.text;
    EXPECT_DOUBLE_EQ(*v, c.expected) << c.text;
  }
  EXPECT_FALSE(ParseSequenceLength("8KB").ok());
  EXPECT_FALSE(ParseSequenceLength("1B").ok());  // B and T are token budgets, not lengths
  EXPECT_FALSE(ParseSequenceLength("1T").ok());
  // Finding 23: max_tokens 1e300 passed and, with CP > 1, reached static_cast<int64_t> in the
  // layout check (undefined behaviour). 1e9 tokens is the longest sequence taken (as in
  // histograms), 1e15 the largest token count; inf and nan are not numbers here.
  EXPECT_TRUE(ParseSequenceLength("1e9").ok());
  for (const char* bad : {"1e300", "1000001K", "inf", "nan"})
    EXPECT_FALSE(ParseSequenceLength(bad).ok()) << bad;
  EXPECT_TRUE(ParseTokenCount("15e12").ok());  // a 15T-token pre-training run
  EXPECT_FALSE(ParseTokenCount("1e300").ok());
  const auto error = ParseSequenceLength("1e300");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().message, "a sequence length must be at most 1e+09 tokens, got '1e300'");
}

}  // namespace
}  // namespace strata::flops_test
