// The table of targets, for the replay test (each libFuzzer driver calls its entry directly).
#include "entries/fuzz_entries.h"

namespace strata::fuzz {

const std::vector<Target>& Targets() {
  static const std::vector<Target> kTargets = {
      {"pyspy_text", PySpyText},
      {"pyspy_json", PySpyJson},
      {"flight_recorder", FlightRecorder},
      {"pickle", Pickle},
      {"watchdog_log", WatchdogLog},
      {"log_signals", LogSignals},
      {"nccl_ras", NcclRas},
      {"bundle_manifest", BundleManifest},
      {"evidence", Evidence},
      {"model_config", HfModelConfig},
      {"job_yaml", JobYaml},
      {"cluster_yaml", ClusterYaml},
      {"seq_histogram", SeqHistogram},
      {"unit_strings", UnitStrings},
      {"gloo_log", GlooLog},
      {"import_cmdline", ImportCmdline},
      {"import_toml", ImportToml},
      {"import_json", ImportJson},
      {"import_yaml", ImportYaml},
      {"training_log", TrainingLog},
      {"node_state", NodeState},
  };
  return kTargets;
}

const Target* FindTarget(std::string_view name) {
  for (const Target& t : Targets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace strata::fuzz
