#include "strata/rl/openrlhf_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "strata/core/text_scan.h"
#include "strata/logs/log_scan.h"

namespace strata {
namespace {

constexpr std::string_view kMark = "Global step ";
// A dict wrapped over more lines or bytes than these is taken as cut off (OpenRLHF logs about 30
// keys, a few KiB); the bounds keep a log of unclosed braces from being rescanned without end.
constexpr size_t kMaxDictLines = 64;
constexpr size_t kMaxDictBytes = size_t{64} * 1024;

// Where "Global step N: {" starts its dict in `line` at or after `from` (the '{'), with the step;
// npos when the line holds none.
size_t DictStart(std::string_view line, int64_t& step, size_t from = 0) {
  size_t at = line.find(kMark, from);
  while (at != std::string_view::npos) {
    size_t i = at + kMark.size();
    const size_t digits = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    if (i > digits && line.substr(i, 2) == ": ") {
      const size_t brace = i + 2;
      if (brace < line.size() && line[brace] == '{') {
        if (auto s = ParseInt64(line.substr(digits, i - digits))) {
          step = *s;
          return brace;
        }
      }
    }
    at = line.find(kMark, at + 1);
  }
  return std::string_view::npos;
}

// The index just past the value that starts at `i` (a number, a word, a quoted string or a
// bracketed value), stopping at the dict's top-level ',' or '}'; with `whole_dict`, at the '}'
// that closes the dict only. s.size() when there is none.
size_t ValueEnd(std::string_view s, size_t i, bool whole_dict = false) {
  int depth = 0;
  char quote = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return i;
      --depth;
    } else if (c == ',' && depth == 0 && !whole_dict) {
      return i;
    }
  }
  return i;
}

std::optional<double>* Field(OpenRlhfStepMetrics& m, std::string_view key,
                             std::optional<double>& response_length) {
  if (key == "timing/generation") return &m.generation_s;
  if (key == "timing/make_experience") return &m.make_experience_s;
  if (key == "timing/ppo_train") return &m.ppo_train_s;
  if (key == "timing/broadcast") return &m.broadcast_s;
  if (key == "timing/step_total") return &m.step_total_s;
  if (key == "rollout/response_length_mean") return &m.response_mean_tokens;
  if (key == "response_length") return &response_length;  // the older key
  return nullptr;
}

// The dict's text from its '{' (the closing brace included when it was found).
void ReadDict(std::string_view dict, int64_t step, int64_t line, bool closed, OpenRlhfLog& log) {
  OpenRlhfStepMetrics m;
  m.step = step;
  m.line = line;
  std::optional<double> response_length;
  bool elided = false;
  size_t i = 1;  // past '{'
  while (i < dict.size()) {
    const char c = dict[i];
    if (c == ' ' || c == ',' || c == '\n' || c == '\t') {
      ++i;
      continue;
    }
    if (c == '}') break;
    if (dict.substr(i, 3) == "...") {
      elided = true;
      i += 3;
      continue;
    }
    auto stop = [&] {
      log.notes.push_back(fmt::format("line {}: step {}: the dict stops being read at '{}'", line,
                                      step, dict.substr(i, std::min<size_t>(20, dict.size() - i))));
    };
    if (c != '\'' && c != '"') {
      stop();
      break;
    }
    // The key up to its closing quote (a backslash escapes the next character, as in repr).
    size_t key_end = i + 1;
    while (key_end < dict.size() && dict[key_end] != c) {
      key_end += dict[key_end] == '\\' ? size_t{2} : size_t{1};
    }
    size_t colon = key_end + 1;
    while (colon < dict.size() && (dict[colon] == ' ' || dict[colon] == '\n')) ++colon;
    if (key_end >= dict.size() || colon >= dict.size() || dict[colon] != ':') {
      stop();
      break;
    }
    const std::string_view key = dict.substr(i + 1, key_end - i - 1);
    const size_t end = ValueEnd(dict, colon + 1);
    const std::string_view value = TrimSpace(dict.substr(colon + 1, end - colon - 1));
    i = end;
    // A dict cut off ends in a value that may be cut short ("92.5" printed as "9"): not read.
    if (end >= dict.size() && !closed) break;
    if (std::optional<double>* field = Field(m, key, response_length)) {
      SetLogNumber(*field, value);
      if (!field->has_value()) {
        log.notes.push_back(fmt::format("line {}: {}: '{}' is not a number", line, key, value));
      } else if (!std::isfinite(**field)) {
        field->reset();
        log.notes.push_back(
            fmt::format("line {}: {}: '{}' is not a finite number", line, key, value));
      }
    }
  }
  if (!m.response_mean_tokens) m.response_mean_tokens = response_length;
  if (elided) {
    log.notes.push_back(
        fmt::format("line {}: step {}: keys elided (\"...\") in the dict", line, step));
  }
  if (!closed) {
    log.notes.push_back(fmt::format(
        "line {}: step {}: the dict has no closing brace (cut off; its last value is not read)",
        line, step));
  }
  log.steps.push_back(m);
}

