#include "strata/job/job_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/job/resolved_job.h"

namespace strata::job_spec_test {
namespace {

// A small valid job; the cases below break one thing each.
constexpr const char* kValid =
    "model: qwen3.6-35b-a3b\n"
    "cluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
    "parallel: {tp: 1, ep: 8}\n"
    "batch: {micro_batch: 1, global_batch: 80}\n"
    "sequence: {max_tokens: 4096}\n";

TEST(JobSpec, ParsesTheReferenceJob) {
  auto job = LoadJobSpec(kReferenceJobName);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->model, "qwen3.6-35b-a3b");
  EXPECT_EQ(job->cluster.gpu, "H20");
  EXPECT_EQ(job->cluster.world(), 40);  // 5 nodes x 8 GPUs (seed case)
  EXPECT_EQ(job->layout.ep, 8);
  EXPECT_EQ(job->layout.dp, 40);
  EXPECT_EQ(job->layout.expert_dp(), 5);   // 40 / 8: "the experts' DP group is only 5"
  EXPECT_EQ(job->num_micro_batches(), 2);  // 80 = 40 x 1 x 2
  EXPECT_DOUBLE_EQ(job->sequence.max_tokens, 49152.0);
  EXPECT_DOUBLE_EQ(job->sequence.mean_tokens, 29000.0);  // "29K" is decimal
  EXPECT_TRUE(job->sequence.variable_length());
  EXPECT_EQ(job->recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(job->grad_dtype, DType::kBf16);
  EXPECT_TRUE(job->optimizer.distributed);
}

// docs/job-file.md gives 0 (an even split) as the default of parallel.first_stage_layers and
// last_stage_layers, so writing the default out must be accepted: PP 2 over the reference's 40
// layers is then 20 + 20, as with no count given. A negative count is refused.
TEST(JobSpec, StageLayerCountsAcceptTheirDefaultZero) {
  for (const char* key : {"parallel.first_stage_layers", "parallel.last_stage_layers"}) {
    SCOPED_TRACE(key);
    auto job =
        LoadJobSpec(kReferenceJobName, {"parallel.pp=2", "parallel.ep=4", std::string(key) + "=0"});
    ASSERT_TRUE(job.ok()) << job.error().Format();
    EXPECT_EQ(job->layout.first_stage_layers, 0);
    EXPECT_EQ(job->layout.last_stage_layers, 0);
    auto resolved = ResolveJob(*job);
    ASSERT_TRUE(resolved.ok()) << resolved.error().Format();
    auto negative = LoadJobSpec(kReferenceJobName, {std::string(key) + "=-1"});
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().Format().find("expected a number of layers, or 0 for an even "
                                             "split, got -1"),
              std::string::npos)
        << negative.error().Format();
  }
}

TEST(JobSpec, DerivesDpAndDefaults) {
  auto job = ParseJobSpec(kValid, "j.yaml");
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->layout.dp, 40);  // 40 GPUs / (TP 1 x PP 1 x CP 1)
  EXPECT_EQ(job->grad_dtype, DType::kFp32);
  EXPECT_EQ(job->recompute.granularity, RecomputeGranularity::kNone);
  EXPECT_FALSE(job->sequence.variable_length());
}

struct OverrideCase {
  const char* name;
  std::vector<std::string> sets;
  int64_t tp, ep, dp;
  DType grads;
};

