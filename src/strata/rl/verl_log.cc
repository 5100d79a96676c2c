#include "strata/rl/verl_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/wrapped_record.h"

namespace strata {
namespace {

std::optional<double>* Field(VerlStepMetrics& m, std::string_view key) {
  if (key == "timing_s/gen") return &m.gen_s;
  if (key == "timing_s/update_weights") return &m.update_weights_s;
  if (key == "timing_s/old_log_prob") return &m.old_log_prob_s;
  if (key == "timing_s/ref") return &m.ref_s;
  if (key == "timing_s/update_actor") return &m.update_actor_s;
  if (key == "timing_s/values") return &m.values_s;
  if (key == "timing_s/update_critic") return &m.update_critic_s;
  if (key == "timing_s/step") return &m.step_s;
  if (key == "timing_s/testing") return &m.testing_s;
  if (key == "timing_s/save_checkpoint") return &m.save_checkpoint_s;
  if (key == "perf/throughput") return &m.throughput_tokens_per_s_per_gpu;
  if (key == "perf/total_num_tokens") return &m.total_num_tokens;
  if (key == "prompt_length/mean") return &m.prompt_mean_tokens;
  if (key == "response_length/mean") return &m.response_mean_tokens;
  if (key == "response_length/max") return &m.response_max_tokens;
  if (key == "response_length/clip_ratio") return &m.response_clip_ratio;
  return nullptr;
}

// One joined metrics record: "step:N - key:value - ...". Keys strata does not compare are
// skipped (verl prints a hundred); a field cut off or a value that is no number is noted.
bool ReadRecord(const std::string& text, int64_t line, VerlLog& log) {
  VerlStepMetrics m;
  m.line = line;
  bool trained = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(" - ", pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view part = TrimSpace(std::string_view(text).substr(pos, end - pos));
    const bool last = end == text.size();
    pos = end + 3;
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos || colon + 1 == part.size()) {
      if (!part.empty() && part != "-") {
        log.notes.push_back(fmt::format("line {}: '{}' has no value{}", line, part,
                                        last ? " (the line is cut off there)" : ""));
      }
      continue;
    }
    const std::string_view key = part.substr(0, colon);
    const std::string_view value = part.substr(colon + 1);
    if (key == "step") {
      if (auto s = ParseInt64(value)) m.step = *s;
      continue;
    }
    std::optional<double>* field = Field(m, key);
    if (!field) continue;
    if (key == "timing_s/step" || key == "timing_s/update_actor") trained = true;
    SetLogNumber(*field, value);
    if (!field->has_value()) {
      log.notes.push_back(fmt::format("line {}: {}: '{}' is not a number", line, key, value));
    }
  }
  // step:0 carries validation metrics only.
  if (!trained) return false;
  log.steps.push_back(m);
  return true;
}

// "verl version 0.7.1", "verl==0.7.1", "verl version: 0.7.1".
std::optional<VerlVersion> FindVersion(std::string_view text) {
  for (std::string_view mark : {"verl==", "verl version: ", "verl version "}) {
    const size_t at = text.find(mark);
    if (at == std::string_view::npos) continue;
    std::string_view rest = text.substr(at + mark.size());
    size_t n = 0;
    while (n < rest.size() && ((rest[n] >= '0' && rest[n] <= '9') || rest[n] == '.')) ++n;
    if (auto v = ParseVerlVersion(rest.substr(0, n))) return v;
  }
  return std::nullopt;
}

std::string OtherFramework(std::string_view text) {
  std::vector<ParsedLine> parsed;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    parsed.clear();
    ParseLogLine(StripLauncherPrefix(text.substr(pos, end - pos)).text, parsed);
    for (const ParsedLine& p : parsed) {
      if (p.kind == LineKind::kStep && p.record.format != LogFormat::kUnknown) {
        return std::string(LogFormatName(p.record.format));
      }
    }
    pos = end + 1;
  }
  return "";
}

