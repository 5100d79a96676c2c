#include "strata/hang/collect/collect.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/core/subprocess.h"
#include "strata/core/system_info.h"
#include "strata/core/text_scan.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::hang {
namespace fs = std::filesystem;
namespace {

constexpr const char* kComputeAppsQuery =
    "--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid";
// /proc files are small; a cap keeps a hostile fake tree from exhausting memory.
constexpr size_t kMaxProcFileBytes = size_t{1} << 20;
constexpr size_t kMaxMapsBytes = size_t{64} << 20;  // a torch process maps thousands of files

bool Digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::optional<int64_t> ToInt(const std::string& s) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(v);
}

bool KeepEnv(const std::string& key) {
  for (const char* prefix :
       {"NCCL_", "TORCH_NCCL_", "TORCH_FR_", "TORCH_DISTRIBUTED", "CUDA_VISIBLE"}) {
    if (key.rfind(prefix, 0) == 0) return true;
  }
  // HOME and XDG_CACHE_HOME are read only to find torch's default flight-recorder path; they are
  // not copied into the bundle (a home directory names a person).
  return key == "MASTER_ADDR" || key == "MASTER_PORT" || key == "LOCAL_WORLD_SIZE";
}

// torch's flight-recorder dump prefix for a process environment (research note 2.1).
std::string FrPrefix(const std::map<std::string, std::string>& env) {
  for (const char* key : {"TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"}) {
    if (auto it = env.find(key); it != env.end() && !it->second.empty()) return it->second;
  }
  if (auto it = env.find("XDG_CACHE_HOME"); it != env.end())
    return it->second + "/torch/comm_lib_trace_rank_";
  if (auto it = env.find("HOME"); it != env.end())
    return it->second + "/.cache/torch/comm_lib_trace_rank_";
  return "";
}

bool IsShell(const std::string& cmdline) {
  std::string exe = cmdline.substr(0, cmdline.find(' '));
  exe = exe.substr(exe.rfind('/') == std::string::npos ? 0 : exe.rfind('/') + 1);
  for (const char* shell :
       {"sh", "bash", "dash", "zsh", "srun", "timeout", "env", "numactl", "taskset"}) {
    if (exe == shell) return true;
  }
  return false;
}

// A process found by FindTrainers, with what is needed to pick one among those sharing a RANK.
struct Found {
  ProcessRecord record;
  int64_t ppid = 0;
  bool cuda = false;  // libcuda is mapped: the process (or its forked parent) holds a CUDA context
  std::string fr_prefix;
};

// Several processes can carry the same RANK: DataLoader workers forked from the trainer, a shell
// wrapper around it. Dumping them all into pyspy/rank<R>.txt would interleave their output, so
// one is chosen: among those holding a CUDA context (or all, if none does) and that are not
// shells (unless all are), the one whose parent is not itself in the set, i.e. the trainer that
// forked the others. The rest are named in a note and not dumped.
std::vector<Found> OnePerRank(std::vector<Found> found, std::vector<std::string>& notes) {
  std::map<int64_t, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i].record.rank) by_rank[*found[i].record.rank].push_back(i);
  }
  std::vector<bool> keep(found.size(), true);
  for (const auto& [rank, members] : by_rank) {
    if (members.size() < 2) continue;
    auto narrow = [&](std::vector<size_t> in, auto pred) {
      std::vector<size_t> out;
      for (size_t i : in) {
        if (pred(found[i])) out.push_back(i);
      }
      return out.empty() ? in : out;
    };
    std::vector<size_t> candidates = narrow(members, [](const Found& f) { return f.cuda; });
    candidates = narrow(candidates, [](const Found& f) { return !IsShell(f.record.cmdline); });
    candidates = narrow(candidates, [&](const Found& f) {
      return std::none_of(candidates.begin(), candidates.end(),
                          [&](size_t j) { return found[j].record.pid == f.ppid; });
    });
    const size_t chosen = candidates.front();
    std::string others;
    for (size_t i : members) {
      if (i == chosen) continue;
      keep[i] = false;
      others += (others.empty() ? "" : ", ") + std::to_string(found[i].record.pid);
    }
    notes.push_back(
        fmt::format("rank {}: {} processes share RANK={}; collected pid {} (the trainer: {}), "
                    "not the others (pids {}: forked workers or wrappers)",
                    rank, members.size(), rank, found[chosen].record.pid,
                    found[chosen].cuda ? "holds a CUDA context, parent of the others"
                                       : "the parent of the others",
                    others));
  }
  std::vector<Found> out;
  for (size_t i = 0; i < found.size(); ++i) {
    if (keep[i]) out.push_back(std::move(found[i]));
  }
  return out;
}

Status CopyFile(const std::string& from, const std::string& to) {
  STRATA_ASSIGN_OR_RETURN(std::string data, ReadFile(from));
  return WriteFileAtomic(to, data);
}

