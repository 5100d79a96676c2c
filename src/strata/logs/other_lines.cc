// DeepSpeed engine lines, torchtitan's metrics line and verl's console metrics line.
#include "strata/core/timestamp.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"

namespace strata {

namespace {

// The value after "key=" up to the next ", " (DeepSpeed's separator) or the end.
std::optional<std::string_view> EqValue(std::string_view text, std::string_view key) {
  size_t pos = text.find(key);
  while (pos != std::string_view::npos && pos > 0 && text[pos - 1] != ' ' && text[pos - 1] != ',' &&
         text[pos - 1] != '/' && text[pos - 1] != ']') {
    pos = text.find(key, pos + 1);
  }
  if (pos == std::string_view::npos) return std::nullopt;
  const size_t start = pos + key.size();
  size_t end = text.find(", ", start);
  if (end == std::string_view::npos) end = text.size();
  return TrimSpace(text.substr(start, end - start));
}

}  // namespace

bool ParseDeepSpeedLine(std::string_view text, StepRecord& r) {
  // Progress: "[Rank 0] step=35, skipped=0, lr=[2.17e-06, 2.17e-06], mom=[[0.9, 0.95], ...]"
  if (auto skipped = EqValue(text, "skipped=")) {
    auto step = EqValue(text, "step=");
    if (!step) return false;
    auto s = ParseInt64(*step);
    if (!s) return false;
    r.step = *s;
    SetLogNumber(r.skipped_iterations, *skipped);
    if (auto lr = EqValue(text, "lr=[")) {
      const size_t end = lr->find_first_of(",]");
      SetLogNumber(r.learning_rate, lr->substr(0, end));
    }
  } else if (text.find("SamplesPerSec=") != std::string_view::npos) {
    // Throughput: "epoch=0/micro_step=34/global_step=34, RunningAvgSamplesPerSec=7.86,
    // CurrSamplesPerSec=8.0, MemAllocated=59.65GB, MaxMemAllocated=63.31GB", or before 2023
    // "0/40, SamplesPerSec=83.48, MemAllocated=0.26GB, MaxMemAllocated=9.02GB".
    if (auto gs = EqValue(text, "global_step=")) {
      auto s = ParseInt64(*gs);
      if (!s) return false;
      r.step = *s;
    } else {
      const size_t sps = text.find(", SamplesPerSec=");
      if (sps == std::string_view::npos) return false;
      const size_t slash = text.rfind('/', sps);
      if (slash == std::string_view::npos) return false;
      auto s = ParseInt64(text.substr(slash + 1, sps - slash - 1));
      if (!s) return false;
      r.step = *s;
    }
    if (auto v = EqValue(text, "CurrSamplesPerSec=")) {
      SetLogNumber(r.samples_per_s, *v);
    } else if (auto v2 = EqValue(text, "SamplesPerSec=")) {
      SetLogNumber(r.samples_per_s, *v2);
    }
    // DeepSpeed divides by 1024**3 and prints "GB": the value is GiB.
    if (auto m = EqValue(text, "MaxMemAllocated=")) {
      if (m->size() > 2 && m->substr(m->size() - 2) == "GB")
        SetLogNumber(r.memory_gib, m->substr(0, m->size() - 2));
    }
  } else {
    return false;
  }
  r.format = LogFormat::kDeepSpeed;
  if (auto t = FindLeadingTimestamp(text)) r.timestamp_s = *t;
  return true;
}

// DeepSpeed's wall-clock breakdown (wall_clock_breakdown: true), REAL from deepspeedai/DeepSpeed
// #3742: "[Rank 0] rank=0 time (ms) | forward: 652.41 | backward: 2164.52 | backward_inner:
// 2001.89 | backward_allreduce: 162.60 | step: 1172.13" (timer names fwd, bwd, bwd_inner,
// bwd_allreduce since #3996). At deepspeedai/DeepSpeed@09601bb8 the engine's global timers run
// over every micro step of the global step and are logged and reset at its gradient
// accumulation boundary (deepspeed/runtime/engine.py:2138-2148; timer.py:131-139 sums each
// timer's intervals since the last reset). backward_inner and backward_allreduce run inside
// backward (engine.py:1883-1922): backward_inner + backward_allreduce = 2001.89 + 162.60 =
// 2164.49 ~ backward 2164.52. So forward, backward and step are disjoint, and DeepSpeed's own
// iteration latency is their sum (engine.py:2172-2174, _autotuning_exit): the step time here.
// The micro-step line (forward_microstep, ...) and lines with other timers are not this one.
bool ParseDeepSpeedWallClockLine(std::string_view text, StepRecord& r) {
  const size_t at = text.find("time (ms) |");
  if (at == std::string_view::npos) return false;
  std::optional<double> forward, backward, step;
  bool other = false;
  ForEachLabelled(text.substr(at + 9), '|', [&](std::string_view label, std::string_view value) {
    if (label == "forward" || label == "fwd") {
      SetLogNumber(forward, value);
    } else if (label == "backward" || label == "bwd") {
      SetLogNumber(backward, value);
    } else if (label == "step") {
      SetLogNumber(step, value);
    } else if (label != "backward_inner" && label != "bwd_inner" && label != "backward_allreduce" &&
               label != "bwd_allreduce") {
      other = true;
    }
  });
  if (other || !forward || !backward || !step) return false;
  r.step_time_s = (*forward + *backward + *step) / 1000;
  r.format = LogFormat::kDeepSpeed;
  return true;
}

bool ParseTorchtitanLine(std::string_view text, StepRecord& r) {
  // "[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319
  //  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%"
  const size_t st = text.find("step:");
  if (st == std::string_view::npos || text.find("tps:", st) == std::string_view::npos) return false;
  std::string_view body = text.substr(st);
  // Fields are separated by two spaces; a value may be preceded by spaces ("loss:  3.24").
  bool have_step = false;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t colon = body.find(':', pos);
    if (colon == std::string_view::npos) break;
    const std::string_view key = TrimSpace(body.substr(pos, colon - pos));
    size_t vstart = colon + 1;
    while (vstart < body.size() && body[vstart] == ' ') ++vstart;
    size_t vend = body.find("  ", vstart);
    if (vend == std::string_view::npos) vend = body.size();
    std::string_view value = TrimSpace(body.substr(vstart, vend - vstart));
    pos = vend;
    // mfu is the last field: a line that ends on another field was cut, its value maybe too.
    if (vend == body.size() && key != "mfu") break;
    if (key == "step") {
      if (auto s = ParseInt64(value)) r.step = *s, have_step = true;
    } else if (key == "loss") {
      SetLogNumber(r.loss, value);
    } else if (key == "grad_norm") {
      SetLogNumber(r.grad_norm, value);
    } else if (key == "memory") {
      const size_t gib = value.find("GiB");
      if (gib != std::string_view::npos) SetLogNumber(r.memory_gib, value.substr(0, gib));
      // "(64.99%)": max reserved over the device's total_memory, both printed to 2 decimals
      // (pytorch/torchtitan@b5bcd76c torchtitan/components/metrics.py:44-59, 531-532), so the
      // device's size lies within what the two roundings (+-0.005 each) allow.
      const size_t open = value.find('(', gib == std::string_view::npos ? 0 : gib);
      const size_t pct = value.find("%)", open == std::string_view::npos ? 0 : open);
      std::optional<double> percent;
      if (r.memory_gib && open != std::string_view::npos && pct != std::string_view::npos)
        SetLogNumber(percent, value.substr(open + 1, pct - open - 1));
      if (percent && *percent >= 1 && *r.memory_gib > 0) {
        r.device_gib_min = (*r.memory_gib - 0.005) / ((*percent + 0.005) / 100);
        r.device_gib_max = (*r.memory_gib + 0.005) / ((*percent - 0.005) / 100);
      }
    } else if (key == "tps" || key == "wps") {
      SetLogNumber(r.printed_tokens_per_s_per_gpu, value);
    } else if (key == "tflops") {
      SetLogNumber(r.printed_tflops_per_gpu, value);
    } else if (key == "mfu") {
      if (!value.empty() && value.back() == '%')
        SetLogNumber(r.printed_mfu, value.substr(0, value.size() - 1), 0.01);
    }
  }
  if (!have_step) return false;
  r.format = LogFormat::kTorchtitan;
  if (auto t = FindLeadingTimestamp(text.substr(0, st))) r.timestamp_s = *t;
  return true;
}