TEST(JobSpec, OverridesReplaceFileValues) {
  const OverrideCase cases[] = {
      {"ep", {"parallel.ep=4"}, 1, 4, 40, DType::kFp32},
      // Changing TP re-derives DP: 40 / 2 = 20.
      {"tp_rederives_dp",
       {"parallel.tp=2", "parallel.sequence_parallel=true"},
       2,
       8,
       20,
       DType::kFp32},
      {"grads", {"precision.grads=bf16"}, 1, 8, 40, DType::kBf16},
      {"new_section", {"parallel.dp=40", "precision.grads=bf16"}, 1, 8, 40, DType::kBf16},
  };
  for (const auto& c : cases) {
    auto job = ParseJobSpec(kValid, "j.yaml", c.sets);
    ASSERT_TRUE(job.ok()) << c.name << ": " << job.error().Format();
    EXPECT_EQ(job->layout.tp, c.tp) << c.name;
    EXPECT_EQ(job->layout.ep, c.ep) << c.name;
    EXPECT_EQ(job->layout.dp, c.dp) << c.name;
    EXPECT_EQ(job->grad_dtype, c.grads) << c.name;
  }
  auto frozen = ParseJobSpec(kValid, "j.yaml", {"frozen=[vision]"});
  ASSERT_TRUE(frozen.ok());
  EXPECT_EQ(frozen->frozen, std::vector<std::string>{"vision"});
}

struct ErrorCase {
  const char* name;
  std::string yaml;
  std::vector<std::string> sets;
  const char* expected;
};

