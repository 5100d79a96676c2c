#include "strata/report/logs_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/core/strings.h"
#include "strata/core/table.h"
#include "strata/core/units.h"

namespace strata {

namespace {

std::string Cell(const std::optional<double>& v, const char* spec) {
  if (!v) return "-";
  if (!std::isfinite(*v)) return fmt::format("{}", *v);
  return fmt::format(fmt::runtime(spec), *v);
}

std::string CsvNum(const std::optional<double>& v) {
  if (!v) return "";
  if (!std::isfinite(*v)) return fmt::format("{}", *v);
  return fmt::format("{:.10g}", *v);
}

std::string Duration(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 10) return fmt::format("{:.3g} s", s);
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s >= 1e12)
    return fmt::format("{:.3g} s", s);  // a corrupt line's figure: llround would not fit
  const auto total = static_cast<int64_t>(std::llround(s));
  const int64_t d = total / 86400, h = total % 86400 / 3600, m = total % 3600 / 60;
  if (d > 0) return fmt::format("{}d {}h {}m", d, h, m);
  if (h > 0) return fmt::format("{}h {}m", h, m);
  return fmt::format("{}m {}s", m, total % 60);
}

// The tokens the log covers. A log printed every N steps has one line per N steps, each for the
// N steps ending at it, so the steps are counted from the first record to the last (the first
// record's own interval is before the span, as for the wall time); where the log prints its
// consumed samples (Megatron) their difference is the exact count of samples in that span.
std::string TokensLine(const RankSummary& r, const std::optional<LogJob>& job,
                       const std::string& who) {
  const int64_t span = r.steps_advanced;
  const std::string steps = fmt::format("{} step{} after step {}, to step {}", span,
                                        span == 1 ? "" : "s", r.first_step, r.last_step);
  if (!r.tokens.Mean() && !job.has_value()) return "";
  if (r.records < 2 || span <= 0) {
    return fmt::format("{}tokens: - (one step record: no span of steps to count)\n", who);
  }
  if (auto t = r.tokens.Mean()) {
    return fmt::format("{}tokens: {} (printed per step x {})\n", who,
                       GroupDigits(*t * static_cast<double>(span)), steps);
  }
  if (!job.has_value()) return "";
  if (r.numbered_records > 0) {
    return fmt::format(
        "{}tokens: - (the records print no step and no progress bar numbers them: the steps "
        "between two records, logging_steps, are unknown)\n",
        who);
  }
  const double mean = job->seq_mean_tokens;
  if (r.first_consumed_samples && r.last_consumed_samples &&
      r.last_consumed_step > r.first_consumed_step) {
    const double samples = *r.last_consumed_samples - *r.first_consumed_samples;
    return fmt::format(
        "{}tokens: ~{} ({} samples consumed after step {}, to step {} (the log's consumed "
        "samples {} -> {}) x mean length {}); ~{} since the run started\n",
        who, GroupDigits(samples * mean), GroupDigits(samples), r.first_consumed_step,
        r.last_consumed_step, GroupDigits(*r.first_consumed_samples),
        GroupDigits(*r.last_consumed_samples), GroupDigits(mean),
        GroupDigits(*r.last_consumed_samples * mean));
  }
  const double gbs = r.global_batch.Mean().value_or(job->global_batch);
  return fmt::format("{}tokens: ~{} ({} x global batch {} x mean length {})\n", who,
                     GroupDigits(gbs * mean * static_cast<double>(span)), steps, gbs,
                     GroupDigits(mean));
}

// The loss and grad-norm spike checks compare each value with the median of the values before
// it and need AnomalyThresholds::min_window of them: the first records of a log (the first 30
// steps of one printed every 10) are read but cannot be judged, which the report says.
std::string UnjudgedSpikes(const LogSummary& s) {
  std::string out;
  for (const RankSummary& r : s.ranks) {
    if (r.spike_unjudged_records == 0) continue;
    const std::string who =
        s.ranks.size() > 1 ? (r.rank < 0 ? " (no prefix)" : fmt::format(" (rank {})", r.rank)) : "";
    out += fmt::format(
        "  not judged for loss and grad-norm spikes{}: {} record{} up to step {} (a spike is "
        "judged against the median of at least {} earlier values)\n",
        who, r.spike_unjudged_records, r.spike_unjudged_records == 1 ? "" : "s",
        r.spike_unjudged_last_step, r.spike_window);
  }
  return out;
}

