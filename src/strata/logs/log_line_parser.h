// What one log line says: a step record (in any of the formats of step_record.h), a memory
// report, an error, the end of the run, or nothing we read. Formats are recognised by content,
// never by file name, so one file may mix them.
#ifndef STRATA_LOGS_LOG_LINE_PARSER_H_
#define STRATA_LOGS_LOG_LINE_PARSER_H_

#include <optional>
#include <string_view>
#include <vector>

#include "strata/logs/step_record.h"

namespace strata {

struct ParsedLine {
  LineKind kind = LineKind::kOther;
  StepRecord record;  // for kStep; for kMemory: step and memory_gib; for kWallClock: step_time_s
};

/// Appends what `text` says to `out` (more than one entry when several dictionaries share a
/// physical line, as ms-swift's do when tqdm eats the newlines). `text` has its launcher prefix,
/// ANSI escapes and carriage returns removed already. Appends nothing for an unread line.
void ParseLogLine(std::string_view text, std::vector<ParsedLine>& out);

// The per-format parsers (each returns false when the line is not theirs).
bool ParseMegatronLine(std::string_view text, StepRecord& record);
/// Megatron's iteration line in one left-to-right pass (labels recognised by their first bytes,
/// numbers read in place): true or false as ParseMegatronLineByLabels would answer, with the same
/// record; nullopt for a variant it does not read, which ParseMegatronLine then hands to the
/// label scan. `record` is untouched unless it returns true.
std::optional<bool> ParseMegatronLineFast(std::string_view text, StepRecord& record);
/// The general reader: the line split at '|', each "label: value" matched by name.
bool ParseMegatronLineByLabels(std::string_view text, StepRecord& record);
bool ParseMegatronMemoryLine(std::string_view text, StepRecord& record);
bool ParseNemoLine(std::string_view text, StepRecord& record);
bool ParseLightningBar(std::string_view text, StepRecord& record);
bool ParseDictLine(std::string_view text, std::vector<ParsedLine>& out);
bool ParseDeepSpeedLine(std::string_view text, StepRecord& record);
/// DeepSpeed's wall-clock breakdown line: step_time_s = forward + backward + step (no step
/// number: it times the step whose throughput line came just before it).
bool ParseDeepSpeedWallClockLine(std::string_view text, StepRecord& record);
bool ParseTorchtitanLine(std::string_view text, StepRecord& record);
bool ParseVerlLine(std::string_view text, StepRecord& record);
/// A tqdm bar with a counter and a clock: step = n, total_steps, elapsed_s, and its s/it as
/// running_step_time_s (tqdm_lines.cc).
bool ParseTqdmBar(std::string_view text, StepRecord& record);

/// "label: value" segments split by '|' (Megatron, NeMo 2, ms-swift), or by another separator.
/// Calls fn(label, value) for each segment that has a colon; labels and values are trimmed.
template <class Fn>
void ForEachLabelled(std::string_view text, char separator, Fn&& fn);

}  // namespace strata

#include "strata/logs/log_line_parser_inl.h"

#endif  // STRATA_LOGS_LOG_LINE_PARSER_H_
