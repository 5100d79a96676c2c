// strata <command> [options]: parses the command name and dispatches; all work is in the library.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/commands.h"
#include "strata/cli/exit_status.h"
#include "strata/core/did_you_mean.h"
#include "strata/core/json_output.h"
#include "strata/core/utf8.h"

namespace strata::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"model", "parameters by module, active parameters, FLOPs per token", RunModel},
      {"mfu", "MFU and HFU under each convention, from throughput", RunMfu},
      {"memory", "per-GPU memory ledger, item by item, phase by phase", RunMemory},
      {"step", "predicted step time and where it goes (compute, comm, bubble)", RunStep},
      {"plan", "every valid layout ranked by step time, with the reason for the winner", RunPlan},
      {"map", "bandwidth map of a cluster and where a layout's traffic runs", RunMap},
      {"comm", "cost of one collective on a cluster (time, algbw, busbw)", RunComm},
      {"hang", "find the culprit rank of a hung job from collected evidence", RunHang},
      {"collect", "collect hang evidence on this node (py-spy, env, logs)", RunCollect},
      {"preflight", "check node snapshots before a launch (GPUs, NCCL env, NICs)", RunPreflight},
      {"checkpoint", "checkpoint size, write/load time and the interval to take one",
       RunCheckpoint},
      {"logs", "training-log analyser: steps, real MFU, stalls and anomalies", RunLogs},
      {"import", "job YAML from a Megatron/ms-swift/torchtitan/DeepSpeed/verl launch", RunImport},
      {"compare", "systems side by side: memory, step time, days to train, and why", RunCompare},
      {"report", "one HTML page of a job: memory, step, map and plan as figures", RunReport},
      {"profile", "measured step breakdown from PyTorch profiler traces", RunProfile},
      {"rl", "RL step: rollout and trainer memory, step breakdown, colocated vs split", RunRl},
  };
  return kCommands;
}

namespace {

void PrintUsage() {
  fmt::print("usage: strata <command> [options]\n\ncommands:\n");
  for (const auto& c : Commands()) fmt::print("  {:<10} {}\n", c.name, c.summary);
  fmt::print(
      "\nRun 'strata <command> --help' for a command's options.\n"
      "Exit codes: 0 ok, 1 a check found problems, 2 bad usage or input.\n");
}

std::string CommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 1; i < argc; ++i) line += (i > 1 ? " " : "") + std::string(argv[i]);
  return line;
}

}  // namespace
}  // namespace strata::cli

int main(int argc, char** argv) {
  using namespace strata::cli;
  if (argc < 2 || std::strcmp(argv[1], "help") == 0 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    PrintUsage();
    return argc < 2 ? kExitBadInput : kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    fmt::print("strata {} (json schema_version {})\n", STRATA_VERSION, strata::kSchemaVersion);
    return kExitOk;
  }
  const std::string name = argv[1];
  std::vector<std::string> names;
  for (const auto& c : Commands()) {
    names.push_back(c.name);
    if (name == c.name) {
      std::string prog = "strata " + name;
      argv[1] = prog.data();
      // The last resort: parsers return errors, but an exception that still escapes must not
      // abort with a core dump. Exit 2 naming the command line, which names the input.
      try {
        return c.run(argc - 1, argv + 1);
      } catch (const std::exception& e) {
        fmt::print(stderr, "strata: error: {} failed on its input: {}\n  input: {}\n", prog,
                   strata::SanitizeUtf8(e.what()), strata::SanitizeUtf8(CommandLine(argc, argv)));
      } catch (...) {
        fmt::print(stderr,
                   "strata: error: {} failed on its input (unknown exception)\n  input: {}\n", prog,
                   strata::SanitizeUtf8(CommandLine(argc, argv)));
      }
      return kExitBadInput;
    }
  }
  fmt::print(stderr, "strata: error: unknown command '{}'\n  hint: {}\n", name,
             strata::DidYouMeanHint(name, names));
  return kExitBadInput;
}
