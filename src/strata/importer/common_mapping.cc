// The cluster and data-parallel fields every mapper shares, and the list of unused settings.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/hw/cluster.h"
#include "strata/importer/framework_mappers.h"
#include "strata/job/training_modes.h"
#include "strata/model/adapter.h"

namespace strata {

namespace {

// A positive integer from the environment of the launch command; an unresolved "$VAR" or a
// non-number is reported with what to pass instead.
Result<std::optional<int64_t>> EnvInt(const MapContext& ctx, const char* name,
                                      const char* strata_flag) {
  auto it = ctx.env.find(name);
  if (it == ctx.env.end()) return std::optional<int64_t>();
  int64_t v = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0) {
    return InvalidInput(fmt::format("{}={} is not a number known before the job runs", name, text))
        .WithHint(fmt::format("pass {} to strata import", strata_flag));
  }
  return std::optional<int64_t>(v);
}

// PYTORCH_CUDA_ALLOC_CONF: comma-separated key:value options (PyTorch's
// c10/cuda/CUDAAllocatorConfig.cpp parses "expandable_segments:True"; its docs, "Optimizing
// memory usage with PYTORCH_CUDA_ALLOC_CONF", list the options). Only expandable_segments
// changes what the ledger predicts; the value is read case-insensitively as PyTorch accepts
// True/False.
void MapAllocatorConf(const MapContext& ctx, JobBuilder& job) {
  auto it = ctx.env.find("PYTORCH_CUDA_ALLOC_CONF");
  if (it == ctx.env.end()) return;
  const std::string& conf = it->second;
  size_t start = 0;
  while (start <= conf.size()) {
    size_t end = conf.find(',', start);
    if (end == std::string::npos) end = conf.size();
    const std::string option = conf.substr(start, end - start);
    const size_t colon = option.find(':');
    if (colon != std::string::npos && option.substr(0, colon) == "expandable_segments") {
      const std::string value = AsciiLower(option.substr(colon + 1));
      if (value == "true" || value == "false") {
        job.Set("framework.expandable_segments", value,
                "environment PYTORCH_CUDA_ALLOC_CONF=" + conf);
      } else {
        job.Note(
            fmt::format("PYTORCH_CUDA_ALLOC_CONF={}: expandable_segments is neither True "
                        "nor False; the allocator's default (off) is assumed",
                        conf));
      }
    }
    start = end + 1;
  }
}

// "environment NNODES", or "NNODES=2 (cluster.sh:3)" when a sourced file set it.
std::string EnvSource(const MapContext& ctx, const std::string& name) {
  auto it = ctx.env_origin.find(name);
  if (it == ctx.env_origin.end()) return "environment " + name;
  return fmt::format("{}={} ({})", name, ctx.env.at(name), it->second);
}

}  // namespace

namespace {

// The adapter's layers as the framework names them (a YAML list, "q_proj,v_proj", or one name;
// "all" and "all-linear" for every linear layer), checked against strata's names.
// The names of a list setting however it was written: a YAML or JSON list ("[a, b]",
// '["a","b"]', a block list of "- a" lines), "a,b", or a flag's words joined by spaces.
std::vector<std::string> ListWords(std::string text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(",\n", start);
    if (end == std::string::npos) end = text.size();
    std::string name(TrimSpace(text.substr(start, end - start)));
    if (name.starts_with("- ")) name = std::string(TrimSpace(name.substr(2)));  // a block list
    if (name.size() >= 2 && (name.front() == '"' || name.front() == '\'')) {
      name = name.substr(1, name.size() - 2);
    }
    std::istringstream parts(name);
    for (std::string one; parts >> one;) names.push_back(one);
    start = end + 1;
  }
  return names;
}

