#include "strata/preflight/collect_node.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/core/subprocess.h"
#include "strata/core/system_info.h"
#include "strata/core/text_scan.h"
#include "strata/preflight/bundle.h"
#include "strata/preflight/env_parse.h"
#include "strata/preflight/smi_parse.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::preflight {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxProcFileBytes = size_t{1} << 20;

// Each kind of shell sources its files in order and prints the tracked variables after each
// (env_parse.h). Sourced files' own output is discarded; stdin is /dev/null.
constexpr const char* kShellScript = R"SH(dump() {
  echo "== $1 $2"
  for v in $(compgen -e | LC_ALL=C sort); do
    case "$v" in
      NCCL_*|CUDA_*|TORCH_*|UCX_*|GLOO_*|MASTER_*|PYTORCH_CUDA_ALLOC_CONF) printf '%s=%s\n' "$v" "${!v//$'\n'/ }";;
    esac
  done
}
(
  dump login "(start)"
  if [ -r "$STRATA_ETC/etc/profile" ]; then . "$STRATA_ETC/etc/profile" >/dev/null 2>&1; dump login /etc/profile; fi
  for f in .bash_profile .bash_login .profile; do
    if [ -r "$HOME/$f" ]; then . "$HOME/$f" >/dev/null 2>&1; dump login "~/$f"; break; fi
  done
)
(
  dump non-interactive "(start)"
  if [ -r "$STRATA_ETC/etc/bash.bashrc" ]; then . "$STRATA_ETC/etc/bash.bashrc" >/dev/null 2>&1; dump non-interactive /etc/bash.bashrc; fi
  if [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc" >/dev/null 2>&1; dump non-interactive "~/.bashrc"; fi
)
)SH";

constexpr const char* kVersionsScript = R"PY(import importlib.metadata as m
for p in ("torch", "vllm", "sglang"):
    try:
        print(p, m.version(p))
    except Exception:
        print(p, "-")
)PY";

std::optional<int64_t> StatusField(const std::string& status, const std::string& key,
                                   std::string* text = nullptr) {
  const size_t at = status.find("\n" + key + ":");
  const size_t start =
      status.rfind(key + ":", 0) == 0 ? 0 : (at == std::string::npos ? at : at + 1);
  if (start == std::string::npos) return std::nullopt;
  const size_t begin = status.find_first_not_of(" \t", start + key.size() + 1);
  const size_t end = status.find('\n', start);
  if (begin == std::string::npos || begin >= end) return std::nullopt;
  const std::string value = status.substr(begin, end - begin);
  if (text) *text = value;
  return std::strtoll(value.c_str(), nullptr, 10);
}