struct Mean {
  double sum = 0;
  int64_t n = 0;
  void Add(const std::optional<double>& v) {
    if (v) sum += *v, ++n;
  }
  std::optional<double> Value() const {
    return n > 0 ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
  }
};

// The log's samples per step, read back from its tokens: perf/total_num_tokens is every prompt
// and response token of the step's batch (verl's compute_data_metrics), so the batch holds
// total / (prompt mean + response mean) samples. "" when it is the job's (or cannot be told).
std::string BatchMismatch(const RlSpec& spec, std::optional<double> total_tokens,
                          std::optional<double> prompt_mean, std::optional<double> response_mean) {
  if (!total_tokens || !prompt_mean || !response_mean) return "";
  const double sample_tokens = *prompt_mean + *response_mean;
  if (sample_tokens <= 0 || *total_tokens <= 0) return "";
  const double log_samples = *total_tokens / sample_tokens;
  const auto job_samples = static_cast<double>(spec.samples());
  if (std::fabs(log_samples / job_samples - 1) <= kVerlBatchTolerance) return "";
  const double job_sample_tokens = spec.lengths.prompt_mean + spec.lengths.response_mean;
  return fmt::format(
      "the log's batch is not the job's: perf/total_num_tokens {} tokens a step / (prompt_length/"
      "mean {} + response_length/mean {} = {} tokens a sample) = ~{} samples a step, where the "
      "job prices {} samples ({} prompts x {} samples_per_prompt) x {} tokens "
      "= {} tokens ({:.2f} x the log's samples). The timers and the throughput are shown beside "
      "strata's but with no error: a step's phases do not scale with the batch by one factor. To "
      "compare, give the RL job the log's batch (batch.prompts, batch.samples_per_prompt) and "
      "lengths",
      GroupDigits(*total_tokens), GroupDigits(*prompt_mean, 1), GroupDigits(*response_mean, 1),
      GroupDigits(sample_tokens, 1), GroupDigits(log_samples), GroupDigits(job_samples),
      spec.prompts, spec.samples_per_prompt, GroupDigits(job_sample_tokens),
      GroupDigits(job_samples * job_sample_tokens), job_samples / log_samples);
}

}  // namespace

bool VerlVersion::SeparatesSync() const {
  return major > 0 || minor > 7 || (minor == 7 && patch >= 1);
}

std::string VerlVersion::Format() const { return fmt::format("{}.{}.{}", major, minor, patch); }

std::optional<VerlVersion> ParseVerlVersion(std::string_view text) {
  VerlVersion v;
  int64_t* parts[] = {&v.major, &v.minor, &v.patch};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc() || *parts[i] < 0) return std::nullopt;
    p = next;
    if (p == end) return i >= 1 ? std::optional<VerlVersion>(v) : std::nullopt;
    if (*p != '.' || i == 2) return std::nullopt;
    ++p;
  }
  return std::nullopt;
}

