// The subcommands. Each runs with its own argv (argv[0] is "strata <name>") and returns an exit
// code (see exit_status.h). One file per subcommand: <name>_command.cc.
#ifndef STRATA_CLI_COMMANDS_H_
#define STRATA_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace strata::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

int RunModel(int argc, char** argv);
int RunMfu(int argc, char** argv);
int RunMemory(int argc, char** argv);
int RunStep(int argc, char** argv);
int RunPlan(int argc, char** argv);
int RunMap(int argc, char** argv);
int RunComm(int argc, char** argv);
int RunHang(int argc, char** argv);
int RunCollect(int argc, char** argv);
int RunPreflight(int argc, char** argv);
int RunCheckpoint(int argc, char** argv);
int RunLogs(int argc, char** argv);
int RunImport(int argc, char** argv);
int RunCompare(int argc, char** argv);
int RunReport(int argc, char** argv);
int RunProfile(int argc, char** argv);
int RunRl(int argc, char** argv);

/// The table `strata help` prints and main dispatches on.
const std::vector<Command>& Commands();

}  // namespace strata::cli

#endif  // STRATA_CLI_COMMANDS_H_
