// strata import on real launch inputs (tests/golden/cli_import/SOURCES.md): each expected value
// is read off the input by hand, with the framework rule that produces it named beside it.
#include "strata/importer/import_job.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/shell_script.h"
#include "strata/job/training_modes_parse.h"
#include "strata/model/megatron_model.h"
#include "strata/model/param_count.h"
#include "support/golden.h"

namespace strata::import_job_test {
namespace {

std::string Golden(const std::string& file) { return testing::ImportGolden(file); }

ImportReport Import(const std::string& file, ImportOptions options) {
  auto report = ImportJobFile(Golden(file), options);
  EXPECT_TRUE(report.ok()) << file << ": " << (report.ok() ? "" : report.error().Format());
  return report.ok() ? *report : ImportReport{};
}

ImportOptions Gpu(const char* gpu) {
  ImportOptions o;
  o.gpu = gpu;
  return o;
}

using testing::SourceOf;

TEST(ImportJobTest, CourseCommandImportsToTheReferenceJob) {
  ImportOptions o = Gpu("H20");
  // The one figure no launch command holds: the mean sample length of the data.
  o.overrides = {"sequence.mean_tokens=29000"};  // the reference job states 29,000
  const ImportReport r = Import("course_ms_swift/course_sft.sh", o);
  auto ref = LoadJobSpec(kReferenceJobName);
  ASSERT_TRUE(ref.ok()) << ref.error().Format();
  const JobSpec& a = r.job;
  const JobSpec& b = *ref;
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.cluster.gpu, b.cluster.gpu);
  EXPECT_EQ(a.cluster.gpus_per_node, b.cluster.gpus_per_node);
  EXPECT_EQ(a.cluster.nodes, b.cluster.nodes);
  EXPECT_EQ(a.layout.tp, b.layout.tp);
  EXPECT_EQ(a.layout.pp, b.layout.pp);
  EXPECT_EQ(a.layout.vpp, b.layout.vpp);
  EXPECT_EQ(a.layout.cp, b.layout.cp);
  EXPECT_EQ(a.layout.ep, b.layout.ep);
  EXPECT_EQ(a.layout.etp, b.layout.etp);
  EXPECT_EQ(a.layout.dp, b.layout.dp);
  EXPECT_EQ(a.layout.sequence_parallel, b.layout.sequence_parallel);
  EXPECT_EQ(a.micro_batch, b.micro_batch);
  EXPECT_EQ(a.global_batch, b.global_batch);
  EXPECT_EQ(a.sequence.max_tokens, b.sequence.max_tokens);
  EXPECT_EQ(a.sequence.mean_tokens, b.sequence.mean_tokens);
  EXPECT_EQ(a.sequence.packing, b.sequence.packing);
  EXPECT_EQ(a.recompute.granularity, b.recompute.granularity);
  EXPECT_EQ(a.recompute.method, b.recompute.method);
  EXPECT_EQ(a.recompute.num_layers, b.recompute.num_layers);
  EXPECT_EQ(a.param_dtype, b.param_dtype);
  EXPECT_EQ(a.grad_dtype, b.grad_dtype);
  EXPECT_EQ(a.optimizer.name, b.optimizer.name);
  EXPECT_EQ(a.optimizer.distributed, b.optimizer.distributed);
  EXPECT_EQ(a.optimizer.master_dtype, b.optimizer.master_dtype);
  EXPECT_EQ(a.optimizer.moment_dtype, b.optimizer.moment_dtype);
  // The one field the command does not decide as the reference job states it: the command's
  // --cross_entropy_loss_fusion runs the native implementation (fp32 softmax kept, 6 B per logit),
  // which cannot fit at 49,152 tokens; the reference job assumes the fused kernel that fits and
  // says why (data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml, loss).
  EXPECT_EQ(a.cross_entropy, CrossEntropyImpl::kNative);
  EXPECT_EQ(b.cross_entropy, CrossEntropyImpl::kFused);
  EXPECT_EQ(a.frozen, b.frozen);
  EXPECT_EQ(a.mtp, b.mtp);
  // Provenance: EP from its flag and line; DP derived; the bf16 gradient buffer from the flag
  // that megatron-core honours (accumulate_allreduce_grads_in_fp32 alone is forced back on).
  EXPECT_EQ(SourceOf(r, "parallel.ep"), "--expert_model_parallel_size (line 14)");
  EXPECT_EQ(SourceOf(r, "parallel.dp"), "derived: world 40 / (TP x PP x CP = 1)");
  EXPECT_EQ(SourceOf(r, "precision.grads"), "--grad_reduce_in_bf16 (line 25)");
  EXPECT_EQ(SourceOf(r, "sequence.mean_tokens"), "--set of strata import");
}

TEST(ImportJobTest, WithoutTheGradFlagMegatronKeepsFp32Gradients) {
  // The same command without --grad_reduce_in_bf16: the fp32 default the course first ran with.
  auto text = ReadFile(Golden("course_ms_swift/course_sft.sh"));
  ASSERT_TRUE(text.ok());
  std::string cmd = *text;
  cmd.replace(cmd.find("    --grad_reduce_in_bf16 true \\\n"), 33, "");
  auto r = ImportJob(cmd, "course_fp32.sh", Gpu("H20"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.grad_dtype, DType::kFp32);
  EXPECT_NE(SourceOf(*r, "precision.grads").find("default: megatron-core accumulates"),
            std::string::npos);
}

TEST(ImportJobTest, MegatronDumpRebuildsTheModelMegatronCounted) {
  // sfantao/lumi-ai-workflow-tests rccltest/log-megatron.sh: 28 layers, hidden 3072, FFN 10752
  // SwiGLU, 24 heads (24 query groups), kv_channels 128, RMSNorm, no biases, untied, vocabulary
  // 50257 padded to 50688 (128 x TP 4). The same log prints "number of parameters on (tensor,
  // pipeline) model parallel rank (0, 0): 1035906048".
  const ImportReport r = Import("megatron_log_dump/log-megatron-excerpt.txt", Gpu("MI300X"));
  EXPECT_EQ(r.job.layout.tp, 4);
  EXPECT_EQ(r.job.layout.dp, 1);
  EXPECT_TRUE(r.job.layout.sequence_parallel);
  EXPECT_EQ(r.job.global_batch, 512);
  EXPECT_EQ(r.job.sequence.max_tokens, 2048);
  EXPECT_EQ(r.job.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_EQ(r.job.grad_dtype, DType::kFp32);  // accumulate_allreduce_grads_in_fp32 True
  EXPECT_EQ(r.job.cross_entropy, CrossEntropyImpl::kNative);
  ASSERT_FALSE(r.model_json.empty());
  auto config = ParseMegatronModel(nlohmann::json::parse(r.model_json), "model.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->vocab_size, 50'688);
  const ParamBreakdown p = CountParams(*config);
  // Per layer 4 x 3072^2 + 3 x 3072 x 10752 + 2 x 3072 = 136,845,312; x 28 + 2 x 50688 x 3072
  // + 3072 = 4,143,098,880.
  EXPECT_EQ(p.text_total(), 4'143'098'880);
  // TP 4 splits every matrix (the embedding and head by vocabulary rows) and keeps the norms.
  const int64_t norms = p.text[ModuleKind::kNorms];
  EXPECT_EQ((p.text_total() - norms) / 4 + norms, 1'035'906'048);
}

TEST(ImportJobTest, MegatronExampleScriptWithBashArrays) {
  // NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh: torchrun
  // --nproc_per_node $GPUS_PER_NODE (8) --nnodes $NUM_NODES (1), TP 2, PP 2 -> DP 2; --fp16.
  const ImportReport r =
      Import("megatron_gpt3_script/train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  EXPECT_EQ(r.job.cluster.gpus_per_node, 8);
  EXPECT_EQ(r.job.cluster.nodes, 1);
  EXPECT_EQ(r.job.layout.tp, 2);
  EXPECT_EQ(r.job.layout.pp, 2);
  EXPECT_EQ(r.job.layout.dp, 2);
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_EQ(r.job.global_batch, 64);
  EXPECT_EQ(r.job.param_dtype, DType::kFp16);
  EXPECT_FALSE(r.job.optimizer.distributed);  // no --use-distributed-optimizer
  EXPECT_EQ(SourceOf(r, "parallel.tp"), "--tensor-model-parallel-size (line 48)");
  auto config = ParseMegatronModel(nlohmann::json::parse(r.model_json), "model.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  // Megatron defaults: LayerNorm with bias, biases on every linear, GELU 4h, learned positions
  // (512), tied head; GPT-2 BPE 50257 padded to 50432 (128 x TP 2). Per layer: norms 1024,
  // qkv 256x768 + 768, proj 256^2 + 256, fc1 256x1024 + 1024, fc2 1024x256 + 256 = 789,760;
  // x 8 + 50432 x 256 + 512 x 256 + final norm 512 = 19,360,256.
  EXPECT_EQ(config->vocab_size, 50'432);
  EXPECT_EQ(CountParams(*config).text_total(), 19'360'256);
}

// A Megatron-LM command that spells out Llama-3.1-8B (32 layers, hidden 4096, FFN 14336, 32
// heads, 8 query groups: meta-llama/Llama-3.1-8B config.json num_hidden_layers 32, hidden_size
// 4096, intermediate_size 14336, num_attention_heads 32, num_key_value_heads 8) but takes its
// vocabulary from a HF tokenizer, so --model is needed. --model llama-3.1-8b agrees with every
// argument and is taken; --model llama-3.1-70b (80 layers, hidden 8192, FFN 28672, 64 heads,
// 8 KV heads: meta-llama/Llama-3.1-70B config.json) contradicts four of them and is refused,
// naming both values and the line of the argument, instead of silently replacing the script's
// model.
TEST(ImportJobTest, MegatronArgumentsContradictingModelAreRefused) {
  const std::string script =
      "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py \\\n"
      "    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \\\n"
      "    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \\\n"
      "    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \\\n"
      "    --seq-length 8192 --max-position-embeddings 8192 \\\n"
      "    --micro-batch-size 1 --global-batch-size 128 --bf16 --swiglu \\\n"
      "    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B\n";
  ImportOptions o = Gpu("H100 SXM");
  o.model = "llama-3.1-8b";
  auto agreed = ImportJob(script, "train.sh", o);
  ASSERT_TRUE(agreed.ok()) << agreed.error().Format();
  EXPECT_EQ(agreed->job.model, "llama-3.1-8b");
  o.model = "llama-3.1-70b";
  auto refused = ImportJob(script, "train.sh", o);
  ASSERT_FALSE(refused.ok());
  const std::string& m = refused.error().message;
  EXPECT_NE(m.find("layers: 32 in the command (--num-layers (line 3)), 80 in --model "
                   "llama-3.1-70b"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("hidden size: 4096 in the command"), std::string::npos) << m;
  EXPECT_NE(m.find("FFN hidden size: 14336 in the command (--ffn-hidden-size (line 3)), 28672"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("attention heads: 32 in the command (--num-attention-heads (line 4)), 64"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("KV heads"), std::string::npos) << m;  // 8 = 8
}

// A launch over several nodes imported with --gpu alone: the job is written, but `strata step`
// refuses it ("the job spans 2 nodes but its cluster describes no data NICs"). The import says
// so at once; with --cluster, or on one node, it does not.
TEST(ImportJobTest, AMultiNodeJobWithoutAClusterIsToldItNeedsOne) {
  const std::string cmd =
      "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
      "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 16 --bf16 "
      "--vocab-size 32000\n";
  auto count = [&](const ImportOptions& o, const std::string& launch) {
    auto r = ImportJob(launch, "train.sh", o);
    EXPECT_TRUE(r.ok()) << r.error().Format();
    if (!r.ok()) return -1;
    int n = 0;
    for (const std::string& note : r->notes) n += note.find("names no cluster") != note.npos;
    return n;
  };
  EXPECT_EQ(count(Gpu("H100"), cmd), 1);
  ImportOptions with_cluster = Gpu("H100");
  with_cluster.cluster = "h100-8x8-ib400";
  EXPECT_EQ(count(with_cluster, cmd), 0);
  std::string one_node = cmd;
  one_node.replace(one_node.find("--nnodes 2"), 10, "--nnodes 1");
  EXPECT_EQ(count(Gpu("H100"), one_node), 0);
}

// ms-swift's own MoE examples give TP and EP and no ETP (modelscope/ms-swift@3602360
// examples/models/qwen3_next/mcore.sh: TP2 EP4 with LoRA and sequence parallelism). ms-swift
// defaults ETP to 1 since 3.9.0.dev0 (9f5fcf5c3, megatron_args.py: expert_tensor_parallel_size: int
// = 1); the import took megatron-core's default, TP = 2, which split each expert by 2 more than the
// run does and made every view refuse the LoRA job ("mcore-bridge's LoRA refuses expert tensor
// parallelism"). A Megatron-LM launch keeps megatron-core's default.
TEST(ImportJobTest, MsSwiftDefaultsExpertTensorParallelismToOne) {
  ImportOptions o = Gpu("H100");
  o.gpus_per_node = 8;
  const std::string swift =
      "megatron sft --model Qwen/Qwen3-30B-A3B --tuner_type lora --target_modules all-linear "
      "--tensor_model_parallel_size 2 --expert_model_parallel_size 4 --micro_batch_size 1 "
      "--global_batch_size 4 --max_length 8192 --packing true --sequence_parallel true\n";
  auto r = ImportJob(swift, "mcore.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(testing::Field(*r, "parallel.etp"), "1");
  EXPECT_NE(SourceOf(*r, "parallel.etp")
                .find("ms-swift's expert_tensor_parallel_size defaults "
                      "to 1"),
            std::string::npos)
      << SourceOf(*r, "parallel.etp");
  // Given, it is the launch's.
  auto given = ImportJob(swift.substr(0, swift.size() - 1) + " --expert_tensor_parallel_size 2\n",
                         "mcore.sh", o);
  ASSERT_TRUE(given.ok()) << given.error().Format();
  EXPECT_EQ(testing::Field(*given, "parallel.etp"), "2");
  EXPECT_EQ(SourceOf(*given, "parallel.etp"), "--expert_tensor_parallel_size (line 1)");
}

// --optimizer_offload_fraction is read as a number (Settings::Number): 1.00 and 1e0 are all of
// the states (no note), 0.5 is noted, a word is refused naming the key and its line. Before, any
// text but "1" and "1.0" was noted as a part offloaded (1.00 and 1e0 among them) and a word was
// noted as a fraction.
TEST(ImportJobTest, TheOptimizerOffloadFractionIsANumber) {
  ImportOptions o = Gpu("H100");
  o.gpus_per_node = 8;
  const std::string base =
      "megatron sft --model Qwen/Qwen3-32B --tensor_model_parallel_size 8 --micro_batch_size 1 "
      "--global_batch_size 8 --max_length 4096 --optimizer_cpu_offload true "
      "--optimizer_offload_fraction ";
  auto fraction_notes = [&](const std::string& fraction) {
    auto r = ImportJob(base + fraction + "\n", "train.sh", o);
    EXPECT_TRUE(r.ok()) << fraction << ": " << r.error().Format();
    if (!r.ok()) return -1;
    EXPECT_EQ(SourceOf(*r, "sharding.offload_optimizer"), "--optimizer_cpu_offload (line 1)");
    int n = 0;
    for (const std::string& note : r->notes) n += note.find("only that fraction") != note.npos;
    return n;
  };
  EXPECT_EQ(fraction_notes("1.00"), 0);
  EXPECT_EQ(fraction_notes("1e0"), 0);
  EXPECT_EQ(fraction_notes("0.5"), 1);
  EXPECT_EQ(fraction_notes(".5"), 1);
  auto bad = ImportJob(base + "half\n", "train.sh", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "optimizer_offload_fraction");
  EXPECT_EQ(bad.error().message, "expected a number, got 'half'");
  EXPECT_EQ(bad.error().hint, "read from --optimizer_offload_fraction (line 1)");
}

// Only Transformer Engine's implementation of the fused loss writes the gradient over the bf16
// logits (megatron-core's --cross-entropy-fusion-impl te); the flag alone, or with native, keeps
// the fp32 softmax.
TEST(ImportJobTest, TheFusedLossFollowsItsImplementation) {
  ImportOptions o = Gpu("H100");
  o.gpus_per_node = 8;
  const std::string base =
      "megatron sft --model Qwen/Qwen3-32B --tensor_model_parallel_size 8 --sequence_parallel "
      "true --micro_batch_size 1 --global_batch_size 8 --max_length 4096";
  struct Case {
    const char* flags;
    CrossEntropyImpl expected;
  };
  for (const Case& c : {Case{"", CrossEntropyImpl::kNative},
                        Case{" --cross_entropy_loss_fusion true", CrossEntropyImpl::kNative},
                        Case{" --cross_entropy_loss_fusion true --cross_entropy_fusion_impl native",
                             CrossEntropyImpl::kNative},
                        Case{" --cross_entropy_loss_fusion true --cross_entropy_fusion_impl te",
                             CrossEntropyImpl::kFused},
                        Case{" --cross_entropy_loss_fusion false --cross_entropy_fusion_impl te",
                             CrossEntropyImpl::kNative}}) {
    auto r = ImportJob(base + c.flags + "\n", "train.sh", o);
    ASSERT_TRUE(r.ok()) << c.flags << ": " << r.error().Format();
    EXPECT_EQ(r->job.cross_entropy, c.expected) << c.flags;
  }
  // A load-balancing coefficient that is not a number (or is negative, or infinite) is refused,
  // naming it and its line. Before Settings::Numbers, 'inf' was imported as an infinite
  // coefficient.
  for (const char* coeff : {"abc", "-0.1", "0.01 x", "1e-", "inf"}) {
    auto r = ImportJob(base + " --moe_aux_loss_coeff " + coeff + "\n", "train.sh", o);
    ASSERT_FALSE(r.ok()) << coeff;
    EXPECT_NE(r.error().Format().find("moe_aux_loss_coeff"), std::string::npos)
        << r.error().Format();
    EXPECT_NE(r.error().Format().find("(line 1)"), std::string::npos) << r.error().Format();
  }
  // What megatron's type=float (Python's float()) reads is read: '+1e-3' and '1_0e-4' were
  // refused as not numbers. The largest of a list is the coefficient (0.5 of 1e-3 and .5).
  for (const auto& [coeff, expected] : {std::pair<const char*, double>{"+1e-3", 1e-3},
                                        std::pair<const char*, double>{"1_0e-4", 1e-3},
                                        std::pair<const char*, double>{"1e-3 .5", 0.5}}) {
    auto r = ImportJob(base + " --moe_aux_loss_coeff " + coeff + "\n", "train.sh", o);
    ASSERT_TRUE(r.ok()) << coeff << ": " << r.error().Format();
    EXPECT_DOUBLE_EQ(r->job.moe_aux_loss_coeff, expected) << coeff;
  }
  // Megatron's argument takes only native or te: another word stops the launch, and was imported
  // as the native implementation without a word.
  auto bad = ImportJob(
      base + " --cross_entropy_loss_fusion true --cross_entropy_fusion_impl transformer_engine\n",
      "train.sh", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("expected native or te"), std::string::npos)
      << bad.error().Format();
}

TEST(ImportJobTest, MsSwiftMoeExample) {
  // modelscope/ms-swift examples/megatron/moe/qwen3_moe.sh on 2 nodes x 8 A800 (MS-02).
  ImportOptions o = Gpu("A800");
  o.nodes = 2;
  o.gpus_per_node = 8;
  const ImportReport r = Import("ms_swift_qwen3_moe/qwen3_moe.sh", o);
  EXPECT_EQ(r.job.model, "qwen3-30b-a3b");  // --load Qwen3-30B-A3B-Base-mcore
  EXPECT_EQ(r.job.layout.pp, 2);
  EXPECT_EQ(r.job.layout.ep, 8);
  EXPECT_EQ(r.job.layout.dp, 8);  // 16 / (TP 1 x PP 2 x CP 1)
  // --sequence_parallel true at TP 1: Megatron's validate_args turns it off ("Disabling
  // sequence parallelism because tensor model parallelism is disabled").
  EXPECT_FALSE(r.job.layout.sequence_parallel);
  EXPECT_EQ(r.job.global_batch, 16);
  EXPECT_TRUE(r.job.sequence.packing);
  EXPECT_EQ(r.job.recompute.granularity, RecomputeGranularity::kFull);
  // --cross_entropy_loss_fusion true with cross_entropy_fusion_impl at its default, native:
  // megatron-core's jit-fused copy of _VocabParallelCrossEntropy, which still upcasts the
  // logits and saves their fp32 softmax (fusions/fused_cross_entropy.py, calculate_logits_max
  // -> `.float()`; save_for_backward(exp_logits, ...)): 6 B per logit, priced as native. It
  // was imported as fused (2 B), 4 B per logit too few.
  EXPECT_EQ(r.job.cross_entropy, CrossEntropyImpl::kNative);
  // --moe_aux_loss_coeff 1e-3 (line 19): a load-balancing loss, one more group under TP x CP > 1.
  EXPECT_DOUBLE_EQ(r.job.moe_aux_loss_coeff, 1e-3);
  EXPECT_EQ(SourceOf(r, "moe.aux_loss_coeff"), "--moe_aux_loss_coeff (line 19)");
  EXPECT_TRUE(r.job.optimizer.distributed);  // ms-swift's default
  EXPECT_TRUE(r.job.frozen.empty());         // no vision tower
  // The script's first line: PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'.
  EXPECT_TRUE(r.job.framework.expandable_segments);
  EXPECT_EQ(testing::SourceOf(r, "framework.expandable_segments"),
            "environment PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
}

// A command without PYTORCH_CUDA_ALLOC_CONF keeps the allocator's default (off): the course's.
TEST(ImportJobTest, NoAllocatorConfMeansPlainSegments) {
  ImportOptions o = Gpu("H20");
  o.overrides = {"sequence.mean_tokens=29000"};
  const ImportReport r = Import("course_ms_swift/course_sft.sh", o);
  EXPECT_FALSE(r.job.framework.expandable_segments);
  EXPECT_EQ(testing::SourceOf(r, "framework.expandable_segments"), "(not set)");
}

TEST(ImportJobTest, TorchtitanToml) {
  // pytorch/torchtitan llama3_8b.toml, "a preset for 64 A100 GPUs": data_parallel_shard_degree
  // -1 takes the rest of the world: DP 64; batch_size 1 per rank, no accumulation: global 64.
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  const ImportReport r = Import("torchtitan_llama3_8b/llama3_8b.toml", o);
  EXPECT_EQ(r.job.model, "llama-3.1-8b");
  EXPECT_EQ(r.job.layout.dp, 64);
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_EQ(r.job.global_batch, 64);
  EXPECT_EQ(r.job.sequence.max_tokens, 8192);
  EXPECT_EQ(r.job.recompute.granularity, RecomputeGranularity::kSelective);
  // selective_ac_option = "op" (line 57): torchtitan's per-op policy, not megatron's modules.
  EXPECT_TRUE(r.job.recompute.titan.op);
  EXPECT_EQ(SourceOf(r, "recompute.selective_ac_option"),
            "llama3_8b.toml:57: activation_checkpoint.selective_ac_option");
  EXPECT_EQ(r.job.grad_dtype, DType::kFp32);  // FSDP2 reduce dtype float32
  EXPECT_EQ(SourceOf(r, "sequence.max_tokens"), "llama3_8b.toml:34: training.seq_len");
}

// torchtitan's full bf16 training: `training.dtype = "bfloat16"` "will put all parameters,
// gradients, and optimizer states in bfloat16, without an extra copy of fp32 weights"
// (pytorch/torchtitan@6404b932421f5ce382e7dac5ad381b2c17b1373c: torchtitan/config/job_config.py,
// Training.dtype): the model is built in bf16, so FSDP2's sharded parameters and AdamW's
// zeros_like(p) moments are bf16. Llama-3.1-8B (8,030,261,248 parameters) on FSDP 8: sharded
// parameters 4 -> 2 B a parameter (4.02 -> 2.01 GB), moments 8 -> 4 B (8.03 -> 4.02 GB), no fp32
// gradient shard for the step. The preset's mixed_precision_reduce = "bfloat16" (line 23) is the
// file's, not a default; early_step_in_backward (line 41) is named in the notes. Before: dtype
// and early_step_in_backward were listed as unused, the job kept fp32 master weights and moments,
// and the reduce dtype's source said "default".
TEST(ImportJobTest, TorchtitanFullBf16TrainingKeepsNoFp32Copy) {
  ImportOptions o = Gpu("H200");
  o.nodes = 1;
  o.gpus_per_node = 8;
  const ImportReport r = Import("torchtitan_llama3_8b_32k_bf16/llama3_8b-8xb200-32k.toml", o);
  EXPECT_EQ(r.job.layout.dp, 8);
  EXPECT_EQ(r.job.param_dtype, DType::kBf16);
  EXPECT_EQ(r.job.grad_dtype, DType::kBf16);
  EXPECT_EQ(r.job.optimizer.master_dtype, DType::kBf16);
  EXPECT_EQ(r.job.optimizer.moment_dtype, DType::kBf16);
  EXPECT_NE(SourceOf(r, "optimizer.moments").find("llama3_8b-8xb200-32k.toml:22: training.dtype"),
            std::string::npos)
      << SourceOf(r, "optimizer.moments");
  EXPECT_EQ(r.yaml.find("training.dtype = bfloat16"), std::string::npos) << r.yaml;
  EXPECT_NE(r.yaml.find("optimizer.early_step_in_backward = true (llama3_8b-8xb200-32k.toml:41"),
            std::string::npos)
      << r.yaml;
  // Without training.dtype (torchtitan's default float32) the reduce dtype is the file's line.
  auto text = ReadFile(Golden("torchtitan_llama3_8b_32k_bf16/llama3_8b-8xb200-32k.toml"));
  ASSERT_TRUE(text.ok());
  std::string mixed = *text;
  const std::string dtype_line = "dtype = \"bfloat16\"\n";
  const size_t at = mixed.find(dtype_line);
  ASSERT_NE(at, std::string::npos);
  mixed.erase(at, dtype_line.size());
  auto m = ImportJob(mixed, "llama3_8b-8xb200-32k.toml", o);
  ASSERT_TRUE(m.ok()) << m.error().Format();
  EXPECT_EQ(m->job.optimizer.master_dtype, DType::kFp32);
  EXPECT_EQ(m->job.optimizer.moment_dtype, DType::kFp32);
  EXPECT_EQ(m->job.grad_dtype, DType::kBf16);
  EXPECT_EQ(SourceOf(*m, "precision.grads"),
            "llama3_8b-8xb200-32k.toml:22: training.mixed_precision_reduce");
}

// ms-swift fills a missing --gradient_accumulation_steps for a total batch of 16:
// max(1, ceil(16 / per_device_train_batch_size / world_size))
// (modelscope/ms-swift@7b709960f24895212b7df92976d42b7baa633fa0:swift/trainers/arguments.py,
// TrainArgumentsMixin.__post_init__), and its per_device_train_batch_size defaults to 1 (the same
// class). By hand: 4 GPUs, micro 1: ceil(16 / 1 / 4) = 4, global 1 x 4 x 4 = 16; 8 GPUs:
// ceil(16 / 8) = 2, global 16; micro 3 on 4 GPUs: ceil(16 / 3 / 4) = ceil(1.33) = 2, global
// 3 x 2 x 4 = 24; 32 GPUs (4 nodes of 8): max(1, ceil(0.5)) = 1, global 32. Before: accumulation
// was TrainingArguments' 1 (global 4 on 4 GPUs) and the missing micro batch HF's 8.
TEST(ImportJobTest, SwiftSftFillsAccumulationForATotalBatchOf16) {
  struct Case {
    const char* env;
    const char* batch;  // the --per_device_train_batch_size argument, "" for none
    int64_t nodes;
    int64_t micro, global;
  };
  for (const Case& c : {Case{"NPROC_PER_NODE=4", " --per_device_train_batch_size 1", 1, 1, 16},
                        Case{"NPROC_PER_NODE=4", "", 1, 1, 16},
                        Case{"NPROC_PER_NODE=8", " --per_device_train_batch_size 1", 1, 1, 16},
                        Case{"NPROC_PER_NODE=4", " --per_device_train_batch_size 3", 1, 3, 24},
                        Case{"NNODES=4 NPROC_PER_NODE=8", "", 4, 1, 32}}) {
    const std::string script = fmt::format(
        "{} swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type full{} --max_length 2048 "
        "--deepspeed zero3\n",
        c.env, c.batch);
    ImportOptions o = Gpu("H100");
    o.model = "qwen2.5-math-7b";
    if (c.nodes > 1) {  // several nodes need a network: the shipped cluster's
      o.gpu = "";
      o.cluster = "h100-8x8-ib400";
    }
    auto r = ImportJob(script, "train.sh", o);
    ASSERT_TRUE(r.ok()) << script << r.error().Format();
    EXPECT_EQ(r->job.micro_batch, c.micro) << script;
    EXPECT_EQ(r->job.global_batch, c.global) << script;
    EXPECT_NE(SourceOf(*r, "batch.global_batch").find("ms-swift's default"), std::string::npos)
        << SourceOf(*r, "batch.global_batch");
  }
}

TEST(ImportJobTest, SwiftDeepSpeedPreset) {
  // ms-swift examples/megatron/benchmark/deepspeed.sh: NPROC_PER_NODE=8, per-device batch 1,
  // accumulation 2 -> global 16; --deepspeed zero2 shards the optimizer states.
  ImportOptions o = Gpu("A800");
  o.model = Golden("swift_deepspeed_zero2/qwen2.5-14b.json");
  const ImportReport r = Import("swift_deepspeed_zero2/deepspeed.sh", o);
  EXPECT_EQ(r.job.layout.dp, 8);
  EXPECT_EQ(r.job.global_batch, 16);
  EXPECT_EQ(r.job.param_dtype, DType::kBf16);
  EXPECT_TRUE(r.job.optimizer.distributed);
  EXPECT_TRUE(r.job.sequence.packing);
  EXPECT_EQ(r.job.sequence.max_tokens, 8192);
}

// ms-swift's presets set DeepSpeed's overlap_comm false since 3.2.2 (modelscope/ms-swift@e5c4c39,
// "compat transformers 4.50"); at 3602360a56 swift/config/zero2.json:23 and zero3.json:25 read
//         "overlap_comm": false,
// and so do zero0/zero1/zero2_offload/zero3_offload.json. ms-swift 2.x's spellings
// (default-zero2, default-zero3, zero2-offload, zero3-offload) named swift/llm/ds_config/*.json,
// whose line 41 (zero2) / 43 (zero3) read `"overlap_comm": true,` (modelscope/ms-swift@054575c).
// Before: every preset was imported with overlap_comm true.
TEST(ImportJobTest, SwiftDeepSpeedPresetOverlapCommAsThePresetSays) {
  struct Case {
    const char* preset;
    bool overlap_comm;
  };
  for (const Case& c : {Case{"zero2", false}, Case{"zero3", false}, Case{"zero2_offload", false},
                        Case{"zero3_offload", false}, Case{"default-zero2", true},
                        Case{"default-zero3", true}, Case{"zero3-offload", true}}) {
    const std::string script = fmt::format(
        "NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type full "
        "--per_device_train_batch_size 1 --max_length 2048 --deepspeed {}\n",
        c.preset);
    ImportOptions o = Gpu("H100");
    o.model = "qwen2.5-math-7b";
    auto r = ImportJob(script, "train.sh", o);
    ASSERT_TRUE(r.ok()) << script << r.error().Format();
    EXPECT_EQ(r->job.sharding.overlap_comm, c.overlap_comm) << c.preset;
    EXPECT_NE(SourceOf(*r, "sharding.overlap_comm").find(c.overlap_comm ? "true" : "false"),
              std::string::npos)
        << c.preset << ": " << SourceOf(*r, "sharding.overlap_comm");
  }
}

TEST(ImportJobTest, VerlMegatronActor) {
  // volcengine/verl examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh: 1 node x 8 H20,
  // actor TP 1 EP 8, 128 prompts x 16 responses per optimizer step, prompt 2048 + response 8192.
  // use_dynamic_bsz with a budget of 10,240 tokens, one sample: 2,048 / DP 8 = 256 samples a
  // rank packed into min(256, ceil(256 x 10,240 / 10,240)) = 256 micro batches of one sample,
  // 256 x 8 = 2,048 packed rows of 10,240 tokens (its ppo_micro_batch_size_per_gpu 2 is not
  // used, as in verl).
  const ImportReport r =
      Import("verl_qwen3moe_megatron/run_qwen3moe-30b_megatron_96gb.sh", Gpu("H20"));
  EXPECT_EQ(r.job.model, "qwen3-30b-a3b");
  EXPECT_EQ(r.job.cluster.nodes, 1);
  EXPECT_EQ(r.job.cluster.gpus_per_node, 8);
  EXPECT_EQ(r.job.layout.ep, 8);
  EXPECT_EQ(r.job.layout.dp, 8);
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_EQ(r.job.global_batch, 2048);
  EXPECT_TRUE(r.job.sequence.packing);
  EXPECT_EQ(r.job.sequence.max_tokens, 10240);
}

// The framework that ran the input becomes the job's framework profile (data/frameworks.yaml);
// none of these inputs states the framework's release, so the job leaves it to the default.
TEST(ImportJobTest, FrameworkFromTheInput) {
  struct Case {
    const char* file;
    const char* framework;
    ImportOptions options;
  };
  auto with = [](const char* gpu, int64_t nodes, int64_t per_node, std::string model,
                 std::vector<std::string> sets = {}) {
    ImportOptions o = Gpu(gpu);
    o.nodes = nodes;
    o.gpus_per_node = per_node;
    o.model = std::move(model);
    o.overrides = std::move(sets);
    return o;
  };
  const Case cases[] = {
      {"torchtitan_llama3_8b/llama3_8b.toml", "torchtitan", with("A100 80GB", 8, 8, "")},
      {"megatron_gpt3_script/train_gpt3_175b_distributed.sh", "megatron-core", Gpu("H100 SXM")},
      {"ms_swift_qwen3_moe/qwen3_moe.sh", "ms-swift", with("A800", 2, 8, "")},
      {"swift_deepspeed_zero2/deepspeed.sh", "ms-swift",
       with("A800", 0, 0, Golden("swift_deepspeed_zero2/qwen2.5-14b.json"))},
      {"hf_deepspeed_zero3_offload/train_sft.sh", "hf-trainer",
       with("A100 80GB", 1, 2, "qwen3-30b-a3b", {"sequence.max_tokens=2048"})},
      {"verl_qwen3moe_megatron/run_qwen3moe-30b_megatron_96gb.sh", "verl", Gpu("H20")},
  };
  for (const Case& c : cases) {
    const ImportReport r = Import(c.file, c.options);
    EXPECT_EQ(r.job.framework.name, c.framework) << c.file;
    EXPECT_TRUE(r.job.framework.given) << c.file;
    EXPECT_TRUE(r.job.framework.version.empty()) << c.file;
  }
  // torchtitan's [training] compile = false (line 37) is carried, with its line.
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  const ImportReport titan = Import("torchtitan_llama3_8b/llama3_8b.toml", o);
  EXPECT_FALSE(titan.job.framework.compile);
  EXPECT_EQ(SourceOf(titan, "framework.compile"), "llama3_8b.toml:37: training.compile");
}

struct BadCase {
  const char* file;
  const char* expected_fragment;
};

TEST(ImportJobTest, MalformedInputsFailClearly) {
  const BadCase kCases[] = {
      {"truncated_dump/log.txt", "truncated: no 'end of arguments' line"},
      {"malformed_toml/llama3_8b.toml", "malformed TOML"},
      {"unterminated_quote/run.sh", "unterminated single quote"},
      {"empty_file/run.sh", "the file is empty"},
      {"not_a_launch/run.sh", "no training launch recognised"},
  };
  for (const auto& c : kCases) {
    const testing::CaseInput input = testing::ImportInput(c.file);
    ASSERT_NE(input.path(), "") << c.file;
    auto r = ImportJobFile(input.path(), Gpu("H20"));
    ASSERT_FALSE(r.ok()) << c.file;
    EXPECT_NE(r.error().Format().find(c.expected_fragment), std::string::npos)
        << c.file << ": " << r.error().Format();
    EXPECT_NE(r.error().Format().find(c.file), std::string::npos) << r.error().Format();
  }
  // No GPU: the command cannot say, so the user is asked, never guessed for.
  const testing::CaseInput course = testing::ImportInput("missing_gpu/course_sft.sh");
  auto no_gpu = ImportJobFile(course.path(), ImportOptions{});
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_NE(no_gpu.error().Format().find("--gpu"), std::string::npos);
  // NNODES=$WORLD_SIZE is set by the launcher at run time: ask for --nodes.
  ImportOptions o = Gpu("A800");
  o.gpus_per_node = 8;
  const testing::CaseInput moe = testing::ImportInput("ms_swift_unresolved_nodes/qwen3_moe.sh");
  auto unresolved = ImportJobFile(moe.path(), o);
  ASSERT_FALSE(unresolved.ok());
  EXPECT_NE(unresolved.error().Format().find("NNODES=$WORLD_SIZE"), std::string::npos)
      << unresolved.error().Format();
}

}  // namespace
}  // namespace strata::import_job_test

namespace strata::import_job_test {
namespace {

// Megatron-LM's GPT-3 example with the activation-offload flags as NVIDIA's benchmark scripts
// pass them ("--cpu-offloading --cpu-offloading-num-layers ${MP_AC_LAYERS}") and PP 1, which
// megatron-core requires for offloading.
TEST(ImportJobTest, MegatronCpuOffloadingBecomesActivationOffload) {
  auto text = ReadFile(Golden("megatron_gpt3_script/train_gpt3_175b_distributed.sh"));
  ASSERT_TRUE(text.ok());
  std::string script = *text;
  const std::string pp = "--pipeline-model-parallel-size 2";
  const size_t at = script.find(pp);
  ASSERT_NE(at, std::string::npos);
  script.replace(at, pp.size(),
                 "--pipeline-model-parallel-size 1\n    --cpu-offloading\n"
                 "    --cpu-offloading-num-layers 4");
  auto r = ImportJob(script, "train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.activation_offload.num_layers, 4);
  EXPECT_NE(SourceOf(*r, "activation_offload.num_layers").find("--cpu-offloading-num-layers"),
            std::string::npos)
      << SourceOf(*r, "activation_offload.num_layers");
  // Without --cpu-offloading the layer count alone offloads nothing, and the report says so.
  const size_t flag = script.find("--cpu-offloading\n");
  script.erase(flag, std::string("--cpu-offloading\n").size());
  auto off = ImportJob(script, "train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_EQ(off->job.activation_offload.num_layers, 0);
  bool noted = false;
  for (const std::string& n : off->notes)
    noted = noted || n.find("not imported") != std::string::npos;
  EXPECT_TRUE(noted);
}

// ZeRO-3's prefetch on TigerBot's HF Trainer + DeepSpeed launch (ds_config_zero3.json sets
// stage3_prefetch_bucket_size "auto"): for Qwen3-30B-A3B the HF Trainer fills 0.9 x 2048^2 =
// 3,774,873 parameters, against an MoE block fetched whole of 128 x 3 x 2048 x 768 routed
// experts + 128 x 2048 router = 604,241,920: 0.006247 of a layer. For a dense model (the golden's
// Llama-3.1-8B) the default one layer stays, and the report says why.
TEST(ImportJobTest, DeepSpeedZero3PrefetchBucketAsAFractionOfAnMoeBlock) {
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 1;
  o.gpus_per_node = 2;
  o.overrides = {"sequence.max_tokens=2048"};
  o.model = "qwen3-30b-a3b";
  const ImportReport moe = Import("hf_deepspeed_zero3_offload/train_sft.sh", o);
  EXPECT_EQ(moe.job.sharding.mode, ShardingMode::kZero3);
  EXPECT_NEAR(moe.job.sharding.prefetch_layers, 3'774'873.0 / 604'241'920.0, 5e-7);
  EXPECT_NE(SourceOf(moe, "sharding.prefetch_layers").find("0.9 x hidden^2"), std::string::npos)
      << SourceOf(moe, "sharding.prefetch_layers");
  o.model = "llama-3.1-8b";
  const ImportReport dense = Import("hf_deepspeed_zero3_offload/train_sft.sh", o);
  EXPECT_EQ(dense.job.sharding.prefetch_layers, 1.0);
  // A bucket that is neither a number nor "auto" is an error naming the key.
  auto config = ReadFile(Golden("hf_deepspeed_zero3_offload/ds_config/ds_config_zero3.json"));
  ASSERT_TRUE(config.ok());
  std::string bad = *config;
  const std::string key = "\"stage3_prefetch_bucket_size\": \"auto\"";
  ASSERT_NE(bad.find(key), std::string::npos);
  bad.replace(bad.find(key), key.size(), "\"stage3_prefetch_bucket_size\": \"lots\"");
  o.model = "qwen3-30b-a3b";
  auto r = ImportJob(bad, "ds_config_zero3.json", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("stage3_prefetch_bucket_size"), std::string::npos)
      << r.error().Format();
  EXPECT_NE(r.error().Format().find("'lots'"), std::string::npos) << r.error().Format();
  // Read as Python's (and JSON's) number literal: strtod's hex float (0x1p20 = 1,048,576), inf
  // and leading spaces are refused with the key and its source. Before: 0x1p20 and " 5e7" were
  // read as numbers of parameters.
  for (const char* value : {"0x1p20", " 5e7", "inf"}) {
    std::string odd = *config;
    odd.replace(odd.find(key), key.size(),
                fmt::format("\"stage3_prefetch_bucket_size\": \"{}\"", value));
    auto e = ImportJob(odd, "ds_config_zero3.json", o);
    ASSERT_FALSE(e.ok()) << value;
    EXPECT_EQ(e.error().field, "ds.zero_optimization.stage3_prefetch_bucket_size") << value;
    EXPECT_NE(e.error().message.find(fmt::format("'{}'", value)), std::string::npos)
        << e.error().Format();
  }
}

// ZeRO-2's reduce buckets from a DeepSpeed JSON (DeepSpeed's own defaults written out:
// reduce_bucket_size 5e8, overlap_comm and contiguous_gradients true): the import used to list
// reduce_bucket_size and overlap_comm as "read but not used". "auto" is what the HF Trainer
// fills with hidden^2 (Llama-3.1-8B: 4,096^2 = 16,777,216); contiguous_gradients false
// allocates no bucket.
TEST(ImportJobTest, DeepSpeedZero2ReduceBuckets) {
  ImportOptions o = Gpu("H100 SXM");
  o.nodes = 1;
  o.gpus_per_node = 8;
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=4096"};
  const std::string config =
      "{\"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 1,\n"
      " \"bf16\": {\"enabled\": true},\n"
      " \"zero_optimization\": {\"stage\": 2, \"allgather_partitions\": true,\n"
      "   \"allgather_bucket_size\": 500000000, \"overlap_comm\": true,\n"
      "   \"reduce_scatter\": true, \"reduce_bucket_size\": 500000000,\n"
      "   \"contiguous_gradients\": true},\n"
      " \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": 1e-5}}}\n";
  auto r = ImportJob(config, "ds-z2.json", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.mode, ShardingMode::kZero2);
  EXPECT_DOUBLE_EQ(r->job.sharding.reduce_bucket_elements, 5e8);
  EXPECT_TRUE(r->job.sharding.overlap_comm);
  std::string hf = config;
  hf.replace(hf.find("\"reduce_bucket_size\": 500000000"),
             std::string("\"reduce_bucket_size\": 500000000").size(),
             "\"reduce_bucket_size\": \"auto\"");
  auto a = ImportJob(hf, "ds-z2.json", o);
  ASSERT_TRUE(a.ok()) << a.error().Format();
  EXPECT_DOUBLE_EQ(a->job.sharding.reduce_bucket_elements, 16777216.0);
  std::string loose = config;
  loose.replace(loose.find("\"contiguous_gradients\": true"),
                std::string("\"contiguous_gradients\": true").size(),
                "\"contiguous_gradients\": false");
  auto c = ImportJob(loose, "ds-z2.json", o);
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_DOUBLE_EQ(c->job.sharding.reduce_bucket_elements, 0.0);
  // ZeRO-3 reads the same key (stage3.py allocates its one bucket of reduce_bucket_size at the
  // engine's start): before, the import refused to carry it under stage 3.
  std::string z3 = config;
  z3.replace(z3.find("\"stage\": 2"), std::string("\"stage\": 2").size(), "\"stage\": 3");
  z3.replace(z3.find("\"reduce_bucket_size\": 500000000"),
             std::string("\"reduce_bucket_size\": 500000000").size(),
             "\"reduce_bucket_size\": 200000000");
  auto d = ImportJob(z3, "ds-z3.json", o);
  ASSERT_TRUE(d.ok()) << d.error().Format();
  EXPECT_EQ(d->job.sharding.mode, ShardingMode::kZero3);
  EXPECT_TRUE(d->job.sharding.reduce_bucket_elements_given);
  EXPECT_DOUBLE_EQ(d->job.sharding.reduce_bucket_elements, 2e8);
}

// Megatron's uneven pipelines on the GPT-3 175B script (96 layers, PP 2): the last stage's layer
// count is read (49 + 47), and the account-for-embedding/loss switches give (96 + 2) / 2 = 49
// slots a stage, one of each end stage's taken by the embedding or the loss: 48 + 48.
TEST(ImportJobTest, MegatronUnevenPipelineArguments) {
  auto text = ReadFile(Golden("megatron_gpt3_script/train_gpt3_175b_distributed.sh"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "--pipeline-model-parallel-size 2";
  const size_t at = text->find(pp);
  ASSERT_NE(at, std::string::npos);
  std::string last = *text;
  last.replace(at, pp.size(), pp + "\n    --decoder-last-pipeline-num-layers 47");
  auto r = ImportJob(last, "train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.layout.last_stage_layers, 47);
  EXPECT_EQ(StageLayerCounts(r->job.layout, 96), (std::vector<int64_t>{49, 47}));
  EXPECT_NE(SourceOf(*r, "parallel.last_stage_layers").find("decoder-last-pipeline-num-layers"),
            std::string::npos)
      << SourceOf(*r, "parallel.last_stage_layers");
  std::string accounted = *text;
  accounted.replace(at, pp.size(),
                    pp + "\n    --account-for-embedding-in-pipeline-split"
                         "\n    --account-for-loss-in-pipeline-split");
  auto a = ImportJob(accounted, "train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  ASSERT_TRUE(a.ok()) << a.error().Format();
  EXPECT_TRUE(a->job.layout.account_for_embedding);
  EXPECT_TRUE(a->job.layout.account_for_loss);
  EXPECT_EQ(StageLayerCounts(a->job.layout, 96), (std::vector<int64_t>{48, 48}));
}

// megatron-core's --pipeline-model-parallel-layout: 96 layers, PP 2, "E(t*24|)*3t*24L" unrolls
// to E + 24 t | 24 t | 24 t | 24 t + L, four virtual stages of 24: VPP 2, 48 layers a rank.
TEST(ImportJobTest, MegatronPipelineLayout) {
  auto text = ReadFile(Golden("megatron_gpt3_script/train_gpt3_175b_distributed.sh"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "--pipeline-model-parallel-size 2";
  const size_t at = text->find(pp);
  ASSERT_NE(at, std::string::npos);
  std::string layout = *text;
  layout.replace(at, pp.size(), pp + "\n    --pipeline-model-parallel-layout \"E(t*24|)*3t*24L\"");
  auto r = ImportJob(layout, "train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.layout.vpp, 2);
  EXPECT_EQ(r->job.layout.schedule(), PipelineSchedule::kInterleaved1F1B);
  EXPECT_EQ(StageLayerCounts(r->job.layout, 96), (std::vector<int64_t>{48, 48}));
}

// torchtitan with PP: its default split and the schedule by PyTorch's class name. Llama-3.1-8B
// (32 layers) on PP 2 with ZBVZeroBubble: two stages per rank, 34 effective layers over 4
// stages = 8 rem 2, stages of 9 - 1, 9, 8, 8 - 1 = 8, 9, 8, 7; rank 0 holds stages 0 and 3
// (8 + 7), rank 1 stages 1 and 2 (9 + 8).
TEST(ImportJobTest, TorchtitanPipelineSchedule) {
  auto text = ReadFile(Golden("torchtitan_llama3_8b/llama3_8b.toml"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "pipeline_parallel_degree = 1";
  const size_t at = text->find(pp);
  ASSERT_NE(at, std::string::npos);
  std::string zbv = *text;
  zbv.replace(at, pp.size(),
              "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"ZBVZeroBubble\"");
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  auto r = ImportJob(zbv, "llama3_8b.toml", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.layout.schedule(), PipelineSchedule::kZbv);
  EXPECT_EQ(r->job.layout.vpp, 2);
  EXPECT_EQ(r->job.layout.stage_split, StageSplitRule::kTorchtitan);
  EXPECT_EQ(StageLayerCounts(r->job.layout, 32), (std::vector<int64_t>{15, 17}));
  std::string bad = *text;
  bad.replace(at, pp.size(),
              "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"LoopedBFS\"");
  auto refused = ImportJob(bad, "llama3_8b.toml", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("LoopedBFS"), std::string::npos);
}

// torchtitan with pipeline parallelism splits each rank's local batch into micro batches of
// parallelism.pipeline_parallel_microbatch_size (pytorch/torchtitan@6404b932,
// torchtitan/config/job_config.py: `pipeline_parallel_microbatch_size: int = 1`, "used to compute
// the total number of microbatches by dividing local_batch_size with
// pipeline_parallel_microbatch_size"). The preset on 64 GPUs with local_batch_size 8 and PP 2:
// DP = 64 / 2 = 32; micro batch 1 (the default), 8 / 1 = 8 micro batches a step; global batch
// 8 x 32 = 256. With microbatch size 2: micro batch 2 (4 micro batches), global still 256. Without
// PP the local batch is the one micro batch; a size that does not divide it is refused.
TEST(ImportJobTest, TorchtitanPipelineMicroBatch) {
  auto text = ReadFile(Golden("torchtitan_llama3_8b/llama3_8b.toml"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "pipeline_parallel_degree = 1";
  const std::string batch = "batch_size = 1";
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  auto with = [&](const std::string& parallel) {
    std::string t = *text;
    t.replace(t.find(pp), pp.size(), parallel);
    t.replace(t.find(batch), batch.size(), "local_batch_size = 8");
    return ImportJob(t, "llama3_8b.toml", o);
  };
  auto piped = with("pipeline_parallel_degree = 2");
  ASSERT_TRUE(piped.ok()) << piped.error().Format();
  EXPECT_EQ(piped->job.layout.dp, 32);
  EXPECT_EQ(piped->job.micro_batch, 1);
  EXPECT_EQ(piped->job.global_batch, 256);
  auto two = with("pipeline_parallel_degree = 2\npipeline_parallel_microbatch_size = 2");
  ASSERT_TRUE(two.ok()) << two.error().Format();
  EXPECT_EQ(two->job.micro_batch, 2);
  EXPECT_EQ(two->job.global_batch, 256);
  EXPECT_NE(SourceOf(*two, "batch.micro_batch").find("pipeline_parallel_microbatch_size"),
            std::string::npos);
  auto flat = with(pp);
  ASSERT_TRUE(flat.ok()) << flat.error().Format();
  EXPECT_EQ(flat->job.micro_batch, 8);
  EXPECT_EQ(flat->job.global_batch, 8 * 64);
  auto odd = with("pipeline_parallel_degree = 2\npipeline_parallel_microbatch_size = 3");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("does not divide"), std::string::npos) << odd.error().Format();
}

// The 2024 [experimental] schema counted micro batches instead (pytorch/torchtitan@68064737,
// torchtitan/parallelisms/pipelining_utils.py, build_pipeline_schedule: n_microbatches =
// experimental.pipeline_parallel_microbatches, None -> pipeline_parallel_degree). The 70B preset
// of that time (batch_size 8, TP 8) on 64 GPUs with PP 2: DP = 64 / (8 x 2) = 4; 2 micro batches
// (one per stage) of 8 / 2 = 4; with pipeline_parallel_microbatches = 8, micro batches of 1.
// The global batch is 8 x 4 = 32 either way.
TEST(ImportJobTest, TorchtitanPipelineMicroBatchOldSchema) {
  auto text = ReadFile(Golden("torchtitan_llama3_70b_2024/llama3_70b.toml"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "pipeline_parallel_degree = 1";
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  auto with = [&](const std::string& lines) {
    std::string t = *text;
    t.replace(t.find(pp), pp.size(), lines);
    return ImportJob(t, "llama3_70b.toml", o);
  };
  auto per_stage = with("pipeline_parallel_degree = 2");
  ASSERT_TRUE(per_stage.ok()) << per_stage.error().Format();
  EXPECT_EQ(per_stage->job.layout.dp, 4);
  EXPECT_EQ(per_stage->job.micro_batch, 4);
  EXPECT_EQ(per_stage->job.global_batch, 32);
  auto eight = with("pipeline_parallel_degree = 2\npipeline_parallel_microbatches = 8");
  ASSERT_TRUE(eight.ok()) << eight.error().Format();
  EXPECT_EQ(eight->job.micro_batch, 1);
  EXPECT_EQ(eight->job.global_batch, 32);
}

// torchtitan's fsdp_reshard_after_forward policy (pytorch/torchtitan@b5bcd76c,
// torchtitan/distributed/fsdp.py, get_fsdp_reshard_after_forward_policy): "default" (its
// default, config/configs.py) is `not pp_enabled`, "always" True, "never" False; anything else
// raises. The preset sets no policy and PP 1: resharded; with PP 2 the default keeps the blocks
// gathered; a misspelt policy is refused with a suggestion.
TEST(ImportJobTest, TorchtitanReshardAfterForwardPolicy) {
  auto text = ReadFile(Golden("torchtitan_llama3_8b/llama3_8b.toml"));
  ASSERT_TRUE(text.ok());
  const std::string pp = "pipeline_parallel_degree = 1";
  const size_t at = text->find(pp);
  ASSERT_NE(at, std::string::npos);
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  auto with = [&](const std::string& lines) {
    std::string t = *text;
    t.replace(at, pp.size(), lines);
    return ImportJob(t, "llama3_8b.toml", o);
  };
  auto plain = with(pp);
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_TRUE(plain->job.sharding.reshard_after_forward);
  auto piped = with("pipeline_parallel_degree = 2");
  ASSERT_TRUE(piped.ok()) << piped.error().Format();
  EXPECT_FALSE(piped->job.sharding.reshard_after_forward);
  auto always = with("pipeline_parallel_degree = 2\nfsdp_reshard_after_forward = \"always\"");
  ASSERT_TRUE(always.ok()) << always.error().Format();
  EXPECT_TRUE(always->job.sharding.reshard_after_forward);
  auto never = with(pp + "\nfsdp_reshard_after_forward = \"never\"");
  ASSERT_TRUE(never.ok()) << never.error().Format();
  EXPECT_FALSE(never->job.sharding.reshard_after_forward);
  auto bad = with(pp + "\nfsdp_reshard_after_forward = \"allways\"");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown parallelism.fsdp_reshard_after_forward 'allways'"),
            std::string::npos)
      << bad.error().Format();
  EXPECT_NE(bad.error().hint.find("did you mean 'always'?"), std::string::npos)
      << bad.error().Format();
  // The float8 all-gather switch is a TOML boolean; a string is refused, not read as false.
  std::string f8 = *text;
  const std::string off = "enable_fsdp_float8_all_gather = false";
  const size_t f8_at = f8.find(off);
  ASSERT_NE(f8_at, std::string::npos);
  f8.replace(f8_at, off.size(), "enable_fsdp_float8_all_gather = \"ture\"");
  auto typo = ImportJob(f8, "llama3_8b.toml", o);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().hint.find("did you mean 'true'?"), std::string::npos)
      << typo.error().Format();
}

// deepspeed --include: TigerBot's train_sft.sh runs `deepspeed --include="localhost:2,3"`, two
// GPUs of one node, with no --nodes or --gpus-per-node given to strata import.
TEST(ImportJobTest, DeepSpeedIncludeGivesTheNodesAndGpus) {
  ImportOptions o = Gpu("A100 80GB");
  o.overrides = {"sequence.max_tokens=2048"};
  o.model = "llama-3.1-8b";
  const ImportReport r = Import("hf_deepspeed_zero3_offload/train_sft.sh", o);
  EXPECT_EQ(r.job.cluster.nodes, 1);
  EXPECT_EQ(r.job.cluster.gpus_per_node, 2);
  EXPECT_EQ(r.job.layout.dp, 2);
  EXPECT_NE(SourceOf(r, "cluster.gpus_per_node").find("localhost:2,3"), std::string::npos)
      << SourceOf(r, "cluster.gpus_per_node");
  // The forms of DeepSpeed's launcher (deepspeed/launcher/runner.py, parse_resource_filter):
  // hosts separated by '@', each with an optional ':' and slot list.
  const DeepSpeedHosts two = ParseDeepSpeedInclude("worker-0:0,1,2,3@worker-1:4,5,6,7");
  EXPECT_EQ(two.nodes, 2);
  EXPECT_EQ(two.gpus_per_node, 4);
  const DeepSpeedHosts whole = ParseDeepSpeedInclude("worker-0@worker-1");
  EXPECT_EQ(whole.nodes, 2);  // all GPUs of each: the count is not in the string
  EXPECT_FALSE(whole.gpus_per_node.has_value());
  const DeepSpeedHosts uneven = ParseDeepSpeedInclude("a:0,1@b:0");
  EXPECT_EQ(uneven.nodes, 2);
  EXPECT_FALSE(uneven.gpus_per_node.has_value());
  EXPECT_EQ(ParseDeepSpeedInclude("").nodes, 0);
  EXPECT_EQ(ParseDeepSpeedInclude("@@").nodes, 0);
}

// Fuzz finding 15: a GPU count that is not a number (a word from a cut-off argument dump)
// reached std::stoll, whose exception escaped the importer. It is an error naming the field,
// the value and where it came from.
TEST(ImportJobTest, ANonNumericGpuCountIsAnErrorNamingItsSource) {
  JobBuilder job;
  job.Set("cluster.nodes", "two", "torchrun --nnodes (line 1)");
  auto n = job.GetPositiveInt("cluster.nodes");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().Format().find("cluster.nodes is 'two' (from torchrun --nnodes (line 1))"),
            std::string::npos)
      << n.error().Format();
  EXPECT_FALSE(JobBuilder().GetPositiveInt("parallel.dp").ok());
  job.Set("parallel.dp", "4", "derived");
  EXPECT_EQ(*job.GetPositiveInt("parallel.dp"), 4);
}

// A framework default stands for what the input leaves unsaid: it never replaces a value the
// input set. (verl's defaults for the gradient dtype and the distributed optimizer once replaced
// the launch's own override_ddp_config values because they were written after them; each caller
// then had to guard itself.) A default still replaces an earlier default, and the report lists
// only the defaults the job holds.
TEST(ImportJobTest, AFrameworkDefaultNeverReplacesAValueTheInputSet) {
  JobBuilder job;
  job.Set("precision.grads", "bf16", "override_ddp_config.grad_reduce_in_fp32 False (line 3)");
  job.Default("precision.grads", "fp32", "verl's DDP config reduces gradients in fp32");
  EXPECT_EQ(job.Get("precision.grads"), "bf16");
  job.Default("optimizer.name", "adam", "a first default");
  job.Default("optimizer.name", "adamw", "a later, more specific default");
  EXPECT_EQ(job.Get("optimizer.name"), "adamw");
  ImportReport report;
  job.Fill(report);
  ASSERT_EQ(report.fields.size(), 2u);
  for (const ImportedField& f : report.fields) {
    if (f.key != "precision.grads") continue;
    EXPECT_EQ(f.source, "override_ddp_config.grad_reduce_in_fp32 False (line 3)");
    EXPECT_EQ(f.origin, FieldOrigin::kFromInput);
  }
  ASSERT_EQ(report.defaults.size(), 1u);
  EXPECT_EQ(report.defaults[0], "optimizer.name = adamw: a later, more specific default");
}

// A value the importer derived from the input (verl's pure-bf16 actor: bf16 gradients, derived
// from param_dtype and reduce_dtype) is the input's too: a framework default after it does not
// replace it. Before, only a value set verbatim was kept, and verl's mapping guarded each of its
// defaults with a Has() check of its own.
TEST(ImportJobTest, AFrameworkDefaultNeverReplacesAValueDerivedFromTheInput) {
  JobBuilder job;
  job.Derive("precision.grads", "bf16", "param_dtype and reduce_dtype bfloat16");
  job.Default("precision.grads", "fp32", "verl's actor mixed precision: reduce_dtype float32");
  EXPECT_EQ(job.Get("precision.grads"), "bf16");
  ImportReport report;
  job.Fill(report);
  EXPECT_TRUE(report.defaults.empty());
}

// Fuzz finding 17 (UBSan): $(( 1024 * -8198552921648689606 )) overflowed int64 in the shell
// arithmetic (undefined behaviour). An overflowing expression is left unexpanded, as any other
// expression the importer cannot evaluate; the ones launch scripts hold still evaluate.
TEST(ImportJobTest, ShellArithmeticThatOverflowsIsLeftUnexpanded) {
  auto cmds = ParseShellScript(
      "A=$((1024 * -8198552921648689606))\nB=$((-9223372036854775807 - 2))\nC=$((1024 * 8))\n"
      "echo \"$A\" \"$B\" \"$C\"\n",
      "s.sh");
  ASSERT_TRUE(cmds.ok()) << cmds.error().Format();
  ASSERT_FALSE(cmds->empty());
  const ShellCommandLine& echo = cmds->back();
  std::string joined;
  for (const ShellWord& w : echo.words) joined += w.text + "|";
  // The wrapped-around product (what a 64-bit shell prints) is not taken for a value.
  EXPECT_EQ(joined.find("-8395317991766258157"), std::string::npos) << joined;
  EXPECT_NE(joined.find("8198552921648689606"), std::string::npos) << joined;
  EXPECT_NE(joined.find("9223372036854775807"), std::string::npos) << joined;
  EXPECT_EQ(echo.words.back().text, "8192") << joined;
}

// ${VAR:-word} whose word holds another expansion, as verl's DAPO scripts write it
// (volcengine/verl examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh:
// `RAY_DATA_HOME=${RAY_DATA_HOME:-"${HOME}/verl"}`): bash ends the expansion at the matching
// brace and removes the quotes of the word, so with RAY_DATA_HOME unset it is ${HOME}/verl
// (HOME left as written: unknown here). Before: the first '}' ended it and the value read
// `${HOME/verl}` (bash's pattern substitution, another thing).
TEST(ImportJobTest, ShellDefaultWithANestedExpansion) {
  auto cmds = ParseShellScript(
      "RAY_DATA_HOME=${RAY_DATA_HOME:-\"${HOME}/verl\"}\n"
      "TRAIN_FILE=$RAY_DATA_HOME/dataset/dapo-math-17k.parquet\n"
      "T=2\nX=${UNSET:-${T}x}\n"
      "echo \"$TRAIN_FILE\" \"$X\"\n",
      "s.sh");
  ASSERT_TRUE(cmds.ok()) << cmds.error().Format();
  ASSERT_FALSE(cmds->empty());
  const ShellCommandLine& echo = cmds->back();
  ASSERT_EQ(echo.words.size(), 3u);
  EXPECT_EQ(echo.words[1].text, "${HOME}/verl/dataset/dapo-math-17k.parquet");
  EXPECT_EQ(echo.words[2].text, "2x");
}

// A Megatron-Bridge recipe run by torchrun (its examples/recipes/llama/pretrain_llama3_8b.py with
// Hydra-style overrides, the launch form of its recipes' docs) is no Megatron-LM command: the
// import says it does not read such recipes (exit 2), naming the first override. Before: it was
// taken for Megatron-LM and refused with "--micro-batch-size is missing" although
// train.micro_batch_size=2 was given.
TEST(ImportJobTest, MegatronBridgeRecipeIsNotReadAsMegatronLm) {
  const std::string script =
      "torchrun --nproc_per_node=8 examples/recipes/llama/pretrain_llama3_8b.py \\\n"
      "    model.tensor_model_parallel_size=2 \\\n"
      "    train.micro_batch_size=2 \\\n"
      "    dataset.seq_length=8192\n";
  auto r = ImportJob(script, "bridge.sh", Gpu("H100"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find("--micro-batch-size is missing"), std::string::npos)
      << r.error().Format();
  EXPECT_NE(r.error().message.find("Megatron-Bridge"), std::string::npos) << r.error().Format();
  EXPECT_NE(r.error().message.find("model.tensor_model_parallel_size=2"), std::string::npos)
      << r.error().Format();
}

// `swift sft` trains LoRA unless told otherwise: ms-swift's train_type (tuner_type in 4.x)
// "Default is 'lora'" (docs/source_en/Instruction/Command-line-parameters.md, Base Arguments),
// with lora_rank 8, lora_alpha 32, lora_dropout 0.05 and target_modules all-linear. The import
// made such a launch full fine-tuning (16 B of states a parameter instead of the adapters').
// `--train_type full` keeps full training.
TEST(ImportJobTest, SwiftSftDefaultsToLora) {
  ImportOptions o;
  o.gpu = "H100";
  o.gpus_per_node = 1;
  auto lora = ImportJob("swift sft --model Qwen/Qwen3-32B --dataset d.jsonl --max_length 2048\n",
                        "train.sh", o);
  ASSERT_TRUE(lora.ok()) << lora.error().Format();
  EXPECT_EQ(lora->job.adapter.kind, AdapterKind::kLora);
  EXPECT_EQ(lora->job.adapter.rank, 8);
  EXPECT_DOUBLE_EQ(lora->job.adapter.alpha, 32);
  EXPECT_DOUBLE_EQ(lora->job.adapter.dropout, 0.05);
  EXPECT_EQ(lora->job.adapter.targets, std::vector<std::string>{"all-linear"});
  auto full = ImportJob("swift sft --model Qwen/Qwen3-32B --train_type full --max_length 2048\n",
                        "train.sh", o);
  ASSERT_TRUE(full.ok()) << full.error().Format();
  EXPECT_FALSE(full->job.adapter.on());
  auto qlora = ImportJob(
      "swift sft --model Qwen/Qwen3-32B --quant_bits 4 --lora_rank 64 --bf16 true --max_length "
      "2048\n",
      "train.sh", o);
  ASSERT_TRUE(qlora.ok()) << qlora.error().Format();
  EXPECT_EQ(qlora->job.adapter.kind, AdapterKind::kQlora);
  EXPECT_EQ(qlora->job.adapter.rank, 64);
}

// megatron-core's --attention-backend is the job's attention.kernel: unfused and local write the
// S x S scores to HBM (Llama-3.1-8B at 8K: 32 layers x 32 heads x 8,192^2 x 2 B = 137.4 GB of
// saved softmax), flash, fused and auto do not. Before, the flag was dropped silently (listed
// neither as applied nor as read but not used) and every backend imported as flash.
TEST(ImportJobTest, MegatronAttentionBackendIsTheAttentionKernel) {
  const std::string base =
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
      "--num-attention-heads 32 --ffn-hidden-size 14336 --seq-length 8192 "
      "--max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 64 --bf16 "
      "--vocab-size 128256";
  ImportOptions options;
  options.cluster = "h100-8x8-ib400";
  for (const char* backend : {"unfused", "local"}) {
    auto r = ImportJob(base + " --attention-backend " + backend + "\n", "train.sh", options);
    ASSERT_TRUE(r.ok()) << r.error().Format();
    EXPECT_EQ(r->job.attention.kernel, AttentionKernel::kUnfused) << backend;
    EXPECT_NE(testing::SourceOf(*r, "attention.kernel").find("--attention-backend"),
              std::string::npos);
  }
  for (const char* backend : {"flash", "fused", "auto"}) {
    auto r = ImportJob(base + " --attention-backend " + backend + "\n", "train.sh", options);
    ASSERT_TRUE(r.ok()) << r.error().Format();
    EXPECT_EQ(r->job.attention.kernel, AttentionKernel::kFlash) << backend;
  }
  auto bad = ImportJob(base + " --attention-backend fast\n", "train.sh", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--attention-backend");
}

}  // namespace
}  // namespace strata::import_job_test
