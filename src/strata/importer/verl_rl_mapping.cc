#include "strata/importer/verl_rl_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/core/yaml_fields.h"
#include "strata/importer/framework_mappers.h"
#include "strata/importer/input_readers.h"
#include "strata/importer/settings.h"
#include "strata/importer/verl_entry_points.h"

namespace strata {
namespace {

constexpr const char* kRollout = "actor_rollout_ref.rollout.";
constexpr const char* kActor = "actor_rollout_ref.actor.";
// RayPPOTrainer._validate_config, where verl refuses a batch before the run.
constexpr const char* kVerlCheck =
    "volcengine/verl@00401103a8c8900774aba04b910de5b0af930b99:verl/trainer/ppo/ray_trainer.py, "
    "RayPPOTrainer._validate_config";
// The commit whose workers say what each phase keeps on the GPU (strata rl's memory phases).
constexpr const char* kVerlCommit = "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7";

// verl's defaults of one trainer config (data/verl_rl_defaults.yaml).
struct VerlDefaults {
  std::map<std::string, std::string> values;
  std::map<std::string, std::string> sources;  // a key whose default another commit states
  std::string source;
  std::string vllm_version;
};

Result<VerlDefaults> LoadVerlDefaults(bool megatron) {
  const std::string label = "data/verl_rl_defaults.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(DataDir() + "/verl_rl_defaults.yaml"));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, label));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, label, ""));
  VerlDefaults d;
  STRATA_ASSIGN_OR_RETURN(d.vllm_version, top.String("vllm_version"));
  STRATA_ASSIGN_OR_RETURN(YamlMap config, top.Map(megatron ? "megatron" : "fsdp"));
  STRATA_ASSIGN_OR_RETURN(d.source, config.String("source"));
  STRATA_ASSIGN_OR_RETURN(YAML::Node values, config.Node("defaults"));
  if (!values.IsMap()) return InvalidInput("defaults: expected a mapping").InFile(label);
  for (const auto& kv : values) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsMap()) {
      // {value: ..., source: ...}: a default from another commit than the config's.
      if (!kv.second["value"] || !kv.second["source"]) {
        return InvalidInput(fmt::format("defaults.{}: expected a value or {{value, source}}", key))
            .InFile(label);
      }
      d.values[key] = kv.second["value"].Scalar();
      d.sources[key] = kv.second["source"].Scalar();
    } else {
      d.values[key] = kv.second.Scalar();
    }
  }
  return d;
}

// One verl key as the launch set it, or verl's default.
struct VerlValue {
  std::string key;
  std::string value;
  std::string source;  // "data.train_batch_size (line 9)"; for a default, verl's config
  bool defaulted = false;
};

// The line a source names: "key (line 12)" (a command) or "file.yaml:12: key" (a file); 0 when
// it names none.
int LineOf(const std::string& source) {
  int line = 0;
  if (const size_t at = source.rfind("(line "); at != std::string::npos) {
    std::from_chars(source.data() + at + 6, source.data() + source.size(), line);
    return line;
  }
  const size_t colon = source.find(':');
  if (colon == std::string::npos) return 0;
  auto [end, ec] = std::from_chars(source.data() + colon + 1, source.data() + source.size(), line);
  return ec == std::errc() && end < source.data() + source.size() && *end == ':' ? line : 0;
}

Error AtKey(Error e, const VerlValue& v) {
  e.InField(v.key);
  if (const int line = LineOf(v.source); line > 0) e.AtLine(line);
  return e;
}

class VerlRlReader {
 public:
  VerlRlReader(Settings& s, VerlDefaults d) : s_(s), d_(std::move(d)) {}

  Result<VerlValue> Get(const std::string& key) {
    if (const SourcedValue* v = s_.Use(key)) return VerlValue{key, v->value, v->source, false};
    const auto it = d_.values.find(key);
    if (it == d_.values.end()) {
      return InvalidInput(fmt::format("data/verl_rl_defaults.yaml has no default for {}", key));
    }
    return VerlValue{key, it->second, "verl's default", true};
  }

  Result<int64_t> PositiveInt(const VerlValue& v) {
    const std::optional<int64_t> n = ParseInt64(v.value);
    if (!n || *n <= 0) {
      return AtKey(InvalidInput(fmt::format("{} = '{}': expected a positive whole number", Where(v),
                                            v.value)),
                   v);
    }
    return *n;
  }

  Result<bool> Bool(const VerlValue& v) {
    const std::string t = AsciiLower(v.value);
    if (t == "true") return true;
    if (t == "false") return false;
    return AtKey(InvalidInput(fmt::format("{} = '{}': expected True or False", Where(v), v.value)),
                 v);
  }

  Result<double> Fraction(const VerlValue& v) {
    // Python's float() literal as Hydra reads it (0.6, .6, 6e-1): not strtod's hex, inf or
    // leading spaces.
    const std::optional<double> parsed = ParsePythonNumber(v.value);
    const double x = parsed.value_or(0);
    if (!parsed.has_value() || !(x > 0 && x <= 1)) {
      return AtKey(
          InvalidInput(fmt::format("{} = '{}': expected a fraction in (0, 1]", Where(v), v.value)),
          v);
    }
    return x;
  }

  // For messages: "data.train_batch_size (line 9)", or "actor_rollout_ref.rollout.n (verl's
  // default)".
  std::string Where(const VerlValue& v) const {
    return v.defaulted ? v.key + " (verl's default)" : v.source;
  }

  // The field's comment: where the value came from.
  std::string Source(const VerlValue& v) const {
    return v.defaulted ? fmt::format("default: verl's {} = {}", v.key, v.value) : v.source;
  }

  void Set(const std::string& key, std::string value, const VerlValue& from,
           const std::string& why = "") {
    std::string source = Source(from);
    if (!why.empty()) source += ": " + why;
    if (from.defaulted) {
      const auto own = d_.sources.find(from.key);
      out_.defaults.push_back(fmt::format("{} = {}: verl's {} ({})", key, value, from.key,
                                          own != d_.sources.end() ? own->second : d_.source));
    }
    out_.fields.push_back({key, std::move(value), std::move(source),
                           from.defaulted ? FieldOrigin::kDefault : FieldOrigin::kFromInput});
  }
  void Derived(const std::string& key, std::string value, std::string how) {
    out_.fields.push_back(
        {key, std::move(value), "derived: " + std::move(how), FieldOrigin::kDerived});
  }
  void Assumed(const std::string& key, std::string value, const std::string& why) {
    out_.defaults.push_back(fmt::format("{} = {}: {}", key, value, why));
    out_.fields.push_back({key, std::move(value), "default: " + why, FieldOrigin::kDefault});
  }
  void Note(std::string note) { out_.notes.push_back(std::move(note)); }
  const std::string& VllmVersion() const { return d_.vllm_version; }
  const std::string& DefaultsSource() const { return d_.source; }
  RlImport& Out() { return out_; }

 private:
  Settings& s_;
  VerlDefaults d_;
  RlImport out_;
};