Status SetAdapterTargets(const SourcedValue& v, JobBuilder& job) {
  std::vector<std::string> names = ListWords(v.value);
  for (std::string& name : names) {
    if (name == "all") name = "all-linear";  // LLaMA-Factory's lora_target: all
  }
  const std::vector<std::string>& known = PeftTargetNames();  // HF code: PEFT's names
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidInput(fmt::format("adapter target '{}' ({}): strata models adapters on the "
                                      "decoder's linear layers {}",
                                      name, v.source, fmt::join(known, ", ")))
          .WithHint(ClosestMatch(name, known).empty()
                        ? "a model that names its layers otherwise (a fused c_attn, W_pack or "
                          "query_key_value): give the Llama-style equivalent with --set "
                          "adapter.targets=[q_proj, k_proj, v_proj]"
                        : DidYouMeanHint(name, known));
    }
  }
  if (names.empty()) {
    return InvalidInput(fmt::format("{} names no layer for the adapters", v.source));
  }
  job.Set("adapter.targets", fmt::format("[{}]", fmt::join(names, ", ")), v.source);
  return OkStatus();
}

}  // namespace

Status SetRecomputeModules(const SourcedValue& v, JobBuilder& job) {
  const std::vector<std::string> names = ListWords(v.value);
  if (names.empty()) {
    return InvalidInput(fmt::format("{} names no module to recompute", v.source))
        .WithHint(
            fmt::format("megatron-core's modules: {}", fmt::join(RecomputeModuleNames(), ", ")));
  }
  RecomputeModules check;
  for (const std::string& name : names) {
    if (!SetRecomputeModule(check, name)) {
      return InvalidInput(
                 fmt::format("recompute module '{}' ({}): strata models megatron-core's {}", name,
                             v.source, fmt::join(RecomputeModuleNames(), ", ")))
          .WithHint(DidYouMeanHint(name, RecomputeModuleNames()));
    }
  }
  job.Set("recompute.modules", fmt::format("[{}]", fmt::join(names, ", ")), v.source);
  return OkStatus();
}

namespace {

// The targets as the framework names them, unless `--set adapter.targets=...` replaces them
// (a model whose layers are named otherwise, as the error for them suggests).
Status MapAdapterTargets(const SourcedValue* v, const MapContext& ctx, JobBuilder& job,
                         const std::string& fallback, const std::string& why) {
  for (const std::string& o : ctx.options->overrides) {
    if (o.starts_with("adapter.targets=")) return OkStatus();  // set after the mapping
  }
  if (v != nullptr) return SetAdapterTargets(*v, job);
  job.Default("adapter.targets", fallback, why);
  return OkStatus();
}

// One adapter setting: the value given, else the framework's default (named).
void AdapterNumber(Settings& s, JobBuilder& job, const char* key, const char* field,
                   const std::string& fallback, const std::string& why) {
  if (const SourcedValue* v = s.Use(key)) {
    job.Set(field, v->value, v->source);
  } else {
    job.Default(field, fallback, why);
  }
}

// `swift sft`'s tuner (ms-swift's Command-line-parameters, Base Arguments: train_type, renamed
// tuner_type in 4.x, "Default is 'lora'" for swift sft; 'full' for megatron sft, which is mapped
// elsewhere): LoRA with lora_rank 8, lora_alpha 32, lora_dropout 0.05, target_modules
// all-linear; use_dora; quant_bits 4 with bitsandbytes (quant_method bnb) is QLoRA.
Status MapSwiftAdapter(Settings& s, const MapContext& ctx, JobBuilder& job) {
  const SourcedValue* given = s.Use("train_type");
  if (given == nullptr) given = s.Use("tuner_type");
  const std::string type = given != nullptr ? given->value : "lora";
  const std::string source = given != nullptr
                                 ? given->source
                                 : std::string(
                                       "ms-swift's train_type (tuner_type) defaults to lora for "
                                       "swift sft");
  if (type != "lora" && type != "lora_llm") return OkStatus();  // full, or noted (NoteTuningMode)
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> bits, s.Int("quant_bits"));
  STRATA_ASSIGN_OR_RETURN(std::optional<bool> dora, s.Bool("use_dora"));
  const std::string method = s.String("quant_method").value_or("bnb");
  if (bits && *bits == 4 && method == "bnb") {
    job.Set("adapter.kind", "qlora", source + " with quant_bits 4");
  } else {
    job.Set("adapter.kind", dora.value_or(false) ? "dora" : "lora",
            dora.value_or(false) ? source + " with use_dora" : source);
  }
  if (type == "lora_llm") {
    job.Note(
        "train_type lora_llm: LoRA on the language model, full fine-tuning of the vision "
        "tower and aligner; strata counts the adapters on the language model and the tower "
        "as the job's frozen: list says");
  }
  AdapterNumber(s, job, "lora_rank", "adapter.rank", "8", "ms-swift's lora_rank defaults to 8");
  AdapterNumber(s, job, "lora_alpha", "adapter.alpha", "32",
                "ms-swift's lora_alpha defaults to 32");
  AdapterNumber(s, job, "lora_dropout", "adapter.dropout", "0.05",
                "ms-swift's lora_dropout defaults to 0.05");
  return MapAdapterTargets(s.Use("target_modules"), ctx, job, "[all-linear]",
                           "ms-swift's target_modules defaults to all-linear");
}

}  // namespace

