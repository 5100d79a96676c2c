// strata logs LOG [--job J] [--set k=v] [--json|--csv] [--explain] [--follow]: reads a training
// log (Megatron, ms-swift, HF Trainer, DeepSpeed, torchtitan, verl, NeMo; detected by content),
// prints a per-step table, throughput and MFU recomputed from the model next to what the
// framework printed, the anomalies with their line numbers, and a summary of the run.
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/core/units.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/logs/log_job.h"
#include "strata/logs/log_json.h"
#include "strata/logs/log_reader.h"
#include "strata/report/logs_render.h"
#include "strata/rl/rl_job.h"

namespace strata::cli {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted = true; }

struct LogsOptions {
  std::string path;
  std::string job;
  std::string model;
  std::vector<std::string> sets;
  OutputOptions out;  // --json, --explain, -o
  bool csv = false;
  int64_t rows = 20;
  bool follow = false;
  std::string exit_after_idle;
  std::string hang_after = "60s";
};

// The primary stream: the rank with the most steps (the rank that logs, usually the last).
// --job given an RL job (`strata rl`'s, which is not a training job): the trainer a verl log's
// update step ran is its actor job, at the RL job's samples per step and lengths (prompt +
// response), as `strata rl` runs it. nullopt when `job` is no RL job either.
std::optional<ActorLogJob> RlActorLogJob(const std::string& job) {
  auto rl = LoadRlSpec(job);
  if (!rl.ok()) return std::nullopt;
  const double mean = rl->lengths.prompt_mean + rl->lengths.response_mean;
  const double cap = rl->lengths.prompt_max + rl->lengths.response_max;
  ActorLogJob a;
  a.job = rl->actor_job;
  a.overrides = rl->actor_overrides;
  a.overrides.push_back(fmt::format("batch.global_batch={}", rl->samples()));
  a.overrides.push_back(fmt::format("sequence.max_tokens={}", std::llround(cap)));
  a.overrides.push_back(fmt::format("sequence.mean_tokens={}", std::llround(mean)));
  a.prompt_cap_tokens = rl->lengths.prompt_max;
  a.source = fmt::format(
      "the RL job {}: its actor job {}, at {} samples per step (prompts x samples per prompt) "
      "and the RL job's lengths (prompt + response: mean {}, cap {} tokens)",
      job, rl->actor_job, GroupDigits(static_cast<double>(rl->samples())), GroupDigits(mean),
      GroupDigits(cap));
  return a;
}

const RankSummary* Primary(const LogSummary& s) {
  const RankSummary* best = nullptr;
  for (const auto& r : s.ranks) {
    if (!best || r.records > best->records) best = &r;
  }
  return best;
}

}  // namespace

