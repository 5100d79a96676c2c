#include "strata/report/rl_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/core/strings.h"
#include "strata/core/table.h"

namespace strata {
namespace {

// What pricing an SGLang rollout with vLLM's model shares with SGLang and where it may differ:
// one list for the rollout line's summary and --explain's paragraph (docs/rl.md, "SGLang").
struct SglangPoint {
  std::string_view summary;  // the rollout line's words
  std::string_view detail;   // --explain's, with the sources
};
constexpr SglangPoint kSglangShared[] = {
    {"verl hands it gpu_memory_utilization as mem_fraction_static, the same TP and max_num_seqs",
     "verl starts SGLang with mem_fraction_static = gpu_memory_utilization, disable_cuda_graph = "
     "enforce_eager, tp_size = the rollout TP, max_running_requests = max_num_seqs "
     "(volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/workers/rollout/"
     "sglang_rollout/async_sglang_server.py:260-273)"},
    {"the KV cache per token is the model's",
     "the KV cache per token and the state per sequence are the model's, whatever the engine; "
     "the decode roofline reads the same weights and KV"},
};
constexpr SglangPoint kSglangMayDiffer[] = {
    {"what the fraction holds (SGLang's: weights and the KV pool; vLLM's: also the activation "
     "peak)",
     "SGLang's fraction is 'the memory used for static allocation (model weights and KV cache "
     "memory pool)' (sgl-project/sglang@001067fffe33427bee0ed2f007fb7551a1d76b44:python/sglang/"
     "srt/server_args.py, mem_fraction_static), so its activations and CUDA graphs sit outside "
     "it, where vLLM counts the activation peak inside (and CUDA graphs from 0.21): the KV cache "
     "priced here is smaller than SGLang's by the activation peak"},
    {"in CUDA-graph memory",
     "SGLang's CUDA-graph memory (its own captured batch sizes) is taken as vLLM's"},
    {"in the scheduler's time per decode step",
     "the engine's time per decode step is vLLM's measured 4 ms, not SGLang's scheduler (radix "
     "cache, overlap scheduling)"},
};

// "a, b and c": `last` before the last point, ", " between the others ("; " throughout when
// `last` is "; ").
template <size_t N>
std::string JoinPoints(const SglangPoint (&points)[N], std::string_view SglangPoint::*field,
                       std::string_view last) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? std::string(last) : (last == "; " ? "; " : ", ");
    out += points[i].*field;
  }
  return out;
}

std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }
std::string Sec(Seconds s) { return fmt::format("{:.1f}", s.s()); }

// A split's form when its count does not say it: r + t GPUs of each of several shared nodes.
std::string SplitShapeNote(const RlPlacementResult& r) {
  const SplitShape& s = r.shape;
  if (!s.shared_nodes || s.rollout_nodes == 1) return "";
  return fmt::format(" ({}+{} a node)", s.rollout_per_node, s.train_per_node);
}

std::string SplitMode(const RlPlacementResult& r) {
  return SplitShapeNote(r) + (r.one_step_off ? " one-step-off" : " sync");
}

std::string PlacementName(const RlPlacementResult& r) {
  if (r.placement == RlPlacement::kColocated) return "colocated";
  return fmt::format("split {}+{}{}", r.rollout_gpus, r.train_gpus, SplitMode(r));
}

// verl's dynamic batch: each pass's packed micro batches beside the fixed micro batch they
// replace (micro_batch.h).
std::string MicroBatchText(const RlEvaluation& e) {
  if (e.micro_batches.empty()) return "";
  const RlSpec& s = e.spec;
  const double longest = s.lengths.prompt_max + s.lengths.response_max;
  const auto micro = static_cast<double>(e.fixed_micro_batch);
  std::string out =
      "actor micro batches per GPU, verl's dynamic batch (batch.max_tokens_per_gpu):\n";
  for (const RlMicroBatch& m : e.micro_batches) {
    const double fixed = std::ceil(m.packed.samples_per_rank / micro);
    out += fmt::format(
        "  {}{}: {}; a fixed micro batch of {} sample{} would be {:.0f} of {} "
        "tokens\n",
        m.pass, m.per_mini_batch ? " (per mini batch)" : " (every sample)",
        DescribePacked(m.packed), e.fixed_micro_batch, e.fixed_micro_batch == 1 ? "" : "s", fixed,
        GroupDigits(micro * longest));
  }
  return out;
}

// The responses' distribution as the generation prices it (lengths.response_distribution).
std::string ResponsesText(const RlLengths& l) {
  const ResponseDistribution d = l.Responses();
  std::string shape;
  switch (d.shape) {
    case ResponseShape::kCappedExponential:
      shape = d.rate_per_token > 0 ? fmt::format("min(exponential of mean {} tokens, the cap)",
                                                 GroupDigits(1 / d.rate_per_token))
                                   : std::string("every sample at the cap");
      break;
    case ResponseShape::kUniform:
      shape = fmt::format("uniform from {} to {} tokens", GroupDigits(d.min_tokens),
                          GroupDigits(d.max_tokens));
      break;
    case ResponseShape::kFixed:
      shape = "every sample at the mean";
      break;
  }
  return fmt::format(
      "response lengths: {} ({}): mean {} tokens, max {} tokens, {:.1f}% of samples clipped at "
      "the max (verl's response_length/clip_ratio)",
      ResponseShapeName(d.shape), shape, GroupDigits(d.mean_tokens), GroupDigits(d.max_tokens),
      100 * d.ClipFraction());
}

