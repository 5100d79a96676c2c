// torchtitan's selective_ac_option and megatron-core's activation offload in the job file: what
// parses, and what is refused with which field and reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/resolved_job.h"

namespace strata::activation_modes_test {
namespace {

// A dense Llama job on one 8-GPU node; the model is a catalog name.
constexpr const char* kLlama =
    "model: llama-3.1-8b\n"
    "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
    "parallel: {tp: 1, pp: 1}\n"
    "batch: {micro_batch: 1, global_batch: 8}\n"
    "sequence: {max_tokens: 4096}\n";

TEST(ActivationModes, TorchtitanOptionsParse) {
  auto op = ParseJobSpec(kLlama, "j.yaml",
                         {"recompute.granularity=selective", "recompute.selective_ac_option=op"});
  ASSERT_TRUE(op.ok()) << op.error().Format();
  EXPECT_TRUE(op->recompute.titan.op);
  EXPECT_EQ(op->recompute.titan.every_n_layers, 0);
  auto every = ParseJobSpec(kLlama, "j.yaml",
                            {"recompute.granularity=selective", "recompute.selective_ac_option=3"});
  ASSERT_TRUE(every.ok()) << every.error().Format();
  EXPECT_FALSE(every->recompute.titan.op);
  EXPECT_EQ(every->recompute.titan.every_n_layers, 3);
  // Plain selective stays megatron-core's module list.
  auto plain = ParseJobSpec(kLlama, "j.yaml", {"recompute.granularity=selective"});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->recompute.titan.on());
  auto offload = ParseJobSpec(kLlama, "j.yaml", {"activation_offload.num_layers=4"});
  ASSERT_TRUE(offload.ok()) << offload.error().Format();
  EXPECT_EQ(offload->activation_offload.num_layers, 4);
}

struct BadCase {
  const char* name;
  std::vector<std::string> sets;
  const char* message;  // a part of the message (or hint)
};

TEST(ActivationModes, RefusedWithAReason) {
  const std::vector<BadCase> cases = {
      {"option without selective",
       {"recompute.granularity=full", "recompute.selective_ac_option=op"},
       "applies only to granularity: selective"},
      {"misspelt op",
       {"recompute.granularity=selective", "recompute.selective_ac_option=opp"},
       "expected 'op' or a layer frequency"},
      {"zero",
       {"recompute.granularity=selective", "recompute.selective_ac_option=0"},
       "expected 'op' or a layer frequency"},
      {"negative offload", {"activation_offload.num_layers=-1"}, "expected 0 (off)"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto spec = ParseJobSpec(kLlama, "j.yaml", c.sets);
    ASSERT_FALSE(spec.ok());
    EXPECT_NE((spec.error().message + spec.error().hint).find(c.message), std::string::npos)
        << spec.error().Format();
  }
  // Both megatron-core's module list and torchtitan's option in one file.
  auto both = ParseJobSpec(std::string(kLlama) +
                               "recompute: {granularity: selective, modules: [mlp], "
                               "selective_ac_option: op}\n",
                           "j.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("describe different frameworks"), std::string::npos);
  // --set of one replaces the file's other one.
  auto replaced =
      ParseJobSpec(std::string(kLlama) + "recompute: {granularity: selective, modules: [mlp]}\n",
                   "j.yaml", {"recompute.selective_ac_option=op"});
  ASSERT_TRUE(replaced.ok()) << replaced.error().Format();
  EXPECT_TRUE(replaced->recompute.titan.op);
}

// The rules that need the model: megatron-core's TransformerConfig refuses offloading as many
// layers as the model has, with PP > 1 and with recompute; op-level SAC needs attention blocks.
TEST(ActivationModes, ModelRulesNameTheField) {
  struct ModelCase {
    const char* name;
    std::string text;
    std::vector<std::string> sets;
    const char* field;
    const char* message;
  };
  const std::vector<ModelCase> cases = {
      {"all 32 layers",
       kLlama,
       {"activation_offload.num_layers=32"},
       "activation_offload.num_layers",
       "fewer layers than the model has (32)"},
      {"with PP",
       kLlama,
       {"activation_offload.num_layers=4", "parallel.pp=2"},
       "activation_offload.num_layers",
       "does not support pipeline parallelism"},
      {"with recompute",
       kLlama,
       {"activation_offload.num_layers=4", "recompute.granularity=full"},
       "activation_offload.num_layers",
       "does not work with activation recompute"},
      {"op SAC on Gated DeltaNet",
       "model: qwen3.6-35b-a3b\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
       "parallel: {tp: 1, ep: 8}\nbatch: {micro_batch: 1, global_batch: 80}\n"
       "sequence: {max_tokens: 4096}\n",
       {"recompute.granularity=selective", "recompute.selective_ac_option=op"},
       "recompute.selective_ac_option",
       "gated_deltanet"},
  };
  for (const ModelCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto spec = ParseJobSpec(c.text, "j.yaml", c.sets);
    ASSERT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().field, c.field) << job.error().Format();
    EXPECT_NE(job.error().message.find(c.message), std::string::npos) << job.error().Format();
  }
}

}  // namespace
}  // namespace strata::activation_modes_test