// The RL job field the mapping has set, or nullptr.
const ImportedField* FieldOf(const RlImport& out, std::string_view key) {
  for (const ImportedField& f : out.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

// Whether the mapping set the RL job field `key` to `value`.
bool FieldIs(const RlImport& out, std::string_view key, std::string_view value) {
  const ImportedField* f = FieldOf(out, key);
  return f != nullptr && f->value == value;
}

std::string RolloutDtype(const std::string& torch_name) {
  if (torch_name == "bfloat16" || torch_name == "bf16") return "bf16";
  if (torch_name == "float16" || torch_name == "fp16" || torch_name == "half") return "fp16";
  if (torch_name == "float32" || torch_name == "fp32") return "fp32";
  return "";
}

// The algorithm: verl trains a critic when the advantage estimator is GAE, unless critic.enable
// says otherwise (RayPPOTrainer.__init__).
Status ReadAlgorithm(Settings& s, VerlRlReader& r, const JobBuilder& actor) {
  STRATA_ASSIGN_OR_RETURN(VerlValue adv, r.Get("algorithm.adv_estimator"));
  bool critic = adv.value == "gae";
  std::string why = critic ? "GAE trains a critic beside the actor" : "no critic";
  if (s.Has("critic.enable")) {
    const SourcedValue* e = s.Use("critic.enable");
    if (e->value != "null" && e->value != "None") {
      STRATA_ASSIGN_OR_RETURN(critic,
                              r.Bool(VerlValue{"critic.enable", e->value, e->source, false}));
      why = fmt::format("{} {}, {}", e->source, e->value, critic ? "a critic" : "no critic");
    }
  }
  r.Set("algorithm", critic ? "ppo" : "grpo", adv, fmt::format("'{}', {}", adv.value, why));
  if (!critic && adv.value != "grpo") {
    r.Note(
        fmt::format("algorithm.adv_estimator = {} ({}): a critic-free estimator, priced as "
                    "GRPO (the same generation, log-prob and update passes)",
                    adv.value, r.Source(adv)));
  }
  if (adv.value == "remax") {
    r.Note("ReMax's greedy baseline rollout (a second generation per prompt) is not modelled");
  }
  if (critic) {
    if (const SourcedValue* path = s.Use("critic.model.path")) {
      const SourcedValue* actor_path = s.Use("actor_rollout_ref.model.path");
      if (actor_path == nullptr || path->value != actor_path->value) {
        r.Note(
            fmt::format("critic.model.path = {} ({}): a critic of another model is priced as "
                        "the actor's model in the actor's layout ({})",
                        path->value, path->source, actor.Get("model")));
      }
    }
    // The critic's update runs on the actor's job, so at the actor's micro batch: a launch that
    // gives the critic its own says what the critic's memory and time are priced at.
    if (const SourcedValue* micro = s.Use("critic.ppo_micro_batch_size_per_gpu");
        micro != nullptr && micro->value != "null" && micro->value != "None" &&
        micro->value != actor.Get("batch.micro_batch")) {
      r.Note(fmt::format(
          "critic.ppo_micro_batch_size_per_gpu = {} ({}): the critic's update is priced on the "
          "actor's job, at its micro batch {} a GPU (without use_dynamic_bsz; under it, at the "
          "critic's token budget)",
          micro->value, micro->source, actor.Get("batch.micro_batch")));
    }
  }
  return OkStatus();
}

// verl's batch checks, then strata's: the mini batches must be equal for the RL step.
// `dynamic`: use_dynamic_bsz, under which verl skips its minimal-batch check (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/config.py:89, only `if not
// use_dynamic_bsz`) and the batch need only split over the data-parallel ranks it is dispatched
// to (DataProto.chunk).
Status ReadBatch(VerlRlReader& r, const JobBuilder& actor, bool megatron, int64_t rollout_nodes,
                 int64_t rollout_per_node, bool dynamic) {
  STRATA_ASSIGN_OR_RETURN(VerlValue prompts_v, r.Get("data.train_batch_size"));
  STRATA_ASSIGN_OR_RETURN(VerlValue n_v, r.Get(std::string(kRollout) + "n"));
  STRATA_ASSIGN_OR_RETURN(VerlValue mini_v, r.Get(std::string(kActor) + "ppo_mini_batch_size"));
  STRATA_ASSIGN_OR_RETURN(VerlValue epochs_v, r.Get(std::string(kActor) + "ppo_epochs"));
  STRATA_ASSIGN_OR_RETURN(int64_t prompts, r.PositiveInt(prompts_v));
  STRATA_ASSIGN_OR_RETURN(int64_t n, r.PositiveInt(n_v));
  STRATA_ASSIGN_OR_RETURN(int64_t mini, r.PositiveInt(mini_v));
  STRATA_ASSIGN_OR_RETURN(int64_t epochs, r.PositiveInt(epochs_v));
  // verl: train_batch_size x n over the minimal batch (every GPU for FSDP; the megatron DP
  // ranks' micro batches for megatron).
  STRATA_ASSIGN_OR_RETURN(int64_t per_node, actor.GetPositiveInt("cluster.gpus_per_node"));
  STRATA_ASSIGN_OR_RETURN(int64_t nodes, actor.GetPositiveInt("cluster.nodes"));
  // The one-step-off recipe trains on its trainer's GPUs only: the rollout's nodes, or its share
  // of every node, are its own. An actor's job on shared nodes holds its own GPUs alone.
  const bool own_gpus =
      actor.Has("cluster.shared_nodes") && actor.Get("cluster.shared_nodes") == "true";
  const int64_t train_gpus = per_node * nodes - (own_gpus ? 0 : rollout_nodes * rollout_per_node);
  int64_t minimal = train_gpus;
  std::string minimal_how =
      fmt::format("{} {}GPUs", train_gpus, rollout_nodes > 0 ? "training " : "");
  if (megatron) {
    // Megatron's DP on the training GPUs: the rest of TP x PP x CP.
    STRATA_ASSIGN_OR_RETURN(int64_t tp, actor.GetPositiveInt("parallel.tp"));
    STRATA_ASSIGN_OR_RETURN(int64_t pp, actor.GetPositiveInt("parallel.pp"));
    STRATA_ASSIGN_OR_RETURN(int64_t cp, actor.GetPositiveInt("parallel.cp"));
    const int64_t dp = std::max<int64_t>(1, train_gpus / (tp * pp * cp));
    minimal = dp;
    minimal_how = fmt::format("megatron DP {}", dp);
    if (!dynamic) {
      STRATA_ASSIGN_OR_RETURN(int64_t micro, actor.GetPositiveInt("batch.micro_batch"));
      minimal = dp * micro;
      minimal_how = fmt::format("megatron DP {} x ppo_micro_batch_size_per_gpu {}", dp, micro);
    }
  }
  if ((prompts * n) % minimal != 0) {
    const std::string what =
        dynamic ? fmt::format("the {} data-parallel ranks verl dispatches it to", minimal)
                : fmt::format("verl's minimal batch of {}", minimal);
    return AtKey(InvalidInput(fmt::format(
                     "{} = {} prompts x {} = {} samples each: {} samples do not divide by {} ({})",
                     r.Where(prompts_v), prompts, r.Where(n_v), n, prompts * n, what, minimal_how)),
                 prompts_v)
        .WithHint(
            dynamic
                ? fmt::format("verl cannot split the batch evenly over its ranks (DataProto.chunk; "
                              "use_dynamic_bsz skips the minimal-batch check): make "
                              "train_batch_size x n a multiple of {}",
                              minimal)
                : fmt::format("verl refuses this launch: make train_batch_size x n a multiple "
                              "of {} ({})",
                              minimal, kVerlCheck));
  }
  if (prompts % mini != 0) {
    const std::string split = prompts < mini ? fmt::format("{} < {}", prompts, mini)
                                             : fmt::format("{} = {} x {} + {}", prompts,
                                                           prompts / mini, mini, prompts % mini);
    return AtKey(
               InvalidInput(fmt::format("{} = {} prompts do not split into mini batches of "
                                        "{} = {} prompts ({})",
                                        r.Where(prompts_v), prompts, r.Where(mini_v), mini, split)),
               prompts < mini ? prompts_v : mini_v)
        .WithHint(
            prompts < mini
                ? fmt::format("verl needs train_batch_size >= ppo_mini_batch_size ({})", kVerlCheck)
                : "make train_batch_size a multiple of ppo_mini_batch_size: strata's RL "
                  "step runs equal mini batches (each of ppo_mini_batch_size x n "
                  "samples)");
  }
  r.Set("batch.prompts", std::to_string(prompts), prompts_v);
  r.Set("batch.samples_per_prompt", std::to_string(n), n_v);
  r.Derived("batch.mini_batches", std::to_string(prompts / mini),
            fmt::format("data.train_batch_size {} / ppo_mini_batch_size {} ({})", prompts, mini,
                        r.Source(mini_v)));
  r.Set("batch.epochs", std::to_string(epochs), epochs_v);
  return OkStatus();
}

// Whether one of verl's passes packs its micro batches by tokens (its use_dynamic_bsz).
struct VerlPassSwitch {
  bool on = false;
  std::string source;  // the launch's key and line; empty when unset (the actor's switch)
  std::string why;     // for a reason: "... (line 5) = False", "... unset, so the actor's: ..."
};

// The switches of verl's four passes: the actor's update, the old log-prob pass (the rollout's
// config), the reference's pass and the critic's update and values passes.
struct VerlDynamicSwitches {
  VerlPassSwitch actor, log_prob, ref, critic;
  /// Whether the launch runs a reference pass at all: without one, verl reads no key of the
  /// reference's (CountApartPassesThatDoesNotRun says so), and nothing is said of its pass.
  bool reference = true;
};

// verl's dynamic batch (use_dynamic_bsz): the actor's, the log-prob passes' and the critic's
// token budgets per GPU. Each pass's switch defaults to the actor's and each log-prob budget to
// the actor's budget (verl/trainer/config/rollout/rollout.yaml:94-98, ref/ref.yaml:20-24,
// critic/critic.yaml:62-68 @ b178a3cd56f58b2d502255daba591e92833930a7). Each pass reads its own
// switch and budget: the old log-prob pass the rollout's, the reference's pass the ref's
// (verl/workers/fsdp_workers.py:1002-1005 and 1050-1054, megatron_workers.py:847-850 and
// 873-875), the critic its own (fsdp_workers.py:1545-1546, dp_critic.py:167 and 211-212); a
// budget is read only when its switch is on (dp_actor.py:459-463, 551-552).
Result<VerlDynamicSwitches> ReadDynamicBatch(Settings& s, VerlRlReader& r, bool ppo,
                                             bool reference) {
  const std::string ro = kRollout;
  const std::string ref_key = "actor_rollout_ref.ref.";
  STRATA_ASSIGN_OR_RETURN(VerlValue on_v, r.Get(std::string(kActor) + "use_dynamic_bsz"));
  STRATA_ASSIGN_OR_RETURN(bool on, r.Bool(on_v));
  VerlDynamicSwitches sw;
  sw.actor = {on, on_v.defaulted ? "" : on_v.source,
              on_v.defaulted ? fmt::format("{} unset, verl's default {}", on_v.key, on_v.value)
                             : fmt::format("{} = {}", on_v.source, on_v.value)};
  // A pass's own switch, or the actor's when the launch does not set it.
  // verl's own YAML writes these defaults as interpolations of the actor's keys
  // ("${actor_rollout_ref.actor.use_dynamic_bsz}"): the actor's value, as when unset.
  auto given = [&](const std::string& key) -> const SourcedValue* {
    const SourcedValue* v = s.Use(key);
    return v != nullptr && v->value.starts_with("${") ? nullptr : v;
  };
  auto pass_on = [&](const std::string& key) -> Result<VerlPassSwitch> {
    const SourcedValue* v = given(key);
    if (v == nullptr) {
      const SourcedValue* raw = s.Use(key);  // unset, or verl's interpolation of the actor's
      return VerlPassSwitch{
          on, "",
          fmt::format("{}, so the actor's: {}",
                      raw == nullptr ? key + " unset" : raw->source + " = " + raw->value,
                      sw.actor.why)};
    }
    STRATA_ASSIGN_OR_RETURN(bool b, r.Bool(VerlValue{key, v->value, v->source, false}));
    return VerlPassSwitch{b, v->source, fmt::format("{} = {}", v->source, v->value)};
  };
  STRATA_ASSIGN_OR_RETURN(sw.log_prob, pass_on(ro + "log_prob_use_dynamic_bsz"));
  sw.reference = reference;
  if (reference) {
    STRATA_ASSIGN_OR_RETURN(sw.ref, pass_on(ref_key + "log_prob_use_dynamic_bsz"));
  }
  STRATA_ASSIGN_OR_RETURN(sw.critic, pass_on("critic.use_dynamic_bsz"));
  // A budget whose switch is off is never read by verl: it costs a step nothing, and is
  // counted apart from the keys that may change one (the actor's: MapVerl).
  auto off_budget = [&](const std::string& key, const VerlPassSwitch& pass) {
    if (pass.on) return;
    s.NoStepCost(key,
                 fmt::format("its dynamic batching is off ({}): verl packs by this budget "
                             "only under it",
                             pass.why),
                 UnreadBecause::kDynamicBatchingOff);
  };
  off_budget(ro + "log_prob_max_token_len_per_gpu", sw.log_prob);
  if (reference) off_budget(ref_key + "log_prob_max_token_len_per_gpu", sw.ref);
  off_budget("critic.ppo_max_token_len_per_gpu", sw.critic);
  off_budget("critic.forward_max_token_len_per_gpu", sw.critic);
  if (!on) {
    // The actor's budget is the default of a packing pass's own (rollout.yaml:98, ref.yaml:24:
    // ${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384}): with the actor's
    // switch off verl still reads it there, so it may change a step after all.
    if ((sw.log_prob.on && given(ro + "log_prob_max_token_len_per_gpu") == nullptr) ||
        (sw.ref.on && given(ref_key + "log_prob_max_token_len_per_gpu") == nullptr)) {
      s.ReadAfterAll(std::string(kActor) + "ppo_max_token_len_per_gpu");
    }
    const VerlPassSwitch* packed = sw.log_prob.on          ? &sw.log_prob
                                   : sw.ref.on             ? &sw.ref
                                   : (ppo && sw.critic.on) ? &sw.critic
                                                           : nullptr;
    if (packed != nullptr) {
      r.Note(fmt::format(
          "{} packs its pass by tokens while the actor's update does not (use_dynamic_bsz "
          "{}): strata rl packs a pass only beside the actor's update, so it is priced at the "
          "actor's micro batch",
          packed->source, r.Source(on_v)));
    }
    return sw;
  }
  STRATA_ASSIGN_OR_RETURN(VerlValue budget_v,
                          r.Get(std::string(kActor) + "ppo_max_token_len_per_gpu"));
  STRATA_ASSIGN_OR_RETURN(int64_t budget, r.PositiveInt(budget_v));
  r.Set("batch.max_tokens_per_gpu", std::to_string(budget), budget_v,
        fmt::format("use_dynamic_bsz {} ({}): the actor's micro batches packed up to this many "
                    "tokens per GPU",
                    on_v.value, r.Where(on_v)));
  auto budget_of = [&](const std::string& key, int64_t fallback,
                       const std::string& fallback_why) -> Result<std::pair<int64_t, VerlValue>> {
    if (const SourcedValue* v = given(key)) {
      VerlValue value{key, v->value, v->source, false};
      STRATA_ASSIGN_OR_RETURN(int64_t n, r.PositiveInt(value));
      return std::pair{n, value};
    }
    return std::pair{fallback, VerlValue{key, std::to_string(fallback), fallback_why, true}};
  };
  // The budget strata rl prices both log-prob passes at: the old log-prob pass's when it packs,
  // else the actor's (RlSpec::LogProbBudget).
  int64_t priced = budget;
  if (sw.log_prob.on) {
    STRATA_ASSIGN_OR_RETURN(auto lp,
                            budget_of(ro + "log_prob_max_token_len_per_gpu", budget,
                                      "verl's default: the actor's ppo_max_token_len_per_gpu"));
    priced = lp.first;
    if (!lp.second.defaulted) {
      r.Set("batch.log_prob_max_tokens_per_gpu", std::to_string(lp.first), lp.second,
            "the old log-prob (and reference) passes' micro batches");
    } else {
      // Unwritten, the RL job's log-prob budget is the actor's, as verl's default is.
      r.Out().defaults.push_back(fmt::format(
          "batch.log_prob_max_tokens_per_gpu unwritten, the actor's {}: verl's "
          "{}log_prob_max_token_len_per_gpu is ${{oc.select:{}ppo_max_token_len_per_gpu,16384}} "
          "({}:verl/trainer/config/rollout/rollout.yaml:98)",
          budget, ro, kActor, kVerlCommit));
    }
  } else {
    r.Note(
        fmt::format("{} log_prob_use_dynamic_bsz False: the log-prob passes are priced packed "
                    "at the actor's budget",
                    sw.log_prob.source));
  }
  if (!reference) {
    // No reference pass: nothing of it to price or say.
  } else if (sw.ref.on) {
    // ref.log_prob_max_token_len_per_gpu defaults to the actor's budget (ref/ref.yaml:24).
    STRATA_ASSIGN_OR_RETURN(auto rf, budget_of(ref_key + "log_prob_max_token_len_per_gpu", budget,
                                               "verl's default: the actor's budget"));
    if (rf.first != priced) {
      r.Note(fmt::format(
          "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu = {} ({}): the reference "
          "pass is priced at the old log-prob pass's budget, {} tokens",
          rf.first, rf.second.source, priced));
    }
  } else if (!sw.ref.source.empty()) {
    // Set off by the launch while the actor packs: verl runs the reference's pass at
    // ref.log_prob_micro_batch_size_per_gpu samples a micro batch.
    r.Note(fmt::format(
        "{} = False: verl runs the reference pass at a fixed micro batch "
        "(ref.log_prob_micro_batch_size_per_gpu); strata rl prices it packed as the old "
        "log-prob pass, at {} tokens",
        sw.ref.source, priced));
  }
  if (ppo) {
    if (!sw.critic.on) {
      r.Note(
          fmt::format("{} critic.use_dynamic_bsz False: the critic is priced packed at the "
                      "actor's budget",
                      sw.critic.source));
    } else {
      STRATA_ASSIGN_OR_RETURN(VerlValue critic_v, r.Get("critic.ppo_max_token_len_per_gpu"));
      STRATA_ASSIGN_OR_RETURN(int64_t critic, r.PositiveInt(critic_v));
      r.Set("batch.critic_max_tokens_per_gpu", std::to_string(critic), critic_v,
            "the critic's update and values passes");
      if (const SourcedValue* fwd = given("critic.forward_max_token_len_per_gpu");
          fwd != nullptr && fwd->value != std::to_string(critic)) {
        r.Note(fmt::format(
            "critic.forward_max_token_len_per_gpu = {} ({}): the critic's values pass is "
            "priced at its update's budget, {} tokens",
            fwd->value, fwd->source, critic));
      }
    }
  }
  return sw;
}

Status ReadLengths(VerlRlReader& r) {
  STRATA_ASSIGN_OR_RETURN(VerlValue prompt_v, r.Get("data.max_prompt_length"));
  STRATA_ASSIGN_OR_RETURN(VerlValue response_v, r.Get("data.max_response_length"));
  STRATA_ASSIGN_OR_RETURN(int64_t prompt, r.PositiveInt(prompt_v));
  STRATA_ASSIGN_OR_RETURN(int64_t response, r.PositiveInt(response_v));
  const std::string caps =
      "a verl launch gives the caps only; every sample taken at its cap (set the mean from a "
      "log's response_length/mean)";
  r.Assumed("lengths.prompt_mean", std::to_string(prompt), caps);
  r.Set("lengths.prompt_max", std::to_string(prompt), prompt_v);
  r.Assumed("lengths.response_mean", std::to_string(response), caps);
  r.Set("lengths.response_max", std::to_string(response), response_v);
  return OkStatus();
}

Status ReadRollout(Settings& s, VerlRlReader& r, const VerlDynamicSwitches& dynamic) {
  const std::string ro = kRollout;
  STRATA_ASSIGN_OR_RETURN(VerlValue name, r.Get(ro + "name"));
  // verl's rollout names: vllm, sglang (and its older sglang_async), hf.
  std::string engine;
  if (name.value == "vllm") {
    engine = "vllm";
  } else if (name.value == "sglang" || name.value == "sglang_async") {
    engine = "sglang";
  } else {
    Error e = InvalidInput(fmt::format("{} = '{}': a rollout engine strata rl does not model",
                                       r.Where(name), name.value));
    return AtKey(std::move(e), name)
        .WithHint(DidYouMeanHint(name.value, {"vllm", "sglang"}) +
                  " (strata rl models vLLM, and SGLang as vLLM)");
  }
  r.Set("rollout.engine", engine, name);
  if (engine == "sglang") {
    r.Note(
        fmt::format("rollout.name = {} ({}): SGLang modelled as vLLM (verl passes "
                    "gpu_memory_utilization as its mem_fraction_static); its CUDA graphs and "
                    "scheduler are vLLM's figures",
                    name.value, r.Source(name)));
  }
  r.Assumed("rollout.vllm_version", "\"" + r.VllmVersion() + "\"",
            "a verl launch does not name the engine's release; strata's reference RL job's");
  STRATA_ASSIGN_OR_RETURN(VerlValue tp_v, r.Get(ro + "tensor_model_parallel_size"));
  STRATA_ASSIGN_OR_RETURN(int64_t tp, r.PositiveInt(tp_v));
  r.Set("rollout.tp", std::to_string(tp), tp_v);
  // vLLM's data and expert parallelism (rollout.data_parallel_size, expert_parallel_size: verl
  // b178a3cd _generated_ppo_trainer.yaml:207-208, default 1) make one engine of TP x DP GPUs whose
  // routed experts are split EP ways: strata rl's rollout is TP instances holding the whole
  // model each, so a generation time priced on it is not the launch's (Qwen3-30B-A3B at TP1 DP4
  // EP4: 56.87 GiB of weights a GPU instead of ~16.4, 3 sequences at once instead of ~44).
  // Refused by key and line rather than printed as the job's.
  for (const char* key : {"data_parallel_size", "expert_parallel_size"}) {
    const SourcedValue* v = s.Use(ro + key);
    if (v == nullptr) continue;
    STRATA_ASSIGN_OR_RETURN(int64_t degree,
                            r.PositiveInt(VerlValue{ro + key, v->value, v->source, false}));
    if (degree == 1) continue;
    return AtKey(InvalidInput(fmt::format(
                     "{} = {}: a vLLM rollout with {} parallelism, which strata rl does not "
                     "model (its rollout is rollout.tp-way instances that each hold the whole "
                     "model); a generation time priced on TP {} alone would not be this "
                     "launch's",
                     v->source, degree,
                     std::string(key) == "data_parallel_size" ? "data" : "expert", tp)),
                 VerlValue{ro + key, v->value, v->source, false})
        .WithHint(
            "docs/rl.md, \"Left for later\": rollout DP/EP layouts; strata import without the "
            "rollout's data_parallel_size and expert_parallel_size prices a TP-only rollout "
            "(an approximation of another layout)");
  }
  STRATA_ASSIGN_OR_RETURN(VerlValue gmu_v, r.Get(ro + "gpu_memory_utilization"));
  STRATA_ASSIGN_OR_RETURN(double gmu, r.Fraction(gmu_v));
  r.Set("rollout.gpu_memory_utilization", fmt::format("{}", gmu), gmu_v);
  STRATA_ASSIGN_OR_RETURN(VerlValue seqs_v, r.Get(ro + "max_num_seqs"));
  STRATA_ASSIGN_OR_RETURN(int64_t seqs, r.PositiveInt(seqs_v));
  r.Set("rollout.max_num_seqs", std::to_string(seqs), seqs_v);
  STRATA_ASSIGN_OR_RETURN(VerlValue eager_v, r.Get(ro + "enforce_eager"));
  STRATA_ASSIGN_OR_RETURN(bool eager, r.Bool(eager_v));
  r.Set("rollout.enforce_eager", eager ? "true" : "false", eager_v);
  // The defaults table's config predates two changes of these defaults: a launch of a later
  // release runs vLLM with CUDA graphs and at most 256 sequences (deepseek-7b PPO: generation
  // 17.2 s there against 23.1 s at true / 1024).
  if (eager_v.defaulted || seqs_v.defaulted) {
    r.Note(fmt::format(
        "{}{}{} are verl's defaults of {}; verl changed them to enforce_eager false "
        "(volcengine/verl@ff6978c14, 2025-08-08) and max_num_seqs 256 (e9405d70, 2026-01-24): "
        "a launch of a later release runs those, set them in the RL job to price it",
        eager_v.defaulted ? fmt::format("rollout.enforce_eager {}", eager_v.value) : "",
        eager_v.defaulted && seqs_v.defaulted ? " and " : "",
        seqs_v.defaulted ? fmt::format("rollout.max_num_seqs {}", seqs_v.value) : "",
        r.DefaultsSource()));
  }
  STRATA_ASSIGN_OR_RETURN(VerlValue dtype_v, r.Get(ro + "dtype"));
  const std::string dtype = RolloutDtype(dtype_v.value);
  if (dtype.empty()) {
    return AtKey(InvalidInput(fmt::format("{} = '{}': unknown rollout dtype", r.Where(dtype_v),
                                          dtype_v.value)),
                 dtype_v)
        .WithHint("bfloat16, float16 or float32");
  }
  r.Set("rollout.dtype", dtype, dtype_v);
  STRATA_ASSIGN_OR_RETURN(VerlValue free_v, r.Get(ro + "free_cache_engine"));
  STRATA_ASSIGN_OR_RETURN(bool free_cache, r.Bool(free_v));
  if (!free_cache) {
    r.Note(
        fmt::format("free_cache_engine = {} ({}): the rollout keeps its KV cache while the "
                    "actor trains; strata rl frees it (vLLM asleep), so the training phases' "
                    "memory is understated by the KV cache",
                    free_v.value, r.Source(free_v)));
  }
  // The global log_prob_micro_batch_size keys (deprecated) are verl's per-GPU ones times DP
  // (fsdp_workers.py divides them as it divides the actor's ppo_micro_batch_size). Each pass
  // reads its micro batch only with its own switch off (dp_actor.py:459-463): the rollout's keys
  // are the old log-prob pass's, the ref's the reference's (fsdp_workers.py:1002-1005, 1050-1054).
  for (const char* key : {"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
                          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
                          "actor_rollout_ref.rollout.log_prob_micro_batch_size",
                          "actor_rollout_ref.ref.log_prob_micro_batch_size"}) {
    const bool ref = !std::string_view(key).starts_with(kRollout);
    if (ref && !dynamic.reference) continue;  // no reference pass: its keys are not read
    const VerlPassSwitch& pass = ref ? dynamic.ref : dynamic.log_prob;
    if (const SourcedValue* v = s.Use(key);
        v != nullptr && v->value != "null" && v->value != "None") {
      r.Note(fmt::format(
          "{} = {} ({}): {}", key, v->value, v->source,
          pass.on ? "not used: the log-prob passes pack their micro batches by tokens "
                    "(use_dynamic_bsz)"
          : dynamic.actor.on
              ? "verl runs this pass at this micro batch (its log_prob_use_dynamic_bsz is off); "
                "strata rl prices it packed, as the old log-prob pass"
              : "the log-prob passes are priced at the actor's micro batch (batch.micro_batch "
                "of the actor's job)"));
    }
  }
  return OkStatus();
}

// verl's FSDP workers without use_remove_padding run the model on the padded (batch, prompt
// max + response max) tensor: agent_loop.py pads every prompt to rollout.prompt_length and every
// response to rollout.response_length, and dp_actor.py's "not using rmpad" branch feeds it whole
// (volcengine/verl b178a3cd); only the rmpad branch unpads. The default was False until
// 56175299 (2025-12-09). The megatron workers are left to their own default (no key read).
Status ReadPadding(VerlRlReader& r) {
  STRATA_ASSIGN_OR_RETURN(VerlValue v, r.Get("actor_rollout_ref.model.use_remove_padding"));
  STRATA_ASSIGN_OR_RETURN(bool remove, r.Bool(v));
  r.Set("remove_padding", remove ? "true" : "false", v,
        remove ? "the trainer's passes drop the pad tokens"
               : "every row padded to prompt max + response max in the trainer's passes");
  return OkStatus();
}

// verl adds a reference policy for a KL loss or a KL penalty in the reward.
Status ReadReference(VerlRlReader& r) {
  STRATA_ASSIGN_OR_RETURN(VerlValue loss_v, r.Get(std::string(kActor) + "use_kl_loss"));
  STRATA_ASSIGN_OR_RETURN(VerlValue reward_v, r.Get("algorithm.use_kl_in_reward"));
  STRATA_ASSIGN_OR_RETURN(bool loss, r.Bool(loss_v));
  STRATA_ASSIGN_OR_RETURN(bool reward, r.Bool(reward_v));
  if (loss || !reward) {
    r.Set("reference", loss ? "true" : "false", loss_v,
          loss ? "a KL loss against the reference: one more forward pass"
               : fmt::format("no KL loss, and no KL in the reward ({})", r.Source(reward_v)));
  } else {
    r.Set("reference", "true", reward_v, "a KL penalty in the reward: one more forward pass");
  }
  return OkStatus();
}

// Who computes the old log-probs. verl's trainer recomputes them with a forward over every
// sample unless algorithm.rollout_correction.bypass_mode is on, when it takes the rollout's
// log-probs as the old ones and runs no pass (verl-project/verl@
// 0094eb2057e6f3210c2a4fca88704689d02879aa:verl/trainer/ppo/ray_trainer.py:1537-1549, fit: the
// `old_log_prob` timer wraps only the "Recompute old_log_probs" branch; the one-step-off
// trainer's fit has the same branch, verl/experimental/one_step_off_policy/ray_trainer.py). The
// key defaults to false in ppo_trainer (verl/trainer/config/algorithm/rollout_correction.yaml:20)
// but to True in the one-step-off recipe's configs (one_step_off_ppo_trainer.yaml and its
// megatron twin: "bypass_mode: True", under "Only then will the use of log probs be correct"),
// so that recipe bypasses unless its launch turns it off. No other key skips the pass at that
// commit: main_ppo reads only this one (apply_bypass_mode).
Status ReadOldLogProb(Settings& s, VerlRlReader& r, const VerlEntryPoint& entry) {
  const std::string key = "algorithm.rollout_correction.bypass_mode";
  const SourcedValue* given = s.Use(key);
  if (given != nullptr && (given->value == "null" || given->value == "None")) given = nullptr;
  if (given == nullptr && !entry.split) return OkStatus();  // the RL job's default: trainer
  bool bypass = true;
  if (given != nullptr) {
    STRATA_ASSIGN_OR_RETURN(bypass, r.Bool(VerlValue{key, given->value, given->source, false}));
    r.Set("old_log_prob", bypass ? "rollout" : "trainer",
          VerlValue{key, given->value, given->source, false},
          bypass ? "bypass mode: the rollout's log-probs are the old ones, no old log-prob pass"
                 : "decoupled mode: the trainer recomputes the old log-probs (one forward pass)");
  } else {
    r.Derived("old_log_prob", "rollout",
              fmt::format("the one-step-off recipe's config ({}) sets {}: True, so the rollout's "
                          "log-probs are the old ones and no old log-prob pass runs "
                          "(volcengine/verl@875788ef6e218d0b98cb64fff919d9fef014f986:recipe/"
                          "one_step_off_policy/config/one_step_off_ppo_trainer.yaml:28)",
                          entry.config_name, key));
  }
  if (!bypass) return OkStatus();
  // The bypass needs the rollout's log-probs: verl raises "bypass_mode=True requires
  // rollout_log_probs in batch" without them (rollout_corr_helper.py, apply_bypass_mode).
  const std::string calc = std::string(kRollout) + "calculate_log_probs";
  if (const SourcedValue* c = s.Use(calc);
      c != nullptr && (AsciiLower(c->value) == "false" || c->value == "0")) {
    r.Note(
        fmt::format("{} = {} ({}) beside bypass mode: verl stops at the first step "
                    "(\"bypass_mode=True requires rollout_log_probs in batch\"); priced as "
                    "if the rollout returned them",
                    calc, c->value, c->source));
  }
  return OkStatus();
}

// verl's main_ppo runs the hybrid engine: actor and rollout take turns on every GPU.
Status ReadPlacement(Settings& s, VerlRlReader& r, bool megatron, const JobBuilder& actor,
                     int64_t rollout_nodes, int64_t rollout_per_node) {
  if (rollout_nodes > 0) {
    // The one-step-off recipe: its rollout on GPUs of its own (nodes of its own, or its share of
    // every node), one step off-policy.
    (void)actor;
    r.Derived("placement.mode", "split",
              "the one-step-off recipe: the rollout on GPUs of its own (no hybrid engine)");
    r.Derived("placement.rollout_gpus", std::to_string(rollout_nodes * rollout_per_node),
              fmt::format("rollout.nnodes {} x {} GPUs a node", rollout_nodes, rollout_per_node));
    r.Derived("placement.one_step_off", "true",
              "the one-step-off recipe generates step k+1 while the actor trains on step k");
    (void)s;
    (void)megatron;
    return OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(VerlValue hybrid_v, r.Get("actor_rollout_ref.hybrid_engine"));
  STRATA_ASSIGN_OR_RETURN(bool hybrid, r.Bool(hybrid_v));
  if (!hybrid) {
    return AtKey(InvalidInput(fmt::format("{} = {}: verl's RL trainer runs the hybrid "
                                          "engine only",
                                          r.Where(hybrid_v), hybrid_v.value)),
                 hybrid_v)
        .WithHint(fmt::format("RayPPOTrainer asserts hybrid_engine ({})", kVerlCheck));
  }
  // free_cache_engine says whether the rollout's KV cache leaves the GPU while the actor
  // trains (verl's sleep mode), as strata rl's phases assume; ReadRollout notes otherwise.
  STRATA_ASSIGN_OR_RETURN(VerlValue free_v, r.Get(std::string(kRollout) + "free_cache_engine"));
  STRATA_ASSIGN_OR_RETURN(bool free_cache, r.Bool(free_v));
  r.Set("placement.mode", "colocated", hybrid_v,
        fmt::format("the hybrid engine: training and rollout take turns on every GPU; {} = {}: "
                    "{}",
                    r.Where(free_v), free_v.value,
                    free_cache ? "the rollout's KV cache is freed while the actor trains"
                               : "its KV cache stays (see the notes)"));
  const std::string base =
      megatron ? std::string(kActor) + "megatron." : std::string(kActor) + "fsdp_config.";
  std::vector<std::string> keys = {base + "param_offload"};
  if (megatron) keys.push_back(base + "grad_offload");
  keys.push_back(base + "optimizer_offload");
  std::vector<VerlValue> values;
  int on = 0;
  for (const std::string& key : keys) {
    STRATA_ASSIGN_OR_RETURN(VerlValue v, r.Get(key));
    STRATA_ASSIGN_OR_RETURN(bool b, r.Bool(v));
    on += b ? 1 : 0;
    values.push_back(std::move(v));
  }
  const bool all = on == static_cast<int>(keys.size());
  std::string sources;
  for (const VerlValue& v : values) {
    sources += (sources.empty() ? "" : " + ") +
               (v.defaulted ? fmt::format("verl's default {}", v.value) : v.source);
  }
  if (std::all_of(values.begin(), values.end(), [](const VerlValue& v) { return v.defaulted; })) {
    r.Assumed("placement.offload_trainer", "false",
              fmt::format("verl's {}*_offload defaults to False ({})", base, r.DefaultsSource()));
  } else {
    r.Derived("placement.offload_trainer", all ? "true" : "false", sources);
  }
  if (on > 0 && !all) {
    r.Note(
        fmt::format("the actor offloads only some of its states ({}): strata rl offloads all "
                    "or none; kept on the GPU",
                    sources));
  }
  // The frozen reference's weights: kept on the GPU through every phase unless offloaded.
  if (!FieldIs(r.Out(), "reference", "true")) return OkStatus();
  if (actor.Has("adapter.kind")) {
    // With LoRA verl makes no reference worker: the reference's log-probs are the actor's
    // forward with the adapter disabled, on the actor's own weights (ref_in_actor).
    r.Derived("reference_in_actor", "true",
              fmt::format("the actor trains a LoRA adapter: verl's ref_in_actor, the actor with "
                          "its adapter disabled ({}:verl/trainer/ppo/ray_trainer.py:299-302 and "
                          "874; verl/workers/fsdp_workers.py:1042-1044, megatron_workers.py:"
                          "840-870): no reference weights of its own",
                          kVerlCommit));
    return OkStatus();
  }
  if (!megatron) {
    // The launch's own ref.fsdp_config.param_offload is read, and overruled as verl overrules
    // it: listed as a key strata did not understand, it read as one the prediction may miss.
    const SourcedValue* set = s.Use("actor_rollout_ref.ref.fsdp_config.param_offload");
    r.Derived(
        "placement.offload_reference", "true",
        fmt::format("verl's FSDP reference always runs under FSDP's CPUOffload, whatever "
                    "ref.fsdp_config.param_offload says{} ({}:verl/workers/fsdp_workers.py:"
                    "526 and 552)",
                    set == nullptr ? "" : fmt::format(" (here {} = {})", set->source, set->value),
                    kVerlCommit));
    return OkStatus();
  }
  const std::string ref_key = "actor_rollout_ref.ref.megatron.param_offload";
  if (const SourcedValue* v = s.Use(ref_key)) {
    STRATA_ASSIGN_OR_RETURN(bool b, r.Bool(VerlValue{ref_key, v->value, v->source, false}));
    r.Derived("placement.offload_reference", b ? "true" : "false", v->source);
  } else {
    // megatron_ref.yaml: param_offload: ${oc.select:actor_rollout_ref.actor.megatron.
    // param_offload,False}.
    STRATA_ASSIGN_OR_RETURN(bool b, r.Bool(values.front()));
    r.Derived("placement.offload_reference", b ? "true" : "false",
              fmt::format("ref.megatron.param_offload not set: the actor's param_offload, {} "
                          "({}:verl/trainer/config/ref/megatron_ref.yaml:27)",
                          r.Source(values.front()), kVerlCommit));
  }
  return OkStatus();
}

std::string RenderRlYaml(const RlImport& rl, const std::string& header) {
  // The order of an RL job file (docs/rl.md, "The RL job file"); the importer sits below the rl
  // module, so the CLI parses the result back with ParseRlSpec.
  static const std::vector<std::string> order = {"actor.job",
                                                 "algorithm",
                                                 "batch.prompts",
                                                 "batch.samples_per_prompt",
                                                 "batch.mini_batches",
                                                 "batch.epochs",
                                                 "batch.max_tokens_per_gpu",
                                                 "batch.log_prob_max_tokens_per_gpu",
                                                 "batch.critic_max_tokens_per_gpu",
                                                 "lengths.prompt_mean",
                                                 "lengths.prompt_max",
                                                 "lengths.response_mean",
                                                 "lengths.response_max",
                                                 "rollout.engine",
                                                 "rollout.vllm_version",
                                                 "rollout.tp",
                                                 "rollout.gpu_memory_utilization",
                                                 "rollout.max_num_seqs",
                                                 "rollout.enforce_eager",
                                                 "rollout.dtype",
                                                 "reference",
                                                 "old_log_prob",
                                                 "reference_in_actor",
                                                 "remove_padding",
                                                 "placement.mode",
                                                 "placement.rollout_gpus",
                                                 "placement.one_step_off",
                                                 "placement.offload_trainer",
                                                 "placement.offload_reference"};
  return SourcedYaml(rl.fields, order, header, "an RL job field");
}

// The keys of a pass the launch never runs cost a step nothing: verl builds the reference's worker
// only under a KL loss or a KL in the reward, and the critic's only under critic.enable or GAE
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/ppo/utils.py:72-97,
// need_reference_policy and need_critic; main_ppo.py:257 and 299-300 add the workers, and
// ray_trainer.py:285-290 runs their passes only then). Such keys stay listed, counted apart with
// the reason read from the RL job's own field.
void CountApartPassesThatDoNotRun(Settings& s, const RlImport& out) {
  const ImportedField* reference = FieldOf(out, "reference");
  const ImportedField* algorithm = FieldOf(out, "algorithm");
  const bool no_reference = reference != nullptr && reference->value == "false";
  const ImportedField* in_actor = FieldOf(out, "reference_in_actor");
  const bool no_critic = algorithm != nullptr && algorithm->value == "grpo";
  for (const auto& [key, value] : s.Unused()) {
    if (s.NoStepCostOf(key) != nullptr) continue;  // a reason of its own already (a token budget)
    if (no_reference && key.starts_with("actor_rollout_ref.ref.")) {
      s.NoStepCost(key,
                   fmt::format("no reference pass runs (the RL job's reference: {}, from {}): "
                               "verl builds no reference worker, so it reads no key of it",
                               reference->value, reference->source),
                   UnreadBecause::kNoReferencePass);
    } else if (in_actor != nullptr && in_actor->value == "true" &&
               key.starts_with("actor_rollout_ref.ref.")) {
      // compute_ref_log_prob returns the actor's compute_log_prob under LoRA before it reads
      // any ref.* key (fsdp_workers.py:1041-1045, megatron_workers.py:838-842).
      s.NoStepCost(key,
                   "the reference runs inside the actor (LoRA: the actor's old log-prob "
                   "pass with its adapter disabled), so verl reads no key of a reference "
                   "worker",
                   UnreadBecause::kNoReferencePass);
    } else if (no_critic && key.starts_with("critic.")) {
      s.NoStepCost(key,
                   fmt::format("no critic runs (the RL job's algorithm: {}, from {}): verl "
                               "builds no critic worker, so it reads no key of it",
                               algorithm->value, algorithm->source),
                   UnreadBecause::kNoCriticPass);
    }
  }
}

// Keys whose meaning is known and that may change a step, but that the RL job cannot hold: they
// stay listed among the keys that may change a step, each with its reason for --explain.
//  - vLLM's scheduler budget and chunked prefill, which verl passes to vLLM's engine arguments
//    (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/rollout/vllm_rollout/
//    vllm_async_server.py:273-274; defaults 8192 and True, verl/trainer/config/rollout/
//    rollout.yaml:62 and 71). The rollout model has neither: vLLM's profiling activation peak is
//    one constant, measured at vLLM's default budget (data/rl_constants.yaml,
//    vllm_memory.activation_peak), and prefill is one compute-bound pass ahead of the decode.
//  - The reference's and critic's reshard_after_forward (verl/workers/fsdp_workers.py:520-521 and
//    1458; the FSDP1 critic always runs FULL_SHARD, 1414): the RL job prices those passes on the
//    actor's job (rl_step.cc) and has no sharding of its own for them.
void ListNotModelled(Settings& s) {
  const std::string ro = "actor_rollout_ref.rollout.";
  s.NotModelled(ro + "max_num_batched_tokens",
                "vLLM's token budget per scheduler step: it sizes vLLM's profiling forward, "
                "whose activation peak strata rl takes as one constant measured at vLLM's "
                "default budget (data/rl_constants.yaml, vllm_memory.activation_peak), and caps "
                "the prompt tokens one step prefills; the rollout model has no such budget");
  s.NotModelled(ro + "enable_chunked_prefill",
                "vLLM splits prompts longer than max_num_batched_tokens into chunks run beside "
                "the decodes; strata rl prices prefill as one compute-bound pass ahead of the "
                "decode and does not model how vLLM schedules it");
  for (const char* key : {"actor_rollout_ref.ref.fsdp_config.reshard_after_forward",
                          "critic.model.fsdp_config.reshard_after_forward"}) {
    s.NotModelled(key,
                  "the RL job prices the reference's and critic's passes on the actor's job "
                  "and has no sharding of its own for them");
  }
}

}  // namespace

Result<VerlDefault> VerlDefaultOf(bool megatron, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(VerlDefaults d, LoadVerlDefaults(megatron));
  const auto it = d.values.find(key);
  if (it == d.values.end()) {
    return InvalidInput(fmt::format("data/verl_rl_defaults.yaml has no default for {}", key));
  }
  const auto own = d.sources.find(key);
  return VerlDefault{it->second, own != d.sources.end() ? own->second : d.source};
}

Status CheckVerlCommandComplete(std::string_view text, const std::string& file) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos || text[end] != '\\') return OkStatus();
  // A '\' that ends a comment line continues nothing: bash reads a comment to the end of its
  // line, so a script whose last lines are commented-out overrides ("# a=1 \") is complete.
  const size_t line_start = text.find_last_of('\n', end);
  const size_t first =
      text.find_first_not_of(" \t", line_start == std::string_view::npos ? 0 : line_start + 1);
  if (first != std::string_view::npos && text[first] == '#') return OkStatus();
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + end, '\n'));
  return InvalidInput(
             "the file ends inside the verl command: its last line is continued ('\\') but "
             "nothing follows (a truncated script)")
      .InFile(file)
      .AtLine(line)
      .WithHint("import the whole script: the overrides after this line are missing");
}