std::string Header(const RlEvaluation& e) {
  const RlSpec& s = e.spec;
  const ResolvedJob& j = e.actor;
  std::string out;
  out +=
      fmt::format("RL job: {} on {}, {} x {}{}{}\n",
                  RlAlgorithmName(s.algorithm) == "grpo" ? "GRPO" : "PPO", j.model.name, j.world(),
                  j.gpu().name, j.cluster.name.empty() ? "" : " (cluster " + j.cluster.name + ")",
                  s.file.empty() ? "" : ", from " + s.file);
  out += fmt::format(
      "step: {} prompts x {} samples = {} samples; prompts {} / {} tokens (mean / max), "
      "responses {} / {} tokens; {} mini batch{} x {} epoch{}; reference model: {}\n",
      s.prompts, s.samples_per_prompt, GroupDigits(static_cast<double>(s.samples())),
      GroupDigits(s.lengths.prompt_mean), GroupDigits(s.lengths.prompt_max),
      GroupDigits(s.lengths.response_mean), GroupDigits(s.lengths.response_max), s.mini_batches,
      s.mini_batches == 1 ? "" : "es", s.epochs, s.epochs == 1 ? "" : "s",
      s.reference_model ? "yes" : "no");
  if (!s.old_log_prob_pass) {
    out +=
        "old log-probs: the rollout's (verl's rollout_correction.bypass_mode), no trainer pass\n";
  }
  if (!s.remove_padding) {
    out += fmt::format(
        "padding: every row of the trainer's passes is {} tokens (prompt max + response max; "
        "remove_padding: false, verl's use_remove_padding off)\n",
        GroupDigits(s.TrainerRowTokens()));
  }
  out += ResponsesText(s.lengths) + "\n";
  // The actor's trainer as its job names it (or the default framework, said to be assumed). A
  // configured split shows each side on its own GPUs: the training side's layout (its DP over
  // the training GPUs), the rollout's instances over the rollout GPUs; where the training side
  // cannot run, the placements table says why.
  const RlPlacementResult& c = e.configured;
  const bool split = s.placement == RlPlacement::kSplit && c.train_gpus > 0;
  std::string layout = LayoutHeader(j.layout(), j.model.HasLayers(FfnKind::kMoe));
  if (split) {
    layout = c.train_layout.has_value()
                 ? LayoutHeader(*c.train_layout, j.model.HasLayers(FfnKind::kMoe))
                 : std::string("not possible (placements below)");
  }
  out +=
      fmt::format("actor ({}{}, sharding {}){}: {}, from {}\n", j.spec.framework.name,
                  j.spec.framework.given ? "" : " ASSUMED", ShardingModeName(j.spec.sharding.mode),
                  split ? fmt::format(" on the split's {} training GPUs", c.train_gpus) : "",
                  layout, s.actor_job);
  out += MicroBatchText(e);
  const bool sglang = s.rollout.engine == "sglang";
  const int64_t rollout_gpus = split ? c.rollout_gpus : j.world();
  out += fmt::format(
      "rollout ({}){}: TP{} x {} instances, gpu_memory_utilization {:.2f}, "
      "max_num_seqs {}\n",
      fmt::format("{}{} {}.{}", RolloutEngineLabel(s), sglang ? ", priced as vLLM" : "",
                  s.rollout.vllm.major, s.rollout.vllm.minor),
      split ? fmt::format(" on the split's {} rollout GPUs", rollout_gpus) : "", s.rollout.tp,
      rollout_gpus / s.rollout.tp, s.rollout.gpu_memory_utilization, s.rollout.max_num_seqs);
  if (sglang) {
    out += fmt::format("  SGLang shares vLLM's model here: {}; it may differ in {} (--explain)\n",
                       JoinPoints(kSglangShared, &SglangPoint::summary, ", and "),
                       JoinPoints(kSglangMayDiffer, &SglangPoint::summary, " and "));
  }
  return out;
}

std::string KvLine(const RlEvaluation& e) {
  const KvFootprint& k = e.kv;
  // A sliding-window layer keeps at most its window of tokens per sequence: its bytes are a
  // per-token rate only up to the window, so they are printed apart from the per-token total.
  const int64_t full_layers = k.attention_layers - k.sliding_layers;
  std::string out = fmt::format("KV cache per rollout GPU (TP{}): {} per token", k.tp,
                                FormatBytesAuto(k.full_per_token));
  if (k.kv_heads_per_gpu > 0) {
    out += fmt::format(" ({} {}attention layer{}, {} KV head{} per GPU{})", full_layers,
                       k.sliding_layers > 0 ? "full-" : "", full_layers == 1 ? "" : "s",
                       k.kv_heads_per_gpu, k.kv_heads_per_gpu == 1 ? "" : "s",
                       e.actor.model.attention.num_kv_heads < k.tp ? ", replicated over TP" : "");
  }
  if (k.sliding_layers > 0) {
    out += fmt::format(", + {} per token up to the {}-token window ({} sliding-window layers)",
                       FormatBytesAuto(k.sliding_per_token),
                       GroupDigits(static_cast<double>(k.sliding_window)), k.sliding_layers);
  }
  if (k.state_layers > 0) {
    out += fmt::format(", {} fixed state per sequence ({} layers)",
                       FormatBytesAuto(k.state_per_sequence), k.state_layers);
  }
  if (k.block_tokens > 0) {
    out += fmt::format(
        "; vLLM's unified pages: attention in {}-token blocks, each state page padded to one "
        "(+{} a sequence)",
        k.block_tokens, FormatBytesAuto(k.state_padding_per_sequence));
  }
  return out + "\n";
}