// `megatron sft`'s tuner (ms-swift's Megatron-SWIFT Command-line-parameters, Tuner Parameters,
// modelscope/ms-swift@0139392): train_type (tuner_type in 4.x) defaults to full; LoRA with
// lora_rank 8, lora_alpha 32, lora_dropout 0.05 on target_modules, suffixes of megatron-core's
// module names, default all-linear: every linear of the decoder, which in megatron-core are the
// fused linear_qkv and linear_fc1 and the linear_proj and linear_fc2 (one adapter each; on MoE
// layers one per routed expert and one on the shared expert), and on a Gated DeltaNet model its
// in_proj_qkvz, in_proj_ba and out_proj; all-router adds the TopKRouter
// (modelscope/ms-swift@3602360: swift/megatron/utils/utils.py, get_target_modules). all-linear
// stays as written here and is resolved against the model with the job (MegatronAllLinear).
Status MapMegatronSwiftAdapter(Settings& s, const MapContext& ctx, JobBuilder& job) {
  const SourcedValue* given = s.Use("train_type");
  if (given == nullptr) given = s.Use("tuner_type");
  if (given == nullptr || given->value != "lora") return OkStatus();  // full, or NoteTuningMode
  job.Set("adapter.kind", "lora", given->source);
  AdapterNumber(s, job, "lora_rank", "adapter.rank", "8",
                "Megatron-SWIFT's lora_rank defaults to 8");
  AdapterNumber(s, job, "lora_alpha", "adapter.alpha", "32",
                "Megatron-SWIFT's lora_alpha defaults to 32");
  AdapterNumber(s, job, "lora_dropout", "adapter.dropout", "0.05",
                "Megatron-SWIFT's lora_dropout defaults to 0.05");
  for (const std::string& o : ctx.options->overrides) {
    if (o.starts_with("adapter.targets=")) return OkStatus();  // set after the mapping
  }
  if (const SourcedValue* regex = s.Use("target_regex")) {
    return InvalidInput(fmt::format("target_regex '{}' ({}): strata cannot tell which layers a "
                                    "regular expression matches",
                                    regex->value, regex->source))
        .WithHint(
            "give the layers with --set adapter.targets=[linear_qkv, linear_proj, "
            "linear_fc1, linear_fc2]");
  }
  // megatron-core's own names and the nn.Linear projections of transformers' Gated DeltaNet
  // module, which Megatron-SWIFT runs inside megatron-core for Qwen3-Next.
  std::vector<std::string> megatron = MegatronTargetNames();
  megatron.insert(megatron.end(), {"in_proj_qkvz", "in_proj_ba", "out_proj"});
  const SourcedValue* v = s.Use("target_modules");
  if (v == nullptr) {
    job.Default("adapter.targets", "[all-linear]",
                "Megatron-SWIFT's target_modules defaults to all-linear: megatron-core's fused "
                "linear_qkv and linear_fc1, linear_proj and linear_fc2 (and a Gated DeltaNet's "
                "projections)");
    return OkStatus();
  }
  std::vector<std::string> names;
  bool all_linear = false;
  bool all_router = false;
  for (const std::string& one : ListWords(v->value)) {  // every word checked, in any order
    if (one == "all-linear") {
      all_linear = true;
      continue;
    }
    if (one == "all-router") {
      all_router = true;
      continue;
    }
    if (std::find(megatron.begin(), megatron.end(), one) == megatron.end()) {
      return InvalidInput(fmt::format("target_modules '{}' ({}): strata models adapters on "
                                      "megatron-core's decoder linears {}",
                                      one, v->source, fmt::join(megatron, ", ")))
          .WithHint(one == "all-embedding"
                        ? std::string("adapters on the embeddings are not modelled; drop "
                                      "all-embedding or set adapter.targets with --set")
                        : DidYouMeanHint(one, megatron));
    }
    if (std::find(names.begin(), names.end(), one) == names.end()) names.push_back(one);
  }
  if (all_router && std::find(names.begin(), names.end(), "router") == names.end()) {
    names.emplace_back("router");
  }
  if (all_linear) {
    // Resolved against the model with the job; all-router's TopKRouter stays beside it.
    names.insert(names.begin(), "all-linear");
    job.Set("adapter.targets", fmt::format("[{}]", fmt::join(names, ", ")),
            v->source +
                " all-linear (megatron-core's fused linear_qkv and linear_fc1, "
                "linear_proj and linear_fc2, and a Gated DeltaNet's projections)");
    return OkStatus();
  }
  if (names.empty()) return InvalidInput(fmt::format("{} names no layer", v->source));
  job.Set("adapter.targets", fmt::format("[{}]", fmt::join(names, ", ")), v->source);
  return OkStatus();
}

