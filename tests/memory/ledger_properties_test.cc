// Properties the ledger must keep for every model and layout, checked over a grid: sharding
// more never adds weight bytes, the distributed optimizer never adds optimizer bytes, full
// recompute never adds activation bytes over none.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "memory/memory_test_support.h"

namespace strata::ledger_properties_test {
namespace {

using testing::Constants;

struct ModelCase {
  const char* model;
  std::vector<int64_t> eps;  // EP values to try (1 for dense models)
};

// 64 GPUs (8 nodes x 8) so that TP, PP and EP up to 8 are all valid layouts.
const ModelCase kModels[] = {
    {"qwen3.6-35b-a3b", {1, 2, 4, 8}},
    {"qwen3-30b-a3b", {1, 2, 4, 8}},
    {"mixtral-8x7b", {1, 2, 4, 8}},
    {"llama-3.1-8b", {1}},
};

/// The job for a model and layout, or nothing when megatron-core's rules reject the layout.
std::optional<Job> Layout(const std::string& model, int64_t tp, int64_t pp, int64_t ep,
                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {
      "model=" + model, "cluster.nodes=8", "batch.global_batch=512", "sequence.max_tokens=32768",
      fmt::format("parallel.tp={}", tp), fmt::format("parallel.pp={}", pp),
      fmt::format("parallel.ep={}", ep),
      // megatron-core requires sequence parallelism with TP > 1 and EP > 1.
      fmt::format("parallel.sequence_parallel={}", tp > 1)};
  sets.insert(sets.end(), extra.begin(), extra.end());
  auto spec = LoadJobSpec(kReferenceJobName, sets);
  if (!spec.ok()) return std::nullopt;
  auto job = ResolveJob(*spec);
  if (!job.ok()) return std::nullopt;
  return *job;
}

/// The largest weight bytes over the pipeline stages.
Bytes MaxStageWeights(const Job& job, const MemoryConstants& constants) {
  Bytes most;
  for (int64_t s = 0; s < job.spec.layout.pp; ++s) {
    most = std::max(most, ComputeStageLedger(job, constants, s).Total(ItemKind::kWeights));
  }
  return most;
}

TEST(LedgerProperties, MoreShardingNeverRaisesWeightBytes) {
  const MemoryConstants constants = Constants();
  int compared = 0;
  for (const auto& m : kModels) {
    for (int64_t tp : {1, 2, 4}) {
      for (int64_t pp : {1, 2, 4}) {
        for (int64_t ep : m.eps) {
          auto base = Layout(m.model, tp, pp, ep);
          if (!base) continue;
          const Bytes weights = MaxStageWeights(*base, constants);
          const std::pair<const char*, std::optional<Job>> more[] = {
              {"2 x TP", Layout(m.model, 2 * tp, pp, ep)},
              {"2 x PP", Layout(m.model, tp, 2 * pp, ep)},
              {"2 x EP", Layout(m.model, tp, pp, 2 * ep)}};
          for (const auto& [what, job] : more) {
            if (!job) continue;
            ++compared;
            EXPECT_LE(MaxStageWeights(*job, constants).value(), weights.value())
                << m.model << " TP" << tp << " PP" << pp << " EP" << ep << " -> " << what;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 40);  // the grid really ran
}

TEST(LedgerProperties, DistributedOptimizerNeverRaisesOptimizerBytes) {
  const MemoryConstants constants = Constants();
  int compared = 0;
  for (const auto& m : kModels) {
    for (int64_t tp : {1, 2, 4}) {
      for (int64_t ep : m.eps) {
        auto on = Layout(m.model, tp, 1, ep, {"optimizer.distributed=true"});
        auto off = Layout(m.model, tp, 1, ep, {"optimizer.distributed=false"});
        if (!on || !off) continue;
        ++compared;
        EXPECT_LE(ComputeLedger(*on, constants).Total(ItemKind::kOptimizer).value(),
                  ComputeLedger(*off, constants).Total(ItemKind::kOptimizer).value())
            << m.model << " TP" << tp << " EP" << ep;
      }
    }
  }
  EXPECT_GT(compared, 10);
}

TEST(LedgerProperties, RecomputeNeverRaisesActivationBytes) {
  const MemoryConstants constants = Constants();
  int compared = 0;
  for (const auto& m : kModels) {
    for (int64_t tp : {1, 2}) {
      for (int64_t pp : {1, 2, 4}) {
        const int64_t ep = m.eps.back() >= 2 ? 2 : 1;
        auto none = Layout(m.model, tp, pp, ep, {"recompute.granularity=none"});
        auto selective = Layout(m.model, tp, pp, ep, {"recompute.granularity=selective"});
        auto full = Layout(m.model, tp, pp, ep, {"recompute.granularity=full"});
        if (!none || !selective || !full) continue;
        for (Phase phase : {Phase::kForwardPeak, Phase::kBackwardPeak}) {
          for (int64_t stage : {int64_t{0}, pp - 1}) {
            ++compared;
            const double n =
                ComputeStageLedger(*none, constants, stage).PhaseOf(phase).bytes.value();
            const double s =
                ComputeStageLedger(*selective, constants, stage).PhaseOf(phase).bytes.value();
            const double f =
                ComputeStageLedger(*full, constants, stage).PhaseOf(phase).bytes.value();
            EXPECT_LE(f, n) << m.model << " TP" << tp << " PP" << pp << " stage " << stage << " "
                            << PhaseName(phase);
            EXPECT_LE(s, n) << m.model << " TP" << tp << " PP" << pp << " stage " << stage;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 40);
}

}  // namespace
}  // namespace strata::ledger_properties_test
