// Megatron-LM and Megatron-SWIFT (ms-swift `megatron sft`) arguments to a strata job. Both use
// Megatron's argument names; ms-swift changes some defaults (distributed optimizer on, selective
// recompute, batch sizes) and adds its own (model, max_length, packing, freeze_vit).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/text_scan.h"
#include "strata/importer/framework_mappers.h"
#include "strata/importer/model_match.h"
#include "strata/model/megatron_model.h"
#include "strata/model/model_config.h"

namespace strata {

namespace {

bool IsNone(const SourcedValue* v) {
  return v == nullptr || v->value == "None" || v->value.empty();
}

// --window-size LEFT,RIGHT (argparse's tuple_type; a log's dump prints "(127, 0)") and
// --window-attn-skip-freq N: megatron-core's sliding-window layers, as the model description
// spells them (ParseMegatronModel). Its list form ("[1,1,0,...]" or a Python expression) is not
// read: every layer then stays full attention, and the import says so.
Status CopyWindowArgs(Settings& s, nlohmann::json& m, JobBuilder& job) {
  if (!s.Has("window_size") || IsNone(s.Use("window_size"))) return OkStatus();
  const SourcedValue size = *s.Use("window_size");
  std::optional<int64_t> skip;
  if (s.Has("window_attn_skip_freq") && !IsNone(s.Use("window_attn_skip_freq"))) {
    const SourcedValue freq = *s.Use("window_attn_skip_freq");
    skip = ParseInt64(freq.value);
    if (!skip || *skip <= 0) {
      job.Note(
          fmt::format("{} '{}' (a per-layer pattern) with {} {}: the pattern is not read, so "
                      "the sliding-window layers are not modelled; every layer is priced "
                      "as full attention",
                      freq.source, freq.value, size.source, size.value));
      return OkStatus();
    }
  }
  std::string text = size.value;
  std::erase_if(text,
                [](char c) { return c == '(' || c == ')' || c == '[' || c == ']' || c == ' '; });
  const size_t comma = text.find(',');
  const std::optional<int64_t> left =
      comma == std::string::npos ? std::nullopt : ParseInt64(text.substr(0, comma));
  const std::optional<int64_t> right =
      comma == std::string::npos ? std::nullopt : ParseInt64(text.substr(comma + 1));
  if (!left || !right) {
    return InvalidInput(
               fmt::format("{} '{}': expected LEFT,RIGHT (two integers)", size.source, size.value))
        .InField("window_size");
  }
  m["window_size"] = nlohmann::json::array({*left, *right});
  if (skip) m["window_attn_skip_freq"] = *skip;
  return OkStatus();
}

// Copies a Megatron model argument into the description, typed as the model parser expects.
Status CopyModelArgs(Settings& s, nlohmann::json& m) {
  static const char* kInts[] = {"num_layers",
                                "hidden_size",
                                "ffn_hidden_size",
                                "num_attention_heads",
                                "num_query_groups",
                                "kv_channels",
                                "max_position_embeddings",
                                "seq_length",
                                "num_experts",
                                "moe_router_topk",
                                "moe_ffn_hidden_size",
                                "moe_shared_expert_intermediate_size",
                                "make_vocab_size_divisible_by",
                                "padded_vocab_size",
                                "vocab_size"};
  for (const char* key : kInts) {
    if (!s.Has(key) || IsNone(s.Use(key))) continue;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Int(key));
    if (v) m[std::string(key) == "num_experts" ? "num_moe_experts" : key] = *v;
  }
  static const char* kBools[] = {"group_query_attention", "swiglu",
                                 "squared_relu",          "untie_embeddings_and_output_weights",
                                 "add_bias_linear",       "add_qkv_bias",
                                 "qk_layernorm"};
  for (const char* key : kBools) {
    if (!s.Has(key)) continue;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool(key));
    if (v) m[key] = *v;
  }
  if (s.Has("disable_bias_linear")) {
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("disable_bias_linear"));
    if (v && *v) m["add_bias_linear"] = false;
  }
  if (auto norm = s.String("normalization")) m["normalization"] = *norm;
  if (auto pos = s.String("position_embedding_type")) m["position_embedding_type"] = *pos;
  if (s.Has("use_rotary_position_embeddings")) {
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("use_rotary_position_embeddings"));
    if (v && *v) m["position_embedding_type"] = "rope";
  }
  return OkStatus();
}

// --model next to a Megatron-LM command that spells out its own architecture: Megatron builds
// the model from the arguments, so a --model that contradicts them (a 70B picked for an 8B
// script) would describe a job that never runs. Each architecture argument the command gives is
// checked against the model; any contradiction is an error naming both values, since neither
// side can be trusted to be the intended one. --model that only adds what the command lacks
// (the vocabulary, which comes from the tokenizer) passes.
Status CheckModelAgainstArgs(Settings& s, const ImportOptions& o) {
  auto model = LoadModelConfig(o.model);
  if (!model.ok()) return OkStatus();  // an unknown --model is reported where the job resolves
  bool gqa = false;
  if (s.Has("group_query_attention")) {
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("group_query_attention"));
    gqa = v && *v;
  }
  struct Check {
    const char* key;
    int64_t model_value;
    const char* what;
  };
  const Check checks[] = {
      {"num_layers", static_cast<int64_t>(model->layers.size()), "layers"},
      {"hidden_size", model->hidden_size, "hidden size"},
      // --ffn-hidden-size is the dense layers' width; a model without dense layers is not checked.
      {"ffn_hidden_size",
       model->CountLayers(FfnKind::kDense) > 0 ? model->dense_mlp.intermediate_size : 0,
       "FFN hidden size"},
      {"num_attention_heads", model->attention.num_heads, "attention heads"},
      // Megatron reads --num-query-groups only with --group-query-attention.
      {"num_query_groups", gqa ? model->attention.num_kv_heads : 0, "KV heads"},
      {"num_experts", model->moe.num_experts, "experts"},
      {"vocab_size", model->vocab_size, "vocabulary"},
  };
  std::vector<std::string> clashes;
  std::string first_key;
  for (const Check& c : checks) {
    if (c.model_value <= 0 || !s.Has(c.key) || IsNone(s.Use(c.key))) continue;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Int(c.key));
    if (!v || *v == c.model_value) continue;
    if (first_key.empty()) first_key = c.key;
    clashes.push_back(fmt::format("{}: {} in the command ({}), {} in --model {}", c.what, *v,
                                  s.Use(c.key)->source, c.model_value, o.model));
  }
  if (clashes.empty()) return OkStatus();
  std::string message = "the command's model arguments contradict --model " + o.model + ": ";
  for (size_t i = 0; i < clashes.size(); ++i) message += (i > 0 ? "; " : "") + clashes[i];
  return InvalidInput(message).InField(first_key).WithHint(
      "Megatron builds the model from the command's arguments: pass the --model the command "
      "trains, or drop --model and add --vocab-size N to the command");
}

