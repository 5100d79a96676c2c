// docs/step-validation.md, recomputed: the step model's prediction for every row of
// ../shared/reference/dev-measurements.md that gives a step time, a throughput or TFLOP/s, with
// the error on each and the median and maximum absolute error. The document is compared with
// what this test generates, so it cannot go stale; UPDATE_GOLDEN=1 rewrites it.
//
// How each row's measurement becomes a step time (the one quantity compared):
//   step time rows (ms-swift, the reference case): as published.
//   TFLOP/s rows: measured step = tokens per step x the source's FLOP per token / (TFLOP/s x GPUs),
//   with the source's own FLOP formula (the one its TFLOP/s were computed with):
//     Megatron-LM r0.8 weak scaling (num_floating_point_operations, dense GPT, 4h FFN):
//       F = 72 L h^2 + 12 L h S + 6 h V     (non-causal attention, no recompute)
//     SC21 (Narayanan et al., eq. 3, which counts the recomputed forward):
//       F = 96 L h^2 + 16 L h S + 6 h V
//     Megatron-Core v0.9 (MoE, GQA, SwiGLU; Mixtral):
//       F = 12 L h^2 [(1 + g/n + S/h) + 3/2 k f/h] + 6 h V   (g KV heads, n heads, k top-k)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/step_band_rows.h"
#include "sim/step_test_support.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/hw/interconnects.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_layout_error.h"
#include "support/golden.h"

