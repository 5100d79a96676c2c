#include "strata/importer/import_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "strata/core/file_io.h"
#include "strata/core/text_scan.h"
#include "strata/importer/accelerate_config.h"
#include "strata/importer/cost_neutral_keys.h"
#include "strata/importer/framework_mappers.h"
#include "strata/importer/input_readers.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/launch_bundle.h"
#include "strata/importer/shell_script.h"
#include "strata/importer/swift_saved_args.h"
#include "strata/importer/verl_rl_mapping.h"
#include "strata/job/job_validation.h"
#include "strata/model/model_config.h"

namespace strata {

namespace {

namespace fs = std::filesystem;

enum class Framework { kMegatronLm, kMsSwiftMcore, kHfDeepSpeed, kTorchtitan, kVerl };

struct Detected {
  Framework framework;
  std::string format;  // for people
  Settings settings;
  MapContext ctx;
  JobBuilder job;   // launcher-derived cluster fields
  bool rl = false;  // an RL launch (verl's main_ppo, a verl trainer YAML): an RL job too
  std::string verl_module = "verl.trainer.main_ppo";  // the verl entry point the launch runs
};

std::string Extension(const std::string& file) { return fs::path(file).extension().string(); }

// ms-swift's DeepSpeed presets (--deepspeed zero2; 2.x spelled them default-zero2) -> the ZeRO
// stage they configure.
void ExpandSwiftDeepSpeedPreset(Settings& s) {
  const SourcedValue* v = s.Use("deepspeed");
  if (v == nullptr) return;
  std::string preset = v->value;
  // ms-swift 2.x's names: default-zero2, default-zero3, zero2-offload, zero3-offload
  // (modelscope/ms-swift@054575c swift/llm/utils/argument.py, deepspeed_mapping); 3.x and 4.x
  // name zero0..zero3, zero2_offload and zero3_offload.
  const bool swift2 = preset.starts_with("default-") || preset.ends_with("-offload");
  if (preset.starts_with("default-")) preset = preset.substr(8);
  const std::string source = v->source;
  if (preset.starts_with("zero") && preset.size() >= 5 && std::isdigit(preset[4])) {
    s.Set("ds.zero_optimization.stage", std::string(1, preset[4]),
          source + " (ms-swift preset " + preset + ")");
    // The presets' overlap_comm. 2.x's swift/llm/ds_config/*.json set it true (054575c
    // zero2.json:41, zero3.json:43, their offload forms too); since 3.2.2 (e5c4c39, "compat
    // transformers 4.50") every preset sets it false, as at the release strata reads
    // (modelscope/ms-swift@3602360 swift/config/zero2.json:23 and zero3.json:25:
    // `"overlap_comm": false,`; zero0/zero1/zero2_offload/zero3_offload.json the same).
    const std::string on = swift2 ? "true" : "false";
    s.Set("ds.zero_optimization.overlap_comm", on,
          fmt::format("{} (ms-swift {} preset {}: overlap_comm {})", source,
                      swift2 ? "2.x" : "3.2.2+", preset, on));
    if (preset.find("offload") != std::string::npos) {
      s.Set("ds.zero_optimization.offload_optimizer.device", "cpu", source);
    }
  }
}

Status MergeDeepSpeedJson(Settings& s, const fs::path& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
  STRATA_ASSIGN_OR_RETURN(Settings ds, ReadJsonSettings(text, path.string()));
  for (const auto& [key, sv] : ds.Unused()) {
    if (!s.Has("ds." + key)) s.Set("ds." + key, sv.value, sv.source);
  }
  return OkStatus();
}

// A DeepSpeed config named by --deepspeed (a path), read relative to the input's directory.
Status MergeDeepSpeedFile(Settings& s, const fs::path& base, Bundle& bundle) {
  const SourcedValue* v = s.Use("deepspeed");
  if (v == nullptr) return OkStatus();
  const std::string value = v->value;
  if (value.starts_with("zero") || value.starts_with("default-zero")) {
    s.Set("deepspeed", value, v->source);
    ExpandSwiftDeepSpeedPreset(s);
    return OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(fs::path path, bundle.Find(value, base, v->source));
  return MergeDeepSpeedJson(s, path);
}

// The JSON an Accelerate config's DeepSpeed plugin names (deepspeed_config_file), relative to
// the folder of the YAML that names it.
Status MergeAccelerateDeepSpeedFile(Settings& s, const fs::path& yaml_dir, Bundle& bundle) {
  const SourcedValue* v = s.Use("accelerate.deepspeed_config.deepspeed_config_file");
  if (v == nullptr || v->value == "none") return OkStatus();
  STRATA_ASSIGN_OR_RETURN(fs::path path, bundle.Find(v->value, yaml_dir, v->source));
  return MergeDeepSpeedJson(s, path);
}

}  // namespace

DeepSpeedHosts ParseDeepSpeedInclude(std::string_view text) {
  DeepSpeedHosts out;
  bool same = true;
  std::optional<int64_t> slots;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t at = std::min(text.find('@', start), text.size());
    const std::string_view host = text.substr(start, at - start);
    start = at + 1;
    if (host.empty()) continue;
    ++out.nodes;
    const size_t colon = host.find(':');
    // A host without slots runs on all of its GPUs, which the string does not tell.
    int64_t n = 0;
    if (colon != std::string_view::npos) {
      const std::string_view list = host.substr(colon + 1);
      n = list.empty() ? 0 : 1 + static_cast<int64_t>(std::count(list.begin(), list.end(), ','));
    }
    if (n == 0 || (slots && *slots != n)) same = false;
    slots = n;
  }
  if (same && slots && *slots > 0) out.gpus_per_node = *slots;
  return out;
}

namespace {

bool IsYamlPath(const std::string& word) {
  return !word.starts_with("-") && (word.ends_with(".yaml") || word.ends_with(".yml"));
}

// A TRL recipe (TrlParser's `--config` YAML): the script's arguments, TrainingArguments and
// TRL's ModelConfig, with no LLaMA-Factory stage.
bool IsTrlRecipe(const Settings& s) {
  return !s.Has("stage") &&
         (s.Has("model_name_or_path") || s.Has("per_device_train_batch_size") || s.Has("use_peft"));
}

// A LLaMA-Factory config: HF TrainingArguments plus its own stage / finetuning_type.
bool IsLlamaFactoryConfig(const Settings& s) {
  return s.Has("stage") && (s.Has("finetuning_type") || s.Has("model_name_or_path"));
}

// An SFT recipe: none of the preference or RL configs' keys (DPOConfig's beta and
// max_prompt_length, GRPOConfig's num_generations and max_completion_length).
bool IsTrlSftRecipe(const Settings& s) {
  return !s.Has("beta") && !s.Has("max_prompt_length") && !s.Has("num_generations") &&
         !s.Has("max_completion_length");
}

// `srun [flags] [wrappers] program`: srun starts the program once per task, each task one rank
// (the program reads SLURM_PROCID), unless a launcher between them (torchrun, deepspeed,
// accelerate, torch.distributed.launch) starts the ranks itself. srun's own task and node flags
// replace the header's, as inside an allocation.
bool SrunStartsEachRank(const std::vector<ShellWord>& w, size_t program, Settings& slurm) {
  if (w.empty() || !(w[0].text == "srun" || w[0].text.ends_with("/srun"))) return false;
  for (size_t i = 1; i < program && i < w.size(); ++i) {
    const std::string name = fs::path(w[i].text).filename().string();
    if (name == "torchrun" || name == "deepspeed" || name == "accelerate" ||
        w[i].text.starts_with("torch.distributed")) {
      return false;
    }
  }
  // srun's -N 2, -N2, --nodes=2, --nodes 2 (and -n / --ntasks, --ntasks-per-node).
  for (size_t i = 1; i < program && i < w.size(); ++i) {
    std::string flag = w[i].text, value;
    if (const size_t eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag.size() > 2 && (flag.starts_with("-N") || flag.starts_with("-n")) &&
               flag[1] != '-') {
      value = flag.substr(2);
      flag = flag.substr(0, 2);
    }
    const std::string name = flag == "-N" || flag == "--nodes"    ? "nodes"
                             : flag == "-n" || flag == "--ntasks" ? "ntasks"
                             : flag == "--ntasks-per-node"        ? "ntasks_per_node"
                                                                  : "";
    if (name.empty()) continue;
    if (value.empty() && i + 1 < program) value = w[++i].text;
    slurm.Set(name, value, fmt::format("srun {} (line {})", flag, w[i].line));
  }
  return true;
}

// Launcher options (torchrun, deepspeed, accelerate) before the training program.
void ReadLauncher(const std::vector<ShellWord>& words, size_t program, Detected& d) {
  Settings launcher;
  ReadCommandArgs(words, 1, launcher);
  (void)program;
  auto set = [&](const char* key, const char* job_key) {
    // A count known only when the job runs (--nnodes ${SLURM_NNODES:-1}, an elastic 1:4) is
    // kept as written: the import then asks for it (--nodes) instead of taking the default 1.
    const SourcedValue* v = launcher.Use(key);
    if (v == nullptr) return;
    d.job.Set(job_key, v->value, words[0].text + " " + v->source);
  };
  set("nproc_per_node", "cluster.gpus_per_node");
  set("num_gpus", "cluster.gpus_per_node");
  set("nnodes", "cluster.nodes");
  set("num_nodes", "cluster.nodes");
  // deepspeed --include "worker-0:0,1@worker-1:0,1": a node per host, its listed GPUs.
  if (const SourcedValue* v = launcher.Use("include")) {
    const DeepSpeedHosts hosts = ParseDeepSpeedInclude(v->value);
    const std::string source = fmt::format("{} {} ({})", words[0].text, v->source, v->value);
    if (hosts.nodes > 0) d.job.Set("cluster.nodes", std::to_string(hosts.nodes), source);
    if (hosts.gpus_per_node) {
      d.job.Set("cluster.gpus_per_node", std::to_string(*hosts.gpus_per_node), source);
    }
  }
}

// `swift rlhf` / `megatron rlhf`: ms-swift's preference and RL training (--rlhf_type, dpo by
// default: modelscope/ms-swift RLHFArguments). DPO runs a chosen and a rejected sequence per
// sample and a reference model's forward; strata prices one sequence per sample (SFT), so the
// launch is refused rather than priced as SFT. `at` is the word `swift` or `megatron`.
Status RefuseSwiftRlhf(const std::vector<ShellWord>& w, size_t at, const std::string& file) {
  std::string type = "dpo";
  std::string where = "ms-swift's default";
  int line = w[at].line;
  for (size_t j = at + 2; j < w.size(); ++j) {
    const std::string& word = w[j].text;
    if (word.starts_with("--rlhf_type=")) {
      type = word.substr(12);
    } else if (word == "--rlhf_type" && j + 1 < w.size()) {
      type = w[j + 1].text;
    } else {
      continue;
    }
    line = w[j].line;
    where = fmt::format("--rlhf_type, line {}", line);
  }
  return InvalidInput(fmt::format("{} rlhf with rlhf_type {} ({}): preference and RL training "
                                  "(pairs of sequences, a reference model, or generation) is "
                                  "not priced by strata, which prices one sequence per sample "
                                  "and no reference pass (SFT)",
                                  fs::path(w[at].text).filename().string(), type, where))
      .InFile(file)
      .AtLine(line)
      .InField("rlhf_type")
      .WithHint(
          "to size the policy's own passes, import the same arguments under `sft` and double "
          "the micro batch for the pairs; the rest is not modelled");
}

// What a LLaMA-Factory config means beyond TrainingArguments, however it is launched
// (`llamafactory-cli train x.yaml`, or its examples' train.sh: `accelerate launch ...
// src/train.py x.yaml`; both hand the YAML to run_exp()). Its stage: pt and sft train one
// sequence per sample, which is what strata prices; the others are refused rather than priced
// as SFT (hiyouga/LLaMA-Factory ff6d4d12 data/collator.py PairwiseDataCollatorWithPadding: "2 * n
// examples" per batch for rm and dpo; hparams/finetuning_args.py use_ref_model for dpo and kto;
// train/ppo generates and scores every step). And its gradient checkpointing: on unless
// disable_gradient_checkpointing is true (ModelArguments; it calls gradient_checkpointing_enable
// itself). `file` names the input in errors.
Status ApplyLlamaFactoryConfig(Settings& s, const std::string& file, Detected& d) {
  const SourcedValue stage = *s.Use("stage");
  static const std::pair<const char*, const char*> kRefused[] = {
      {"dpo",
       "each sample is a chosen and a rejected sequence through the policy, and, unless pref_loss "
       "is orpo or simpo, through a reference model again without gradients"},
      {"kto",
       "each sample is run with a mismatched KL sample, through the policy and a reference model"},
      {"rm", "each sample is a chosen and a rejected sequence through the reward model"},
      {"ppo",
       "every step generates responses and runs a reward model, a value head and a reference "
       "model beside the policy"}};
  for (const auto& [name, what] : kRefused) {
    if (stage.value != name) continue;
    return InvalidInput(fmt::format("stage {} ({}): LLaMA-Factory's {} stage is not priced by "
                                    "strata: {}, where strata prices one sequence per sample "
                                    "and no reference pass (SFT)",
                                    name, stage.source, name, what))
        .InFile(file)
        .InField("stage")
        .WithHint(
            "to size the policy's own passes, import the file with stage: sft and double "
            "batch.micro_batch for the pairs; the rest is not modelled");
  }
  if (stage.value != "pt" && stage.value != "sft") {
    return InvalidInput(fmt::format("stage '{}' ({}): expected pt, sft, rm, ppo, dpo or kto",
                                    stage.value, stage.source))
        .InFile(file)
        .InField("stage");
  }
  d.ctx.llamafactory_stage = stage.value;
  if (!s.Has("gradient_checkpointing")) {
    const SourcedValue* off = s.Use("disable_gradient_checkpointing");
    const bool disabled = off != nullptr && (off->value == "true" || off->value == "True");
    s.Set("gradient_checkpointing", disabled ? "false" : "true",
          off != nullptr ? off->source
                         : "LLaMA-Factory's default: gradient checkpointing on unless "
                           "disable_gradient_checkpointing");
  }
  return OkStatus();
}

// Accelerate's launch flags (`accelerate launch [flags] script.py`, or those `trl sft` passes
// on to it) and the config they name, as "accelerate.<key>" settings (the flags win over the
// config, as in accelerate's launcher). `config_line` is the line of --config_file.
Status ReadAccelerateFlags(Settings& flags, int config_line, const std::string& file,
                           Bundle& bundle, Detected& d) {
  AddAccelerateLaunchFlags(flags, d.settings);
  const fs::path base = fs::path(file).parent_path();
  if (const SourcedValue* cfg = flags.Use("config_file")) {
    STRATA_ASSIGN_OR_RETURN(
        fs::path path,
        bundle.Find(cfg->value, base, "accelerate launch --config_file", config_line));
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
    STRATA_ASSIGN_OR_RETURN(Settings yaml, ReadYamlSettings(text, path.string()));
    if (!IsAccelerateConfig(yaml)) {
      return InvalidInput(
                 "the file accelerate launch --config_file names has no "
                 "distributed_type: not an Accelerate config")
          .InFile(path.string());
    }
    AddAccelerateConfig(yaml, d.settings);
    STRATA_RETURN_IF_ERROR(MergeAccelerateDeepSpeedFile(d.settings, path.parent_path(), bundle));
  } else {
    STRATA_RETURN_IF_ERROR(MergeAccelerateDeepSpeedFile(d.settings, base, bundle));
    d.job.Note(
        "accelerate launch without --config_file: Accelerate's default config "
        "(~/.cache/huggingface/accelerate/default_config.yaml) is not known here; only the "
        "launch flags are read");
    if (!d.settings.Has("accelerate.distributed_type")) {
      d.settings.Set("accelerate.distributed_type", "MULTI_GPU",
                     "derived: accelerate launch without a config or plugin flag runs DDP");
    }
  }
  return OkStatus();
}

Status ReadAccelerateLaunch(const std::vector<ShellWord>& w, size_t launch, size_t program,
                            const std::string& file, Bundle& bundle, Detected& d) {
  const std::vector<ShellWord> launcher(w.begin() + static_cast<std::ptrdiff_t>(launch) + 1,
                                        w.begin() + static_cast<std::ptrdiff_t>(program));
  Settings flags;
  ReadCommandArgs(launcher, 0, flags);
  int line = 0;
  for (const ShellWord& word : launcher) {
    if (word.text.starts_with("--config_file")) line = word.line;
  }
  return ReadAccelerateFlags(flags, line, file, bundle, d);
}

// `trl sft [args]`: TRL's CLI runs its script under `accelerate launch`, taking Accelerate's
// flags among the script's (trl/cli.py); those are moved to the launch.
Status ReadTrlLaunch(const std::vector<ShellWord>& w, const std::string& file, Bundle& bundle,
                     Detected& d) {
  Settings flags;
  int line = 0;
  for (const char* key : {"num_processes", "num_machines", "config_file", "mixed_precision",
                          "use_deepspeed", "use_fsdp", "multi_gpu", "zero_stage"}) {
    const SourcedValue* v = d.settings.Use(key);
    if (v == nullptr) continue;
    flags.Set(key, v->value, v->source);
  }
  // --accelerate_config NAME: one of the configs TRL ships (trl/accelerate_configs/NAME.yaml),
  // or a path (trl/cli/accelerate_config.py); strata reads it from the bundle.
  if (const SourcedValue* v = d.settings.Use("accelerate_config")) {
    const bool path = v->value.ends_with(".yaml") || v->value.ends_with(".yml");
    flags.Set("config_file", path ? v->value : v->value + ".yaml", v->source);
  }
  for (const ShellWord& word : w) {
    if (word.text.starts_with("--config_file")) line = word.line;
  }
  return ReadAccelerateFlags(flags, line, file, bundle, d);
}

// A TRL recipe YAML (`--config x.yaml`: TrlParser reads it as the arguments' defaults, the
// command line's flags win over it), relative to the launch's folder.
Status MergeTrlConfig(Settings& s, const fs::path& base, Bundle& bundle) {
  const SourcedValue* v = s.Use("config");
  if (v == nullptr) return OkStatus();
  const std::string source = v->source;
  STRATA_ASSIGN_OR_RETURN(fs::path path, bundle.Find(v->value, base, source));
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
  STRATA_ASSIGN_OR_RETURN(Settings yaml, ReadYamlSettings(text, path.string()));
  if (IsAccelerateConfig(yaml)) {
    return InvalidInput(fmt::format("{} names an Accelerate config (it has distributed_type), "
                                    "not the script's arguments",
                                    source))
        .InFile(path.string())
        .WithHint("give it to accelerate launch --config_file");
  }
  for (const auto& [key, sv] : yaml.Unused()) {
    if (!s.Has(key)) s.Set(key, sv.value, sv.source);
  }
  return OkStatus();
}

// The first Hydra-style override among the words from `first` on (`train.micro_batch_size=2`:
// a dotted name, `=`, no leading dash), "" when there is none or a Megatron-LM --flag comes
// first.
template <class Words>
std::string FirstDottedOverride(const Words& w, size_t first) {
  for (size_t j = first; j < w.size(); ++j) {
    const std::string& word = w[j].text;
    if (word.starts_with("-")) return "";
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = word.substr(word.starts_with("+") ? 1 : 0, eq);
    const size_t dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size()) continue;
    bool plain = true;
    for (char c : name) {
      plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
    }
    if (plain) return word;
  }
  return "";
}

// Whether the words from `first` on hold a verl Hydra override (`actor_rollout_ref.x=...`,
// `data.x=...`) or a Hydra config option: what tells a verl recipe from another project's
// `recipe` package run with `python -m`.
template <class Words>
bool HasVerlOverrides(const Words& w, size_t first) {
  static constexpr std::string_view kRoots[] = {"actor_rollout_ref.",
                                                "data.",
                                                "trainer.",
                                                "algorithm.",
                                                "critic.",
                                                "reward_model.",
                                                "custom_reward_function.",
                                                "+actor_rollout_ref.",
                                                "+data.",
                                                "+trainer."};
  for (size_t j = first; j < w.size(); ++j) {
    const std::string& word = w[j].text;
    if (word.starts_with("--config-name") || word.starts_with("--config-path")) return true;
    if (word.find('=') == std::string::npos) continue;
    for (std::string_view root : kRoots) {
      if (word.starts_with(root)) return true;
    }
  }
  return false;
}

// A Megatron-LM functional-test recipe: a MODEL_ARGS mapping of flags.
bool IsMegatronTestRecipe(const Settings& s) {
  for (const auto& [key, sv] : s.Unused()) {
    if (key.starts_with("MODEL_ARGS.")) return true;
  }
  return false;
}

Result<Detected> DetectCommand(std::string_view text, const std::string& file, Bundle& bundle) {
  const fs::path base = fs::path(file).parent_path();
  // `source FILE` / `. FILE`: a file of the bundle (given with the script, or beside it) is
  // read in place; a missing one is an error naming the line; an absolute path not given is
  // the machine's environment (conda, modules), left unread and named in the notes.
  std::vector<std::string> source_notes;
  const std::string script = fs::path(file).filename().string();
  // The batch scripts `sbatch` submits: their #SBATCH lines are the job's allocation too.
  std::vector<ShellSource> batch_scripts;
  const ShellSourceReader reader =
      [&](const std::string& path, const std::string& in_file, int line,
          std::string_view verb) -> Result<std::optional<ShellSource>> {
    const std::string name = fs::path(path).filename().string();
    const std::string from = fs::path(in_file).filename().string();
    const bool given = bundle.Gives(name);
    if (path.find('$') != std::string::npos || (fs::path(path).is_absolute() && !given) ||
        path.starts_with("~")) {
      source_notes.push_back(
          fmt::format("{}:{}: {} {}: not part of the bundle (the "
                      "machine's environment); not read",
                      from, line, verb, path));
      return std::optional<ShellSource>();
    }
    // A file that sourced files name is looked for as the script's own are; an error names the
    // file and line that named it.
    auto found = bundle.Find(path, base, std::string(verb), line);
    if (!found.ok()) {
      Error e = found.error();
      if (in_file != file) e.file = in_file;
      return e;
    }
    STRATA_ASSIGN_OR_RETURN(std::string sourced, ReadFile(found->string()));
    ShellSource out{std::move(sourced), found->string()};
    if (verb == "sbatch") batch_scripts.push_back(out);
    return std::optional<ShellSource>(std::move(out));
  };
  STRATA_ASSIGN_OR_RETURN(auto commands, ParseShellScript(text, file, reader));
  // The allocation: the script's #SBATCH lines, those of the scripts it submits, and sbatch's
  // own options, which Slurm lets override a batch script's header (read last, so they win).
  Settings slurm = ReadSlurmHeader(text, file);
  for (const ShellSource& batch : batch_scripts) ReadSlurmHeader(batch.text, batch.file, slurm);
  for (const ShellCommandLine& c : commands) {
    const std::optional<size_t> script_at = SbatchScriptIndex(c.words);
    if (!script_at) continue;
    std::vector<std::string> options;
    for (size_t k = 1; k < *script_at; ++k) options.push_back(c.words[k].text);
    const std::string& at = c.words[0].origin;
    ReadSlurmOptions(
        options,
        fmt::format("{}: sbatch command line", at.empty() || at.starts_with("$")
                                                   ? fmt::format("{}:{}", script, c.line)
                                                   : at.substr(0, at.find(','))),
        slurm);
  }
  for (auto it = commands.rbegin(); it != commands.rend(); ++it) {
    const auto& w = it->words;
    if (w.empty()) continue;
    Detected d;
    d.ctx.env = it->env;
    d.ctx.env_origin = it->env_origin;
    for (const std::string& note : source_notes) d.job.Note(note);
    size_t program = w.size();
    size_t accelerate_launch = w.size();
    bool trl_launch = false;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      const std::string next = i + 1 < w.size() ? w[i + 1].text : "";
      if ((t == "accelerate" || t.ends_with("/accelerate")) && next == "launch") {
        // The training script: the first .py, or the module after -m / --module.
        for (size_t j = i + 2; j < w.size() && program == w.size(); ++j) {
          if ((w[j].text == "-m" || w[j].text == "--module") && j + 1 < w.size()) {
            program = j + 1;
          } else if (w[j].text.ends_with(".py")) {
            program = j;
          }
        }
        if (program == w.size()) {
          return InvalidInput("accelerate launch names no training script (.py or -m module)")
              .InFile(file)
              .AtLine(w[i].line);
        }
        accelerate_launch = i + 1;
        d.framework = Framework::kHfDeepSpeed;
        // TRL's own scripts (trl/scripts/sft.py) and recipes built on them (the alignment
        // handbook's scripts/sft.py) train with SFTConfig.
        d.ctx.trl_sft = fs::path(w[program].text).filename().string() == "sft.py";
        d.format =
            "accelerate launch (" + fs::path(w[program].text).filename().string() + ", HF Trainer)";
        break;
      }
      // `trl sft|dpo|grpo|kto|reward ...`: TRL's CLI, the HF Trainer under Accelerate.
      if ((t == "trl" || t.ends_with("/trl")) && !next.empty() && !next.starts_with("-")) {
        d.framework = Framework::kHfDeepSpeed;
        d.format = "TRL command (trl " + next + ", HF Trainer)";
        d.ctx.trl_sft = next == "sft";
        trl_launch = true;
        program = i + 1;
        break;
      }
      const bool swift_sub = next == "sft" || next == "pt" || next == "rlhf";
      const bool swift_cli =
          t == "megatron" || t.ends_with("/megatron") || t == "swift" || t.ends_with("/swift");
      if (swift_cli && next == "rlhf") STRATA_RETURN_IF_ERROR(RefuseSwiftRlhf(w, i, file));
      if ((t == "megatron" || t.ends_with("/megatron")) && swift_sub) {
        d.framework = Framework::kMsSwiftMcore;
        d.format = "ms-swift command (megatron " + next + ", Megatron-SWIFT)";
        program = i + 1;
        break;
      }
      if ((t == "swift" || t.ends_with("/swift")) && swift_sub) {
        d.framework = Framework::kHfDeepSpeed;
        d.format = "ms-swift command (swift " + next + ", HF Trainer)";
        d.ctx.ms_swift = true;
        program = i + 1;
        break;
      }
      // verl's trainers and recipes (`python3 -m verl.trainer.main_ppo`, recipe.dapo.main_dapo).
      // A `recipe.*` module verl does not list is verl's only when verl's overrides follow it.
      if (const VerlEntryPoint verl = ClassifyVerlModule(t);
          verl.kind != VerlEntryPoint::Kind::kNone &&
          !(verl.unknown_recipe && !HasVerlOverrides(w, i + 1))) {
        if (verl.kind == VerlEntryPoint::Kind::kRefused) {
          return InvalidInput(fmt::format("{}{}: not imported: {}", verl.module,
                                          verl.recipe.empty() ? "" : " (" + verl.recipe + ")",
                                          verl.reason))
              .InFile(file)
              .AtLine(w[i].line);
        }
        d.framework = Framework::kVerl;
        d.format = verl.recipe.empty()
                       ? "verl trainer command (Hydra overrides)"
                       : fmt::format("verl recipe command ({}, {}; Hydra overrides)", verl.module,
                                     verl.recipe);
        d.rl = verl.kind == VerlEntryPoint::Kind::kRl;
        d.verl_module = verl.module;
        d.ctx.verl_split = verl.split;
        STRATA_RETURN_IF_ERROR(CheckVerlCommandComplete(text, file));
        program = i;
        break;
      }
      if (t.find("torchtitan") != std::string::npos) {
        d.framework = Framework::kTorchtitan;
        d.format = "torchtitan command";
        program = i;
        break;
      }
      if (t.ends_with(".py") && fs::path(t).filename().string().starts_with("pretrain_")) {
        // Megatron-Bridge's recipes (examples/recipes/llama/pretrain_llama3_8b.py) are
        // pretrain_*.py too, but take Hydra-style overrides (train.micro_batch_size=2), not
        // Megatron-LM's --flags: said so, not read as a Megatron-LM command missing its flags.
        if (const std::string hydra = FirstDottedOverride(w, i + 1); !hydra.empty()) {
          return InvalidInput(
                     fmt::format("{} takes Hydra-style overrides ({}), not Megatron-LM's "
                                 "--flags: a Megatron-Bridge / NeMo recipe, which strata import "
                                 "does not read",
                                 fs::path(t).filename().string(), hydra))
              .InFile(file)
              .AtLine(w[i].line)
              .WithHint(
                  "write the job file by hand (docs/job-file.md), or import the Megatron "
                  "log's argument dump of the run");
        }
        d.framework = Framework::kMegatronLm;
        d.format = "Megatron-LM command line (" + fs::path(t).filename().string() + ")";
        program = i;
        break;
      }
      if (t.ends_with(".py")) {
        bool hf = false;
        for (size_t j = i + 1; j < w.size(); ++j) {
          hf = hf || w[j].text == "--deepspeed" || w[j].text == "--per_device_train_batch_size";
          // A TRL-style script given its recipe: `sft.py --config recipe.yaml`.
          const std::string arg = j + 1 < w.size() ? w[j + 1].text : "";
          hf = hf || (w[j].text == "--config" && IsYamlPath(arg));
        }
        // HfArgumentParser's other spelling: the recipe as the script's only positional.
        hf = hf || (i + 1 < w.size() && IsYamlPath(w[i + 1].text));
        if (hf) {
          d.framework = Framework::kHfDeepSpeed;
          d.format = "HF Trainer command (" + fs::path(t).filename().string() + ")";
          d.ctx.trl_sft = fs::path(t).filename().string() == "sft.py";
          program = i;
          break;
        }
      }
    }
    if (program == w.size()) continue;
    if (accelerate_launch < w.size()) {
      STRATA_RETURN_IF_ERROR(ReadAccelerateLaunch(w, accelerate_launch, program, file, bundle, d));
    } else if (!trl_launch) {
      ReadLauncher(w, program, d);
    }
    ApplySlurmHeader(slurm, d.job, SrunStartsEachRank(w, program, slurm));
    ReadCommandArgs(w, program + 1, d.settings, FlagValues::kList);
    if (d.framework == Framework::kHfDeepSpeed && program + 1 < w.size() &&
        IsYamlPath(w[program + 1].text) && !d.settings.Has("config")) {
      d.settings.Set("config", w[program + 1].text,
                     fmt::format("{} (line {})", w[program + 1].text, w[program + 1].line));
    }
    if (d.framework == Framework::kHfDeepSpeed) {
      STRATA_RETURN_IF_ERROR(MergeTrlConfig(d.settings, base, bundle));
      // LLaMA-Factory's examples launch its YAML through accelerate launch (train.sh):
      // read as LLaMA-Factory's, as when the YAML is imported alone.
      if (!d.ctx.ms_swift && IsLlamaFactoryConfig(d.settings)) {
        STRATA_RETURN_IF_ERROR(ApplyLlamaFactoryConfig(d.settings, file, d));
        d.format += ", LLaMA-Factory YAML";
      }
    }
    // After the recipe: TRL's docs put accelerate's num_processes in it too.
    if (trl_launch) STRATA_RETURN_IF_ERROR(ReadTrlLaunch(w, file, bundle, d));
    if (d.ctx.ms_swift && d.settings.Has("model") && !d.settings.Has("model_name_or_path")) {
      const SourcedValue* m = d.settings.Use("model");
      d.settings.Set("model_name_or_path", m->value, m->source);
    }
    if (d.framework == Framework::kHfDeepSpeed) {
      STRATA_RETURN_IF_ERROR(MergeDeepSpeedFile(d.settings, base, bundle));
    }
    if (d.framework == Framework::kVerl) {
      STRATA_RETURN_IF_ERROR(MergeVerlBaseConfig(d.settings, bundle, base, d.verl_module));
    }
    if (d.framework == Framework::kTorchtitan) {
      const SourcedValue* cfg = d.settings.Use("job.config_file");
      if (cfg == nullptr) {
        return InvalidInput("the torchtitan command has no --job.config_file").InFile(file);
      }
      STRATA_ASSIGN_OR_RETURN(fs::path path,
                              bundle.Find(cfg->value, base, "torchtitan " + cfg->source));
      STRATA_ASSIGN_OR_RETURN(std::string toml, ReadFile(path.string()));
      STRATA_ASSIGN_OR_RETURN(Settings from_file, ReadTomlSettings(toml, path.string()));
      // Command-line overrides win over the file, as in torchtitan's JobConfig.
      for (const auto& [key, sv] : d.settings.Unused()) from_file.Set(key, sv.value, sv.source);
      d.settings = std::move(from_file);
    }
    return d;
  }
  return InvalidInput(
             "no training launch recognised: expected a Megatron-LM pretrain_*.py, "
             "`megatron sft`, `swift sft`, `trl sft`, torchtitan, verl.trainer or an HF "
             "Trainer script with --deepspeed / --per_device_train_batch_size / --config "
             "recipe.yaml")
      .InFile(file)
      .WithHint(
          "strata import also reads a Megatron log (its argument dump), ms-swift "
          "args.json, training_args.json, a DeepSpeed JSON, a torchtitan TOML and a verl "
          "YAML");
}