TEST(JobSpec, BadFilesAndFlagsGiveClearErrors) {
  const std::string v = kValid;
  const ErrorCase cases[] = {
      {"empty", "", {}, "j.yaml: the file is empty, expected a YAML mapping"},
      {"not_a_mapping",
       "- a\n- b\n",
       {},
       "j.yaml: expected a mapping of key: value at the top of a job file"},
      {"truncated", "model: qwen3.6-35b-a3b\ncluster: {gpu: H20, gpus_per", {}, nullptr},
      {"missing_model",
       "cluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n",
       {},
       "j.yaml:1: model: missing required field"},
      {"unknown_top_key",
       v + "recompte: {granularity: full}\n",
       {},
       "j.yaml:6: recompte: unknown field 'recompte'\n  hint: did you mean 'recompute'?"},
      {"unknown_nested_key",
       "model: m\ncluster: {gpu: H20, gpus_per_nod: 8, nodes: 5}\n",
       {},
       "j.yaml:2: cluster.gpus_per_nod: unknown field 'gpus_per_nod'\n  hint: did you mean "
       "'gpus_per_node'?"},
      // audit25 M2: a misspelled required key is the unknown field it is, not a missing one
      // (before: "batch.micro_batch: missing required field", no hint).
      {"misspelled_required_key",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\nparallel: {tp: 1}\n"
       "batch: {micro_bach: 1, global_batch: 40}\nsequence: {max_tokens: 4096}\n",
       {},
       "j.yaml:4: batch.micro_bach: unknown field 'micro_bach'\n  hint: did you mean "
       "'micro_batch'?"},
      {"misspelled_required_section",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\nparallel: {tp: 1}\n"
       "bacth: {micro_batch: 1, global_batch: 40}\nsequence: {max_tokens: 4096}\n",
       {},
       "j.yaml:4: bacth: unknown field 'bacth'\n  hint: did you mean 'batch'?"},
      // A key nothing is close to: the hint lists each allowed key once (before: the top level's
      // names repeated once per field of theirs, "cluster, cluster, cluster, ...").
      {"unknown_top_key_without_model",
       "frobnicate: 1\nbatch: {micro_batch: 1, global_batch: 40}\nsequence: {max_tokens: 4096}\n",
       {},
       "j.yaml:1: frobnicate: unknown field 'frobnicate'\n  hint: expected one of: batch, model, "
       "sequence, cluster, parallel, recompute, activation_offload, precision, optimizer, loss, "
       "attention, frozen, adapter, mtp, sharding, fp8, moe, overlap, framework, checkpoint, "
       "throughput"},
      // An RL job where a training job is read (before: "actor: unknown field 'actor'" with the
      // keys of a training job).
      {"rl_job",
       "actor: {job: qwen3.6-35b-a3b-sft-h20x40}\nalgorithm: grpo\n",
       {},
       "j.yaml:1: actor: an RL job (actor, rollout, placement), not a training job: `strata rl` "
       "reads it\n  hint: for the actor's training alone, give its job: "
       "qwen3.6-35b-a3b-sft-h20x40"},
      {"bad_int", v + "mtp: maybe\n", {}, "j.yaml:6: mtp: expected true or false, got 'maybe'"},
      {"bad_enum",
       v + "recompute: {granularity: ful}\n",
       {},
       "j.yaml:6: recompute.granularity: unknown value 'ful', expected one of: none, selective, "
       "full\n  hint: did you mean 'full'?"},
      {"method_without_full",
       v + "recompute: {granularity: selective, method: block}\n",
       {},
       "j.yaml:6: recompute.method: 'method' applies only to granularity: full"},
      {"grads_fp8",
       v + "precision: {grads: fp8}\n",
       {},
       "j.yaml:6: precision.grads: gradient buffers are fp32, bf16 or fp16, got 'fp8'"},
      {"mean_over_max",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
       "parallel: {tp: 1}\nbatch: {micro_batch: 1, global_batch: 40}\n"
       "sequence: {max_tokens: 4096, mean_tokens: 5000}\n",
       {},
       "j.yaml:5: sequence.mean_tokens: mean_tokens 5000 is larger than max_tokens 4096"},
      {"unknown_attention_kernel",
       v + "attention: {kernel: flsh}\n",
       {},
       "j.yaml:6: attention.kernel: unknown value 'flsh', expected one of: flash, unfused\n  hint: "
       "did you mean 'flash'?"},
      {"unknown_framework",
       v + "framework: {name: torchtitn}\n",
       {},
       "j.yaml:6: framework.name: unknown framework 'torchtitn', expected one of: "
       "megatron-core, megatron-bridge, torchtitan, deepspeed, hf-trainer, ms-swift, verl\n"
       "  hint: did you mean 'torchtitan'?"},
      {"framework_unknown_key",
       v + "framework: {name: verl, release: 0.5}\n",
       {},
       "j.yaml:6: framework.release: unknown field 'release'\n  hint: expected one of: "
       "compile, expandable_segments, gdn_kernel, liger_kernel, name, version"},
      {"framework_gdn_kernel_misspelt",
       v + "framework: {name: ms-swift, gdn_kernel: flashqa}\n",
       {},
       "j.yaml:6: framework.gdn_kernel: unknown Gated DeltaNet kernel 'flashqa', expected one of: "
       "fla, flashqla, torch\n  hint: did you mean 'flashqla'?"},
      {"image_tokens_above_the_sample",
       "model: qwen3.6-35b-a3b\ncluster: h20-5x8\nparallel: {tp: 1, pp: 1, ep: 8}\n"
       "batch: {micro_batch: 1, global_batch: 40}\n"
       "sequence: {max_tokens: 8K, mean_tokens: 4K, image_tokens: 5K}\n",
       {},
       "j.yaml:5: sequence.image_tokens: 5120 image tokens per sample is more than the "
       "sample's 4096 tokens (image tokens are part of them)"},
      {"attention_dropout_out_of_range",
       v + "attention: {kernel: unfused, dropout: 1.5}\n",
       {},
       "j.yaml:6: attention.dropout: expected a probability from 0 to below 1 (Megatron's 0.1)"},
      {"unfused_with_cp",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
       "parallel: {tp: 1, cp: 2}\nbatch: {micro_batch: 1, global_batch: 40}\n"
       "sequence: {max_tokens: 4096}\nattention: {kernel: unfused}\n",
       {},
       "j.yaml: attention.kernel: unfused attention cannot run with context parallelism (cp > "
       "1)\n  hint: context parallelism runs ring attention over flash kernels: kernel: flash"},
      {"std_tokens_without_packing",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
       "parallel: {tp: 1}\nbatch: {micro_batch: 1, global_batch: 40}\n"
       "sequence: {max_tokens: 4096, mean_tokens: 2000, std_tokens: 500}\n",
       {},
       "j.yaml:5: sequence.std_tokens: std_tokens describes the samples packed into each "
       "sequence: it needs packing: true and mean_tokens\n  hint: for unpacked samples of varying "
       "length give a histogram"},
      {"negative_tp",
       "model: m\ncluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
       "parallel: {tp: -2}\n",
       {},
       "j.yaml:3: parallel.tp: expected a positive integer, got -2"},
      {"frozen_not_list",
       v + "frozen: vision\n",
       {},
       "j.yaml:6: frozen: expected a list of module kinds, e.g. [vision]"},
      {"set_unknown_key",
       v,
       {"parallel.epp=16"},
       "--set: unknown key 'parallel.epp'\n  hint: did you mean 'parallel.pp'?"},
      {"set_no_equals",
       v,
       {"parallel.ep"},
       "--set: expected key=value, got 'parallel.ep'\n  hint: e.g. --set parallel.ep=16 --set "
       "precision.grads=bf16"},
      {"set_empty_value", v, {"parallel.ep="}, "--set: 'parallel.ep=': empty value"},
      {"set_bad_value",
       v,
       {"parallel.ep=many"},
       "j.yaml: --set parallel.ep: expected an integer, got 'many'"},
  };
  for (const auto& c : cases) {
    auto job = ParseJobSpec(c.yaml, "j.yaml", c.sets);
    ASSERT_FALSE(job.ok()) << c.name;
    if (c.expected == nullptr) {
      // Malformed YAML: the parser's message varies by version; file and line must be there.
      EXPECT_EQ(job.error().file, "j.yaml") << c.name;
      EXPECT_GT(job.error().line, 0) << c.name;
      continue;
    }
    EXPECT_EQ(job.error().Format(), c.expected) << c.name;
  }
}

