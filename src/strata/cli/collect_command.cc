// strata collect --out DIR [--log FILE]...: this node's hang evidence as one bundle directory.
// Run it on every node at once (srun, pdsh, ssh); then `strata hang DIR/*`.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/node_state_collect.h"
#include "strata/core/units.h"
#include "strata/hang/analysis/stack_tree.h"
#include "strata/hang/collect/collect.h"

namespace strata::cli {

int RunCollect(int argc, char** argv) {
  CLI::App app{
      "Collect this node's hang evidence into <out>/<host>: the trainer processes (RANK in "
      "/proc/<pid>/environ), a py-spy dump of each (hard timeout; every trainer gets SIGCONT "
      "afterwards, and no other signal), nvidia-smi compute apps, flight-recorder dumps and the "
      "tails of the given logs. Analyse with 'strata hang <out>/*'.",
      "strata collect"};
  hang::CollectOptions options;
  std::string timeout_text = "10s";
  std::string tail_text = "256KiB";
  app.add_option("--out", options.out_dir,
                 "an existing directory that receives <host>/ (shared storage is easiest)")
      ->required();
  app.add_option("--log", options.logs, "a rank log file whose tail is kept (repeat the flag)");
  app.add_option("--match", options.match,
                 "select processes whose command line contains this text (default: every process "
                 "with RANK in its environment)");
  app.add_option("--timeout", timeout_text, "py-spy timeout per process, with a unit")
      ->capture_default_str();
  app.add_option("--log-tail", tail_text, "bytes kept from the end of each log, with a unit")
      ->capture_default_str();
  app.add_flag("--native", options.native, "py-spy --native: C/C++ frames too (NCCL, slower)");
  app.add_option("--host", options.host, "the bundle's name (default: this host's name)");
  app.add_option("--proc-root", options.proc_root, "the /proc tree to read (tests)")
      ->capture_default_str();
  bool node_state = false;
  app.add_flag("--node-state", node_state,
               "collect this node's state for 'strata preflight' instead (GPUs, NICs, RDMA, shell "
               "env, versions)");
  if (auto code = ParseArgs(app, argc, argv)) return *code;
  if (node_state)
    return RunCollectNodeState(options.out_dir, options.host, options.proc_root, timeout_text);

  auto timeout = ParseSeconds(timeout_text);
  if (!timeout.ok()) return ReportError(Error(timeout.error()).InField("--timeout"));
  options.pyspy_timeout = *timeout;
  auto tail = ParseBytes(tail_text);
  if (!tail.ok()) return ReportError(Error(tail.error()).InField("--log-tail"));
  options.log_tail = *tail;

  auto result = hang::Collect(options);
  if (!result.ok()) return ReportError(result.error());
  const hang::Manifest& m = result->manifest;
  std::vector<int64_t> ranks;
  int ok = 0, timed_out = 0, failed = 0, fr = 0;
  for (const hang::ProcessRecord& p : m.processes) {
    if (p.rank) ranks.push_back(*p.rank);
    if (p.pyspy_file.empty()) continue;
    if (p.pyspy_timed_out)
      ++timed_out;
    else if (p.pyspy_exit_code == 0)
      ++ok;
    else
      ++failed;
    fr += static_cast<int>(p.fr_files.size());
  }
  for (const std::string& note : m.notes) Warn(note);
  if (m.processes.empty())
    Warn("no trainer processes found on this node (none has RANK in its environment)");
  fmt::print(
      "{}: {} trainer process{} (ranks {}); py-spy: {} ok, {} timed out, {} failed; "
      "nvidia-smi: {}; flight-recorder dumps: {}; log tails: {}\n",
      result->bundle_dir, m.processes.size(), m.processes.size() == 1 ? "" : "es",
      ranks.empty() ? "none" : hang::FormatRankRanges(ranks), ok, timed_out, failed,
      m.nvidia_smi_file.empty() ? "no" : "yes", fr, m.logs.size());
  return kExitOk;
}

}  // namespace strata::cli
