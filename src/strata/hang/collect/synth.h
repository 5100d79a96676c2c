// Synthetic bundles from templates: the reference incident and the other recognised hangs at any
// size, written exactly as `strata collect` writes real ones. Used for the test fixtures, the
// benchmark input and for trying the analysis without a hung cluster.
#ifndef STRATA_HANG_COLLECT_SYNTH_H_
#define STRATA_HANG_COLLECT_SYNTH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata::hang {

enum class SynthCase {
  kOomTeardown,  // the reference incident: one rank OOMs at step 1 and sits in teardown
  kWrongNic,     // one node's NCCL_SOCKET_IFNAME points at docker0: all ranks stuck in comm init
  kMismatch,     // one rank issues a different collective than the others
  kP2pDeadlock,  // two pipeline stages both waiting to receive
  kClean,        // a healthy job: ranks computing in a few places
};

struct SynthOptions {
  SynthCase kind = SynthCase::kOomTeardown;
  int64_t ranks = 40;
  int64_t ranks_per_node = 8;
  int64_t culprit = 17;        // the odd rank (kOomTeardown, kMismatch)
  int64_t helper_threads = 4;  // idle Python threads besides MainThread (pin-memory, async save)
};

struct SynthFile {
  std::string path;  // relative to the output directory: "<host>/manifest.json", ...
  std::string contents;
};

/// "oom-teardown", "wrong-nic", "mismatch", "p2p-deadlock", "clean".
std::vector<std::string> SynthCaseNames();
Result<SynthCase> ParseSynthCase(std::string_view name);

/// Every file of one bundle per node.
Result<std::vector<SynthFile>> SynthBundles(const SynthOptions& options);

/// One rank's py-spy text dump, as the bundles hold it (the benchmark builds 10,000 of these).
std::string SynthPySpyText(const SynthOptions& options, int64_t rank);

/// Writes SynthBundles under `out_dir` (created; each file written atomically).
Status WriteSynthBundles(const SynthOptions& options, const std::string& out_dir);

}  // namespace strata::hang

#endif  // STRATA_HANG_COLLECT_SYNTH_H_
