// The micro batches in flight under each pipeline schedule (issue 28, fault 3), and the layers
// of the stage that holds them for uneven splits. The reference job at PP 4, EP 2: DP = 40 / 4
// = 10, m = 80 / (1 x 10) = 8 micro batches per step; 40 layers under full recompute (uniform,
// one layer per group), so every layer keeps one checkpointed input per micro batch in flight
// and the stored activations are (checkpoints x micro batches) x one input's bytes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "memory_test_support.h"
#include "strata/memory/activations.h"

namespace strata {
namespace {

using testing::Constants;
using testing::ReferenceJob;

std::vector<std::string> Pp4(std::vector<std::string> more) {
  std::vector<std::string> sets = {"parallel.pp=4", "parallel.ep=2"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

// PyTorch's schedules (gpipe, zero_bubble, zbv, dualpipev) as torchtitan runs them: the
// reference job's ms-swift trains through megatron-core, which has none of them.
std::vector<std::string> Pp4Titan(std::vector<std::string> more) {
  more.emplace_back("framework.name=torchtitan");
  return Pp4(std::move(more));
}

struct InFlightCase {
  const char* name;
  std::vector<std::string> sets;
  int64_t stage;
  double in_flight;  // micro batches of the whole stage
};

TEST(PipelineInFlight, EachScheduleAsTheFrameworksRunIt) {
  const InFlightCase cases[] = {
      // 1F1B: stage s holds PP - s (megatron-core: PP - s - 1 warm-up forwards + 1).
      {"1f1b first", Pp4({}), 0, 4},
      {"1f1b last", Pp4({}), 3, 1},
      // Interleaved, VPP 2 (megatron-core get_pp_rank_microbatches): 2 (PP - s - 1) + (VPP - 1)
      // PP warm-up chunk forwards + 1, over VPP chunks per micro batch of the stage.
      // Stage 0: 2 x 3 + 4 + 1 = 11 chunks = 5.5 (= Narayanan's PP (1 + (PP - 1)/(PP VPP))).
      {"interleaved first", Pp4({"parallel.vpp=2"}), 0, 5.5},
      // Stage 1: 2 x 2 + 4 + 1 = 9 chunks = 4.5 (the old 3 x 1.375 = 4.125 was too few).
      {"interleaved second", Pp4({"parallel.vpp=2"}), 1, 4.5},
      // Stage 3: 0 + 4 + 1 = 5 chunks = 2.5 (the old 1 x 1.375 = 1.375 was too few).
      {"interleaved last", Pp4({"parallel.vpp=2"}), 3, 2.5},
      // GPipe: every forward before any backward: all m = 8 on every stage.
      {"gpipe first", Pp4Titan({"parallel.pp_schedule=gpipe"}), 0, 8},
      {"gpipe last", Pp4Titan({"parallel.pp_schedule=gpipe"}), 3, 8},
      // ZB-H1 keeps 1F1B's peak (Qi et al. 2023).
      {"zb-h1 first", Pp4Titan({"parallel.pp_schedule=zero_bubble"}), 0, 4},
      // ZB-V: 1F1B's first-stage peak, 2 PP = 8 chunk activations, on every stage (balanced):
      // PyTorch's warm-up leaves 2 (4 - 3) - 1 + 3 = 4 of the first chunk and 3 + 1 = 4 of the
      // second on stage 3.
      {"zbv last", Pp4Titan({"parallel.vpp=2", "parallel.pp_schedule=zbv"}), 3, 4},
      // ZB-H1 looped over VPP 2 (PyTorch's InterleavedZeroBubble): one warm-up forward per hop:
      // stage 0 (4 - 1) + 4 + 1 = 8 chunks = 4; stage 3 0 + 4 + 1 = 5 chunks = 2.5.
      {"zb looped first", Pp4Titan({"parallel.vpp=2", "parallel.pp_schedule=zero_bubble"}), 0, 4},
      {"zb looped last", Pp4Titan({"parallel.vpp=2", "parallel.pp_schedule=zero_bubble"}), 3, 2.5},
      // ZB-V with torchtitan's split: 42 effective layers over 8 virtual stages = 5 rem 2, so
      // stages of 6 - 1, 6, 5, 5, 5, 5, 5, 5 - 1; stage 0 holds virtual stages 0 (5 layers) and 7
      // (4 layers), 2 x 4 - 1 = 7 and 1 micro batches of them: (7 x 5 + 1 x 4) / 9 = 39 / 9 of
      // its 9 layers' inputs.
      {"zbv torchtitan first",
       Pp4Titan({"parallel.vpp=2", "parallel.pp_schedule=zbv", "parallel.stage_split=torchtitan"}),
       0, 39.0 / 9.0},
      // DualPipeV: 2 PP + 1 = 9 chunk activations = 4.5 micro batches of the stage.
      {"dualpipev", Pp4Titan({"parallel.vpp=2", "parallel.pp_schedule=dualpipev"}), 2, 4.5},
  };
  const MemoryConstants constants = Constants();
  for (const InFlightCase& c : cases) {
    const Job job = ReferenceJob(c.sets);
    const ActivationMemory act = ComputeActivations(job, constants, c.stage);
    EXPECT_NEAR(act.in_flight, c.in_flight, 1e-9) << c.name;
  }
}

// Uneven first/last counts with VPP 2: 40 layers, first 8, last 8, so the middle ranks hold
// 24 / 2 = 12 and every chunk of stage 0 holds 8 / 2 = 4 layers. Stage 0's 11 chunk forwards
// in flight are 7 of chunk 0 (micro batches 0-3, then 4-6 of the next group) and 4 of chunk 1:
// 7 x 4 + 4 x 4 = 44 layer inputs. The even split (5-layer chunks) holds 11 x 5 = 55: the
// uneven stage stores 44 / 55 = 0.8 of it. The middle stage 1 holds 9 chunk forwards of 6
// layers, 54 inputs: 54 / 55 of the even stage 0.
TEST(PipelineInFlight, UnevenStagesWithVppHoldTheirOwnLayers) {
  const MemoryConstants constants = Constants();
  const Job even = ReferenceJob(Pp4({"parallel.vpp=2"}));
  const Job uneven = ReferenceJob(
      Pp4({"parallel.vpp=2", "parallel.first_stage_layers=8", "parallel.last_stage_layers=8"}));
  const double even_first = ComputeActivations(even, constants, 0).stored.value();
  EXPECT_NEAR(ComputeActivations(uneven, constants, 0).stored.value() / even_first, 0.8, 1e-9);
  EXPECT_NEAR(ComputeActivations(uneven, constants, 1).stored.value() / even_first, 54.0 / 55.0,
              1e-9);
  // GPipe holds m / (PP - 0) = 8 / 4 = 2 times 1F1B's first stage.
  const double one_f_one_b =
      ComputeActivations(ReferenceJob(Pp4Titan({})), constants, 0).stored.value();
  const double gpipe =
      ComputeActivations(ReferenceJob(Pp4Titan({"parallel.pp_schedule=gpipe"})), constants, 0)
          .stored.value();
  EXPECT_NEAR(gpipe / one_f_one_b, 2.0, 1e-9);
}

}  // namespace
}  // namespace strata
