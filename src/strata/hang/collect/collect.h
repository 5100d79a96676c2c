// `strata collect`: one node's hang evidence, gathered without an agent (run it under srun, pdsh
// or ssh on every node). Finds the trainer processes, reads their rank and NCCL environment from
// /proc/<pid>/environ, runs `py-spy dump` on each with a hard timeout, records nvidia-smi's
// compute apps, copies flight-recorder dumps and the tails of rank logs, and writes the bundle
// (bundle.h) atomically: a staging directory renamed into place.
//
// Signals: py-spy (only py-spy) is killed when it overruns its timeout, and every trainer gets one
// SIGCONT afterwards, because a py-spy killed mid-dump can leave its target ptrace-stopped. No
// other signal is ever sent to a trainer.
#ifndef STRATA_HANG_COLLECT_COLLECT_H_
#define STRATA_HANG_COLLECT_COLLECT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hang/collect/bundle.h"

namespace strata::hang {

struct CollectOptions {
  std::string out_dir;              // the bundle is written to <out_dir>/<host>
  std::string host;                 // "" = this machine's host name
  std::string proc_root = "/proc";  // a fake tree in tests
  std::string path;                 // where py-spy and nvidia-smi are looked up; "" = $PATH
  std::string match;                // command-line substring of a trainer; "" = RANK in environ
  std::vector<std::string> logs;    // rank log files whose tails are kept
  Bytes log_tail = Bytes::KiB(256);
  Seconds pyspy_timeout = Seconds::Of(10);
  bool native = false;   // py-spy --native (slower; shows NCCL frames)
  std::string time_utc;  // "" = now
  // Sends SIGCONT to a trainer; replaced in tests, which must not signal real processes.
  std::function<void(int64_t pid)> resume;
};

struct CollectResult {
  std::string bundle_dir;
  Manifest manifest;
};

Result<CollectResult> Collect(const CollectOptions& options);

}  // namespace strata::hang

#endif  // STRATA_HANG_COLLECT_COLLECT_H_
