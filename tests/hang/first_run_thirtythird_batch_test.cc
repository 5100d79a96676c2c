// What the thirty-third batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-08 (ninth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_thirtythird_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

// vllm-project/vllm#7871 (vllm-7871-rank0-ncclcomminitrank-internal-error-ray-init-device) and
// akash-network/awesome-akash#543 (awesome-akash-543-vllm-prefix-rank0-ncclcomminitrank-
// unhandled-system-error): a "[rank0]:" traceback through vLLM's PyNcclCommunicator into
// pynccl_wrapper.py's "line 244, in ncclCommInitRank" and "line 223, in NCCL_CHECK", ending
// "[rank0]: RuntimeError: NCCL error: internal error - please report this issue to the NCCL
// developers" (the other paste is cut inside "NCCL error: unhandled syst"). By hand: NCCL_CHECK
// raises "NCCL error: <ncclGetErrorString>" for any result other than success, and the frame
// above it is ncclCommInitRank, so the communicator could not be created, before any collective:
// a start-up fault (bootstrap); only rank 0's side is pasted and the fault is not placed on it,
// so no culprit. The first run read nothing (exit 3). Lines of that format, another path, line
// numbers and NCCL result.
const std::string kInitRaise =
    "[rank0]:   File \"/opt/venv/lib/python3.12/site-packages/vllm/distributed/"
    "device_communicators/pynccl_wrapper.py\", line 301, in ncclCommInitRank\n"
    "[rank0]:     self.NCCL_CHECK(self._funcs[\"ncclCommInitRank\"](ctypes.byref(comm),\n"
    "[rank0]:   File \"/opt/venv/lib/python3.12/site-packages/vllm/distributed/"
    "device_communicators/pynccl_wrapper.py\", line 280, in NCCL_CHECK\n"
    "[rank0]:     raise RuntimeError(f\"NCCL error: {error_str}\")\n"
    "[rank0]: RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n";

TEST(FirstRunThirtythirdBatch, AnNcclErrorRaisedUnderCommInitIsAStartUpFault) {
  const auto lines = hang::ScanFailures(kInitRaise, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(lines[0].line, 5);
  const Verdict v = AnalyzeLog(kInitRaise);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
}

// The same error cut by the paste inside its result's name (awesome-akash#543 ends on
// "RuntimeError: NCCL error: unhandled syst"): the raise under ncclCommInitRank is all a reader
// needs, so it is the same start-up fault.
TEST(FirstRunThirtythirdBatch, AnNcclErrorCutInsideItsNameIsStillAStartUpFault) {
  const std::string cut =
      "  File \"/usr/lib/python3/vllm/distributed/device_communicators/pynccl_wrapper.py\", "
      "line 244, in ncclCommInitRank\n"
      "    self.NCCL_CHECK(self._funcs[\"ncclCommInitRank\"](ctypes.byref(comm),\n"
      "  File \"/usr/lib/python3/vllm/distributed/device_communicators/pynccl_wrapper.py\", "
      "line 223, in NCCL_CHECK\n"
      "    raise RuntimeError(f\"NCCL error: {error_str}\")\n"
      "RuntimeError: NCCL error: remote pro\n";
  const Verdict v = AnalyzeLog(cut);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
}

// The same words with no communicator set-up in the traceback are no start-up fault: vLLM's
// pynccl all_reduce raises them mid-run through the same NCCL_CHECK, and the collective's
// failure is not known from them alone.
TEST(FirstRunThirtythirdBatch, AnNcclErrorRaisedOutsideCommInitIsNotAStartUpFault) {
  const std::string mid_run =
      "  File \"/usr/lib/python3/vllm/distributed/device_communicators/pynccl.py\", line 120, in "
      "all_reduce\n"
      "    self.nccl.ncclAllReduce(buffer_type(in_tensor.data_ptr()),\n"
      "  File \"/usr/lib/python3/vllm/distributed/device_communicators/pynccl_wrapper.py\", "
      "line 223, in NCCL_CHECK\n"
      "    raise RuntimeError(f\"NCCL error: {error_str}\")\n"
      "RuntimeError: NCCL error: internal error\n";
  for (const auto& s : hang::ScanFailures(mid_run, "log.txt")) {
    EXPECT_NE(s.kind, FailureKind::kBootstrap) << s.text;
  }
  // Nor is a line after the traceback ended: the frames hold for its own exception line only.
  const std::string after = kInitRaise + "RuntimeError: NCCL error: internal error\n";
  EXPECT_EQ(hang::ScanFailures(after, "log.txt").size(), 1u);
}

// vllm-project/vllm#17160 (vllm-17160-ray-worker-ncclcomminitrank-nccl-check-raise-cut, held
// back): a Ray worker's "(RayWorkerWrapper pid=...) ERROR ..." traceback through
// pynccl_wrapper.py's ncclCommInitRank and NCCL_CHECK, the paste ending on NCCL_CHECK's source
// line 'raise RuntimeError(f"NCCL error: {error_str}")' before the exception line. By hand:
// Python prints a frame's source line only on the path the exception took, so NCCL_CHECK raised
// under ncclCommInitRank: the communicator could not be created, a start-up fault (bootstrap),
// read at that line; no rank is named (a pid only). Before, nothing was read (exit 3). Lines of
// that shape, another pid, path and line numbers.
TEST(FirstRunThirtythirdBatch, ATracebackCutAfterTheRaiseUnderCommInitIsAStartUpFault) {
  const std::string prefix =
      "(RayWorkerWrapper pid=2201) ERROR 05-02 10:01:02 [worker_base.py:612] ";
  const std::string cut =
      prefix +
      "  File \"/env/lib/python3.12/site-packages/vllm/distributed/"
      "device_communicators/pynccl_wrapper.py\", line 270, in ncclCommInitRank\n" +
      prefix + "    self.NCCL_CHECK(self._funcs[\"ncclCommInitRank\"](ctypes.byref(comm),\n" +
      prefix +
      "  File \"/env/lib/python3.12/site-packages/vllm/distributed/"
      "device_communicators/pynccl_wrapper.py\", line 250, in NCCL_CHECK\n" +
      prefix + "    raise RuntimeError(f\"NCCL error: {error_str}\")\n" +
      "(RayWorkerWrapper pid=2201) ERROR 05-02\n";
  const auto lines = hang::ScanFailures(cut, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(lines[0].line, 4);
  const Verdict v = AnalyzeLog(cut);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
}

}  // namespace
}  // namespace strata::first_run_thirtythird_batch_test