std::string MemoryText(const RlEvaluation& e) {
  // A split job's GPUs each hold one side: the training GPUs the actor's ledger, the rollout GPUs
  // vLLM alone.
  const bool split = e.spec.placement == RlPlacement::kSplit;
  const RlPlacementResult& placed = split ? e.configured : e.colocated;
  if (split && placed.train_phases.empty()) {
    return fmt::format("\nmemory per GPU, {}: not placed ({})\n", PlacementName(placed),
                       placed.reason);
  }
  const RolloutMemory& m = placed.rollout_memory;
  std::string out = fmt::format("\nmemory per GPU, {} ({} card):\n", PlacementName(placed),
                                FormatGiB(e.ledger.capacity));
  Table t({{"phase", Align::kLeft}, {"GiB"}, {"what", Align::kLeft}});
  if (split) {
    t.AddRow({fmt::format("rollout GPUs ({})", placed.rollout_gpus), Gib(m.total),
              fmt::format("{} budget{}, nothing else", RolloutEngineLabel(e.spec),
                          m.cuda_graph_inside ? "" : " + CUDA graphs")});
    for (const RlPhaseMemory& p : placed.train_phases) {
      t.AddRow({fmt::format("training GPUs ({}): {}", placed.train_gpus, p.phase), Gib(p.bytes),
                p.items});
    }
  } else {
    for (const RlPhaseMemory& p : e.phases) t.AddRow({p.phase, Gib(p.bytes), p.items});
  }
  out += t.Render();
  const std::string kv = m.kv_cache.value() > 0 ? fmt::format("{} GiB KV cache", Gib(m.kv_cache))
                                                : fmt::format("no room for KV cache ({} GiB short)",
                                                              Gib(Bytes() - m.kv_cache));
  out += fmt::format(
      "rollout: {} GiB budget = {} GiB weights + {} GiB non-torch + {} GiB activations{} + {}; "
      "CUDA graphs {} GiB {}\n",
      Gib(m.budget), Gib(m.weights), Gib(m.non_torch), Gib(m.activation_peak),
      m.cuda_graph_inside ? fmt::format(" + {} GiB CUDA graphs", Gib(m.cuda_graph)) : "", kv,
      Gib(m.cuda_graph),
      m.cuda_graph_inside ? "inside the budget (vLLM >= 0.21)"
                          : "outside the budget (vLLM <= 0.20)");
  // In hundredths, the values that fit: the minimum rounded up, the maximum down (0.996 is not
  // 1.00).
  const std::string range = m.min_utilization <= m.max_utilization
                                ? fmt::format("gpu_memory_utilization {:.2f} to {:.2f} fits",
                                              std::ceil(m.min_utilization * 100) / 100,
                                              std::floor(m.max_utilization * 100) / 100)
                                : "no gpu_memory_utilization fits";
  out += fmt::format(
      "KV cache holds {:.1f} max-length sequences; {} run at once at the mean length "
      "(max_num_seqs {}); {}\n",
      m.max_length_sequences, m.concurrent_sequences, e.spec.rollout.max_num_seqs, range);
  if (!split && e.host_offload_per_node.value() > 0) {
    out += fmt::format("host memory for the offloaded trainer: {} per node\n",
                       FormatGiB(e.host_offload_per_node));
  }
  if (!m.fits) out += fmt::format("DOES NOT FIT: {}\n", m.reason);
  if (!e.fix.empty()) {
    out += fmt::format("smallest change that fits: {}{}\n", e.fix,
                       e.fix_note.empty() ? "" : fmt::format(" ({})", e.fix_note));
  }
  if (!split && !e.ledger.fits) {
    out += "the actor's update does not fit: see `strata memory` on its job\n";
  }
  return out;
}

std::string StepText(const RlSpec& spec, const RlPlacementResult& r) {
  std::string out = fmt::format("\nRL step, {} (s):\n", PlacementName(r));
  if (!r.valid) return out + fmt::format("  not possible: {}\n", r.reason);
  const RlTimes& t = r.times;
  const bool split = r.placement == RlPlacement::kSplit;
  if (split) {
    out += fmt::format(
        "  (a part's share is of the step's GPU time, {} s x {} GPUs: generation on the {} "
        "rollout GPUs, the training passes on the {} training GPUs, the sync and the idle time on "
        "all; idle is the time each side waits for the other, averaged over all GPUs)\n",
        Sec(t.step), PlacementGpus(r), r.rollout_gpus, r.train_gpus);
  }
  Table table({{"part", Align::kLeft},
               {"time (s)"},
               {split ? "share of GPU time (%)" : "share of step (%)"},
               {"how", Align::kLeft}});
  // Each row's time on the GPUs that run it: one side's when split, every GPU when colocated.
  int64_t gpus = PlacementGpus(r);
  auto row = [&](const std::string& name, Seconds s, const std::string& how) {
    table.AddRow({name, Sec(s), fmt::format("{:.1f}", 100 * GpuTimeShare(r, s, gpus)), how});
  };
  const GenerationTime& g = r.generation;
  if (split) gpus = r.rollout_gpus;
  row("generation", t.generation,
      fmt::format("prefill {} s; decode {:.0f} steps: {:.0f} at the full batch of {:.0f} "
                  "({:.1f} ms each, {}{} + {:.1f} ms engine) {} s, {:.0f} draining {} s{}",
                  Sec(g.prefill), g.simulation.steps, g.simulation.full_steps, g.batch,
                  g.step.time.ms(),
                  g.step.memory_time >= g.step.compute_time ? "HBM-bound" : "compute-bound",
                  g.step.tp_allreduce.value() > 0
                      ? fmt::format(" + {:.2f} ms TP all-reduce", g.step.tp_allreduce.ms())
                      : "",
                  g.step.overhead.ms(), Sec(g.simulation.full), g.simulation.draining_steps,
                  Sec(g.simulation.draining),
                  g.simulation.tp_allreduce.value() > 0
                      ? fmt::format("; {} s of it TP all-reduces", Sec(g.simulation.tp_allreduce))
                      : ""));
  if (split) gpus = r.train_gpus;
  row("old log-prob", t.old_log_prob,
      t.old_log_prob.value() > 0 ? "forward over every sample (step model)"
                                 : "none: the rollout's log-probs are the old ones (bypass mode)");
  // A job without a reference runs no reference pass: no row (it used to print 0.0 s).
  if (spec.reference_model) {
    row("reference", t.reference,
        spec.reference_in_actor ? "the actor's forward with its adapter disabled (ref_in_actor)"
                                : "the same forward on the reference weights");
  }
  const bool ppo = r.times.critic_values.value() > 0 || r.times.critic_update.value() > 0;
  if (ppo) {
    row("critic values", t.critic_values,
        "PPO: the critic's forward (the actor's model and layout)");
  }
  row("actor update", t.update,
      t.update_cp_a2a.value() > 0
          ? fmt::format("step model x mini batches x epochs; of which {} s exposed Ulysses "
                        "all-to-alls (Q, K, V before attention, the output after)",
                        Sec(t.update_cp_a2a))
          : std::string("step model x mini batches x epochs"));
  if (ppo) row("critic update", t.critic_update, "PPO: the critic's step x mini batches x epochs");
  gpus = PlacementGpus(r);
  row("weight sync", t.weight_sync,
      fmt::format("gather {:.2f} + convert {:.2f} + transfer {:.2f} + load {:.2f}",
                  r.sync.gather.s(), r.sync.convert.s(), r.sync.transfer.s(), r.sync.load.s()));
  if (t.offload.value() > 0) {
    // verl's FSDP2 parameters go through pageable memory, slower than the link (rl_step.cc).
    const bool pageable = std::any_of(
        r.offload.copies.begin(), r.offload.copies.end(),
        [](const OffloadCopy& c) { return c.what.find("pageable") != std::string::npos; });
    if (split) gpus = r.train_gpus;  // verl's workers copy on the training side
    row("offload copies", t.offload,
        fmt::format("{} of offloaded states per GPU over {} at {}{}", FormatGB(r.offload.bytes),
                    r.offload.level, FormatGBps(r.offload.rate),
                    pageable ? ", parameters at the pageable host rate" : ""));
  }
  gpus = PlacementGpus(r);
  if (t.idle.value() > 0) row("idle (GPU average)", t.idle, "one side waits for the other");
  table.AddSeparator();
  table.AddRow({"step", Sec(t.step), "100.0", ""});
  out += table.Render();
  return out;
}