// verl's LoRA (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7). The FSDP workers read
// actor_rollout_ref.model.lora_rank (fsdp_workers.py:187-188, LoRA when above 0), lora_alpha and
// target_modules into PEFT's LoraConfig (466-467; _generated_ppo_trainer.yaml:307-309 defaults
// 0, 16, all-linear); the megatron workers pass actor_rollout_ref.model.lora to Megatron-Bridge
// (megatron_workers.py:418; _generated_ppo_megatron_trainer.yaml:346-356 defaults rank 0, alpha
// 32, dropout 0.0, target_modules [linear_qkv, linear_proj, linear_fc1, linear_fc2]).
Status MapVerlAdapter(Settings& s, const MapContext& ctx, JobBuilder& job, bool megatron,
                      bool& on) {
  on = false;
  const std::string model = "actor_rollout_ref.model.";
  const std::string rank_key = model + (megatron ? "lora.rank" : "lora_rank");
  const SourcedValue* rank_v = s.Use(rank_key);
  if (rank_v == nullptr) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> rank, s.Int(rank_key));
  if (!rank.has_value() || *rank < 0) {
    return InvalidInput(fmt::format("{} = '{}': expected a whole number of at least 0",
                                    rank_v->source, rank_v->value))
        .InField(rank_key);
  }
  if (*rank == 0) return OkStatus();  // verl's "no LoRA"
  on = true;
  const std::string defaults = fmt::format(
      "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/config/{}",
      megatron ? "_generated_ppo_megatron_trainer.yaml" : "_generated_ppo_trainer.yaml");
  job.Set("adapter.kind", "lora", rank_v->source + " above 0");
  job.Set("adapter.rank", std::to_string(*rank), rank_v->source);
  AdapterNumber(
      s, job,
      megatron ? "actor_rollout_ref.model.lora.alpha" : "actor_rollout_ref.model.lora_alpha",
      "adapter.alpha", megatron ? "32" : "16",
      fmt::format("verl's {} defaults to {} ({}:{})", megatron ? "lora.alpha" : "lora_alpha",
                  megatron ? 32 : 16, defaults, megatron ? 350 : 308));
  if (!megatron) {
    return MapAdapterTargets(
        s.Use(model + "target_modules"), ctx, job, "[all-linear]",
        fmt::format("verl's target_modules defaults to all-linear ({}:309)", defaults));
  }
  AdapterNumber(s, job, "actor_rollout_ref.model.lora.dropout", "adapter.dropout", "0",
                fmt::format("verl's lora.dropout defaults to 0.0 ({}:351)", defaults));
  if (const SourcedValue* type = s.Use(model + "lora.type");
      type != nullptr && type->value != "lora") {
    job.Note(fmt::format("{} = {} ({}): priced as lora on megatron-core's fused linears",
                         model + "lora.type", type->value, type->source));
  }
  for (const std::string& o : ctx.options->overrides) {
    if (o.starts_with("adapter.targets=")) return OkStatus();  // set after the mapping
  }
  const SourcedValue* v = s.Use(model + "lora.target_modules");
  if (v == nullptr) {
    job.Default("adapter.targets", "[linear_qkv, linear_proj, linear_fc1, linear_fc2]",
                fmt::format("verl's lora.target_modules ({}:352-356)", defaults));
    return OkStatus();
  }
  const std::vector<std::string>& known = MegatronTargetNames();
  const std::vector<std::string> names = ListWords(v->value);
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidInput(fmt::format("lora.target_modules '{}' ({}): strata models adapters on "
                                      "megatron-core's {}",
                                      name, v->source, fmt::join(known, ", ")))
          .InField(model + "lora.target_modules")
          .WithHint(DidYouMeanHint(name, known));
    }
  }
  if (names.empty()) return InvalidInput(fmt::format("{} names no layer", v->source));
  job.Set("adapter.targets", fmt::format("[{}]", fmt::join(names, ", ")), v->source);
  return OkStatus();
}

