#include "strata/logs/log_line_parser.h"

#include <array>

#include "strata/core/strings.h"

namespace strata {

namespace {

// Lines that mean the job is failing: after the last step, the last of them is what a person
// reads first when the job hangs or dies.
constexpr std::array<std::string_view, 12> kErrorMarkers = {
    "Watchdog caught collective operation timeout",
    "Traceback (most recent call last)",
    "CUDA out of memory",
    "OutOfMemoryError",
    "NCCL error",
    "NCCL WARN",
    "ChildFailedError",
    "Segmentation fault",
    "SIGTERM",
    "SIGKILL",
    "Error: ",
    "RuntimeError",
};

constexpr std::array<std::string_view, 3> kFinishedMarkers = {
    "[after training is done]",  // megatron
    "'train_runtime'",           // HF Trainer's final summary
    "\"train_runtime\"",
};

}  // namespace

std::string_view LogFormatName(LogFormat format) {
  switch (format) {
    case LogFormat::kUnknown:
      return "unknown";
    case LogFormat::kMegatron:
      return "megatron";
    case LogFormat::kMsSwiftMegatron:
      return "ms-swift-megatron";
    case LogFormat::kDict:
      return "hf-trainer-dict";
    case LogFormat::kDeepSpeed:
      return "deepspeed";
    case LogFormat::kTorchtitan:
      return "torchtitan";
    case LogFormat::kVerl:
      return "verl";
    case LogFormat::kNemo:
      return "nemo";
    case LogFormat::kOpenRlhf:
      return "openrlhf";
  }
  return "unknown";
}

void ParseLogLine(std::string_view text, std::vector<ParsedLine>& out) {
  if (text.size() < 6) return;
  // Ordered by how often each occurs in large logs: megatron's line first, parsed straight into
  // its place in `out` (neither parser touches the record when it returns false).
  {
    ParsedLine& step = out.emplace_back();
    step.kind = LineKind::kStep;
    if (ParseMegatronLine(text, step.record) || ParseNemoLine(text, step.record)) return;
    out.pop_back();
  }
  ParsedLine p;
  p.kind = LineKind::kStep;
  if (text.find('{') != std::string_view::npos && ParseDictLine(text, out)) return;
  if (ParseTorchtitanLine(text, p.record) || ParseVerlLine(text, p.record) ||
      ParseDeepSpeedLine(text, p.record) || ParseLightningBar(text, p.record)) {
    out.push_back(p);
    return;
  }
  if (ParseTqdmBar(text, p.record)) {
    p.kind = LineKind::kProgress;
    out.push_back(p);
    return;
  }
  if (ParseDeepSpeedWallClockLine(text, p.record)) {
    p.kind = LineKind::kWallClock;
    out.push_back(p);
    return;
  }
  if (ParseMegatronMemoryLine(text, p.record)) {
    p.kind = LineKind::kMemory;
    out.push_back(p);
    return;
  }
  p.record = StepRecord{};
  if (Contains(text, "OVERFLOW!") && Contains(text, "Skipping step")) {
    p.kind = LineKind::kSkip;
    out.push_back(p);
    return;
  }
  for (std::string_view m : kFinishedMarkers) {
    if (Contains(text, m)) {
      p.kind = LineKind::kFinished;
      out.push_back(p);
      return;
    }
  }
  for (std::string_view m : kErrorMarkers) {
    if (Contains(text, m)) {
      p.kind = LineKind::kError;
      out.push_back(p);
      return;
    }
  }
}

}  // namespace strata