Result<Detected> DetectJson(std::string_view text, const std::string& file, Bundle& bundle) {
  Detected d;
  STRATA_ASSIGN_OR_RETURN(d.settings, ReadJsonSettings(text, file));
  Settings& s = d.settings;
  // `swift rlhf` / `megatron rlhf` save their rlhf_type (dpo, kto, grpo, ...): refused as on
  // the command line (RefuseSwiftRlhf).
  if (const SourcedValue* type = s.Use("rlhf_type");
      type != nullptr && type->value != "None" && type->value != "null" && !type->value.empty()) {
    return InvalidInput(fmt::format("rlhf_type {} ({}): ms-swift's preference and RL training "
                                    "(pairs of sequences, a reference model, or generation) is "
                                    "not priced by strata, which prices one sequence per sample "
                                    "and no reference pass (SFT)",
                                    type->value, type->source))
        .InFile(file)
        .InField("rlhf_type");
  }
  if (s.Has("sampler_type")) {
    return InvalidInput(fmt::format("ms-swift `swift sample` arguments (sampler_type {}): a "
                                    "sampling run, not a training job",
                                    *s.String("sampler_type")))
        .InFile(file)
        .WithHint(
            "strata imports the args.json that `swift sft`, `swift pt` or `megatron sft` "
            "save in their output directory");
  }
  if (IsSwiftV1SftArgs(s)) {
    STRATA_RETURN_IF_ERROR(NormaliseSwiftV1SftArgs(s, fs::path(file).parent_path(), d.job));
    d.framework = Framework::kHfDeepSpeed;
    d.format = "ms-swift 1.x sft_args.json (HF Trainer)";
    d.ctx.ms_swift = true;
    STRATA_RETURN_IF_ERROR(MergeDeepSpeedFile(s, fs::path(file).parent_path(), bundle));
    return d;
  }
  const bool megatron_keys = s.Has("tensor_model_parallel_size") || s.Has("micro_batch_size");
  if (megatron_keys) {
    const bool swift = s.Has("model") || s.Has("train_type") || s.Has("max_length");
    d.framework = swift ? Framework::kMsSwiftMcore : Framework::kMegatronLm;
    d.format = swift ? "ms-swift args.json (Megatron-SWIFT)" : "Megatron arguments (JSON)";
    return d;
  }
  if (s.Has("per_device_train_batch_size")) {
    d.framework = Framework::kHfDeepSpeed;
    d.format = s.Has("model") ? "ms-swift args.json (HF Trainer)" : "HF training_args.json";
    d.ctx.ms_swift = s.Has("model");
    if (d.ctx.ms_swift) ReadSwiftWorldSize(s, d.job);
    if (s.Has("model") && !s.Has("model_name_or_path")) {
      const SourcedValue* m = s.Use("model");
      s.Set("model_name_or_path", m->value, m->source);
    }
    STRATA_RETURN_IF_ERROR(MergeDeepSpeedFile(s, fs::path(file).parent_path(), bundle));
    return d;
  }
  if (s.Has("zero_optimization.stage") || s.Has("train_micro_batch_size_per_gpu")) {
    d.framework = Framework::kHfDeepSpeed;
    d.format = "DeepSpeed JSON config";
    Settings prefixed;
    for (const auto& [key, sv] : s.Unused()) prefixed.Set("ds." + key, sv.value, sv.source);
    d.settings = std::move(prefixed);
    return d;
  }
  return InvalidInput(
             "a JSON file strata cannot import: no Megatron arguments "
             "(tensor_model_parallel_size), TrainingArguments "
             "(per_device_train_batch_size) or DeepSpeed keys (zero_optimization)")
      .InFile(file);
}

}  // namespace