TEST(JobSpec, ClusterFileReference) {
  // data/clusters/h20-5x8.yaml: the reference cluster, 5 nodes x 8 H20.
  auto job = ParseJobSpec(kValid, "j.yaml", {"cluster=h20-5x8"});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->cluster.name, "h20-5x8");
  EXPECT_EQ(job->cluster.gpu, "H20");
  EXPECT_EQ(job->cluster.world(), 40);
  EXPECT_EQ(job->layout.dp, 40);
  auto unknown = ParseJobSpec(kValid, "j.yaml", {"cluster=h20-5x9"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_FALSE(unknown.error().hint.empty()) << unknown.error().Format();
}

// `--set cluster.nodes=2` on a job that names a cluster file used to turn the cluster into a GPU
// and two counts, losing the file's NICs (step and plan then refused the job for want of a
// network). The file stays: h20-5x8 with 2 of its 5 nodes, its 8 GPUs per node and its NICs.
// Another GPUs-per-node is another node, which the file does not describe: refused.
TEST(JobSpec, NodeCountOverrideKeepsTheClusterFile) {
  auto spec = ParseJobSpec(kValid, "j.yaml", {"cluster=h20-5x8", "cluster.nodes=2"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->cluster.name, "h20-5x8");
  EXPECT_EQ(spec->cluster.world(), 16);
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->cluster.nodes, 2);
  EXPECT_EQ(job->cluster.gpus_per_node, 8);
  EXPECT_FALSE(job->cluster.nics.empty());
  auto other_node = ParseJobSpec(kValid, "j.yaml", {"cluster=h20-5x8", "cluster.gpus_per_node=4"});
  ASSERT_FALSE(other_node.ok());
  EXPECT_NE(other_node.error().Format().find("8 GPUs per node"), std::string::npos)
      << other_node.error().Format();
}

// A GB200 NVL72 rack is one NVLink domain of 72 GPUs; Megatron-Bridge's 8-GPU GB200 recipes
// run on 8 of them, and a 256-GPU run on 64 of each of 4 racks. The rack file allows part of a
// node (partial_nodes), with one NIC per GPU used: 256 GPUs = 4 x 64, DP = 256 / (TP1 PP1 CP1).
TEST(JobSpec, PartOfAnNvl72RackIsAJob) {
  auto spec = ParseJobSpec(kValid, "j.yaml",
                           {"cluster=gb200-nvl72", "cluster.gpus_per_node=64", "cluster.nodes=4",
                            "parallel.dp=256", "batch.global_batch=512"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->cluster.world(), 256);
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->cluster.gpus_per_node, 64);
  EXPECT_EQ(job->cluster.nodes, 4);
  // 64 ConnectX-7 at 400 Gb/s per rack: 3,200 GB/s, 50 GB/s per GPU.
  EXPECT_NEAR(job->cluster.DataNicBandwidthPerNode().gb_per_s(), 3200.0, 1e-9);
  auto too_many =
      ParseJobSpec(kValid, "j.yaml", {"cluster=gb200-nvl72", "cluster.gpus_per_node=80"});
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().hint, "use at most 72 GPUs of each node");
}

