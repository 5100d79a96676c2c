// Megatron-LM training_log lines (and ms-swift's patched copy), megatron's memory report, and
// NeMo 2's "Training epoch E, iteration N/M | ..." lines, which share the "label: value |" form.
// Labels are matched by name, never by position: every version adds, drops or reorders them.
#include "strata/core/timestamp.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/megatron_fields.h"

namespace strata {

namespace {

// "   12/  250000" at text[pos...]: fills step and total; returns the offset past them.
std::optional<size_t> StepOverTotal(std::string_view text, size_t pos, StepRecord& r) {
  size_t used = 0;
  auto step = LeadingInt(text.substr(pos), &used);
  if (!step || *step < 0) return std::nullopt;
  pos += used;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos >= text.size() || text[pos] != '/') return std::nullopt;
  ++pos;
  auto total = LeadingInt(text.substr(pos), &used);
  if (!total) return std::nullopt;
  r.step = *step;
  r.total_steps = *total;
  return pos + used;
}

}  // namespace

MegatronField MegatronFieldOf(std::string_view label) {
  if (label.empty()) return MegatronField::kNone;
  for (const MegatronLabel& l : kMegatronLabels) {
    if (l.text[0] == label[0] && l.text == label) return l.field;
  }
  return MegatronField::kNone;
}

void ApplyMegatronField(MegatronField f, std::string_view value, StepRecord& r,
                        std::optional<double>& seqlen) {
  switch (f) {
    case MegatronField::kNone:
      return;
    case MegatronField::kElapsed:  // ms-swift: "20m 3s"
      if (auto s = ParseDurationSeconds(value)) r.elapsed_s = *s;
      r.format = LogFormat::kMsSwiftMegatron;
      return;
    case MegatronField::kRemaining:
      r.format = LogFormat::kMsSwiftMegatron;
      return;
    default:
      if (auto v = ParseLogNumber(value)) SetMegatronNumber(f, *v, r, seqlen);
      if (f == MegatronField::kMemoryGib) r.format = LogFormat::kMsSwiftMegatron;
      return;
  }
}

bool ParseMegatronLineByLabels(std::string_view text, StepRecord& r) {
  // Only the first 64 + 10 bytes can hold "iteration " at an offset <= 64.
  const size_t it = FindLiteral(text.substr(0, 64 + 10), "iteration ");
  if (it == std::string_view::npos) return false;
  if (FindLiteral(text, "elapsed time per iteration", it) == std::string_view::npos) return false;
  auto after = StepOverTotal(text, it + 10, r);
  if (!after) return false;
  r.format = LogFormat::kMegatron;
  if (it > 0) {
    if (auto t = FindLeadingTimestamp(text.substr(0, it))) r.timestamp_s = *t;
  }
  // Every segment ends with '|'. A line that does not was cut (a truncated log): its last
  // segment may hold half a number ("lm loss: 2"), so it is dropped.
  std::string_view fields = TrimSpace(text.substr(*after));
  if (!fields.empty() && fields.back() != '|') {
    const size_t bar = fields.rfind('|');
    fields = bar == std::string_view::npos ? std::string_view() : fields.substr(0, bar);
  }
  std::optional<double> seqlen;
  ForEachLabelled(fields, '|', [&](std::string_view label, std::string_view value) {
    ApplyMegatronField(MegatronFieldOf(label), value, r, seqlen);
  });
  if (seqlen && r.global_batch) r.tokens = *seqlen * *r.global_batch;
  return true;
}

bool ParseMegatronLine(std::string_view text, StepRecord& r) {
  // The hot path of a multi-GB log: one pass for the lines it knows, the label scan for the rest.
  if (auto fast = ParseMegatronLineFast(text, r)) return *fast;
  return ParseMegatronLineByLabels(text, r);
}

