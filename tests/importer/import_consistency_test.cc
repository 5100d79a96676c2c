// The importer writes a job consistent with the input and with itself: the global batch follows
// the micro batch the job ends up with, a torchtitan TOML whose shard degree is 1 runs no FSDP,
// Accelerate's FSDP1 is priced as the per-unit FSDP it is, and a misspelt key of a setting the
// importer maps is refused, as the framework would refuse it, instead of silently giving the
// framework's default. Inputs are the real files under tests/golden/cli_import (SOURCES.md),
// some with one line edited as each test says.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"
#include "strata/importer/job_builder.h"

namespace strata::import_consistency_test {
namespace {

using testing::Field;
using testing::ImportGolden;
using testing::SourceOf;

std::string Read(const std::string& golden) {
  auto text = ReadFile(ImportGolden(golden));
  EXPECT_TRUE(text.ok()) << golden;
  return text.ok() ? *text : "";
}

// `text` with its first `from` replaced by `to` (the test fails if `from` is missing).
std::string Edited(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Result<ImportReport> ImportText(const std::string& text, const std::string& golden,
                                const ImportOptions& o) {
  return ImportJob(text, ImportGolden(golden), o);
}

ImportOptions HandbookOptions() {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=2048"};
  return o;
}

// --- the global batch follows the micro batch given to strata import ---------------------------

// alignment-handbook's fsdp.yaml: num_processes 8 on 1 machine -> DP 8; an Accelerate config has
// no batch size, so --set batch.micro_batch is how per_device_train_batch_size is given;
// gradient_accumulation_steps defaults to 1. global = micro 1 x accumulation 1 x DP 8 = 8 (the
// old import kept TrainingArguments' default micro batch 8 in it: 8 x 1 x 8 = 64).
TEST(ImportConsistencyTest, AccelerateGlobalBatchFollowsMicroBatchGiven) {
  ImportOptions o = HandbookOptions();
  o.overrides.push_back("batch.micro_batch=1");
  auto r = ImportJobFile(ImportGolden("accelerate_handbook_fsdp1/fsdp.yaml"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "batch.micro_batch"), "1");
  EXPECT_EQ(Field(*r, "batch.global_batch"), "8");
  EXPECT_EQ(SourceOf(*r, "batch.global_batch"),
            "derived: micro 1 (--set of strata import) x accumulation 1 "
            "(TrainingArguments.gradient_accumulation_steps defaults to 1) x DP 8");
}

// The DeepSpeed launch of hf_deepspeed_zero3_offload (--include localhost:2,3 -> DP 2) with
// --gradient_accumulation_steps 4 added (its JSON says "auto": the Trainer's value). With
// --set batch.micro_batch=1: 1 x 4 x 2 = 8 (the old import: per_device_train_batch_size 2 x 4 x
// 2 = 16, twice the tokens and an accumulation of 8 micro batches the run does not have).
TEST(ImportConsistencyTest, DeepSpeedGlobalBatchFollowsMicroBatchGiven) {
  const std::string text =
      Edited(Read("hf_deepspeed_zero3_offload/train_sft.sh"), "--per_device_train_batch_size 2 \\",
             "--per_device_train_batch_size 2 \\\n"
             "--gradient_accumulation_steps 4 \\");
  ImportOptions o;
  o.gpu = "A100 80GB";
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=2048", "batch.micro_batch=1"};
  auto r = ImportText(text, "hf_deepspeed_zero3_offload/train_sft.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "batch.global_batch"), "8");
  // Both given: the global batch is the user's, not derived again.
  o.overrides.push_back("batch.global_batch=32");
  auto both = ImportText(text, "hf_deepspeed_zero3_offload/train_sft.sh", o);
  ASSERT_TRUE(both.ok()) << both.error().Format();
  EXPECT_EQ(Field(*both, "batch.global_batch"), "32");
}

// torchtitan's llama3_8b.toml without pipelining: local_batch_size 1 is the micro batch and the
// global batch defaults to local x DP. On 8 x 8 GPUs (TP 1): DP 64, so micro 2 -> global 128.
TEST(ImportConsistencyTest, TorchtitanGlobalBatchFollowsMicroBatchGiven) {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.nodes = 8;
  o.gpus_per_node = 8;
  o.overrides = {"batch.micro_batch=2"};
  auto r = ImportJobFile(ImportGolden("torchtitan_llama3_8b/llama3_8b.toml"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "parallel.dp"), "64");
  EXPECT_EQ(Field(*r, "batch.global_batch"), "128");
}

// NVIDIA's train_llama3_8b_h100_fp8.sh (TP 1 on 1 x 8: DP 8) without its --global-batch-size
// line: Megatron's global_batch_size defaults to micro_batch_size x DP, so --set
// batch.micro_batch=2 gives 2 x 8 = 16 (the old import: the script's micro 1 x 8 = 8, which
// the job reader then refused as not a multiple of micro 2 x DP 8). With the line kept, the
// script's 128 stays: Megatron takes the global batch given and accumulates 128 / 16 = 8.
TEST(ImportConsistencyTest, MegatronDefaultGlobalBatchFollowsMicroBatchGiven) {
  const std::string golden = "megatron_llama3_8b_fp8/train_llama3_8b_h100_fp8.sh";
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.overrides = {"batch.micro_batch=2"};
  auto r =
      ImportText(Edited(Read(golden), "--global-batch-size $GLOBAL_BATCH_SIZE", ""), golden, o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "parallel.dp"), "8");
  EXPECT_EQ(Field(*r, "batch.global_batch"), "16");
  auto given = ImportText(Read(golden), golden, o);
  ASSERT_TRUE(given.ok()) << given.error().Format();
  EXPECT_EQ(Field(*given, "batch.global_batch"), "128");
}

// --- contradictions in the job the importer wrote ----------------------------------------------

// The contradiction the old torchtitan import made (optimizer.distributed true beside sharding
// none at line 32 of the YAML it generated): reported in the input file, with no line, as the
// importer's fault, with the sources of both fields.
TEST(ImportConsistencyTest, ImportersOwnContradictionReadsAsImporterFault) {
  ImportReport report;
  report.fields = {
      {"sharding.mode", "none", "derived: one shard: no FSDP sharding", FieldOrigin::kDerived},
      {"optimizer.distributed", "true",
       "default: FSDP2 shards the optimizer states over data_parallel_shard_degree",
       FieldOrigin::kDefault}};
  Error refused = InvalidInput("optimizer.distributed: true contradicts sharding.mode: none")
                      .InFile("llama3_70b.toml (imported)")
                      .AtLine(32)
                      .InField("optimizer.distributed")
                      .WithHint("drop optimizer.distributed; sharding.mode says it");
  const Error e = ImportedJobRefused(refused, report, "llama3_70b.toml", false);
  EXPECT_EQ(e.file, "llama3_70b.toml");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.field, "");
  EXPECT_NE(e.message.find("a fault of the importer"), std::string::npos) << e.Format();
  EXPECT_NE(e.message.find("sharding.mode = none (derived: one shard"), std::string::npos);
  EXPECT_NE(e.message.find("optimizer.distributed = true (default: FSDP2"), std::string::npos);
  EXPECT_EQ(e.hint.find("drop optimizer.distributed"), std::string::npos) << e.hint;
  // The same contradiction with a value the input gives is the input's, named by its key.
  report.fields[1].source = "llama3_70b.toml:40: optimizer.distributed";
  report.fields[1].origin = FieldOrigin::kFromInput;
  const Error user = ImportedJobRefused(refused, report, "llama3_70b.toml", false);
  EXPECT_EQ(user.message.find("a fault of the importer"), std::string::npos);
  EXPECT_NE(user.message.find("(llama3_70b.toml:40: optimizer.distributed)"), std::string::npos)
      << user.Format();
  EXPECT_EQ(user.line, 0);
}

// Whose fault a contradiction is comes from each value's origin, set where the importer makes
// it, not from its source text. Accelerate's HYBRID_SHARD replicate count is the importer's
// reading of the strategy (one shard group a node) and its source names the input's strategy
// line, with no "derived:" prefix; contradicting the DP the importer derived (world 16 / 8 = 2),
// the job is the importer's fault. (Read from the text, this was blamed on the input's line.)
TEST(ImportConsistencyTest, ImporterDerivedValueWithoutPrefixTextIsTheImportersFault) {
  const std::string replicate_source =
      "accelerate.yaml:6: fsdp_config.fsdp_sharding_strategy HYBRID_SHARD (FSDP1): sharded "
      "within a node, replicated over the nodes";
  JobBuilder job;
  job.Set("sharding.replicate", "4", replicate_source, FieldOrigin::kDerived);
  job.Derive("parallel.dp", "2", "world 16 / (TP x PP x CP = 8)");
  ImportReport report;
  job.Fill(report);
  const Error refused = InvalidInput("sharding.replicate 4 does not divide parallel.dp 2")
                            .InFile("train.sh (imported)")
                            .AtLine(21)
                            .InField("sharding.replicate");
  const Error e = ImportedJobRefused(refused, report, "train.sh", false);
  EXPECT_NE(e.message.find("a fault of the importer"), std::string::npos) << e.Format();
  EXPECT_NE(e.message.find("sharding.replicate = 4 (" + replicate_source + ")"), std::string::npos)
      << e.Format();
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.field, "");
  // The same text on a value the input gave is the input's to change, field named.
  job.Set("sharding.replicate", "4", replicate_source);
  ImportReport given;
  job.Fill(given);
  const Error user = ImportedJobRefused(refused, given, "train.sh", false);
  EXPECT_EQ(user.message.find("a fault of the importer"), std::string::npos) << user.Format();
  EXPECT_EQ(user.field, "sharding.replicate");
}

// --- torchtitan with a shard degree of 1 -------------------------------------------------------

// torchtitan's llama3_70b.toml (tensor_parallel_degree 8, data_parallel_shard_degree -1) on one
// node of 8 GPUs: DP = 8 / TP 8 = 1, and torchtitan applies FSDP only when dp_shard > 1
// (ParallelDims.fsdp_enabled), so the job is TP-only with a plain AdamW: sharding none and an
// unsharded optimizer. The old import wrote optimizer.distributed true beside sharding none and
// then refused its own job at a line of the generated YAML.
TEST(ImportConsistencyTest, TorchtitanShardDegreeOneRunsNoFsdp) {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.nodes = 1;
  o.gpus_per_node = 8;
  auto r = ImportJobFile(ImportGolden("torchtitan_llama3_70b_2024/llama3_70b.toml"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "parallel.tp"), "8");
  EXPECT_EQ(Field(*r, "parallel.dp"), "1");
  EXPECT_EQ(Field(*r, "sharding.mode"), "none");
  EXPECT_EQ(Field(*r, "optimizer.distributed"), "false");
  // torchtitan's maybe_enable_amp: TP without FSDP disables mixed precision, fp32 training.
  EXPECT_EQ(Field(*r, "precision.params"), "fp32");
  for (const std::string& d : r->defaults) {
    EXPECT_EQ(d.find("optimizer.distributed = true"), std::string::npos) << d;
  }
}

// A TOML has no torchrun line: with --cluster h100-8x8-ib400 (8 nodes x 8 GPUs,
// data/clusters/h100-8x8-ib400.yaml) and no --nodes, the job runs on the cluster's 8 nodes,
// DP = 64 / TP 8 = 8 (the old import took torchrun's --nnodes default 1: DP 1).
TEST(ImportConsistencyTest, TorchtitanTomlTakesTheClustersNodes) {
  ImportOptions o;
  o.cluster = "h100-8x8-ib400";
  auto r = ImportJobFile(ImportGolden("torchtitan_llama3_70b_2024/llama3_70b.toml"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "cluster.nodes"), "8");
  EXPECT_NE(SourceOf(*r, "cluster.nodes").find("--cluster h100-8x8-ib400"), std::string::npos);
  EXPECT_EQ(Field(*r, "parallel.dp"), "8");
  // Without a cluster the count assumed is said to be an assumption.
  ImportOptions alone;
  alone.gpu = "H100 SXM";
  alone.gpus_per_node = 8;
  auto r1 = ImportJobFile(ImportGolden("torchtitan_llama3_70b_2024/llama3_70b.toml"), alone);
  ASSERT_TRUE(r1.ok()) << r1.error().Format();
  EXPECT_EQ(Field(*r1, "cluster.nodes"), "1");
  EXPECT_NE(SourceOf(*r1, "cluster.nodes").find("1 node assumed (give --nodes)"),
            std::string::npos);
}

// --- Accelerate FSDP1 --------------------------------------------------------------------------

// SHARD_GRAD_OP shards gradients and optimizer states, not the weights (ZeRO-2's set); the job
// file's reshard_after_forward applies only to modes that shard the weights, so the import must
// not write it (the old import wrote `false` and refused its own job at line 38).
TEST(ImportConsistencyTest, AccelerateShardGradOpWritesNoReshard) {
  const std::string text =
      Edited(Read("accelerate_handbook_fsdp1/fsdp.yaml"), "fsdp_sharding_strategy: FULL_SHARD",
             "fsdp_sharding_strategy: SHARD_GRAD_OP");
  auto r = ImportText(text, "accelerate_handbook_fsdp1/fsdp.yaml", HandbookOptions());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "sharding.mode"), "zero2");
  EXPECT_EQ(Field(*r, "sharding.reshard_after_forward"), "(not set)");
  EXPECT_EQ(Field(*r, "optimizer.distributed"), "true");
  // FSDP1 runs it, not the HF Trainer's DeepSpeed (data/frameworks.yaml hf-trainer
  // zero12_runtime): before, the imported zero2 job got DeepSpeed's reduce buckets.
  EXPECT_EQ(Field(*r, "sharding.runtime"), "fsdp1");
}