// verl's timers (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:
// verl/trainer/ppo/ray_trainer.py, RayPPOTrainer.fit; verl/trainer/ppo/metric_utils.py,
// compute_timing_metrics and compute_throughout_metrics): marked_timer("step") wraps the whole
// iteration, generation (timing_s/gen), reward, old_log_prob, ref, values, adv, update_critic,
// update_actor and update_weights, so timing_s/step is an RL iteration, not a trainer step, and
// perf/throughput is total_num_tokens / (timing_s/step x every GPU of the resource pools).
// marked_timer("update_actor") wraps _update_actor: the actor workers' update_actor
// (verl/workers/megatron_workers.py and fsdp_workers.py), which reloads offloaded weights and
// optimizer, runs update_policy (forward and backward over the batch's tokens in mini-batches,
// ppo_epochs times, with their optimizer steps) and offloads again. That is where the trainer's
// FLOP run: it is the step time here, and the iteration is kept apart as rl_iteration_s.
bool ParseVerlLine(std::string_view text, StepRecord& r) {
  // "step:12 - global_seqlen/min:2031442 - ... - timing_s/step:1238.5 - perf/throughput:170.57"
  const size_t st = text.find("step:");
  if (st == std::string_view::npos || (st > 0 && text[st - 1] != ' ')) return false;
  if (text.find(" - ", st) == std::string_view::npos) return false;
  bool have_step = false, trained = false;
  // verl's compute_data_metrics: prompt_length/{mean,max} and response_length/{mean,max}.
  std::optional<double> prompt_mean, prompt_max, response_mean;
  size_t pos = st;
  while (pos < text.size()) {
    size_t end = text.find(" - ", pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(pos, end - pos);
    pos = end + 3;
    const size_t colon = part.rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = TrimSpace(part.substr(0, colon));
    const std::string_view value = part.substr(colon + 1);
    if (key == "step") {
      if (auto s = ParseInt64(value)) r.step = *s, have_step = true;
    } else if (key == "timing_s/step") {
      SetLogNumber(r.rl_iteration_s, value);
      trained = true;
    } else if (key == "timing_s/testing" || key == "timing_s/save_checkpoint") {
      std::optional<double> v;
      SetLogNumber(v, value);
      if (v && *v > 0) r.validation_s = r.validation_s.value_or(0) + *v;
    } else if (key == "timing_s/update_actor") {
      SetLogNumber(r.step_time_s, value);
      trained = true;
    } else if (key == "actor/grad_norm") {
      SetLogNumber(r.grad_norm, value);
      trained = true;
    } else if (key == "actor/lr") {
      SetLogNumber(r.learning_rate, value);
    } else if (key == "perf/total_num_tokens") {
      SetLogNumber(r.tokens, value);
    } else if (key == "perf/throughput") {
      SetLogNumber(r.printed_tokens_per_s_per_gpu, value);
    } else if (key == "perf/mfu/actor") {
      SetLogNumber(r.printed_mfu, value);  // verl prints a fraction
    } else if (key == "perf/max_memory_reserved_gb") {
      SetLogNumber(r.memory_gib, value);  // verl divides by 1024**3
    } else if (key == "prompt_length/mean") {
      SetLogNumber(prompt_mean, value);
    } else if (key == "prompt_length/max") {
      SetLogNumber(prompt_max, value);
    } else if (key == "response_length/mean") {
      SetLogNumber(response_mean, value);
    } else if (key == "response_length/max") {
      SetLogNumber(r.response_max_tokens, value);
    }
  }
  if (prompt_mean && response_mean) r.sample_mean_tokens = *prompt_mean + *response_mean;
  if (prompt_max && r.response_max_tokens)
    r.sample_max_tokens = *prompt_max + *r.response_max_tokens;
  // step:0 carries validation metrics only: not a training step.
  if (!have_step || !trained) return false;
  r.format = LogFormat::kVerl;
  return true;
}

}  // namespace strata
