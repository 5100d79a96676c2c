#include "strata/rl/rollout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace strata {

RolloutMemory ComputeRolloutMemory(const RolloutMemoryInput& in) {
  RolloutMemory m;
  m.budget = in.capacity * in.utilization;
  m.weights = in.weights;
  m.non_torch = in.non_torch;
  m.activation_peak = in.activation_peak;
  m.cuda_graph = in.cuda_graph;
  m.cuda_graph_inside = in.cuda_graph_inside;
  m.resident = in.resident;
  const Bytes graph_inside = in.cuda_graph_inside ? in.cuda_graph : Bytes();
  const Bytes graph_outside = in.cuda_graph_inside ? Bytes() : in.cuda_graph;
  // vLLM's profile: the KV cache is what the budget leaves after weights, non-torch memory and
  // the profiling run's activation peak (and, from 0.21, the CUDA graphs).
  m.kv_cache = m.budget - in.weights - in.non_torch - in.activation_peak - graph_inside;
  m.total = in.resident + m.budget + graph_outside;
  const Bytes one_max = in.kv.ForSequence(in.max_sequence_tokens);
  const Bytes one_mean = in.kv.ForSequence(in.mean_sequence_tokens);
  const double kv = std::max(0.0, m.kv_cache.value());
  m.max_length_sequences = one_max.value() > 0 ? kv / one_max.value() : 0;
  const double at_mean = one_mean.value() > 0 ? std::floor(kv / one_mean.value()) : 0;
  m.concurrent_sequences = std::min(in.max_num_seqs, static_cast<int64_t>(std::min(at_mean, 1e12)));
  const Bytes floor = in.weights + in.non_torch + in.activation_peak + graph_inside + one_max;
  m.min_utilization = floor / in.capacity;
  m.max_utilization = std::min(1.0, (in.capacity - in.resident - graph_outside) / in.capacity);

  if (m.min_utilization > m.max_utilization) {
    m.fits = false;
    m.reason = fmt::format(
        "no gpu_memory_utilization fits: one max-length sequence ({:.0f} tokens) needs {:.2f} "
        "of the GPU ({} weights, {} KV for it, {} non-torch and activations{}), and at most "
        "{:.2f} is free beside {} resident{}",
        in.max_sequence_tokens, m.min_utilization, FormatGiB(in.weights), FormatGiB(one_max),
        FormatGiB(in.non_torch + in.activation_peak), in.cuda_graph_inside ? ", CUDA graphs" : "",
        m.max_utilization, FormatGiB(in.resident),
        in.cuda_graph_inside ? "" : " and the CUDA graphs vLLM keeps outside its budget");
  } else if (in.utilization < m.min_utilization) {
    m.fits = false;
    m.reason = fmt::format(
        "gpu_memory_utilization {:.2f} leaves {}, less than one max-length sequence "
        "({:.0f} tokens, {}): vLLM refuses to start; {:.2f} to {:.2f} fits",
        in.utilization,
        m.kv_cache.value() > 0
            ? FormatGiB(m.kv_cache) + " of KV cache"
            : fmt::format("no KV cache ({} short)", FormatGiB(Bytes() - m.kv_cache)),
        in.max_sequence_tokens, FormatGiB(one_max), m.min_utilization, m.max_utilization);
  } else if (in.utilization > m.max_utilization) {
    m.fits = false;
    m.reason = fmt::format(
        "gpu_memory_utilization {:.2f} asks for {} but only {} is free beside {} resident{}; "
        "{:.2f} to {:.2f} fits",
        in.utilization, FormatGiB(m.budget), FormatGiB(in.capacity - in.resident - graph_outside),
        FormatGiB(in.resident), in.cuda_graph_inside ? "" : " and the CUDA graphs",
        m.min_utilization, m.max_utilization);
  }
  return m;
}

double ExpertsTouchedFraction(int64_t experts, int64_t top_k, double batch) {
  if (experts <= 0) return 1;
  const double miss = 1.0 - static_cast<double>(top_k) / static_cast<double>(experts);
  return 1.0 - std::pow(std::max(0.0, miss), std::max(1.0, batch));
}

DecodeStep DecodeRoofline(const DecodeInput& in) {
  DecodeStep s;
  const auto tp = static_cast<double>(std::max<int64_t>(1, in.tp));
  s.expert_fraction = ExpertsTouchedFraction(in.experts, in.top_k, in.batch);
  s.weight_bytes = (in.dense_weights + in.expert_weights * s.expert_fraction) / tp;
  // KV read for the whole context; a fixed state is read and written back.
  const Bytes per_sequence = in.kv.ForSequence(in.context_tokens) + in.kv.state_per_sequence;
  s.kv_bytes = per_sequence * in.batch;
  s.memory_time = (s.weight_bytes + s.kv_bytes) / (in.hbm_bandwidth * in.hbm_efficiency);
  s.compute_time = (in.flop_per_token * (in.batch / tp)) / (in.peak * in.compute_efficiency);
  // Eager mode stretches the whole step (kernel launches fill the gaps CUDA graphs close); the
  // stretch is the engine's time too, so the kernels' time stays the roofline's.
  const Seconds kernels = std::max(s.memory_time, s.compute_time);
  s.time = (kernels + in.step_overhead) * std::max(1.0, in.eager_factor);
  s.overhead = s.time - kernels;
  return s;
}

GenerationTime ComputeGeneration(const GenerationInput& in) {
  GenerationTime g;
  const auto tp = static_cast<double>(std::max<int64_t>(1, in.decode.tp));
  // Prefix caching: the samples of one prompt share its prefill.
  g.prefill = (in.prefill_flop_per_token * (in.prompts * in.prompt_mean / tp)) /
              (in.decode.peak * in.prefill_efficiency);
  g.batch = std::max(1.0, std::min(in.samples, static_cast<double>(in.concurrent_sequences)));
  g.bulk_steps = in.samples * in.response_mean / g.batch;
  DecodeInput d = in.decode;
  d.batch = g.batch;
  d.context_tokens = in.prompt_mean + in.response_mean / 2;
  g.step = DecodeRoofline(d);
  g.bulk = g.step.time * g.bulk_steps;
  // The longest sample: response_max steps, alone at the end at the latest.
  DecodeInput last = in.decode;
  last.batch = 1;
  last.context_tokens = in.prompt_mean + in.response_max / 2;
  g.tail_bound = DecodeRoofline(last).time * in.response_max;
  g.decode = std::max(Seconds(g.bulk * in.tail_factor), g.tail_bound);
  g.total = g.prefill + g.decode;
  return g;
}

}  // namespace strata