// FULL_SHARD (FSDP1): one FlatParameter per wrapped unit, one all-gather per unit per pass; that
// is FSDP2's per-unit model, not DeepSpeed ZeRO-3's per-parameter hooks. mixed_precision bf16:
// Accelerate's MixedPrecision(reduce_dtype=bf16) reduces the gradients in bf16. No DeepSpeed
// runs, so no DeepSpeed default is named.
TEST(ImportConsistencyTest, AccelerateFsdp1IsPricedAsPerUnitFsdp) {
  auto r = ImportJobFile(ImportGolden("accelerate_handbook_fsdp1/fsdp.yaml"), HandbookOptions());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "sharding.mode"), "fsdp2");
  EXPECT_NE(SourceOf(*r, "sharding.mode").find("run by FSDP1 (sharding.runtime fsdp1"),
            std::string::npos);
  // The handbook's fsdp.yaml says fsdp_version: 1 (or leaves it to Accelerate's default, 1):
  // FullyShardedDataParallel runs it, with its FlatParameters.
  EXPECT_EQ(Field(*r, "sharding.runtime"), "fsdp1");
  EXPECT_EQ(Field(*r, "sharding.reshard_after_forward"), "true");
  EXPECT_EQ(Field(*r, "precision.grads"), "bf16");
  EXPECT_EQ(Field(*r, "optimizer.master_weights"), "fp32");
  for (const std::string& d : r->defaults) {
    EXPECT_EQ(d.find("DeepSpeed keeps"), std::string::npos) << d;
    EXPECT_EQ(d.find("no DeepSpeed ZeRO stage"), std::string::npos) << d;
  }
}

