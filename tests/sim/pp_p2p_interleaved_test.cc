// The pipeline's send/recv under the interleaved schedule: VPP times the sends of 1F1B, and
// megatron-core overlaps them with compute by default there (and only there). Before, the count
// ignored VPP and the send/recv stayed exposed unless the job said otherwise, so interleaving got
// its smaller bubble for free and paid its traffic on the critical path.
#include <gtest/gtest.h>

#include <string>

#include "sim/step_test_support.h"
#include "strata/comm/layout_traffic.h"
#include "strata/importer/import_job.h"

namespace strata {
namespace {

const TrafficItem* PpItem(const std::vector<TrafficItem>& items) {
  for (const TrafficItem& i : items) {
    if (i.group == GroupKind::kPp && i.op == CollectiveOp::kSendRecv) return &i;
  }
  return nullptr;
}

// Llama-3.1-70B, TP2 PP8 CP4, 256 micro batches of 8,192 tokens (the audit's case). One send
// carries a micro batch's activations on one rank: 8,192 / (TP 2 x CP 4) sequence-parallel
// tokens x 8,192 hidden x 2 B = 16,777,216 B. 1F1B: one forward and one backward send per micro
// batch, 2 x 256 = 512 a step. Interleaved, VPP 5: each of a rank's 5 chunks hands the micro
// batch on, forward and backward: 2 x 5 x 256 = 2,560 (Narayanan et al., SC'21, 2.2.2).
TEST(PpP2pInterleaved, SendsGrowWithTheChunksARankHolds) {
  auto config = LoadModelConfig("llama-3.1-70b");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  TrafficInputs in;
  in.layout.tp = 2;
  in.layout.pp = 8;
  in.layout.cp = 4;
  in.layout.dp = 1;
  in.layout.sequence_parallel = true;
  in.tokens_per_sample = 8192;
  in.micro_batches_per_step = 256;
  for (int64_t vpp : {1, 5}) {
    in.layout.vpp = vpp;
    const auto items = LayoutTraffic(TrafficShapeOf(*config, false), in);
    const TrafficItem* pp = PpItem(items);
    ASSERT_NE(pp, nullptr);
    EXPECT_NEAR(pp->size.count(), 16777216.0, 0.5);
    EXPECT_NEAR(pp->calls_per_unit, 2.0 * static_cast<double>(vpp), 1e-12) << "vpp " << vpp;
    EXPECT_NEAR(pp->calls_per_step, 2.0 * static_cast<double>(vpp) * 256, 1e-9) << "vpp " << vpp;
  }
}

struct PpParts {
  double time = 0;
  double exposed = 0;
};

PpParts PpOf(const std::string& extra) {
  const auto r = testing::EvaluateJobText(
      "model: llama-3.1-8b\ncluster: {file: h100-8x8-ib400, gpu: H100 SXM, gpus_per_node: 8, "
      "nodes: 1}\nparallel: {tp: 1, pp: 4, vpp: 2}\nbatch: {micro_batch: 1, global_batch: 32}\n"
      "sequence: {max_tokens: 4096}\n" +
      extra);
  if (!r) return {};
  const StepPartTime& pp = (*r)[StepPart::kPp];
  return {pp.total.s(), pp.exposed.s()};
}

// Megatron-LM megatron/training/arguments.py: --no-overlap-p2p-communication is store_false
// (overlap_p2p_comm defaults to true) and validate_args turns it off only for the
// non-interleaved schedule. So a megatron-core job at VPP 2 that says nothing hides its sends
// behind the micro batches' compute; one that says pp_p2p: false exposes them; torchtitan's
// schedules are not megatron-core's and keep the job's (default false) setting.
TEST(PpP2pInterleaved, MegatronOverlapsInterleavedSendsByDefault) {
  const PpParts unset = PpOf("");
  EXPECT_GT(unset.time, 0);
  EXPECT_NEAR(unset.exposed, 0, 1e-12);
  const PpParts off = PpOf("overlap: {pp_p2p: false}\n");
  EXPECT_NEAR(off.exposed, off.time, 1e-12);
  EXPECT_NEAR(off.time, unset.time, 1e-12);
  const PpParts titan = PpOf("framework: {name: torchtitan}\nsharding: {mode: fsdp2}\n");
  EXPECT_NEAR(titan.exposed, titan.time, 1e-12);
}

// The importer: Megatron-LM has no positive flag, only --no-overlap-p2p-communication
// (store_false); before, the flag was listed as read but not used and the job left it unset.
TEST(PpP2pInterleaved, ImportReadsMegatronsNegativeFlag) {
  const std::string base =
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
      "--num-attention-heads 32 --ffn-hidden-size 11008 --seq-length 4096 "
      "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 "
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
      "--num-layers-per-virtual-pipeline-stage 4 --bf16 --vocab-size 32000";
  ImportOptions options;
  options.cluster = "h100-8x8-ib400";
  auto off = ImportJob(base + " --no-overlap-p2p-communication\n", "train.sh", options);
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_TRUE(off->job.overlap.pp_p2p_given);
  EXPECT_FALSE(off->job.overlap.pp_p2p);
  auto unset = ImportJob(base + "\n", "train.sh", options);
  ASSERT_TRUE(unset.ok()) << unset.error().Format();
  EXPECT_FALSE(unset->job.overlap.pp_p2p_given);  // the step model applies Megatron's default
}

}  // namespace
}  // namespace strata
