// One node's state as `strata collect --node-state` snapshots it and `strata preflight` reads
// it: GPUs and the processes holding them, driver and CUDA, network interfaces and routes, RDMA
// devices with their netdevs, ports and GID tables, the NCCL/CUDA/torch variables each shell
// ends up with (and the file that set each), installed framework versions, kernel Xid lines.
// Every part is optional: `unread` says what could not be read and why.
#ifndef STRATA_PREFLIGHT_NODE_STATE_H_
#define STRATA_PREFLIGHT_NODE_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::preflight {

/// One row of `nvidia-smi --query-gpu=... --format=csv`. Memory in MiB as nvidia-smi prints it.
struct GpuRow {
  int64_t index = 0;
  std::string uuid;
  std::string name;
  std::optional<double> memory_used_mib;
  std::optional<double> memory_total_mib;
  std::optional<double> utilization_pct;
  std::optional<uint64_t> throttle_reasons;   // clocks_throttle_reasons.active bitmask
  std::optional<int64_t> ecc_uncorrected;     // ecc.errors.uncorrected.volatile.total
  std::optional<bool> retired_pages_pending;  // retired_pages.pending
  // Row remapping, the memory repair of A100 and later GPUs (their retired_pages.* read [N/A]):
  // remapped_rows.pending (a remap waits for the next GPU reset), remapped_rows.failure (a remap
  // failed: the GPU is out of spare rows).
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failure;
  /// gpu_recovery_action (R575 and later drivers): "None", "Reset", "Reboot", "Drain P2P",
  /// "Drain and Reset"; empty when not collected or [N/A].
  std::string recovery_action;
  /// Cells where nvidia-smi printed an NVML error instead of a value, column -> the error as
  /// printed without its brackets ("memory.used" -> "GPU requires reset"); "[N/A]" and
  /// "[Not Supported]" are not errors and are not listed.
  std::map<std::string, std::string> query_errors;
};

/// One row of `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid`.
struct ComputeApp {
  int64_t pid = 0;
  std::string process_name;
  std::optional<double> used_mib;  // nullopt for [N/A]
  std::string gpu_uuid;
};

/// A process the collector looked at in /proc: a trainer (RANK in its environment) or a pid
/// nvidia-smi listed. `exists` is false when /proc/<pid> was absent (another PID namespace, or
/// the process is gone while the driver still holds its memory).
struct ProcessInfo {
  int64_t pid = 0;
  bool exists = true;
  std::optional<int64_t> uid;
  std::string state;                       // "S (sleeping)", "Z (zombie)", "D (disk sleep)"
  std::string cmdline;                     // argv joined by spaces
  std::map<std::string, std::string> env;  // NCCL_*, CUDA_*, TORCH_*, launcher variables
  bool trainer() const { return env.count("RANK") > 0; }
};

struct IpAddress {
  std::string family;  // "inet" or "inet6"
  std::string local;   // "192.168.1.11"
  int prefixlen = 0;
  std::string scope;  // "global", "link", "host"
};

/// One object of `ip -j addr`, in the order ip prints them (ifindex order).
struct NetInterface {
  std::string name;
  std::vector<std::string> flags;  // "UP", "LOWER_UP", "LOOPBACK", "NO-CARRIER"
  std::string operstate;           // "UP", "DOWN", "UNKNOWN"
  std::vector<IpAddress> addresses;
  /// NCCL considers only running interfaces: up with carrier (IFF_UP and IFF_RUNNING).
  bool Running() const;
  bool HasFlag(const std::string& flag) const;
};

/// One object of `ip -j route`.
struct Route {
  std::string dst;  // "default" or a CIDR
  std::string dev;
  std::string gateway;
};

/// An RDMA device port: from `ibdev2netdev` (netdev and its Up/Down) and `rdma link` (port
/// state). `port_active` is nullopt when neither said.
struct RdmaPort {
  std::string device;  // "mlx5_1"
  int port = 1;
  std::string netdev;  // "ens1np0"; "" when unknown
  std::optional<bool> netdev_up;
  std::optional<bool> port_active;
};

/// One port of `ibstat`'s output.
struct IbstatPort {
  int port = 1;
  std::string state;                // "Active", "Down", "Initializing", "Armed"
  std::string physical_state;       // "LinkUp", "Polling", "Disabled"
  std::optional<double> rate_gbps;  // "Rate: 200"
  std::string link_layer;           // "InfiniBand", "Ethernet" (RoCE)
};

/// One channel adapter of `ibstat` (CA 'mlx5_1').
struct IbstatCa {
  std::string device;  // "mlx5_1"
  std::string type;    // "MT4129"
  std::string firmware;
  std::vector<IbstatPort> ports;
};

/// One row of a RoCE GID table (`show_gids` layout).
struct GidEntry {
  std::string device;
  int port = 1;
  int index = 0;
  std::string gid;      // "0000:0000:0000:0000:0000:ffff:c0a8:010b"
  std::string ipv4;     // "" when the GID is not IPv4-mapped
  std::string version;  // "v1" or "v2"
  std::string netdev;
};

/// One variable as a shell ends up with it, and the file whose sourcing set it last.
struct ShellVar {
  std::string value;
  std::string file;  // "/etc/bash.bashrc"; "(inherited)" when already set before any file
};

/// The environment of one kind of shell: "login" (bash -l: /etc/profile, then ~/.bash_profile
/// or ~/.profile) or "non-interactive" (what ssh/pdsh run: /etc/bash.bashrc, ~/.bashrc).
struct ShellEnv {
  std::string shell;
  std::vector<std::string> files;  // sourced, in order
  std::map<std::string, ShellVar> vars;
};

struct XidEvent {
  std::string pci;  // "PCI:0000:3b:00"
  int64_t code = 0;
  std::string line;
};

struct NodeState {
  std::string host;
  std::string dir;  // the bundle directory it was read from
  std::string time_utc;
  std::optional<int64_t> uid;  // the collecting user
  std::string driver_version;  // "570.133.20"
  std::string cuda_version;    // the highest CUDA the driver supports: "12.8"
  std::vector<GpuRow> gpus;
  std::vector<ComputeApp> compute_apps;
  std::vector<ProcessInfo> processes;
  std::vector<NetInterface> interfaces;
  std::vector<Route> routes;
  std::vector<RdmaPort> rdma;
  std::vector<GidEntry> gids;
  std::vector<IbstatCa> ibstat;  // ibstat.txt
  std::vector<ShellEnv> shells;
  std::map<std::string, std::string> nccl_conf;  // /etc/nccl.conf (NCCL reads it; env wins)
  /// $NCCL_CONF_FILE or ~/.nccl.conf: NCCL reads it before /etc/nccl.conf (and the environment
  /// before both); `user_nccl_conf_path` is the file it was read from.
  std::map<std::string, std::string> user_nccl_conf;
  std::string user_nccl_conf_path;
  std::map<std::string, std::string> versions;  // "torch" -> "2.11.0+cu128"; absent = not installed
  std::vector<XidEvent> xids;
  std::vector<std::string> unread;  // "ibstat: not collected", "rdma-link.txt: not found"
  std::vector<std::string> notes;   // the collector's own notes

  bool Has(const std::string& part) const;  // a part name: "gpus", "interfaces", "rdma", ...
  std::vector<std::string> read;            // the parts that were read
  /// The interface that carries the default route ("" when there is none): the management port.
  std::string DefaultRouteDevice() const;
  const ShellEnv* Shell(const std::string& name) const;
};

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_NODE_STATE_H_