// At most this many placement rows; beyond it the best valid splits are shown and the others
// counted (--json lists every one).
constexpr size_t kMaxPlacementRows = 16;
constexpr size_t kBestSplitsShown = 8;

std::string PlacementsText(const RlEvaluation& e) {
  std::string out =
      "\nplacements (whole nodes, or the same share of every node; sync: generate then train; "
      "one-step-off: generate step k+1 while training on k):\n";
  Table t({{"placement", Align::kLeft},
           {"generation (s)"},
           {"training (s)"},
           {"sync (s)"},
           {"idle (s)"},
           {"step (s)"},
           {"note", Align::kLeft}});
  auto add = [&](const RlPlacementResult& r, bool best) {
    if (!r.valid) {
      t.AddRow({PlacementName(r), "", "", "", "", "", r.reason});
      return;
    }
    const Seconds training = TrainingOf(r.times);
    t.AddRow({PlacementName(r), Sec(r.times.generation), Sec(training), Sec(r.times.weight_sync),
              Sec(r.times.idle), Sec(r.times.step), best ? "best split" : ""});
  };
  add(e.colocated, false);
  // A split that cannot run fails for both pipelines alike: one row names it.
  std::vector<size_t> rows;
  for (size_t i = 0; i < e.splits.size(); ++i) {
    const RlPlacementResult& r = e.splits[i];
    const bool pair_of_previous = i > 0 && !r.valid && !e.splits[i - 1].valid &&
                                  e.splits[i - 1].rollout_gpus == r.rollout_gpus &&
                                  e.splits[i - 1].shape.shared_nodes == r.shape.shared_nodes &&
                                  e.splits[i - 1].reason == r.reason;
    if (!pair_of_previous) rows.push_back(i);
  }
  std::string left_out;
  if (rows.size() + 1 > kMaxPlacementRows) {
    std::vector<size_t> valid;
    for (size_t i = 0; i < e.splits.size(); ++i) {
      if (e.splits[i].valid) valid.push_back(i);
    }
    std::stable_sort(valid.begin(), valid.end(), [&](size_t a, size_t b) {
      return e.splits[a].times.step < e.splits[b].times.step;
    });
    if (valid.size() > kBestSplitsShown) valid.resize(kBestSplitsShown);
    left_out = fmt::format(
        "{} splits evaluated ({} valid); the {} fastest shown, every one with its reason in "
        "--json\n",
        e.splits.size(),
        std::count_if(e.splits.begin(), e.splits.end(),
                      [](const RlPlacementResult& r) { return r.valid; }),
        valid.size());
    rows = valid;
  }
  for (size_t i : rows) {
    const RlPlacementResult& r = e.splits[i];
    const bool pair = !r.valid && i + 1 < e.splits.size() && !e.splits[i + 1].valid &&
                      e.splits[i + 1].rollout_gpus == r.rollout_gpus &&
                      e.splits[i + 1].shape.shared_nodes == r.shape.shared_nodes &&
                      e.splits[i + 1].reason == r.reason;
    if (pair) {
      t.AddRow({fmt::format("split {}+{}{} sync/one-step-off", r.rollout_gpus, r.train_gpus,
                            SplitShapeNote(r)),
                "", "", "", "", "", r.reason});
      continue;
    }
    add(r, static_cast<int>(i) == e.best_split);
  }
  out += t.Render();
  out += left_out;
  if (e.best_split >= 0 && e.colocated.valid) {
    const RlPlacementResult& b = e.splits[static_cast<size_t>(e.best_split)];
    out += fmt::format("colocated {} s per step against the best split's {} s ({}): {}\n",
                       Sec(e.colocated.times.step), Sec(b.times.step), PlacementName(b),
                       e.colocated.times.step <= b.times.step ? "colocate" : "split");
  }
  return out;
}

