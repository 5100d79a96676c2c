// Placeholder until the subcommand lands.
#include <fmt/format.h>

#include "strata/cli/commands.h"
#include "strata/cli/exit_status.h"

namespace strata::cli {

int RunHang(int /*argc*/, char** /*argv*/) {
  fmt::print(stderr, "strata: error: 'hang' is not implemented yet\n");
  return kExitBadInput;
}

}  // namespace strata::cli
