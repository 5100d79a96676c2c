#include "strata/rl/rollout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

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
  const Bytes one_max = in.kv.AllocatedForSequence(in.max_sequence_tokens);
  const Bytes one_mean = in.kv.AllocatedForSequence(in.mean_sequence_tokens);
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

Result<CollectiveCost> DecodeTpAllReduce(const DecodeInput& in, double batch, Detail detail) {
  if (in.tp_comm == nullptr) return InvalidInput("no collective model for the TP all-reduces");
  const GroupShape group{.ranks = in.tp, .nodes = 1, .ranks_per_node = in.tp};
  return in.tp_comm->Cost(CollectiveOp::kAllReduce,
                          in.tp_allreduce_bytes_per_sequence * std::max(1.0, batch), group,
                          CommAlgorithm::kAuto, detail);
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
  // TP's all-reduces wait for the layer's kernels and the next layer waits for them: in series.
  if (in.tp > 1 && in.tp_comm != nullptr && in.tp_allreduces_per_step > 0) {
    if (auto one = DecodeTpAllReduce(in, in.batch); one.ok()) {
      s.tp_allreduce = one->time * static_cast<double>(in.tp_allreduces_per_step);
    }
  }
  // Eager mode stretches the whole step (kernel launches fill the gaps CUDA graphs close); the
  // stretch is the engine's time too, so the kernels' time stays the roofline's.
  const Seconds kernels = std::max(s.memory_time, s.compute_time) + s.tp_allreduce;
  s.time = (kernels + in.step_overhead) * std::max(1.0, in.eager_factor);
  s.overhead = s.time - kernels;
  return s;
}

std::vector<int64_t> MixedSubmissionOrder(int64_t n) {
  const auto count = static_cast<size_t>(std::max<int64_t>(0, n));
  // 1 / golden ratio: the irrational whose multiples mod 1 spread most evenly (three-gap theorem).
  const double step = (std::sqrt(5.0) - 1) / 2;
  std::vector<double> key(count);
  for (size_t k = 0; k < count; ++k) {
    const double x = static_cast<double>(k) * step;
    key[k] = x - std::floor(x);
  }
  std::vector<int64_t> by_key(count);
  for (size_t k = 0; k < count; ++k) by_key[k] = static_cast<int64_t>(k);
  std::sort(by_key.begin(), by_key.end(), [&](int64_t a, int64_t b) {
    return key[static_cast<size_t>(a)] < key[static_cast<size_t>(b)];
  });
  std::vector<int64_t> order(count);
  for (size_t rank = 0; rank < count; ++rank) {
    order[static_cast<size_t>(by_key[rank])] = static_cast<int64_t>(rank);
  }
  return order;
}

DecodeSimulation SimulateDecode(const std::vector<double>& lengths, int64_t max_batch,
                                double prompt_tokens, const DecodeInput& decode) {
  DecodeSimulation sim;
  const size_t n = lengths.size();
  if (n == 0) return sim;
  const auto slots = static_cast<size_t>(std::max<int64_t>(1, max_batch));
  const size_t full_batch = std::min(n, slots);
  // Running samples as (finish step, start step), earliest finish on top.
  using Running = std::pair<double, double>;
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  double start_sum = 0;  // of the running samples: their mean progress is t - start_sum / b
  size_t next = 0;
  double t = 0;
  auto refill = [&] {
    while (next < n && running.size() < slots) {
      running.emplace(t + std::max(0.0, lengths[next]), t);
      start_sum += t;
      ++next;
    }
  };
  refill();
  DecodeInput d = decode;
  while (!running.empty()) {
    const double finish = running.top().first;
    const double steps = finish - t;
    if (steps > 0) {
      const auto b = static_cast<double>(running.size());
      d.batch = b;
      // The mean context over the interval: the running samples' mean progress at its start
      // plus half its steps (KV bytes grow linearly with context).
      d.context_tokens = prompt_tokens + (t - start_sum / b) + steps / 2;
      const DecodeStep step = DecodeRoofline(d);
      const Seconds cost = step.time * steps;
      sim.time += cost;
      sim.tp_allreduce += step.tp_allreduce * steps;
      sim.steps += steps;
      ++sim.intervals;
      if (running.size() == full_batch) {
        sim.full += cost;
        sim.full_steps += steps;
      } else {
        sim.draining += cost;
        sim.draining_steps += steps;
      }
    }
    t = finish;
    while (!running.empty() && running.top().first <= t) {
      start_sum -= running.top().second;
      running.pop();
    }
    if (running.empty()) start_sum = 0;  // no rounding residue into the next wave
    refill();
  }
  return sim;
}

GenerationTime ComputeGeneration(const GenerationInput& in) {
  GenerationTime g;
  const auto tp = static_cast<double>(std::max<int64_t>(1, in.decode.tp));
  // Prefix caching: the samples of one prompt share its prefill.
  g.prefill = (in.prefill_flop_per_token * (in.prompts * in.prompt_mean / tp)) /
              (in.decode.peak * in.prefill_efficiency);
  // Samples spread over instances as evenly as whole samples go: the step waits for the
  // instance with the most.
  g.samples = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(in.samples - 1e-9)));
  const auto n = static_cast<double>(g.samples);
  g.batch = std::max(1.0, std::min(n, static_cast<double>(in.concurrent_sequences)));
  g.bulk_steps = n * in.response.mean_tokens / g.batch;
  DecodeInput d = in.decode;
  d.batch = g.batch;
  d.context_tokens = in.prompt_mean + in.response.mean_tokens / 2;
  g.step = DecodeRoofline(d);
  g.bulk = g.step.time * g.bulk_steps;
  // The quantile lengths, submitted mixed, decoded by continuous batching.
  const std::vector<double> sorted = QuantileLengths(in.response, g.samples);
  const std::vector<int64_t> order = MixedSubmissionOrder(g.samples);
  std::vector<double> submitted(sorted.size());
  for (size_t k = 0; k < order.size(); ++k) submitted[k] = sorted[static_cast<size_t>(order[k])];
  g.simulation =
      SimulateDecode(submitted, static_cast<int64_t>(g.batch), in.prompt_mean, in.decode);
  g.decode = g.simulation.time;
  g.total = g.prefill + g.decode;
  return g;
}

}  // namespace strata