namespace strata::step_validation_test {
namespace {

enum class Measure { kStepTime, kTflops, kTokensPerGpu };

struct Row {
  std::string id;
  std::string model_label;
  std::function<ModelConfig()> model;
  std::string cluster;  // shipped cluster file the row's GPUs resemble
  std::string gpu;      // the row's GPU, when it differs from the cluster file's
  int64_t gpus = 8;
  double seq = 4096;
  int64_t gbs = 1, mbs = 1, tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, dp = 1;
  bool sp = false;
  // megatron-core --account-for-embedding/loss-in-pipeline-split (Megatron-Bridge's recipes for
  // layer counts that do not split evenly).
  bool account_for_embedding_and_loss = false;
  // Benchmarks that force-balance the tokens among experts: no busiest-rank skew.
  bool balanced_routing = false;
  RecomputeGranularity recompute = RecomputeGranularity::kNone;
  bool distributed_optimizer = true;
  ShardingMode sharding = ShardingMode::kZero1;  // zero2/zero3: DeepSpeed under swift sft
  double prefetch_layers = 1;                    // zero3: how far ahead the gather reaches
  int64_t last_stage_layers = 0;  // megatron's decoder_last_pipeline_num_layers (0: even)
  Fp8Recipe fp8 = Fp8Recipe::kNone;
  bool fp8_param_gather = false;
  int64_t grad_bytes = 4;    // megatron-core's fp32 gradient buffer; DeepSpeed bf16: 2
  int64_t moment_bytes = 4;  // 2: precision-aware optimizer with bf16 moments
  OverlapSpec overlap;
  AttentionSpec attention;  // flash unless the row predates it
  // Packed rows whose dataset's sample lengths are published: packed samples attend only within
  // themselves (PackedAttentionTokens). 0 = unknown: attention at the packed length.
  double sample_mean = 0, sample_std = 0;
  Measure measure = Measure::kStepTime;
  double measured = 0;  // s, or TFLOP/s per GPU
  std::function<double(const ModelConfig&, double seq)> source_flop_per_token;
  std::string note;
  // What the source says ran it (../shared/reference/dev-measurements.md names each row's
  // stack); empty version: the latest data/frameworks.yaml knows.
  std::string framework = "megatron-core";
  std::string framework_version;
  // GPUs on one NVLink domain when it is wider than the cluster file's node (GB200 NVL72).
  int64_t nvlink_domain = 0;
  // The data NICs' line rate when it differs from the cluster file's (Gb/s per NIC, one per
  // GPU; 0 = the file's), with the PCIe generation of the slot it needs.
  double data_nic_gbit = 0;
  int64_t nic_pcie_generation = 0;
  // The recipe runs the routed experts as one fused MLP (FrameworkProfile::fused_expert_mlp).
  bool fused_expert_mlp = false;
};

ModelConfig Catalog(const std::string& name) {
  auto m = LoadModelConfig(name);
  EXPECT_TRUE(m.ok()) << name;
  return m.ok() ? *m : ModelConfig{};
}

// A GPT of the Megatron papers: MHA, 4h GELU FFN (taken as SwiGLU of width 8h/3: the same
// weights, FLOP and activation bytes), vocabulary V.
ModelConfig Gpt(int64_t layers, int64_t h, int64_t heads, int64_t vocab) {
  ModelConfig c;
  c.name = fmt::format("gpt-{}x{}", layers, h);
  c.architecture = "GPT";
  c.hidden_size = h;
  c.vocab_size = vocab;
  c.attention.num_heads = heads;
  c.attention.num_kv_heads = heads;
  c.attention.head_dim = h / heads;
  c.dense_mlp.intermediate_size = (8 * h + 1) / 3;
  c.layers.assign(static_cast<size_t>(layers), {MixerKind::kFullAttention, FfnKind::kDense});
  return c;
}

// Qwen2.5 / Qwen3 dense models, from their Hugging Face config.json
// (huggingface.co/Qwen/Qwen2.5-14B, Qwen2.5-7B, Qwen3-14B: hidden_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, head_dim 128, intermediate_size, vocab_size).
ModelConfig QwenDense(const std::string& name, int64_t layers, int64_t h, int64_t heads, int64_t kv,
                      int64_t ffn, int64_t vocab, bool qwen3) {
  ModelConfig c = Gpt(layers, h, heads, vocab);
  c.name = name;
  c.attention.num_kv_heads = kv;
  c.attention.head_dim = 128;
  c.attention.qkv_bias = !qwen3;
  c.attention.qk_norm = qwen3;
  c.dense_mlp.intermediate_size = ffn;
  return c;
}

// huggingface.co/Qwen/Qwen1.5-MoE-A2.7B config.json: 24 layers, hidden 2048, 16 heads, 60
// experts (top 4) of width 1408, one shared expert of 5632 with a sigmoid gate, vocab 151,936.
ModelConfig Qwen15Moe() {
  ModelConfig c = QwenDense("qwen1.5-moe-a2.7b", 24, 2048, 16, 16, 5632, 151936, false);
  c.moe = {60, 4, 1408, 1, 5632, true, false, false};
  c.layers.assign(24, {MixerKind::kFullAttention, FfnKind::kMoe});
  return c;
}

// huggingface.co/moonshotai/Moonlight-16B-A3B config.json (DeepSeek-V3 architecture): 27 layers
// (the first dense, FFN 11,264), hidden 2048, MLA with 16 heads, kv_lora_rank 512, no q LoRA,
// qk_nope 128, qk_rope 64, v 128; 64 experts (top 6) of 1408 and 2 shared; vocab 163,840.
ModelConfig Moonlight() {
  ModelConfig c;
  c.name = "moonlight-16b-a3b";
  c.hidden_size = 2048;
  c.vocab_size = 163840;
  c.mla = {16, 0, 512, 128, 64, 128};
  c.dense_mlp.intermediate_size = 11264;
  c.moe = {64, 6, 1408, 2, 1408, false, true, false};
  c.layers.assign(27, {MixerKind::kMla, FfnKind::kMoe});
  c.layers[0].ffn = FfnKind::kDense;
  return c;
}

double MegatronR08(const ModelConfig& c, double s) {
  const double l = static_cast<double>(c.layers.size()), h = static_cast<double>(c.hidden_size);
  return 72 * l * h * h + 12 * l * h * s + 6 * h * static_cast<double>(c.vocab_size);
}

double Sc21(const ModelConfig& c, double s) {
  const double l = static_cast<double>(c.layers.size()), h = static_cast<double>(c.hidden_size);
  return 96 * l * h * h + 16 * l * h * s + 6 * h * static_cast<double>(c.vocab_size);
}

double MegatronMoeV09(const ModelConfig& c, double s) {
  const double l = static_cast<double>(c.layers.size()), h = static_cast<double>(c.hidden_size);
  const auto& a = c.attention;
  const double g = static_cast<double>(a.num_kv_heads) / static_cast<double>(a.num_heads);
  const double f = static_cast<double>(c.moe.expert_intermediate_size);
  return 12 * l * h * h * ((1 + g + s / h) + 1.5 * static_cast<double>(c.moe.top_k) * f / h) +
         6 * h * static_cast<double>(c.vocab_size);
}

std::vector<Row> Rows() {
  std::vector<Row> rows;
  // Megatron-LM README weak scaling (Megatron-Core r0.8.0, H100): TFLOP/s per GPU.
  struct Mlm {
    const char* id;
    int64_t l, h, heads, gpus, gbs, tp, pp;
    double tflops;
  };
  for (const Mlm& m : std::vector<Mlm>{{"MLM-01", 24, 2048, 16, 48, 192, 1, 1, 408.8},
                                       {"MLM-02", 30, 4096, 32, 96, 192, 2, 1, 465.9},
                                       {"MLM-03", 32, 6144, 48, 192, 192, 4, 1, 489.1},
                                       {"MLM-04", 48, 7168, 56, 384, 192, 8, 1, 459.6},
                                       {"MLM-05", 84, 8192, 64, 768, 384, 8, 2, 419.7},
                                       {"MLM-06", 92, 10240, 80, 1536, 768, 8, 4, 420.5},
                                       {"MLM-07", 96, 12288, 96, 2304, 1152, 8, 6, 432.8},
                                       {"MLM-08", 96, 16384, 128, 3072, 1536, 8, 8, 474.4},
                                       {"MLM-09", 112, 18432, 144, 6144, 3072, 8, 16, 459.9}}) {
    Row r;
    r.id = m.id;
    r.model_label = fmt::format("GPT {}L h{}", m.l, m.h);
    const int64_t l = m.l, h = m.h, heads = m.heads;
    r.model = [=] { return Gpt(l, h, heads, 131072); };
    r.cluster = "h100-8x8-ib400";
    r.gpus = m.gpus;
    r.gbs = m.gbs;
    r.tp = m.tp;
    r.pp = m.pp;
    r.dp = 48;
    r.sp = m.tp > 1;
    r.overlap.tp_comm = m.tp > 1;
    r.overlap.grad_reduce = r.overlap.param_gather = true;
    r.measure = Measure::kTflops;
    r.measured = m.tflops;
    r.source_flop_per_token = MegatronR08;
    r.note = "recompute not stated: none assumed; micro batch 1 assumed";
    r.framework_version = "0.8";  // Megatron-Core r0.8.0
    rows.push_back(r);
  }
  // SC21 Table 1 (A100 80GB, Selene): TFLOP/s per GPU counting the recomputed forward.
  struct Sc {
    const char* id;
    int64_t l, h, heads, gpus, gbs, mbs, tp, pp, vpp, dp;
    double tflops;
  };
  for (const Sc& m :
       std::vector<Sc>{{"SC21-01", 24, 2304, 24, 32, 512, 16, 1, 1, 1, 32, 137},
                       {"SC21-02", 30, 3072, 32, 64, 512, 16, 2, 1, 1, 32, 138},
                       {"SC21-03", 36, 4096, 32, 128, 512, 16, 4, 1, 1, 32, 142},
                       {"SC21-04", 40, 6144, 48, 256, 1024, 8, 8, 1, 1, 32, 135},
                       {"SC21-05", 48, 8192, 64, 512, 1536, 4, 8, 2, 1, 32, 138},
                       {"SC21-06", 60, 10240, 80, 1024, 1792, 2, 8, 4, 3, 32, 140},
                       {"SC21-07", 80, 12288, 96, 1536, 2304, 2, 8, 8, 2, 24, 148},
                       {"SC21-08", 96, 16384, 128, 1920, 2160, 1, 8, 16, 2, 15, 155},
                       {"SC21-09", 105, 20480, 128, 2520, 2520, 1, 8, 35, 3, 9, 163},
                       {"SC21-10", 128, 25600, 160, 3072, 3072, 1, 8, 64, 1, 6, 163}}) {
    Row r;
    r.id = m.id;
    r.model_label = fmt::format("GPT {}L h{}", m.l, m.h);
    const int64_t l = m.l, h = m.h, heads = m.heads;
    r.model = [=] { return Gpt(l, h, heads, 51200); };
    r.cluster = "a100-8x200g";
    r.gpus = m.gpus;
    r.seq = 2048;
    r.gbs = m.gbs;
    r.mbs = m.mbs;
    r.tp = m.tp;
    r.pp = m.pp;
    r.vpp = m.vpp;
    r.dp = m.dp;
    r.recompute = RecomputeGranularity::kFull;
    r.distributed_optimizer = false;
    // Rows 1-4 use torch DDP, which overlaps its bucketed all-reduce with the backward.
    r.overlap.grad_reduce = m.pp == 1 && m.gpus <= 256;
    r.measure = Measure::kTflops;
    r.measured = m.tflops;
    r.source_flop_per_token = Sc21;
    // Megatron-LM of April 2021 (commit 6985e58) predates flash attention: QK^T and AV as
    // batched GEMMs around FusedScaleMaskSoftmax, with Megatron's default attention dropout 0.1
    // (CONFIG.sh passes no --attention-dropout).
    r.attention.kernel = AttentionKernel::kUnfused;
    r.attention.dropout = 0.1;
    r.note =
        "fp16 on the A100's 312 TFLOP/s; plain Adam, fp32 gradient all-reduce; unfused attention "
        "(2021, before flash), dropout 0.1";
    r.framework_version = "6985e58";  // Megatron-LM of April 2021, before megatron-core
    rows.push_back(r);
  }
  // Megatron-LM MoE README: Mixtral 8x7B, 64 H100, TP1 PP4 VPP8 EP8 (mapping paired by inference).
  {
    Row r;
    r.id = "MOE-MIX";
    r.model_label = "Mixtral 8x7B";
    r.model = [] { return Catalog("mixtral-8x7b"); };
    r.cluster = "h100-8x8-ib400";
    r.gpus = 64;
    r.gbs = 256;
    r.pp = 4;
    r.vpp = 8;
    r.ep = 8;
    r.dp = 16;
    r.overlap.grad_reduce = r.overlap.param_gather = true;
    r.measure = Measure::kTflops;
    r.measured = 468;
    r.source_flop_per_token = MegatronMoeV09;
    r.note = "grade C: mapping inferred; recompute not stated (none assumed)";
    r.framework_version = "0.9";
    rows.push_back(r);
  }
  auto ms = [&](const char* id, const char* label, std::function<ModelConfig()> model,
                const char* cluster, const char* gpu, int64_t gpus, double seq, int64_t gbs,
                int64_t tp, int64_t pp, int64_t ep, int64_t dp, RecomputeGranularity rc,
                double step_s, const char* note) {
    Row r;
    r.id = id;
    r.model_label = label;
    r.model = std::move(model);
    r.cluster = cluster;
    r.gpu = gpu;
    r.gpus = gpus;
    r.seq = seq;
    r.gbs = gbs;
    r.tp = tp;
    r.pp = pp;
    r.ep = ep;
    r.dp = dp;
    r.sp = tp > 1;
    r.recompute = rc;
    r.measured = step_s;
    r.note = note;
    // megatron sft (zero1) and swift sft (DeepSpeed) alike: ms-swift, release not stated.
    r.framework = "ms-swift";
    return r;
  };
  const auto sel = RecomputeGranularity::kSelective;
  const auto full = RecomputeGranularity::kFull;
  rows.push_back(ms(
      "MS-01", "Qwen2.5-14B",
      [] { return QwenDense("qwen2.5-14b", 48, 5120, 40, 8, 13824, 152064, false); }, "a100-8x200g",
      "A800", 8, 8192, 16, 4, 1, 1, 2, sel, 9.04,
      "packed to 8,192 tokens per sample (tokens per step an upper bound)"));
  rows.push_back(ms(
      "MS-02", "Qwen3-30B-A3B", [] { return Catalog("qwen3-30b-a3b"); }, "a100-8x200g", "A800", 16,
      8192, 16, 1, 2, 8, 8, full, 9.6,
      "packed; 2 nodes of A800 (network assumed as the A100 pod's)"));
  // The scripts set decoder_last_pipeline_num_layers: 24 layers as 13 + 11, 27 as 14 + 13.
  Row ms03 = ms("MS-03", "Qwen1.5-MoE-A2.7B", Qwen15Moe, "a100-8x200g", "", 8, 8192, 16, 1, 2, 4, 4,
                full, 2.95, "grade C; GPU type not stated (A100 80GB assumed); uneven PP 13/11");
  ms03.overlap.grad_reduce = ms03.overlap.param_gather = true;
  ms03.last_stage_layers = 11;
  rows.push_back(ms03);
  Row ms04 = ms("MS-04", "Moonlight-16B-A3B", Moonlight, "a100-8x200g", "", 8, 8192, 16, 1, 2, 4, 4,
                full, 9.0, "grade C; GPU type not stated (A100 80GB assumed); uneven PP 14/13");
  ms04.last_stage_layers = 13;
  rows.push_back(ms04);
  rows.push_back(ms(
      "MS-06", "Qwen3-14B",
      [] { return QwenDense("qwen3-14b", 40, 5120, 40, 8, 17408, 151936, true); }, "h20-5x8", "", 8,
      8192, 16, 4, 1, 1, 2, sel, 13.0, "packed; H20 96GB"));
  // MS-07 trains on ZhipuAI/LongWriter-6k, whose samples ms-swift's dataset table gives as
  // "5009.0±2932.8, min=117, max=30354" tokens (modelscope/ms-swift docs/source_en/Instruction/
  // Supported-models-and-datasets.md @ 009f37a3d66c3eee3014e4629cbd90105f941c6b, "Statistic
  // (token)"; scripts/utils/run_dataset_info.py: Qwen2.5 tokenizer and template, no truncation).
  Row ms07 = ms(
      "MS-07", "Qwen2.5-7B",
      [] { return QwenDense("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, false); }, "a100-8x200g",
      "", 4, 32768, 8, 4, 1, 1, 1, full, 23.0,
      "packed to 32K; 4 A100 80GB; LongWriter-6k samples 5,009 +- 2,933 tokens: attention sees "
      "6,726");
  ms07.sample_mean = 5009.0;
  ms07.sample_std = 2932.8;
  rows.push_back(ms07);
  // The training modes (ZeRO-2/3, FP8) make these rows expressible.
  // MS-05: the FP8 twin of MS-06 (Megatron-SWIFT, TE blockwise FP8 with --fp8-param-gather and
  // the precision-aware optimizer's bf16 moments).
  Row ms05 = ms(
      "MS-05", "Qwen3-14B FP8",
      [] { return QwenDense("qwen3-14b", 40, 5120, 40, 8, 17408, 151936, true); }, "h20-5x8", "", 8,
      8192, 16, 4, 1, 1, 2, sel, 8.0,
      "packed; H20 96GB; FP8 blockwise, fp8_param_gather, bf16 moments");
  ms05.fp8 = Fp8Recipe::kBlockwise;
  ms05.fp8_param_gather = true;
  ms05.moment_bytes = 2;
  rows.push_back(ms05);
  // MS-01's header: "DeepSpeed ZeRO2/ZeRO3 on same task: 10.32/10.56 s/it" (swift sft on the
  // 8 A800): every GPU a DP rank, the same 16 packed samples per step.
  for (const auto& [id, mode, step_s] : std::vector<std::tuple<const char*, ShardingMode, double>>{
           {"MS-01-Z2", ShardingMode::kZero2, 10.32}, {"MS-01-Z3", ShardingMode::kZero3, 10.56}}) {
    Row r = ms(
        id, "Qwen2.5-14B",
        [] { return QwenDense("qwen2.5-14b", 48, 5120, 40, 8, 13824, 152064, false); },
        "a100-8x200g", "A800", 8, 8192, 16, 1, 1, 1, 8, full, step_s,
        "DeepSpeed under swift sft, ASSUMED: micro batch 1, gradient checkpointing, bf16 "
        "gradients, overlap_comm");
    r.sharding = mode;
    r.grad_bytes = 2;
    r.overlap.grad_reduce = true;
    rows.push_back(r);
  }
  // MS-02's header: "DeepSpeed ZeRO3: 91.2 s/it" for Qwen3-30B-A3B on the 16 A800 (no EP).
  Row ms02z3 = ms(
      "MS-02-Z3", "Qwen3-30B-A3B", [] { return Catalog("qwen3-30b-a3b"); }, "a100-8x200g", "A800",
      16, 8192, 16, 1, 1, 1, 16, full, 91.2,
      "DeepSpeed ZeRO-3 under swift sft (HF experts, no EP); ASSUMED as MS-01-Z3");
  ms02z3.sharding = ShardingMode::kZero3;
  // swift's zero3.json sets stage3_prefetch_bucket_size "auto", which the HF Trainer fills with
  // 0.9 x hidden^2 = 0.9 x 2048^2 = 3,774,873 parameters; the MoE block is fetched whole (a
  // ZeRO-3 leaf module: 128 experts x 3 x 2048 x 768 + router 128 x 2048 = 604,241,920), so the
  // prefetch reaches 3,774,873 / 604,241,920 = 0.00625 of the next layer.
  ms02z3.prefetch_layers = 3'774'873.0 / 604'241'920.0;
  ms02z3.grad_bytes = 2;
  ms02z3.overlap.grad_reduce = true;
  rows.push_back(ms02z3);
  return rows;
}

// Held out: published throughputs from outside the project (tests/sim/validation/held_out.yaml,
// one entry a row with its source), never used to choose a constant.
struct HeldOut {
  std::vector<Row> rows;
  std::vector<std::string> left_out;  // "release system model precision: reason"
};

Fp8Recipe PrecisionRecipe(const std::string& name) {
  if (name == "tensorwise") return Fp8Recipe::kTensorwise;
  if (name == "mxfp8") return Fp8Recipe::kMxfp8;
  if (name == "blockwise") return Fp8Recipe::kBlockwise;
  EXPECT_EQ(name, "none");
  return Fp8Recipe::kNone;
}

HeldOut LoadHeldOut() {
  HeldOut h;
  const YAML::Node top = YAML::Load(testing::ReadTestFile("sim/validation/held_out.yaml"));
  for (const YAML::Node& e : top["rows"]) {
    Row r;
    r.id = e["id"].as<std::string>();
    r.model_label = e["label"].as<std::string>();
    const std::string name = e["model"].as<std::string>();
    r.model = [name] { return Catalog(name); };
    // DGX H100 / B200 / B300: 8 GPUs on NVSwitch, one InfiniBand NIC per GPU. GB200 and GB300
    // NVL72: one NVLink domain up to 72 GPUs; a larger run spans racks, ASSUMED 64 GPUs of each
    // (16 of its 18 compute trays: 256 = 4 x 64), one NIC per GPU between racks, so that a group
    // of up to 64 GPUs stays on NVLink as the rack-aware launcher places it. The NIC: 400 Gb/s
    // ConnectX-7 on H100, B200 and GB200 (the cluster file's); Blackwell Ultra systems carry one
    // 800 Gb/s ConnectX-8 per GPU on PCIe Gen6 (NVIDIA DGX B300 datasheet: 8 single-port
    // ConnectX-8 VPI, up to 800 Gb/s; GB300 NVL72 datasheet: 72 ConnectX-8 SuperNICs).
    r.cluster = "h100-8x8-ib400";
    r.gpu = e["gpu"].as<std::string>();
    r.gpus = e["gpus"].as<int64_t>();
    if (r.gpu == "GB200" || r.gpu == "GB300") r.nvlink_domain = r.gpus <= 72 ? r.gpus : 64;
    if (r.gpu == "B300" || r.gpu == "GB300") {
      r.data_nic_gbit = 800;
      r.nic_pcie_generation = 6;
    }
    const YAML::Node l = e["layout"], b = e["batch"];
    r.tp = l["tp"].as<int64_t>();
    r.pp = l["pp"].as<int64_t>();
    r.vpp = l["vpp"].as<int64_t>();
    r.cp = l["cp"].as<int64_t>();
    r.ep = l["ep"].as<int64_t>();
    r.gbs = b["global"].as<int64_t>();
    r.mbs = b["micro"].as<int64_t>();
    r.seq = b["sequence"].as<double>();
    r.dp = r.gpus / (r.tp * r.pp * r.cp);
    r.sp = r.tp > 1;
    r.account_for_embedding_and_loss = e["account_for_embedding_and_loss"].as<bool>(false);
    r.balanced_routing = true;  // "we force-balance the token distribution among experts"
    r.fp8 = PrecisionRecipe(e["precision"].as<std::string>());
    r.overlap.tp_comm = r.tp > 1;
    r.overlap.grad_reduce = r.overlap.param_gather = true;
    r.measure = Measure::kTokensPerGpu;
    r.measured = e["tokens_per_gpu"].as<double>();
    r.framework = e["framework"].as<std::string>();
    r.framework_version = e["version"].as<std::string>();
    r.note = e["note"].as<std::string>();
    r.fused_expert_mlp = e["fused_expert_mlp"].as<bool>(false);
    EXPECT_FALSE(e["source"].as<std::string>("").empty()) << r.id << ": every row cites its source";
    h.rows.push_back(r);
  }
  for (const YAML::Node& e : top["left_out"]) {
    h.left_out.push_back(fmt::format("{} {} {} {}: {}", e["release"].as<std::string>(),
                                     e["system"].as<std::string>(), e["model"].as<std::string>(),
                                     e["precision"].as<std::string>(),
                                     e["reason"].as<std::string>()));
  }
  return h;
}

struct Outcome {
  std::string id, model, layout, measured_text, note;
  double measured_step = 0, predicted_step = 0, error = 0;
  std::string predicted_text;
  double error_before = 0;  // the kernels alone, no framework profile (the model before it)
  std::string framework;
  std::string gpu, precision, model_kind;  // the held-out breakdowns' keys
  std::string family;                      // StepFamily: the error band it belongs to
  std::string layout_family;               // StepLayoutFamilyOf: its EP layout's family
  std::string catalog_model, catalog_gpu;  // the model and GPU by catalog name
};

Outcome Evaluate(const Row& row, const KernelEfficiencyFile& eff, const Interconnects& links,
                 const FrameworkCatalog& frameworks) {
  Outcome o;
  o.id = row.id;
  o.model = row.model_label;
  o.note = row.note;
  ModelConfig model = row.model();
  auto cluster = LoadCluster(row.cluster);
  EXPECT_TRUE(cluster.ok()) << row.id;
  Cluster c = *cluster;
  if (!row.gpu.empty()) {
    auto gpu = FindGpu(row.gpu);
    EXPECT_TRUE(gpu.ok()) << row.id;
    c.gpu = *gpu;
  }
  if (row.data_nic_gbit > 0) {
    for (NicGroup& n : c.nics) {
      if (n.role == NicRole::kData) n.speed = BytesPerSecond::Gbps(row.data_nic_gbit);
    }
    c.pcie_generation = row.nic_pcie_generation;
  }
  if (row.nvlink_domain > 0) {
    // The file's data NICs are one per GPU: keep that ratio on the wider node.
    for (NicGroup& n : c.nics) {
      if (n.role == NicRole::kData) n.count = n.count * row.nvlink_domain / c.gpus_per_node;
    }
    c.gpus_per_node = row.nvlink_domain;
  }
  c.nodes = std::max<int64_t>(1, row.gpus / c.gpus_per_node);
  if (row.gpus < c.gpus_per_node) c.gpus_per_node = row.gpus;
  StepTableInputs in;
  in.model = &model;
  in.sequence = SequenceLengths::Fixed(row.seq);
  in.gpu = &c.gpu;
  in.efficiency = &eff;
  in.attention = row.attention;
  if (row.sample_mean > 0) {
    in.packed = true;
    in.packed_attention_tokens = PackedAttentionTokens(row.sample_mean, row.sample_std, row.seq);
  }
  StepTables tables = BuildStepTables(in);
  if (row.balanced_routing) tables.efficiency.moe_routing_skew = 1;
  StepLayout s;
  s.layout = {row.tp, row.pp, row.vpp, row.cp, row.ep, 1, row.dp, row.sp};
  s.layout.account_for_embedding = s.layout.account_for_loss = row.account_for_embedding_and_loss;
  s.micro_batch = row.mbs;
  s.micro_batches = row.gbs / (row.mbs * row.dp);
  s.recompute = row.recompute;
  s.overlap = row.overlap;
  s.distributed_optimizer = row.distributed_optimizer;
  s.grad_bytes = row.grad_bytes;
  s.moment_bytes = row.moment_bytes;
  s.sharding.mode = row.sharding;
  s.sharding.prefetch_layers = row.prefetch_layers;
  s.layout.last_stage_layers = row.last_stage_layers;
  s.fp8.recipe = row.fp8;
  s.fp8.param_gather = row.fp8_param_gather;
  // Whose code runs the row's sharding, as `strata step` derives it (ResolvedJob::
  // RunsMegatronCore): DeepSpeed's ZeRO-2/3 under swift sft follow its overlap_comm,
  // megatron-core's its overlap.grad_reduce.
  const FrameworkSpec row_framework{row.framework, row.framework_version, false, true, ""};
  s.megatron_core =
      ResolveEngineChain(frameworks.engines, row_framework, row.sharding).Runs("megatron-core");
  auto comm = CollectiveModel::Create(c, links);
  EXPECT_TRUE(comm.ok()) << row.id;
  auto before = EvaluateStep(tables, s, *comm);
  JobSpec job;
  job.framework = {row.framework, row.framework_version, false, true, ""};
  job.sharding.mode = row.sharding;
  job.layout = s.layout;
  auto profile = ResolveFramework(frameworks, job, c.gpu.name);
  EXPECT_TRUE(profile.ok()) << row.id;
  // Whose code runs the sharding, as `strata step` reads it from the resolved job (the one
  // answer, job/engine_chain.h). The rows used to leave it false, so swift sft's DeepSpeed
  // ZeRO-3 rows (MS-01-Z3, MS-02-Z3, full recompute) skipped the recomputed forward's third
  // gather per layer that the CLI charges the same job.
  s.runtime = ResolveJobShardingRuntime(frameworks.engines, job, row.sharding);
  if (profile.ok()) tables.framework = *profile;
  tables.framework.fused_expert_mlp = row.fused_expert_mlp;
  tables.framework_counts = CountFrameworkModel(model);
  o.framework = fmt::format("{} {}", tables.framework.name, tables.framework.version);
  o.gpu = c.gpu.name;
  o.precision = row.fp8 == Fp8Recipe::kNone         ? "bf16"
                : row.fp8 == Fp8Recipe::kTensorwise ? "FP8 current scaling"
                : row.fp8 == Fp8Recipe::kMxfp8      ? "MXFP8"
                                                    : "FP8 blockwise";
  o.family = std::string(StepFamilyOf(model.moe.num_experts > 0, row.balanced_routing));
  o.layout_family = StepLayoutFamilyOf(s.layout, c.gpus_per_node);
  o.catalog_model = model.name;
  o.catalog_gpu = c.gpu.name;
  o.model_kind = model.moe.num_experts > 0
                     ? fmt::format("MoE, {} experts of width {}", model.moe.num_experts,
                                   model.moe.expert_intermediate_size)
                     : "dense";
  auto r = EvaluateStep(tables, s, *comm);
  EXPECT_TRUE(r.ok()) << row.id << ": " << (r.ok() ? "" : r.error().Format());
  if (!r.ok() || !before.ok()) return o;
  o.layout = fmt::format(
      "TP{} PP{}{}{} EP{} DP{}, mbs {} x {}{}", row.tp, row.pp,
      row.vpp > 1 ? fmt::format(" VPP{}", row.vpp) : "",
      row.cp > 1 ? fmt::format(" CP{}", row.cp) : "", row.ep, row.dp, row.mbs, s.micro_batches,
      row.sharding == ShardingMode::kZero1 ? ""
                                           : fmt::format(", {}", ShardingModeName(row.sharding)));
  o.predicted_step = r->step.s();
  if (row.measure == Measure::kTokensPerGpu) {
    const double tokens = static_cast<double>(row.gbs) * row.seq;
    const double gpus = static_cast<double>(row.gpus);
    o.measured_step = tokens / (row.measured * gpus);
    o.measured_text = fmt::format("{:.0f} tokens/s/GPU", row.measured);
    o.predicted_text = fmt::format("{:.0f} tokens/s/GPU", tokens / (o.predicted_step * gpus));
  } else if (row.measure == Measure::kStepTime) {
    o.measured_step = row.measured;
    o.measured_text = fmt::format("{:.2f} s/step", row.measured);
    o.predicted_text = fmt::format("{:.2f} s/step", o.predicted_step);
  } else {
    const double flop_per_step =
        row.source_flop_per_token(model, row.seq) * static_cast<double>(row.gbs) * row.seq;
    o.measured_step = flop_per_step / (row.measured * 1e12 * static_cast<double>(row.gpus));
    o.measured_text = fmt::format("{:.1f} TFLOP/s", row.measured);
    o.predicted_text = fmt::format(
        "{:.1f} TFLOP/s", flop_per_step / o.predicted_step / static_cast<double>(row.gpus) / 1e12);
  }
  o.error = (o.predicted_step - o.measured_step) / o.measured_step;
  o.error_before = (before->step.s() - o.measured_step) / o.measured_step;
  return o;
}

Outcome ReferenceRow() {
  Outcome o;
  auto ref = testing::LoadReferenceStep();
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  StepTables kernels_only = ref.setup.tables;
  kernels_only.framework = FrameworkProfile{};
  auto before = EvaluateStep(kernels_only, ref.setup.layout, *ref.comm);
  EXPECT_TRUE(r.ok() && before.ok());
  if (!r.ok() || !before.ok()) return o;
  o.framework =
      fmt::format("{} {}", ref.setup.tables.framework.name, ref.setup.tables.framework.version);
  o.error_before = (before->step.s() - 120.0) / 120.0;
  o.id = "SEED-01";
  o.family = std::string(StepFamily(ref.setup.job));
  o.layout_family = StepLayoutFamilyOf(ref.setup.job.layout(), ref.setup.job.cluster.gpus_per_node);
  // No model or GPU: the course's run is the oracle the reference job is checked against, and
  // the record of a model's runs printed beside that job must not quote it back as a step.
  o.catalog_model.clear();
  o.model = "Qwen3.6-35B-A3B";
  o.layout = "TP1 PP1 EP8 DP40, mbs 1 x 2";
  o.measured_step = 120;
  o.measured_text = "120 s/step";
  o.predicted_step = r->step.s();
  o.predicted_text = fmt::format("{:.2f} s/step", o.predicted_step);
  o.error = (o.predicted_step - o.measured_step) / o.measured_step;
  o.note = "the reference job file; lengths mean 29K, max 49,152 (distribution assumed uniform)";
  return o;
}

// Median and p90 (nearest rank) of the absolute errors.
struct ErrorStats {
  double median = 0, p90 = 0, max = 0;
  size_t within10 = 0, within25 = 0, n = 0;
  std::string worst;
};

ErrorStats Stats(const std::vector<Outcome>& outcomes, bool before) {
  ErrorStats st;
  std::vector<double> e;
  double worst = -1;
  for (const Outcome& o : outcomes) {
    const double x = std::abs(before ? o.error_before : o.error);
    e.push_back(x);
    if (x > worst) {
      worst = x;
      st.worst = o.id;
    }
  }
  std::sort(e.begin(), e.end());
  st.n = e.size();
  if (e.empty()) return st;
  st.median = st.n % 2 ? e[st.n / 2] : (e[st.n / 2 - 1] + e[st.n / 2]) / 2;
  st.p90 = e[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(st.n))) - 1];
  st.max = e.back();
  for (double x : e) {
    st.within10 += x <= 0.10;
    st.within25 += x <= 0.25;
  }
  return st;
}

constexpr const char* kTableHead =
    "| row | model | GPUs layout | framework | measured | predicted | measured step (s) | "
    "predicted step (s) | error | kernels alone | note |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n";

std::string TableRows(const std::vector<Outcome>& outcomes) {
  std::string doc;
  for (const Outcome& o : outcomes) {
    doc += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {:+.1f}% | {} |\n", o.id,
        o.model, o.layout, o.framework, o.measured_text, o.predicted_text, o.measured_step,
        o.predicted_step, 100 * o.error, 100 * o.error_before, o.note);
  }
  return doc;
}

std::string StatsLine(const char* set, const std::vector<Outcome>& outcomes) {
  const ErrorStats before = Stats(outcomes, true), after = Stats(outcomes, false);
  return fmt::format(
      "{} ({} rows), |error|: median {:.1f}%, p90 {:.1f}%, maximum {:.1f}% ({}); within 10%: "
      "{}, within 25%: {}. Before the framework profile (the kernels alone): median {:.1f}%, "
      "p90 {:.1f}%, maximum {:.1f}% ({}).\n",
      set, after.n, 100 * after.median, 100 * after.p90, 100 * after.max, after.worst,
      after.within10, after.within25, 100 * before.median, 100 * before.p90, 100 * before.max,
      before.worst);
}

std::string Render(const std::vector<Outcome>& outcomes, const std::vector<Outcome>& held_out) {
  std::string doc = R"(# Step-time model: validation against measured runs

Generated by `tests/sim/step_validation_test.cc` (it fails when this file differs from what the
model computes; `UPDATE_GOLDEN=1` rewrites it). Every row of
`../shared/reference/dev-measurements.md` that gives a step time or TFLOP/s is here. TFLOP/s rows
are turned into a measured step time with the source's own FLOP formula (see the test's header),
so the comparison is always predicted vs measured step time; the predicted TFLOP/s column uses
the same formula. Constants come from `data/kernel_efficiency.yaml`, `data/interconnects.yaml`
and `data/frameworks.yaml`; none was fitted to a row. Error = (predicted - measured) / measured.

The rows are split in two, and the split was made before the framework profile's constants
were chosen: the **fit set** (the rows of `../shared/reference/dev-measurements.md`, which the
model was built against) and the **held-out set** (Megatron-Bridge's published throughputs,
below, never used to choose a constant). No constant of `data/frameworks.yaml` was derived from
a row of either set (each entry's `rows: []` says so): they come from framework sources,
published figures and the H200 kernel measurements. Each row names the framework and release
the source says ran it (a release the source does not state is the latest the data file knows);
"kernels alone" is the same row without the framework profile, as the model stood before it.

)";
  doc += StatsLine("Fit set", outcomes);
  doc += StatsLine("Held-out set", held_out);
  doc += "\n## Fit set: the rows of the development measurements\n\n";
  doc += kTableHead;
  doc += TableRows(outcomes);
  doc += "\n" + StatsLine("Fit set", outcomes);
  doc += R"(
Rows from the training modes: MS-05 (FP8 blockwise, the FP8 twin of MS-06) and the DeepSpeed
runs the ms-swift headers report next to MS-01 (ZeRO-2, ZeRO-3) and MS-02 (ZeRO-3). Every row of
the measurements with a step time is now expressible.
)";
  return doc;
}

