#include "strata/job/pipeline_schedule.h"

#include <algorithm>

namespace strata {

std::vector<double> MicroBatchesInFlight(const ParallelLayout& l, int64_t micro_batches,
                                         int64_t rank) {
  const auto m = static_cast<double>(micro_batches);
  const auto pp = static_cast<double>(l.pp);
  const auto vpp = static_cast<size_t>(std::max<int64_t>(1, l.vpp));
  std::vector<double> in_flight(vpp, 0.0);
  switch (l.schedule()) {
    case PipelineSchedule::kGpipe:
      // All forwards before any backward (torch.distributed.pipelining ScheduleGPipe).
      std::fill(in_flight.begin(), in_flight.end(), m);
      return in_flight;
    case PipelineSchedule::kZbv:
      // ZB-V (Qi et al. 2023, section 6): 1F1B's first-worker peak, 2 PP chunk activations, on
      // every worker. PyTorch's ScheduleZBVZeroBubble (torch/distributed/pipelining/
      // schedules.py, what torchtitan runs) reaches it at the end of its warm-up with
      // 2 (PP - r) - 1 + r forwards of the rank's first chunk and r + 1 of its second.
      in_flight[0] = std::min(2 * pp - static_cast<double>(rank) - 1, m);
      if (vpp > 1) in_flight[1] = std::min(static_cast<double>(rank) + 1, m);
      return in_flight;
    case PipelineSchedule::kDualPipeV:
      // deepseek-ai/DualPipe README (3da1bbe): PP + 1 activations per device for PP chunk
      // stages, here 2 PP + 1 chunks. PyTorch's ScheduleDualPipeV (what torchtitan runs) holds
      // them at its first overlapped F0&B1: 2 (PP - r - 1) + r + 2 forwards of the rank's first
      // chunk and r + 1 of its second.
      in_flight[0] = std::min(2 * pp - static_cast<double>(rank), m);
      if (vpp > 1) in_flight[1] = std::min(static_cast<double>(rank) + 1, m);
      return in_flight;
    case PipelineSchedule::kDefault:
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kInterleaved1F1B:
    case PipelineSchedule::kZeroBubble:
      break;
  }
  if (vpp == 1) {
    // 1F1B (and ZB-H1, whose peak is 1F1B's): PP - r - 1 warm-up forwards, then one more
    // before the first backward (megatron-core get_pp_rank_microbatches; torch's Schedule1F1B).
    in_flight[0] = std::min(pp - static_cast<double>(rank), m);
    return in_flight;
  }
  // Interleaved: megatron-core's get_pp_rank_microbatches (pipeline_parallel/schedules.py,
  // NVIDIA/Megatron-LM d98e8a6) warms up with 2 (PP - r - 1) + (VPP - 1) x group chunk
  // forwards, group = --microbatch-group-size-per-virtual-pipeline-stage (default PP), and runs
  // one more before its first backward; get_schedule_table orders them a group of micro
  // batches through chunk 0, then chunk 1, and so on. megatron-core refuses m < PP; PyTorch's
  // ScheduleInterleaved1F1B (torchtitan) runs it with rounds of m // max(1, m // PP) micro
  // batches, which is PP whenever megatron-core runs the job. PyTorch's
  // ScheduleInterleavedZeroBubble (ZB-H1 looped) warms up one forward per hop, not two
  // (_get_warmup_ops' multiply_factor 1).
  const int64_t group = micro_batches / std::max<int64_t>(1, micro_batches / l.pp);
  const int64_t per_hop = l.schedule() == PipelineSchedule::kZeroBubble ? 1 : 2;
  const int64_t forwards = std::min<int64_t>(per_hop * (l.pp - rank - 1) + (l.vpp - 1) * group + 1,
                                             micro_batches * l.vpp);
  for (int64_t j = 0; j < forwards; ++j) {
    in_flight[static_cast<size_t>((j % (group * l.vpp)) / group)] += 1;
  }
  for (double& n : in_flight) n = std::min(n, m);
  return in_flight;
}

}  // namespace strata