constexpr const char* kSetSource = "--set of strata import";

// The fields' sources tell whose a contradiction is: a value given with --set or by the input is
// the user's to change, named by that source; one between values the importer derived or
// defaulted is the importer's fault, and the user is told so, never pointed at a line of the
// YAML they never saw.
Error ImportedJobRefused(Error e, const ImportReport& report, const std::string& file,
                         bool against_model) {
  std::vector<const ImportedField*> named;
  for (const ImportedField& f : report.fields) {
    const auto mentions = [&](const std::string& text) {
      for (size_t at = text.find(f.key); at != std::string::npos; at = text.find(f.key, at + 1)) {
        const size_t end = at + f.key.size();
        const auto part = [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
        };
        if ((at == 0 || !part(text[at - 1])) && (end >= text.size() || !part(text[end]))) {
          return true;
        }
      }
      return false;
    };
    if (f.key == e.field || mentions(e.message)) named.push_back(&f);
  }
  // A field the user gave with --set takes part in any contradiction it is in, named or not.
  for (const ImportedField& f : report.fields) {
    if (f.source == kSetSource && std::find(named.begin(), named.end(), &f) == named.end()) {
      named.push_back(&f);
    }
  }
  std::string sources;
  bool importer_made = true;
  for (const ImportedField* f : named) {
    if (!sources.empty()) sources += "; ";
    sources += fmt::format("{} = {} ({})", f->key, f->value, f->source);
    // A value the input or the user gave (not a default or a derivation of the importer's) is
    // theirs to change.
    if (f->origin == FieldOrigin::kFromInput) importer_made = false;
  }
  // Pointed at a line of the generated YAML, the error would send the user to a file they
  // never saw: the input file it is, with the sources of the fields at fault.
  if (e.file.empty() || e.file == file + " (imported)") {
    e.file = file;
    e.line = 0;
    e.column = 0;
  }
  if (against_model || named.empty() || !importer_made) {
    e.message = "the imported job is not valid: " + e.message;
    if (!sources.empty()) e.message += " [from " + sources + "]";
    return e;
  }
  e.message =
      "strata import wrote a job it cannot read back (a fault of the importer: it should "
      "have resolved or refused these values itself): " +
      e.message + (sources.empty() ? "" : " [from " + sources + "]");
  e.field.clear();
  e.hint = "please report it with the input; pass the field with --set to go on meanwhile";
  return e;
}

