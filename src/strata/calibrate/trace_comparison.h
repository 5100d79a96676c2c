// A measured step (`strata profile` traces) beside the step model's prediction for the job the
// traces should describe: per component, measured and predicted seconds and their ratio, the
// communication overlapped and exposed, the slowest rank and what makes it slow, and warnings
// where the traces do not look like the job. The trace's kernel classes meet the model's
// components through one explicit table (ComponentMappings), each row with its reason.
#ifndef STRATA_CALIBRATE_TRACE_COMPARISON_H_
#define STRATA_CALIBRATE_TRACE_COMPARISON_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/eval/evaluation.h"
#include "strata/profile/profile.h"

namespace strata::calibrate {

/// The rows of the comparison.
enum class CompareRow {
  kDenseGemm,
  kExpertGemm,
  kAttention,
  kLinearAttention,
  kMemoryBound,
  kCommunication,
  kMemcpy,
  kIdle,
};
inline constexpr size_t kCompareRowCount = 8;

/// One row of the mapping: which trace kernel classes and which step-model terms it sums, and why
/// they are the same work.
struct ComponentMapping {
  CompareRow row;
  std::string_view key;                   // "dense_gemm": JSON and calibration field names
  std::string_view label;                 // "dense GEMM": the table's row
  std::vector<profile::Component> trace;  // measured: the union of these classes' kernels
  std::string_view model;                 // predicted: the model's terms, in words
  std::string_view why;
};
/// A row's ratio outside [1 / kPlausibleRatio, kPlausibleRatio] says the trace's classes and the
/// model's terms hold different work (a kernel family the rules put in another class, a part of
/// a step): warned about, and not carried by a calibration.
inline constexpr double kPlausibleRatio = 10;
bool Plausible(const std::optional<double>& ratio);

/// Every row, in order.
const std::vector<ComponentMapping>& ComponentMappings();
/// Trace classes with no counterpart in the model, and why (measured, shown, never compared).
struct UnmappedClass {
  profile::Component component;
  std::string_view why;
};
const std::vector<UnmappedClass>& UnmappedClasses();

struct RowComparison {
  CompareRow row;
  double measured_s = 0;
  double predicted_s = 0;
  std::optional<double> ratio;  // measured / predicted; none when either side is 0
  // Communication only: the part on the critical path.
  double measured_exposed_s = 0;
  double predicted_exposed_s = 0;
};

/// The slowest rank: the straggler of the ranks' mean steps, by the rule the cross-rank view
/// uses (profile::PickStraggler: the least exposed communication when there is any, else the
/// longest span), and the part of its step that makes it late against the reference rank (the
/// one that waited most, or the shortest).
struct SlowestRank {
  size_t index = 0;  // into ProfileReport::ranks
  std::optional<int64_t> rank;
  double span_s = 0;
  size_t ranks_compared = 1;
  bool communication = false;  // picked by exposed communication (else by span)
  double wait_s = 0;           // its exposed communication
  size_t reference_index = 0;
  double reference_wait_s = 0;
  double reference_span_s = 0;
  double fastest_span_s = 0;  // the shortest mean span of any rank
  double longest_span_s = 0;  // the longest, which the straggler's need not be
  size_t longest_index = 0;
  // Its lead over the next rank against the step-to-step swing of the same ranks: it is named
  // the slowest rank only when margin.clear (else the cause below is the candidate's).
  profile::StragglerMargin margin;
  // "routing skew", "compute", "host-bound", "late start", "" (one rank, or equal ranks)
  std::string cause;
  std::string explanation;
  double cause_extra_s = 0;  // the straggler minus the reference in the cause's part
};

/// "all_gemm": the key of the one GEMM ratio a comparison and a calibration carry when the traces
/// hold GEMM kernels whose names do not say dense or expert (profile::kGemmDenseOrExpert).
inline constexpr std::string_view kAllGemmKey = "all_gemm";

struct TraceComparison {
  std::vector<RowComparison> rows;  // ComponentMappings' order
  /// Set when any trace holds GEMM kernels of class gemm_dense_or_expert: then the dense and
  /// expert rows hold only the kernels whose names tell, and the one comparable figure is all
  /// GEMM time (gemm + grouped_gemm + gemm_dense_or_expert, each its class's union, summed)
  /// against all the model's GEMM time (the dense and the expert rows' predictions).
  std::optional<RowComparison> all_gemm;
  int64_t dense_or_expert_gemm_events = 0;  // over every trace's whole trace
  double dense_or_expert_gemm_s = 0;        // the slowest rank's mean step
  /// Files whose trace ends early (RankProfile::cut): their steps may miss events past the cut.
  std::vector<std::string> cut_files;
  bool slowest_cut = false;  // the slowest rank's own trace is cut
  // The measured step: the longest mean span of any rank (measured_step_index). In a synchronous
  // step every rank waits for the others at the collectives and they leave the last one together,
  // so the rank that began first spans the whole step and the straggler's span lacks its own late
  // start: the job's step lasts at least the longest span.
  double measured_step_s = 0;
  size_t measured_step_index = 0;  // into ProfileReport::ranks
  double predicted_step_s = 0;
  std::optional<double> step_ratio;
  size_t steps_measured = 0;            // the slowest rank's ProfilerStep#N (0: the whole trace)
  std::vector<int64_t> steps_left_out;  // its steps without a GPU event (MeanStep::empty_steps)
  bool last_step_left_out = false;      // the last of them is the rank's last ProfilerStep#N
  std::vector<std::pair<profile::Component, double>> unmapped_s;  // measured, by class
  SlowestRank slowest;
  std::vector<std::string> warnings;  // where the traces do not look like the job
  // The catalog name of the GPU the slowest rank's trace ran on (data/gpus.yaml, by name or
  // alias); empty when the trace does not say or the catalog does not list it.
  std::string trace_gpu;
  std::string trace_device;  // as the slowest rank's trace names it; empty when it does not
  // The model number of a device the catalog does not list when it differs from the job GPU's
  // ("V100" against an H100 SXM job, "A100" against H200): a known mismatch. Empty otherwise.
  std::string trace_gpu_other_family;
  std::vector<std::string> trace_files;
  std::vector<std::optional<int64_t>> trace_ranks;  // each file's rank, where its trace says
  std::string job_file;