// How the checkpoint is written: the handbook's FSDP1 config says
// fsdp_state_dict_type: SHARDED_STATE_DICT (each rank its DCP shards); without the key
// Accelerate's FSDP1 default is FULL_STATE_DICT (huggingface/accelerate utils/dataclasses.py:
// "FULL_STATE_DICT" if fsdp_version == 1 else "SHARDED_STATE_DICT"), where rank 0 writes the
// whole model and optimizer. Before, the key was "read but not used" and every FSDP job saved
// shards.
TEST(ImportConsistencyTest, AccelerateStateDictTypeDecidesTheCheckpoint) {
  const std::string text = Read("accelerate_handbook_fsdp1/fsdp.yaml");
  const std::string line = "fsdp_state_dict_type: SHARDED_STATE_DICT";
  ASSERT_NE(text.find(line), std::string::npos);
  auto sharded = ImportText(text, "accelerate_handbook_fsdp1/fsdp.yaml", HandbookOptions());
  ASSERT_TRUE(sharded.ok()) << sharded.error().Format();
  EXPECT_EQ(Field(*sharded, "checkpoint.state_dict"), "sharded");
  auto full = ImportText(Edited(text, line, "fsdp_state_dict_type: FULL_STATE_DICT"),
                         "accelerate_handbook_fsdp1/fsdp.yaml", HandbookOptions());
  ASSERT_TRUE(full.ok()) << full.error().Format();
  EXPECT_EQ(Field(*full, "checkpoint.state_dict"), "full");
  auto fsdp1_default =
      ImportText(Edited(text, line, ""), "accelerate_handbook_fsdp1/fsdp.yaml", HandbookOptions());
  ASSERT_TRUE(fsdp1_default.ok()) << fsdp1_default.error().Format();
  EXPECT_EQ(Field(*fsdp1_default, "checkpoint.state_dict"), "full");
  auto typo = ImportText(Edited(text, line, "fsdp_state_dict_type: FULL_STATE_DIC"),
                         "accelerate_handbook_fsdp1/fsdp.yaml", HandbookOptions());
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().Format().find("did you mean 'FULL_STATE_DICT'?"), std::string::npos)
      << typo.error().Format();
}

