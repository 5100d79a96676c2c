// Placeholder until the subcommand lands.
#include <fmt/format.h>

#include "strata/cli/commands.h"
#include "strata/cli/exit_status.h"

namespace strata::cli {

int RunMfu(int /*argc*/, char** /*argv*/) {
  fmt::print(stderr, "strata: error: 'mfu' is not implemented yet\n");
  return kExitBadInput;
}

}  // namespace strata::cli
