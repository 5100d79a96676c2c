// `strata collect --node-state` against a fake node: a fake root with /proc, /sys and /etc trees,
// a home directory and fake query tools on PATH that fail on any argument other than the
// read-only query the collector is meant to run. The test checks what the bundle holds, that
// nothing was written outside the output directory, and that nothing in the fake node changed.
// The fake pids are above Linux's largest pid (2^22), so they name no real process.
#include "strata/preflight/collect_node.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "strata/preflight/bundle.h"
#include "strata/preflight/effective_env.h"
#include "support/golden.h"

namespace strata::preflight {
namespace {
namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text, bool executable = false) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  if (executable) fs::permissions(path, fs::perms::owner_all);
}

std::string Nul(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += p + '\0';
  return out;
}

// path -> (size, mtime, permissions) of every entry under `root` except `skip`.
std::map<std::string, std::tuple<uintmax_t, int64_t, unsigned>> Snapshot(const fs::path& root,
                                                                         const fs::path& skip) {
  std::map<std::string, std::tuple<uintmax_t, int64_t, unsigned>> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    out[it->path().string()] = {it->is_regular_file() ? it->file_size() : 0,
                                static_cast<int64_t>(st.st_mtime),
                                static_cast<unsigned>(st.st_mode)};
  }
  return out;
}

class CollectNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("strata-node-state-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    const fs::path bin = root_ / "bin";
    // Each tool answers only the exact query the collector should make; anything else exits 3.
    Write(bin / "nvidia-smi",
          "#!/bin/sh\ncase \"$*\" in\n"
          "'') echo '| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA "
          "Version: 12.8     |';;\n"
          "'--query-gpu=" +
              std::string(kGpuQuery) +
              " --format=csv')\n"
              "  echo 'index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu "
              "[%], "
              "clocks_throttle_reasons.active, ecc.errors.uncorrected.volatile.total, "
              "retired_pages.pending'\n"
              "  echo '0, GPU-0, NVIDIA H20, 81922 MiB, 97871 MiB, 0 %, 0x0000000000000001, 0, "
              "No';;\n"
              "'--query-gpu=" +
              std::string(kGpuRemapQuery) +
              " --format=csv')\n"
              "  echo 'index, remapped_rows.pending, remapped_rows.failure'\n"
              "  echo '0, Yes, No';;\n"
              "'--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid --format=csv')\n"
              "  echo 'pid, process_name, used_gpu_memory [MiB], gpu_uuid'\n"
              "  echo '9000100, /usr/bin/python3, 40960 MiB, GPU-0'\n"
              "  echo '9000999, [Not Found], 40960 MiB, GPU-0';;\n"
              "*) exit 3;;\nesac\n",
          true);
    Write(bin / "ip",
          "#!/bin/sh\ncase \"$*\" in\n"
          "'-j addr') echo "
          "'[{\"ifindex\":2,\"ifname\":\"ens1np0\",\"flags\":[\"UP\",\"LOWER_UP\"],\"operstate\":"
          "\"UP\","
          "\"addr_info\":[{\"family\":\"inet\",\"local\":\"192.168.1.11\",\"prefixlen\":24,"
          "\"scope\":\"global\"}]}]';;\n"
          "'-j route') echo '[{\"dst\":\"192.168.1.0/24\",\"dev\":\"ens1np0\"}]';;\n"
          "*) exit 3;;\nesac\n",
          true);
    Write(bin / "ibdev2netdev",
          "#!/bin/sh\n[ $# -eq 0 ] || exit 3\necho 'mlx5_1 port 1 ==> ens1np0 (Up)'\n", true);
    Write(bin / "rdma",
          "#!/bin/sh\n[ \"$*\" = link ] || exit 3\necho 'link mlx5_1/1 state ACTIVE physical_state "
          "LINK_UP netdev ens1np0'\n",
          true);
    Write(bin / "ibstat",
          "#!/bin/sh\n[ $# -eq 0 ] || exit 3\nprintf \"CA 'mlx5_1'\\n\\tCA type: MT4129\\n"
          "\\tFirmware version: 28.39.2048\\n\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tRate: "
          "200\\n\\t\\tLink layer: Ethernet\\n\"\n",
          true);
    Write(bin / "dmesg",
          "#!/bin/sh\n[ $# -eq 0 ] || exit 3\necho '[  1.0] eth0: up'\n"
          "echo '[  2.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.'\n",
          true);
    Write(bin / "python3",
          "#!/bin/sh\n[ \"$1\" = -c ] || exit 3\necho 'torch 2.11.0+cu128'\necho 'vllm -'\necho "
          "'sglang -'\n",
          true);
    fs::create_symlink("/bin/bash", bin / "bash");
    // The GID table from sysfs (no show_gids on this node): index 3 = RoCE v2 of 192.168.1.11.
    const fs::path port = root_ / "sys" / "class" / "infiniband" / "mlx5_1" / "ports" / "1";
    Write(port / "gids" / "1", "fe80:0000:0000:0000:a288:c2ff:fe5b:0101\n");
    Write(port / "gid_attrs" / "types" / "1", "RoCE v2\n");
    Write(port / "gid_attrs" / "ndevs" / "1", "ens1np0\n");
    Write(port / "gids" / "3", "0000:0000:0000:0000:0000:ffff:c0a8:010b\n");
    Write(port / "gid_attrs" / "types" / "3", "RoCE v2\n");
    Write(port / "gid_attrs" / "ndevs" / "3", "ens1np0\n");
    // Shell files: the global bashrc of incident 6; the user's bashrc returns early when the
    // shell is not interactive, as Debian's default one does.
    Write(root_ / "etc" / "profile", "export NCCL_SOCKET_IFNAME==ens1np0\n");
    Write(root_ / "etc" / "bash.bashrc",
          "export NCCL_SOCKET_IFNAME=eth0\nexport NCCL_DEBUG=INFO\n");
    Write(root_ / "etc" / "nccl.conf", "NCCL_IB_TIMEOUT=22\n");
    Write(root_ / "home" / ".bashrc",
          "export NCCL_IB_HCA==mlx5_1\ncase $- in *i*) ;; *) return;; esac\nexport "
          "NCCL_DEBUG_SUBSYS=ALL\n");
    Write(root_ / "home" / ".profile", "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    // The user's NCCL file, which NCCL reads before /etc/nccl.conf (nccl param.cc).
    Write(root_ / "home" / ".nccl.conf", "NCCL_IB_TIMEOUT=20\n");
    // /proc: one trainer, one other process.
    const fs::path trainer = root_ / "proc" / "9000100";
    Write(trainer / "cmdline", Nul({"/usr/bin/python3", "train.py"}));
    Write(trainer / "environ", Nul({"RANK=3", "NCCL_SOCKET_IFNAME==ens1np0", "SECRET_TOKEN=x"}));
    Write(trainer / "status",
          "Name:\tpython3\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\n");
    Write(root_ / "proc" / "9000400" / "cmdline", Nul({"vim"}));
    Write(root_ / "proc" / "9000400" / "environ", Nul({"HOME=/root"}));
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  NodeStateOptions Options() {
    NodeStateOptions o;
    o.out_dir = (root_ / "out").string();
    o.host = "node-a";
    o.proc_root = (root_ / "proc").string();
    o.sys_root = (root_ / "sys").string();
    o.etc_root = root_.string();
    o.home = (root_ / "home").string();
    o.path = (root_ / "bin").string();
    o.timeout = Seconds::Of(5);
    o.time_utc = "2026-05-12T03:10:00Z";
    return o;
  }

  fs::path root_;
};

TEST_F(CollectNodeTest, WritesOnlyItsBundleAndChangesNothingOnTheNode) {
  const auto before = Snapshot(root_, root_ / "out");
  auto result = CollectNodeState(Options());
  ASSERT_TRUE(result.ok()) << result.error().Format();
  EXPECT_EQ(Snapshot(root_, root_ / "out"), before);  // no file outside --out created or touched
  std::vector<std::string> in_out;
  for (const auto& e : fs::directory_iterator(root_ / "out"))
    in_out.push_back(e.path().filename().string());
  EXPECT_EQ(in_out, std::vector<std::string>{"node-a"});  // no staging directory or temp file left
  // No tool was called with anything but its read-only query (those exit 3 and would be noted);
  // only the missing tools are noted.
  // The repair query with gpu_recovery_action exits 3 (a driver before R575 has no such field)
  // and the retry without it answers: the note says what was not collected, not a failure.
  EXPECT_EQ(result->state.notes,
            (std::vector<std::string>{
                "gpu-repair.csv: this driver has no gpu_recovery_action (R575 and later): the "
                "recovery action was not collected",
                "gids.txt: show_gids not found on PATH"}));
}

TEST_F(CollectNodeTest, TheBundleReadsBack) {
  auto result = CollectNodeState(Options());
  ASSERT_TRUE(result.ok()) << result.error().Format();
  auto node = LoadNodeState(result->bundle_dir);
  ASSERT_TRUE(node.ok()) << node.error().Format();
  EXPECT_EQ(node->host, "node-a");
  EXPECT_EQ(node->driver_version, "570.133.20");
  EXPECT_EQ(node->cuda_version, "12.8");
  ASSERT_EQ(node->gpus.size(), 1u);
  ASSERT_EQ(node->compute_apps.size(), 2u);
  // The trainer (RANK in its environment), then the pid nvidia-smi lists that /proc lacks.
  ASSERT_EQ(node->processes.size(), 2u);
  EXPECT_EQ(node->processes[0].pid, 9000100);
  EXPECT_EQ(node->processes[0].uid, 1000);
  EXPECT_EQ(node->processes[0].state, "S (sleeping)");
  EXPECT_EQ(node->processes[0].env.count("SECRET_TOKEN"), 0u);  // only tracked variables are kept
  EXPECT_EQ(node->processes[1].pid, 9000999);
  EXPECT_FALSE(node->processes[1].exists);
  ASSERT_EQ(node->interfaces.size(), 1u);
  ASSERT_EQ(node->rdma.size(), 1u);
  EXPECT_EQ(node->rdma[0].port_active, true);
  // The GID table built from sysfs: ::ffff:c0a8:010b is 192.168.1.11.
  ASSERT_EQ(node->gids.size(), 2u);
  EXPECT_EQ(node->gids[1].index, 3);
  EXPECT_EQ(node->gids[1].ipv4, "192.168.1.11");
  EXPECT_EQ(node->gids[1].version, "v2");
  ASSERT_EQ(node->xids.size(), 1u);
  EXPECT_EQ(node->xids[0].code, 79);
  EXPECT_EQ(node->versions.at("torch"), "2.11.0+cu128");
  EXPECT_EQ(node->nccl_conf.at("NCCL_IB_TIMEOUT"), "22");
  // Each shell, file by file, as a launcher would source them.
  const ShellEnv* login = node->Shell("login");
  ASSERT_NE(login, nullptr);
  EXPECT_EQ(login->vars.at("NCCL_SOCKET_IFNAME").value, "=ens1np0");
  EXPECT_EQ(login->vars.at("NCCL_SOCKET_IFNAME").file, "/etc/profile");
  EXPECT_EQ(login->vars.at("CUDA_DEVICE_MAX_CONNECTIONS").file, "~/.profile");
  const ShellEnv* batch = node->Shell("non-interactive");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->vars.at("NCCL_SOCKET_IFNAME").value, "eth0");
  EXPECT_EQ(batch->vars.at("NCCL_SOCKET_IFNAME").file, "/etc/bash.bashrc");
  EXPECT_EQ(batch->vars.at("NCCL_IB_HCA").file, "~/.bashrc");
  EXPECT_EQ(batch->vars.count("NCCL_DEBUG_SUBSYS"), 0u);  // after the non-interactive return
  // The row remap of GPU 0 from gpu-repair.csv; the adapter's port from ibstat.
  EXPECT_EQ(node->gpus[0].remap_pending, true);
  EXPECT_EQ(node->gpus[0].remap_failure, false);
  EXPECT_EQ(node->gpus[0].recovery_action, "");
  ASSERT_EQ(node->ibstat.size(), 1u);
  EXPECT_EQ(node->ibstat[0].firmware, "28.39.2048");
  ASSERT_EQ(node->ibstat[0].ports.size(), 1u);
  EXPECT_EQ(node->ibstat[0].ports[0].rate_gbps, 200.0);
  // ~/.nccl.conf, named by its path: NCCL reads it before /etc/nccl.conf, so its
  // NCCL_IB_TIMEOUT=20 is the one NCCL takes over /etc/nccl.conf's 22.
  EXPECT_EQ(node->user_nccl_conf.at("NCCL_IB_TIMEOUT"), "20");
  EXPECT_EQ(node->user_nccl_conf_path, (root_ / "home" / ".nccl.conf").string());
  const auto env = EffectiveEnvWithOrigin(*node);
  EXPECT_EQ(env.at("NCCL_IB_TIMEOUT").value, "20");
  EXPECT_EQ(env.at("NCCL_IB_TIMEOUT").origin, (root_ / "home" / ".nccl.conf").string());
  EXPECT_TRUE(node->unread.empty()) << node->unread.front();
}

TEST_F(CollectNodeTest, MissingToolsAreNotesAndTheBundleSaysWhatWasNotRead) {
  NodeStateOptions o = Options();
  o.path = (root_ / "nowhere").string();  // no tool at all, not even bash
  o.sys_root = (root_ / "nosys").string();
  auto result = CollectNodeState(o);
  ASSERT_TRUE(result.ok()) << result.error().Format();
  EXPECT_EQ(result->state.notes.size(), 13u);  // gpu-repair.csv once: no retry without the tool
  EXPECT_EQ(result->state.notes[0], "nvidia-smi.txt: nvidia-smi not found on PATH");
  auto node = LoadNodeState(result->bundle_dir);
  ASSERT_TRUE(node.ok());
  EXPECT_TRUE(node->gpus.empty());
  EXPECT_EQ(node->unread.size(), 12u);  // every part but the NCCL files and gpu-repair.csv
  EXPECT_EQ(node->unread[0], "nvidia-smi.txt: not collected (driver)");
  EXPECT_FALSE(CollectNodeState(o).ok());  // a second run does not overwrite the bundle
}

}  // namespace
}  // namespace strata::preflight
