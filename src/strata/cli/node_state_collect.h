// `strata collect --node-state`: the node snapshot for `strata preflight`, reached through the
// collect command's flags (same --out, --host, --proc-root and --timeout).
#ifndef STRATA_CLI_NODE_STATE_COLLECT_H_
#define STRATA_CLI_NODE_STATE_COLLECT_H_

#include <string>

namespace strata::cli {

int RunCollectNodeState(const std::string& out_dir, const std::string& host,
                        const std::string& proc_root, const std::string& timeout_text);

}  // namespace strata::cli

#endif  // STRATA_CLI_NODE_STATE_COLLECT_H_
