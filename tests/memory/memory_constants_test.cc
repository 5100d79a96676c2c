#include "strata/memory/memory_constants.h"

#include <gtest/gtest.h>

namespace strata::memory_constants_test {
namespace {

constexpr const char* kValid =
    "cuda_context: {bytes: 768MiB, source: s}\n"
    "nccl_per_communicator: {bytes: 512MiB, source: s}\n"
    "allocator_fragmentation: {fixed_shapes: 0.05, variable_shapes: 0.3, source: s}\n"
    "backward_gradient_fraction: {value: 0.5, source: s}\n"
    "hf_eager_layer: {engines: [hf-trainer], source: s}\n"
    "gated_deltanet: {chunk_tokens: 64, state_bytes_per_element: 4, source: s}\n"
    "moe_dispatch: {transient_copies: 2, source: s}\n"
    "caching_allocator: {min_block: 512B, small_size: 1MiB, small_segment: 2MiB, large_segment: "
    "20MiB, min_large_alloc: 10MiB, round_large: 2MiB, source: s}\n"
    "cross_entropy: {megatron: {forward: 6, backward: 6}, torch_eager: {forward: 10, backward: "
    "12}, torch_compiled: {forward: 2, backward: 4}, torch_loss_parallel: {forward: 14, backward: "
    "16}, torch_engines: [torchtitan], loss_parallel_engines: [torchtitan], "
    "fused_logprob_frameworks: [verl], compiled_from: "
    "{torchtitan: '0.1.0'}, source: s}\n"
    "device_capacity: {driver_reserved: 613MiB, cards: {H20: {datasheet: 96GB, memory_total: "
    "97871MiB}}, source: s}\n"
    "model_error: {megatron: {lowest: -0.232, highest: 0.011, rows: [A]}, fsdp2: {rows: []}, "
    "deepspeed: {rows: []}, hf_trainer: {rows: []}, default: {lowest: -0.232, highest: 0.011, "
    "rows: [A]}, source: s}\n"
    "torchtitan_eager_layer: {engines: [torchtitan], source: s}\n"
    "te_fp8_activations: {engines: [megatron-core], fp8_bytes_per_element: 1, "
    "scale_bytes_per_element: {delayed: 0, tensorwise: 0, blockwise: 0.03125, mxfp8: 0.03125}, "
    "save_original_input_from: '0.14', source: s}\n";

TEST(MemoryConstants, ShippedFileLoads) {
  auto c = LoadMemoryConstants();
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_DOUBLE_EQ(c->cuda_context.mib(), 768.0);
  EXPECT_EQ(c->gdn_chunk_tokens, 64);
  EXPECT_EQ(c->sources.size(), 13u);  // every section carries a source
}

TEST(MemoryConstants, ParsesUnitsExactly) {
  auto c = ParseMemoryConstants(kValid, "m.yaml");
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_DOUBLE_EQ(c->nccl_per_communicator.count(), 512.0 * 1048576);  // 512 x 2^20
  EXPECT_DOUBLE_EQ(c->fragmentation_variable_shapes, 0.3);
  EXPECT_DOUBLE_EQ(c->allocator.large_segment.count(), 20.0 * 1048576);
  // A family without rows (fsdp2 here) parses without numbers; BandFor falls back to default.
  EXPECT_TRUE(c->error_bands.at("fsdp2").rows.empty());
  EXPECT_DOUBLE_EQ(c->error_bands.at("megatron").lowest, -0.232);
  EXPECT_DOUBLE_EQ(c->te_fp8.scale_bytes_per_element.at("mxfp8"), 1.0 / 32.0);
  EXPECT_EQ(c->te_fp8.save_original_input_from, "0.14");
}

TEST(MemoryConstants, BadFilesGiveClearErrors) {
  struct Case {
    const char* name;
    std::string text;
    const char* expected;
  };
  const std::string v = kValid;
  const Case cases[] = {
      {"empty", "", "m.yaml: the file is empty, expected a YAML mapping"},
      // Cut after the first line: the second section is missing.
      {"truncated", "cuda_context: {bytes: 768MiB, source: s}\n",
       "m.yaml:1: nccl_per_communicator: missing required field"},
      {"no_unit", "cuda_context: {bytes: 768, source: s}\n", nullptr},
      {"no_source", "cuda_context: {bytes: 768MiB}\n",
       "m.yaml:1: cuda_context.source: missing required field"},
      {"fraction_range",
       "cuda_context: {bytes: 1GiB, source: s}\nnccl_per_communicator: {bytes: 1GiB, source: s}\n"
       "allocator_fragmentation: {fixed_shapes: 2, variable_shapes: 0.3, source: s}\n",
       "m.yaml:3: allocator_fragmentation.fixed_shapes: expected a fraction in [0, 1], got 2"},
      // A band's row names must be names: a nested list is refused, not thrown on.
      {"row_not_a_name", std::string(v).replace(v.find("rows: [A]}"), 10, "rows: [[A]]}"),
       "m.yaml:11: model_error.megatron.rows: expected a list of row names"},
      // The engines whose layers are HF's eager modules: a list of names, not one name.
      {"hf_engines_not_a_list",
       std::string(v).replace(v.find("engines: [hf-trainer]"), 21, "engines: hf-trainer"),
       "m.yaml:5: hf_eager_layer.engines: expected a list of frameworks"},
      {"unknown_key", v + "cuda_contxt: {bytes: 1GiB, source: s}\n",
       "m.yaml:14: cuda_contxt: unknown field 'cuda_contxt'\n  hint: did you mean 'cuda_context'?"},
      // A TE recipe's scales are a part of a byte per element, and every recipe has one.
      {"te_scale_range", std::string(v).replace(v.find("blockwise: 0.03125"), 18, "blockwise: 4"),
       "m.yaml:13: te_fp8_activations.scale_bytes_per_element.blockwise: expected bytes per "
       "element from 0 to below 1"},
      {"te_recipe_missing", std::string(v).replace(v.find("mxfp8: 0.03125"), 14, "mxfp: 0.03125"),
       "m.yaml:13: te_fp8_activations.scale_bytes_per_element.mxfp8: missing required field"},
  };
  for (const auto& c : cases) {
    auto r = ParseMemoryConstants(c.text, "m.yaml");
    ASSERT_FALSE(r.ok()) << c.name;
    if (c.expected == nullptr) {
      EXPECT_EQ(r.error().field, "cuda_context.bytes") << c.name;
      continue;
    }
    EXPECT_EQ(r.error().Format(), c.expected) << c.name;
  }
}

}  // namespace
}  // namespace strata::memory_constants_test