// A contradiction the importer is given with --set is named by its --set, in the input file,
// never at a line of the generated YAML the user never sees: reshard_after_forward (FSDP1
// FULL_SHARD reshards) beside --set sharding.mode=zero2.
TEST(ImportConsistencyTest, ContradictionIsNamedByItsSourceNotAGeneratedLine) {
  ImportOptions o = HandbookOptions();
  o.overrides.push_back("sharding.mode=zero2");
  auto r = ImportJobFile(ImportGolden("accelerate_handbook_fsdp1/fsdp.yaml"), o);
  ASSERT_FALSE(r.ok());
  const Error& e = r.error();
  EXPECT_EQ(e.file, ImportGolden("accelerate_handbook_fsdp1/fsdp.yaml"));
  EXPECT_EQ(e.line, 0);
  EXPECT_NE(e.message.find("sharding.mode = zero2 (--set of strata import)"), std::string::npos)
      << e.Format();
}

// --- misspelt keys -----------------------------------------------------------------------------

struct Typo {
  const char* golden;
  const char* from;
  const char* to;
  std::vector<const char*> expected;  // parts of the message and hint
};

// Each a one-word typo of a key the importer maps; the framework refuses each at start-up
// (Megatron's and ms-swift's argparse: "unrecognized arguments"; DeepSpeed's config model:
// extra fields forbidden; torchtitan's ConfigManager: "Invalid field names"). The old import
// applied the default (TP 1, EP 1, ZeRO stage 0) with exit 0.
TEST(ImportConsistencyTest, MisspeltMappedKeyIsRefusedWithDidYouMean) {
  const Typo typos[] = {
      {"megatron_llama3_8b_fp8/train_llama3_8b_h100_fp8.sh",
       "--tensor-model-parallel-size $TP_SIZE",
       "--tensor-model-paralel-size $TP_SIZE",
       {"'--tensor-model-paralel-size' (--tensor-model-paralel-size (line 116",
        "did you mean '--tensor-model-parallel-size'?"}},
      {"ms_swift_qwen3_moe/qwen3_moe.sh",
       "--expert_model_parallel_size 8",
       "--expert_model_paralel_size 8",
       {"'--expert_model_paralel_size' (--expert_model_paralel_size (line 15)",
        "did you mean '--expert_model_parallel_size'?"}},
      {"torchtitan_llama3_70b_2024/llama3_70b.toml",
       "tensor_parallel_degree = 8",
       "tensor_paralel_degree = 8",
       {"'training.tensor_paralel_degree'", "llama3_70b.toml:36",
        "did you mean 'training.tensor_parallel_degree'?"}},
  };
  for (const Typo& t : typos) {
    // The golden cases' own clusters: 2 x 8 for ms-swift's script, 8 x 8 for the TOML (a
    // preset for 64 GPUs); the Megatron script sets its own.
    ImportOptions o;
    o.gpu = "H100 SXM";
    o.nodes = std::string(t.golden).starts_with("ms_swift") ? 2 : 8;
    o.gpus_per_node = 8;
    auto r = ImportText(Edited(Read(t.golden), t.from, t.to), t.golden, o);
    ASSERT_FALSE(r.ok()) << t.golden;
    const std::string text = r.error().Format();
    for (const char* part : t.expected) {
      EXPECT_NE(text.find(part), std::string::npos) << t.golden << ": " << text;
    }
  }
}

