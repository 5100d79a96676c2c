// Dictionary lines: HF Trainer's str(logs) ("{'loss': 3.55, 'grad_norm': 1.41, ...}"), the
// ms-swift additions to it, logging.jsonl (the same keys as JSON), and OpenRLHF's status line
// ("Global step N: {'policy_loss': ..., 'timing/step_total': ...}",
// OpenRLHF/OpenRLHF@3c3be623:openrlhf/trainer/ppo_trainer.py; its per-phase timers are read by
// `strata rl --log`, src/strata/rl/openrlhf_log.cc). Python's repr is not
// JSON (single quotes, nan, inf, True), so one tolerant flat scanner reads both. A dictionary
// without its closing brace is refused: its last value may be cut short.
#include <cmath>
#include <cstdint>
#include <optional>

#include "strata/core/text_scan.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/openrlhf_status_line.h"

namespace strata {

namespace {

struct Scan {
  std::string_view s;
  size_t pos = 0;
  // A '\n' is there only where an OpenRLHF dict wrapped over lines was joined back
  // (wrapped_record.h).
  void SkipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n')) ++pos;
  }
  bool AtEnd() const { return pos >= s.size(); }
};

// A quoted string starting at scan.pos (which holds the quote); the view excludes the quotes.
std::optional<std::string_view> Quoted(Scan& sc) {
  const char q = sc.s[sc.pos];
  const size_t start = ++sc.pos;
  while (sc.pos < sc.s.size()) {
    if (sc.s[sc.pos] == '\\') {
      sc.pos += 2;
      continue;
    }
    if (sc.s[sc.pos] == q) return sc.s.substr(start, sc.pos++ - start);
    ++sc.pos;
  }
  return std::nullopt;
}

// Skips a nested [..] or {..} value, honouring quotes. False when it does not close.
bool SkipNested(Scan& sc) {
  int depth = 0;
  while (sc.pos < sc.s.size()) {
    const char c = sc.s[sc.pos];
    if (c == '\'' || c == '"') {
      if (!Quoted(sc)) return false;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (--depth == 0) {
        ++sc.pos;
        return true;
      }
    }
    ++sc.pos;
  }
  return false;
}

// "10/1450" -> step and total.
void StepFraction(std::string_view value, StepRecord& r, bool& have_step) {
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos) return;
  auto step = ParseInt64(value.substr(0, slash));
  auto total = ParseInt64(value.substr(slash + 1));
  if (!step || !total) return;
  r.step = *step;
  r.total_steps = *total;
  have_step = true;
}