// The model: a Megatron-style description from the model arguments (Megatron-LM), or the
// checkpoint ms-swift loads matched to the catalog.
Status MapModel(MegatronFlavor flavor, Settings& s, MapContext& ctx, JobBuilder& job, int64_t tp) {
  const ImportOptions& o = *ctx.options;
  if (!o.model.empty()) {
    if (flavor == MegatronFlavor::kMegatronLm) STRATA_RETURN_IF_ERROR(CheckModelAgainstArgs(s, o));
    job.Set("model", o.model, "--model of strata import");
    return OkStatus();
  }
  if (flavor == MegatronFlavor::kMsSwiftMcore) {
    for (const char* key : {"model", "load", "mcore_model"}) {
      const SourcedValue* v = s.Use(key);
      if (IsNone(v)) continue;
      STRATA_ASSIGN_OR_RETURN(ModelMatch match, MatchModel(v->value));
      job.Set("model", match.model, fmt::format("{} '{}' ({})", v->source, v->value, match.how));
      return OkStatus();
    }
    return InvalidInput("the command names no model (--model or --load)")
        .WithHint("pass --model with a catalog name or a config.json path");
  }
  nlohmann::json m = nlohmann::json::object();
  STRATA_RETURN_IF_ERROR(CopyModelArgs(s, m));
  STRATA_RETURN_IF_ERROR(CopyWindowArgs(s, m, job));
  if (!m.contains("num_layers") || !m.contains("hidden_size")) {
    return InvalidInput("the arguments describe no model: num_layers and hidden_size are missing")
        .WithHint("pass --model with a catalog name or a config.json path");
  }
  m["tensor_model_parallel_size"] = tp;
  if (!m.contains("vocab_size") && !m.contains("padded_vocab_size")) {
    // The vocabulary comes from the tokenizer files, not the arguments; GPT-2's BPE is known.
    auto tok = s.String("tokenizer_type");
    // Without --tokenizer-type, --vocab-file + --merge-file are GPT-2's BPE files.
    if ((tok && *tok == "GPT2BPETokenizer") || (!tok && s.Has("merge_file"))) {
      m["vocab_size"] = 50257;
      job.NamedDefault(
          "vocab_size = 50257: the GPT-2 BPE tokenizer (--tokenizer-type "
          "GPT2BPETokenizer); Megatron pads it by make_vocab_size_divisible_by x TP");
    } else {
      return InvalidInput(
                 "the vocabulary size is not in the arguments (it comes from the "
                 "tokenizer)")
          .WithHint("pass --model with a config.json, or add --vocab-size N to the command");
    }
  }
  STRATA_ASSIGN_OR_RETURN(ModelConfig parsed, ParseMegatronModel(m, "megatron model arguments"));
  (void)parsed;
  ctx.model_json = m.dump(2) + "\n";
  const std::string path =
      o.model_json_path.empty() ? std::string("model.json") : o.model_json_path;
  job.Set("model", path,
          "Megatron-style description of the model arguments, written beside the job with -o "
          "(printed below it otherwise)");
  return OkStatus();
}

struct Sizes {
  int64_t tp = 1, pp = 1, cp = 1;
};

Result<int64_t> IntOr(Settings& s, JobBuilder& job, const std::string& key,
                      const std::string& job_key, int64_t fallback, const std::string& why) {
  if (s.Has(key) && !IsNone(s.Use(key))) {
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Int(key));
    if (*v <= 0) return InvalidInput(fmt::format("expected a positive {}", key)).InField(key);
    if (!job_key.empty()) job.Set(job_key, std::to_string(*v), source);
    return *v;
  }
  if (!job_key.empty()) job.Default(job_key, std::to_string(fallback), why);
  return fallback;
}

Result<bool> BoolOr(Settings& s, JobBuilder& job, const std::string& key,
                    const std::string& job_key, bool fallback, const std::string& why) {
  if (s.Has(key) && !IsNone(s.Use(key))) {
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool(key));
    if (!job_key.empty()) job.Set(job_key, *v ? "true" : "false", source);
    return *v;
  }
  if (!job_key.empty()) job.Default(job_key, fallback ? "true" : "false", why);
  return fallback;
}

// Whether the model has experts: from the description built of the arguments, or the catalog
// model or config.json the job names; nullopt when neither can be read.
std::optional<bool> HasExperts(const MapContext& ctx, const JobBuilder& job) {
  if (!ctx.model_json.empty()) {
    auto m = ParseMegatronModel(nlohmann::json::parse(ctx.model_json), "model arguments");
    if (m.ok()) return m->HasLayers(FfnKind::kMoe);
    return std::nullopt;
  }
  auto m = LoadModelConfig(job.Get("model"));
  if (!m.ok()) return std::nullopt;
  return m->HasLayers(FfnKind::kMoe);
}

// --num-layers-per-virtual-pipeline-stage N, Megatron's other spelling of VPP: each pipeline
// stage's layers (the embedding and the loss counted as layers where the split accounts for
// them) over N (megatron/training/arguments.py validate_args, which refuses it with uneven first
// or last stages and where the layers do not divide).
Status MapLayersPerVirtualStage(Settings& s, JobBuilder& job, int64_t pp) {
  const std::string key = "num_layers_per_virtual_pipeline_stage";
  const std::string source = s.Use(key)->source;
  STRATA_ASSIGN_OR_RETURN(auto per_stage, s.Int(key));
  if (*per_stage <= 0) return InvalidInput("expected a positive " + key).InField(key);
  for (const char* uneven :
       {"decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers"}) {
    if (s.Has(uneven) && !IsNone(s.Use(uneven))) {
      return InvalidInput(fmt::format("{} with {}: Megatron refuses it (use "
                                      "--num-virtual-stages-per-pipeline-rank with uneven stages)",
                                      key, uneven))
          .InField(key);
    }
  }
  std::optional<int64_t> layers;
  for (const char* name : {"num_layers", "decoder_num_layers"}) {
    if (!layers && s.Has(name) && !IsNone(s.Use(name))) {
      STRATA_ASSIGN_OR_RETURN(auto v, s.Int(name));
      layers = *v;
    }
  }
  if (!layers) {
    auto m = LoadModelConfig(job.Get("model"));
    if (m.ok()) layers = static_cast<int64_t>(m->layers.size());
  }
  if (!layers) {
    return InvalidInput(key +
                        " needs the model's layer count, which neither the arguments nor "
                        "the model give")
        .InField(key);
  }
  for (const char* counted :
       {"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"}) {
    if (s.Has(counted) && !IsNone(s.Use(counted))) {
      STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(counted));
      if (on && *on) *layers += 1;
    }
  }
  if (*layers % pp != 0 || (*layers / pp) % *per_stage != 0) {
    return InvalidInput(fmt::format("{} layers over {} pipeline stages do not split into virtual "
                                    "stages of {} layers",
                                    *layers, pp, *per_stage))
        .InField(key);
  }
  const int64_t vpp = *layers / pp / *per_stage;
  job.Set(
      "parallel.vpp", std::to_string(vpp),
      fmt::format("{} ({} layers / PP {} / {} a virtual stage)", source, *layers, pp, *per_stage));
  return OkStatus();
}

// An even pipeline split needs the layers to divide by PP: Megatron asserts it at start
// ("Number of layers should be divisible by the pipeline-model-parallel size", NVIDIA/Megatron-LM
// d98e8a64 megatron/training/arguments.py validate_args) unless the first / last stage sizes,
// the embedding or loss accounting or a layout says otherwise. Refused here, naming the flags,
// rather than written into a job every view then refuses.
Status CheckEvenPipelineSplit(Settings& s, int64_t pp) {
  if (pp <= 1) return OkStatus();
  for (const char* uneven :
       {"decoder_first_pipeline_num_layers", "num_layers_in_first_pipeline_stage",
        "decoder_last_pipeline_num_layers", "num_layers_in_last_pipeline_stage",
        "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
        "pipeline_model_parallel_layout"}) {
    if (s.Has(uneven) && !IsNone(s.Use(uneven))) return OkStatus();
  }
  if (!s.Has("num_layers") || IsNone(s.Use("num_layers"))) return OkStatus();
  const SourcedValue layers_value = *s.Use("num_layers");
  const std::optional<int64_t> layers = ParseInt64(layers_value.value);
  if (!layers || *layers <= 0 || *layers % pp == 0) return OkStatus();
  const std::string pp_source =
      s.Has("pipeline_model_parallel_size") ? s.Use("pipeline_model_parallel_size")->source : "";
  return InvalidInput(fmt::format("{} layers ({}) do not divide into {} pipeline stages ({}): "
                                  "Megatron asserts that the layers divide by the "
                                  "pipeline-model-parallel size",
                                  *layers, layers_value.source, pp, pp_source))
      .InField("pipeline_model_parallel_size")
      .WithHint(
          "pick a --pipeline-model-parallel-size that divides --num-layers, or give "
          "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers");
}

