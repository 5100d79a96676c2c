// `strata profile` against Holistic Trace Analysis run on the same files. Every expected figure
// below was printed by HTA (facebookresearch/HolisticTraceAnalysis f4d0062c, pandas 1.5.3,
// Debian 12's python3) from `TraceAnalysis(trace_dir=...)`, `get_temporal_breakdown()` and
// `get_comm_comp_overlap()` on the traces of ../shared/reference/traces/; docs/profile.md has the
// commands and HTA's tables. HTA's definitions (hta/analyzers/breakdown_analysis.py,
// communication_analysis.py at that commit):
// - kernel_time: the last GPU event's end minus the first one's start, over every iteration but
//   the trace's last (when it has more than one); idle_time: kernel_time minus the union of GPU
//   events (kernels, memcpy, memset: every event with a stream);
// - comp_comm_overlap: the time NCCL kernels (merged) run beside computation kernels (merged;
//   memcpy and memset are not computation) over the NCCL kernels' merged time.
// strata's `span`, `busy`, `idle` and `nccl_exposed` are meant to be the same quantities, so the
// two tools must agree to the microsecond (Kineto records whole microseconds).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "profile/reference_traces.h"
#include "strata/profile/profile.h"

namespace strata::profile::hta_side_by_side_test {
namespace {

ProfileReport Profile(const std::string& relative) {
  return testing::ProfileReferenceTraces({relative});
}

double Us(int64_t ns) { return static_cast<double>(ns) * 1e-3; }
constexpr double kUs = 0.5;  // HTA prints whole microseconds

// HTA on hta-perparam-allreduce-v100 (steps 2-6; HTA drops step 6, the last): idle_time
// 643,612 us, compute 496,485 us, non-compute 256,572 us, kernel_time 1,396,669 us, overlap 0.0%.
// The union of GPU events over steps 2-5 is kernel_time - idle_time = 753,057 us; non-compute is
// the NCCL all-reduces plus memcpy and memset (one compute stream here, so the per-class unions
// add up), and computation is the rest.
TEST(HtaSideBySide, PerParameterAllReduceTemporalBreakdown) {
  const ProfileReport r = Profile("hta-perparam-allreduce-v100/df_index_resolver.json.gz");
  ASSERT_EQ(r.ranks.size(), 1u);
  ASSERT_EQ(r.ranks[0].steps.size(), 5u);
  int64_t busy = 0;
  int64_t non_compute = 0;
  int64_t nccl = 0;
  int64_t nccl_exposed = 0;
  for (size_t i = 0; i < 4; ++i) {  // steps 2-5
    const Figures& f = r.ranks[0].steps[i].figures;
    busy += f.busy_ns;
    non_compute += f.of(Component::kNccl) + f.of(Component::kMemcpy) + f.of(Component::kMemset);
    nccl += f.of(Component::kNccl);
    nccl_exposed += f.nccl_exposed_ns;
  }
  EXPECT_NEAR(Us(busy), 1396669 - 643612, kUs);
  EXPECT_NEAR(Us(non_compute), 256572, kUs);
  EXPECT_NEAR(Us(busy - non_compute), 496485, kUs);
  EXPECT_EQ(nccl_exposed, nccl);  // HTA: 0.0% overlap
}

// HTA on param-dlrm-8rank-v100 (one iteration, which HTA keeps, warning that it is alone): per
// rank 0..7, kernel_time, idle_time and comp_comm_overlap_pctg as it printed them.
TEST(HtaSideBySide, DlrmEightRanksSpanIdleAndOverlap) {
  const ProfileReport r = Profile("param-dlrm-8rank-v100");
  ASSERT_EQ(r.ranks.size(), 8u);
  constexpr std::array<double, 8> kKernelTimeUs = {13009, 18749, 11350, 18853,
                                                   16589, 16392, 11410, 10967};
  constexpr std::array<double, 8> kIdleUs = {6419, 6428, 7046, 8145, 8887, 9121, 7051, 8308};
  constexpr std::array<double, 8> kOverlapPct = {4.50, 2.47, 7.88, 3.31, 0.56, 0.64, 7.56, 9.51};
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(r.ranks[i].rank, static_cast<int64_t>(i));
    const Figures& f = r.ranks[i].whole_trace;
    EXPECT_NEAR(Us(f.span_ns), kKernelTimeUs[i], kUs);
    EXPECT_NEAR(Us(f.idle_ns()), kIdleUs[i], kUs);
    const double nccl = static_cast<double>(f.of(Component::kNccl));
    ASSERT_GT(nccl, 0);
    const double overlapped = nccl - static_cast<double>(f.nccl_exposed_ns);
    EXPECT_NEAR(100 * overlapped / nccl, kOverlapPct[i], 0.005);  // HTA rounds to 0.01%
  }
}

// HTA on deepseek-v3-train-ep64-h800 (one iteration): kernel_time 129,012 us, idle_time 497 us.
// Its overlap is NaN: no kernel name holds "nccl" (DeepEP's all-to-all kernels are not NCCL), so
// HTA has no communication to divide by; strata counts them as other communication instead.
TEST(HtaSideBySide, DeepSeekV3SpanAndIdle) {
  const ProfileReport r = Profile("deepseek-v3-train-ep64-h800/train.json");
  ASSERT_EQ(r.ranks.size(), 1u);
  const Figures& f = r.ranks[0].whole_trace;
  EXPECT_NEAR(Us(f.span_ns), 129012, kUs);
  EXPECT_NEAR(Us(f.idle_ns()), 497, kUs);
  EXPECT_EQ(f.of(Component::kNccl), 0);
}

}  // namespace
}  // namespace strata::profile::hta_side_by_side_test