Status MergeVerlBaseConfig(Settings& s, Bundle& bundle, const std::filesystem::path& base,
                           std::string_view module) {
  // verl/trainer/main_ppo.py: @hydra.main(config_path="config", config_name="ppo_trainer"); a
  // recipe's main names its own (recipe/dapo/main_dapo.py: dapo_trainer).
  const VerlEntryPoint entry = ClassifyVerlModule(module);
  std::string name = entry.config_name.empty() ? "ppo_trainer" : entry.config_name;
  std::string named_by =
      module == "verl.trainer.main_ppo"
          ? std::string("verl's main_ppo (its default --config-name ppo_trainer)")
          : fmt::format("{} (its default --config-name {})", module, name);
  if (s.Has("config_name")) {
    const SourcedValue* v = s.Use("config_name");
    name = v->value;
    named_by = "--config-name " + v->source;
  }
  if (!name.ends_with(".yaml")) name += ".yaml";
  if (!bundle.Gives(std::filesystem::path(name).filename().string())) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(std::filesystem::path path, bundle.Find(name, base, named_by));
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
  STRATA_ASSIGN_OR_RETURN(Settings yaml, ReadYamlSettings(text, path.string()));
  for (const auto& [key, sv] : yaml.Unused()) {
    if (!s.Has(key)) s.Set(key, sv.value, sv.source);
  }
  return OkStatus();
}

