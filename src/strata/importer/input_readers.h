// Readers that turn each input format into Settings: command-line words, JSON, YAML and TOML
// files (nested keys dotted: "zero_optimization.stage"), and the argument dump Megatron prints
// at the top of its log.
#ifndef STRATA_IMPORTER_INPUT_READERS_H_
#define STRATA_IMPORTER_INPUT_READERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/importer/settings.h"
#include "strata/importer/shell_script.h"

namespace strata {

/// How many words after a `--key` are its value: the first (a launcher's own options, where
/// the program's name follows a value: `torchrun --nproc_per_node 8 train.py`), or every word up
/// to the next flag, joined by spaces (a training program's argparse lists, nargs='+':
/// `--target_modules q_proj v_proj`).
enum class FlagValues { kFirstWord, kList };

/// `--key value`, `--key=value`, bare `--flag` (true) and Hydra `a.b=c` words from words[start].
/// Positional words that are none of these are ignored.
void ReadCommandArgs(const std::vector<ShellWord>& words, size_t start, Settings& out,
                     FlagValues values = FlagValues::kFirstWord);

Result<Settings> ReadJsonSettings(std::string_view text, const std::string& file);
Result<Settings> ReadYamlSettings(std::string_view text, const std::string& file);
Result<Settings> ReadTomlSettings(std::string_view text, const std::string& file);

/// True when `text` holds Megatron's "---- arguments ----" block.
bool HasMegatronArgumentDump(std::string_view text);
/// The block's "name ..... value" lines (None values skipped: Megatron's unset), plus the
/// padded vocabulary and world size Megatron prints around it.
Result<Settings> ReadMegatronArgumentDump(std::string_view text, const std::string& file);

}  // namespace strata

#endif  // STRATA_IMPORTER_INPUT_READERS_H_