ProcessInfo ReadProcess(const fs::path& dir, int64_t pid, bool* readable_env) {
  ProcessInfo p;
  p.pid = pid;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    p.exists = false;
    return p;
  }
  if (auto cmdline = ReadFile((dir / "cmdline").string(), kMaxProcFileBytes); cmdline.ok()) {
    for (const std::string& part : SplitNul(*cmdline))
      p.cmdline += (p.cmdline.empty() ? "" : " ") + part;
  }
  if (auto status = ReadFile((dir / "status").string(), kMaxProcFileBytes); status.ok()) {
    StatusField(*status, "State", &p.state);
    p.uid = StatusField(*status, "Uid");
  }
  auto environ = ReadFile((dir / "environ").string(), kMaxProcFileBytes);
  if (readable_env) *readable_env = environ.ok();
  if (environ.ok()) {
    for (const std::string& kv : SplitNul(*environ)) {
      const size_t eq = kv.find('=');
      if (eq != std::string::npos && IsTrackedVariable(kv.substr(0, eq)))
        p.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  return p;
}

class Collector {
 public:
  Collector(const NodeStateOptions& o, fs::path staging, NodeState& state)
      : o_(o), staging_(std::move(staging)), s_(state) {}

  // Runs `name args...` into `file`; a missing tool or a failure is a note, and the file is
  // removed so that the reader reports the part as not collected.
  bool Run(const std::string& name, const std::vector<std::string>& args, const std::string& file,
           const std::vector<std::string>& envp = {}) {
    const std::string exe = FindExecutable(name, o_.path);
    if (exe.empty()) {
      s_.notes.push_back(fmt::format("{}: {} not found on PATH", file, name));
      return false;
    }
    std::vector<std::string> argv = {name};
    argv.insert(argv.end(), args.begin(), args.end());
    const fs::path out = staging_ / file;
    const SubprocessOutcome r = RunSubprocess({exe, argv, envp, out.string(), false}, o_.timeout);
    if (r.started && !r.timed_out && r.exit_code == 0) return true;
    std::error_code ec;
    fs::remove(out, ec);
    s_.notes.push_back(
        r.timed_out
            ? fmt::format("{}: {} timed out after {}", file, name, FormatSeconds(o_.timeout))
            : fmt::format("{}: {} failed (exit code {})", file, name, r.exit_code));
    return false;
  }

  void Gpus() {
    Run("nvidia-smi", {}, "nvidia-smi.txt");
    Run("nvidia-smi", {std::string("--query-gpu=") + kGpuQuery, "--format=csv"}, "gpus.csv");
    if (!Run("nvidia-smi", {std::string("--query-gpu=") + kGpuRepairQuery, "--format=csv"},
             "gpu-repair.csv") &&
        !FindExecutable("nvidia-smi", o_.path).empty() &&
        Run("nvidia-smi", {std::string("--query-gpu=") + kGpuRemapQuery, "--format=csv"},
            "gpu-repair.csv")) {
      // The retry worked: the first failure was the field an older driver does not know.
      s_.notes.back() =
          "gpu-repair.csv: this driver has no gpu_recovery_action (R575 and later): the recovery "
          "action was not collected";
    }
    Run("nvidia-smi",
        {"--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid", "--format=csv"},
        "compute-apps.csv");
    // The kernel log may need privileges: keep only the Xid lines, or say it could not be read.
    const fs::path raw = staging_ / ".dmesg";
    if (Run("dmesg", {}, ".dmesg")) {
      auto text = ReadFile(raw.string());
      std::string xids;
      if (text.ok()) {
        for (const TextLine& l : SplitLines(*text)) {
          if (l.text.find("NVRM: Xid") != std::string_view::npos)
            xids += std::string(l.text) + "\n";
        }
      }
      (void)WriteFileAtomic((staging_ / "xid.txt").string(), xids);
    }
    std::error_code ec;
    fs::remove(raw, ec);
  }

  void Network() {
    Run("ip", {"-j", "addr"}, "ip-addr.json");
    Run("ip", {"-j", "route"}, "ip-route.json");
    Run("ibdev2netdev", {}, "ibdev2netdev.txt");
    Run("rdma", {"link"}, "rdma-link.txt");
    Run("ibstat", {}, "ibstat.txt");
    if (!Run("show_gids", {}, "gids.txt")) GidsFromSysfs();
  }

  // The show_gids table from /sys/class/infiniband/<dev>/ports/<p>/{gids,gid_attrs}.
  void GidsFromSysfs() {
    const fs::path root = fs::path(o_.sys_root) / "class" / "infiniband";
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return;
    std::string table = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4\t\tVER\tDEV\n";
    std::vector<fs::path> devices;
    for (const auto& d : fs::directory_iterator(root, ec)) devices.push_back(d.path());
    std::sort(devices.begin(), devices.end());
    for (const fs::path& dev : devices) {
      for (const auto& port : fs::directory_iterator(dev / "ports", ec)) {
        for (int i = 0; i < 256; ++i) {
          auto gid = ReadFile((port.path() / "gids" / std::to_string(i)).string(), 256);
          auto type =
              ReadFile((port.path() / "gid_attrs" / "types" / std::to_string(i)).string(), 256);
          auto ndev =
              ReadFile((port.path() / "gid_attrs" / "ndevs" / std::to_string(i)).string(), 256);
          if (!gid.ok() || !type.ok() || !ndev.ok()) continue;
          const std::string g(TrimLine(*gid));
          if (g == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
          std::string ipv4;
          if (g.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0) {
            const std::string hex = g.substr(30, 4) + g.substr(35, 4);
            const unsigned long v = std::strtoul(hex.c_str(), nullptr, 16);
            ipv4 = fmt::format("{}.{}.{}.{}", (v >> 24) & 255, (v >> 16) & 255, (v >> 8) & 255,
                               v & 255);
          }
          table += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", dev.filename().string(),
                               port.path().filename().string(), i, g, ipv4,
                               TrimLine(*type) == "RoCE v2" ? "v2" : "v1", TrimLine(*ndev));
        }
      }
    }
    (void)WriteFileAtomic((staging_ / "gids.txt").string(), table);
  }

  void Software() {
    Run("python3", {"-c", kVersionsScript}, "versions.txt");
    const std::string conf = o_.etc_root + "/etc/nccl.conf";
    std::error_code ec;
    if (fs::is_regular_file(conf, ec)) {
      if (auto text = ReadFile(conf, kMaxProcFileBytes); text.ok()) {
        (void)WriteFileAtomic((staging_ / "nccl.conf").string(), *text);
      }
    }
  }

  void Shells() {
    const char* home_env = std::getenv("HOME");
    const std::string home = !o_.home.empty() ? o_.home : home_env ? home_env : "/";
    const char* user = std::getenv("USER");
    // A clean environment, as sshd gives a remote command: nothing of this shell leaks in.
    const std::vector<std::string> envp = {
        "HOME=" + home, std::string("USER=") + (user ? user : ""),
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SHELL=/bin/bash",
        "STRATA_ETC=" + o_.etc_root};
    Run("bash", {"--noprofile", "--norc", "-c", kShellScript}, "shell-env.txt", envp);
    UserNcclConf(home);
  }

  // NCCL reads $NCCL_CONF_FILE if set, else ~/.nccl.conf, before /etc/nccl.conf, and the first
  // value of a variable wins (nccl src/misc/param.cc initEnvFunc; setenv without overwrite):
  // the environment, then the user's file, then /etc/nccl.conf. The file is copied with a first
  // comment line naming where it was read, so the bundle says which file set a variable.
  void UserNcclConf(const std::string& home) {
    std::string path = home + "/.nccl.conf";
    if (auto text = ReadFile((staging_ / "shell-env.txt").string(), kMaxProcFileBytes); text.ok()) {
      if (auto shells = ParseShellEnv(*text, "shell-env.txt"); shells.ok()) {
        for (const ShellEnv& shell : *shells) {
          auto it = shell.vars.find("NCCL_CONF_FILE");
          if (shell.shell == "non-interactive" && it != shell.vars.end()) path = it->second.value;
        }
      }
    }
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return;
    auto conf = ReadFile(path, kMaxProcFileBytes);
    if (!conf.ok()) {
      s_.notes.push_back(fmt::format("nccl-user.conf: {} could not be read", path));
      return;
    }
    (void)WriteFileAtomic((staging_ / "nccl-user.conf").string(),
                          std::string(kUserNcclConfHeader) + path + "\n" + *conf);
  }

  void Processes() {
    std::error_code ec;
    std::vector<int64_t> pids;
    for (fs::directory_iterator it(o_.proc_root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      pids.push_back(std::strtoll(name.c_str(), nullptr, 10));
    }
    if (ec) s_.notes.push_back(fmt::format("cannot list {}: {}", o_.proc_root, ec.message()));
    std::sort(pids.begin(), pids.end());
    size_t unreadable = 0;
    for (int64_t pid : pids) {
      if (pid == ::getpid()) continue;
      bool readable = false;
      ProcessInfo p = ReadProcess(fs::path(o_.proc_root) / std::to_string(pid), pid, &readable);
      if (!readable) ++unreadable;
      if (p.trainer()) s_.processes.push_back(std::move(p));
    }
    if (unreadable > 0) {
      s_.notes.push_back(fmt::format(
          "{} processes' environ could not be read (run as the job's user or root)", unreadable));
    }
    // Every pid nvidia-smi lists as holding GPU memory, even when /proc has no such pid.
    auto apps_text = ReadFile((staging_ / "compute-apps.csv").string());
    if (!apps_text.ok()) return;
    auto apps = ParseComputeAppsCsv(*apps_text, "compute-apps.csv");
    if (!apps.ok()) {
      s_.notes.push_back("compute-apps.csv not understood: " + apps.error().Format());
      return;
    }
    for (const ComputeApp& a : *apps) {
      const bool known = std::any_of(s_.processes.begin(), s_.processes.end(),
                                     [&](const ProcessInfo& p) { return p.pid == a.pid; });
      if (!known)
        s_.processes.push_back(
            ReadProcess(fs::path(o_.proc_root) / std::to_string(a.pid), a.pid, nullptr));
    }
  }

 private:
  static std::string_view TrimLine(const std::string& s) {
    std::string_view v = s;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
    return v;
  }

  const NodeStateOptions& o_;
  fs::path staging_;
  NodeState& s_;
};

}  // namespace

Result<NodeStateResult> CollectNodeState(const NodeStateOptions& o) {
  if (o.out_dir.empty()) return InvalidInput("no output directory").InField("--out");
  NodeState s;
  s.host = o.host.empty() ? HostName() : o.host;
  s.time_utc = o.time_utc.empty() ? NowUtc() : o.time_utc;
  s.uid = static_cast<int64_t>(::getuid());
  const fs::path final_dir = fs::path(o.out_dir) / s.host;
  const fs::path staging =
      fs::path(o.out_dir) / fmt::format(".{}.node-state.partial.{}", s.host, ::getpid());
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    return IoError("a bundle for this host already exists")
        .InFile(final_dir.string())
        .WithHint("remove it, or pass another --out (e.g. one per collection time)");
  }
  fs::create_directories(staging, ec);
  if (ec) return IoError(fmt::format("cannot create: {}", ec.message())).InFile(staging.string());
  Collector c(o, staging, s);
  c.Gpus();
  c.Network();
  c.Software();
  c.Shells();
  c.Processes();
  Json manifest = ManifestToJson(s);
  manifest["strata_version"] = STRATA_VERSION;
  STRATA_RETURN_IF_ERROR(
      WriteFileAtomic((staging / kNodeStateManifest).string(), DumpJson(manifest)));
  fs::rename(staging, final_dir, ec);
  if (ec)
    return IoError(fmt::format("cannot move the bundle into place: {}", ec.message()))
        .InFile(final_dir.string());
  return NodeStateResult{final_dir.string(), std::move(s)};
}

}  // namespace strata::preflight
