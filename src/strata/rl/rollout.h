// The rollout engine (vLLM) on one GPU and one instance: its memory (weights in the rollout
// layout, the KV cache gpu_memory_utilization leaves, CUDA graphs inside or outside that budget
// by version, what the colocated trainer keeps resident) and its time (prefill at the GEMM
// efficiency, decode as a roofline over the bytes each decode step reads plus its TP
// all-reduces and the engine's own time per step, and continuous batching of the samples' response
// lengths, whose longest ones the step waits for). Formulas with the reference job's numbers:
// docs/rl.md.
#ifndef STRATA_RL_ROLLOUT_H_
#define STRATA_RL_ROLLOUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/core/detail.h"
#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/rl/kv_cache.h"
#include "strata/rl/response_lengths.h"

namespace strata {

struct RolloutMemoryInput {
  Bytes capacity;  // the GPU's memory
  Bytes weights;   // rollout weights on one GPU
  Bytes resident;  // what else stays on the GPU while vLLM runs (the colocated trainer)
  KvFootprint kv;
  double max_sequence_tokens = 0;   // prompt_max + response_max
  double mean_sequence_tokens = 0;  // prompt_mean + response_mean
  double utilization = 0.5;         // gpu_memory_utilization
  bool cuda_graph_inside = false;   // vLLM >= 0.21 counts CUDA graphs inside the budget
  Bytes non_torch;
  Bytes activation_peak;
  Bytes cuda_graph;
  int64_t max_num_seqs = 1024;
};

struct RolloutMemory {
  Bytes budget;  // utilization x capacity: what vLLM takes
  Bytes weights;
  Bytes non_torch;
  Bytes activation_peak;
  Bytes cuda_graph;
  bool cuda_graph_inside = false;
  Bytes kv_cache;  // budget - weights - non_torch - activation_peak (- graphs when inside)
  Bytes resident;
  Bytes total;                       // resident + budget (+ graphs when outside)
  double max_length_sequences = 0;   // KV cache / bytes of one max-length sequence
  int64_t concurrent_sequences = 0;  // at the mean length, capped by max_num_seqs
  double min_utilization = 0;        // the smallest that holds one max-length sequence
  double max_utilization = 0;        // the largest that fits beside what is resident
  bool fits = true;
  std::string reason;  // when !fits: which limit, with the numbers
};

RolloutMemory ComputeRolloutMemory(const RolloutMemoryInput& in);

/// The fraction of E experts a batch of B tokens with top-k routing touches, with uniform
/// independent routing: 1 - (1 - k/E)^B. 1 for a dense model (E = 0).
double ExpertsTouchedFraction(int64_t experts, int64_t top_k, double batch);

/// One decode step of one instance, per GPU: every weight is read once (routed experts only
/// those the batch touches), every sequence's KV is read and its fixed state read and written.
struct DecodeInput {
  Bytes dense_weights;   // the instance's weights read every step (all but routed experts)
  Bytes expert_weights;  // the instance's routed experts
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t tp = 1;
  KvFootprint kv;  // per GPU
  double batch = 1;
  double context_tokens = 0;  // mean context of the sequences in the batch
  FlopCount flop_per_token;   // forward, the whole model
  BytesPerSecond hbm_bandwidth;
  double hbm_efficiency = 1;
  FlopPerSecond peak;
  double compute_efficiency = 1;
  /// The engine's own time per decode step, outside the kernels the roofline prices (scheduler,
  /// input preparation, sampler sync): data/rl_constants.yaml decode.step_overhead_ms.
  Seconds step_overhead;
  /// vLLM without CUDA graphs (enforce_eager): the whole step, kernels and engine time, takes
  /// this factor longer (data/rl_constants.yaml decode.eager_factor); 1 with CUDA graphs.
  double eager_factor = 1;
  /// Tensor parallelism's all-reduces: with TP > 1 every layer sums its partial outputs twice a
  /// decode step (after attention and after the MLP or MoE), each batch x hidden x 2 B of bf16
  /// activations, among the instance's TP ranks of one node. Small and latency-bound; priced by
  /// `tp_comm` (the cluster's collective model, on the bandwidth-map level of a TP group inside
  /// a node). Without a model, or at TP1, none.
  std::shared_ptr<const CollectiveModel> tp_comm;
  int64_t tp_allreduces_per_step = 0;     // 2 x layers
  Bytes tp_allreduce_bytes_per_sequence;  // hidden x 2 B: one token's activations
};

/// One of a decode step's TP all-reduces at `batch` sequences (DecodeInput::tp_comm); an error
/// where the collective model cannot price it. `detail` kExplained names the level it runs on.
Result<CollectiveCost> DecodeTpAllReduce(const DecodeInput& in, double batch,
                                         Detail detail = Detail::kNumbersOnly);

struct DecodeStep {
  double expert_fraction = 0;
  Bytes weight_bytes;  // per GPU
  Bytes kv_bytes;      // per GPU
  Seconds memory_time;
  Seconds compute_time;
  Seconds tp_allreduce;  // the step's TP all-reduces, in series with the kernels (0 at TP1)
  Seconds overhead;  // the engine's per-step time, added to the kernels' (eager: its launches too)
  Seconds time;      // the larger of memory and compute, + the all-reduces, + the overhead
};

DecodeStep DecodeRoofline(const DecodeInput& in);

/// The order n samples are submitted in, as quantile indices (0 the shortest): the k-th
/// submitted is the rank of frac(k x 0.618...) among frac(j x 0.618...), j < n, the golden
/// ratio's low-discrepancy sequence. A real batch arrives in no length order; sorted
/// shortest-first would leave every long sample to the end (too slow), longest-first is the
/// optimal LPT schedule no engine knows to use (too fast). This order is a deterministic
/// stand-in for a shuffle: every prefix of it holds nearly the distribution's own mix, for any
/// n (a bit-reversal order does so only for powers of two). O(n log n).
std::vector<int64_t> MixedSubmissionOrder(int64_t n);

/// vLLM's continuous batching of one instance, simulated by events: every sample is submitted
/// at once, at most `max_batch` decode together, and a finished sample's slot goes to the next
/// in the queue at once. Between two finishes the batch is constant, so each interval costs
/// its steps x one decode step at its batch and its mean context (prompt + tokens generated so
/// far, averaged over the interval). O(n log n) for n samples, one roofline per interval.
struct DecodeSimulation {
  Seconds time;
  double steps = 0;  // decode steps of the instance: the longest chain of samples a slot ran
  Seconds full;      // while min(n, max_batch) sequences decode
  double full_steps = 0;
  Seconds draining;  // after, the batch shrinking to the last sample
  double draining_steps = 0;
  int64_t intervals = 0;  // distinct batch sizes in a row (events)
  Seconds tp_allreduce;   // of `time`: the TP all-reduces of every step (0 at TP1)
};

/// `lengths` are decode steps (tokens) per sample in submission order; `decode` is priced with
/// its batch and context_tokens replaced per interval (its flop_per_token, counted at one
/// context by the caller, stays: decode is HBM-bound and compute only caps large batches).
DecodeSimulation SimulateDecode(const std::vector<double>& lengths, int64_t max_batch,
                                double prompt_tokens, const DecodeInput& decode);

/// Generation of one RL step on one instance.
struct GenerationInput {
  DecodeInput decode;  // batch and context are set here
  double prompts = 0;  // unique prompts on the instance (prefilled once each)
  double samples = 0;  // sequences generated on the instance (rounded up to whole samples)
  double prompt_mean = 0;
  ResponseDistribution response;     // the samples' lengths
  FlopCount prefill_flop_per_token;  // forward FLOP per prompt token
  double prefill_efficiency = 1;     // of the dense peak
  int64_t concurrent_sequences = 1;  // what the KV cache (and max_num_seqs) allows
};

struct GenerationTime {
  Seconds prefill;
  int64_t samples = 0;          // whole samples on the instance
  double batch = 0;             // sequences decoding together at most: min(samples, concurrent)
  double bulk_steps = 0;        // samples x mean response / batch: every slot busy to the end
  DecodeStep step;              // at the batch, mid-response context
  Seconds bulk;                 // bulk_steps x step: generation if no sample waited for another
  DecodeSimulation simulation;  // continuous batching of the quantile lengths
  Seconds decode;               // the simulation's time
  Seconds total;                // prefill + decode
};

GenerationTime ComputeGeneration(const GenerationInput& in);

}  // namespace strata

#endif  // STRATA_RL_ROLLOUT_H_