// Why the best split has no more rollout GPUs, with the numbers behind it (SplitLimit).
std::string LimitText(const RlEvaluation& e) {
  const SplitLimit& l = e.split_limit;
  const RlPlacementResult& b = e.splits[static_cast<size_t>(e.best_split)];
  std::string out = fmt::format(
      "  why more rollout GPUs stop helping: the best split, {}, is bounded by {}: step = {} = "
      "{} s (generation {} s, training {} s, sync {} s)",
      PlacementName(b), l.bound,
      b.one_step_off ? "max(generation, training) + sync" : "generation + training + sync",
      Sec(b.times.step), Sec(b.times.generation), Sec(TrainingOf(b.times)),
      Sec(b.times.weight_sync));
  if (l.next >= 0) {
    const RlPlacementResult& n = e.splits[static_cast<size_t>(l.next)];
    out += fmt::format(
        "; with more rollout GPUs, {}: generation {} s, training {} s, sync {} s, "
        "step {} s",
        PlacementName(n), Sec(n.times.generation), Sec(TrainingOf(n.times)),
        Sec(n.times.weight_sync), Sec(n.times.step));
  } else {
    out += "; no split with more rollout GPUs can run";
  }
  out += fmt::format(
      "; however many instances, generation cannot go below the longest sample decoded alone, "
      "{} tokens at batch 1 = {} s\n",
      GroupDigits(e.spec.lengths.response_max), Sec(l.longest_sample));
  return out;
}

std::string ExplainText(const RlEvaluation& e) {
  const RlPlacementResult& c = e.colocated;
  const GenerationTime& g = c.generation;
  const KvFootprint& k = e.kv;
  std::string out = "\nhow each number is computed (docs/rl.md):\n";
  if (!e.micro_batches.empty()) {
    out += fmt::format(
        "  dynamic batch: k = min(samples, ceil(samples x mean tokens / budget)) micro batches a "
        "rank (verl/utils/seqlen_balancing.py:387); its time is k balanced micro batches of "
        "the rank's tokens / k, its memory the largest one verl's partition forms: "
        "Karmarkar-Karp's differencing of each sample's workload 24,576 L + L^2 "
        "(calculate_workload) into k non-empty parts (get_seqlen_balanced_partitions), over the "
        "rank's samples {} (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7)\n",
        e.spec.remove_padding
            ? fmt::format("at the {}-token mean prompt + the {} responses' quantiles at (i + "
                          "0.5) / n",
                          GroupDigits(e.spec.lengths.prompt_mean),
                          ResponseShapeName(e.spec.lengths.Responses().shape))
            : fmt::format("each padded to prompt_max + response_max = {} tokens",
                          GroupDigits(e.spec.lengths.prompt_max + e.spec.lengths.response_max)));
  }
  out += fmt::format(
      "  KV per token per GPU = sum over attention layers of 2 x max(1, ceil(kv_heads / TP)) x "
      "head_dim x {} B = {} B; state per sequence = sum over GDN/Mamba layers of "
      "(heads / TP) x d_k x d_v x {} B + conv = {} B\n",
      e.spec.rollout.dtypes.kv_bytes, GroupDigits(k.full_per_token.count()),
      e.spec.rollout.dtypes.state_bytes, GroupDigits(k.state_per_sequence.count()));
  // TP's all-reduces, with the collective model's figures for one of them at this batch.
  std::string allreduce = " + no TP all-reduce (TP1)";
  if (e.decode.tp > 1) {
    auto one = DecodeTpAllReduce(e.decode, g.batch, Detail::kExplained);
    if (one.ok()) {
      allreduce = fmt::format(
          " + TP all-reduces {} x {:.1f} us = {:.2f} ms (2 a layer x {} layers, each {:.0f} "
          "sequences x {} hidden x 2 B = {} among {} GPUs on {}: {} {}, {:.1f} us latency + "
          "{:.1f} us bandwidth)",
          e.decode.tp_allreduces_per_step, one->time.us(), g.step.tp_allreduce.ms(),
          e.decode.tp_allreduces_per_step / 2, g.batch, e.actor.model.hidden_size,
          FormatBytesAuto(one->size), e.decode.tp, one->level, ToString(one->algorithm),
          NcclProtoName(one->protocol), one->latency_time.us(), one->bandwidth_time.us());
    }
  }
  out += fmt::format(
      "  decode step = max(HBM: ({} weights, routed experts x the {:.3f} a batch of {:.0f} "
      "touches, 1 - (1 - k/E)^B, + {} KV and state per GPU) / achieved HBM = {:.2f} ms, "
      "compute {:.2f} ms){} + the engine's {:.2f} ms per step = {:.2f} ms\n",
      FormatBytesAuto(g.step.weight_bytes), g.step.expert_fraction, g.batch,
      FormatBytesAuto(g.step.kv_bytes), g.step.memory_time.ms(), g.step.compute_time.ms(),
      allreduce, g.step.overhead.ms(), g.step.time.ms());
  const ResponseDistribution rd = e.spec.lengths.Responses();
  out += fmt::format(
      "  generation = prefill {} s + decode by continuous batching of {} samples an instance, "
      "lengths the {} distribution's quantiles at (i + 0.5) / {} submitted in golden-ratio "
      "order, at most {:.0f} at once: {} intervals between finishes, each its steps x the "
      "decode step at its batch and mean context; batch full {:.0f} steps {} s + draining "
      "{:.0f} steps {} s = {} s (no waiting, samples x mean / batch = {:.0f} steps x {:.2f} ms "
      "= {} s); = {} s\n",
      Sec(g.prefill), g.samples, ResponseShapeName(rd.shape), g.samples, g.batch,
      g.simulation.intervals, g.simulation.full_steps, Sec(g.simulation.full),
      g.simulation.draining_steps, Sec(g.simulation.draining), Sec(g.decode), g.bulk_steps,
      g.step.time.ms(), Sec(g.bulk), Sec(g.total));
  out += fmt::format(
      "  weight sync = gather {:.2f} s + {} / {} convert {:.2f} s + transfer {:.2f} s + load "
      "{:.2f} s\n",
      c.sync.gather.s(), FormatGB(c.sync.model_bytes),
      FormatGBps(e.constants.sync_convert_bandwidth), c.sync.convert.s(), c.sync.transfer.s(),
      c.sync.load.s());
  // A split's transfer: the configured split's, else the best split's.
  const RlPlacementResult* split =
      e.configured.placement == RlPlacement::kSplit && !e.configured.sync.link.empty()
          ? &e.configured
      : e.best_split >= 0 ? &e.splits[static_cast<size_t>(e.best_split)]
                          : nullptr;
  if (split != nullptr) {
    const WeightSync& w = split->sync;
    out += fmt::format(
        "  {} transfer = {} / {} over {} = {:.2f} s ({})\n", PlacementName(*split),
        FormatGB(w.model_bytes), FormatGBps(w.rate), w.link, w.transfer.s(),
        split->shape.one_node()
            ? "both sides in one node: verl's NCCL broadcast from the trainer's rank 0 stays on "
              "the node's GPU link"
            : "the rollout has GPUs on other nodes than the trainer's rank 0: verl's NCCL "
              "broadcast crosses the data NICs, each node taking the whole model in");
  }
  if (e.best_split >= 0) out += LimitText(e);
  if (!c.offload.copies.empty()) {
    out += fmt::format(
        "  offload copies = bytes moved per GPU / {} ({} a direction, or the pageable host rate "
        "where said; verl loads each offloaded state before its pass and offloads it after):\n",
        c.offload.level, FormatGBps(c.offload.rate));
    for (const OffloadCopy& copy : c.offload.copies) {
      out += fmt::format("    {}: {} = {:.2f} s\n", copy.what, FormatGB(copy.bytes), copy.time.s());
    }
    out += fmt::format("    total {} = {:.2f} s\n", FormatGB(c.offload.bytes), c.offload.total.s());
  }
  // Why H20 rollout is good: the same decode step on other parts.
  auto gpus = CompareDecode(e, {"H20", "H100 SXM", "H800"});
  if (gpus.ok()) {
    out += fmt::format(
        "\nthe same decode step (batch {:.0f}, context {:.0f} tokens, TP{}) on other GPUs, at the "
        "same efficiencies:\n",
        e.decode.batch, e.decode.context_tokens, e.decode.tp);
    Table t({{"GPU", Align::kLeft},
             {"step (ms)"},
             {"bound", Align::kLeft},
             {"tokens/s/GPU"},
             {"tokens/s per TDP watt"}});
    for (const GpuDecode& other : *gpus) {
      t.AddRow({other.gpu, fmt::format("{:.2f}", other.step.time.ms()),
                other.step.memory_time >= other.step.compute_time ? "HBM" : "compute",
                fmt::format("{:.0f}", other.tokens_per_s_per_gpu),
                fmt::format("{:.2f}", other.tokens_per_s_per_watt)});
    }
    out += t.Render();
  }
  if (e.spec.rollout.engine == "sglang") {
    out += fmt::format("\nSGLang, priced with vLLM's model:\n  shared: {}\n  may differ: {}\n",
                       JoinPoints(kSglangShared, &SglangPoint::detail, "; "),
                       JoinPoints(kSglangMayDiffer, &SglangPoint::detail, "; "));
  }
  out += "\nsources of the constants (data/rl_constants.yaml):\n";
  for (const auto& [name, source] : e.constants.sources) {
    out += fmt::format("  {}: {}\n", name, source);
  }
  return out;
}

