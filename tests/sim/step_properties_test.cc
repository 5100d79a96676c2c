// Properties the step model must keep whatever its constants: more GPUs never slow a rank's
// compute, a faster interconnect never slows a step, recompute never speeds one up. Checked over
// a grid of layouts of a dense and an MoE model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/hw/gpu_catalog.h"
#include "strata/hw/interconnects.h"
#include "strata/sim/step_job.h"

namespace strata::step_properties_test {
namespace {

struct Fixture {
  ModelConfig model;
  GpuSpec gpu;
  KernelEfficiencyFile efficiency;
  StepTables tables;
  Cluster cluster;
  Interconnects links;
};

Fixture Make(const std::string& model, const std::string& cluster_name, double mean, double max) {
  Fixture f;
  auto m = LoadModelConfig(model);
  EXPECT_TRUE(m.ok());
  f.model = *m;
  auto c = LoadCluster(cluster_name);
  EXPECT_TRUE(c.ok());
  f.cluster = *c;
  f.cluster.nodes = 32;  // room for every layout below
  f.gpu = f.cluster.gpu;
  auto e = LoadKernelEfficiency();
  EXPECT_TRUE(e.ok());
  f.efficiency = *e;
  auto l = LoadInterconnects();
  EXPECT_TRUE(l.ok());
  f.links = *l;
  StepTableInputs in;
  in.model = &f.model;
  in.sequence = SequenceLengths::MeanMax(mean, max);
  in.gpu = &f.gpu;
  in.efficiency = &f.efficiency;
  f.tables = BuildStepTables(in);
  return f;
}

CollectiveModel Comm(const Cluster& cluster, const Interconnects& links) {
  auto comm = CollectiveModel::Create(cluster, links);
  EXPECT_TRUE(comm.ok());
  return *comm;
}

StepLayout Layout(int64_t tp, int64_t pp, int64_t ep, int64_t dp, int64_t global_batch) {
  StepLayout s;
  s.layout.tp = tp;
  s.layout.pp = pp;
  s.layout.ep = ep;
  s.layout.dp = dp;
  s.layout.sequence_parallel = tp > 1;
  s.micro_batches = global_batch / dp;
  s.recompute = RecomputeGranularity::kFull;
  s.grad_bytes = 4;
  return s;
}

Seconds Compute(const StepResult& r) {
  return r[StepPart::kForward].total + r[StepPart::kBackward].total +
         r[StepPart::kRecompute].total + r[StepPart::kMoeImbalance].total;
}

StepResult Eval(const Fixture& f, const StepLayout& s, const CollectiveModel& comm) {
  auto r = EvaluateStep(f.tables, s, comm);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().Format());
  return r.ok() ? *r : StepResult{};
}

std::vector<Fixture> Fixtures() {
  std::vector<Fixture> out;
  out.push_back(Make("llama-3.1-8b", "h100-8x8-ib400", 4096, 4096));
  out.push_back(Make("qwen3.6-35b-a3b", "h20-5x8", 29000, 49152));
  return out;
}

TEST(StepProperties, MoreGpusNeverSlowTheComputeOfARank) {
  for (const Fixture& f : Fixtures()) {
    const CollectiveModel comm = Comm(f.cluster, f.links);
    const int64_t ep = f.tables.num_experts > 0 ? 8 : 1;
    for (int64_t tp : {1, 2}) {
      for (int64_t dp : {8, 16, 32, 64}) {
        const Seconds base = Compute(Eval(f, Layout(tp, 1, ep, dp, 128), comm));
        // Twice the data-parallel ranks: half the micro batches per rank.
        EXPECT_LE(Compute(Eval(f, Layout(tp, 1, ep, 2 * dp, 128), comm)).s(), base.s())
            << f.tables.model_name << " tp " << tp << " dp " << dp;
        // Twice the tensor-parallel ranks: half of each GEMM.
        EXPECT_LE(Compute(Eval(f, Layout(2 * tp, 1, ep, dp, 128), comm)).s(), base.s())
            << f.tables.model_name << " tp " << tp << " dp " << dp;
        // Twice the pipeline stages: half the layers.
        EXPECT_LE(Compute(Eval(f, Layout(tp, 2, ep, dp, 128), comm)).s(), base.s())
            << f.tables.model_name << " tp " << tp << " dp " << dp;
      }
    }
  }
}

TEST(StepProperties, AFasterInterconnectNeverSlowsAStep) {
  for (const Fixture& f : Fixtures()) {
    const CollectiveModel slow = Comm(f.cluster, f.links);
    Cluster fast_cluster = f.cluster;
    for (auto& nic : fast_cluster.nics) nic.speed = nic.speed * 2.0;
    fast_cluster.gpu.nvlink_bandwidth = fast_cluster.gpu.nvlink_bandwidth * 2.0;
    const CollectiveModel fast = Comm(fast_cluster, f.links);
    const int64_t ep = f.tables.num_experts > 0 ? 8 : 1;
    for (int64_t tp : {1, 2, 4}) {
      for (int64_t pp : {1, 2}) {
        for (bool overlap : {false, true}) {
          StepLayout s = Layout(tp, pp, ep, 16, 128);
          s.overlap.grad_reduce = s.overlap.param_gather = s.overlap.tp_comm = overlap;
          EXPECT_LE(Eval(f, s, fast).step.s(), Eval(f, s, slow).step.s())
              << f.tables.model_name << " tp " << tp << " pp " << pp;
        }
      }
    }
  }
}

TEST(StepProperties, RecomputeNeverSpeedsAStep) {
  for (const Fixture& f : Fixtures()) {
    const CollectiveModel comm = Comm(f.cluster, f.links);
    const int64_t ep = f.tables.num_experts > 0 ? 8 : 1;
    for (int64_t tp : {1, 2}) {
      for (int64_t pp : {1, 4}) {
        StepLayout s = Layout(tp, pp, ep, 16, 128);
        s.recompute = RecomputeGranularity::kNone;
        const double none = Eval(f, s, comm).step.s();
        s.recompute = RecomputeGranularity::kSelective;
        const double selective = Eval(f, s, comm).step.s();
        s.recompute = RecomputeGranularity::kFull;
        const double full = Eval(f, s, comm).step.s();
        EXPECT_LE(none, selective) << f.tables.model_name << " tp " << tp << " pp " << pp;
        EXPECT_LE(selective, full) << f.tables.model_name << " tp " << tp << " pp " << pp;
      }
    }
  }
}

}  // namespace
}  // namespace strata::step_properties_test