// DeepSpeed's "stgae" for "stage" in zero_optimization (hf_deepspeed_zero3_offload's JSON, line
// 31): stage 0 would have been imported (replicated Adam states, OOM) for a ZeRO-3 job.
TEST(ImportConsistencyTest, MisspeltDeepSpeedKeyIsRefused) {
  const std::string dir = "hf_deepspeed_zero3_offload/";
  ImportOptions o;
  o.gpu = "A100 80GB";
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=2048"};
  // The bundle's JSON replaced by the edited one, under the name the launch gives.
  const std::string json =
      Edited(Read(dir + "ds_config/ds_config_zero3.json"), "\"stage\": 3", "\"stgae\": 3");
  const std::string tmp = ::testing::TempDir() + "/ds_config_zero3.json";
  ASSERT_TRUE(WriteFileAtomic(tmp, json).ok());
  o.files = {tmp};
  auto r = ImportJobFile(ImportGolden(dir + "train_sft.sh"), o);
  ASSERT_FALSE(r.ok());
  const std::string text = r.error().Format();
  EXPECT_NE(text.find("'zero_optimization.stgae'"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'zero_optimization.stage'?"), std::string::npos) << text;
  // Spelled right it imports as ZeRO-3 (the golden case).
  o.files.clear();
  auto ok = ImportJobFile(ImportGolden(dir + "train_sft.sh"), o);
  ASSERT_TRUE(ok.ok()) << ok.error().Format();
  EXPECT_EQ(Field(*ok, "sharding.mode"), "zero3");
}

// verl's actor strategy names whose code runs its sharding (volcengine/verl v0.5.0
// verl/workers/fsdp_workers.py): fsdp wraps the HF model in FullyShardedDataParallel (FSDP1),
// fsdp2 calls fully_shard. The import writes it as sharding.runtime; before, it wrote only the
// mode and left the runtime to data/frameworks.yaml's verl entry.
TEST(ImportConsistencyTest, VerlActorStrategySetsTheShardingRuntime) {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.model = "llama-3.1-8b";
  o.nodes = 1;
  o.gpus_per_node = 8;
  const std::string golden = "verl_ppo_trainer_fsdp/ppo_trainer.yaml";
  auto fsdp = ImportJobFile(ImportGolden(golden), o);
  ASSERT_TRUE(fsdp.ok()) << fsdp.error().Format();
  EXPECT_EQ(Field(*fsdp, "sharding.mode"), "zero3");
  EXPECT_EQ(Field(*fsdp, "sharding.runtime"), "fsdp1");
  EXPECT_EQ(SourceOf(*fsdp, "sharding.runtime"), "actor_rollout_ref.actor.strategy = fsdp");
  const std::string text = Read(golden);
  const size_t at = text.find("strategy: fsdp");
  ASSERT_NE(at, std::string::npos);
  std::string edited = text;
  edited.replace(at, std::string("strategy: fsdp").size(), "strategy: fsdp2");
  auto fsdp2 = ImportText(edited, golden, o);
  ASSERT_TRUE(fsdp2.ok()) << fsdp2.error().Format();
  EXPECT_EQ(Field(*fsdp2, "sharding.mode"), "fsdp2");
  EXPECT_EQ(Field(*fsdp2, "sharding.runtime"), "fsdp2");
}

}  // namespace
}  // namespace strata::import_consistency_test
