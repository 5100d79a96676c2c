// From a resolved job to the step model's inputs: the one place that knows which job field
// feeds which input, so every view (strata step, the planner, validation) builds them alike.
#ifndef STRATA_SIM_STEP_JOB_H_
#define STRATA_SIM_STEP_JOB_H_

#include "strata/comm/collective_cost.h"
#include "strata/core/result.h"
#include "strata/hw/cluster.h"
#include "strata/job/job_validation.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {

/// The cluster a job runs on: its cluster file when it names one, else the shipped cluster
/// with the job's GPU and GPUs per node, resized to the job's node count. Fails, naming the
/// shipped clusters, when none matches (the network between nodes cannot be guessed).
Result<Cluster> ClusterForJob(const JobSpec& spec);

/// The sample lengths of the job: its histogram file, or mean and max, or one fixed length.
Result<SequenceLengths> SequenceOf(const JobSpec& spec);

/// The per-layout inputs of the job's own layout.
StepLayout StepLayoutOf(const JobSpec& spec, int64_t layers);

/// Everything `strata step` evaluates, built once.
struct StepSetup {
  Job job;
  Cluster cluster;
  KernelEfficiencyFile efficiency;
  StepTables tables;
  StepLayout layout;
};

/// Loads the cluster, the link calibration and the kernel efficiencies for a resolved job.
Result<StepSetup> PrepareStep(const Job& job);

}  // namespace strata

#endif  // STRATA_SIM_STEP_JOB_H_
