// The single-pass Megatron reader (megatron_fast.cc) against the general label scan it replaces
// on the hot path: on every line of every golden log, and on cut and mutated copies of every
// iteration line, it must either give the label scan's answer and record, bit for bit, or step
// aside (nullopt). The real lines must not make it step aside, or the fast path would be dead.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "strata/core/strings.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "support/golden.h"

namespace strata {
namespace {

bool SameNumber(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || std::memcmp(&*a, &*b, sizeof(double)) == 0;  // NaN == NaN, -0 != +0
}

// Every field of StepRecord (step_record.h); a new field must be added here too.
bool SameRecord(const StepRecord& a, const StepRecord& b) {
  return a.format == b.format && a.line == b.line && a.step == b.step &&
         a.total_steps == b.total_steps && SameNumber(a.loss, b.loss) &&
         SameNumber(a.grad_norm, b.grad_norm) && SameNumber(a.learning_rate, b.learning_rate) &&
         SameNumber(a.step_time_s, b.step_time_s) && SameNumber(a.global_batch, b.global_batch) &&
         SameNumber(a.tokens, b.tokens) && SameNumber(a.samples_per_s, b.samples_per_s) &&
         SameNumber(a.memory_gib, b.memory_gib) &&
         SameNumber(a.skipped_iterations, b.skipped_iterations) &&
         SameNumber(a.nan_iterations, b.nan_iterations) &&
         SameNumber(a.timestamp_s, b.timestamp_s) && SameNumber(a.elapsed_s, b.elapsed_s) &&
         SameNumber(a.printed_tflops_per_gpu, b.printed_tflops_per_gpu) &&
         SameNumber(a.printed_tokens_per_s_per_gpu, b.printed_tokens_per_s_per_gpu) &&
         SameNumber(a.printed_mfu, b.printed_mfu);
}

struct Tally {
  int fast = 0;     // lines the fast reader answered
  int aside = 0;    // lines it left to the label scan
  int records = 0;  // lines read as a step record
};

// Both readers on one line; a disagreement fails the test with the line.
void Compare(std::string_view line, Tally& tally) {
  StepRecord general_record, fast_record;
  const bool general = ParseMegatronLineByLabels(line, general_record);
  const std::optional<bool> fast = ParseMegatronLineFast(line, fast_record);
  if (!fast) {
    ++tally.aside;
    EXPECT_TRUE(SameRecord(fast_record, StepRecord{})) << "touched the record: " << line;
    return;
  }
  ++tally.fast;
  if (*fast) ++tally.records;
  EXPECT_EQ(*fast, general) << line;
  EXPECT_TRUE(SameRecord(fast_record, general_record)) << line;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

// The golden logs' lines as the analyser hands them to the parsers: launcher prefix removed.
std::vector<std::string> GoldenLines() {
  std::vector<std::string> lines;
  for (const std::string& name : testing::GoldenCases("golden/logs")) {
    const std::string path = "golden/logs/" + name + "/input.log";
    if (!std::ifstream(testing::TestPath(path)).good()) continue;
    for (const std::string& line : Lines(testing::ReadTestFile(path))) {
      std::string buffer;
      const std::string_view text = StripLauncherPrefix(StripAnsiEscapes(line, buffer)).text;
      lines.emplace_back(text);
    }
  }
  return lines;
}

bool IsIterationLine(const std::string& line) {
  StepRecord r;
  return ParseMegatronLineByLabels(line, r);
}

TEST(MegatronFast, EveryGoldenLineAsTheLabelScanReadsIt) {
  Tally all, iterations;
  for (const std::string& line : GoldenLines()) {
    Compare(line, IsIterationLine(line) ? iterations : all);
  }
  // The megatron goldens hold 3 + 3 + 5 (public excerpts), 30 (the reference case), 13 (the
  // anomaly fixture) and 1 (the OOM hang) complete iteration lines ("elapsed time per iteration"
  // counted with grep): 55, each read by the fast path, none left to the label scan. Lines that
  // are not (NeMo's "iteration N/M |", lines cut before the step time) may be left to it.
  EXPECT_EQ(iterations.records, 55);
  EXPECT_EQ(iterations.aside, 0);
  EXPECT_EQ(all.records, 0);
}

// Cuts at every byte, and every byte deleted or replaced by one that matters to the grammar
// (separators, signs, exponent letters, digits, whitespace, letters of nan/inf).
TEST(MegatronFast, CutAndMutatedIterationLinesAsTheLabelScanReadsThem) {
  const std::string kReplacements = " \t|:-+.eE09xni,(";
  Tally tally;
  int iteration_lines = 0;
  for (const std::string& line : GoldenLines()) {
    if (!IsIterationLine(line)) continue;
    ++iteration_lines;
    for (size_t i = 0; i <= line.size(); ++i) {
      Compare(std::string_view(line).substr(0, i), tally);
      if (i == line.size()) break;
      std::string deleted = line;
      deleted.erase(i, 1);
      Compare(deleted, tally);
      for (char c : kReplacements) {
        if (c == line[i]) continue;
        std::string replaced = line;
        replaced[i] = c;
        Compare(replaced, tally);
      }
    }
  }
  ASSERT_EQ(iteration_lines, 55);
  // Most variants stay lines it reads; the rest go to the label scan, which is allowed.
  EXPECT_GT(tally.records, tally.aside);
}

// Values that are not plain decimals go through ParseLogNumber, as in the label scan; labels
// padded before their colon are still labels (the label scan trims them).
TEST(MegatronFast, ValuesAndLabelsOffTheCommonShape) {
  Tally tally;
  for (const char* line : {
           " iteration 5/ 10 | elapsed time per iteration (ms): 1,234.5 | lm loss: nan | grad "
           "norm: -inf | learning rate: np.float64(3e-4) | global batch size: 1e400 |",
           " iteration 5/ 10 | elapsed time per iteration (ms) : 12 |lm loss:1.5|grad norm:\t2 |",
           " iteration 5/ 10 | elapsed time per iteration (ms): 12 | lm loss: 1.5 x | tail",
           " iteration 5/ 10 | elapsed time per iteration (ms): 12 | lm loss: 12345678901234567890 "
           "|",
           " iteration 5/ 10 | elapsed time per iteration (ms): 12 | lm loss: 1.5e-30 |",
           // Labels before the step time: held back until the line proves to be megatron's.
           " iteration 5/ 10 | lm loss: 1.5 | elapsed time: 3m 2s | elapsed time per iteration "
           "(ms): 12 | grad norm: 2 |",
           " iteration 5/ 10 | lm loss: 1.5 | grad norm: x |",
           " iteration -5/ 10 | elapsed time per iteration (ms): 12 |",
           "Training epoch 0, iteration 120/149 | lr: 3e-05 | train_step_timing in s: 0.03146",
       }) {
    Compare(line, tally);
  }
  // All but three: no step-time label (twice) and a negative step go to the label scan.
  EXPECT_EQ(tally.fast, 6);
  EXPECT_EQ(tally.aside, 3);
}

}  // namespace
}  // namespace strata
