#include "strata/rl/rl_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/model/sequence_lengths.h"

namespace strata {
namespace {

// The keys of each section, for the unknown-key check and --set.
const std::vector<std::string> kTopKeys = {
    "actor",     "algorithm",    "batch",          "lengths",   "rollout",
    "reference", "old_log_prob", "remove_padding", "placement", "reference_in_actor"};
const std::vector<std::string> kActorKeys = {"job", "set"};
const std::vector<std::string> kBatchKeys = {"prompts",
                                             "samples_per_prompt",
                                             "mini_batches",
                                             "epochs",
                                             "max_tokens_per_gpu",
                                             "log_prob_max_tokens_per_gpu",
                                             "critic_max_tokens_per_gpu"};
const std::vector<std::string> kLengthKeys = {"prompt_mean", "prompt_max", "response_mean",
                                              "response_max", "response_distribution"};
const std::vector<std::string> kRolloutKeys = {
    "engine", "vllm_version",   "tp",          "gpu_memory_utilization", "max_num_seqs",
    "dtype",  "kv_cache_dtype", "state_dtype", "enforce_eager"};
const std::vector<std::string> kPlacementKeys = {"mode", "rollout_gpus", "offload_trainer",
                                                 "offload_reference", "one_step_off"};

Result<int64_t> DtypeBytes(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string name, map.String(key));
  if (name == "bf16" || name == "bfloat16" || name == "fp16" || name == "float16") return 2;
  if (name == "fp32" || name == "float32") return 4;
  if (name == "fp8" || name == "fp8_e4m3" || name == "fp8_e5m2") return 1;
  return map.ErrorAt(key, fmt::format("unknown dtype '{}'", name))
      .WithHint(DidYouMeanHint(name, {"bf16", "fp16", "fp32", "fp8"}));
}

Result<double> Tokens(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto v = ParseTokenCount(text);
  if (!v.ok() || *v <= 0) {
    return map.ErrorAt(key,
                       fmt::format("expected a positive token count (2048, 8K), got '{}'", text));
  }
  return *v;
}

Result<EngineVersion> ParseVersion(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto v = ParseEngineVersion(text);
  if (!v) return map.ErrorAt(key, fmt::format("expected a version such as 0.19, got '{}'", text));
  return *v;
}

// Every allowed key counts as known (for "did you mean"), whether or not this file holds it.
Status CheckKeys(const YamlMap& map, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) map.Has(key);
  return map.CheckNoUnknownKeys();
}

// "rollout.tp=4" -> node["rollout"]["tp"] = "4"; "actor.parallel.tp=2" -> the actor's --set.
Status ApplyOverride(YAML::Node& root, const std::string& override, RlSpec& spec) {
  const size_t eq = override.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidInput(fmt::format("--set '{}': expected key=value", override))
        .WithHint("for example --set rollout.tp=4");
  }
  const std::string key = override.substr(0, eq);
  const std::string value = override.substr(eq + 1);
  if (key.starts_with("actor.") && key != "actor.job") {
    spec.actor_overrides.push_back(override.substr(6));
    return OkStatus();
  }
  const auto& keys = RlSpecKeys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    return InvalidInput(fmt::format("--set: unknown RL job key '{}'", key))
        .WithHint(DidYouMeanHint(key, keys) +
                  " (a key of the actor's training job is set as actor.<key>)");
  }
  const size_t dot = key.find('.');
  if (dot == std::string::npos) {
    root[key] = value;
  } else {
    root[key.substr(0, dot)][key.substr(dot + 1)] = value;
  }
  return OkStatus();
}