// One line of a breakdown: the held-out rows that share a key.
std::string Breakdown(const char* title, const std::vector<Outcome>& outcomes,
                      const std::function<std::string(const Outcome&)>& key) {
  std::vector<std::string> keys;
  for (const Outcome& o : outcomes) {
    if (std::find(keys.begin(), keys.end(), key(o)) == keys.end()) keys.push_back(key(o));
  }
  std::sort(keys.begin(), keys.end());
  std::string doc = fmt::format(
      "\n| {} | rows | median abs error | p90 | max | within 10% | within 25% | median signed "
      "error |\n|---|---|---|---|---|---|---|---|\n",
      title);
  for (const std::string& k : keys) {
    std::vector<Outcome> group;
    std::vector<double> signed_errors;
    for (const Outcome& o : outcomes) {
      if (key(o) != k) continue;
      group.push_back(o);
      signed_errors.push_back(o.error);
    }
    const ErrorStats st = Stats(group, false);
    std::sort(signed_errors.begin(), signed_errors.end());
    const size_t n = signed_errors.size();
    const double median_signed =
        n % 2 ? signed_errors[n / 2] : (signed_errors[n / 2 - 1] + signed_errors[n / 2]) / 2;
    doc += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {} | {} | {:+.1f}% |\n", k, st.n,
                       100 * st.median, 100 * st.p90, 100 * st.max, st.within10, st.within25,
                       100 * median_signed);
  }
  return doc;
}

