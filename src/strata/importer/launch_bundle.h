// The files of a launch bundle: a script and the files it names (an Accelerate YAML, a DeepSpeed
// JSON, a torchtitan TOML, a sourced script), and the sizes a Slurm batch script's #SBATCH
// header asks for.
#ifndef STRATA_IMPORTER_LAUNCH_BUNDLE_H_
#define STRATA_IMPORTER_LAUNCH_BUNDLE_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/importer/job_builder.h"
#include "strata/importer/settings.h"

namespace strata {

/// The files a launch input names, found among the files given with it (by file name) or
/// relative to a folder (the input's, else one above it: LLaMA-Factory's YAMLs name
/// `examples/deepspeed/ds_z3_config.json` from the repository root, where llamafactory-cli
/// runs, while the YAML itself lies in examples/train_full/).
class Bundle {
 public:
  Bundle(std::string input, std::vector<std::string> files);

  /// `named_by` says how the input names it ("accelerate launch --config_file", at `line` of
  /// the input when known); the error says that and where the file was looked for.
  Result<std::filesystem::path> Find(const std::string& value, const std::filesystem::path& base,
                                     const std::string& named_by, int line = 0);
  /// A file of this name was given with the input.
  bool Gives(const std::string& name) const;
  /// A file given with the input that the input never names is a mistake (a typo, the wrong
  /// bundle), not something to ignore.
  Status CheckAllUsed() const;

 private:
  std::string input_;
  std::vector<std::string> files_;
  std::vector<bool> used_;
};

/// #SBATCH lines: the allocation a batch script runs in ("#SBATCH --nodes=4", "#SBATCH -N 4"),
/// each value with its line.
Settings ReadSlurmHeader(std::string_view text, const std::string& file);
/// The same, added to `out` (a later file's options replace an earlier one's).
void ReadSlurmHeader(std::string_view text, const std::string& file, Settings& out);
/// Slurm options as an #SBATCH line or sbatch's command line gives them, each with `source`.
void ReadSlurmOptions(const std::vector<std::string>& words, const std::string& source,
                      Settings& out);

/// The header's sizes where the launch does not give them, or gives a variable the scheduler
/// sets when the job runs (--nnodes $SLURM_NNODES): the header is what the scheduler sets it
/// to. GPUs per node: --gpus-per-node=[type:]N, --gres=gpu[:type]:N, else --gpus-per-task x
/// tasks per node. Where both give a size and differ, the launch's stays and a note says so.
/// `one_rank_per_task`: srun starts the training program itself (no torchrun), one rank per
/// task, so the ranks per node are --ntasks-per-node (or --ntasks / --nodes).
void ApplySlurmHeader(Settings& slurm, JobBuilder& job, bool one_rank_per_task = false);

}  // namespace strata

#endif  // STRATA_IMPORTER_LAUNCH_BUNDLE_H_
