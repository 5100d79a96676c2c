// data/rl_constants.yaml: the shipped file reads, and truncated or malformed versions are errors
// naming the field.
#include "strata/rl/rl_constants.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::rl_constants_test {
namespace {

const char* const kGood = R"(vllm_memory:
  non_torch_tp1: 1.79GiB
  non_torch_tp: 3.58GiB
  activation_peak: 1.26GiB
  cuda_graph: 0.36GiB
  source: a log
  cuda_graph_counted_from: "0.21"
  cuda_graph_source: a log line
decode:
  step_overhead_ms: 4.0
  source: a profile
  eager_factor: 1.37
  eager_source: a pair of runs
weight_sync:
  convert_bandwidth: 6.0GB/s
  source: a measurement
host_copy:
  pageable_h2d: 10.0GB/s
  pageable_d2h: 10.8GB/s
  source: a bandwidthTest
)";

TEST(RlConstantsTest, ShippedFileReads) {
  auto c = LoadRlConstants();
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_EQ(c->cuda_graph_counted_from.major, 0);
  EXPECT_EQ(c->cuda_graph_counted_from.minor, 21);
  EXPECT_NEAR(c->NonTorch(1).gib(), 1.79, 1e-9);
  EXPECT_NEAR(c->NonTorch(2).gib(), 3.58, 1e-9);
  EXPECT_NEAR(c->sync_convert_bandwidth.gb_per_s(), 6.0, 1e-9);
  EXPECT_NEAR(c->decode_step_overhead.ms(), 4.0, 1e-12);
  EXPECT_NEAR(c->eager_factor, 1.37, 1e-12);  // 85 s eager / 62 s CUDA graphs, rounded
  // CUDA's bandwidthTest on a DGX A100, PAGEABLE host to device and device to host.
  EXPECT_NEAR(c->pageable_h2d.gb_per_s(), 10.0, 1e-9);
  EXPECT_NEAR(c->pageable_d2h.gb_per_s(), 10.8, 1e-9);
  EXPECT_EQ(c->sources.size(), 6u);  // every section says where its numbers come from
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(RlConstantsTest, BadFilesNameTheField) {
  struct Row {
    const char* name;
    std::string text;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"truncated", std::string(kGood).substr(0, std::string(kGood).find("weight_sync:")),
       "c.yaml:1: weight_sync: missing required field"},
      {"size_without_unit", Replace(kGood, "1.26GiB", "1.26"), ""},
      {"bad_version", Replace(kGood, "\"0.21\"", "soon"),
       "c.yaml:7: vllm_memory.cuda_graph_counted_from: expected a version such as 0.21, got "
       "'soon'"},
      {"unknown_key",
       Replace(kGood, "  eager_factor: 1.37\n", "  eager_factor: 1.37\n  eager_facter: 1\n"),
       "c.yaml:13: decode.eager_facter: unknown field 'eager_facter'\n  hint: did you mean "
       "'eager_factor'?"},
      {"negative_overhead", Replace(kGood, "step_overhead_ms: 4.0", "step_overhead_ms: -1"),
       "c.yaml:10: decode.step_overhead_ms: expected a time >= 0 ms, got -1"},
      {"eager_below_one", Replace(kGood, "eager_factor: 1.37", "eager_factor: 0.9"),
       "c.yaml:12: decode.eager_factor: expected a factor >= 1, got 0.9"},
      {"no_eager_source", Replace(kGood, "  eager_source: a pair of runs\n", ""),
       "c.yaml:10: decode.eager_source: missing required field"},
      {"no_decode",
       Replace(kGood,
               "decode:\n  step_overhead_ms: 4.0\n  source: a profile\n  eager_factor: 1.37\n"
               "  eager_source: a pair of runs\n",
               ""),
       "c.yaml:1: decode: missing required field"},
      {"zero_pageable", Replace(kGood, "pageable_d2h: 10.8GB/s", "pageable_d2h: 0GB/s"),
       "c.yaml:19: host_copy.pageable_d2h: expected a positive bandwidth"},
      {"malformed", "vllm_memory: [1,\n", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    auto c = ParseRlConstants(row.text, "c.yaml");
    ASSERT_FALSE(c.ok());
    if (row.expected.empty()) {
      EXPECT_EQ(c.error().Format().rfind("c.yaml:", 0), 0u) << c.error().Format();
    } else {
      EXPECT_EQ(c.error().Format(), row.expected);
    }
  }
}

}  // namespace
}  // namespace strata::rl_constants_test
