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
#include <utility>

#include "strata/core/timestamp.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/megatron_fields.h"

namespace strata {

namespace {

// TrimLogSpace's whitespace, by table: one load per byte skipped.
constexpr std::array<bool, 256> kLogSpace = [] {
  std::array<bool, 256> t{};
  t[' '] = t['\t'] = t['\r'] = t['\n'] = true;
  return t;
}();
inline bool IsLogSpace(char c) { return kLogSpace[static_cast<unsigned char>(c)]; }

// Whether label I of kMegatronLabels starts at p, followed by spaces and ':'; then `value` is
// just past the ':'. The label scan's label is the segment up to its first ':', trimmed; no
// label we read holds ':' or '|', so this is exactly when the label scan would read it as I.
// The length is a constant, so most comparisons compile to a few word compares, not a call.
template <size_t I>
bool LabelAt(const char* p, const char* end, const char*& value) {
  constexpr std::string_view kLabel = kMegatronLabels[I].text;
  if (static_cast<size_t>(end - p) <= kLabel.size() ||
      std::memcmp(p, kLabel.data(), kLabel.size()) != 0) {
    return false;
  }
  const char* q = p + kLabel.size();
  while (IsLogSpace(*q)) ++q;  // stops at the line's last '|' at the latest
  if (*q != ':') return false;
  value = q + 1;
  return true;
}

// The field of the label that starts at p (not a space), or kNone; the first byte selects the
// labels to compare.
template <size_t... I>
MegatronField MatchLabel(const char* p, const char* end, const char*& value,
                         std::index_sequence<I...>) {
  MegatronField field = MegatronField::kNone;
  static_cast<void>(((kMegatronLabels[I].text[0] == *p && LabelAt<I>(p, end, value) &&
                      (field = kMegatronLabels[I].field, true)) ||
                     ...));
  return field;
}

MegatronField MatchLabel(const char* p, const char* end, const char*& value) {
  return MatchLabel(p, end, value, std::make_index_sequence<kMegatronLabels.size()>());
}

// LeadingInt (core/text_scan.h) in place: spaces, an optional '-', 1 to 18 digits. The text
// holds a '|' further on, which ends every loop here.
const char* ScanInt(const char* p, int64_t& value) {
  while (*p == ' ') ++p;
  const bool negative = *p == '-';
  if (negative) ++p;
  const char* digits = p;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + static_cast<uint64_t>(*p - '0');
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
  const char* text;  // not a string_view: its constructor would zero the array on every line
  size_t size;
};

constexpr size_t kMaxValues = 32;  // more read labels on one line: not a line we know

}  // namespace

std::optional<bool> ParseMegatronLineFast(std::string_view text, StepRecord& r) {
  // The label scan's cheap rejection, unchanged: it is the answer for most non-step lines.
  const size_t it = FindLiteral(text.substr(0, 64 + 10), "iteration ");
  if (it == std::string_view::npos) return false;
  // Only segments that end with '|' are read, so the scan stops at the last '|'. That byte is
  // no space, digit, sign, '.', 'e', '/' or ':', so it ends every loop below: they need no end
  // checks. A line whose last '|' comes before its step counter is left to the label scan.
  const size_t last_bar = text.rfind('|');
  if (last_bar == std::string_view::npos || last_bar < it + 10) return std::nullopt;
  const char* const end = text.data() + last_bar + 1;
  int64_t step = 0, total = 0;
  const char* p = ScanInt(text.data() + it + 10, step);
  if (p == nullptr || step < 0) return std::nullopt;
  while (*p == ' ') ++p;
  if (*p != '/') return std::nullopt;
  p = ScanInt(p + 1, total);
  if (p == nullptr) return std::nullopt;

  // The record must stay untouched unless the line proves to be ours, which the step-time label
  // settles: values before it wait in `early` (in practice none: it comes second), the header
  // and they are written when it is seen, and every value after it goes straight to the record.
  // The order of writes is the label scan's: header, then each value left to right.
  std::array<Value, kMaxValues> early;
  size_t early_count = 0;
  bool ours = false;
  std::optional<double> seqlen;
  auto apply = [&](const Value& value) {
    if (value.is_number) {
      SetMegatronNumber(value.field, value.number, r, seqlen);
    } else {
      ApplyMegatronField(value.field, std::string_view(value.text, value.size), r, seqlen);
    }
  };
  // Each segment ends with '|'; text after the last '|' is a cut segment, ignored.
  while (p < end) {
    while (IsLogSpace(*p)) ++p;
    const char* v = nullptr;
    const MegatronField field = MatchLabel(p, end, v);
    if (field == MegatronField::kNone) {
      const void* bar = std::memchr(p, '|', static_cast<size_t>(end - p));
      if (bar == nullptr) break;
      p = static_cast<const char*>(bar) + 1;
      continue;
    }
    if (field == MegatronField::kStepTimeMs && !ours) {
      ours = true;
      r.step = step;
      r.total_steps = total;
      r.format = LogFormat::kMegatron;
      if (it > 0) {
        if (auto t = FindLeadingTimestamp(text.substr(0, it))) r.timestamp_s = *t;
      }
      for (size_t i = 0; i < early_count; ++i) apply(early[i]);
    }
    if (!ours && early_count == kMaxValues) return std::nullopt;
    Value value;
    value.field = field;
    while (IsLogSpace(*v)) ++v;
    if (IsNumericField(field)) {
      // ParseLogNumber's common case: [+-] plain decimal, then only spaces up to the '|'.
      const char* q = v;
      const bool negative = *q == '-';
      if (*q == '-' || *q == '+') ++q;
      double number = 0;
      q = ScanPlainDecimalBeforeStop(q, number);
      if (q != nullptr) {
        while (IsLogSpace(*q)) ++q;
        if (*q == '|') {
          number = negative ? -number : number;
          if (ours) {
            SetMegatronNumber(field, number, r, seqlen);
          } else {
            value.is_number = true;
            value.number = number;
            early[early_count++] = value;
          }
          p = q + 1;
          continue;
        }
      }
    }
    const void* bar = std::memchr(v, '|', static_cast<size_t>(end - v));
    if (bar == nullptr) break;
    const char* b = static_cast<const char*>(bar);
    const std::string_view trimmed = TrimLogSpace(std::string_view(v, static_cast<size_t>(b - v)));
    value.is_number = false;
    value.text = trimmed.data();
    value.size = trimmed.size();
    if (ours) {
      apply(value);
    } else {
      early[early_count++] = value;
    }
    p = b + 1;
  }
  // The label scan reads only lines that say "elapsed time per iteration" after "iteration ";
  // a line without that label is left to it (NeMo's "iteration N/M |" lines, odd variants).
  if (!ours) return std::nullopt;
  if (seqlen && r.global_batch) r.tokens = *seqlen * *r.global_batch;
  return true;
}

}  // namespace strata