  const RowComparison& operator[](CompareRow r) const { return rows[static_cast<size_t>(r)]; }
};

/// The per-step figures of one rank: the mean of its ProfilerStep#N figures, or the whole trace
/// when it has none (steps = 0). A step with no GPU event is left out (`empty_steps`): the last
/// one is the `ProfilerStep#N` that torch.profiler's step() opens just before the profiler stops,
/// not a step that ran in 0 s; in a cut trace any step may have lost its events past the cut.
struct MeanStep {
  double span_s = 0;
  double busy_s = 0;
  double nccl_exposed_s = 0;
  double comm_other_exposed_s = 0;
  std::array<double, profile::kComponentCount> component_s{};
  size_t steps = 0;
  std::vector<int64_t> empty_steps;  // N of the ProfilerStep#N without a GPU event, left out
  bool last_step_empty = false;      // the rank's last ProfilerStep#N is among them
  double of(profile::Component c) const { return component_s[static_cast<size_t>(c)]; }
  double idle_s() const { return span_s - busy_s; }
};
MeanStep MeanStepOf(const profile::RankProfile& rank);

/// The prediction of `e` (evaluated to EvalDepth::kStep or deeper) per row, total and exposed.
std::array<RowComparison, kCompareRowCount> PredictedRows(const Evaluation& e);

/// Compares the slowest rank of `report` with the prediction. Fails when no rank has a GPU event.
Result<TraceComparison> CompareWithJob(const profile::ProfileReport& report, const Evaluation& e);

}  // namespace strata::calibrate

#endif  // STRATA_CALIBRATE_TRACE_COMPARISON_H_
