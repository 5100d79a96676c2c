// verl's Ulysses sequence parallelism (ulysses_sequence_parallel_size N, which `strata import`
// reads as parallel.cp N with cp_comm_type a2a and overlap.cp_comm false). DeepSpeed-Ulysses
// (arXiv 2309.14509, section 3.1) all-to-alls Q, K and V from the rank's N / P tokens of every
// head to all N tokens of its heads / P before attention and the output back after it, forward
// and (the reverse pair) backward; verl calls them inline around flash attention, nothing
// overlaps them (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/models/
// transformers/monkey_patch.py:119-153; the autograd all-to-all, verl/utils/ulysses.py:165-192).
// Before: the import left CP at its ring default (p2p, hidden behind attention), about +2% of an
// update unpriced (audit finding m6); and with fewer K/V heads than ranks the K/V all-to-all
// was priced without verl's repeat of the K/V heads (monkey_patch.py:126-128).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/comm/traffic_pricing.h"
#include "strata/rl/rl_step.h"
#include "support/golden.h"

namespace strata::ulysses_step_test {
namespace {

// Qwen2.5-Math-7B (data/models/qwen2.5-math-7b.json: hidden 3584, 28 layers, 28 query heads,
// 4 K/V heads of 128) as verl's FSDP2 actor on one 8-GPU H100 node, one 32,768-token sample a
// micro batch, no recompute (forward + backward: 2 passes of each all-to-all).
std::string UlyssesJob(int cp) {
  return "model: qwen2.5-math-7b\n"
         "cluster: {file: h100-8x8-ib400, gpu: H100 SXM, gpus_per_node: 8, nodes: 1}\n"
         "parallel: {tp: 1, pp: 1, cp: " +
         std::to_string(cp) +
         ", cp_comm_type: a2a, sequence_parallel: false}\n"
         "batch: {micro_batch: 1, global_batch: 2}\n"
         "sequence: {max_tokens: 32768}\n"
         "recompute: {granularity: none}\n"
         "overlap: {cp_comm: false}\n"
         "precision: {params: bf16, grads: fp32}\n"
         "optimizer: {name: adamw, master_weights: fp32, moments: fp32}\n"
         "sharding: {mode: fsdp2}\n"
         "framework: {name: verl}\n";
}

struct Case {
  int cp;
  double qkv_bytes;  // one all-to-all of Q, K, V, one rank's send buffer
  double out_bytes;  // one all-to-all of the attention output
  double calls;      // each, per step
};

// By hand, bf16 (2 B), the rank's tokens 32,768 / CP:
//   CP 4: 8,192 tokens. Q 8,192 x 3,584 x 2 = 58,720,256 B; K + V 8,192 x 2 x 4 x 128 x 2
//         = 16,777,216 B (4 K/V heads, one per rank: no repeat); Q/K/V 75,497,472 B, output
//         58,720,256 B. DP 8 / 4 = 2, global batch 2: one micro batch; 2 passes x 28 layers
//         = 56 calls of each a step.
//   CP 8: 4,096 tokens. Q 29,360,128 B; K + V 8,388,608 B at 4 heads, repeated 8 // 4 = 2
//         times = 16,777,216 B; Q/K/V 46,137,344 B, output 29,360,128 B. DP 1: two micro
//         batches; 2 x 28 x 2 = 112 calls of each.
TEST(UlyssesStep, AllToAllsPricedByTheCommModelAndExposed) {
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok());
  for (const Case& c :
       {Case{4, 75497472.0, 58720256.0, 56.0}, Case{8, 46137344.0, 29360128.0, 112.0}}) {
    SCOPED_TRACE("CP " + std::to_string(c.cp));
    auto spec = ParseJobSpec(UlyssesJob(c.cp), "ulysses.yaml");
    ASSERT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << job.error().Format();
    const std::optional<StepResult> r = testing::EvaluateJobStep(*job);
    ASSERT_TRUE(r.has_value());
    std::vector<const PricedTraffic*> cp;
    for (const PricedTraffic& p : r->traffic) {
      if (p.item.group == GroupKind::kCp) cp.push_back(&p);
    }
    ASSERT_EQ(cp.size(), 2u);
    EXPECT_EQ(cp[0]->item.op, CollectiveOp::kAllToAll);
    EXPECT_EQ(cp[1]->item.op, CollectiveOp::kAllToAll);
    EXPECT_NEAR(cp[0]->item.size.count(), c.qkv_bytes, 1e-6);
    EXPECT_NEAR(cp[1]->item.size.count(), c.out_bytes, 1e-6);
    EXPECT_NEAR(cp[0]->item.calls_per_step, c.calls, 1e-9);
    EXPECT_NEAR(cp[1]->item.calls_per_step, c.calls, 1e-9);
    // The time: the collective model's all-to-all over the CP group (CP consecutive ranks of
    // one node, NVLink), per call, times the calls.
    auto comm = CollectiveModel::Create(job->cluster, *links);
    ASSERT_TRUE(comm.ok()) << comm.error().Format();
    auto shape = comm->ContiguousShape(c.cp);
    ASSERT_TRUE(shape.ok()) << shape.error().Format();
    double expected = 0;
    for (double bytes : {c.qkv_bytes, c.out_bytes}) {
      auto cost = comm->Cost(CollectiveOp::kAllToAll, Bytes::Count(bytes), *shape);
      ASSERT_TRUE(cost.ok()) << cost.error().Format();
      expected += cost->time.s() * c.calls;
    }
    ASSERT_GT(expected, 0.0);
    EXPECT_NEAR((*r)[StepPart::kCp].total.s(), expected, 1e-9 * expected);
    // verl overlaps none of it: all of it is on the step's critical path.
    EXPECT_NEAR((*r)[StepPart::kCp].exposed.s(), expected, 1e-9 * expected);
  }
}

// The RL step's breakdown names the Ulysses all-to-alls inside the actor update: verl's
// practice run DAPO_7B/15 (FSDP, ulysses_sequence_parallel_size 4, imported as CP 4 a2a) carries
// a share of its update as exposed all-to-alls; a ring (megatron CP 2, dapo7b-19) carries none
// under that name. The share is the update pass's own kCp part times its mini batches (rl_step.cc).
TEST(UlyssesStep, TheRlUpdateRowSaysItsAllToAlls) {
  auto ulysses = LoadRlSpec(testing::TestPath("rl/validation/verl-practice-dapo7b-15.yaml"));
  ASSERT_TRUE(ulysses.ok()) << ulysses.error().Format();
  auto e = EvaluateRl(*Workspace::Load(), *ulysses);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  const RlTimes& t = e->colocated.times;
  EXPECT_GT(t.update_cp_a2a.s(), 0.0);
  EXPECT_LT(t.update_cp_a2a.s(), t.update.s());
  auto ring = LoadRlSpec(testing::TestPath("rl/validation/verl-practice-dapo7b-19.yaml"));
  ASSERT_TRUE(ring.ok()) << ring.error().Format();
  auto r = EvaluateRl(*Workspace::Load(), *ring);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->colocated.times.update_cp_a2a.s(), 0.0);
}

}  // namespace
}  // namespace strata::ulysses_step_test
