// What the thirtieth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (sixth)"`) showed strata reading wrong at its first run. Each test quotes the public
// thread's lines (the case named beside the test) and states what a reader derives from them by
// hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_thirtieth_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

// NVlabs/nvdiffrec#39 (nvdiffrec-39-lock-file-exists-then-extensions-root): the training's own
// lines, then "Warning: Lock file exists in build directory: '...\renderutils_plugin\lock'" and
// torch's "Using ... as PyTorch extensions root...", and nothing more. By hand: the extension
// loader warns that the build directory of a torch C++/CUDA extension holds a lock file before it
// calls torch's load, which then waits in FileBaton.wait until the file goes away; a build killed
// mid-way leaves it behind and the wait never ends (the maintainer: delete the lock file). The
// process is stuck outside any collective, on a lock file; no rank is printed. The first run read
// nothing (exit 3).
const std::string kLockFile =
    "DatasetNERF: 100 images with shape [800, 800]\n"
    "DatasetNERF: 200 images with shape [800, 800]\n"
    "Encoder output: 32 dims\n"
    "Warning: Lock file exists in build directory: "
    "'C:\\Users\\AppData\\Local\\torch_extensions\\torch_extensions\\Cache\\py39_cu113\\"
    "renderutils_plugin\\lock'\n"
    "Using C:\\Users\\AppData\\Local\\torch_extensions\\torch_extensions\\Cache\\py39_cu113 as "
    "PyTorch extensions root...\n";

TEST(FirstRunThirtiethBatch, LockFileLeftInAnExtensionBuildDirectoryIsALockWait) {
  const auto lines = hang::ScanFailures(kLockFile, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kLockWait);
  EXPECT_EQ(lines[0].line, 4);
  const Verdict v = AnalyzeLog(kLockFile);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "lagging_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // The program's lines alone, without the warning, say nothing of a lock.
  EXPECT_EQ(AnalyzeLog("Encoder output: 32 dims\n").finding.kind, "unknown");
}

// nerfstudio-project/gsplat#297 (gsplat-297-filenotfound-extension-lock-two-trainings): the error
// line in inline backquotes, "```FileNotFoundError: [Errno 2] No such file or directory:
// '~/.cache/torch_extensions/py39_cu121/gsplat_cuda/lock'```", with two trainings on one machine,
// and the traceback through gsplat's backend into torch's cpp_extension load. By hand: torch's
// FileBaton takes the build lock by creating the 'lock' file and releases it by deleting it; a
// second process building the same extension found the file gone under it and raised. The process
// died on that error: a crash, no rank. The first run read nothing (exit 3).
const std::string kLockGone =
    "```FileNotFoundError: [Errno 2] No such file or directory: "
    "'~/.cache/torch_extensions/py39_cu121/gsplat_cuda/lock'```\n"
    "\n"
    "This happens only when I have multiple training scripts running on the same machine.\n";

TEST(FirstRunThirtiethBatch, ExtensionBuildLockGoneUnderAProcessIsACrash) {
  const auto lines = hang::ScanFailures(kLockGone, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kPythonError);
  const Verdict v = AnalyzeLog(kLockGone);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // A missing file that is no extension build lock is the program's own business.
  EXPECT_TRUE(
      hang::ScanFailures("FileNotFoundError: [Errno 2] No such file or directory: 'data.json'\n",
                         "log.txt")
          .empty());
}

// NVIDIA/nccl#210 (nccl-210-prose-socket-creation-failed-address-family): four processes under
// "mpirun -np 4"; rank 0 hangs in ncclCommInitRank and every rank reports NCCL 2.3's warning,
// which prints "WARN" without "NCCL": "include/socket.h:344 WARN Socket creation failed : Address
// family not supported by protocol". By hand: NCCL could not open a socket of the family of the
// address it picked (socket() returned EAFNOSUPPORT) while the communicator was being set up, so
// it cannot bootstrap (the maintainer: no usable IP interface was found): a start-up fault, no
// rank named. The first run read nothing (exit 3).
const std::string kSocket =
    "I use mpirun -np 4 python xx.py\n"
    "\n"
    "include/socket.h:344 WARN Socket creation failed : Address family not supported by "
    "protocol\n";

TEST(FirstRunThirtiethBatch, NcclSocketCreationFailedIsABootstrapFault) {
  const auto lines = hang::ScanFailures(kSocket, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kBootstrap);
  const Verdict v = AnalyzeLog(kSocket);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
}

}  // namespace
}  // namespace strata::first_run_thirtieth_batch_test
