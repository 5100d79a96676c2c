// docs/plan-validation.md, recomputed: for every Megatron-LM weak-scaling (MLM) and SC21 row of
// ../shared/reference/dev-measurements.md, and the reference job, where the layout the source
// published ranks in the planner's list (among the layouts that fit, by predicted step time) and
// the predicted gap between it and the planner's winner. The document is compared with what this
// test generates, so it cannot go stale; UPDATE_GOLDEN=1 rewrites it.
//
// The job files are tests/plan/validation/<row>.yaml (the rows' configurations, with what the
// sources leave unstated written down as assumptions in each file's header).
//
// What is asserted besides the document: the published layout is in the searched space (it
// passes the same rules: otherwise its rank would be meaningless), its rank is at least 1 and
// the winner is never slower than it (the winner is the fastest layout that fits).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "plan/plan_test_support.h"
#include "support/golden.h"

namespace strata::plan_validation_test {
namespace {

struct Row {
  const char* id;
  const char* job;  // under tests/, or "" for the reference job
  int64_t gpus;     // the row's GPU count: the search's cost grows with it (see kQuickGpus)
};

// The planner places each layout's groups once and evaluates a layout in full only when its
// compute alone could rank it before where the search stops (plan/time_order.h), so every row,
// MLM-09 (39,375 layouts on 6,144 GPUs) included, plans in about a second of CPU. By default only
// the rows up to kQuickGpus are recomputed and each of their lines must appear in the document
// verbatim; STRATA_SLOW_TESTS=1 (or UPDATE_GOLDEN=1) recomputes every row up to kDocGpus and
// compares the whole document.
constexpr int64_t kDocGpus = 6144;
constexpr int64_t kQuickGpus = 384;

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {"MLM-01", "plan/validation/mlm-01.yaml", 48},
      {"MLM-02", "plan/validation/mlm-02.yaml", 96},
      {"MLM-03", "plan/validation/mlm-03.yaml", 192},
      {"MLM-04", "plan/validation/mlm-04.yaml", 384},
      {"MLM-05", "plan/validation/mlm-05.yaml", 768},
      {"MLM-06", "plan/validation/mlm-06.yaml", 1536},
      {"MLM-07", "plan/validation/mlm-07.yaml", 2304},
      {"MLM-08", "plan/validation/mlm-08.yaml", 3072},
      {"MLM-09", "plan/validation/mlm-09.yaml", 6144},
      {"SC21-01", "plan/validation/sc21-01.yaml", 32},
      {"SC21-02", "plan/validation/sc21-02.yaml", 64},
      {"SC21-03", "plan/validation/sc21-03.yaml", 128},
      {"SC21-04", "plan/validation/sc21-04.yaml", 256},
      {"SC21-05", "plan/validation/sc21-05.yaml", 512},
      {"SC21-06", "plan/validation/sc21-06.yaml", 1024},
      {"SC21-07", "plan/validation/sc21-07.yaml", 1536},
      {"SC21-08", "plan/validation/sc21-08.yaml", 1920},
      {"SC21-09", "plan/validation/sc21-09.yaml", 2520},
      {"SC21-10", "plan/validation/sc21-10.yaml", 3072},
      {"SEED-01", "", 40},
  };
  return rows;
}

std::string Compact(const plan::Candidate& c) {
  const ParallelLayout& l = c.layout;
  std::string s = fmt::format("TP{} PP{}{}", l.tp, l.pp, StageSplitSuffix(l));
  if (l.vpp > 1) s += fmt::format(" VPP{}", l.vpp);
  if (l.cp > 1) s += fmt::format(" CP{}", l.cp);
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.etp > 1) s += fmt::format(" ETP{}", l.etp);
  s += fmt::format(" DP{}, mb {}, {}", l.dp, c.micro_batch, RecomputeGranularityName(c.recompute));
  return s;
}

