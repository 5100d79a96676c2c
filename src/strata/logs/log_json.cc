#include "strata/logs/log_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace strata {

namespace {

Json Opt(const std::optional<double>& v, int significant = 6) {
  if (!v) return nullptr;
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return RoundSig(*v, significant);
}

Json Opt(const std::optional<int64_t>& v) {
  if (!v) return nullptr;
  return *v;
}

}  // namespace

Json StepToJson(int rank, const StepRecord& s) {
  Json j;
  j["step"] = s.step;
  j["line"] = s.line;
  j["rank"] = rank < 0 ? Json(nullptr) : Json(rank);
  j["format"] = std::string(LogFormatName(s.format));
  j["total_steps"] = Opt(s.total_steps);
  j["loss"] = Opt(s.loss);
  j["grad_norm"] = Opt(s.grad_norm);
  j["learning_rate"] = Opt(s.learning_rate);
  j["step_time_s"] = Opt(s.step_time_s);
  j["rl_iteration_s"] = Opt(s.rl_iteration_s);
  j["global_batch_samples"] = Opt(s.global_batch);
  j["tokens"] = Opt(s.tokens);
  j["samples_per_s"] = Opt(s.samples_per_s);
  j["memory_gib"] = Opt(s.memory_gib);
  j["skipped_iterations"] = Opt(s.skipped_iterations);
  j["nan_iterations"] = Opt(s.nan_iterations);
  j["timestamp_s"] = Opt(s.timestamp_s, 15);
  j["elapsed_s"] = Opt(s.elapsed_s);
  j["printed_tflop_per_s_per_gpu"] = Opt(s.printed_tflops_per_gpu);
  j["printed_tokens_per_s_per_gpu"] = Opt(s.printed_tokens_per_s_per_gpu);
  j["printed_mfu_fraction"] = Opt(s.printed_mfu);
  return j;
}

Json AnomalyToJson(const Anomaly& a) {
  Json j;
  j["kind"] = std::string(AnomalyKindName(a.kind));
  j["line"] = a.line;
  j["step"] = a.step;
  j["rank"] = a.rank < 0 ? Json(nullptr) : Json(a.rank);
  j["lost_s"] = RoundSig(a.lost_s);
  j["message"] = a.message;
  return j;
}

Json RankSummaryToJson(const RankSummary& s) {
  Json j;
  j["rank"] = s.rank < 0 ? Json(nullptr) : Json(s.rank);
  j["format"] = std::string(LogFormatName(s.format));
  j["records"] = s.records;
  j["first_step"] = s.first_step;
  j["last_step"] = s.last_step;
  j["total_steps"] = Opt(s.total_steps);
  j["first_line"] = s.first_line;
  j["last_line"] = s.last_line;
  j["steps_advanced"] = s.steps_advanced;
  j["numbered_records"] = s.numbered_records;
  j["interval_step_times"] = s.interval_step_times;
  j["restarts"] = s.restarts;
  j["steps_redone"] = s.steps_redone;
  j["stall_lost_s"] = RoundSig(s.stall_lost_s);
  j["restart_lost_s"] = RoundSig(s.restart_lost_s);
  j["wall_s"] = Opt(s.WallSeconds());
  j["eta_s"] = Opt(s.EtaSeconds());
  j["steady_step_time_s"] = Opt(s.step_time_s.Mean());
  j["steady_rl_iteration_s"] = Opt(s.rl_iteration_s.Mean());
  j["drop_lost_s"] = RoundSig(s.drop_lost_s);
  // The slowdown the log ends in, when it lasted: the present rate the ETA uses.
  j["slow_since_step"] = s.EndsSlow() ? Json(s.slow_since_step) : Json(nullptr);
  j["current_wall_s_per_step"] = s.EndsSlow() ? Opt(s.slow_wall_s.Mean()) : Json(nullptr);
  j["last_loss"] = Opt(s.last_loss);
  j["max_memory_gib"] = s.max_memory_gib > 0 ? Json(RoundSig(s.max_memory_gib)) : Json(nullptr);
  j["printed_tflop_per_s_per_gpu"] = Opt(s.printed_tflops_per_gpu.Mean());
  j["printed_tokens_per_s_per_gpu"] = Opt(s.printed_tokens_per_s_per_gpu.Mean());
  j["printed_mfu_fraction"] = Opt(s.printed_mfu.Mean());
  j["first_consumed_samples"] = Opt(s.first_consumed_samples);
  j["last_consumed_samples"] = Opt(s.last_consumed_samples);
  j["sample_mean_tokens"] = Opt(s.sample_mean_tokens.Mean());
  // Records before the spike checks had min_window earlier values: read, not judged.
  j["spike_unjudged_records"] = s.spike_unjudged_records;
  // Records with a loss / grad norm / memory figure: 0 means that check was not made.
  j["loss_records"] = s.loss_records;
  j["grad_norm_records"] = s.grad_norm_records;
  j["memory_records"] = s.memory_records;
  return j;
}