std::optional<double> MeanOf(const std::vector<OpenRlhfStepMetrics>& steps,
                             std::optional<double> OpenRlhfStepMetrics::*field, int64_t& n) {
  double sum = 0;
  n = 0;
  for (const OpenRlhfStepMetrics& m : steps) {
    if (const std::optional<double>& v = m.*field) sum += *v, ++n;
  }
  return n > 0 ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
}

}  // namespace

bool LooksLikeOpenRlhfLog(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    int64_t step = 0;
    if (DictStart(text.substr(pos, end - pos), step) != std::string_view::npos) return true;
    pos = end + 1;
  }
  return false;
}

Result<OpenRlhfLog> ParseOpenRlhfLog(std::string_view text) {
  OpenRlhfLog log;
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    lines.push_back(raw);
    pos = end + 1;
  }
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view body = StripLauncherPrefix(lines[n]).text;
    int64_t step = 0;
    size_t brace = DictStart(body, step);
    while (brace != std::string_view::npos) {
      // Join the dict's lines up to the brace that closes it.
      std::string dict(body.substr(brace));
      bool closed = ValueEnd(dict, 1, true) < dict.size();
      size_t next = n + 1;
      while (!closed && next < lines.size() && next - n < kMaxDictLines &&
             dict.size() < kMaxDictBytes) {
        int64_t other = 0;
        if (DictStart(lines[next], other) != std::string_view::npos) break;
        dict += '\n';
        dict += lines[next];
        closed = ValueEnd(dict, 1, true) < dict.size();
        ++next;
      }
      const size_t close = closed ? ValueEnd(dict, 1, true) : dict.size();
      dict.resize(std::min(dict.size(), close + 1));
      ReadDict(dict, step, static_cast<int64_t>(n) + 1, closed, log);
      if (next > n + 1) {
        n = next - 1;  // the dict took the lines after it
        break;
      }
      // Another status dict on the same line (two lines glued by a paste).
      brace = closed ? DictStart(body, step, brace + close + 1) : std::string_view::npos;
    }
  }
  if (log.steps.empty()) {
    Error e = InvalidInput("no OpenRLHF status line (\"Global step N: {...}\") in the log");
    e.hint =
        "--log reads OpenRLHF's console output of its PPO trainers (train_ppo_ray) or verl's "
        "console metrics";
    return e;
  }
  return log;
}

OpenRlhfComparison CompareOpenRlhfLog(const RlEvaluation& e, const OpenRlhfLog& log) {
  OpenRlhfComparison c;
  c.steps = static_cast<int64_t>(log.steps.size());
  c.first_step = log.steps.empty() ? 0 : log.steps.front().step;
  c.last_step = log.steps.empty() ? 0 : log.steps.back().step;
  const RlTimes& t = e.configured.times;
  const bool ppo = e.spec.algorithm == RlAlgorithm::kPpo;
  auto row = [&](std::string key, std::string unit,
                 std::optional<double> OpenRlhfStepMetrics::*field, double predicted,
                 std::string from) {
    VerlPhaseRow r;
    r.key = std::move(key);
    r.unit = std::move(unit);
    r.measured = MeanOf(log.steps, field, r.measured_steps);
    r.predicted = predicted;
    if (r.measured && *r.measured > 0) r.error = predicted / *r.measured - 1;
    r.predicted_from = std::move(from);
    c.rows.push_back(std::move(r));
  };
  row("timing/generation", "s", &OpenRlhfStepMetrics::generation_s, t.generation.s(), "generation");
  row("timing/make_experience", "s", &OpenRlhfStepMetrics::make_experience_s,
      t.old_log_prob.s() + t.reference.s() + t.critic_values.s(),
      ppo ? "old log-prob + reference + critic values (the reward model is not modelled)"
          : "old log-prob + reference (the reward model is not modelled)");
  row("timing/ppo_train", "s", &OpenRlhfStepMetrics::ppo_train_s,
      t.update.s() + t.critic_update.s(), ppo ? "actor update + critic update" : "actor update");
  row("timing/broadcast", "s", &OpenRlhfStepMetrics::broadcast_s, t.weight_sync.s(), "weight sync");
  row("timing/step_total", "s", &OpenRlhfStepMetrics::step_total_s, t.step.s(),
      "step (OpenRLHF: the sum of its timers, or the iteration's wall clock when asynchronous)");
  row("response length (mean)", "tokens", &OpenRlhfStepMetrics::response_mean_tokens,
      e.spec.lengths.response_mean, "lengths.response_mean (the RL job's assumption)");
  // experience_maker.py (_dispatch_forward) waits for each model's forward in turn only when the
  // models share GPUs (colocate_all, colocate_actor_ref, colocate_critic_reward); ppo_train runs
  // the actor's and the critic's fit one after the other only under ds.enable_sleep.
  c.caveats.push_back(
      "the sums assume OpenRLHF's models take turns on the GPUs (--train.colocate_all with "
      "sleep mode, as strata's colocated placement); with the actor, reference and critic on "
      "GPUs of their own, make_experience and ppo_train run them at once and measure nearer the "
      "longest of them");
  if (t.offload.s() > 0) {
    c.caveats.push_back(fmt::format(
        "strata's offload copies ({:.1f} s) are in its step only: OpenRLHF's sleep mode reloads "
        "and offloads the states inside its timers (ppo_train among them)",
        t.offload.s()));
  }
  return c;
}

}  // namespace strata
