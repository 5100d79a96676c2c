// The step table of an RL log: each time column says which of verl's timers it is, and the
// printed throughput column which of them it divides by.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/logs/log_analyzer.h"
#include "strata/report/logs_render.h"

namespace strata {
namespace {

// The SYNTH verl line of reference/formats/logs-and-node-state.md (section 1.5, verl >= 0.5
// console format), the timers and throughput kept, the other keys left out.
constexpr std::string_view kVerlLine =
    "step:12 - actor/grad_norm:0.118 - perf/mfu/actor:0.0871 - perf/max_memory_reserved_gb:84.9 - "
    "actor/lr:1e-06 - timing_s/gen:611.87 - timing_s/reward:4.12 - timing_s/old_log_prob:73.4 - "
    "timing_s/ref:72.9 - timing_s/adv:0.04 - timing_s/update_actor:468.2 - "
    "timing_s/update_weights:6.3 - timing_s/step:1238.5 - perf/total_num_tokens:8450017 - "
    "perf/time_per_step:1238.5 - perf/throughput:170.57";

// verl's perf/throughput is total_num_tokens / (timing_s/step x GPUs) (volcengine/verl@b178a3cd
// verl/trainer/ppo/metric_utils.py, compute_throughout_metrics): 8,450,017 / (1,238.5 s x 40) =
// 170.57, over the whole RL iteration, while strata's step time is timing_s/update_actor, 468.2
// s. Before, the columns read "step time (s)" 468.2 beside "tokens/s/GPU (printed)" 170.6: two
// denominators under one name. Now the 468.2 s is the actor update, the 1,238.5 s the RL
// iteration, and the throughput says it is over the RL iteration (`strata rl --log` names them
// "actor update" and "step" the same way).
TEST(LogsRlColumns, VerlTimersAndThroughputSayTheirDenominator) {
  std::vector<KeptStep> rows;
  LogAnalyzer::Callbacks callbacks;
  callbacks.on_step = [&](int rank, const StepRecord& r) { rows.push_back({rank, r}); };
  LogAnalyzer analyzer(callbacks);
  analyzer.FeedLine(kVerlLine);
  analyzer.Finish();
  ASSERT_EQ(rows.size(), 1u);
  const LogSummary& summary = analyzer.Summary();
  const std::optional<LogJob> no_job;
  LogsText text;
  text.path = "verl.log";
  text.summary = &summary;
  text.first_rows = rows;
  text.rows_total = 1;
  text.job = &no_job;
  text.mfu_note = "not recomputed";
  const std::string out = RenderLogsText(text);
  const size_t header = out.find("  step  ");
  ASSERT_NE(header, std::string::npos) << out;
  const std::string header_line = out.substr(header, out.find('\n', header) - header);
  EXPECT_EQ(header_line.find("step time"), std::string::npos) << header_line;
  EXPECT_NE(header_line.find("actor update (s)  RL iteration (s)  "
                             "tokens/s/GPU (printed, over RL iteration)"),
            std::string::npos)
      << header_line;
  const size_t row = out.find("\n    12  ");
  ASSERT_NE(row, std::string::npos) << out;
  const std::string row_line = out.substr(row + 1, out.find('\n', row + 1) - row - 1);
  EXPECT_NE(row_line.find("468.2"), std::string::npos) << row_line;
  EXPECT_NE(row_line.find("1238"), std::string::npos) << row_line;
  EXPECT_NE(row_line.find("170.6"), std::string::npos) << row_line;
  EXPECT_NE(out.find("steady actor update (timing_s/update_actor)"), std::string::npos) << out;
}

}  // namespace
}  // namespace strata