Status MapParallel(MegatronFlavor flavor, Settings& s, JobBuilder& job, Sizes& sizes,
                   std::optional<bool> has_experts) {
  STRATA_ASSIGN_OR_RETURN(sizes.tp, IntOr(s, job, "tensor_model_parallel_size", "parallel.tp", 1,
                                          "Megatron's tensor_model_parallel_size defaults to 1"));
  STRATA_ASSIGN_OR_RETURN(sizes.pp, IntOr(s, job, "pipeline_model_parallel_size", "parallel.pp", 1,
                                          "Megatron's pipeline_model_parallel_size defaults to 1"));
  if (s.Has("virtual_pipeline_model_parallel_size") &&
      !IsNone(s.Use("virtual_pipeline_model_parallel_size"))) {
    STRATA_RETURN_IF_ERROR(
        IntOr(s, job, "virtual_pipeline_model_parallel_size", "parallel.vpp", 1, ""));
  } else if (s.Has("num_virtual_stages_per_pipeline_rank") &&
             !IsNone(s.Use("num_virtual_stages_per_pipeline_rank"))) {
    STRATA_RETURN_IF_ERROR(
        IntOr(s, job, "num_virtual_stages_per_pipeline_rank", "parallel.vpp", 1, ""));
  } else if (s.Has("num_layers_per_virtual_pipeline_stage") &&
             !IsNone(s.Use("num_layers_per_virtual_pipeline_stage"))) {
    STRATA_RETURN_IF_ERROR(MapLayersPerVirtualStage(s, job, sizes.pp));
  }
  STRATA_ASSIGN_OR_RETURN(sizes.cp, IntOr(s, job, "context_parallel_size", "parallel.cp", 1,
                                          "Megatron's context_parallel_size defaults to 1"));
  // --cp-comm-type (nargs='+', default ["p2p"]): one value, or one per layer, which strata
  // reads as the first's; a log dump prints the list (['p2p']).
  if (sizes.cp > 1 && s.Has("cp_comm_type") && !IsNone(s.Use("cp_comm_type"))) {
    const SourcedValue* type = s.Use("cp_comm_type");
    std::string value = type->value;
    std::erase_if(value, [](char c) { return c == '[' || c == ']' || c == '\'' || c == '"'; });
    value = value.substr(0, value.find_first_of(", "));
    job.Set("parallel.cp_comm_type", value, type->source);
  }
  STRATA_RETURN_IF_ERROR(IntOr(s, job, "expert_model_parallel_size", "parallel.ep", 1,
                               "Megatron's expert_model_parallel_size defaults to 1"));
  // ETP defaults to TP only where there are experts to split: a dense model imported with
  // etp = TP (> 1) was refused by every view ("ETP given but the model has no experts").
  const bool dense = has_experts.has_value() && !*has_experts;
  if (dense &&
      !(s.Has("expert_tensor_parallel_size") && !IsNone(s.Use("expert_tensor_parallel_size")))) {
    job.Default("parallel.etp", "1",
                "the model has no experts: expert_tensor_parallel_size "
                "does not apply");
  } else if (flavor == MegatronFlavor::kMsSwiftMcore) {
    // ms-swift gives megatron-core its own default, 1, since 3.9.0.dev0 (modelscope/ms-swift@
    // 9f5fcf5c3, swift/megatron/argument/megatron_args.py: expert_tensor_parallel_size: int = 1;
    // still 1 at 3602360, swift/megatron/arguments/megatron_args.py:619). Before it (3.8 and
    // older) ms-swift left it to megatron-core, which makes it TP.
    STRATA_RETURN_IF_ERROR(IntOr(s, job, "expert_tensor_parallel_size", "parallel.etp", 1,
                                 "ms-swift's expert_tensor_parallel_size defaults to 1 (3.9 on; "
                                 "3.8 and older left megatron-core's default, TP: set "
                                 "parallel.etp for an older release)"));
  } else {
    STRATA_RETURN_IF_ERROR(IntOr(
        s, job, "expert_tensor_parallel_size", "parallel.etp", sizes.tp,
        "megatron-core's expert_tensor_parallel_size defaults to tensor_model_parallel_size"));
  }
  STRATA_ASSIGN_OR_RETURN(const bool sp,
                          BoolOr(s, job, "sequence_parallel", "parallel.sequence_parallel", false,
                                 "Megatron's sequence_parallel is off unless given"));
  if (sp && sizes.tp == 1) {
    // Megatron's validate_args: "Disabling sequence parallelism because tensor model
    // parallelism is disabled" (args.sequence_parallel = False when TP is 1).
    job.Set("parallel.sequence_parallel", "false",
            s.Use("sequence_parallel")->source +
                " ignored: Megatron turns sequence parallelism off at TP 1");
  }
  // Uneven pipelines: megatron-core's first/last stage layer counts (older and newer names) and
  // the account-for-embedding/loss split. Read only when given; the even split otherwise.
  for (const auto& [key, field] :
       {std::pair{"decoder_first_pipeline_num_layers", "parallel.first_stage_layers"},
        std::pair{"num_layers_in_first_pipeline_stage", "parallel.first_stage_layers"},
        std::pair{"decoder_last_pipeline_num_layers", "parallel.last_stage_layers"},
        std::pair{"num_layers_in_last_pipeline_stage", "parallel.last_stage_layers"}}) {
    if (s.Has(key) && !IsNone(s.Use(key))) {
      STRATA_RETURN_IF_ERROR(IntOr(s, job, key, field, 1, ""));
    }
  }
  for (const auto& [key, field] :
       {std::pair{"account_for_embedding_in_pipeline_split", "parallel.account_for_embedding"},
        std::pair{"account_for_loss_in_pipeline_split", "parallel.account_for_loss"}}) {
    if (s.Has(key) && !IsNone(s.Use(key))) {
      STRATA_RETURN_IF_ERROR(BoolOr(s, job, key, field, false, ""));
    }
  }
  // --pipeline-model-parallel-layout: every virtual stage's layers (VPP follows from it).
  if (s.Has("pipeline_model_parallel_layout") && !IsNone(s.Use("pipeline_model_parallel_layout"))) {
    const SourcedValue* layout = s.Use("pipeline_model_parallel_layout");
    job.Set("parallel.pipeline_layout", fmt::format("\"{}\"", layout->value), layout->source);
  }
  return CheckEvenPipelineSplit(s, sizes.pp);
}