// The held-out table: the same columns, its own summary line, the breakdowns and the rows left
// out.
std::string RenderHeldOut(const std::vector<Outcome>& outcomes,
                          const std::vector<std::string>& left_out) {
  std::string doc = R"(
## Held out: published runs from outside the project

Rows that were not in `../shared/reference/dev-measurements.md` and were not looked at while the
constants were chosen (one exception, `fp8_gemm`, is told in the notes below), one entry each in
`tests/sim/validation/held_out.yaml` with its source (repository, file, commit, table) and every
assumption. Nothing is fitted to them. Sources: NVIDIA-NeMo/Megatron-Bridge
`docs/performance-summary.md` and `docs/performance-summary-archive.md` (commit 067f987): the
pre-training tables of every NeMo container from 25.09 to 26.08 (patch releases 26.02.01, 26.04.01
and 26.06.01 included) on DGX-H100, DGX-B200, DGX-B300, GB200 and GB300; the first eight rows
(MB-H100-*, MB-B200-*) are the 26.02 tables at commit df0289c. The same layout measured in two
releases is kept as two rows, the release in the framework column. Step = global batch x sequence /
(tokens/s/GPU x GPUs). Assumptions common to every row: the MoE runs force-balance the tokens among
experts ("we force-balance the token distribution among experts"; no routing skew); recompute and
the overlap flags are not published (none; gradient reduce, parameter gather and TP overlapped),
the fastest choice, so errors lean optimistic; GB200 and GB300 runs of up to 72 GPUs share one
NVLink domain; larger ones span racks, ASSUMED 64 GPUs of each (256 = 4 x 64), one NIC per GPU
between racks (400 Gb/s on GB200, DGX-B200 and DGX-H100; 800 Gb/s ConnectX-8 on GB300 and
DGX-B300). B300 and GB300 have no measured kernel efficiency, sustained clock or FP8 GEMM factor in
`data/kernel_efficiency.yaml`: the defaults apply (not B200's measured ones). Layer counts that do
not split evenly over PP x VP use megatron-core's account-for-embedding/loss split where (layers +
2) divides evenly.

)";
  doc += kTableHead;
  doc += TableRows(outcomes);
  doc += "\n" + StatsLine("Held-out set", outcomes);
  doc += "\n### Held-out errors by framework release, GPU, precision and model\n";
  doc += Breakdown("framework release", outcomes, [](const Outcome& o) { return o.framework; });
  doc += Breakdown("GPU", outcomes, [](const Outcome& o) { return o.gpu; });
  doc += Breakdown("precision", outcomes, [](const Outcome& o) { return o.precision; });
  doc += Breakdown("model", outcomes,
                   [](const Outcome& o) { return fmt::format("{} ({})", o.model, o.model_kind); });
  doc += fmt::format(
      "\n### Published rows left out ({})\n\nEach with the reason it cannot be expressed "
      "(release, system, model, precision: reason).\n\n",
      left_out.size());
  for (const std::string& l : left_out) doc += "- " + l + "\n";
  return doc;
}