// The checks the log gave something to look at. A check with nothing to judge (no loss in any
// record: GPT-NeoX's lm_loss before it was read) is named as not made, never listed as passed.
struct ChecksMade {
  std::string made;
  std::string not_made;
};
ChecksMade Checks(const LogSummary& s) {
  int64_t loss = 0, grad = 0, memory = 0;
  for (const RankSummary& r : s.ranks) {
    loss += r.loss_records;
    grad += r.grad_norm_records;
    memory += r.memory_records;
  }
  ChecksMade c;
  c.made = "stalls > 3 x the median step, throughput -30%";
  if (loss > 0 && grad > 0) {
    c.made += ", loss and grad-norm spikes, nan/inf";
  } else if (loss > 0) {
    c.made += ", loss spikes, nan/inf loss";
  } else if (grad > 0) {
    c.made += ", grad-norm spikes, nan/inf grad norm";
  }
  c.made += ", skipped steps";
  if (memory > 0) c.made += ", memory creep";
  c.made += ", restarts, a hang at the end";
  std::vector<std::string> none;
  if (loss == 0)
    none.push_back(grad > 0 ? "no loss: loss spikes and a nan/inf loss"
                            : "no loss or grad norm: loss and grad-norm spikes, "
                              "nan/inf");
  if (loss > 0 && grad == 0) none.push_back("no grad norm: grad-norm spikes");
  if (memory == 0) none.push_back("no memory figure: memory creep");
  for (const auto& n : none) c.not_made += (c.not_made.empty() ? "" : "; ") + n;
  return c;
}

std::string Pct(double fraction) { return fmt::format("{:.2f}%", 100 * fraction); }

void AddRow(Table& table, const KeptStep& k, const std::optional<LogJob>& job, bool show_rank,
            bool rl) {
  const StepRecord& s = k.step;
  std::string step = std::to_string(s.step);
  if (show_rank) {
    step = k.rank >= 0 ? fmt::format("{} (rank {})", s.step, k.rank) : step + " (no prefix)";
  }
  std::vector<std::string> row = {step, Cell(s.loss, "{:.4f}"), Cell(s.grad_norm, "{:.3f}"),
                                  Cell(s.learning_rate, "{:.3e}"), Cell(s.step_time_s, "{:.4g}")};
  if (rl) row.push_back(Cell(s.rl_iteration_s, "{:.4g}"));
  for (std::string cell :
       {Cell(StepTokensPerGpu(s, job), "{:.1f}"), Cell(s.printed_tflops_per_gpu, "{:.1f}"),
        Cell(s.memory_gib, "{:.2f}"), std::to_string(s.line)}) {
    row.push_back(std::move(cell));
  }
  table.AddRow(row);
}

// The table's columns. An RL log's step time is the trainer's update (verl's
// timing_s/update_actor) and its printed throughput is over the whole RL iteration
// (timing_s/step), so each time column says which timer it is and the throughput column which
// of them it divides by, as `strata rl --log` names verl's timers ("actor update", "step").
std::vector<Column> StepColumns(bool rl, bool recomputed) {
  std::vector<Column> c = {{"step", Align::kRight}, {"loss"}, {"grad norm"}, {"learning rate"}};
  if (rl) {
    c.push_back({"actor update (s)"});
    c.push_back({"RL iteration (s)"});
    c.push_back({recomputed ? "tokens/s/GPU (over actor update)"
                            : "tokens/s/GPU (printed, over RL iteration)"});
  } else {
    c.push_back({"step time (s)"});
    c.push_back({recomputed ? "tokens/s/GPU" : "tokens/s/GPU (printed)"});
  }
  for (const char* name : {"TFLOP/s/GPU (printed)", "memory (GiB)", "line"}) c.push_back({name});
  return c;
}

