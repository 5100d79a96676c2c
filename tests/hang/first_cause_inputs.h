// The evidence the first-cause tests build (tests/hang/first_cause_test.cc) and the verdict text
// tests read (tests/report/hang_verdict_text_test.cc): line formats quoted in
// tests/golden/hang-real/, each named beside its builder.
#ifndef STRATA_TESTS_HANG_FIRST_CAUSE_INPUTS_H_
#define STRATA_TESTS_HANG_FIRST_CAUSE_INPUTS_H_

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang::inputs {

inline Verdict AnalyzeLog(const std::string& text) {
  EvidenceSet set;
  AddEvidenceFile(set, text, "train.log");
  return Analyze(set, {});
}

// torch 2.4's watchdog line (basicsr-737's format) for one rank.
inline std::string TimeoutLine(int rank, int64_t seq, const std::string& op) {
  return fmt::format(
      "[rank{0}]:[E1130 10:00:0{0}.000000000 ProcessGroupNCCL.cpp:616] [Rank {0}] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum={1}, OpType={2}, NumelIn=1, NumelOut=1, "
      "Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n",
      rank, seq, op);
}

// torch 2.4's "PG status" line (lama-324's format).
inline std::string StatusLine(int rank, int64_t enqueued, int64_t completed) {
  return fmt::format(
      "[rank{0}]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank {0}] Timeout at NCCL work: {1}, last "
      "enqueued NCCL work: {1}, last completed NCCL work: {2}.\n",
      rank, enqueued, completed);
}

// torch's _store_based_barrier line of init (Lightning-AI/pytorch-lightning#4420's format): rank
// `rank` of a world of `world` waits with `count` arrived.
inline std::string BarrierWait(int rank, int world, int count) {
  return fmt::format(
      "INFO:root:Waiting in store based barrier to initialize process group for rank: {}, key: "
      "store_based_barrier_key:1 (world_size={}, worker_count={}, timeout=0:30:00)\n",
      rank, world, count);
}

// A py-spy dump (the format of tests/golden/hang/*/pyspy/rank*.txt) whose main thread has the
// given frames, innermost first.
inline std::string PySpy(int64_t pid, const std::vector<std::string>& frames, bool idle) {
  std::string out = fmt::format(
      "Process {0}: /usr/bin/python3 -u train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n"
      "Thread {0} ({1}): \"MainThread\"\n",
      pid, idle ? "idle" : "active");
  for (const std::string& f : frames) out += "    " + f + "\n";
  return out;
}

inline const std::vector<std::string> kInAllReduce = {
    "all_reduce (torch/distributed/distributed_c10d.py:2806)",
    "wrapper (torch/distributed/c10d_logger.py:81)", "train_step (train.py:40)",
    "<module> (train.py:90)"};
// torch.utils.cpp_extension waiting on the lock file of a build another rank began (the
// DeepSpeed / torch extension build wait of issue 33).
inline const std::vector<std::string> kInFileLock = {
    "acquire (filelock/_api.py:332)", "_jit_compile (torch/utils/cpp_extension.py:1700)",
    "load (torch/utils/cpp_extension.py:1312)", "train_step (train.py:35)",
    "<module> (train.py:90)"};

}  // namespace strata::hang::inputs

#endif  // STRATA_TESTS_HANG_FIRST_CAUSE_INPUTS_H_
