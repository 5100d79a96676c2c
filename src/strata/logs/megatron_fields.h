// The labels of a Megatron iteration line that the analyser reads, and what each value means.
// One table for both readers of the line: the general label scan (megatron_lines.cc) and the
// single-pass parser (megatron_fast.cc), so the two cannot disagree on a label or a unit.
#ifndef STRATA_LOGS_MEGATRON_FIELDS_H_
#define STRATA_LOGS_MEGATRON_FIELDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "strata/logs/step_record.h"

namespace strata {

enum class MegatronField : uint8_t {
  kNone,             // a label we do not read (loss scale, load_balancing_loss...)
  kConsumedSamples,  // consumed samples: samples since the run started, all DP ranks
  kStepTimeMs,       // elapsed time per iteration (ms)
  kElapsed,          // ms-swift: "elapsed time: 20m 3s"
  kRemaining,        // ms-swift: "remaining time: 2d 0h 8m 17s" (only marks the format)
  kMemoryGib,        // ms-swift: "memory(GiB): 85.6"
  kTflops,           // throughput per GPU (TFLOP/s/GPU)
  kTflopsDs,         // Megatron-DeepSpeed "TFLOPs"
  kLearningRate,     //
  kLoss,             // lm loss (Megatron-LM), lm_loss (GPT-NeoX)
  kGlobalBatch,      // global batch size (samples)
  kGradNorm,         //
  kSkipped,          // number of skipped iterations (in the logging interval)
  kNan,              // number of nan iterations (in the logging interval)
  kSeqlen,           // Megatron-DeepSpeed "actual seqlen" (tokens = seqlen x global batch)
  kSamplesPerS,      // Megatron-DeepSpeed "samples per second"
};

struct MegatronLabel {
  std::string_view text;
  MegatronField field;
};

/// Every label read, exactly as printed. A label that is a prefix of another ("elapsed time")
/// comes after it.
inline constexpr std::array<MegatronLabel, 16> kMegatronLabels = {{
    {"consumed samples", MegatronField::kConsumedSamples},
    {"elapsed time per iteration (ms)", MegatronField::kStepTimeMs},
    {"elapsed time", MegatronField::kElapsed},
    {"throughput per GPU (TFLOP/s/GPU)", MegatronField::kTflops},
    {"TFLOPs", MegatronField::kTflopsDs},
    {"learning rate", MegatronField::kLearningRate},
    {"lm loss", MegatronField::kLoss},
    // GPT-NeoX's training_log prints each loss key as " {key}: {value:.6E} |" and its key is
    // lm_loss (EleutherAI/gpt-neox megatron/training.py).
    {"lm_loss", MegatronField::kLoss},
    {"global batch size", MegatronField::kGlobalBatch},
    {"grad norm", MegatronField::kGradNorm},
    {"number of skipped iterations", MegatronField::kSkipped},
    {"number of nan iterations", MegatronField::kNan},
    {"memory(GiB)", MegatronField::kMemoryGib},
    {"remaining time", MegatronField::kRemaining},
    {"actual seqlen", MegatronField::kSeqlen},
    {"samples per second", MegatronField::kSamplesPerS},
}};

/// The field of a (trimmed) label; kNone for a label not read.
MegatronField MegatronFieldOf(std::string_view label);

/// Whether the field's value is a plain number (then SetMegatronNumber stores it).
constexpr bool IsNumericField(MegatronField f) {
  return f != MegatronField::kNone && f != MegatronField::kElapsed &&
         f != MegatronField::kRemaining;
}

/// Stores the number of a numeric field in its unit (ms -> s) and marks ms-swift's field.
/// Inline: the single-pass reader calls it for every value of every line.
inline void SetMegatronNumber(MegatronField f, double v, StepRecord& r,
                              std::optional<double>& seqlen) {
  switch (f) {
    case MegatronField::kStepTimeMs:
      r.step_time_s = v * 1e-3;
      break;
    case MegatronField::kMemoryGib:
      r.memory_gib = v;
      r.format = LogFormat::kMsSwiftMegatron;
      break;
    case MegatronField::kTflops:
    case MegatronField::kTflopsDs:
      r.printed_tflops_per_gpu = v;
      break;
    case MegatronField::kLearningRate:
      r.learning_rate = v;
      break;
    case MegatronField::kLoss:
      r.loss = v;
      break;
    case MegatronField::kGlobalBatch:
      r.global_batch = v;
      break;
    case MegatronField::kGradNorm:
      r.grad_norm = v;
      break;
    case MegatronField::kSkipped:
      r.skipped_iterations = v;
      break;
    case MegatronField::kNan:
      r.nan_iterations = v;
      break;
    case MegatronField::kSeqlen:
      seqlen = v;
      break;
    case MegatronField::kSamplesPerS:
      r.samples_per_s = v;
      break;
    case MegatronField::kConsumedSamples:
      r.consumed_samples = v;
      break;
    case MegatronField::kNone:
    case MegatronField::kElapsed:
    case MegatronField::kRemaining:
      break;
  }
}

/// One "label: value" segment (value trimmed): what the general label scan does with it.
void ApplyMegatronField(MegatronField f, std::string_view value, StepRecord& r,
                        std::optional<double>& seqlen);

}  // namespace strata

#endif  // STRATA_LOGS_MEGATRON_FIELDS_H_