Status MapBatchAndSequence(MegatronFlavor flavor, Settings& s, JobBuilder& job) {
  const bool swift = flavor == MegatronFlavor::kMsSwiftMcore;
  if (!swift && !s.Has("micro_batch_size")) {
    return InvalidInput("--micro-batch-size is missing (Megatron requires it)");
  }
  STRATA_ASSIGN_OR_RETURN(int64_t mbs, IntOr(s, job, "micro_batch_size", "batch.micro_batch", 1,
                                             "ms-swift's micro_batch_size defaults to 1"));
  if (s.Has("global_batch_size") && !IsNone(s.Use("global_batch_size"))) {
    STRATA_RETURN_IF_ERROR(IntOr(s, job, "global_batch_size", "batch.global_batch", 0, ""));
  } else if (swift) {
    job.Default("batch.global_batch", "16", "ms-swift's global_batch_size defaults to 16");
  } else {
    job.NamedDefault(
        "batch.global_batch: Megatron's global_batch_size defaults to "
        "micro_batch_size x data-parallel size");
    job.Set("batch.global_batch", "", "");  // filled once DP is known
  }
  (void)mbs;
  const char* len_key = swift ? "max_length" : "seq_length";
  if (!s.Has(len_key) || IsNone(s.Use(len_key))) {
    return InvalidInput(
        fmt::format("--{} is missing: strata sizes activations for the longest "
                    "sample",
                    len_key));
  }
  STRATA_RETURN_IF_ERROR(IntOr(s, job, len_key, "sequence.max_tokens", 0, ""));
  if (swift) {
    STRATA_RETURN_IF_ERROR(BoolOr(s, job, "packing", "sequence.packing", false,
                                  "ms-swift's packing defaults to false: one sample per row"));
    // Megatron-SWIFT's Command-line-parameters, Training Parameters (modelscope/ms-swift@3602360):
    // "padding_free: Flattens the data in a batch to avoid padding ... Default is True".
    STRATA_RETURN_IF_ERROR(
        NoteUnpaddedSamples(s, job, true, "Megatron-SWIFT's padding_free defaults to true"));
  } else {
    job.Default("sequence.packing", "true",
                "Megatron's GPTDataset concatenates documents into seq_length samples");
  }
  return OkStatus();
}

Status MapRecompute(MegatronFlavor flavor, Settings& s, JobBuilder& job) {
  const bool swift = flavor == MegatronFlavor::kMsSwiftMcore;
  std::string granularity;
  std::string source;
  if (const SourcedValue* v = s.Use("recompute_granularity"); !IsNone(v)) {
    granularity = v->value;
    source = v->source;
  } else if (s.Has("recompute_activations")) {
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("recompute_activations"));
    if (on && *on) {
      granularity = "selective";
      source = "--recompute-activations (Megatron: recompute_granularity = selective)";
    }
  } else if (const SourcedValue* m = s.Use("activations_checkpoint_method"); !IsNone(m)) {
    // Megatron-LM of 2021 (its sc21 scripts): a set --activations-checkpoint-method runs
    // ParallelTransformer._checkpointed_forward, full recompute of
    // --activations-checkpoint-num-layers (default 1) layers a chunk (megatron/model/
    // transformer.py, e.g. at cb5e611d7); the flags were renamed --recompute-method and
    // --recompute-num-layers with --recompute-granularity full.
    job.Set("recompute.granularity", "full",
            m->source + " (Megatron of 2021: activation checkpointing = full recompute)");
    job.Set("recompute.method", m->value, m->source);
    STRATA_RETURN_IF_ERROR(IntOr(s, job, "activations_checkpoint_num_layers",
                                 "recompute.num_layers", 1,
                                 "activations_checkpoint_num_layers unset: Megatron's default 1"));
    return OkStatus();
  } else if (s.Has("checkpoint_activations")) {
    // Its older switch, --checkpoint-activations: uniform chunks of --checkpoint-num-layers
    // (default 1) layers.
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("checkpoint_activations"));
    if (on && *on) {
      job.Set("recompute.granularity", "full",
              "--checkpoint-activations (Megatron of 2021: full recompute)");
      job.Default("recompute.method", "uniform", "--checkpoint-activations checkpoints uniformly");
      STRATA_RETURN_IF_ERROR(IntOr(s, job, "checkpoint_num_layers", "recompute.num_layers", 1,
                                   "checkpoint_num_layers unset: Megatron's default 1"));
      return OkStatus();
    }
  }
  // --recompute-modules (nargs '*', default core_attn) picks what selective recompute re-runs.
  const SourcedValue* modules = s.Use("recompute_modules");
  if (granularity.empty()) {
    job.Default("recompute.granularity", swift ? "selective" : "none",
                swift ? "ms-swift's recompute_granularity defaults to selective"
                      : "Megatron recomputes nothing unless --recompute-granularity is given");
    if (swift && !IsNone(modules)) return SetRecomputeModules(*modules, job);
    return OkStatus();
  }
  if (granularity != "full" && granularity != "selective" && granularity != "none") {
    return InvalidInput("unknown recompute_granularity '" + granularity +
                        "'; expected full or selective")
        .InField("recompute_granularity")
        .WithHint("read from " + source);
  }
  job.Set("recompute.granularity", granularity, source);
  if (granularity == "selective" && !IsNone(modules)) return SetRecomputeModules(*modules, job);
  if (granularity != "full") return OkStatus();
  if (const SourcedValue* v = s.Use("recompute_method"); !IsNone(v)) {
    job.Set("recompute.method", v->value, v->source);
  } else {
    job.Default("recompute.method", "uniform", "recompute_method unset: strata assumes uniform");
  }
  STRATA_RETURN_IF_ERROR(IntOr(s, job, "recompute_num_layers", "recompute.num_layers", 1,
                               "recompute_num_layers unset: 1"));
  return OkStatus();
}

// megatron-core --cpu-offloading with --cpu-offloading-num-layers N (TransformerConfig; the
// activations flag defaults to on). Weight offloading moves no parameter off the GPU in bf16
// (the parameters stay resident), so only the activations are a job field.
Status MapActivationOffload(Settings& s, JobBuilder& job) {
  bool on = false;
  std::string source;
  if (s.Has("cpu_offloading") && !IsNone(s.Use("cpu_offloading"))) {
    source = s.Use("cpu_offloading")->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("cpu_offloading"));
    on = v && *v;
  }
  bool activations = true;
  if (s.Has("cpu_offloading_activations") && !IsNone(s.Use("cpu_offloading_activations"))) {
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("cpu_offloading_activations"));
    activations = !v || *v;
  }
  if (s.Has("cpu_offloading_weights")) {
    s.Use("cpu_offloading_weights");
    if (on) job.Note("cpu_offloading_weights: not modelled (the bf16 parameters stay on the GPU)");
  }
  const SourcedValue* n =
      s.Has("cpu_offloading_num_layers") ? s.Use("cpu_offloading_num_layers") : nullptr;
  if (!on && !IsNone(n)) {
    job.Note("cpu_offloading_num_layers " + n->value +
             " without --cpu-offloading: TransformerConfig offloads only when cpu_offloading is "
             "set; not imported");
  }
  if (!on || !activations) return OkStatus();
  if (IsNone(n)) {
    job.Set("activation_offload.num_layers", "0",
            source + " without --cpu-offloading-num-layers (megatron-core's default 0)");
    return OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(auto layers, s.Int("cpu_offloading_num_layers"));
  job.Set("activation_offload.num_layers", std::to_string(*layers), n->source);
  return OkStatus();
}

