#include "strata/rl/openrlhf_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "strata/core/text_scan.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/openrlhf_status_line.h"
#include "strata/logs/wrapped_record.h"

namespace strata {
namespace {

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
    const size_t end = PythonValueEnd(dict, colon + 1);
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
    if (FindOpenRlhfDict(text.substr(pos, end - pos), step) != std::string_view::npos) return true;
    pos = end + 1;
  }
  return false;
}

Result<OpenRlhfLog> ParseOpenRlhfLog(std::string_view text) {
  OpenRlhfLog log;
  // Every status dict in `record` (two lines glued by a paste hold two), read from its '{' to the
  // brace that closes it, or to the end when it is cut off.
  auto read = [&](std::string_view record, int64_t line) {
    int64_t step = 0;
    size_t brace = FindOpenRlhfDict(record, step);
    while (brace != std::string_view::npos) {
      const size_t close = OpenRlhfDictClose(record, brace);
      const bool closed = close != std::string_view::npos;
      ReadDict(record.substr(brace, closed ? close - brace + 1 : std::string_view::npos), step,
               line, closed, log);
      brace = closed ? FindOpenRlhfDict(record, step, close + 1) : std::string_view::npos;
    }
  };
  WrappedRecordJoiner joiner;
  std::vector<WrappedRecord> joined;
  auto read_joined = [&] {
    for (const WrappedRecord& r : joined) {
      if (r.kind == WrappedKind::kOpenRlhfStatus) read(r.text, r.line);
    }
    joined.clear();
  };
  size_t pos = 0;
  int64_t line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const PrefixedLine prefixed = StripLauncherPrefix(raw);
    const bool taken = joiner.Feed(raw, prefixed.text, prefixed.rank, line, joined);
    read_joined();
    if (!taken) read(prefixed.text, line);
  }
  joiner.Finish(joined);
  read_joined();
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