Json TimesJson(const RlPlacementResult& r) {
  Json j;
  j["placement"] = PlacementName(r);
  j["rollout_gpus"] = r.rollout_gpus;
  j["train_gpus"] = r.train_gpus;
  if (r.placement == RlPlacement::kSplit) {
    j["shared_nodes"] = r.shape.shared_nodes;
    j["rollout_gpus_per_node"] = r.shape.rollout_per_node;
    j["train_gpus_per_node"] = r.shape.train_per_node;
  }
  j["valid"] = r.valid;
  if (r.placement == RlPlacement::kSplit && !r.train_phases.empty()) {
    // Each side's own memory per GPU, as the text's memory table gives it: the rollout GPUs hold
    // vLLM alone, the training GPUs each pass's peak of the actor's ledger at the side's layout.
    j["rollout_side_peak_bytes"] = JsonBytes(r.rollout_memory.total);
    j["train_side_peak_bytes"] = JsonBytes(r.train_peak);
    Json phases = Json::array();
    for (const RlPhaseMemory& p : r.train_phases) {
      phases.push_back({{"phase", p.phase}, {"bytes", JsonBytes(p.bytes)}});
    }
    j["train_side_phases"] = phases;
  }
  if (!r.valid) {
    j["reason"] = r.reason;
    return j;
  }
  j["generation_s"] = JsonNumber(r.times.generation.s());
  j["generation_full_batch_s"] = JsonNumber(r.generation.simulation.full.s());
  j["generation_draining_s"] = JsonNumber(r.generation.simulation.draining.s());
  j["generation_tp_allreduce_s"] = JsonNumber(r.generation.simulation.tp_allreduce.s());
  j["old_log_prob_s"] = JsonNumber(r.times.old_log_prob.s());
  j["reference_s"] = JsonNumber(r.times.reference.s());
  j["critic_values_s"] = JsonNumber(r.times.critic_values.s());
  j["update_s"] = JsonNumber(r.times.update.s());
  if (r.times.update_cp_a2a.value() > 0) {
    j["update_ulysses_all_to_all_s"] = JsonNumber(r.times.update_cp_a2a.s());
  }
  j["critic_update_s"] = JsonNumber(r.times.critic_update.s());
  j["weight_sync_s"] = JsonNumber(r.times.weight_sync.s());
  if (!r.sync.link.empty()) {
    j["sync_transfer_link"] = r.sync.link;
    j["sync_transfer_bytes_per_s"] = JsonNumber(r.sync.rate.value());
  }
  j["offload_s"] = JsonNumber(r.times.offload.s());
  j["offload_bytes"] = JsonNumber(r.offload.bytes.value());
  j["idle_s"] = JsonNumber(r.times.idle.s());
  j["step_s"] = JsonNumber(r.times.step.s());
  return j;
}

}  // namespace