Status ParseInto(const YAML::Node& root, const std::string& file, RlSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));

  STRATA_ASSIGN_OR_RETURN(YamlMap actor, top.Map("actor"));
  STRATA_ASSIGN_OR_RETURN(spec.actor_job, actor.String("job"));
  if (actor.Has("set")) {
    STRATA_ASSIGN_OR_RETURN(YAML::Node set, actor.Node("set"));
    if (!set.IsSequence()) return actor.ErrorAt("set", "expected a list of key=value strings");
    std::vector<std::string> from_file;
    for (const auto& item : set) {
      if (!item.IsScalar()) return actor.ErrorAt("set", "expected a list of key=value strings");
      from_file.push_back(item.Scalar());
    }
    // The file's first, then the command line's (which win).
    from_file.insert(from_file.end(), spec.actor_overrides.begin(), spec.actor_overrides.end());
    spec.actor_overrides = std::move(from_file);
  }
  STRATA_RETURN_IF_ERROR(CheckKeys(actor, kActorKeys));

  STRATA_ASSIGN_OR_RETURN(std::string algorithm, top.String("algorithm"));
  if (algorithm == "grpo") {
    spec.algorithm = RlAlgorithm::kGrpo;
  } else if (algorithm == "ppo") {
    spec.algorithm = RlAlgorithm::kPpo;
  } else {
    return top.ErrorAt("algorithm", fmt::format("unknown algorithm '{}'", algorithm))
        .WithHint(DidYouMeanHint(algorithm, {"grpo", "ppo"}));
  }

  STRATA_ASSIGN_OR_RETURN(YamlMap batch, top.Map("batch"));
  STRATA_ASSIGN_OR_RETURN(spec.prompts, batch.PositiveInt("prompts"));
  STRATA_ASSIGN_OR_RETURN(spec.samples_per_prompt, batch.PositiveInt("samples_per_prompt"));
  if (batch.Has("mini_batches")) {
    STRATA_ASSIGN_OR_RETURN(spec.mini_batches, batch.PositiveInt("mini_batches"));
  }
  if (batch.Has("epochs")) {
    STRATA_ASSIGN_OR_RETURN(spec.epochs, batch.PositiveInt("epochs"));
  }
  if (spec.samples() % spec.mini_batches != 0) {
    return batch.ErrorAt(
        "mini_batches",
        fmt::format("{} samples ({} prompts x {}) do not split into {} mini "
                    "batches",
                    spec.samples(), spec.prompts, spec.samples_per_prompt, spec.mini_batches));
  }
  // verl's dynamic batch: token budgets per GPU; the passes' own budgets only beside the actor's.
  for (auto [key, out] :
       {std::pair{"max_tokens_per_gpu", &spec.max_tokens_per_gpu},
        std::pair{"log_prob_max_tokens_per_gpu", &spec.log_prob_max_tokens_per_gpu},
        std::pair{"critic_max_tokens_per_gpu", &spec.critic_max_tokens_per_gpu}}) {
    if (!batch.Has(key)) continue;
    STRATA_ASSIGN_OR_RETURN(double tokens, Tokens(batch, key));
    *out = std::llround(tokens);
    if (!batch.Has("max_tokens_per_gpu")) {
      return batch
          .ErrorAt(key, fmt::format("{} packs a pass by tokens, but the actor's update is not "
                                    "packed (no batch.max_tokens_per_gpu)",
                                    key))
          .WithHint(
              "set batch.max_tokens_per_gpu (verl's ppo_max_token_len_per_gpu with "
              "use_dynamic_bsz); strata rl packs the log-prob and critic passes only beside it");
    }
  }
  STRATA_RETURN_IF_ERROR(CheckKeys(batch, kBatchKeys));

  STRATA_ASSIGN_OR_RETURN(YamlMap lengths, top.Map("lengths"));
  STRATA_ASSIGN_OR_RETURN(spec.lengths.prompt_max, Tokens(lengths, "prompt_max"));
  STRATA_ASSIGN_OR_RETURN(spec.lengths.response_max, Tokens(lengths, "response_max"));
  spec.lengths.prompt_mean = spec.lengths.prompt_max;
  spec.lengths.response_mean = spec.lengths.response_max;
  if (lengths.Has("prompt_mean")) {
    STRATA_ASSIGN_OR_RETURN(spec.lengths.prompt_mean, Tokens(lengths, "prompt_mean"));
  }
  if (lengths.Has("response_mean")) {
    STRATA_ASSIGN_OR_RETURN(spec.lengths.response_mean, Tokens(lengths, "response_mean"));
  }
  if (spec.lengths.prompt_mean > spec.lengths.prompt_max) {
    return lengths.ErrorAt("prompt_mean", "the mean prompt is longer than prompt_max");
  }
  if (spec.lengths.response_mean > spec.lengths.response_max) {
    return lengths.ErrorAt("response_mean", "the mean response is longer than response_max");
  }
  if (lengths.Has("response_distribution")) {
    STRATA_ASSIGN_OR_RETURN(std::string shape, lengths.String("response_distribution"));
    auto parsed = ParseResponseShape(shape);
    if (!parsed) {
      return lengths
          .ErrorAt("response_distribution",
                   fmt::format("unknown response distribution '{}'", shape))
          .WithHint(DidYouMeanHint(shape, ResponseShapeNames()));
    }
    spec.lengths.response_shape = *parsed;
    const ResponseDistributionOrError made =
        MakeResponseDistribution(*parsed, spec.lengths.response_mean, spec.lengths.response_max);
    if (!made.distribution) {
      return lengths.ErrorAt("response_distribution", made.error)
          .WithHint("raise response_mean, or use capped_exponential (any mean up to the max)");
    }
  }
  STRATA_RETURN_IF_ERROR(CheckKeys(lengths, kLengthKeys));

  STRATA_ASSIGN_OR_RETURN(YamlMap rollout, top.Map("rollout"));
  if (rollout.Has("engine")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.engine, rollout.String("engine"));
    // SGLang is read as vLLM: verl hands it the same gpu_memory_utilization (as SGLang's
    // mem_fraction_static) and tensor parallelism, and its decode is the same roofline.
    if (spec.rollout.engine != "vllm" && spec.rollout.engine != "sglang") {
      return rollout
          .ErrorAt("engine", fmt::format("engine '{}' is not modelled", spec.rollout.engine))
          .WithHint(DidYouMeanHint(spec.rollout.engine, {"vllm", "sglang"}));
    }
  }
  STRATA_ASSIGN_OR_RETURN(spec.rollout.vllm, ParseVersion(rollout, "vllm_version"));
  STRATA_ASSIGN_OR_RETURN(spec.rollout.tp, rollout.PositiveInt("tp"));
  STRATA_ASSIGN_OR_RETURN(spec.rollout.gpu_memory_utilization,
                          rollout.Number("gpu_memory_utilization"));
  if (!(spec.rollout.gpu_memory_utilization > 0 && spec.rollout.gpu_memory_utilization <= 1)) {
    return rollout.ErrorAt(
        "gpu_memory_utilization",
        fmt::format("expected a fraction in (0, 1], got {}", spec.rollout.gpu_memory_utilization));
  }
  if (rollout.Has("max_num_seqs")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.max_num_seqs, rollout.PositiveInt("max_num_seqs"));
  }
  if (rollout.Has("enforce_eager")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.enforce_eager, rollout.Bool("enforce_eager"));
  }
  if (rollout.Has("dtype")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.weight_bytes, DtypeBytes(rollout, "dtype"));
  }
  if (rollout.Has("kv_cache_dtype")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.dtypes.kv_bytes, DtypeBytes(rollout, "kv_cache_dtype"));
  }
  if (rollout.Has("state_dtype")) {
    STRATA_ASSIGN_OR_RETURN(spec.rollout.dtypes.state_bytes, DtypeBytes(rollout, "state_dtype"));
  }
  STRATA_RETURN_IF_ERROR(CheckKeys(rollout, kRolloutKeys));

  if (top.Has("reference")) {
    STRATA_ASSIGN_OR_RETURN(spec.reference_model, top.Bool("reference"));
  }
  if (top.Has("reference_in_actor")) {
    STRATA_ASSIGN_OR_RETURN(spec.reference_in_actor, top.Bool("reference_in_actor"));
  }
  if (top.Has("remove_padding")) {
    STRATA_ASSIGN_OR_RETURN(spec.remove_padding, top.Bool("remove_padding"));
  }
  if (top.Has("old_log_prob")) {
    // Who computes the old log-probs: the trainer's own forward (verl's default), or the
    // rollout, whose per-token log-probs verl's bypass mode takes as the old ones.
    STRATA_ASSIGN_OR_RETURN(std::string source, top.String("old_log_prob"));
    if (source == "trainer") {
      spec.old_log_prob_pass = true;
    } else if (source == "rollout") {
      spec.old_log_prob_pass = false;
    } else {
      return top.ErrorAt("old_log_prob", fmt::format("unknown old_log_prob '{}'", source))
          .WithHint(DidYouMeanHint(source, {"trainer", "rollout"}) +
                    " (rollout: verl's algorithm.rollout_correction.bypass_mode=True)");
    }
  }

  if (top.Has("placement")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap placement, top.Map("placement"));
    STRATA_ASSIGN_OR_RETURN(std::string mode, placement.String("mode"));
    if (mode == "colocated") {
      spec.placement = RlPlacement::kColocated;
    } else if (mode == "split") {
      spec.placement = RlPlacement::kSplit;
      STRATA_ASSIGN_OR_RETURN(spec.rollout_gpus, placement.PositiveInt("rollout_gpus"));
    } else {
      return placement.ErrorAt("mode", fmt::format("unknown placement '{}'", mode))
          .WithHint(DidYouMeanHint(mode, {"colocated", "split"}));
    }
    if (placement.Has("rollout_gpus") && spec.placement == RlPlacement::kColocated) {
      return placement.ErrorAt("rollout_gpus", "rollout_gpus is for mode: split")
          .WithHint("colocated rollout uses every GPU");
    }
    if (placement.Has("one_step_off")) {
      STRATA_ASSIGN_OR_RETURN(spec.one_step_off, placement.Bool("one_step_off"));
      if (spec.one_step_off && spec.placement != RlPlacement::kSplit) {
        return placement.ErrorAt("one_step_off", "one_step_off is for mode: split")
            .WithHint("colocated rollout and training take turns on the same GPUs");
      }
    }
    if (placement.Has("offload_trainer")) {
      STRATA_ASSIGN_OR_RETURN(spec.offload_trainer, placement.Bool("offload_trainer"));
      spec.offload_trainer_written = true;
    }
    spec.offload_reference = spec.offload_trainer;
    if (placement.Has("offload_reference")) {
      STRATA_ASSIGN_OR_RETURN(spec.offload_reference, placement.Bool("offload_reference"));
    }
    STRATA_RETURN_IF_ERROR(CheckKeys(placement, kPlacementKeys));
  }
  return CheckKeys(top, kTopKeys);
}

}  // namespace