bool IsVerlRlConfig(const Settings& s) {
  for (const char* key : {"actor_rollout_ref.rollout.name", "actor_rollout_ref.rollout.n",
                          "actor_rollout_ref.rollout.gpu_memory_utilization"}) {
    if (s.Has(key)) return true;
  }
  return false;
}

Result<RlImport> MapVerlRl(Settings& s, const JobBuilder& actor, const std::string& actor_job_ref,
                           const std::string& input, const std::string& format,
                           std::string_view module) {
  const bool megatron = VerlActorStrategy(s) == "megatron";
  STRATA_ASSIGN_OR_RETURN(VerlDefaults defaults, LoadVerlDefaults(megatron));
  VerlRlReader r(s, std::move(defaults));
  r.Out().fields.push_back(
      {"actor.job", actor_job_ref, "the actor's training job, imported from the same launch"});
  STRATA_RETURN_IF_ERROR(ReadAlgorithm(s, r, actor));
  // The one-step-off recipe's rollout nodes (its config's default 1), beside the trainer's in
  // the actor's cluster (MapVerl).
  int64_t rollout_nodes = 0;
  int64_t rollout_per_node = 0;
  if (ClassifyVerlModule(module).split) {
    rollout_nodes = 1;
    // Whole nodes unless the launch gives the rollout a share of each (MapVerl read both).
    STRATA_ASSIGN_OR_RETURN(rollout_per_node, actor.GetPositiveInt("cluster.gpus_per_node"));
    if (const SourcedValue* v = s.Use("rollout.n_gpus_per_node")) {
      auto per_node =
          r.PositiveInt(VerlValue{"rollout.n_gpus_per_node", v->value, v->source, false});
      if (!per_node.ok()) return std::move(per_node).error();
      rollout_per_node = *per_node;
    }
    if (const SourcedValue* v = s.Use("rollout.nnodes")) {
      // Zero or fewer rollout nodes is no split (and no hybrid engine either): refused here,
      // before it reads as a colocated launch or shrinks the trainer's nodes.
      auto nodes = r.PositiveInt(VerlValue{"rollout.nnodes", v->value, v->source, false});
      if (!nodes.ok()) {
        return std::move(nodes).error().WithHint(
            "the one-step-off recipe generates on rollout.nnodes nodes of its own, beside the "
            "trainer's trainer.nnodes: at least 1");
      }
      rollout_nodes = *nodes;
    }
  }
  STRATA_ASSIGN_OR_RETURN(VerlValue dynamic_v, r.Get(std::string(kActor) + "use_dynamic_bsz"));
  STRATA_ASSIGN_OR_RETURN(bool dynamic, r.Bool(dynamic_v));
  STRATA_RETURN_IF_ERROR(ReadBatch(r, actor, megatron, rollout_nodes, rollout_per_node, dynamic));
  const bool ppo = FieldIs(r.Out(), "algorithm", "ppo");
  STRATA_RETURN_IF_ERROR(ReadReference(r));
  // A reference worker of its own runs only with a reference and without LoRA (with LoRA the
  // reference's log-probs are the old log-prob pass's, the adapter disabled: ReadPlacement).
  STRATA_ASSIGN_OR_RETURN(
      const VerlDynamicSwitches switches,
      ReadDynamicBatch(s, r, ppo,
                       FieldIs(r.Out(), "reference", "true") && !actor.Has("adapter.kind")));
  STRATA_RETURN_IF_ERROR(ReadLengths(r));
  STRATA_RETURN_IF_ERROR(ReadRollout(s, r, switches));
  STRATA_RETURN_IF_ERROR(ReadOldLogProb(s, r, ClassifyVerlModule(module)));
  if (!megatron) STRATA_RETURN_IF_ERROR(ReadPadding(r));
  STRATA_RETURN_IF_ERROR(ReadPlacement(s, r, megatron, actor, rollout_nodes, rollout_per_node));
  for (std::string& note : VerlRecipeNotes(s, ClassifyVerlModule(module))) {
    r.Note(std::move(note));
  }
  RlImport rl = std::move(r.Out());
  CountApartPassesThatDoNotRun(s, rl);
  ListNotModelled(s);
  rl.yaml = RenderRlYaml(
      rl, fmt::format("An RL job imported by `strata import` from {} ({}).\n"
                      "Each value says where it came from; \"default: verl's\" marks verl's own "
                      "default\n({}).",
                      input, format, r.DefaultsSource()));
  if (!rl.notes.empty()) {
    rl.yaml += "\n# what strata rl does not model of this launch:\n";
    for (const std::string& n : rl.notes) rl.yaml += "#   " + n + "\n";
  }
  return rl;
}

}  // namespace strata