std::string RenderMfu(const LogsText& in) {
  const LogMfu& m = *in.mfu;
  const LogJob& job = **in.job;
  std::string out =
      fmt::format("\nthroughput and MFU, recomputed (model {}, {} x {}, {} bf16 dense each):\n",
                  job.model.name, job.gpus, job.gpu_name, FormatTflops(job.peak_per_gpu));
  if (!job.source.empty()) out += "  job: " + job.source + "\n";
  if (!job.lengths_source.empty()) out += "  sequence lengths: " + job.lengths_source + "\n";
  out +=
      fmt::format("  tokens per step: {} ({})\n", GroupDigits(m.tokens_per_step), m.tokens_source);
  out += fmt::format("  step time: {:.2f} s ({})\n", m.step_time_s, m.step_time_source);
  out += fmt::format("  throughput: {:.2f} tokens/s per GPU ({} tokens/s for the job)\n",
                     m.tokens_per_s_per_gpu,
                     GroupDigits(m.tokens_per_s_per_gpu * static_cast<double>(job.gpus)));
  std::string mfus, hfus;
  for (const auto& p : m.report.points) {
    for (const auto& row : p.rows) {
      if (row.convention != FlopConvention::kMegatron) continue;
      mfus += fmt::format("{}{} at {} ({:.2f} GFLOP/token)", mfus.empty() ? "" : ", ", Pct(row.mfu),
                          p.label, row.training_per_token.gflop());
    }
    hfus += fmt::format("{}{} at {}", hfus.empty() ? "" : ", ", Pct(p.hfu), p.label);
  }
  out += fmt::format("  MFU (megatron convention, as strata mfu): {}\n", mfus);
  out += fmt::format("  HFU (with the job's recompute): {}\n", hfus);
  if (m.now_step_time_s && *m.now_step_time_s > 0) {
    // The same tokens per step over the present step time: throughput and MFU scale by
    // steady / present.
    const double scale = m.step_time_s / *m.now_step_time_s;
    std::string now;
    for (const auto& p : m.report.points) {
      for (const auto& row : p.rows) {
        if (row.convention != FlopConvention::kMegatron) continue;
        now += fmt::format("{}{} at {}", now.empty() ? "" : ", ", Pct(row.mfu * scale), p.label);
      }
    }
    out += fmt::format(
        "  now (since the slowdown at step {}, to the end of the log): step time {:.2f} s, "
        "throughput {:.2f} tokens/s per GPU, MFU {}\n",
        m.now_since_step, *m.now_step_time_s, m.tokens_per_s_per_gpu * scale, now);
  }
  if (in.explain) {
    out += fmt::format(
        "  how: tokens/s per GPU = tokens per step / step time / GPUs = {} / {:.2f} s / {} = "
        "{:.1f}\n",
        GroupDigits(m.tokens_per_step), m.step_time_s, job.gpus, m.tokens_per_s_per_gpu);
    for (const auto& p : m.report.points) {
      for (const auto& row : p.rows) {
        if (row.convention != FlopConvention::kMegatron) continue;
        out += fmt::format(
            "       MFU at {} = {:.1f} tokens/s x {:.2f} GFLOP/token / {} = {}\n"
            "         FLOP/token = {}\n",
            p.label, m.tokens_per_s_per_gpu, row.training_per_token.gflop(),
            FormatTflops(job.peak_per_gpu), Pct(row.mfu), row.formula);
      }
    }
    out += "       (docs/formulas.md, \"MFU and HFU\"; the same functions as `strata mfu`)\n";
  }
  if (m.printed.empty()) {
    out += "  the framework printed no throughput or MFU to compare with\n";
  } else {
    out += "  what the framework printed, beside ours:\n";
    for (const auto& p : m.printed) {
      const bool pct = p.quantity == "MFU";
      out += fmt::format("    {}: printed {}, ours {}: {}\n", p.quantity,
                         pct ? Pct(p.printed) : fmt::format("{:.4g}", p.printed),
                         pct ? Pct(p.ours) : fmt::format("{:.4g}", p.ours), p.reason);
    }
  }
  return out;
}

}  // namespace

std::optional<double> StepTokensPerGpu(const StepRecord& s, const std::optional<LogJob>& job) {
  // verl's perf/throughput divides by the RL iteration: with the job, the trainer's is ours.
  const bool over_iteration = s.rl_iteration_s.has_value() && job.has_value();
  if (s.printed_tokens_per_s_per_gpu && !over_iteration) return s.printed_tokens_per_s_per_gpu;
  if (!job || !s.step_time_s || *s.step_time_s <= 0 || job->gpus <= 0) return std::nullopt;
  double tokens = 0;
  if (s.tokens) {
    tokens = *s.tokens;
  } else {
    tokens = s.global_batch.value_or(job->global_batch) * job->seq_mean_tokens;
  }
  return tokens / *s.step_time_s / static_cast<double>(job->gpus);
}

std::string CsvHeader() {
  return "rank,step,line,format,loss,grad_norm,learning_rate,step_time_s,global_batch_samples,"
         "tokens,samples_per_s,tokens_per_s_per_gpu,printed_tflop_per_s_per_gpu,"
         "printed_mfu_fraction,memory_gib,skipped_iterations,nan_iterations,timestamp_s,"
         "elapsed_s,rl_iteration_s\n";
}