std::optional<EngineVersion> ParseEngineVersion(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  EngineVersion v;
  const char* end = text.data() + text.size();
  auto [p1, e1] = std::from_chars(text.data(), text.data() + dot, v.major);
  auto [p2, e2] = std::from_chars(text.data() + dot + 1, end, v.minor);
  if (e1 != std::errc() || p1 != text.data() + dot || e2 != std::errc()) return std::nullopt;
  if (p2 != end && *p2 != '.') return std::nullopt;
  return v;
}

ResponseDistribution RlLengths::Responses() const {
  ResponseDistributionOrError made =
      MakeResponseDistribution(response_shape, response_mean, response_max);
  if (!made.distribution) {
    made = MakeResponseDistribution(ResponseShape::kCappedExponential,
                                    std::min(response_mean, response_max), response_max);
  }
  if (made.distribution) return *made.distribution;
  ResponseDistribution empty;  // no lengths at all (a spec built without them)
  empty.mean_tokens = response_mean;
  empty.max_tokens = response_max;
  return empty;
}

std::string_view RlAlgorithmName(RlAlgorithm a) { return a == RlAlgorithm::kGrpo ? "grpo" : "ppo"; }

std::string_view RolloutEngineLabel(const RlSpec& spec) {
  return spec.rollout.engine == "sglang" ? "SGLang" : "vLLM";
}