int RunLogs(int argc, char** argv) {
  CLI::App app{
      "Read a training log: per-step table, throughput and MFU recomputed from the model next "
      "to what the framework printed, anomalies with line numbers, run summary.",
      "strata logs"};
  LogsOptions o;
  app.add_option("log", o.path, "the log file (any supported format; detected by content)")
      ->required();
  app.add_option("--job", o.job,
                 "job file or name in data/jobs/ (model, GPUs, lengths) to recompute MFU; "
                 "e.g. qwen3.6-35b-a3b-sft-h20x40");
  app.add_option("--model", o.model,
                 "the model (catalog name or config.json): with --set, the log's job without a "
                 "job file; with --job, replaces its model");
  app.add_option("--set", o.sets, "override a job field: --set batch.global_batch=64 (repeatable)");
  const OutputFlagHandles flags =
      AddOutputOptions(app, o.out, kJsonFlag | kExplainFlag,
                       "print how throughput and MFU are computed, numbers in");
  auto* csv = app.add_flag("--csv", o.csv, "the per-step table as CSV (every step)");
  flags.json->excludes(csv);
  app.add_option("--rows", o.rows, "steps shown in the text table (first and last half)")
      ->capture_default_str();
  auto* follow = app.add_flag("--follow", o.follow,
                              "keep reading as the log grows (like tail -f); print anomalies as "
                              "they appear; Ctrl-C prints the summary");
  app.add_option("--exit-after-idle", o.exit_after_idle,
                 "with --follow: stop after this long without a new line (30s, 10m)")
      ->needs(follow);
  app.add_option("--hang-after", o.hang_after,
                 "with --follow: a silence at least this long (and 3 x the median step) is a "
                 "hang")
      ->needs(follow)
      ->capture_default_str();
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  FollowOptions follow_options;
  if (!o.exit_after_idle.empty()) {
    auto s = ParseSeconds(o.exit_after_idle);
    if (!s.ok()) return ReportError(Error(s.error()).InField("--exit-after-idle"));
    follow_options.exit_after_idle_s = s->s();
  }
  if (auto s = ParseSeconds(o.hang_after); s.ok()) {
    follow_options.hang_min_idle_s = s->s();
  } else {
    return ReportError(Error(s.error()).InField("--hang-after"));
  }
  // The job is loaded before the log (its errors before a long read, and --csv rows need it);
  // --model and --set that do not make a whole job wait for the log, whose torchtitan header
  // may name the rest.
  std::optional<LogJob> job;
  std::optional<Error> job_error;
  if (!o.job.empty() || !o.sets.empty() || !o.model.empty()) {
    auto loaded = LoadLogJob(o.job, o.sets, o.model);
    if (!loaded.ok() && !o.job.empty()) {
      if (auto actor = RlActorLogJob(o.job)) loaded = LoadActorLogJob(*actor, o.sets, o.model);
    }
    if (loaded.ok()) {
      job = std::move(*loaded);
    } else if (!o.job.empty()) {
      return ReportError(loaded.error());
    } else {
      job_error = loaded.error();
    }
  }

  // What is kept of the steps: every one for --json and --csv, the first and last rows for text.
  Json steps = Json::array();
  std::string csv_text = o.csv ? CsvHeader() : "";
  std::vector<KeptStep> first_rows;
  std::deque<KeptStep> last_rows;
  int64_t rows_total = 0;
  const size_t half = static_cast<size_t>(std::max<int64_t>(o.rows, 0) / 2);
  LogAnalyzer::Callbacks callbacks;
  callbacks.on_step = [&](int rank, const StepRecord& step) {
    ++rows_total;
    if (o.out.json) {
      steps.push_back(StepToJson(rank, step));
    } else if (o.csv) {
      csv_text += CsvRow(rank, step, job);
    } else if (first_rows.size() < half) {
      first_rows.push_back({rank, step});
    } else if (half > 0) {
      last_rows.push_back({rank, step});
      if (last_rows.size() > half) last_rows.pop_front();
    }
  };
  if (o.follow && !o.out.json && !o.csv) {
    callbacks.on_anomaly = [](const Anomaly& a) {
      fmt::print("{}\n", FormatAnomaly(a));
      std::fflush(stdout);
    };
  }
  LogAnalyzer analyzer(callbacks);
  Result<ReadStats> read = ReadStats{};
  if (o.follow) {
    std::signal(SIGINT, OnInterrupt);
    std::signal(SIGTERM, OnInterrupt);
    follow_options.stop = [] { return g_interrupted.load(); };
    read = FollowLogFile(o.path, analyzer, follow_options);
  } else {
    read = ReadLogFile(o.path, analyzer);
  }
  if (!read.ok()) return ReportError(read.error());
  analyzer.Finish();
  const LogSummary& summary = analyzer.Summary();
  const RankSummary* primary = Primary(summary);
  if (primary == nullptr) {
    return ReportError(
        InvalidInput(
            fmt::format("{}: not a log of Megatron-LM, ms-swift, HF Trainer, DeepSpeed, "
                        "torchtitan, verl, NeMo or OpenRLHF, or one whose step lines were not kept",
                        summary.lines == 1
                            ? fmt::format("read 1 line ({} bytes), not recognised as a "
                                          "training step",
                                          read->bytes)
                            : fmt::format("read {} lines ({} bytes), recognised none of them as "
                                          "training steps",
                                          summary.lines, read->bytes)))
            .InFile(o.path)
            .WithHint("nothing was checked; the formats and their lines are listed in "
                      "the README, section `strata logs` (Formats read)"));
  }

  // No job given: torchtitan names its own in the log header (model, GPU, batch, mesh); --model
  // and --set answer or override what it gives.
  std::string header_note;
  if (!job && o.job.empty() && summary.titan.Any()) {
    auto header = JobFromTitanHeader(summary.titan, o.model, o.sets);
    if (header.ok()) {
      std::vector<std::string> sets = header->sets;
      sets.insert(sets.end(), o.sets.begin(), o.sets.end());
      auto loaded = LoadLogJob("", sets, header->model);
      if (!loaded.ok()) return ReportError(Error(loaded.error()).InFile(o.path));
      job = std::move(*loaded);
      job->source = header->source;
      job_error.reset();
    } else if (job_error) {
      return ReportError(Error(header.error()).InFile(o.path));
    } else {
      header_note = header.error().message + " (" + header.error().hint + ")";
    }
  }
  if (job_error) return ReportError(*job_error);

  std::optional<LogMfu> mfu;
  std::string mfu_note;
  if (job) {
    UseLogLengths(*primary, *job);
    auto computed = RecomputeLogMfu(*primary, *job);
    if (computed.ok()) {
      mfu = std::move(*computed);
    } else {
      mfu_note = "not recomputed: " + computed.error().message +
                 (computed.error().hint.empty() ? "" : " (" + computed.error().hint + ")");
    }
  } else if (!header_note.empty()) {
    mfu_note = "not recomputed: " + header_note;
  } else {
    mfu_note =
        "not recomputed: give the job (--job FILE|NAME, or --model NAME with --set key=value) "
        "for the model, GPUs and sequence lengths";
  }

  std::string out;
  if (o.out.json) {
    std::optional<Json> mfu_json;
    if (mfu) mfu_json = LogMfuToJson(*mfu, *job);
    out = DumpJson(LogReportToJson(o.path, summary, steps, mfu_json, mfu_note));
  } else if (o.csv) {
    out = std::move(csv_text);
  } else {
    LogsText text;
    text.path = o.path;
    text.summary = &summary;
    text.first_rows = std::move(first_rows);
    text.last_rows.assign(last_rows.begin(), last_rows.end());
    text.rows_total = rows_total;
    text.job = &job;
    text.mfu = mfu ? &*mfu : nullptr;
    text.mfu_note = mfu_note;
    text.explain = o.out.explain;
    if (auto catalog = LoadGpuCatalog(DataDir() + "/gpus.yaml"); catalog.ok()) {
      text.implied_peak = DescribeImpliedPeak(*primary, *catalog).value_or("");
    }
    text.ends_mid_line = read->ends_mid_line;
    text.long_lines = read->long_lines;
    out = RenderLogsText(text);
  }
  if (int rc = EmitOutput(out, o.out.output); rc != kExitOk) return rc;
  return summary.anomalies.empty() ? kExitOk : kExitCheckFailed;
}

}  // namespace strata::cli
