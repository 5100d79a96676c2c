#ifndef STRATA_CLI_EXIT_STATUS_H_
#define STRATA_CLI_EXIT_STATUS_H_

namespace strata::cli {

/// 0 ok; 1 a check ran and found problems (an OOM verdict, a hang found); 2 bad usage or input;
/// 3 the input was read but understood too little for a verdict (`strata hang` on evidence that
/// names no culprit), so that a script never takes "nothing understood" for "all clear".
enum ExitStatus : int { kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2, kExitNoVerdict = 3 };

}  // namespace strata::cli

#endif  // STRATA_CLI_EXIT_STATUS_H_