Result<VerlLog> ParseVerlLog(std::string_view text) {
  VerlLog log;
  bool any_metrics_line = false;
  WrappedRecordJoiner joiner;
  std::vector<WrappedRecord> joined;
  auto read_joined = [&] {
    for (const WrappedRecord& r : joined) {
      if (r.kind != WrappedKind::kVerlMetrics) continue;
      any_metrics_line = true;
      ReadRecord(r.text, r.line, log);
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
    if (!log.version) log.version = FindVersion(prefixed.text);
    joiner.Feed(raw, prefixed.text, prefixed.rank, line, joined);
    read_joined();
  }
  joiner.Finish(joined);
  read_joined();
  if (!any_metrics_line) {
    const std::string other = OtherFramework(text);
    Error e = InvalidInput(
        other.empty() ? "no verl metrics line (\"step:N - key:value - ...\") in the log"
                      : fmt::format("this is a {} log, not verl's console log (no \"step:N - "
                                    "key:value - ...\" line)",
                                    other));
    e.hint = other.empty() ? "--log reads verl's console output (trainer.logger=console) and "
                             "OpenRLHF's (\"Global step N: {...}\")"
                           : "`strata logs` reads it";
    return e;
  }
  if (log.steps.empty()) {
    Error e = InvalidInput(
        "verl's log holds no training step: its metrics lines carry neither "
        "timing_s/step nor timing_s/update_actor (step:0 is validation)");
    return e;
  }
  return log;
}

double PredictedVerlThroughput(const RlSpec& spec, Seconds step, int64_t gpus) {
  const double tokens =
      static_cast<double>(spec.samples()) * (spec.lengths.prompt_mean + spec.lengths.response_mean);
  return tokens / step.s() / static_cast<double>(gpus);
}

VerlComparison CompareVerlLog(const RlEvaluation& e, const VerlLog& log,
                              std::optional<VerlVersion> version_flag) {
  VerlComparison c;
  Mean gen, sync, old_lp, ref, values, update, update_critic, step, throughput, resp_mean, resp_max,
      resp_clip, total_tokens, prompt_mean;
  bool prints_sync = false;
  // A step that validated or saved a checkpoint is left out of the step and the throughput (verl
  // <= 0.5.x times both inside timing_s/step): its mean is reported apart. A log of nothing else
  // keeps them all.
  const auto others =
      std::count_if(log.steps.begin(), log.steps.end(),
                    [](const VerlStepMetrics& m) { return !m.validated_or_saved(); });
  Mean validation_step;
  for (const VerlStepMetrics& m : log.steps) {
    const bool apart = others > 0 && m.validated_or_saved();
    if (apart) {
      validation_step.Add(m.step_s);
      ++c.validation_steps;
    }
    gen.Add(m.gen_s);
    sync.Add(m.update_weights_s);
    old_lp.Add(m.old_log_prob_s);
    ref.Add(m.ref_s);
    update.Add(m.update_actor_s);
    values.Add(m.values_s);
    update_critic.Add(m.update_critic_s);
    if (!apart) {
      step.Add(m.step_s);
      throughput.Add(m.throughput_tokens_per_s_per_gpu);
    }
    resp_mean.Add(m.response_mean_tokens);
    resp_max.Add(m.response_max_tokens);
    resp_clip.Add(m.response_clip_ratio);
    total_tokens.Add(m.total_num_tokens);
    prompt_mean.Add(m.prompt_mean_tokens);
    prints_sync = prints_sync || m.update_weights_s.has_value();
  }
  c.validation_step_mean_s = validation_step.Value();
  c.prompt_mean_tokens = prompt_mean.Value();
  c.response_mean_tokens = resp_mean.Value();
  c.steps = static_cast<int64_t>(log.steps.size());
  c.first_step = log.steps.empty() ? 0 : log.steps.front().step;
  c.last_step = log.steps.empty() ? 0 : log.steps.back().step;
  // verl prints timing_s/update_weights only from 0.7.1, where the sync left timing_s/gen: a log
  // that prints it timed the sync apart, whatever its version line says (a development build
  // carries the last release's number). The flag is the user's word and wins, but the sync
  // the log printed is then said to be left out, not dropped in silence.
  if (version_flag) {
    c.semantics = version_flag->SeparatesSync() ? VerlGenSemantics::kSeparateSync
                                                : VerlGenSemantics::kIncludesSync;
    c.semantics_source = "--verl-version " + version_flag->Format();
    if (prints_sync && !version_flag->SeparatesSync()) {
      c.semantics_source += fmt::format(
          "; the log prints timing_s/update_weights (mean {:.1f} s), which verl prints from 0.7.1 "
          "with the sync apart from timing_s/gen: not compared under this version",
          sync.Value().value_or(0));
    }
  } else if (log.version && !(prints_sync && !log.version->SeparatesSync())) {
    c.semantics = log.version->SeparatesSync() ? VerlGenSemantics::kSeparateSync
                                               : VerlGenSemantics::kIncludesSync;
    c.semantics_source = "the log's verl version " + log.version->Format();
  } else if (log.version) {
    c.semantics = VerlGenSemantics::kSeparateSync;
    c.semantics_source = fmt::format(
        "the log prints timing_s/update_weights, which verl prints from 0.7.1 with the sync apart "
        "from timing_s/gen, though its version line says {}: read as 0.7.1's timers (set "
        "--verl-version to read it otherwise)",
        log.version->Format());
  } else if (prints_sync) {
    c.semantics = VerlGenSemantics::kSeparateSync;
    c.semantics_source = "no version in the log; it prints timing_s/update_weights (verl >= 0.7.1)";
  } else {
    c.semantics = VerlGenSemantics::kIncludesSync;
    c.semantics_source =
        "no version in the log and no timing_s/update_weights: verl <= 0.7.0 assumed";
  }

  const RlPlacementResult& p = e.configured;
  const RlTimes& t = p.times;
  const int64_t gpus =
      p.placement == RlPlacement::kColocated ? e.actor.world() : p.rollout_gpus + p.train_gpus;
  auto row = [&](std::string key, std::string unit, const Mean& m, double predicted,
                 std::string from) {
    VerlPhaseRow r;
    r.key = std::move(key);
    r.unit = std::move(unit);
    r.measured = m.Value();
    r.measured_steps = m.n;
    r.predicted = predicted;
    r.predicted_from = std::move(from);
    if (r.measured && *r.measured > 0) r.error = predicted / *r.measured - 1;
    c.rows.push_back(std::move(r));
  };
  if (c.semantics == VerlGenSemantics::kIncludesSync) {
    row("timing_s/gen", "s", gen, t.generation.s() + t.weight_sync.s(), "generation + weight sync");
  } else {
    row("timing_s/gen", "s", gen, t.generation.s(), "generation");
    row("timing_s/update_weights", "s", sync, t.weight_sync.s(), "weight sync");
  }
  row("timing_s/old_log_prob", "s", old_lp, t.old_log_prob.s(), "old log-prob");
  if (e.spec.reference_model || ref.n > 0) {
    row("timing_s/ref", "s", ref, t.reference.s(),
        e.spec.reference_model ? "reference" : "reference (the RL job has none)");
  }
  const bool ppo = e.spec.algorithm == RlAlgorithm::kPpo;
  if (ppo || values.n > 0) {
    row("timing_s/values", "s", values, t.critic_values.s(),
        ppo ? "critic values" : "critic values (the RL job is GRPO: no critic)");
  }
  row("timing_s/update_actor", "s", update, t.update.s(), "actor update");
  if (ppo || update_critic.n > 0) {
    row("timing_s/update_critic", "s", update_critic, t.critic_update.s(),
        ppo ? "critic update" : "critic update (the RL job is GRPO: no critic)");
  }
  row("timing_s/step", "s", step, t.step.s(), "step");
  row("perf/throughput", "tokens/s/GPU", throughput, PredictedVerlThroughput(e.spec, t.step, gpus),
      fmt::format("samples x (prompt + response mean) / step / {} GPUs", gpus));
  row("response_length/mean", "tokens", resp_mean, e.spec.lengths.response_mean,
      "lengths.response_mean (the RL job's assumption)");
  row("response_length/max", "tokens", resp_max, e.spec.lengths.response_max,
      "lengths.response_max (the RL job's assumption)");
  if (resp_clip.n > 0) {
    const ResponseDistribution d = e.spec.lengths.Responses();
    row("response_length/clip_ratio", "fraction", resp_clip, d.ClipFraction(),
        fmt::format("the {} distribution's share at response_max", ResponseShapeName(d.shape)));
  }
  c.batch_mismatch =
      BatchMismatch(e.spec, total_tokens.Value(), prompt_mean.Value(), resp_mean.Value());
  if (!c.batch_mismatch.empty()) {
    // A step's phases do not scale with the batch by one factor (generation is bound by the
    // sequences running at once, the passes over the batch by its tokens): no error is shown
    // rather than one that measures the batch, not strata.
    for (VerlPhaseRow& r : c.rows) {
      if (r.unit == "s" || r.unit == "tokens/s/GPU") r.error.reset();
    }
  }
  return c;
}

}  // namespace strata