TEST(StepValidation, DocumentMatchesTheModel) {
  auto eff = LoadKernelEfficiency();
  ASSERT_TRUE(eff.ok()) << eff.error().Format();
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok());
  auto frameworks = LoadFrameworkCatalog();
  ASSERT_TRUE(frameworks.ok()) << frameworks.error().Format();
  std::vector<Outcome> outcomes;
  for (const Row& row : Rows()) outcomes.push_back(Evaluate(row, *eff, *links, *frameworks));
  outcomes.push_back(ReferenceRow());
  for (const Outcome& o : outcomes) {
    EXPECT_GT(o.predicted_step, 0) << o.id;
    EXPECT_GT(o.measured_step, 0) << o.id;
  }
  const HeldOut corpus = LoadHeldOut();
  EXPECT_GE(corpus.rows.size(), 80u);
  std::vector<Outcome> held_out;
  for (const Row& row : corpus.rows) held_out.push_back(Evaluate(row, *eff, *links, *frameworks));
  for (const Outcome& o : held_out) EXPECT_GT(o.predicted_step, 0) << o.id;
  const std::string doc = Render(outcomes, held_out) + RenderHeldOut(held_out, corpus.left_out) +
                          testing::ReadTestFile("sim/step_validation_notes.md");
  EXPECT_TRUE(testing::MatchesGolden("../docs/step-validation.md", doc));
  // The rows the step's error band is derived from (tests/sim/step_error_band_test.cc).
  std::vector<StepBandRow> band;
  for (const Outcome& o : outcomes) {
    band.push_back({o.id, "fit", o.family, o.predicted_step, o.measured_step, o.catalog_model,
                    o.catalog_gpu, o.layout_family});
  }
  for (const Outcome& o : held_out) {
    band.push_back({o.id, "held_out", o.family, o.predicted_step, o.measured_step, o.catalog_model,
                    o.catalog_gpu, o.layout_family});
  }
  EXPECT_TRUE(testing::MatchesGolden("sim/validation/band_rows/step_validation.tsv",
                                     testing::BandRowsTsv(band)));
  // The README's "How far to trust a number" quotes both sets' figures from this document.
  const ErrorStats fit = Stats(outcomes, false), held = Stats(held_out, false);
  const std::string readme = testing::ReadTestFile("../README.md");
  const std::string quoted = fmt::format(
      "{} held-out runs from outside the project (`docs/step-validation.md`), 6 single-H200 runs | "
      "held out: median absolute error {:.1f}% (p90 {:.1f}%), {} of {} within 25%",
      held.n, 100 * held.median, 100 * held.p90, held.within25, held.n);
  EXPECT_NE(readme.find(quoted), std::string::npos) << "README.md should say: " << quoted;
  const std::string quoted_fit = fmt::format("fit set: median {:.1f}% (p90 {:.1f}%), {} beyond 25%",
                                             100 * fit.median, 100 * fit.p90, fit.n - fit.within25);
  EXPECT_NE(readme.find(quoted_fit), std::string::npos) << "README.md should say: " << quoted_fit;
  // And the reference job's prediction (it went stale once: 48.7 s quoted for 52.9 s).
  bool seed_found = false;
  for (const Outcome& o : outcomes) {
    if (o.id != "SEED-01") continue;
    seed_found = true;
    const std::string reference =
        fmt::format("the reference job: {:.1f} s predicted for {:.0f} s measured", o.predicted_step,
                    o.measured_step);
    EXPECT_NE(readme.find(reference), std::string::npos) << "README.md should say: " << reference;
  }
  EXPECT_TRUE(seed_found) << "the reference row SEED-01 is in the fit set";
}

}  // namespace
}  // namespace strata::step_validation_test