Status MapAdapter(Settings& s, const MapContext& ctx, JobBuilder& job) {
  if (s.Has("use_peft")) {
    // TRL's ModelConfig (huggingface/trl trl/trainer/model_config.py): use_peft, lora_r 16,
    // lora_alpha 32, lora_dropout 0.05, lora_target_modules (None: PEFT picks the model's
    // defaults), load_in_4bit (bitsandbytes NF4), use_dora.
    const std::string source = s.Use("use_peft")->source;
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> peft, s.Bool("use_peft"));
    if (!*peft) return OkStatus();
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> four_bit, s.Bool("load_in_4bit"));
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> dora, s.Bool("use_dora"));
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> nested, s.Bool("use_bnb_nested_quant"));
    if (four_bit.value_or(false)) {
      job.Set("adapter.kind", "qlora", source + " with load_in_4bit");
      if (!nested.value_or(false)) {
        job.Note(
            "load_in_4bit without use_bnb_nested_quant: TRL quantises the base to NF4 without "
            "double quantisation; strata's qlora counts doubly quantised scales (0.127 bits "
            "per weight instead of 0.5, the QLoRA paper's figures)");
      }
      if (dora.value_or(false)) {
        job.Note(
            "use_dora with load_in_4bit: imported as qlora; DoRA's magnitude vectors are "
            "not counted");
      }
    } else {
      job.Set("adapter.kind", dora.value_or(false) ? "dora" : "lora",
              dora.value_or(false) ? source + " with use_dora" : source);
    }
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> eight_bit, s.Bool("load_in_8bit"));
    if (eight_bit.value_or(false) && !four_bit.value_or(false)) {
      job.Note(
          fmt::format("{}: the base weights were 8-bit in the run; strata counts them at "
                      "precision.params",
                      s.Use("load_in_8bit")->source));
    }
    AdapterNumber(s, job, "lora_r", "adapter.rank", "16",
                  "TRL's ModelConfig.lora_r defaults to 16");
    AdapterNumber(s, job, "lora_alpha", "adapter.alpha", "32",
                  "TRL's ModelConfig.lora_alpha defaults to 32");
    AdapterNumber(s, job, "lora_dropout", "adapter.dropout", "0.05",
                  "TRL's ModelConfig.lora_dropout defaults to 0.05");
    STRATA_RETURN_IF_ERROR(MapAdapterTargets(
        s.Use("lora_target_modules"), ctx, job, "[q_proj, v_proj]",
        "no lora_target_modules: PEFT's default for Llama, Mistral and Qwen models "
        "(peft/utils/constants.py)"));
    return OkStatus();
  }
  if (ctx.ms_swift) return MapSwiftAdapter(s, ctx, job);
  const SourcedValue* type = ctx.llamafactory_stage.empty() ? nullptr : s.Use("finetuning_type");
  if (type == nullptr || type->value != "lora") return OkStatus();
  // LLaMA-Factory's FinetuningArguments (src/llamafactory/hparams/finetuning_args.py):
  // lora_rank 8, lora_alpha = 2 x rank, lora_dropout 0, lora_target "all", use_dora; and
  // ModelArguments' quantization_bit 4 (bitsandbytes NF4, double_quantization on by default).
  const std::string source = type->source;
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> bits, s.Int("quantization_bit"));
  STRATA_ASSIGN_OR_RETURN(std::optional<bool> dora, s.Bool("use_dora"));
  STRATA_ASSIGN_OR_RETURN(std::optional<bool> double_quant, s.Bool("double_quantization"));
  const std::string method = s.String("quantization_method").value_or("bnb");
  if (bits && *bits == 4 && method == "bnb") {
    job.Set("adapter.kind", "qlora", source + " lora with quantization_bit 4");
    if (!double_quant.value_or(true)) {
      job.Note(
          "double_quantization false: the base is NF4 without double quantisation; strata's "
          "qlora counts doubly quantised scales (0.127 bits per weight instead of 0.5, the "
          "QLoRA paper's figures)");
    }
  } else {
    if (bits && *bits == 4) {
      job.Note(
          fmt::format("quantization_method {}: a 4-bit base that is not bitsandbytes NF4; "
                      "imported as lora with the base at precision.params",
                      method));
    } else if (bits) {
      job.Note(
          fmt::format("quantization_bit {}: the base weights were {}-bit in the run; "
                      "strata counts them at precision.params",
                      *bits, *bits));
    }
    job.Set("adapter.kind", dora.value_or(false) ? "dora" : "lora",
            dora.value_or(false) ? source + " lora with use_dora" : source + " lora");
  }
  std::string rank = "8";
  if (const SourcedValue* r = s.Use("lora_rank")) {
    rank = r->value;
    job.Set("adapter.rank", rank, r->source);
  } else {
    job.Default("adapter.rank", rank, "LLaMA-Factory's lora_rank defaults to 8");
  }
  if (const SourcedValue* a = s.Use("lora_alpha")) {
    job.Set("adapter.alpha", a->value, a->source);
  } else if (const std::optional<int64_t> r = ParseInt64(rank)) {
    job.Default("adapter.alpha", std::to_string(2 * *r),
                "LLaMA-Factory's lora_alpha defaults to lora_rank x 2");
  }
  AdapterNumber(s, job, "lora_dropout", "adapter.dropout", "0",
                "LLaMA-Factory's lora_dropout defaults to 0");
  STRATA_RETURN_IF_ERROR(MapAdapterTargets(s.Use("lora_target"), ctx, job, "[all-linear]",
                                           "LLaMA-Factory's lora_target defaults to all"));
  return OkStatus();
}