Status MapPrecision(MegatronFlavor flavor, Settings& s, JobBuilder& job) {
  const bool swift = flavor == MegatronFlavor::kMsSwiftMcore;
  std::string params;
  std::string params_source;
  for (const auto& [key, dtype] :
       {std::pair<const char*, const char*>{"bf16", "bf16"}, {"fp16", "fp16"}}) {
    if (s.Has(key)) {
      const std::string source = s.Use(key)->source;
      STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(key));
      if (on && *on) {
        params = dtype;
        params_source = source;
      }
    }
  }
  if (params.empty()) {
    if (auto v = s.String("torch_dtype")) {
      params = *v == "bfloat16" ? "bf16" : *v == "float16" ? "fp16" : *v == "float32" ? "fp32" : "";
      params_source = "--torch_dtype " + *v;
    }
  }
  if (params.empty() && s.Has("params_dtype")) {
    auto v = s.String("params_dtype");
    params = *v == "torch.bfloat16" ? "bf16" : *v == "torch.float16" ? "fp16" : "fp32";
    params_source = "params_dtype " + *v;
  }
  if (params.empty()) {
    job.Default("precision.params", swift ? "bf16" : "fp32",
                swift ? "ms-swift loads the checkpoint in its torch_dtype (bfloat16)"
                      : "Megatron keeps fp32 parameters unless --bf16 or --fp16");
    params = swift ? "bf16" : "fp32";
  } else {
    job.Set("precision.params", params, params_source);
  }

  // Gradients: megatron-core accumulates and all-reduces bf16 gradients in fp32 (arguments.py
  // forces accumulate_allreduce_grads_in_fp32 on for bf16) unless --grad-reduce-in-bf16.
  std::string grads;
  if (s.Has("grad_reduce_in_bf16")) {
    const std::string source = s.Use("grad_reduce_in_bf16")->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("grad_reduce_in_bf16"));
    if (on && *on) job.Set("precision.grads", "bf16", source);
  }
  if (!job.Has("precision.grads") && s.Has("main_grads_dtype")) {
    const SourcedValue* v = s.Use("main_grads_dtype");
    if (v->value == "bf16" || v->value == "torch.bfloat16")
      job.Set("precision.grads", "bf16", v->source);
  }
  if (!job.Has("precision.grads") && s.Has("accumulate_allreduce_grads_in_fp32")) {
    // The dump holds the value after validate_args: authoritative.
    const std::string source = s.Use("accumulate_allreduce_grads_in_fp32")->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("accumulate_allreduce_grads_in_fp32"));
    if (on && *on) {
      job.Set("precision.grads", "fp32", source);
    } else if (params == "fp32") {
      job.Set("precision.grads", "fp32", source + " (fp32 parameters: fp32 gradients)");
    } else if (params == "fp16") {
      job.Set("precision.grads", "fp16",
              source + " (the gradient buffer in the fp16 params' dtype)");
    }
  }
  if (!job.Has("precision.grads")) {
    if (params == "bf16") {
      job.Default("precision.grads", "fp32",
                  "megatron-core accumulates and all-reduces bf16 gradients in fp32 "
                  "(accumulate_allreduce_grads_in_fp32) unless --grad-reduce-in-bf16");
    } else if (params == "fp16") {
      // arguments.py forces accumulate_allreduce_grads_in_fp32 on for bf16 only; DDP's buffer
      // is fp32 when it is on and in the parameters' dtype otherwise.
      job.Default("precision.grads", "fp16",
                  "Megatron keeps --fp16 gradients in an fp16 buffer unless "
                  "--accumulate-allreduce-grads-in-fp32");
    } else {
      job.Default("precision.grads", "fp32", "gradients in the main-gradient dtype, fp32");
    }
  }
  return OkStatus();
}

// What each checkpoint holds. --no-save-optim ("Do not save current optimizer.", megatron/
// training/arguments.py; ms-swift's --no_save_optim passes it on) leaves the optimizer state,
// fp32 main params included, out of every save: checkpoint.optimizer false. --no-save-rng drops
// the RNG states, a few kB per rank (Python's, NumPy's and torch's generators): no byte count
// changes, so it is read and left.
// --async-save: the distributed checkpoint is written in the background and training waits for
// the copy to host memory (checkpoint.async_save). From core_v0.16.0 megatron-core turns it off
// without --use-persistent-ckpt-worker (NVIDIA/Megatron-LM d98e8a6 megatron/training/
// arguments.py: "--async-save is not supported without --use-persistent-ckpt-worker. Disabling
// --async-save."), the release strata assumes for a launch that names none.
Status MapAsyncSave(Settings& s, JobBuilder& job) {
  const SourcedValue* v = s.Use("async_save");
  const SourcedValue* worker = s.Use("use_persistent_ckpt_worker");
  if (IsNone(v)) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("async_save"));
  if (!on || !*on) return OkStatus();
  bool persistent = false;
  if (!IsNone(worker)) {
    STRATA_ASSIGN_OR_RETURN(auto w, s.Bool("use_persistent_ckpt_worker"));
    persistent = w && *w;
  }
  if (persistent) {
    job.Set("checkpoint.async_save", "true", fmt::format("{} with {}", v->source, worker->source));
  } else {
    job.Set("checkpoint.async_save", "false",
            fmt::format("{} without --use-persistent-ckpt-worker: megatron-core (core_v0.16.0 "
                        "on) disables --async-save, the save is synchronous",
                        v->source));
  }
  return OkStatus();
}

Status MapCheckpointContents(Settings& s, JobBuilder& job) {
  s.Ignore("no_save_rng");
  STRATA_RETURN_IF_ERROR(MapAsyncSave(s, job));
  const SourcedValue* v = s.Use("no_save_optim");
  if (IsNone(v)) return OkStatus();
  const std::string source = v->source;
  STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("no_save_optim"));
  if (*on) job.Set("checkpoint.optimizer", "false", source);
  return OkStatus();
}

// Megatron's two FSDP paths replace megatron-core's DDP and its distributed-optimizer buffers,
// so what they shard is the job's sharding.mode (optimizer.distributed then follows from it).
// --use-megatron-fsdp: megatron-core's own FSDP, sharding what --data-parallel-sharding-strategy
// names (NVIDIA/Megatron-LM d98e8a64 docs/user-guide/parallelism-guide.md: "optim_grads_params -
// Shard parameters + gradients + optimizer (ZeRO-3)"; megatron/training/arguments.py defaults the
// strategy to optim_grads_params): optim ZeRO-1, optim_grads ZeRO-2, optim_grads_params ZeRO-3,
// no_shard plain DDP. --use-torch-fsdp2: PyTorch's fully_shard over every TransformerLayer
// (megatron/core/distributed/torch_fully_sharded_data_parallel.py), parameters, gradients and
// optimizer sharded. Returns whether a sharding mode was set.
Result<bool> MapFsdp(Settings& s, JobBuilder& job) {
  const SourcedValue* strategy = s.Use("data_parallel_sharding_strategy");
  bool megatron_fsdp = false;
  std::string fsdp_source;
  if (const SourcedValue* v = s.Use("use_megatron_fsdp"); !IsNone(v)) {
    fsdp_source = v->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("use_megatron_fsdp"));
    megatron_fsdp = on && *on;
  }
  bool torch_fsdp2 = false;
  std::string fsdp2_source;
  if (const SourcedValue* v = s.Use("use_torch_fsdp2"); !IsNone(v)) {
    fsdp2_source = v->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("use_torch_fsdp2"));
    torch_fsdp2 = on && *on;
  }
  if (megatron_fsdp && torch_fsdp2) {
    return InvalidInput(fmt::format("{} and {}: Megatron takes one FSDP implementation, not both",
                                    fsdp_source, fsdp2_source))
        .InField("use_torch_fsdp2");
  }
  if (torch_fsdp2) {
    job.Set("sharding.mode", "fsdp2",
            fsdp2_source +
                " (PyTorch's fully_shard: parameters, gradients and optimizer states "
                "sharded over DP)");
    return true;
  }
  if (!megatron_fsdp) {
    if (!IsNone(strategy)) {
      job.Note(
          fmt::format("{} {} without --use-megatron-fsdp: Megatron reads the strategy only "
                      "for its FSDP; not imported",
                      strategy->source, strategy->value));
    }
    return false;
  }
  static const std::pair<const char*, const char*> kModes[] = {{"no_shard", "none"},
                                                               {"optim", "zero1"},
                                                               {"optim_grads", "zero2"},
                                                               {"optim_grads_params", "zero3"}};
  const std::string name = IsNone(strategy) ? "optim_grads_params" : strategy->value;
  for (const auto& [strategy_name, mode] : kModes) {
    if (name != strategy_name) continue;
    job.Set("sharding.mode", mode,
            IsNone(strategy) ? fsdp_source +
                                   " (Megatron-FSDP; --data-parallel-sharding-strategy defaults to "
                                   "optim_grads_params, ZeRO-3)"
                             : fmt::format("{} {} with {} (Megatron-FSDP)", strategy->source, name,
                                           fsdp_source));
    return true;
  }
  return InvalidInput(fmt::format("--data-parallel-sharding-strategy '{}' ({}): expected no_shard, "
                                  "optim, optim_grads or optim_grads_params",
                                  name, strategy->source))
      .InField("data_parallel_sharding_strategy")
      .WithHint(DidYouMeanHint(name, {"no_shard", "optim", "optim_grads", "optim_grads_params"}));
}