bool ParseMegatronMemoryLine(std::string_view text, StepRecord& r) {
  // "[Rank 1] (after 1 iterations) memory (MB) | allocated: ... | max reserved: 61480.0"
  const size_t mem = text.find("memory (MB)");
  if (mem == std::string_view::npos) return false;
  const size_t after = text.find("(after ");
  if (after == std::string_view::npos || after > mem) return false;
  auto step = LeadingInt(text.substr(after + 7));
  if (!step) return false;
  std::optional<double> max_reserved, max_allocated;
  ForEachLabelled(text.substr(mem + 11), '|', [&](std::string_view label, std::string_view value) {
    if (label == "max reserved") SetLogNumber(max_reserved, value);
    if (label == "max allocated") SetLogNumber(max_allocated, value);
  });
  auto mb = max_reserved ? max_reserved : max_allocated;
  if (!mb) return false;
  r.format = LogFormat::kMegatron;
  r.step = *step;
  r.memory_gib = *mb / 1024.0;  // megatron's "MB" is MiB (bytes / 2^20)
  return true;
}

bool ParseNemoLine(std::string_view text, StepRecord& r) {
  // NeMo 2 / bionemo: "Training epoch 0, iteration 120/149 | lr: 3e-05 | ... |
  // reduced_train_loss: 1.233 | train_step_timing in s: 0.03146"
  const size_t te = text.find("Training epoch ");
  if (te == std::string_view::npos) return false;
  // A line that quotes one ("# e.g. 'Training epoch 0, ...'": a comment, a docstring, a shell
  // echo of an example) is not a step the run took; NeMo's own prefix (a timestamp, a rank tag)
  // has neither a '#' nor a quote.
  if (text.substr(0, te).find_first_of("#'\"") != std::string_view::npos) return false;
  const size_t it = text.find("iteration ", te);
  if (it == std::string_view::npos) return false;
  auto after = StepOverTotal(text, it + 10, r);
  if (!after) return false;
  r.format = LogFormat::kNemo;
  if (auto t = FindLeadingTimestamp(text.substr(0, te))) r.timestamp_s = *t;
  ForEachLabelled(text.substr(*after), '|', [&](std::string_view label, std::string_view value) {
    if (label == "lr") SetLogNumber(r.learning_rate, value);
    if (label == "global_batch_size") SetLogNumber(r.global_batch, value);
    if (label == "reduced_train_loss") SetLogNumber(r.loss, value);
    if (label == "train_step_timing in s") SetLogNumber(r.step_time_s, value);
    if (label == "grad_norm") SetLogNumber(r.grad_norm, value);
    if (label == "global_step") {
      if (auto v = ParseLogNumber(value)) {
        if (auto step = StepFromNumber(*v)) r.step = *step;
      }
    }
  });
  return true;
}

// The Lightning progress bar NeMo 1 prints:
// "Epoch 0:   1%|  | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=,
//  reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]"
bool ParseLightningBar(std::string_view text, StepRecord& r) {
  const size_t gs = text.find("global_step=");
  if (gs == std::string_view::npos || text.find("Epoch ") == std::string_view::npos) return false;
  const size_t bracket = text.rfind('[', gs);
  if (bracket == std::string_view::npos) return false;
  // "795/77225 [" before the bracket gives the total.
  size_t slash = text.rfind('/', bracket);
  if (slash != std::string_view::npos) {
    size_t used = 0;
    if (auto total = LeadingInt(text.substr(slash + 1), &used)) r.total_steps = *total;
  }
  std::string_view body = text.substr(bracket + 1);
  if (!body.empty() && body.back() == ']') body.remove_suffix(1);
  bool have_step = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find(',', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view part = TrimSpace(body.substr(pos, end - pos));
    pos = end + 1;
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      // "41.36s/it" or "2.83it/s"
      if (part.size() > 4 && part.substr(part.size() - 4) == "s/it") {
        SetLogNumber(r.step_time_s, part.substr(0, part.size() - 4));
      } else if (part.size() > 4 && part.substr(part.size() - 4) == "it/s") {
        if (auto v = ParseLogNumber(part.substr(0, part.size() - 4)); v && *v > 0) {
          r.step_time_s = 1.0 / *v;
        }
      }
      continue;
    }
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "reduced_train_loss" || (key == "loss" && !r.loss)) SetLogNumber(r.loss, value);
    if (key == "global_step") {
      if (auto v = ParseLogNumber(value)) {
        if (auto step = StepFromNumber(*v)) r.step = *step, have_step = true;
      }
    }
    if (key == "lr") SetLogNumber(r.learning_rate, value);
    if (key == "train_step_timing in s") SetLogNumber(r.step_time_s, value);
  }
  if (!have_step) return false;
  r.format = LogFormat::kNemo;
  return true;
}

}  // namespace strata