std::string RenderRlJson(const RlEvaluation& e) {
  Json j = JsonDocument("rl");
  j["model"] = e.actor.model.name;
  j["gpus"] = e.actor.world();
  j["gpu"] = e.actor.gpu().name;
  j["samples"] = e.spec.samples();
  j["rollout_engine"] = e.spec.rollout.engine;
  const ResponseDistribution rd = e.spec.lengths.Responses();
  j["response_distribution"] = std::string(ResponseShapeName(rd.shape));
  j["response_mean_tokens"] = JsonNumber(rd.mean_tokens);
  j["response_max_tokens"] = JsonNumber(rd.max_tokens);
  j["response_clip_fraction"] = JsonNumber(rd.ClipFraction());
  Json micro = Json::array();
  for (const RlMicroBatch& m : e.micro_batches) {
    micro.push_back(
        {{"pass", m.pass},
         {"per_mini_batch", m.per_mini_batch},
         {"samples_per_rank", JsonNumber(m.packed.samples_per_rank)},
         {"budget_tokens", m.packed.budget_tokens},
         {"micro_batches", m.packed.micro_batches},
         {"tokens_per_micro_batch", JsonNumber(m.packed.tokens_per_micro_batch)},
         {"largest_micro_batch_tokens", JsonNumber(m.packed.largest_micro_batch_tokens)}});
  }
  if (!micro.empty()) j["dynamic_micro_batches"] = micro;
  j["kv_bytes_per_token_per_gpu"] = JsonBytes(e.kv.full_per_token + e.kv.sliding_per_token);
  j["state_bytes_per_sequence_per_gpu"] = JsonBytes(e.kv.state_per_sequence);
  const RolloutMemory& m = e.colocated.rollout_memory;
  Json mem;
  mem["rollout_fits"] = m.fits;
  if (!m.fits) mem["reason"] = m.reason;
  if (!e.fix.empty()) mem["fix"] = e.fix;
  mem["rollout_weights_bytes"] = JsonBytes(m.weights);
  mem["kv_cache_bytes"] = JsonBytes(m.kv_cache);
  mem["cuda_graph_bytes"] = JsonBytes(m.cuda_graph);
  mem["cuda_graph_inside_budget"] = m.cuda_graph_inside;
  mem["concurrent_sequences"] = m.concurrent_sequences;
  mem["min_gpu_memory_utilization"] = JsonNumber(m.min_utilization);
  mem["max_gpu_memory_utilization"] = JsonNumber(m.max_utilization);
  Json phases = Json::array();
  for (const RlPhaseMemory& p : e.phases) {
    phases.push_back({{"phase", p.phase}, {"bytes", JsonBytes(p.bytes)}});
  }
  mem["phases"] = phases;
  mem["host_offload_bytes_per_node"] = JsonBytes(e.host_offload_per_node);
  j["memory_per_gpu"] = mem;
  j["configured"] = TimesJson(e.configured);
  j["colocated"] = TimesJson(e.colocated);
  Json splits = Json::array();
  for (const RlPlacementResult& r : e.splits) splits.push_back(TimesJson(r));
  j["splits"] = splits;
  j["best_split"] = e.best_split >= 0
                        ? Json(PlacementName(e.splits[static_cast<size_t>(e.best_split)]))
                        : Json(nullptr);
  return DumpJson(j);
}

std::string RenderRlText(const RlEvaluation& e, bool explain) {
  std::string text = Header(e) + KvLine(e) + MemoryText(e);
  text += StepText(e.spec, e.configured);
  text += PlacementsText(e);
  if (explain) text += ExplainText(e);
  return text;
}

namespace {

std::string Number(double v, const std::string& unit) {
  if (unit == "fraction") return fmt::format("{:.3f}", v);  // a share of samples, 0 to 1
  return unit == "s" ? fmt::format("{:.1f}", v) : fmt::format("{:.0f}", v);
}

std::string SemanticsText(const VerlComparison& c) {
  return c.semantics == VerlGenSemantics::kIncludesSync
             ? "timing_s/gen read as generation + weight sync (verl <= 0.7.0)"
             : "timing_s/gen read as generation alone, the sync as timing_s/update_weights "
               "(verl >= 0.7.1)";
}

}  // namespace