std::string_view RlPlacementName(RlPlacement p) {
  return p == RlPlacement::kColocated ? "colocated" : "split";
}

const std::vector<std::string>& RlSpecKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"algorithm",    "reference",      "reference_in_actor",
                                  "old_log_prob", "remove_padding", "actor.job"};
    for (const auto& s : kBatchKeys) k.push_back("batch." + s);
    for (const auto& s : kLengthKeys) k.push_back("lengths." + s);
    for (const auto& s : kRolloutKeys) k.push_back("rollout." + s);
    for (const auto& s : kPlacementKeys) k.push_back("placement." + s);
    return k;
  }();
  return keys;
}

Result<RlSpec> ParseRlSpec(const std::string& text, const std::string& file,
                           const std::vector<std::string>& overrides) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  if (!root.IsMap()) {
    return InvalidInput("expected a mapping of key: value (an RL job)").InFile(file);
  }
  RlSpec spec;
  spec.file = file;
  for (const std::string& o : overrides) STRATA_RETURN_IF_ERROR(ApplyOverride(root, o, spec));
  Status parsed = ParseInto(root, file, spec);
  if (!parsed.ok()) return std::move(parsed).error();
  return spec;
}

Result<RlSpec> LoadRlSpec(const std::string& path_or_name,
                          const std::vector<std::string>& overrides) {
  const bool looks_like_path = path_or_name.find('/') != std::string::npos ||
                               path_or_name.ends_with(".yaml") || path_or_name.ends_with(".yml");
  const std::string path =
      looks_like_path ? path_or_name : DataDir() + "/jobs/" + path_or_name + ".yaml";
  auto text = ReadFile(path);
  if (!text.ok()) {
    Error e = std::move(text).error();
    if (!looks_like_path) {
      e.file.clear();
      e.message = fmt::format("no RL job named '{}' in the catalog (data/jobs/)", path_or_name);
      e.hint = fmt::format("give a path to an RL job file, or '{}'", kReferenceRlJobName);
    }
    return e;
  }
  STRATA_ASSIGN_OR_RETURN(
      RlSpec spec,
      ParseRlSpec(*text, looks_like_path ? path : "data/jobs/" + path_or_name + ".yaml",
                  overrides));
  // An actor job given as a relative file path is read beside the RL job file.
  const std::string& actor = spec.actor_job;
  const bool actor_is_path =
      actor.find('/') != std::string::npos || actor.ends_with(".yaml") || actor.ends_with(".yml");
  const size_t slash = path.rfind('/');
  if (looks_like_path && actor_is_path && !actor.starts_with("/") && slash != std::string::npos) {
    spec.actor_job = path.substr(0, slash + 1) + actor;
  }
  return spec;
}

}  // namespace strata
