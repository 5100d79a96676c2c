#include "strata/job/pipeline_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "strata/job/enum_names.h"
#include "strata/job/pipeline_split.h"

namespace strata {
namespace {

constexpr EnumName<LoopedMicroBatches> kLoopedRules[] = {
    {LoopedMicroBatches::kMultipleOfPp, "multiple_of_pp"},
    {LoopedMicroBatches::kMultipleOfRounds, "multiple_of_rounds"}};

Error RuleError(std::string field, std::string message, std::string hint) {
  Error e = InvalidInput(std::move(message));
  e.field = std::move(field);
  e.hint = std::move(hint);
  return e;
}

bool Looped(PipelineSchedule s) {
  return s == PipelineSchedule::kInterleaved1F1B || s == PipelineSchedule::kZeroBubble;
}

std::vector<std::string> ScheduleNames(const std::vector<PipelineSchedule>& schedules) {
  std::vector<std::string> names;
  names.reserve(schedules.size());
  for (PipelineSchedule s : schedules) names.emplace_back(NameOf(kPipelineSchedules, s));
  return names;
}

/// Where the rule and its sources are written.
std::string DataRef(const PipelineRule& rule) {
  return fmt::format("data/frameworks.yaml, frameworks.{}.pipeline", rule.framework);
}

}  // namespace

Result<PipelineRule> ParsePipelineRule(YamlMap& entry, const std::string& framework) {
  PipelineRule rule;
  rule.framework = framework;
  STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("pipeline"));
  YAML::Node list;
  if (m.Has("schedules")) {
    STRATA_ASSIGN_OR_RETURN(list, m.Node("schedules"));
    if (!list.IsSequence() || list.size() == 0) {
      return m.ErrorAt("schedules", "expected a list of schedule names");
    }
  }
  for (const auto& item : list) {
    const std::string name = item.Scalar();
    const auto* it =
        std::ranges::find_if(kPipelineSchedules, [&](const auto& e) { return name == e.name; });
    if (it == std::end(kPipelineSchedules)) {
      std::vector<std::string> names;
      for (const auto& e : kPipelineSchedules) names.emplace_back(e.name);
      return m
          .ErrorAt("schedules", fmt::format("unknown schedule '{}', expected some of: {}", name,
                                            fmt::join(names, ", ")))
          .WithHint(DidYouMeanHint(name, names));
    }
    rule.schedules.push_back(it->value);
  }
  if (m.Has("looped_micro_batches")) {
    STRATA_ASSIGN_OR_RETURN(rule.looped, EnumField(m, "looped_micro_batches", kLoopedRules));
  }
  STRATA_ASSIGN_OR_RETURN(rule.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return rule;
}

bool LoopedScheduleAccepts(LoopedMicroBatches rule, PipelineSchedule schedule, int64_t pp,
                           int64_t micro_batches) {
  if (pp < 2 || micro_batches < 1 || !Looped(schedule)) return true;
  switch (rule) {
    case LoopedMicroBatches::kAny:
      return true;
    case LoopedMicroBatches::kMultipleOfPp:
      return micro_batches % pp == 0;
    case LoopedMicroBatches::kMultipleOfRounds:
      return micro_batches % std::max<int64_t>(1, micro_batches / pp) == 0;
  }
  return true;
}

Status CheckPipelineRule(const PipelineRule& rule, const std::string& release,
                         const ParallelLayout& l, int64_t micro_batches, int64_t micro_batch) {
  if (!rule.known() || l.pp < 2) return OkStatus();
  const std::string who =
      release.empty() ? rule.framework : fmt::format("{} {}", rule.framework, release);
  const PipelineSchedule s = l.schedule();
  if (!rule.schedules.empty() && std::ranges::find(rule.schedules, s) == rule.schedules.end()) {
    const std::vector<std::string> has = ScheduleNames(rule.schedules);
    return RuleError(
        "parallel.pp_schedule",
        fmt::format("{} has no {} pipeline schedule: it runs {} only ({})", who,
                    NameOf(kPipelineSchedules, s), fmt::join(has, ", "), DataRef(rule)),
        fmt::format("set parallel.pp_schedule to one of: {} (or remove it: {} with "
                    "VPP 1, interleaved_1f1b with VPP > 1), or name a framework that "
                    "runs {} (torchtitan)",
                    fmt::join(has, ", "), has.front(), NameOf(kPipelineSchedules, s)));
  }
  if (LoopedScheduleAccepts(rule.looped, s, l.pp, micro_batches)) return OkStatus();
  const int64_t per_pp_multiple = micro_batch * l.dp * l.pp;
  const std::string count =
      fmt::format("{} micro batches per step (global batch {} / (micro batch {} x DP {}))",
                  micro_batches, micro_batches * micro_batch * l.dp, micro_batch, l.dp);
  if (rule.looped == LoopedMicroBatches::kMultipleOfPp) {
    return RuleError(
        "parallel.vpp",
        fmt::format("{}'s interleaved 1F1B (VPP {}) runs the micro batches in groups of PP = {} "
                    "and refuses {}: the count must be a multiple of PP (its "
                    "forward_backward_pipelining_with_interleaving raises ValueError 'The number "
                    "of contiguous micro-batches in a virtual pipeline stage should range in "
                    "[PP={} , M={}]' below PP and RuntimeError on a remainder; {})",
                    who, l.vpp, l.pp, count, l.pp, micro_batches, DataRef(rule)),
        fmt::format("set parallel.vpp: 1 (1F1B runs any count), or batch.global_batch to a "
                    "multiple of micro batch x DP x PP = {}",
                    per_pp_multiple));
  }
  const int64_t rounds = std::max<int64_t>(1, micro_batches / l.pp);
  return RuleError(
      l.vpp > 1 ? "parallel.vpp" : "batch.global_batch",
      fmt::format("{}'s {} (VPP {}) splits the micro batches into max(1, M // PP) = {} rounds "
                  "and refuses {}, which is not a multiple of them (torch.distributed.pipelining "
                  "raises ValueError '... requires the number of microbatches to be a multiple "
                  "of the number of rounds'; {})",
                  who, NameOf(kPipelineSchedules, s), l.vpp, rounds, count, DataRef(rule)),
      fmt::format("set batch.global_batch so that the micro batches per step are fewer than PP = "
                  "{} or a multiple of PP (global batch a multiple of {}){}",
                  l.pp, per_pp_multiple,
                  s == PipelineSchedule::kInterleaved1F1B ? ", or parallel.vpp: 1" : ""));
}

}  // namespace strata