std::string RowLine(const Row& row) {
  const std::string path = *row.job ? testing::TestPath(row.job) : kReferenceJobName;
  plan::PlanOptions options;
  options.top_k = 1;
  const testing::Planned p = testing::PlanJob(path, {}, options);
  EXPECT_TRUE(p.ok) << row.id;
  if (!p.ok) return fmt::format("| {} | (the job did not plan) |\n", row.id);
  const plan::PlanResult& r = p.result;
  const plan::RankedLayout& own = r.current;
  const int64_t gpus = p.setup.job.spec.cluster.world();
  const std::string searched = fmt::format("{}", r.rules.valid);
  if (r.top.empty()) {
    ADD_FAILURE() << row.id << ": no layout fits";
    return fmt::format("| {} | {} | {} | {} | no layout fits | | | | |\n", row.id, gpus,
                       Compact(own.candidate), searched);
  }
  const plan::RankedLayout& best = r.top.front();
  const double own_s = own.step.step.s(), best_s = best.step.step.s();
  EXPECT_LE(best_s, own_s) << row.id;
  std::string rank;
  if (r.current_rank) {
    EXPECT_GE(*r.current_rank, 1) << row.id;
    rank = fmt::format("{}", *r.current_rank);
  } else {
    rank = fmt::format("does not fit ({:.1f} of {:.1f} GB)", own.peak.gb(), own.capacity.gb());
  }
  return fmt::format("| {} | {} | {} | {:.3f} | {} | {} | {:.3f} | {:+.3f} s ({:+.1f}%) | {} |\n",
                     row.id, gpus, Compact(own.candidate), own_s, rank, Compact(best.candidate),
                     best_s, own_s - best_s, 100 * (own_s - best_s) / best_s, searched);
}

std::string Header() {
  std::string doc = R"(# Planner: where the published layouts rank

Generated by `tests/plan/plan_validation_test.cc` (it fails when this file differs from what the
planner computes; `UPDATE_GOLDEN=1` rewrites it). For every Megatron-LM weak-scaling (MLM) and
SC21 row of `../shared/reference/dev-measurements.md`, and for the reference job
(`data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml`), `strata plan` is run on the row's job file
(`tests/plan/validation/<row>.yaml`: the row's model, GPUs, global batch, precision and
optimizer; what the source leaves unstated is written down in each file's header) and the
layout the source published is looked up in the planner's list.

- **rank**: 1 + the number of layouts that fit and are predicted faster than the published one
  (`current_rank` in `strata plan --json`). The planner searches TP, PP, VPP, CP, EP, ETP, DP,
  the micro batch and the recompute choice with the global batch kept; it does not search the
  precision, the optimizer sharding or the overlap flags, which stay the job's.
- **gap**: predicted step time of the published layout minus the winner's, in seconds and in
  percent of the winner's. It is a difference between two predictions of the step model, whose
  own error on these rows is in `docs/step-validation.md`; a gap smaller than that error says
  the two layouts are indistinguishable to the model, not that the source chose badly.
- **searched**: the number of valid layouts ranked. Every one is bounded by its compute time
  and evaluated in full by the step model when that bound could place it before where the search
  stops; ties in predicted step time keep the enumeration order (smaller TP, PP, CP first).

| row | GPUs | published layout | its predicted step (s) | rank | planner's winner | winner's step (s) | gap | searched |
|---|---|---|---|---|---|---|---|---|
)";
  return doc;
}

bool EnvSet(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

TEST(PlanValidation, DocumentMatchesThePlanner) {
  if (EnvSet("STRATA_SLOW_TESTS") || EnvSet("UPDATE_GOLDEN")) {
    std::string doc = Header();
    for (const Row& row : Rows()) {
      if (row.gpus <= kDocGpus) doc += RowLine(row);
    }
    doc += testing::ReadTestFile("plan/validation/notes.md");
    EXPECT_TRUE(testing::MatchesGolden("../docs/plan-validation.md", doc));
    return;
  }
  const std::string doc = testing::ReadTestFile("../docs/plan-validation.md");
  EXPECT_EQ(doc.rfind(Header(), 0), 0u) << "docs/plan-validation.md: the header differs";
  int quick = 0;
  for (const Row& row : Rows()) {
    if (row.gpus > kQuickGpus) continue;
    const std::string line = RowLine(row);
    EXPECT_NE(doc.find(line), std::string::npos)
        << "docs/plan-validation.md lacks (or has another value in) the line\n"
        << line << "rerun with UPDATE_GOLDEN=1";
    ++quick;
  }
  EXPECT_GE(quick, 9);
}

}  // namespace
}  // namespace strata::plan_validation_test