Status MapOptimizer(MegatronFlavor flavor, Settings& s, JobBuilder& job) {
  const bool swift = flavor == MegatronFlavor::kMsSwiftMcore;
  STRATA_ASSIGN_OR_RETURN(const bool fsdp, MapFsdp(s, job));
  if (const SourcedValue* v = s.Use("optimizer"); !IsNone(v)) {
    if (v->value != "adam" && v->value != "adamw") {
      return InvalidInput("optimizer '" + v->value + "': strata models Adam's states only")
          .InField("optimizer")
          .WithHint("read from " + v->source);
    }
    job.Set("optimizer.name", "adam", v->source);
  } else {
    job.Default("optimizer.name", "adam", "Megatron's optimizer defaults to adam");
  }
  if (fsdp) {
    // The FSDP wrapper shards the optimizer as its strategy says; sharding.mode carries it.
    s.Ignore("use_distributed_optimizer");
  } else {
    STRATA_RETURN_IF_ERROR(BoolOr(s, job, "use_distributed_optimizer", "optimizer.distributed",
                                  swift,
                                  swift ? "ms-swift turns use_distributed_optimizer on by default"
                                        : "Megatron's distributed optimizer is off unless "
                                          "--use-distributed-optimizer"));
  }
  job.Default("optimizer.master_weights", "fp32", "Megatron keeps fp32 master weights");
  std::string moments = "fp32";
  std::string source = "Adam moments in fp32 unless --use-precision-aware-optimizer";
  if (const SourcedValue* v = s.Use("exp_avg_dtype"); !IsNone(v)) {
    if (v->value == "bf16" || v->value == "torch.bfloat16") {
      moments = "bf16";
      source = v->source;
    }
  }
  if (source.starts_with("--") || source.find("line") != std::string::npos) {
    job.Set("optimizer.moments", moments, source);
  } else {
    job.Default("optimizer.moments", moments, source);
  }
  if (s.Has("cross_entropy_loss_fusion")) {
    const std::string src = s.Use("cross_entropy_loss_fusion")->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("cross_entropy_loss_fusion"));
    // The fusion's implementation decides what the loss holds (NVIDIA/Megatron-LM@d98e8a6,
    // megatron/core/models/common/language_module/language_module.py and
    // fusions/fused_cross_entropy.py): `native`, the default of --cross-entropy-fusion-impl
    // (Megatron-SWIFT's cross_entropy_fusion_impl too), is a jit-fused copy of
    // _VocabParallelCrossEntropy that still upcasts the logits (`.float()` in
    // calculate_logits_max) and saves their fp32 softmax: megatron-core's 6 B per logit, as
    // unfused. Only `te`, Transformer Engine's parallel cross entropy, writes the gradient over
    // the bf16 logits.
    const SourcedValue* impl = s.Use("cross_entropy_fusion_impl");
    // Megatron's argument takes choices=['native', 'te'] (training/arguments.py); anything else
    // would stop the launch before training.
    if (impl != nullptr && impl->value != "native" && impl->value != "te") {
      return InvalidInput(
                 fmt::format("'{}' ({}): expected native or te", impl->value, impl->source))
          .InField("cross_entropy_fusion_impl")
          .WithHint(DidYouMeanHint(impl->value, {"native", "te"}));
    }
    const bool te = impl != nullptr && impl->value == "te";
    if (on && *on && te) {
      job.Set("loss.cross_entropy", "fused", fmt::format("{}, {} te", src, impl->source));
    } else if (on && *on) {
      job.Set("loss.cross_entropy", "native",
              fmt::format("{} with the native implementation ({}): it keeps the fp32 softmax of "
                          "the logits as the unfused kernel does",
                          src,
                          impl != nullptr ? impl->source + " " + impl->value
                                          : "cross_entropy_fusion_impl defaults to native"));
    } else {
      job.Set("loss.cross_entropy", "native", src);
    }
  } else if (swift) {
    // Megatron-SWIFT turns the fusion on by default with the native implementation
    // (modelscope/ms-swift@3602360 swift/megatron/arguments/megatron_args.py:496-497): the
    // fp32 softmax stays.
    job.Default("loss.cross_entropy", "native",
                "ms-swift defaults cross_entropy_loss_fusion to true with "
                "cross_entropy_fusion_impl native, which keeps an fp32 softmax of the logits");
  } else {
    job.Default("loss.cross_entropy", "native",
                "Megatron computes vocab_parallel_cross_entropy unfused unless "
                "--cross-entropy-loss-fusion (it keeps an fp32 softmax of the logits)");
  }
  return OkStatus();
}

// --fp8-format (e4m3 | hybrid) turns FP8 on; --fp8-recipe picks the scaling (Megatron's default:
// delayed); --fp8-param-gather keeps the weights in FP8; the amax history applies to delayed
// scaling only.
Status MapFp8(Settings& s, JobBuilder& job) {
  // The flag --fp8-format has dest `fp8`: the argument dump of a log prints it as `fp8`.
  const SourcedValue* format = s.Has("fp8_format") ? s.Use("fp8_format")
                               : s.Has("fp8")      ? s.Use("fp8")
                                                   : nullptr;
  const SourcedValue* recipe = s.Has("fp8_recipe") ? s.Use("fp8_recipe") : nullptr;
  for (const char* key : {"fp8_amax_compute_algo", "fp8_margin", "fp8_interval", "fp8_wgrad"})
    s.Ignore(key);  // numerics of the scaling, not memory or time
  if (IsNone(format)) {
    if (!IsNone(recipe)) {
      job.Note(
          fmt::format("{} {} without --fp8-format: Megatron trains without FP8 then; not "
                      "imported",
                      recipe->source, recipe->value));
    }
    for (const char* key : {"fp8_param_gather", "fp8_amax_history_len"}) s.Ignore(key);
    return OkStatus();
  }
  if (format->value != "e4m3" && format->value != "hybrid") {
    return InvalidInput("unknown fp8_format '" + format->value + "'; expected e4m3 or hybrid")
        .InField("fp8_format")
        .WithHint("read from " + format->source);
  }
  std::string name = "delayed";
  if (!IsNone(recipe)) {
    name = recipe->value;
    if (name != "delayed" && name != "tensorwise" && name != "blockwise" && name != "mxfp8") {
      return InvalidInput("unknown fp8_recipe '" + name +
                          "'; expected delayed, tensorwise, blockwise or mxfp8")
          .InField("fp8_recipe")
          .WithHint("read from " + recipe->source);
    }
    job.Set("fp8.recipe", name, recipe->source);
  } else {
    job.Set("fp8.recipe", name,
            fmt::format("{} {} (Megatron's fp8_recipe defaults to delayed)", format->source,
                        format->value));
  }
  if (s.Has("fp8_param_gather")) {
    const std::string source = s.Use("fp8_param_gather")->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("fp8_param_gather"));
    if (on && *on) job.Set("fp8.param_gather", "true", source);
  }
  if (s.Has("fp8_amax_history_len") && !IsNone(s.Use("fp8_amax_history_len"))) {
    if (name == "delayed") {
      STRATA_RETURN_IF_ERROR(IntOr(s, job, "fp8_amax_history_len", "fp8.amax_history", 1, ""));
    }
  }
  return OkStatus();
}