namespace {

// The measured-against-predicted table of a log's phases (with the job priced again at the log's
// lengths beside it, when it was), the note on that column, and the lines read only in part.
std::string PhaseTable(const std::vector<VerlPhaseRow>& rows, const std::string& lengths_note,
                       const std::vector<std::string>& notes) {
  const bool at_lengths = std::any_of(rows.begin(), rows.end(), [](const VerlPhaseRow& r) {
    return r.predicted_at_measured_lengths.has_value();
  });
  std::vector<Column> columns{{"metric", Align::kLeft},
                              {"unit", Align::kLeft},
                              {"measured"},
                              {"steps"},
                              {"strata"},
                              {"error (%)"}};
  if (at_lengths) {
    columns.push_back({"at the log's lengths"});
    columns.push_back({"error (%)"});
  }
  columns.push_back({"strata's quantity", Align::kLeft});
  Table table(columns);
  auto error = [](const std::optional<double>& e) {
    return e ? fmt::format("{:+.0f}", 100 * *e) : std::string();
  };
  for (const VerlPhaseRow& r : rows) {
    std::vector<std::string> cells{r.key,
                                   r.unit,
                                   r.measured ? Number(*r.measured, r.unit) : "not in the log",
                                   std::to_string(r.measured_steps),
                                   Number(r.predicted, r.unit),
                                   error(r.error)};
    if (at_lengths) {
      cells.push_back(r.predicted_at_measured_lengths
                          ? Number(*r.predicted_at_measured_lengths, r.unit)
                          : std::string("-"));
      cells.push_back(error(r.error_at_measured_lengths));
    }
    cells.push_back(r.predicted_from);
    table.AddRow(cells);
  }
  std::string out = table.Render();
  if (!lengths_note.empty()) {
    out += fmt::format(
        "\n{}: {}\n",
        at_lengths ? "at the log's lengths, the job priced again with" : "at the log's lengths",
        lengths_note);
  }
  if (!notes.empty()) {
    out += "\nread in part:\n";
    for (const std::string& n : notes) out += "  " + n + "\n";
  }
  return out;
}

// The fields every log comparison's JSON opens with: the job, the placement, the log and its steps.
Json LogJsonHead(const char* kind, const RlEvaluation& e, const std::string& log_path,
                 int64_t steps, int64_t first_step, int64_t last_step) {
  Json j = JsonDocument(kind);
  j["model"] = e.actor.model.name;
  j["placement"] = PlacementName(e.configured);
  j["log"] = log_path;
  j["steps"] = steps;
  j["first_step"] = first_step;
  j["last_step"] = last_step;
  return j;
}

Json PhaseRowsJson(const std::vector<VerlPhaseRow>& rows) {
  Json out = Json::array();
  for (const VerlPhaseRow& r : rows) {
    Json row;
    row["metric"] = r.key;
    row["unit"] = r.unit;
    row["measured"] = r.measured ? JsonNumber(*r.measured) : Json(nullptr);
    row["measured_steps"] = r.measured_steps;
    row["predicted"] = JsonNumber(r.predicted);
    row["error"] = r.error ? JsonNumber(*r.error) : Json(nullptr);
    row["predicted_from"] = r.predicted_from;
    row["predicted_at_measured_lengths"] = r.predicted_at_measured_lengths
                                               ? JsonNumber(*r.predicted_at_measured_lengths)
                                               : Json(nullptr);
    row["error_at_measured_lengths"] =
        r.error_at_measured_lengths ? JsonNumber(*r.error_at_measured_lengths) : Json(nullptr);
    out.push_back(row);
  }
  return out;
}

}  // namespace

std::string RenderVerlLogText(const RlEvaluation& e, const VerlLog& log, const VerlComparison& c,
                              const std::string& log_path) {
  std::string out = Header(e);
  out += fmt::format("verl log: {}, {} training step{} (step {} to {})\n", log_path, c.steps,
                     c.steps == 1 ? "" : "s", c.first_step, c.last_step);
  out += fmt::format("{}: {}\n", SemanticsText(c), c.semantics_source);
  if (!c.batch_mismatch.empty()) out += "warning: " + c.batch_mismatch + "\n";
  if (c.validation_steps > 0) {
    out += fmt::format(
        "{} step{} with timing_s/testing or timing_s/save_checkpoint left out of timing_s/step "
        "and perf/throughput (verl <= 0.5.x times the validation and the checkpoint inside the "
        "step): their mean step {}\n",
        c.validation_steps, c.validation_steps == 1 ? "" : "s",
        c.validation_step_mean_s ? fmt::format("{:.1f} s", *c.validation_step_mean_s)
                                 : std::string("not printed"));
  }
  out += fmt::format("\nmeasured (mean over the log's steps) against strata rl ({}):\n",
                     PlacementName(e.configured));
  return out + PhaseTable(c.rows, c.measured_lengths_note, log.notes);
}

std::string RenderVerlLogJson(const RlEvaluation& e, const VerlLog& log, const VerlComparison& c,
                              const std::string& log_path) {
  Json j = LogJsonHead("rl-verl-log", e, log_path, c.steps, c.first_step, c.last_step);
  j["gen_includes_weight_sync"] = c.semantics == VerlGenSemantics::kIncludesSync;
  j["semantics_source"] = c.semantics_source;
  j["rows"] = PhaseRowsJson(c.rows);
  j["measured_lengths_note"] = c.measured_lengths_note;
  j["batch_mismatch"] = c.batch_mismatch.empty() ? Json(nullptr) : Json(c.batch_mismatch);
  j["validation_steps"] = c.validation_steps;
  j["validation_step_mean_s"] =
      c.validation_step_mean_s ? JsonNumber(*c.validation_step_mean_s) : Json(nullptr);
  j["notes"] = log.notes;
  return DumpJson(j);
}

std::string RenderOpenRlhfLogText(const RlEvaluation& e, const OpenRlhfLog& log,
                                  const OpenRlhfComparison& c, const std::string& log_path) {
  std::string out = Header(e);
  out += fmt::format("OpenRLHF log: {}, {} step{} (global step {} to {})\n", log_path, c.steps,
                     c.steps == 1 ? "" : "s", c.first_step, c.last_step);
  out += fmt::format("\nmeasured (mean over the log's steps) against strata rl ({}):\n",
                     PlacementName(e.configured));
  out += PhaseTable(c.rows, c.measured_lengths_note, log.notes);
  if (!c.caveats.empty()) {
    out += "\nhow to read it:\n";
    for (const std::string& s : c.caveats) out += "  " + s + "\n";
  }
  return out;
}

std::string RenderOpenRlhfLogJson(const RlEvaluation& e, const OpenRlhfLog& log,
                                  const OpenRlhfComparison& c, const std::string& log_path) {
  Json j = LogJsonHead("rl-openrlhf-log", e, log_path, c.steps, c.first_step, c.last_step);
  j["rows"] = PhaseRowsJson(c.rows);
  j["measured_lengths_note"] = c.measured_lengths_note;
  j["caveats"] = c.caveats;
  j["notes"] = log.notes;
  return DumpJson(j);
}

}  // namespace strata
