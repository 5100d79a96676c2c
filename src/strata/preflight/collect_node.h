// `strata collect --node-state`: one node's state as a bundle (bundle.h), gathered with
// read-only queries: nvidia-smi, ip -j, ibdev2netdev, rdma link, ibstat, show_gids (or the
// sysfs GID table), the kernel log's Xid lines, the installed torch/vLLM/SGLang versions, the
// NCCL/CUDA/torch variables each kind of shell ends up with (sourcing /etc/profile,
// /etc/bash.bashrc, ~/.bashrc as a launcher would, file by file) and /proc of the trainers and
// of every pid holding GPU memory. A missing tool is a note, never a failure. Nothing is
// written outside <out>/<host> (a staging directory renamed into place), no signal is sent, and
// nothing on the node is changed.
#ifndef STRATA_PREFLIGHT_COLLECT_NODE_H_
#define STRATA_PREFLIGHT_COLLECT_NODE_H_

#include <string>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/preflight/node_state.h"

namespace strata::preflight {

struct NodeStateOptions {
  std::string out_dir;              // the bundle goes to <out_dir>/<host>
  std::string host;                 // "" = this machine's host name
  std::string proc_root = "/proc";  // fake trees in tests
  std::string sys_root = "/sys";
  std::string etc_root;               // prefix of /etc/profile, /etc/bash.bashrc, /etc/nccl.conf
  std::string home;                   // "" = $HOME
  std::string path;                   // where the tools are looked up; "" = $PATH
  Seconds timeout = Seconds::Of(10);  // per command
  std::string time_utc;               // "" = now
};

struct NodeStateResult {
  std::string bundle_dir;
  NodeState state;  // as written (the manifest's fields; run LoadNodeState for the parsed parts)
};

Result<NodeStateResult> CollectNodeState(const NodeStateOptions& options);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_COLLECT_NODE_H_
