// The reference as verl runs it beside a LoRA actor (ref_in_actor): the actor's own forward with
// its adapter disabled (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:
// verl/trainer/ppo/ray_trainer.py:299-302 sets ref_in_actor when the LoRA rank is above 0, and
// :874 then makes no reference worker; fsdp_workers.py:1042-1044 and megatron_workers.py:840-870
// compute the reference's log-probs under disable_adapter()). There are no reference weights to
// keep beside the other phases or to hold in host memory.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/eval/evaluation.h"
#include "strata/memory/ledger.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rl_step.h"

namespace strata::reference_in_actor_test {
namespace {

Bytes PhaseBytes(const RlEvaluation& e, const std::string& name) {
  for (const RlPhaseMemory& p : e.phases) {
    if (p.phase == name) return p.bytes;
  }
  ADD_FAILURE() << "no phase " << name;
  return Bytes();
}

// W: the actor's weights on one GPU, the ledger's weight items.
Bytes WeightsOf(const MemoryLedger& ledger) {
  Bytes w;
  for (const LedgerItem& item : ledger.items) {
    if (item.kind == ItemKind::kWeights) w += item.bytes;
  }
  return w;
}

RlEvaluation Evaluate(std::vector<std::string> sets) {
  auto spec = LoadRlSpec(kReferenceRlJobName, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return RlEvaluation{};
  auto e = EvaluateRl(*Workspace::Load(), *spec);
  EXPECT_TRUE(e.ok()) << e.error().Format();
  return e.ok() ? *e : RlEvaluation{};
}

// Kept on the GPU (no offload), a separate reference holds its weights W (the actor's model and
// layout: the ledger's weights) beside the actor's update; in the actor it holds nothing: the
// update phase is exactly W lower, the reference pass takes the same time (one forward of the
// same model). Before: no such key; verl LoRA launches were priced with a separate reference.
TEST(ReferenceInActorTest, NoReferenceWeightsBesideTheUpdate) {
  const std::vector<std::string> kept = {"placement.offload_trainer=false",
                                         "placement.offload_reference=false"};
  const RlEvaluation separate = Evaluate(kept);
  std::vector<std::string> in_actor = kept;
  in_actor.emplace_back("reference_in_actor=true");
  const RlEvaluation own = Evaluate(in_actor);
  const Bytes w = WeightsOf(separate.ledger);
  ASSERT_GT(w.value(), 0);
  EXPECT_NEAR((PhaseBytes(separate, "actor update") - PhaseBytes(own, "actor update")).value(),
              w.value(), 1);
  EXPECT_NEAR(own.colocated.times.reference.s(), separate.colocated.times.reference.s(), 1e-12);
  EXPECT_GT(own.colocated.times.reference.s(), 0);
}

// Offloaded (the reference job: the trainer and the reference offloaded): the host holds the
// trainer's states and, for a separate reference, its weights too (W a GPU, x 8 GPUs a node);
// in the actor the host holds no reference copy. The PCIe copies stay 8 W + 2 (M + O): the
// reference pass loads and offloads the actor's weights (2 W) in place of the reference's.
TEST(ReferenceInActorTest, NoReferenceCopyInHostMemory) {
  const RlEvaluation separate = Evaluate({});
  const RlEvaluation own = Evaluate({"reference_in_actor=true"});
  const Bytes w = WeightsOf(separate.ledger);
  const double per_node = static_cast<double>(separate.actor.cluster.gpus_per_node);
  EXPECT_NEAR((separate.host_offload_per_node - own.host_offload_per_node).value(),
              w.value() * per_node, 1);
  EXPECT_NEAR(own.colocated.offload.bytes.value(), separate.colocated.offload.bytes.value(), 1);
}

}  // namespace
}  // namespace strata::reference_in_actor_test