// Communication overlaps megatron-core hides behind compute; each off unless its flag is given.
Status MapOverlap(Settings& s, JobBuilder& job) {
  for (const auto& [key, field] :
       {std::pair{"overlap_grad_reduce", "overlap.grad_reduce"},
        std::pair{"overlap_param_gather", "overlap.param_gather"},
        std::pair{"tp_comm_overlap", "overlap.tp_comm"},
        std::pair{"overlap_p2p_comm", "overlap.pp_p2p"},
        std::pair{"overlap_moe_expert_parallel_comm", "overlap.moe_a2a"}}) {
    if (!s.Has(key) || IsNone(s.Use(key))) continue;
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool(key));
    job.Set(field, on && *on ? "true" : "false", source);
  }
  // Megatron-LM's training arguments have only the negative flag: overlap_p2p_comm is on unless
  // --no-overlap-p2p-communication is given (and off for the non-interleaved schedule, which the
  // step model applies when the job leaves overlap.pp_p2p unset).
  if (s.Has("no_overlap_p2p_communication") && !IsNone(s.Use("no_overlap_p2p_communication"))) {
    const std::string source = s.Use("no_overlap_p2p_communication")->source;
    STRATA_ASSIGN_OR_RETURN(auto off, s.Bool("no_overlap_p2p_communication"));
    job.Set("overlap.pp_p2p", off && *off ? "false" : "true", source);
  }
  return OkStatus();
}

// --moe-grouped-gemm (ms-swift's --moe_grouped_gemm): TE's grouped GEMM over the local experts,
// else SequentialMLP. Both default to false; left unset when not given, so `step` prints the
// assumption (data/frameworks.yaml, megatron-core's sequential_experts) with its alternative.
Status MapMoeGroupedGemm(Settings& s, JobBuilder& job) {
  if (!s.Has("moe_grouped_gemm") || IsNone(s.Use("moe_grouped_gemm"))) return OkStatus();
  const std::string source = s.Use("moe_grouped_gemm")->source;
  STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("moe_grouped_gemm"));
  job.Set("moe.grouped_gemm", on && *on ? "true" : "false", source);
  return OkStatus();
}

// What the routing lets the busiest expert rank receive (moe.routing_imbalance, over the mean).
// --moe-router-force-load-balancing replaces the gate's logits with random ones ("only for
// benchmark": megatron-core d98e8a64 transformer_config.py, router.py apply_random_logits), so
// every expert gets the mean in expectation: 1.00x. --moe-expert-capacity-factor X with
// --moe-pad-expert-input-to-capacity drops the tokens above X x the mean of each expert and pads
// every expert's input up to it, so every rank computes exactly X x the mean (transformer_config.py
// moe_expert_capacity_factor, moe_pad_expert_input_to_capacity). A capacity without padding only
// caps the busiest rank at X x the mean: noted, the skew left to the step's assumption.
Status MapMoeRouting(Settings& s, JobBuilder& job) {
  if (const SourcedValue* v = s.Use("moe_router_force_load_balancing"); !IsNone(v)) {
    const std::string source = v->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("moe_router_force_load_balancing"));
    if (on && *on) {
      job.Set("moe.routing_imbalance", "1",
              source + " (random router logits: every expert receives the mean)");
      s.Ignore("moe_expert_capacity_factor");
      s.Ignore("moe_pad_expert_input_to_capacity");
      return OkStatus();
    }
  }
  const SourcedValue* capacity = s.Use("moe_expert_capacity_factor");
  if (IsNone(capacity)) {
    s.Ignore("moe_pad_expert_input_to_capacity");
    return OkStatus();
  }
  const SourcedValue cap = *capacity;
  STRATA_ASSIGN_OR_RETURN(auto factor, s.Number("moe_expert_capacity_factor"));
  if (!factor || *factor <= 0) {
    return InvalidInput(fmt::format("{}: expected a capacity factor above 0, got '{}'", cap.source,
                                    cap.value))
        .InField("moe_expert_capacity_factor");
  }
  bool pad = false;
  std::string pad_source;
  if (const SourcedValue* p = s.Use("moe_pad_expert_input_to_capacity"); !IsNone(p)) {
    pad_source = p->source;
    STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("moe_pad_expert_input_to_capacity"));
    pad = on && *on;
  }
  if (pad && *factor >= 1) {
    job.Set("moe.routing_imbalance", fmt::format("{}", *factor),
            fmt::format("{} {} with {} (every expert's input padded to its capacity)", cap.source,
                        cap.value, pad_source));
  } else if (pad) {
    job.Note(
        fmt::format("{} {} with {}: every expert computes {} x the mean tokens and drops the "
                    "rest; strata counts the mean (moe.routing_imbalance 1)",
                    cap.source, cap.value, pad_source, cap.value));
    job.Set("moe.routing_imbalance", "1",
            fmt::format("{} {} with {} (below 1: counted at the mean)", cap.source, cap.value,
                        pad_source));
  } else {
    job.Note(
        fmt::format("{} {} without --moe-pad-expert-input-to-capacity: tokens above {} x an "
                    "expert's mean are dropped, so the busiest rank receives at most that; "
                    "the routing skew is left to the step's assumption",
                    cap.source, cap.value, cap.value));
  }
  return OkStatus();
}

// --moe-aux-loss-coeff (ms-swift's --moe_aux_loss_coeff): a load-balancing loss above 0 puts one
// more NCCL communicator on every rank (the router's TP x CP group). Megatron's default is 0, and
// ms-swift's from 3.7.1 (before, the checkpoint's config.json gave it): left unset when not given.
Status MapMoeAuxLoss(Settings& s, JobBuilder& job) {
  if (!s.Has("moe_aux_loss_coeff") || IsNone(s.Use("moe_aux_loss_coeff"))) return OkStatus();
  const SourcedValue v = *s.Use("moe_aux_loss_coeff");
  // Newer megatron-core takes one coefficient per loss type (nargs='+', paired with
  // --moe-router-load-balancing-type): any above 0 runs a loss on the group.
  STRATA_ASSIGN_OR_RETURN(auto coeffs, s.Numbers("moe_aux_loss_coeff"));
  double largest = 0;
  for (const double coeff : coeffs) {
    if (coeff < 0) {
      return InvalidInput(
                 fmt::format("{}: expected coefficients of 0 or more, got '{}'", v.source, v.value))
          .InField("moe_aux_loss_coeff");
    }
    largest = std::max(largest, coeff);
  }
  job.Set("moe.aux_loss_coeff", fmt::format("{}", largest), v.source);
  return OkStatus();
}

