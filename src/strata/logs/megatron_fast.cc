// The single-pass reader of Megatron's iteration line, the line a large log is made of:
//   [2026-05-01 00:00:00.123456] iteration   12/ 250000 | consumed samples: 960 | elapsed time
//   per iteration (ms): 500.1 | ... | number of nan iterations:   0 |
// One left-to-right pass: each segment's label is recognised by its first bytes and its number
// read where it lies, without cutting the line into trimmed views first. A value that is not a
// plain decimal goes to the same per-field code as the label scan; a line it cannot read exactly
// as the label scan does (no step time, a malformed step counter) is left to the label scan.
// Both give the same record, bit for bit (tests/logs/megatron_fast_test.cc).
#include <array>
#include <cstdint>
#include <cstring>

#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/megatron_fields.h"

namespace strata {

namespace {

bool IsLogSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// For each first byte, the run of kMegatronLabels entries that start with it.
struct LabelRun {
  uint8_t first = 0;
  uint8_t count = 0;
};

constexpr std::array<LabelRun, 256> BuildLabelIndex() {
  std::array<LabelRun, 256> index{};
  for (size_t i = 0; i < kMegatronLabels.size(); ++i) {
    LabelRun& run = index[static_cast<unsigned char>(kMegatronLabels[i].text[0])];
    if (run.count == 0) run.first = static_cast<uint8_t>(i);
    ++run.count;
  }
  return index;
}

constexpr bool LabelsGroupedByFirstByte() {
  for (size_t i = 0; i < kMegatronLabels.size(); ++i) {
    for (size_t j = i + 2; j < kMegatronLabels.size(); ++j) {
      if (kMegatronLabels[j].text[0] == kMegatronLabels[i].text[0] &&
          kMegatronLabels[i + 1].text[0] != kMegatronLabels[i].text[0]) {
        return false;
      }
    }
  }
  return true;
}
static_assert(LabelsGroupedByFirstByte(), "the index needs labels with one first byte adjacent");

constexpr std::array<LabelRun, 256> kLabelIndex = BuildLabelIndex();

// The field of the label that starts at p (leading spaces skipped), with `value` just past its
// ':'. The label scan's label is the segment up to its first ':', trimmed; since no label we
// read holds ':' or '|', it is one of ours exactly when the segment starts with that label
// followed by spaces and ':'. kNone otherwise.
MegatronField MatchLabel(const char* p, const char* end, const char*& value) {
  const LabelRun run = kLabelIndex[static_cast<unsigned char>(*p)];
  for (size_t i = run.first; i < size_t{run.first} + run.count; ++i) {
    const std::string_view label = kMegatronLabels[i].text;
    if (static_cast<size_t>(end - p) <= label.size() ||
        std::memcmp(p + 1, label.data() + 1, label.size() - 1) != 0) {
      continue;
    }
    const char* q = p + label.size();
    while (q < end && IsLogSpace(*q)) ++q;
    if (q < end && *q == ':') {
      value = q + 1;
      return kMegatronLabels[i].field;
    }
  }
  return MegatronField::kNone;
}

// LeadingInt (core/text_scan.h) in place: spaces, an optional '-', 1 to 18 digits.
const char* ScanInt(const char* p, const char* end, int64_t& value) {
  while (p < end && *p == ' ') ++p;
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* digits = p;
  uint64_t v = 0;
  for (; p < end && IsDigit(*p); ++p) v = v * 10 + static_cast<uint64_t>(*p - '0');
  if (p == digits || p - digits > 18) return nullptr;
  value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return p;
}

// A segment's value: a number read in place, or the text the label scan would have handed on.
// No initializers: an array of them is filled as the line is read, not zeroed for every line.
struct Value {
  MegatronField field;
  bool is_number;
  double number;
  std::string_view text;
};

constexpr size_t kMaxValues = 32;  // more read labels on one line: not a line we know

}  // namespace

std::optional<bool> ParseMegatronLineFast(std::string_view text, StepRecord& r) {
  // The label scan's cheap rejection, unchanged: it is the answer for most non-step lines.
  const size_t it = FindLiteral(text.substr(0, 64 + 10), "iteration ");
  if (it == std::string_view::npos) return false;
  const char* const end = text.data() + text.size();
  int64_t step = 0, total = 0;
  const char* p = ScanInt(text.data() + it + 10, end, step);
  if (p == nullptr || step < 0) return std::nullopt;
  while (p < end && *p == ' ') ++p;
  if (p == end || *p != '/') return std::nullopt;
  p = ScanInt(p + 1, end, total);
  if (p == nullptr) return std::nullopt;

  std::array<Value, kMaxValues> values;
  size_t count = 0;
  bool step_time_seen = false;
  // Each segment ends with '|'; text after the last '|' is a cut segment, ignored.
  while (p < end) {
    while (p < end && IsLogSpace(*p)) ++p;
    if (p == end) break;
    const char* v = nullptr;
    const MegatronField field = MatchLabel(p, end, v);
    if (field == MegatronField::kNone) {
      const void* bar = std::memchr(p, '|', static_cast<size_t>(end - p));
      if (bar == nullptr) break;
      p = static_cast<const char*>(bar) + 1;
      continue;
    }
    if (field == MegatronField::kStepTimeMs) step_time_seen = true;
    if (count == kMaxValues) return std::nullopt;
    Value& value = values[count];
    value.field = field;
    while (v < end && IsLogSpace(*v)) ++v;
    if (IsNumericField(field)) {
      // ParseLogNumber's common case: [+-] plain decimal, then only spaces up to the '|'.
      const char* q = v;
      const bool negative = q < end && *q == '-';
      if (q < end && (*q == '-' || *q == '+')) ++q;
      double number = 0;
      q = q < end ? ScanPlainDecimal(q, end, number) : nullptr;
      if (q != nullptr) {
        while (q < end && IsLogSpace(*q)) ++q;
        if (q < end && *q == '|') {
          value.is_number = true;
          value.number = negative ? -number : number;
          ++count;
          p = q + 1;
          continue;
        }
      }
    }
    const void* bar = std::memchr(v, '|', static_cast<size_t>(end - v));
    if (bar == nullptr) break;
    const char* b = static_cast<const char*>(bar);
    value.is_number = false;
    value.text = TrimLogSpace(std::string_view(v, static_cast<size_t>(b - v)));
    ++count;
    p = b + 1;
  }
  // The label scan reads only lines that say "elapsed time per iteration" after "iteration ";
  // a line without that label is left to it (NeMo's "iteration N/M |" lines, odd variants).
  if (!step_time_seen) return std::nullopt;

  r.step = step;
  r.total_steps = total;
  r.format = LogFormat::kMegatron;
  if (it > 0) {
    if (auto t = FindLeadingTimestamp(text.substr(0, it))) r.timestamp_s = *t;
  }
  std::optional<double> seqlen;
  for (size_t i = 0; i < count; ++i) {
    const Value& value = values[i];
    if (value.is_number) {
      SetMegatronNumber(value.field, value.number, r, seqlen);
    } else {
      ApplyMegatronField(value.field, value.text, r, seqlen);
    }
  }
  if (seqlen && r.global_batch) r.tokens = *seqlen * *r.global_batch;
  return true;
}

}  // namespace strata