// framework: {name, version, compile}; without it megatron-core, marked as not given so that
// `step` prints it as an assumption. --set names it like any other field.
TEST(JobSpec, FrameworkField) {
  auto plain = ParseJobSpec(kValid, "j.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_EQ(plain->framework.name, "megatron-core");
  EXPECT_FALSE(plain->framework.given);
  EXPECT_TRUE(plain->framework.version.empty());
  auto set = ParseJobSpec(
      kValid, "j.yaml",
      {"framework.name=torchtitan", "framework.version=0.1.0", "framework.compile=true"});
  ASSERT_TRUE(set.ok()) << set.error().Format();
  EXPECT_EQ(set->framework.name, "torchtitan");
  EXPECT_EQ(set->framework.version, "0.1.0");
  EXPECT_TRUE(set->framework.compile);
  EXPECT_TRUE(set->framework.given);
  auto bad = ParseJobSpec(kValid, "j.yaml", {"framework.name=hf-trainr"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(),
            "j.yaml: --set framework.name: unknown framework 'hf-trainr', expected one of: "
            "megatron-core, megatron-bridge, torchtitan, deepspeed, hf-trainer, ms-swift, verl\n"
            "  hint: did you mean 'hf-trainer'?");
}

TEST(JobSpec, UnknownCatalogJob) {
  auto job = LoadJobSpec("qwen-sft");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().message, "no job named 'qwen-sft' in the catalog (data/jobs/)");
}

// A job file given by its bare name (no directory) is read as a file (audit 54, P3): `memory
// ds.json` said "no job named 'ds.json' in the catalog ... hint: give a path to a job file" for a
// file that exists, while ./ds.json and ds.yaml were read. The content is a DeepSpeed config
// (not a job), so reading it must report its first unknown field.
TEST(JobSpec, ABareFileNameThatExistsIsReadAsAFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "strata_job_spec_bare_name";
  std::filesystem::create_directories(dir);
  const std::filesystem::path old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  {
    std::ofstream("ds.json") << R"({"train_batch_size": 64, "zero_optimization": {"stage": 3}})";
    std::ofstream("myjob") << "{}";
  }
  auto json = LoadJobSpec("ds.json");
  auto bare = LoadJobSpec("myjob");
  auto missing = LoadJobSpec("absent.json");
  std::filesystem::current_path(old_cwd);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().file, "ds.json");
  EXPECT_NE(json.error().message.find("train_batch_size"), std::string::npos)
      << json.error().Format();
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().file, "myjob");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.find("no job named"), std::string::npos)
      << missing.error().Format();
}

TEST(JobSpec, DTypeBytes) {
  // fp32 is 4 bytes, bf16 and fp16 2, fp8 1 (IEEE / OCP formats).
  EXPECT_EQ(DTypeBytes(DType::kFp32), 4);
  EXPECT_EQ(DTypeBytes(DType::kBf16), 2);
  EXPECT_EQ(DTypeBytes(DType::kFp16), 2);
  EXPECT_EQ(DTypeBytes(DType::kFp8), 1);
}

}  // namespace
}  // namespace strata::job_spec_test