// LoRA and quantised bases are run modes strata does not model: say what the import assumed.
void NoteTuningMode(Settings& s, JobBuilder& job) {
  // ms-swift's train_type, LLaMA-Factory's finetuning_type (lora, freeze, oft); an adapter
  // MapAdapter imported is modelled.
  const SourcedValue* t = s.Use("train_type");
  if (t == nullptr) t = s.Use("tuner_type");
  if (t == nullptr) t = s.Use("finetuning_type");
  if (t != nullptr && t->value != "full" && !job.Has("adapter.kind")) {
    job.Note(fmt::format(
        "{} {}: strata models full-parameter training, so the job is imported as full "
        "training; the frozen base (no gradients or optimizer states) and the adapters are "
        "not modelled, and memory and step time are those of full fine-tuning",
        t->source, t->value));
  }
  // ms-swift 3.x's quant_bits (1.x's quantization_bit is renamed to it on reading).
  if (const SourcedValue* q = s.Use("quant_bits"); q != nullptr && q->value != "0") {
    job.Note(
        fmt::format("{} {}: the base weights were {}-bit in the run; strata counts them at "
                    "precision.params",
                    q->source, q->value, q->value));
  }
}

Status NoteUnpaddedSamples(Settings& s, JobBuilder& job, bool default_on,
                           const std::string& why_default) {
  bool on = default_on;
  std::string source = why_default;
  if (const SourcedValue* v = s.Use("padding_free");
      v != nullptr && v->value != "None" && !v->value.empty()) {
    STRATA_ASSIGN_OR_RETURN(auto b, s.Bool("padding_free"));
    on = b.value_or(default_on);
    source = fmt::format("{} {}", v->source, v->value);
  }
  // Packed rows are max_length long whatever padding_free says; given lengths are used as given.
  if (job.Get("sequence.packing") == "true" || job.Has("sequence.mean_tokens") ||
      job.Has("sequence.histogram")) {
    return OkStatus();
  }
  // Off, each batch is padded to its longest sample, which the packing line already says.
  if (!on) return OkStatus();
  job.Note(fmt::format(
      "padding_free on ({}): each micro batch holds its samples' real tokens, unpadded; the job "
      "sizes every sample at sequence.max_tokens {}, so memory and step time are upper bounds: "
      "give the data's lengths with sequence.mean_tokens (and sequence.std_tokens) or "
      "sequence.histogram",
      source, job.Get("sequence.max_tokens")));
  return OkStatus();
}