// One dictionary starting at sc.pos ('{'). Returns false (and leaves sc.pos past what it read)
// when it is not a complete flat dictionary of training metrics. `openrlhf_step`: the dict follows
// "Global step N: ", OpenRLHF's status for that global step (policy_loss, actor_grad_norm,
// actor_lr), where a paste may elide keys with "..."; a dict there with none of those keys is
// read as any other. timing/step_total is not a step time here: it is the whole RL iteration,
// the rollout included (`strata rl --log` reads OpenRLHF's timers by phase).
bool OneDict(Scan& sc, ParsedLine& out, std::optional<int64_t> openrlhf_step) {
  ++sc.pos;  // '{'
  StepRecord& r = out.record;
  r.format = openrlhf_step ? LogFormat::kOpenRlhf : LogFormat::kDict;
  bool metric = false, have_step = false, finished = false, openrlhf_key = false;
  if (openrlhf_step) r.step = *openrlhf_step, have_step = true;
  for (;;) {
    sc.SkipSpace();
    if (sc.AtEnd()) return false;
    if (sc.s[sc.pos] == '}') {
      ++sc.pos;
      break;
    }
    if (openrlhf_step && sc.s.substr(sc.pos, 3) == "...") {
      sc.pos += 3;
      sc.SkipSpace();
      if (!sc.AtEnd() && sc.s[sc.pos] == ',') ++sc.pos;
      continue;
    }
    if (sc.s[sc.pos] != '\'' && sc.s[sc.pos] != '"') return false;
    auto key = Quoted(sc);
    if (!key) return false;
    sc.SkipSpace();
    if (sc.AtEnd() || sc.s[sc.pos] != ':') return false;
    ++sc.pos;
    sc.SkipSpace();
    if (sc.AtEnd()) return false;
    std::string_view value;
    bool is_string = false;
    const char c = sc.s[sc.pos];
    if (c == '\'' || c == '"') {
      auto v = Quoted(sc);
      if (!v) return false;
      value = *v;
      is_string = true;
    } else if (c == '[' || c == '{') {
      if (!SkipNested(sc)) return false;
    } else {
      const size_t start = sc.pos;
      int paren = 0;  // np.float64(1.0)
      while (sc.pos < sc.s.size()) {
        const char d = sc.s[sc.pos];
        if (d == '(') ++paren;
        if (d == ')') --paren;
        if (paren == 0 && (d == ',' || d == '}')) break;
        ++sc.pos;
      }
      if (sc.AtEnd()) return false;
      value = sc.s.substr(start, sc.pos - start);
    }
    sc.SkipSpace();
    if (!sc.AtEnd() && sc.s[sc.pos] == ',') ++sc.pos;

    auto number = [&]() -> std::optional<double> {
      return is_string ? std::nullopt : ParseLogNumber(value);
    };
    const std::string_view k = *key;
    if (openrlhf_step && (k == "policy_loss" || k == "actor_grad_norm" || k == "actor_lr")) {
      openrlhf_key = true;
      if (k == "policy_loss") {
        if (auto v = number()) r.loss = *v, metric = true;
      } else if (k == "actor_grad_norm") {
        if (auto v = number()) r.grad_norm = *v;
      } else if (auto v = number()) {
        r.learning_rate = *v;
      }
    } else if (k == "loss" || k == "lm loss") {
      if (auto v = number()) r.loss = *v, metric = true;
    } else if (k == "grad_norm") {
      if (auto v = number()) r.grad_norm = *v, metric = true;
    } else if (k == "learning_rate") {
      if (auto v = number()) r.learning_rate = *v;
    } else if (k == "global_step/max_steps" || k == "iteration") {
      if (is_string) StepFraction(value, r, have_step);
    } else if (k == "step" || k == "global_step") {
      if (auto v = number()) {
        if (auto step = StepFromNumber(*v)) r.step = *step, have_step = true;
      }
    } else if (k == "memory(GiB)") {
      if (auto v = number()) r.memory_gib = *v;
    } else if (k == "elapsed_time_per_iteration") {  // ms-swift v3 Megatron: this interval's
      if (auto v = number(); v && *v > 0) r.step_time_s = *v;
    } else if (k == "train_speed(s/it)") {
      // ms-swift v4: elapsed / (step - the resume step), an average since the process started
      // (swift/megatron/callbacks/print.py, swift/trainers/patcher.py): not this step's time.
      if (auto v = number(); v && *v > 0) {
        r.running_step_time_s = *v;
        r.running_origin = RunningOrigin::kResumeStep;
      }
    } else if (k == "train_speed(iter/s)") {
      // ms-swift v3: global_step / elapsed, iterations per second averaged since the start.
      if (auto v = number(); v && *v > 0) {
        r.running_step_time_s = 1.0 / *v;
        r.running_origin = RunningOrigin::kStepZero;
      }
    } else if (k == "elapsed_time") {
      if (is_string) {
        if (auto s = ParseDurationSeconds(value)) r.elapsed_s = *s;
      }
    } else if (k == "throughput") {  // ms-swift v3 logging.jsonl with --log_throughput
      if (auto v = number()) r.printed_tflops_per_gpu = *v;
    } else if (k == "num_input_tokens_seen") {
      if (auto v = number(); v && *v >= 0) r.tokens_seen = *v;
    } else if (k == "train_runtime") {
      // Beside 'loss' (transformers logs it on every step line with num_input_tokens_seen):
      // seconds since training started. Beside train_loss only: the run's final summary.
      if (auto v = number(); v && *v >= 0) r.elapsed_s = *v;
      finished = true;
    }
  }
  if (openrlhf_step && !openrlhf_key) r.format = LogFormat::kDict;
  if (finished && !metric) {
    out.kind = LineKind::kFinished;
    return true;
  }
  if (!metric) return false;
  out.kind = LineKind::kStep;
  if (!have_step) r.step = -1;  // HF Trainer prints no step: the analyser numbers them
  return true;
}

}  // namespace

bool ParseDictLine(std::string_view text, std::vector<ParsedLine>& out) {
  bool any = false;
  size_t from = 0;
  for (;;) {
    const size_t brace = text.find('{', from);
    if (brace == std::string_view::npos || brace + 1 >= text.size()) break;
    const char next = text[brace + 1];
    if (next != '\'' && next != '"') {
      from = brace + 1;
      continue;
    }
    Scan sc{text, brace};
    ParsedLine parsed;
    if (OneDict(sc, parsed, OpenRlhfStepAt(text, brace))) {
      out.push_back(parsed);
      any = true;
    }
    from = std::max(sc.pos, brace + 1);
  }
  return any;
}

}  // namespace strata
