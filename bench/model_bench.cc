// Accounting a 128-layer hybrid MoE config (parameters, per-layer table, FLOPs under every
// convention) should take microseconds: the planner calls it for every candidate layout.
#include <benchmark/benchmark.h>

#include <string>

#include "strata/model/flop_conventions.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"

namespace {

// A synthetic 128-layer Qwen3.5-style config: 3 Gated DeltaNet layers per gated attention
// layer, 256 experts top 8 with a shared expert.
std::string Synthetic128LayerConfig() {
  std::string layer_types;
  for (int i = 0; i < 128; ++i) {
    layer_types += std::string(i > 0 ? ", " : "") +
                   ((i + 1) % 4 == 0 ? "\"full_attention\"" : "\"linear_attention\"");
  }
  return R"({"model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"],
    "hidden_size": 4096, "num_hidden_layers": 128, "layer_types": [)" +
         layer_types + R"(],
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 256,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 1024,
    "shared_expert_intermediate_size": 1024, "intermediate_size": 12288,
    "vocab_size": 151936, "tie_word_embeddings": false})";
}

void BM_Accounting128Layers(benchmark::State& state) {
  auto config = strata::ParseModelConfig(Synthetic128LayerConfig(), "synthetic.json");
  if (!config.ok()) {
    state.SkipWithError(config.error().Format().c_str());
    return;
  }
  for (auto _ : state) {
    const strata::ParamBreakdown params = strata::CountParams(*config);
    const auto conventions = strata::TrainingFlopsPerToken(
        *config, params, strata::ConventionInputs{32768, std::nullopt, false});
    benchmark::DoNotOptimize(params.text_total());
    benchmark::DoNotOptimize(conventions.data());
  }
}
BENCHMARK(BM_Accounting128Layers)->Unit(benchmark::kMicrosecond);

void BM_ParseAndAccount128Layers(benchmark::State& state) {
  const std::string text = Synthetic128LayerConfig();
  for (auto _ : state) {
    auto config = strata::ParseModelConfig(text, "synthetic.json");
    benchmark::DoNotOptimize(strata::CountParams(*config).text_total());
  }
}
BENCHMARK(BM_ParseAndAccount128Layers)->Unit(benchmark::kMicrosecond);

}  // namespace
