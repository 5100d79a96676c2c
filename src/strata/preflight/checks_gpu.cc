// GPU checks: memory held by processes that should not hold it (dead, zombie, another user's,
// a leftover trainer), memory in use with no process listed (the release race of incident 3),
// GPUs nvidia-smi cannot query, Xid lines (errors for the codes that need a GPU reset), ECC,
// retired pages and clock throttling.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/preflight/checks.h"

namespace strata::preflight {
namespace {

// clocks_throttle_reasons.active bits that mean the GPU is slowed by hardware or heat
// (nvidia-smi --help-query-gpu: hw_slowdown 0x8, sw_thermal_slowdown 0x20,
// hw_thermal_slowdown 0x40, hw_power_brake_slowdown 0x80). Idle (0x1) and the software power
// cap (0x4) are normal.
constexpr std::pair<uint64_t, const char*> kThrottleBits[] = {{0x8, "HW slowdown"},
                                                              {0x20, "SW thermal slowdown"},
                                                              {0x40, "HW thermal slowdown"},
                                                              {0x80, "HW power brake"}};

const ProcessInfo* FindProcess(const NodeState& node, int64_t pid) {
  for (const ProcessInfo& p : node.processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

std::string Gib(double mib) { return FormatGiB(Bytes::MiB(mib), 1); }

void CheckHolders(const NodeState& node, const Rules& rules, PreflightReport& report) {
  std::map<std::string, int64_t> index_of;
  for (const GpuRow& g : node.gpus) index_of[g.uuid] = g.index;
  for (const ComputeApp& app : node.compute_apps) {
    const auto idx = index_of.find(app.gpu_uuid);
    const std::string gpu =
        idx == index_of.end() ? app.gpu_uuid : fmt::format("GPU {}", idx->second);
    const std::string amount = app.used_mib ? Gib(*app.used_mib) : "memory (amount not reported)";
    const ProcessInfo* p = FindProcess(node, app.pid);
    const std::string what =
        fmt::format("{}: {} held by pid {} ({})", gpu, amount, app.pid, app.process_name);
    Finding f{Severity::kError, "gpu-memory", node.host, "", ""};
    if (!p || !p->exists) {
      f.message =
          what +
          ", which does not exist on the node: it exited and the driver is still releasing its "
          "memory, or it runs in another PID namespace (a container)";
      f.fix = fmt::format(
          "wait {} and re-run the preflight; if the memory stays, find the owner on the host: "
          "fuser -v /dev/nvidia{}",
          FormatSeconds(rules.release_wait),
          idx == index_of.end() ? std::string("*") : std::to_string(idx->second));
    } else if (!p->state.empty() && p->state[0] == 'Z') {
      f.message = what + ", a zombie: its memory is released only when its parent reaps it";
      f.fix = fmt::format("kill the parent of pid {} (or wait for it to exit)", app.pid);
    } else if (!p->state.empty() && p->state[0] == 'D') {
      f.message =
          what + ", in uninterruptible sleep (D): kill -9 takes effect only when it leaves it";
      f.fix = fmt::format(
          "kill -9 {}; if it stays in D, drain the node and reset the GPU or reboot", app.pid);
    } else if (p->uid && node.uid && *p->uid != *node.uid) {
      f.message = fmt::format("{}, owned by another user (uid {}): {}", what, *p->uid, p->cmdline);
      f.fix = fmt::format("the job cannot use {}: ask its owner, or exclude the node", gpu);
    } else {
      const auto rank = p->env.find("RANK");
      f.message = rank != p->env.end()
                      ? fmt::format("{}, a leftover trainer (RANK={}) of an earlier run: {}", what,
                                    rank->second, p->cmdline)
                      : fmt::format("{}, a leftover process: {}", what, p->cmdline);
      f.fix = fmt::format(
          "kill {} (then re-run the preflight: the memory is freed when its context is torn down)",
          app.pid);
    }
    report.findings.push_back(std::move(f));
  }
  for (const GpuRow& g : node.gpus) {
    if (!g.memory_used_mib || Bytes::MiB(*g.memory_used_mib) <= rules.dirty_memory) continue;
    bool listed = false;
    for (const ComputeApp& app : node.compute_apps) listed |= app.gpu_uuid == g.uuid;
    if (listed) continue;
    report.findings.push_back(Finding{
        Severity::kError, "gpu-memory", node.host,
        fmt::format(
            "GPU {}: {} in use (above the {} clean threshold) but no process is listed: memory of "
            "a killed "
            "process not yet released (the release race), or a process in another PID namespace{}",
            g.index, Gib(*g.memory_used_mib), FormatGiB(rules.dirty_memory, 0),
            node.Has("compute_apps") ? "" : " (compute-apps.csv was not collected)"),
        fmt::format(
            "wait {} and re-run the preflight before launching; if it stays, on the host: fuser -v "
            "/dev/nvidia{}",
            FormatSeconds(rules.release_wait), g.index)});
  }
}

// A GPU that nvidia-smi lists but cannot query (audit52 K9: every field "[GPU requires reset]" or
// "[GPU is lost]") passed every check, as its empty fields were read as "not reported": the count
// check saw 8 GPUs, the memory check no memory. NVML's own words for the two states (nvml.h,
// nvmlReturn_t): NVML_ERROR_RESET_REQUIRED "the GPU requires a reset before it can be used
// again", NVML_ERROR_GPU_IS_LOST "the GPU has fallen off the bus or has otherwise become
// inaccessible" (the Xid 79 state). Either is a GPU that cannot run its ranks: an error. Another
// failed field ("[Unknown Error]") is a field not checked: a warning naming it.
void CheckQueryErrors(const NodeState& node, PreflightReport& report) {
  for (const GpuRow& g : node.gpus) {
    if (g.query_errors.empty()) continue;
    std::map<std::string, std::vector<std::string>> columns_of;  // error -> columns
    for (const auto& [column, error] : g.query_errors) columns_of[error].push_back(column);
    std::string what;
    for (const auto& [error, columns] : columns_of) {
      what +=
          fmt::format("{}[{}] for {}", what.empty() ? "" : "; ", error, fmt::join(columns, ", "));
    }
    if (columns_of.count("GPU is lost")) {
      report.findings.push_back(Finding{
          Severity::kError, "gpu-state", node.host,
          fmt::format("GPU {}: nvidia-smi lists it but cannot query it ({}): NVML cannot reach the "
                      "GPU (fallen off the bus or otherwise inaccessible), so it cannot run its "
                      "ranks",
                      g.index, what),
          "drain the node and reboot it; look for Xid 79 in dmesg and check nvidia-smi -q on the "
          "node"});
    } else if (columns_of.count("GPU requires reset")) {
      report.findings.push_back(Finding{
          Severity::kError, "gpu-state", node.host,
          fmt::format("GPU {}: nvidia-smi lists it but cannot query it ({}): NVML says the GPU "
                      "requires a reset before it can be used again",
                      g.index, what),
          fmt::format("drain the node and reset the GPU (nvidia-smi -r -i {}) or reboot; look for "
                      "the Xid that caused it in dmesg",
                      g.index)});
    } else {
      report.findings.push_back(
          Finding{Severity::kWarning, "gpu-state", node.host,
                  fmt::format("GPU {}: nvidia-smi could not read {}: those fields were not checked",
                              g.index, what),
                  "run nvidia-smi -q -i " + std::to_string(g.index) +
                      " on the node; drain it if the GPU keeps failing queries"});
    }
  }
}

bool IsNoAction(std::string_view action) {
  return action == "None" || action == "none" || action == "NONE";
}

// "GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)": the action after
// " to " is None.
bool RecoveryActionCleared(std::string_view line) {
  const size_t to = line.rfind(" to ");
  if (to == std::string_view::npos) return false;
  const std::string_view after = line.substr(to + 4);
  return after.starts_with("0x0 ") || after.starts_with("0x0(") || after == "0x0" ||
         after.starts_with("None") || after.starts_with("0x00 ");
}

// Every Xid was a warning (audit52 K1), so a node with an Xid 95 (uncontained ECC error) and an
// Xid 48 (DBE) was "ready to launch" and passed the `preflight || exit 1` gate. The codes after
// which NVIDIA's Xid catalog says the GPU must be reset (or the node rebooted) are errors, as
// data (data/preflight/rules.yaml, xid:, with its source); the others end the process that hit
// them, not the GPU, and stay warnings.
void CheckHealth(const NodeState& node, const Rules& rules, PreflightReport& report) {
  for (const XidEvent& x : node.xids) {
    const XidRule* rule = rules.XidRuleFor(x.code);
    // Xid 154 announces the recovery action the driver now requires (audit56 Q5); one that
    // changes it back to None says the GPU needs nothing, and stays a warning.
    if (x.code == 154 && RecoveryActionCleared(x.line)) rule = nullptr;
    report.findings.push_back(
        rule ? Finding{rule->severity, "xid", node.host,
                       fmt::format("Xid {} on {}: {}: {}", x.code, x.pci, rule->why, x.line),
                       rule->fix}
             : Finding{Severity::kWarning, "xid", node.host,
                       fmt::format("Xid {} on {}: {}", x.code, x.pci, x.line),
                       "look the code up in NVIDIA's Xid catalog; drain the node if it repeats"});
  }
  for (const GpuRow& g : node.gpus) {
    // An uncorrected count alone stays a warning: on GPUs with error containment (A100 and
    // later) NVIDIA documents that new work can start without a reset after a contained error
    // (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt); the uncontained case is Xid 95, above.
    if (g.ecc_uncorrected && *g.ecc_uncorrected > 0) {
      report.findings.push_back(
          Finding{Severity::kWarning, "ecc", node.host,
                  fmt::format("GPU {}: {} uncorrected ECC error{} since the last driver load",
                              g.index, *g.ecc_uncorrected, *g.ecc_uncorrected == 1 ? "" : "s"),
                  "drain the node and run dcgmi diag -r 3"});
    }
    // NVML: pages pending retirement "need a reboot to fully retire"
    // (nvmlDeviceGetRetiredPagesPendingStatus); until then the failing pages stay in service.
    if (g.retired_pages_pending.value_or(false)) {
      report.findings.push_back(Finding{
          Severity::kError, "ecc", node.host,
          fmt::format("GPU {}: retired pages pending: the failing memory pages stay in use until "
                      "the GPU is reset or the driver reloaded",
                      g.index),
          "drain the node and reset the GPU (or reboot) so the pages are retired"});
    }
    // Row remapping (A100 and later, where retired_pages.* read [N/A]), audit56 Q6. NVML
    // nvmlDeviceGetRemappedRows: "isPending indicates whether or not there are pending
    // remappings. A reset will be required to actually remap the row. failureOccurred will be
    // set if a row remapping ever failed in the past"; NVIDIA's GPU memory error management
    // guide makes a remapping failure an RMA condition.
    if (g.remap_pending.value_or(false)) {
      report.findings.push_back(Finding{
          Severity::kError, "ecc", node.host,
          fmt::format("GPU {}: a row remap is pending: the failing memory row stays in use until "
                      "the GPU is reset",
                      g.index),
          fmt::format("drain the node and reset the GPU (nvidia-smi -r -i {}) or reboot before "
                      "the job",
                      g.index)});
    }
    if (g.remap_failure.value_or(false)) {
      report.findings.push_back(Finding{
          Severity::kError, "ecc", node.host,
          fmt::format("GPU {}: a row remapping failed (remapped_rows.failure: Yes): the GPU has "
                      "no spare row left for the failing memory",
                      g.index),
          "drain the node and have the GPU replaced (NVIDIA's memory error management guide: an "
          "RMA condition)"});
    }
    // The driver's own verdict (nvidia-smi's GPU Recovery Action, R575 and later): anything but
    // None means the GPU cannot take work until the action is done.
    if (!g.recovery_action.empty() && !IsNoAction(g.recovery_action)) {
      report.findings.push_back(Finding{
          Severity::kError, "gpu-state", node.host,
          fmt::format("GPU {}: the driver's recovery action is \"{}\": the GPU needs it before it "
                      "takes work",
                      g.index, g.recovery_action),
          fmt::format("drain the node and do what it names (GPU reset: nvidia-smi -r -i {}; node "
                      "reboot; drain P2P)",
                      g.index)});
    }
    if (g.throttle_reasons) {
      std::string reasons;
      for (const auto& [bit, name] : kThrottleBits) {
        if (*g.throttle_reasons & bit) reasons += std::string(reasons.empty() ? "" : ", ") + name;
      }
      if (!reasons.empty()) {
        report.findings.push_back(
            Finding{Severity::kWarning, "throttle", node.host,
                    fmt::format("GPU {}: clocks throttled ({}; reasons 0x{:016x})", g.index,
                                reasons, *g.throttle_reasons),
                    "check cooling and power; this GPU will be the straggler"});
      }
    }
  }
}

}  // namespace

// A node whose bundle holds no GPU list (nvidia-smi missing or failing) was reported "no error in
// what was read" with exit 0: its GPUs were never looked at, and a GPU node without a working
// nvidia-smi usually has no working driver either.
void CheckGpuListPresent(const NodeState& node, PreflightReport& report) {
  if (node.Has("gpus")) return;
  std::string why = "gpus.csv is not in the bundle";
  for (const std::string& note : node.notes) {
    if (note.starts_with("gpus.csv:")) why = "the collector noted \"" + note + "\"";
  }
  report.findings.push_back(
      {Severity::kError, "gpu-evidence", node.host,
       fmt::format("no GPU list ({}): memory held on the GPUs, Xid, ECC and throttling were not "
                   "checked",
                   why),
       "make nvidia-smi work on the node (driver installed, nvidia-smi on PATH), then collect "
       "again with 'strata collect --node-state'"});
}

// A node whose nvidia-smi lists fewer GPUs than the job expects (GPUs fallen off the bus after an
// Xid 79, a GPU hidden from the container) cannot run its share of the ranks: torchrun with
// --nproc-per-node 8 fails at set_device on the missing ones, or a remapped launch runs a world
// of the wrong size. The reference (reference/formats/logs-and-node-state.md, 2.1) treats a GPU
// count below the expected one as a hard failure, as GCM's gpu_num check does. The expected count
// is --gpus-per-node when given, else the count most nodes show (ties to the larger), as the RDMA
// check compares port counts across nodes.
void CheckGpuCount(const std::vector<NodeState>& nodes, const PreflightOptions& options,
                   PreflightReport& report) {
  std::map<size_t, size_t> nodes_with;  // GPU count -> number of nodes
  for (const NodeState& node : nodes) {
    if (node.Has("gpus")) ++nodes_with[node.gpus.size()];
  }
  size_t expected = 0, most_nodes = 0;
  for (const auto& [count, n] : nodes_with) {
    if (n >= most_nodes) {
      expected = count;
      most_nodes = n;
    }
  }
  const bool from_option = options.gpus_per_node > 0;
  if (from_option) expected = static_cast<size_t>(options.gpus_per_node);
  for (const NodeState& node : nodes) {
    if (!node.Has("gpus") || node.gpus.size() >= expected) continue;
    std::vector<int64_t> missing;
    for (int64_t i = 0; i < static_cast<int64_t>(expected); ++i) {
      bool seen = false;
      for (const GpuRow& g : node.gpus) seen |= g.index == i;
      if (!seen) missing.push_back(i);
    }
    const std::string which =
        missing.empty() ? "" : fmt::format(": GPU {} missing", fmt::join(missing, ", "));
    report.findings.push_back(Finding{
        Severity::kError, "gpu-count", node.host,
        fmt::format("{} GPU{} visible to nvidia-smi, {} {}{}{}", node.gpus.size(),
                    node.gpus.size() == 1 ? "" : "s",
                    from_option ? "the job expects" : "the other nodes have", expected,
                    from_option ? " per node (--gpus-per-node)" : "", which),
        "look for Xid 79 (fallen off the bus) in dmesg and check nvidia-smi -L on the node; "
        "drain it or leave it out of the job"});
  }
}

void CheckGpus(const std::vector<NodeState>& nodes, const Rules& rules, PreflightReport& report) {
  for (const NodeState& node : nodes) {
    CheckGpuListPresent(node, report);
    CheckQueryErrors(node, report);
    CheckHolders(node, rules, report);
    CheckHealth(node, rules, report);
  }
}

}  // namespace strata::preflight