// The framework the input was written for: the step model adds its costs
// (data/frameworks.yaml). None of the inputs strata reads states the framework's release.
void SetFrameworkOf(const Detected& d, JobBuilder& job) {
  if (job.Has("framework.name")) return;
  std::string name;
  switch (d.framework) {
    case Framework::kMegatronLm:
      name = "megatron-core";
      break;
    case Framework::kMsSwiftMcore:
      name = "ms-swift";
      break;
    case Framework::kTorchtitan:
      name = "torchtitan";
      break;
    case Framework::kVerl:
      name = "verl";
      break;
    case Framework::kHfDeepSpeed:
      name = d.ctx.ms_swift || d.format.find("ms-swift") != std::string::npos ? "ms-swift"
             : d.format.starts_with("DeepSpeed")                              ? "deepspeed"
                                                                              : "hf-trainer";
      break;
  }
  job.Derive("framework.name", name, "the input is a " + d.format);
}

Result<ImportReport> ImportJob(std::string_view text, const std::string& file,
                               const ImportOptions& options) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return InvalidInput("the file is empty: nothing to import").InFile(file);
  }
  Bundle bundle(file, options.files);
  const std::string ext = Extension(file);
  const size_t first = text.find_first_not_of(" \t\r\n");
  Result<Detected> detected = InvalidInput("unreachable");
  if (HasMegatronArgumentDump(text)) {
    Detected d;
    STRATA_ASSIGN_OR_RETURN(d.settings, ReadMegatronArgumentDump(text, file));
    d.framework = Framework::kMegatronLm;
    d.format = "Megatron argument dump (log)";
    if (const SourcedValue* w = d.settings.Use("world_size")) {
      if (options.gpus_per_node == 0 && options.nodes == 0) {
        d.job.Set("cluster.gpus_per_node", w->value, w->source);
        d.job.Default("cluster.nodes", "1",
                      "the dump gives world_size only; one node assumed (pass --nodes)");
      }
    }
    detected = std::move(d);
  } else if (ext == ".toml") {
    Detected d;
    STRATA_ASSIGN_OR_RETURN(d.settings, ReadTomlSettings(text, file));
    if (!d.settings.Has("model.name") && !d.settings.Has("parallelism.tensor_parallel_degree")) {
      return InvalidInput("a TOML file without torchtitan's [model] or [parallelism] sections")
          .InFile(file);
    }
    d.framework = Framework::kTorchtitan;
    d.format = "torchtitan TOML";
    d.ctx.config_alone = true;  // no torchrun line gives --nnodes
    detected = std::move(d);
  } else if (ext == ".json" || text[first] == '{') {
    detected = DetectJson(text, file, bundle);
  } else if (ext == ".yaml" || ext == ".yml") {
    Detected d;
    STRATA_ASSIGN_OR_RETURN(d.settings, ReadYamlSettings(text, file));
    bool verl = false;
    for (const auto& [key, sv] : d.settings.Unused())
      verl = verl || key.starts_with("actor_rollout_ref.");
    if (IsAccelerateConfig(d.settings)) {
      // An Accelerate config alone: the cluster and the plugin; the training script's
      // arguments (model, batch, length) come from --model and --set.
      Settings accelerate;
      AddAccelerateConfig(d.settings, accelerate);
      d.settings = std::move(accelerate);
      d.framework = Framework::kHfDeepSpeed;
      d.format = "Accelerate config (distributed_type " +
                 *d.settings.String("accelerate.distributed_type") + ")";
      STRATA_RETURN_IF_ERROR(
          MergeAccelerateDeepSpeedFile(d.settings, fs::path(file).parent_path(), bundle));
      detected = std::move(d);
    } else {
      // LLaMA-Factory (`llamafactory-cli train x.yaml`): HF TrainingArguments plus its own
      // stage / finetuning_type, and `deepspeed:` naming the DeepSpeed JSON.
      const bool llamafactory = !verl && IsLlamaFactoryConfig(d.settings);
      if (llamafactory) {
        d.framework = Framework::kHfDeepSpeed;
        d.format = "LLaMA-Factory YAML (HF Trainer)";
        STRATA_RETURN_IF_ERROR(ApplyLlamaFactoryConfig(d.settings, file, d));
        STRATA_RETURN_IF_ERROR(
            MergeDeepSpeedFile(d.settings, fs::path(file).parent_path(), bundle));
        detected = std::move(d);
      } else if (!verl && IsTrlRecipe(d.settings)) {
        // A TRL / alignment-handbook recipe: TrainingArguments (SFTConfig) and ModelConfig keys,
        // read by TrlParser from `--config x.yaml`; `deepspeed:` may name a DeepSpeed JSON.
        d.framework = Framework::kHfDeepSpeed;
        d.format = "TRL recipe YAML (HF Trainer)";
        d.ctx.trl_sft = IsTrlSftRecipe(d.settings);
        STRATA_RETURN_IF_ERROR(
            MergeDeepSpeedFile(d.settings, fs::path(file).parent_path(), bundle));
        d.job.Note(
            "a TRL recipe alone: the launch (accelerate launch and its config) is not part of "
            "the input; give the cluster with --gpus-per-node / --nodes or import the launch "
            "command with this file");
        detected = std::move(d);
      } else if (!verl && d.settings.Has("MODEL_ARGS")) {
        return InvalidInput(
                   "MODEL_ARGS: expected a mapping of Megatron flags to values (--num-layers: 32), "
                   "as Megatron-LM's functional-test recipes write it")
            .InFile(file)
            .InField("MODEL_ARGS");
      } else if (!verl && IsMegatronTestRecipe(d.settings)) {
        // Megatron-LM's functional-test recipes (tests/functional_tests/test_cases/<model>/
        // <case>/model_config.yaml): MODEL_ARGS maps each pretrain_gpt.py flag to its value
        // (true: the flag alone; false: left out), ENV_VARS the launch's environment. The
        // GPUs come from the CI's own job recipe, not this file: they are asked for.
        Settings flags;
        for (const auto& [key, sv] : d.settings.Unused()) {
          if (key.starts_with("ENV_VARS.")) d.ctx.env[key.substr(9)] = sv.value;
          if (!key.starts_with("MODEL_ARGS.")) continue;
          if (sv.value == "false" || sv.value == "False") continue;
          // "MODEL_ARGS.--num-layers" is kept as MODEL_ARGS.__num_layers: the flag's name.
          const size_t name = key.find_first_not_of('_', 11);
          if (name == std::string::npos) continue;
          flags.Set(key.substr(name), sv.value == "True" ? "true" : sv.value, sv.source);
        }
        d.settings = std::move(flags);
        d.framework = Framework::kMegatronLm;
        d.format = "Megatron-LM functional-test recipe (MODEL_ARGS of pretrain_gpt.py)";
        detected = std::move(d);
      } else if (verl) {
        d.framework = Framework::kVerl;
        d.format = "verl trainer YAML";
        d.rl = IsVerlRlConfig(d.settings);
        detected = std::move(d);
      } else {
        return InvalidInput(
                   "a YAML file that is neither a verl trainer config (no actor_rollout_ref), a "
                   "LLaMA-Factory one (no stage), a TRL recipe (no model_name_or_path or "
                   "per_device_train_batch_size), an Accelerate config (no distributed_type) "
                   "nor a Megatron-LM test recipe (no MODEL_ARGS)")
            .InFile(file)
            .WithHint("a strata job file is used directly: pass it as the job, not to import");
      }
    }
  } else {
    detected = DetectCommand(text, file, bundle);
  }
  if (!detected.ok()) {
    Error e = std::move(detected).error();
    if (e.file.empty()) e.InFile(file);
    return e;
  }
  Detected& d = *detected;
  d.ctx.options = &options;
  d.ctx.verl_rl = d.rl;
  Status mapped = OkStatus();
  switch (d.framework) {
    case Framework::kMegatronLm:
      mapped = MapMegatron(MegatronFlavor::kMegatronLm, d.settings, d.ctx, d.job);
      break;
    case Framework::kMsSwiftMcore:
      mapped = MapMegatron(MegatronFlavor::kMsSwiftMcore, d.settings, d.ctx, d.job);
      break;
    case Framework::kHfDeepSpeed:
      mapped = MapHfDeepSpeed(d.settings, d.ctx, d.job);
      break;
    case Framework::kTorchtitan:
      mapped = MapTorchtitan(d.settings, d.ctx, d.job);
      break;
    case Framework::kVerl:
      mapped = MapVerl(d.settings, d.ctx, d.job);
      break;
  }
  if (!mapped.ok()) {
    Error e = mapped.error();
    if (e.file.empty()) e.InFile(file);
    return e;
  }
  STRATA_RETURN_IF_ERROR(bundle.CheckAllUsed());
  SetFrameworkOf(d, d.job);
  for (const std::string& assignment : options.overrides) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidInput("--set expects key=value, got '" + assignment + "'");
    }
    d.job.Set(assignment.substr(0, eq), assignment.substr(eq + 1), "--set of strata import");
  }
  // The frameworks derive the global batch from the micro batch the job runs: a micro batch
  // given here (an Accelerate config has none) derives it again, unless it is given too.
  const auto sets = [&](std::string_view key) {
    return std::any_of(options.overrides.begin(), options.overrides.end(),
                       [&](const std::string& o) { return o.starts_with(std::string(key) + "="); });
  };
  if (sets("batch.micro_batch") && !sets("batch.global_batch")) {
    STRATA_RETURN_IF_ERROR(d.job.RederiveGlobalBatch("--set of strata import"));
  }
  // An RL launch: the RL job around the actor's, from the settings MapVerl left (before the
  // report lists the unused ones).
  std::optional<RlImport> rl;
  if (d.rl) {
    const std::string ref = options.actor_job_ref.empty()
                                ? fs::path(file).stem().string() + ".actor.yaml"
                                : options.actor_job_ref;
    auto mapped_rl = MapVerlRl(d.settings, d.job, ref, fs::path(file).filename().string(), d.format,
                               d.verl_module);
    if (!mapped_rl.ok()) {
      Error e = std::move(mapped_rl).error();
      if (e.file.empty()) e.InFile(file);
      return e;
    }
    rl = std::move(*mapped_rl);
  }
  // A near miss of a key the mapper reads is a typo the framework itself would refuse (argparse's
  // "unrecognized arguments", DeepSpeed's and torchtitan's unknown fields): importing the default
  // in its place would price another job than the one meant.
  if (const std::optional<Settings::NearMiss> typo = d.settings.FirstNearMiss()) {
    // Named as the input writes them: without the prefix the importer files a DeepSpeed JSON's
    // or an Accelerate config's keys under, and a flag with the dashes it was given with.
    std::string key = typo->key, known = typo->known;
    for (const std::string prefix : {"ds.", "accelerate."}) {
      if (key.starts_with(prefix) && known.starts_with(prefix)) {
        key = key.substr(prefix.size());
        known = known.substr(prefix.size());
      }
    }
    if (typo->source.starts_with("--")) {
      const std::string flag = typo->source.substr(0, typo->source.find_first_of(" =("));
      if (flag.find('-', 2) != std::string::npos)
        std::replace(known.begin(), known.end(), '_', '-');
      key = flag;
      known = "--" + known;
    }
    return InvalidInput(fmt::format("unknown setting '{}' ({}): the framework would refuse it, "
                                    "and strata would otherwise apply the default of '{}'",
                                    key, typo->source, known))
        .InFile(file)
        .WithHint("did you mean '" + known + "'?");
  }
  ImportReport report;
  report.format = d.format;
  report.rl = std::move(rl);
  d.job.Fill(report);
  if (report.rl) {
    // The settings the RL job used are no longer "read but not used".
    const auto still_unused = d.settings.Unused();
    std::erase_if(report.unused, [&](const std::string& line) {
      const std::string key = line.substr(0, line.find(" = "));
      return d.settings.Has(key) && std::none_of(still_unused.begin(), still_unused.end(),
                                                 [&](const auto& u) { return u.first == key; });
    });
  }
  STRATA_ASSIGN_OR_RETURN(const CostNeutralKeys neutral, LoadCostNeutralKeys());
  for (const std::string& line : report.unused) {
    const std::string key = line.substr(0, line.find(" = "));
    // The launch's own reason first (a token budget whose dynamic batching is off), then the
    // keys that never cost a step.
    if (const std::string* why = d.settings.NoStepCostOf(key)) {
      report.unused_no_step_cost.push_back(key + ": " + *why);
      report.unused_unread_kinds.push_back(*d.settings.NoStepCostKindOf(key));
    } else if (const CostNeutralGroup* g = neutral.Match(key)) {
      report.unused_no_step_cost.push_back(key + ": " + g->name);
    } else if (const std::string* not_modelled = d.settings.NotModelledWhy(key)) {
      report.unused_not_modelled.push_back(key + ": " + *not_modelled);
    }
  }
  std::sort(report.unused_unread_kinds.begin(), report.unused_unread_kinds.end());
  report.unused_unread_kinds.erase(
      std::unique(report.unused_unread_kinds.begin(), report.unused_unread_kinds.end()),
      report.unused_unread_kinds.end());
  report.model_json = d.ctx.model_json;
  report.yaml = d.job.Yaml(
      fmt::format("Imported by `strata import` from {} ({}).\nEach value says where it came from; "
                  "\"default:\" marks the framework's own default.",
                  fs::path(file).filename().string(), d.format));
  auto job = ParseJobSpec(report.yaml, file + " (imported)");
  if (!job.ok()) return ImportedJobRefused(std::move(job).error(), report, file, false);
  // Checked against the model too, as every command will: a job the model cannot run (an
  // adapter on routed experts, TP not dividing the heads) is refused here, not written.
  // A Megatron-style model description (report.model_json) is checked where it is loaded.
  if (report.model_json.empty()) {
    if (auto model = LoadModelConfig(job->model); model.ok()) {
      STRATA_ASSIGN_OR_RETURN(FrameworkEngines engines, LoadFrameworkEngines());
      const QueryGroupSplit split =
          QueryGroupSplitOf(ResolveEngineChain(engines, job->framework, job->sharding.mode));
      if (Status s = CheckLayoutAgainstModel(*job, *model, split); !s.ok()) {
        return ImportedJobRefused(s.error(), report, file, true);
      }
    }
  }
  report.job = *job;
  // What the numbers of this job do not model travels with the job file, as comments.
  if (!report.notes.empty()) report.yaml += "\n" + RenderImportNotes(report);
  return report;
}

Result<ImportReport> ImportJobFile(const std::string& path, const ImportOptions& options) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ImportJob(text, path, options);
}

std::string RenderImportNotes(const ImportReport& report) {
  if (report.notes.empty()) return "";
  std::string out = "# approximations and settings kept for later:\n";
  for (const auto& n : report.notes) out += "#   " + n + "\n";
  return out;
}

}  // namespace strata