Json LogMfuToJson(const LogMfu& m, const LogJob& job) {
  Json j;
  j["model"] = job.model.name;
  j["gpu"] = job.gpu_name;
  j["gpus"] = job.gpus;
  if (!job.source.empty()) j["job_source"] = job.source;
  j["seq_mean_tokens"] = RoundSig(job.seq_mean_tokens);
  j["seq_max_tokens"] = RoundSig(job.seq_max_tokens);
  if (!job.lengths_source.empty()) j["lengths_source"] = job.lengths_source;
  j["peak_tflop_per_s_per_gpu"] = RoundSig(job.peak_per_gpu.tflop_per_s());
  j["tokens_per_step"] = RoundSig(m.tokens_per_step);
  j["tokens_source"] = m.tokens_source;
  j["step_time_s"] = RoundSig(m.step_time_s);
  j["step_time_source"] = m.step_time_source;
  j["tokens_per_s_per_gpu"] = RoundSig(m.tokens_per_s_per_gpu);
  j["tflop_per_s_per_gpu"] = RoundSig(m.achieved_per_gpu.tflop_per_s());
  j["mfu_fraction"] = RoundSig(m.mfu);
  // Since the slowdown the log ends in: the same tokens per step over the present step time.
  const double now_scale =
      m.now_step_time_s && *m.now_step_time_s > 0 ? m.step_time_s / *m.now_step_time_s : 0;
  j["now_step_time_s"] = Opt(m.now_step_time_s);
  j["now_since_step"] = m.now_step_time_s ? Json(m.now_since_step) : Json(nullptr);
  j["now_mfu_fraction"] = now_scale > 0 ? Json(RoundSig(m.mfu * now_scale)) : Json(nullptr);
  Json points = Json::array();
  for (const auto& p : m.report.points) {
    Json jp;
    jp["label"] = p.label;
    jp["attention_tokens"] = RoundSig(p.attention_tokens);
    for (const auto& row : p.rows) {
      if (row.convention == FlopConvention::kMegatron) {
        jp["megatron_gflop_per_token"] = RoundSig(row.training_per_token.gflop());
        jp["mfu_fraction"] = RoundSig(row.mfu);
      }
    }
    jp["hfu_fraction"] = RoundSig(p.hfu);
    points.push_back(jp);
  }
  j["points"] = points;
  Json printed = Json::array();
  for (const auto& p : m.printed) {
    Json jp;
    jp["quantity"] = p.quantity;
    jp["printed"] = RoundSig(p.printed);
    jp["ours"] = RoundSig(p.ours);
    jp["agrees"] = p.agrees;
    jp["reason"] = p.reason;
    printed.push_back(jp);
  }
  j["printed_vs_ours"] = printed;
  return j;
}

Json LogReportToJson(const std::string& file, const LogSummary& s, const Json& steps,
                     const std::optional<Json>& mfu, const std::string& mfu_note) {
  Json j = JsonDocument("logs");
  j["file"] = file;
  j["lines"] = s.lines;
  j["recognised_lines"] = s.recognised_lines;
  j["duplicate_lines"] = s.duplicate_lines;
  Json formats = Json::array();
  for (auto f : s.formats) formats.push_back(std::string(LogFormatName(f)));
  j["formats"] = formats;
  Json ranks = Json::array();
  for (const auto& r : s.ranks) ranks.push_back(RankSummaryToJson(r));
  j["ranks"] = ranks;
  j["mfu"] = mfu ? *mfu : Json(nullptr);
  j["mfu_note"] = mfu_note;
  Json anomalies = Json::array();
  for (const auto& a : s.anomalies) anomalies.push_back(AnomalyToJson(a));
  j["anomalies"] = anomalies;
  j["anomalies_total"] = s.anomalies_total;
  Json tail;
  tail["last_line"] = s.tail.last_line;
  tail["last_text"] = s.tail.last_text;
  tail["last_step_line"] = s.tail.last_step_line;
  tail["error_line"] = s.tail.error_line == 0 ? Json(nullptr) : Json(s.tail.error_line);
  tail["error_text"] = s.tail.error_text;
  tail["finished"] = s.tail.finished;
  j["tail"] = tail;
  j["steps"] = steps;
  return j;
}

}  // namespace strata