std::string CsvRow(int rank, const StepRecord& s, const std::optional<LogJob>& job) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                     rank < 0 ? "" : std::to_string(rank), s.step, s.line, LogFormatName(s.format),
                     CsvNum(s.loss), CsvNum(s.grad_norm), CsvNum(s.learning_rate),
                     CsvNum(s.step_time_s), CsvNum(s.global_batch), CsvNum(s.tokens),
                     CsvNum(s.samples_per_s), CsvNum(StepTokensPerGpu(s, job)),
                     CsvNum(s.printed_tflops_per_gpu), CsvNum(s.printed_mfu), CsvNum(s.memory_gib),
                     CsvNum(s.skipped_iterations), CsvNum(s.nan_iterations), CsvNum(s.timestamp_s),
                     CsvNum(s.elapsed_s), CsvNum(s.rl_iteration_s));
}

std::string FormatAnomaly(const Anomaly& a) {
  return fmt::format("line {}, step {}{}: {}: {}", a.line, a.step,
                     a.rank >= 0 ? fmt::format(" (rank {})", a.rank) : "", AnomalyKindName(a.kind),
                     a.message);
}

std::string RenderLogsText(const LogsText& in) {
  const LogSummary& s = *in.summary;
  std::string formats;
  for (auto f : s.formats) formats += (formats.empty() ? "" : ", ") + std::string(LogFormatName(f));
  std::string out = fmt::format("log: {}\n  {} lines read, {} recognised ({})\n", in.path,
                                GroupDigits(static_cast<double>(s.lines)),
                                GroupDigits(static_cast<double>(s.recognised_lines)), formats);
  if (s.duplicate_lines > 0) {
    out += fmt::format(
        "  {} lines repeated a step already seen (several ranks printing without "
        "a prefix); merged\n",
        s.duplicate_lines);
  }
  if (in.ends_mid_line)
    out += "  the last line has no newline: the log is cut or still being written\n";
  if (std::ranges::find(s.formats, LogFormat::kVerl) != s.formats.end()) {
    out +=
        "  verl: the step time is timing_s/update_actor, the actor's update, where the trainer's "
        "FLOP run; timing_s/step is the whole RL iteration (rollout generation, reward, log-prob "
        "passes, update, weight sync), shown apart as the RL iteration and not taken as a step\n";
  }
  if (in.long_lines > 0)
    out += fmt::format("  {} lines longer than 1 MiB were cut\n", in.long_lines);
  if (s.ranks.size() > 1) {
    out += "  split by rank prefix:";
    for (const auto& r : s.ranks) {
      out += fmt::format(" {} ({} steps)",
                         r.rank < 0 ? std::string("no prefix") : fmt::format("rank {}", r.rank),
                         r.records);
    }
    out += "\n";
  }

  const std::optional<LogJob> no_job;
  const std::optional<LogJob>& job = in.job ? *in.job : no_job;
  const bool recomputed = job.has_value();
  const bool rl = std::ranges::find(s.formats, LogFormat::kVerl) != s.formats.end();
  Table table(StepColumns(rl, recomputed));
  const bool show_rank = s.ranks.size() > 1;
  for (const auto& k : in.first_rows) AddRow(table, k, job, show_rank, rl);
  const int64_t shown = static_cast<int64_t>(in.first_rows.size() + in.last_rows.size());
  if (shown < in.rows_total) table.AddSeparator();
  for (const auto& k : in.last_rows) AddRow(table, k, job, show_rank, rl);
  out +=
      shown < in.rows_total
          ? fmt::format(
                "\nsteps (the first {} and the last {} of {}; --csv or --json for every step):\n",
                in.first_rows.size(), in.last_rows.size(), in.rows_total)
          : fmt::format("\nsteps ({}):\n", in.rows_total);
  out += table.Render();

  if (in.mfu) {
    out += RenderMfu(in);
  } else {
    out += fmt::format("\nthroughput and MFU: {}\n", in.mfu_note);
  }

  if (!in.implied_peak.empty()) out += fmt::format("  the framework's peak: {}\n", in.implied_peak);

  out += "\nrun summary:\n";
  for (const auto& r : s.ranks) {
    const std::string who =
        s.ranks.size() > 1 ? (r.rank < 0 ? "  no prefix: " : fmt::format("  rank {}: ", r.rank))
                           : "  ";
    out += fmt::format("{}steps {} to {}{}, {} records ({}), lines {} to {}\n", who, r.first_step,
                       r.last_step, r.total_steps ? fmt::format(" of {}", *r.total_steps) : "",
                       r.records, LogFormatName(r.format), r.first_line, r.last_line);
    if (r.numbered_records > 0) {
      out += fmt::format(
          "{}{} record{} print no step and no tqdm bar follows them (HF Trainer without its bar "
          "in the log, or with stdout buffered apart from the bar on stderr): numbered by "
          "strata, one after the other, so these \"steps\" count records, logging_steps apart\n",
          who, r.numbered_records, r.numbered_records == 1 ? "" : "s");
    }
    const auto step_time = r.step_time_s.Mean();
    const auto wall = r.WallSeconds();
    const auto iteration = r.rl_iteration_s.Mean();
    const bool verl = r.format == LogFormat::kVerl;
    out += fmt::format("{}steady {} {}{}; wall time {}{}\n", who,
                       verl ? "actor update (timing_s/update_actor)" : "step time",
                       step_time ? fmt::format("{:.2f} s", *step_time) : "-",
                       iteration ? fmt::format("; steady RL iteration{} {:.2f} s",
                                               verl ? " (timing_s/step)" : "", *iteration)
                                 : "",
                       wall ? Duration(*wall) : "-",
                       r.first_clock_s ? " (log clock)"
                       : iteration     ? " (RL iterations)"
                                       : (wall ? " (step times)" : ""));
    const auto steady_wall = r.WallSecondsPerStep();
    const auto slow_wall = r.slow_wall_s.Mean();
    if (r.EndsSlow() && slow_wall) {
      // The steady step is the baseline the drop was judged against; the run no longer runs at
      // it, so the present rate is said and used for the time to finish.
      out += fmt::format(
          "{}slower since step {} (line {}) to the end of the log: {:.2f} s per {} over {} "
          "steps{}: the run's present rate, used for the time to finish\n",
          who, r.slow_since_step, r.slow_since_line, *slow_wall,
          iteration ? "RL iteration" : "step", static_cast<int64_t>(r.slow_wall_s.weight),
          steady_wall && *steady_wall > 0
              ? fmt::format(", {:+.0f}% on the steady {:.2f} s before it",
                            100 * (*slow_wall / *steady_wall - 1), *steady_wall)
              : "");
    }
    out += TokensLine(r, job, who);
    if (r.validation_records > 0) {
      out += fmt::format(
          "{}validation: {} RL iteration{} timed {} of timing_s/testing and "
          "timing_s/save_checkpoint inside timing_s/step (verl up to 0.5.x), left out of the "
          "steady iteration and not judged\n",
          who, r.validation_records, r.validation_records == 1 ? "" : "s",
          Duration(r.validation_s));
    }
    out += fmt::format(
        "{}time lost: {} to stalls, {}{} to restarts ({} restart{}, {} steps redone)\n", who,
        Duration(r.stall_lost_s),
        r.drop_lost_s > 0
            ? fmt::format("{} to slow steps (throughput drops, over the steady step), ",
                          Duration(r.drop_lost_s))
            : "",
        Duration(r.restart_lost_s), r.restarts, r.restarts == 1 ? "" : "s", r.steps_redone);
    if (auto eta = r.EtaSeconds()) {
      out += fmt::format(
          "{}expected time to finish: {} ({} steps left at {:.2f} s{})\n", who, Duration(*eta),
          *r.total_steps - r.last_step, *r.CurrentSecondsPerStep(),
          r.EndsSlow() ? fmt::format(", the rate since step {}", r.slow_since_step) : "");
    }
    if (r.last_loss) out += fmt::format("{}last loss {:.4f}\n", who, *r.last_loss);
  }
  const std::string last =
      s.tail.last_text.size() > 160 ? s.tail.last_text.substr(0, 160) + "..." : s.tail.last_text;
  out += fmt::format("  last line {}: \"{}\"{}\n", s.tail.last_line, last,
                     s.tail.finished ? " (the run reports it finished)" : "");

  const ChecksMade checks = Checks(s);
  const std::string not_made =
      checks.not_made.empty()
          ? ""
          : fmt::format("  not judged, as no record gives what they look at: {}\n",
                        checks.not_made);
  if (s.anomalies.empty()) {
    out += fmt::format("\nanomalies: none found in {} steps ({})\n", in.rows_total, checks.made);
    out += not_made;
    out += UnjudgedSpikes(s);
  } else {
    out += s.anomalies_total > static_cast<int64_t>(s.anomalies.size())
               ? fmt::format("\nanomalies ({}; the first {} kept):\n", s.anomalies_total,
                             s.anomalies.size())
               : fmt::format("\nanomalies ({}):\n", s.anomalies.size());
    for (const auto& a : s.anomalies) out += "  " + FormatAnomaly(a) + "\n";
    out += not_made;
    out += UnjudgedSpikes(s);
  }
  return out;
}

}  // namespace strata