// The last `max_bytes` of a file, starting at a line boundary when cut.
Result<std::pair<std::string, int64_t>> Tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return IoError("cannot open").InFile(path);
  const auto size = static_cast<int64_t>(in.tellg());
  const int64_t start = std::max<int64_t>(0, size - static_cast<int64_t>(max_bytes));
  in.seekg(start);
  std::string data(static_cast<size_t>(size - start), '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (start > 0) {
    const size_t nl = data.find('\n');
    data.erase(0, nl == std::string::npos ? 0 : nl + 1);
  }
  return std::make_pair(std::move(data), size);
}

std::vector<Found> FindTrainers(const CollectOptions& o, Manifest& m) {
  std::vector<Found> found;
  std::error_code ec;
  std::vector<std::pair<int64_t, fs::path>> pids;
  for (fs::directory_iterator it(o.proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!Digits(name)) continue;
    if (auto pid = ToInt(name); pid && *pid != ::getpid()) pids.emplace_back(*pid, it->path());
  }
  if (ec) m.notes.push_back(fmt::format("cannot list {}: {}", o.proc_root, ec.message()));
  std::sort(pids.begin(), pids.end());
  size_t unreadable_env = 0;
  for (const auto& [pid, dir] : pids) {
    auto cmdline = ReadFile((dir / "cmdline").string(), kMaxProcFileBytes);
    if (!cmdline.ok()) continue;  // gone, or a kernel thread
    std::string joined;
    for (const std::string& part : SplitNul(*cmdline)) joined += (joined.empty() ? "" : " ") + part;
    if (!o.match.empty() && joined.find(o.match) == std::string::npos) continue;
    auto environ = ReadFile((dir / "environ").string(), kMaxProcFileBytes);
    std::map<std::string, std::string> env;
    if (environ.ok()) {
      for (const std::string& kv : SplitNul(*environ)) {
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    } else {
      ++unreadable_env;
    }
    if (o.match.empty() && !env.count("RANK")) continue;
    Found f;
    ProcessRecord& p = f.record;
    f.fr_prefix = FrPrefix(env);
    p.pid = pid;
    p.cmdline = joined;
    if (env.count("RANK")) p.rank = ToInt(env["RANK"]);
    if (env.count("LOCAL_RANK")) p.local_rank = ToInt(env["LOCAL_RANK"]);
    if (env.count("WORLD_SIZE")) p.world_size = ToInt(env["WORLD_SIZE"]);
    for (const auto& [k, v] : env) {
      if (KeepEnv(k)) p.env[k] = v;
    }
    if (auto status = ReadFile((dir / "status").string(), kMaxProcFileBytes); status.ok()) {
      const size_t at = status->find("State:");
      if (at != std::string::npos) {
        const size_t begin = status->find_first_not_of(" \t", at + 6);
        const size_t end = status->find('\n', at);
        if (begin != std::string::npos && begin < end) p.state = status->substr(begin, end - begin);
      }
      if (auto ppid = IntAfter(*status, "PPid:\t")) f.ppid = *ppid;
    }
    if (auto maps = ReadFile((dir / "maps").string(), kMaxMapsBytes); maps.ok()) {
      f.cuda = maps->find("libcuda.so") != std::string::npos;
    }
    found.push_back(std::move(f));
  }
  if (unreadable_env > 0) {
    // root reads every environ: when it cannot, the process exited meanwhile or is a kernel
    // thread or zombie, not another user's.
    m.notes.push_back(
        ::geteuid() == 0
            ? fmt::format("{} processes' environ could not be read (they exited while "
                          "being listed, or are zombies or kernel threads)",
                          unreadable_env)
            : fmt::format("{} processes' environ could not be read (another user's? run as "
                          "the job's user or root)",
                          unreadable_env));
  }
  return OnePerRank(std::move(found), m.notes);
}

}  // namespace

