// Importing a job from how people launch it: a Megatron-LM command line or the argument dump at
// the top of its log, an ms-swift command (`megatron sft`, `swift sft`) or its args.json, a
// torchtitan TOML, a DeepSpeed JSON with HF TrainingArguments (command line or
// training_args.json), a verl trainer YAML or command. The result is strata job YAML plus a
// report: every field set and where it came from, the framework defaults applied, and what was
// read but cannot be used. The one entry point of every command's `--from FILE`.
#ifndef STRATA_IMPORTER_IMPORT_JOB_H_
#define STRATA_IMPORTER_IMPORT_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/importer/settings.h"
#include "strata/job/job_spec.h"

namespace strata {

/// What the launch input cannot say (which GPU) or what the user wants to pin.
struct ImportOptions {
  std::string gpu;            // GPU catalog name; required unless the input names one
  int64_t nodes = 0;          // 0: from the input
  int64_t gpus_per_node = 0;  // 0: from the input
  std::string model;          // catalog name or config.json path; overrides the input's
  /// A cluster file or name under data/clusters/: the job runs on it (its network, PCIe and
  /// storage for `step` and `map`), and its GPU and GPUs per node fill what the input lacks.
  std::string cluster;
  /// Where a Megatron-style model description is written when the input describes the model
  /// by its arguments (job.yaml -> job.model.json). Empty: the job refers to "<stem>.model.json".
  std::string model_json_path;
  /// How the RL job of a verl launch names its actor's job file (`actor.job`). Empty:
  /// "<input stem>.actor.yaml", the file `strata import -o` writes beside the RL job.
  std::string actor_job_ref;
  /// "key=value" job fields the input cannot give (sequence.mean_tokens=29K), as `--set`.
  std::vector<std::string> overrides;
  /// The other files of a bundle (an Accelerate YAML, a DeepSpeed JSON, a sourced script, a
  /// torchtitan TOML): a file the input names is taken from here when one has its file name,
  /// else read relative to the input's folder. Each must be named by the input.
  std::vector<std::string> files;
};

/// Who made a field's value: the input (or the user, with --set or an option of strata import),
/// or the importer itself, as a framework's default or derived from other values. Set where the
/// value is made; it decides whose fault a refused job is (ImportedJobRefused), whatever the
/// source text says.
enum class FieldOrigin { kFromInput, kDefault, kDerived };

/// One job field and where its value came from.
struct ImportedField {
  std::string key;     // strata's dotted key ("parallel.ep")
  std::string value;   // YAML scalar or flow text
  std::string source;  // "--expert_model_parallel_size (line 14)", "default: ...", "derived: ..."
  FieldOrigin origin = FieldOrigin::kFromInput;
};

/// The RL job of an RL launch (verl's main_ppo): the actor's job is ImportReport::yaml, this the
/// rollout, batch, lengths and placement around it (docs/rl.md, "The RL job file").
struct RlImport {
  std::vector<ImportedField> fields;  // RL job keys ("batch.prompts"), in file order
  std::vector<std::string> defaults;  // verl's defaults applied, each with its source
  std::vector<std::string> notes;     // what strata rl does not model of this launch
  std::string yaml;                   // the RL job file (ending with the notes as comments)
};

struct ImportReport {
  std::string format;                 // "ms-swift command (megatron sft)", ...
  std::vector<ImportedField> fields;  // in job-file order
  std::vector<std::string> defaults;  // framework defaults applied, each with its reason
  std::vector<std::string> unused;    // read but not used by a strata job: "key = value (source)"
  /// Of `unused`, the keys with no effect on a step's time or memory (cost_neutral_keys.h, or a
  /// reason of the launch's own): "key: group" or "key: why", in `unused`'s order.
  std::vector<std::string> unused_no_step_cost;
  /// The kinds of the launch's own settings that leave some of those keys unread
  /// (Settings::NoStepCost: a verl token budget whose dynamic batching is off, a key of a pass
  /// that does not run), each once, in the enum's order.
  std::vector<UnreadBecause> unused_unread_kinds;
  /// Of `unused`, the keys that may change a step whose meaning the importer knows but strata
  /// does not model (Settings::NotModelled): "key: why", in `unused`'s order.
  std::vector<std::string> unused_not_modelled;
  std::vector<std::string> notes;  // approximations strata makes for this framework
  std::string yaml;                // the job file (ending with the notes as comments)
  std::string model_json;          // Megatron-style model description, when one was built
  JobSpec job;                     // the YAML parsed back (proves it is a valid job)
  std::optional<RlImport> rl;      // an RL launch: the RL job around the actor's job
};

/// deepspeed's --include ("localhost:2,3", "worker-0:0,1@worker-1:0,1"): one node per host;
/// the GPUs per node when every host lists the same number of slots (a host without a slot
/// list runs on all of its GPUs, which the string does not tell).
struct DeepSpeedHosts {
  int64_t nodes = 0;
  std::optional<int64_t> gpus_per_node;
};
DeepSpeedHosts ParseDeepSpeedInclude(std::string_view text);

/// Imports `text` (the contents of `file`). Errors name the file, the line or key, and what
/// was expected; an input in which no known framework is recognised is an error, never an
/// empty job.
Result<ImportReport> ImportJob(std::string_view text, const std::string& file,
                               const ImportOptions& options);

/// Reads `path` and imports it (JSON and TOML files named from a command line, such as
/// `--deepspeed ds.json` or `--job.config_file x.toml`, are read relative to it).
Result<ImportReport> ImportJobFile(const std::string& path, const ImportOptions& options);

/// The error for a job the import wrote that the job reader refuses (`e`, naming a line of the
/// generated YAML "<file> (imported)"): reported in `file` itself, with the sources of the fields
/// involved; a contradiction between values the importer derived or defaulted reads as a fault of
/// the importer, one involving the input's values or a --set as the input's. `against_model`: a
/// layout the model cannot run (TP not dividing the heads), the input's to change.
Error ImportedJobRefused(Error e, const ImportReport& report, const std::string& file,
                         bool against_model);

/// The approximations an import made (LoRA imported as full training, ...), one per line;
/// empty when there are none. They end the job YAML as comments (ImportReport::yaml), so they
/// are shown with and without --explain and kept in the written job file.
std::string RenderImportNotes(const ImportReport& report);

}  // namespace strata

#endif  // STRATA_IMPORTER_IMPORT_JOB_H_