Status FinishCommon(Settings& s, MapContext& ctx, JobBuilder& job, int64_t world_divisor) {
  const ImportOptions& o = *ctx.options;
  MapAllocatorConf(ctx, job);
  // Liger kernels in HF model code: the HF Trainer's and ms-swift's use_liger_kernel,
  // LLaMA-Factory's enable_liger_kernel. They fuse RMSNorm, rotary and SwiGLU, which the step
  // otherwise prices as eager module code.
  for (const char* key : {"use_liger_kernel", "enable_liger_kernel"}) {
    if (!s.Has(key)) continue;
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> on, s.Bool(key));
    if (on) job.Set("framework.liger_kernel", *on ? "true" : "false", source);
  }
  std::optional<Cluster> cluster;
  if (!o.cluster.empty()) {
    auto loaded = LoadCluster(o.cluster);
    if (!loaded.ok()) return Error(loaded.error()).InField("--cluster");
    cluster = std::move(*loaded);
    job.Set("cluster.file", o.cluster, "--cluster of strata import");
  }
  if (!o.gpu.empty()) {
    job.Set("cluster.gpu", o.gpu, "--gpu of strata import");
  } else if (cluster && !job.Has("cluster.gpu")) {
    job.Set("cluster.gpu", cluster->gpu.name, "--cluster " + o.cluster + " (its GPU)");
  } else if (!job.Has("cluster.gpu")) {
    return InvalidInput("the launch input does not say which GPU the job runs on")
        .WithHint("pass --gpu with a GPU catalog name, e.g. --gpu H20");
  }
  if (o.gpus_per_node > 0) {
    job.Set("cluster.gpus_per_node", std::to_string(o.gpus_per_node),
            "--gpus-per-node of strata import");
  } else if (cluster && !job.Has("cluster.gpus_per_node")) {
    job.Set("cluster.gpus_per_node", std::to_string(cluster->gpus_per_node),
            "--cluster " + o.cluster + " (its GPUs per node)");
  } else if (!job.Has("cluster.gpus_per_node")) {
    STRATA_ASSIGN_OR_RETURN(auto env, EnvInt(ctx, "NPROC_PER_NODE", "--gpus-per-node"));
    if (!env) {
      STRATA_ASSIGN_OR_RETURN(env, EnvInt(ctx, "GPUS_PER_NODE", "--gpus-per-node"));
    }
    if (!env) {
      return InvalidInput("the launch input does not say how many GPUs each node runs")
          .WithHint("pass --gpus-per-node (or set NPROC_PER_NODE in the command)");
    }
    job.Set("cluster.gpus_per_node", std::to_string(*env),
            EnvSource(ctx, ctx.env.count("NPROC_PER_NODE") ? "NPROC_PER_NODE" : "GPUS_PER_NODE"));
  }
  if (o.nodes > 0) {
    job.Set("cluster.nodes", std::to_string(o.nodes), "--nodes of strata import");
  } else if (!job.Has("cluster.nodes")) {
    STRATA_ASSIGN_OR_RETURN(auto env, EnvInt(ctx, "NNODES", "--nodes"));
    if (!env) {
      STRATA_ASSIGN_OR_RETURN(env, EnvInt(ctx, "NUM_NODES", "--nodes"));
    }
    if (env) {
      job.Set("cluster.nodes", std::to_string(*env),
              EnvSource(ctx, ctx.env.count("NNODES") ? "NNODES" : "NUM_NODES"));
    } else if (ctx.config_alone && cluster && cluster->nodes > 0) {
      job.Set("cluster.nodes", std::to_string(cluster->nodes),
              "--cluster " + o.cluster +
                  " (its nodes: the config file has no launch line; --nodes to run on fewer)");
    } else if (ctx.config_alone) {
      job.Default("cluster.nodes", "1",
                  "the config file has no launch line: 1 node assumed (give --nodes)");
    } else {
      job.Default("cluster.nodes", "1", "torchrun's --nnodes defaults to 1");
    }
  }
  STRATA_ASSIGN_OR_RETURN(const int64_t gpus_per_node, job.GetPositiveInt("cluster.gpus_per_node"));
  STRATA_ASSIGN_OR_RETURN(const int64_t nodes, job.GetPositiveInt("cluster.nodes"));
  const int64_t world = gpus_per_node * nodes;
  if (nodes > 1 && !cluster) {
    // The job file is written, but the views that price traffic between nodes refuse it until
    // it names a network: say so now, not at the first `strata step`.
    job.Note(fmt::format(
        "the job spans {} nodes and names no cluster: `strata step`, `plan`, `compare` and `rl` "
        "need the network between nodes and refuse the job until it names one (--cluster NAME or "
        "FILE of strata import, a file under data/clusters/ or one of your own); `strata memory` "
        "does not need it",
        nodes));
  }
  if (world_divisor <= 0 || world % world_divisor != 0) {
    return InvalidInput(fmt::format("the world of {} GPUs is not a multiple of TP x PP x CP = {}",
                                    world, world_divisor))
        .WithHint("check the node count and GPUs per node (--nodes, --gpus-per-node)");
  }
  if (!job.Has("parallel.dp")) {
    job.Derive("parallel.dp", std::to_string(world / world_divisor),
               fmt::format("world {} / (TP x PP x CP = {})", world, world_divisor));
  }
  for (const auto& [key, value] : s.Unused()) {
    job.Unused(fmt::format("{} = {} ({})", key, value.value, value.source));
  }
  return OkStatus();
}

}  // namespace strata