Result<CollectResult> Collect(const CollectOptions& o) {
  if (o.out_dir.empty()) return InvalidInput("no output directory").InField("--out");
  std::error_code exists_ec;
  if (!fs::is_directory(o.out_dir, exists_ec)) {
    // Not created silently: a typo in --out would scatter bundles where nobody looks for them.
    return IoError("the output directory does not exist")
        .InFile(o.out_dir)
        .WithHint(
            fmt::format("create it first (mkdir -p {}), or pass an existing --out", o.out_dir));
  }
  Manifest m;
  m.host = o.host.empty() ? HostName() : o.host;
  m.time_utc = o.time_utc.empty() ? NowUtc() : o.time_utc;
  m.strata_version = STRATA_VERSION;
  const fs::path final_dir = fs::path(o.out_dir) / m.host;
  const fs::path staging = fs::path(o.out_dir) / fmt::format(".{}.partial.{}", m.host, ::getpid());
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    return IoError("a bundle for this host already exists")
        .InFile(final_dir.string())
        .WithHint("remove it, or pass another --out (e.g. one per collection time)");
  }
  fs::create_directories(staging / "pyspy", ec);
  if (ec) return IoError(fmt::format("cannot create: {}", ec.message())).InFile(staging.string());

  const std::vector<Found> found = FindTrainers(o, m);
  for (const Found& f : found) m.processes.push_back(f.record);
  // py-spy on every trainer at once, so the node's dumps are one instant and the timeout is paid
  // once.
  const std::string pyspy = FindExecutable("py-spy", o.path);
  if (pyspy.empty()) {
    m.notes.push_back("py-spy not found on PATH: no stacks collected (pip install py-spy)");
  } else {
    std::vector<SubprocessSpec> dumps;
    for (ProcessRecord& p : m.processes) {
      p.pyspy_file =
          p.rank ? fmt::format("pyspy/rank{}.txt", *p.rank) : fmt::format("pyspy/pid{}.txt", p.pid);
      std::vector<std::string> args = {"py-spy", "dump", "--pid", std::to_string(p.pid)};
      if (o.native) args.push_back("--native");
      dumps.push_back({pyspy, std::move(args), {}, (staging / p.pyspy_file).string(), true});
    }
    const std::vector<SubprocessOutcome> results = RunSubprocesses(dumps, o.pyspy_timeout);
    for (size_t i = 0; i < m.processes.size(); ++i) {
      ProcessRecord& p = m.processes[i];
      p.pyspy_exit_code = results[i].exit_code;
      p.pyspy_timed_out = results[i].timed_out;
      if (!results[i].started)
        m.notes.push_back(fmt::format("could not start py-spy for pid {}", p.pid));
      // Always: a py-spy killed mid-dump can leave its target stopped (py-spy #390, #416).
      if (o.resume) {
        o.resume(p.pid);
      } else {
        ::kill(static_cast<pid_t>(p.pid), SIGCONT);
      }
    }
  }
  if (const std::string smi = FindExecutable("nvidia-smi", o.path); smi.empty()) {
    m.notes.push_back("nvidia-smi not found on PATH: no GPU process list");
  } else {
    const SubprocessOutcome result =
        RunSubprocess({smi,
                       {"nvidia-smi", kComputeAppsQuery, "--format=csv"},
                       {},
                       (staging / "nvidia-smi.csv").string(),
                       true},
                      o.pyspy_timeout);
    if (result.exit_code == 0) {
      m.nvidia_smi_file = "nvidia-smi.csv";
    } else {
      m.notes.push_back(result.timed_out
                            ? "nvidia-smi timed out (a GPU in a bad state?)"
                            : fmt::format("nvidia-smi failed with exit code {}", result.exit_code));
    }
  }
  for (size_t i = 0; i < m.processes.size(); ++i) {
    ProcessRecord& p = m.processes[i];
    const std::string& prefix = found[i].fr_prefix;
    if (prefix.empty() || !p.rank) continue;
    const std::string dump = prefix + std::to_string(*p.rank);
    if (!fs::is_regular_file(dump, ec)) continue;
    fs::create_directories(staging / "fr", ec);
    const std::string relative = "fr/" + fs::path(dump).filename().string();
    if (auto st = CopyFile(dump, (staging / relative).string()); st.ok()) {
      p.fr_files.push_back(relative);
    } else {
      m.notes.push_back("flight-recorder dump not copied: " + st.error().Format());
    }
  }
  for (size_t i = 0; i < o.logs.size(); ++i) {
    auto tail = Tail(o.logs[i], static_cast<size_t>(o.log_tail.count()));
    if (!tail.ok()) {
      m.notes.push_back("log not read: " + tail.error().Format());
      continue;
    }
    fs::create_directories(staging / "logs", ec);
    LogRecord l;
    l.file = fmt::format("logs/{}-{}", i, fs::path(o.logs[i]).filename().string());
    l.source = fs::absolute(o.logs[i], ec).string();
    l.bytes_total = tail->second;
    l.truncated = static_cast<size_t>(tail->second) > tail->first.size();
    const std::string name = fs::path(o.logs[i]).filename().string();
    if (auto at = name.find("rank"); at != std::string::npos)
      l.rank = ToInt(name.substr(at + 4, name.find_first_not_of("0123456789", at + 4) - at - 4));
    STRATA_RETURN_IF_ERROR(WriteFileAtomic((staging / l.file).string(), tail->first));
    m.logs.push_back(std::move(l));
  }
  STRATA_RETURN_IF_ERROR(
      WriteFileAtomic((staging / kManifestName).string(), DumpJson(ManifestToJson(m))));
  fs::rename(staging, final_dir, ec);
  if (ec)
    return IoError(fmt::format("cannot move the bundle into place: {}", ec.message()))
        .InFile(final_dir.string());
  return CollectResult{final_dir.string(), std::move(m)};
}

}  // namespace strata::hang