// --optimizer-cpu-offload (megatron-core's HybridDeviceOptimizer; ms-swift's
// optimizer_cpu_offload): the optimizer states in host memory, optimizer_offload_fraction of
// them (default 1.0).
Status MapOptimizerOffload(Settings& s, JobBuilder& job) {
  const bool has_fraction =
      s.Has("optimizer_offload_fraction") && !IsNone(s.Use("optimizer_offload_fraction"));
  if (!s.Has("optimizer_cpu_offload") || IsNone(s.Use("optimizer_cpu_offload"))) return OkStatus();
  const std::string source = s.Use("optimizer_cpu_offload")->source;
  STRATA_ASSIGN_OR_RETURN(auto on, s.Bool("optimizer_cpu_offload"));
  if (!on || !*on) return OkStatus();
  job.Set("sharding.offload_optimizer", "cpu", source);
  if (!has_fraction) return OkStatus();
  const SourcedValue fraction = *s.Use("optimizer_offload_fraction");
  STRATA_ASSIGN_OR_RETURN(auto share, s.Number("optimizer_offload_fraction"));
  if (*share != 1.0) {
    job.Note(
        fmt::format("{} {}: only that fraction of the optimizer states is in host memory; "
                    "strata counts all of it there",
                    fraction.source, fraction.value));
  }
  return OkStatus();
}

Status MapSwiftExtras(Settings& s, const MapContext& ctx, JobBuilder& job) {
  // Vision tower: ms-swift freezes it unless --freeze_vit false.
  bool freeze_vit = true;
  std::string source = "ms-swift's freeze_vit defaults to true";
  if (s.Has("freeze_vit")) {
    source = s.Use("freeze_vit")->source;
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("freeze_vit"));
    freeze_vit = *v;
  }
  // Only a model with a vision tower has something to freeze.
  bool has_vision = true;
  if (auto model = LoadModelConfig(job.Get("model")); model.ok())
    has_vision = model->vision.present;
  if (!has_vision) {
    job.Default("frozen", "[]", "the model has no vision tower (freeze_vit has nothing to freeze)");
  } else if (source.starts_with("ms-swift")) {
    job.Default("frozen", freeze_vit ? "[vision]" : "[]", source);
  } else {
    job.Set("frozen", freeze_vit ? "[vision]" : "[]", source);
  }
  if (s.Has("freeze_llm")) {
    STRATA_ASSIGN_OR_RETURN(auto v, s.Bool("freeze_llm"));
    if (v && *v)
      job.Note("freeze_llm true: strata cannot freeze the text model; counted trainable");
  }
  STRATA_RETURN_IF_ERROR(MapMegatronSwiftAdapter(s, ctx, job));
  NoteTuningMode(s, job);
  job.NamedDefault(
      "ddp_timeout = 18000000 s (ms-swift's default, 5000 h): the NCCL watchdog "
      "practically never fires (see `strata hang`; not a job field)");
  return OkStatus();
}

}  // namespace

Status MapMegatron(MegatronFlavor flavor, Settings& s, MapContext& ctx, JobBuilder& job) {
  const bool swift = flavor == MegatronFlavor::kMsSwiftMcore;
  Sizes sizes;
  // The model first (its position in the YAML), but it needs TP for the vocabulary padding.
  const SourcedValue* tp_value = s.Use("tensor_model_parallel_size");
  int64_t tp = 1;
  if (!IsNone(tp_value)) tp = std::max<int64_t>(1, std::atoll(tp_value->value.c_str()));
  STRATA_RETURN_IF_ERROR(MapModel(flavor, s, ctx, job, tp));
  STRATA_RETURN_IF_ERROR(MapParallel(flavor, s, job, sizes, HasExperts(ctx, job)));
  STRATA_RETURN_IF_ERROR(MapBatchAndSequence(flavor, s, job));
  STRATA_RETURN_IF_ERROR(MapRecompute(flavor, s, job));
  STRATA_RETURN_IF_ERROR(MapActivationOffload(s, job));
  STRATA_RETURN_IF_ERROR(MapPrecision(flavor, s, job));
  STRATA_RETURN_IF_ERROR(MapOptimizer(flavor, s, job));
  STRATA_RETURN_IF_ERROR(MapOptimizerOffload(s, job));
  STRATA_RETURN_IF_ERROR(MapCheckpointContents(s, job));
  STRATA_RETURN_IF_ERROR(MapFp8(s, job));
  STRATA_RETURN_IF_ERROR(MapOverlap(s, job));
  STRATA_RETURN_IF_ERROR(MapMoeGroupedGemm(s, job));
  STRATA_RETURN_IF_ERROR(MapMoeRouting(s, job));
  STRATA_RETURN_IF_ERROR(MapMoeAuxLoss(s, job));
  if (swift) STRATA_RETURN_IF_ERROR(MapSwiftExtras(s, ctx, job));
  if (s.Has("mtp_num_layers") && !IsNone(s.Use("mtp_num_layers"))) {
    const std::string src = s.Use("mtp_num_layers")->source;
    STRATA_ASSIGN_OR_RETURN(auto n, s.Int("mtp_num_layers"));
    job.Set("mtp", *n > 0 ? "true" : "false", src);
  } else {
    job.Default("mtp", "false", "the MTP block is built only with --mtp-num-layers");
  }
  if (const SourcedValue* v = s.Use("distributed_timeout_minutes"); !IsNone(v)) {
    // The launch's own watchdog, not Megatron's default.
    job.Note(
        fmt::format("distributed_timeout_minutes = {} ({}): the collective timeout the "
                    "launch sets (not a job field; `strata hang` reads it)",
                    v->value, v->source));
  } else if (!swift) {
    job.NamedDefault(
        "distributed_timeout_minutes = 10: Megatron's collective timeout "
        "(not a job field; `strata hang` reads it)");
  }
  // megatron-core's --attention-backend (AttnBackend: flash, fused, unfused, local, auto):
  // unfused (Transformer Engine's UnfusedDotProductAttention) and local (megatron-core's own
  // DotProductAttention) write the S x S scores to HBM and keep the softmax for backward, which
  // is the job's attention.kernel unfused; flash, fused (cuDNN) and auto (TE's choice among the
  // fused ones) do not.
  if (const SourcedValue* v = s.Use("attention_backend")) {
    const std::string backend = v->value.substr(v->value.rfind('.') + 1);  // "AttnBackend.flash"
    if (backend == "unfused" || backend == "local") {
      job.Set("attention.kernel", "unfused", fmt::format("{} {}", v->source, v->value));
    } else if (backend == "flash" || backend == "fused" || backend == "auto") {
      job.Set("attention.kernel", "flash", fmt::format("{} {}", v->source, v->value));
    } else {
      return InvalidInput(fmt::format("--attention-backend {}: expected flash, fused, unfused, "
                                      "local or auto",
                                      v->value))
          .InField("--attention-backend");
    }
  }
  // Settings that mean nothing for memory or time, read so they are not listed as unknown.
  for (const char* key : {"use_mcore_models", "transformer_impl"}) s.Ignore(key);
  STRATA_RETURN_IF_ERROR(FinishCommon(s, ctx, job, sizes.tp * sizes.pp * sizes.cp));
  if (job.Get("batch.global_batch").empty()) {
    STRATA_ASSIGN_OR_RETURN(const int64_t dp, job.GetPositiveInt("parallel.dp"));
    STRATA_ASSIGN_OR_RETURN(const int64_t mbs, job.GetPositiveInt("batch.micro_batch"));
    job.DeriveGlobalBatch(
        mbs, dp,
        fmt::format("DP {} (default: Megatron's global_batch_size = micro_batch_size x DP)", dp));
  }
  return OkStatus();
}

}  // namespace strata
