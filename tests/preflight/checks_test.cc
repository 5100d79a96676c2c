// The preflight checks on the five golden scenarios (tests/golden/preflight/SOURCES.md): each
// fault the scenario was built with is found, on the right node, with the right severity; the
// clean cluster has no finding. The CLI's rendering of the same runs is in cli_golden_test.cc.
#include "strata/preflight/checks.h"

#include <gtest/gtest.h>

#include "strata/preflight/bundle.h"
#include "strata/preflight/smi_parse.h"
#include "support/golden.h"

namespace strata::preflight {
namespace {

PreflightReport RunScenario(const std::string& scenario, const std::vector<std::string>& hosts,
                            const std::string& launch = "") {
  std::vector<NodeState> nodes;
  for (const std::string& h : hosts) {
    auto n = LoadNodeState(testing::TestPath("golden/preflight/" + scenario + "/" + h));
    EXPECT_TRUE(n.ok()) << n.error().Format();
    nodes.push_back(*n);
  }
  auto rules = LoadRules();
  auto compat = LoadCudaCompat();
  auto timeouts = hang::LoadFrameworkTimeouts();
  EXPECT_TRUE(rules.ok() && compat.ok() && timeouts.ok());
  return RunPreflight(nodes, *rules, *compat, *timeouts, PreflightOptions{launch});
}

// The findings of one check on one node ("" = cluster-wide) whose message contains `text`.
size_t Count(const PreflightReport& r, Severity s, const std::string& check,
             const std::string& node, const std::string& text = "") {
  size_t n = 0;
  for (const Finding& f : r.findings) {
    n += f.severity == s && f.check == check && f.node == node &&
         f.message.find(text) != std::string::npos;
  }
  return n;
}

std::string Dump(const PreflightReport& r) {
  std::string out;
  for (const Finding& f : r.findings)
    out += std::string(SeverityName(f.severity)) + " " + f.check + " " + f.node + ": " + f.message +
           "\n";
  return out;
}

TEST(PreflightScenarios, CleanClusterHasNoFinding) {
  const auto r = RunScenario(
      "clean-5node", {"h20-node01", "h20-node02", "h20-node03", "h20-node04", "h20-node05"});
  EXPECT_TRUE(r.findings.empty()) << Dump(r);
  ASSERT_EQ(r.nodes.size(), 5u);
  // NCCL_SOCKET_IFNAME==ens1np0 and NCCL_IB_HCA==mlx5_1,...,mlx5_4 from /etc/bash.bashrc.
  EXPECT_EQ(r.nodes[2].socket.interfaces, std::vector<std::string>{"ens1np0"});
  EXPECT_EQ(r.nodes[2].socket.addresses, std::vector<std::string>{"192.168.1.13/24"});
  EXPECT_EQ(r.nodes[2].hca.ports,
            (std::vector<std::string>{"mlx5_1:1", "mlx5_2:1", "mlx5_3:1", "mlx5_4:1"}));
  EXPECT_EQ(r.nodes[2].gids.front(), "mlx5_1:1 GID 3 (v2, 192.168.1.13)");
  EXPECT_EQ(r.nodes[2].env_source, "non-interactive shell");
  // The course's driver: CUDA 12.8 -> torch <= 2.11, vLLM <= 0.19, no SGLang.
  ASSERT_TRUE(r.compat.has_value());
  EXPECT_EQ(r.compat->cuda, "12.8");
  EXPECT_EQ(r.compat->newest.at("torch"), "2.11");
  EXPECT_EQ(r.compat->newest.at("vllm"), "0.19");
  EXPECT_EQ(r.compat->newest.at("sglang"), "none");
}

TEST(PreflightScenarios, DirtyStart) {
  const auto r = RunScenario("dirty-start", {"h20-node01", "h20-node03"});
  EXPECT_EQ(
      Count(r, Severity::kError, "gpu-memory", "h20-node03", "GPU 5: 80.0 GiB held by pid 2291734"),
      1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-memory", "h20-node03", "a leftover trainer (RANK=29)"),
            1u);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-memory", "h20-node03",
                  "pid 2291802 ([Not Found]), which does not exist"),
            1u);
  // 40960 MiB = 40.0 GiB on GPU 7 with no process: the release race.
  EXPECT_EQ(Count(r, Severity::kError, "gpu-memory", "h20-node03", "GPU 7: 40.0 GiB in use"), 1u);
  // GPU 6 (513 MiB) is below the 1 GiB threshold but has a listed holder: reported once, as such.
  EXPECT_EQ(Count(r, Severity::kError, "gpu-memory", "h20-node03"), 3u);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-memory", "h20-node01"), 0u);
  EXPECT_EQ(r.Count(Severity::kError), 3u) << Dump(r);
}

TEST(PreflightScenarios, WrongNicAndBashrcDrift) {
  const auto r = RunScenario("wrong-nic-bashrc", {"h20-node01", "h20-node02", "h20-node03"});
  for (const char* var :
       {"NCCL_DEBUG ", "NCCL_DEBUG_SUBSYS ", "NCCL_IB_HCA ", "NCCL_SOCKET_IFNAME "}) {
    EXPECT_EQ(Count(r, Severity::kError, "env-divergence", "", var), 1u) << var << "\n" << Dump(r);
  }
  EXPECT_EQ(Count(r, Severity::kError, "env-divergence", "",
                  "'eth0' (set by /etc/bash.bashrc) on h20-node03"),
            1u);
  // The login shell has the right values (~/.bash_profile repeats /etc/profile's), the
  // non-interactive one does not.
  EXPECT_EQ(Count(r, Severity::kWarning, "env-shells", "h20-node03",
                  "NCCL_SOCKET_IFNAME: login shell '=ens1np0' (set by /etc/profile), "
                  "non-interactive shell 'eth0' (set by /etc/bash.bashrc)"),
            1u);
  EXPECT_EQ(
      Count(r, Severity::kWarning, "dangerous-setting", "h20-node03", "NCCL_DEBUG_SUBSYS=ALL"), 1u);
  // Bootstrap on eth0 (10.0.0.13/24) vs ens1np0 (192.168.1.0/24) elsewhere.
  EXPECT_EQ(Count(r, Severity::kError, "nic", "", "different subnets (192.168.1.0/24: h20-node01"),
            1u);
  EXPECT_EQ(Count(r, Severity::kWarning, "nic", "h20-node03", "the management port"), 1u);
  // NCCL_IB_HCA=mlx5 also selects mlx5_0, the management port's HCA.
  EXPECT_EQ(Count(r, Severity::kWarning, "rdma", "h20-node03",
                  "also selects mlx5_0 (eth0, the management port)"),
            1u);
  EXPECT_EQ(r.nodes[2].socket.interfaces, std::vector<std::string>{"eth0"});
  EXPECT_EQ(r.nodes[2].hca.ports.size(), 5u);  // mlx5_0 ... mlx5_4
}

TEST(PreflightScenarios, MissingRdmaDevice) {
  const auto r = RunScenario("missing-rdma", {"h20-node01", "h20-node02"});
  EXPECT_EQ(Count(r, Severity::kError, "rdma", "h20-node02",
                  "3 RDMA ports in use, other nodes use 4: missing mlx5_4:1 (down: mlx5_4:1)"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
}

TEST(PreflightScenarios, DriverTooOldForVllm) {
  const auto r = RunScenario("old-driver-vllm", {"h20-node01", "h20-node02"});
  EXPECT_EQ(Count(r, Severity::kError, "cuda-compat", "h20-node01",
                  "vllm 0.20.1 needs CUDA 12.9 or 13.0; driver 570.133.20 supports CUDA 12.8"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "cuda-compat", "h20-node02",
                  "torch 2.11.0+cu129 is built for CUDA 12.9"),
            1u);
}

TEST(PreflightScenarios, MsSwiftDefaultTimeout) {
  const auto r =
      RunScenario("clean-5node", {"h20-node01"}, "megatron sft --model Qwen/Qwen3.6-35B-A3B");
  ASSERT_TRUE(r.timeout.has_value());
  EXPECT_EQ(r.timeout->framework, "ms-swift");
  EXPECT_DOUBLE_EQ(r.timeout->collective_timeout.s(), 18000000);
  // NCCL_IB_TIMEOUT 20, NCCL_IB_RETRY_CNT 7 (defaults): 4.096 us x 2^20 x 8 = 34.36 s.
  EXPECT_NEAR(r.timeout->ib_retry_window.s(), 4.096e-6 * 1048576 * 8, 1e-9);
  EXPECT_EQ(Count(r, Severity::kWarning, "timeout", "", "the collective timeout is"), 1u)
      << Dump(r);
  const auto set = RunScenario("clean-5node", {"h20-node01"}, "megatron sft --ddp_timeout 1800");
  EXPECT_TRUE(set.findings.empty()) << Dump(set);
}

// A node without nvidia-smi was "no error in what was read", exit 0: its GPUs were never checked.
TEST(PreflightScenarios, NodeWithoutNvidiaSmiIsAnError) {
  const auto r = RunScenario("no-nvidia-smi", {"h20-node01", "h20-node02"});
  EXPECT_EQ(Count(r, Severity::kError, "gpu-evidence", "h20-node02",
                  "no GPU list (the collector noted \"gpus.csv: nvidia-smi not found on PATH\")"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-evidence", "h20-node01"), 0u) << Dump(r);
}

// audit25 F3: the clean cluster with GPUs 4-7 gone from h20-node03's nvidia-smi list (what it
// prints after an Xid 79, GPUs fallen off the bus) was "ready to launch". The other four nodes
// list 8 GPUs each, so 8 is expected and node03 is short of GPUs 4, 5, 6 and 7; with only GPU 7
// gone, of GPU 7. Given --gpus-per-node the expected count is the job's, named as such.
TEST(PreflightScenarios, NodeShortOfGpusIsAnError) {
  const std::vector<std::string> hosts = {"h20-node01", "h20-node02", "h20-node03", "h20-node04",
                                          "h20-node05"};
  std::vector<NodeState> nodes;
  for (const std::string& h : hosts) {
    auto n = LoadNodeState(testing::TestPath("golden/preflight/clean-5node/" + h));
    ASSERT_TRUE(n.ok()) << n.error().Format();
    nodes.push_back(*n);
  }
  auto rules = LoadRules();
  auto compat = LoadCudaCompat();
  auto timeouts = hang::LoadFrameworkTimeouts();
  ASSERT_TRUE(rules.ok() && compat.ok() && timeouts.ok());
  auto drop_from = [](NodeState& node, int64_t first) {
    std::erase_if(node.gpus, [&](const GpuRow& g) { return g.index >= first; });
  };
  std::vector<NodeState> four = nodes;
  ASSERT_EQ(four[2].gpus.size(), 8u);
  drop_from(four[2], 4);
  auto r = RunPreflight(four, *rules, *compat, *timeouts, PreflightOptions{});
  EXPECT_EQ(Count(r, Severity::kError, "gpu-count", "h20-node03",
                  "4 GPUs visible to nvidia-smi, the other nodes have 8: GPU 4, 5, 6, 7 missing"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  std::vector<NodeState> seven = nodes;
  drop_from(seven[2], 7);
  r = RunPreflight(seven, *rules, *compat, *timeouts, PreflightOptions{});
  EXPECT_EQ(Count(r, Severity::kError, "gpu-count", "h20-node03",
                  "7 GPUs visible to nvidia-smi, the other nodes have 8: GPU 7 missing"),
            1u)
      << Dump(r);
  // One node alone has no other to compare with: the job's count is the expected one.
  std::vector<NodeState> one = {four[2]};
  PreflightOptions eight;
  eight.gpus_per_node = 8;
  r = RunPreflight(one, *rules, *compat, *timeouts, eight);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-count", "h20-node03",
                  "4 GPUs visible to nvidia-smi, the job expects 8 per node (--gpus-per-node)"),
            1u)
      << Dump(r);
  r = RunPreflight(nodes, *rules, *compat, *timeouts, eight);
  EXPECT_TRUE(r.findings.empty()) << Dump(r);
}

// The clean cluster's five nodes. Their ibdev2netdev: mlx5_0 port 1 ==> eth0 (the default
// route: the management port), mlx5_1..4 ==> ens1np0..ens4np0 (the 200 Gb/s data NICs).
std::vector<NodeState> CleanNodes() {
  std::vector<NodeState> nodes;
  for (const char* h : {"h20-node01", "h20-node02", "h20-node03", "h20-node04", "h20-node05"}) {
    auto n = LoadNodeState(testing::TestPath(std::string("golden/preflight/clean-5node/") + h));
    EXPECT_TRUE(n.ok()) << n.error().Format();
    nodes.push_back(*n);
  }
  return nodes;
}

// The clean cluster with one variable set (or its spelling changed) on the nodes `on`, in both
// shells.
std::vector<NodeState> CleanWith(const std::string& key, const std::string& value,
                                 const std::vector<size_t>& on = {0, 1, 2, 3, 4}) {
  std::vector<NodeState> nodes = CleanNodes();
  for (size_t i : on) {
    for (ShellEnv& shell : nodes[i].shells) {
      ShellVar& var = shell.vars[key];
      var.value = value;
      if (var.file.empty()) var.file = "/etc/bash.bashrc";  // a variable the nodes did not set
    }
  }
  return nodes;
}

PreflightReport RunNodes(const std::vector<NodeState>& nodes) {
  auto rules = LoadRules();
  auto compat = LoadCudaCompat();
  auto timeouts = hang::LoadFrameworkTimeouts();
  EXPECT_TRUE(rules.ok() && compat.ok() && timeouts.ok());
  return RunPreflight(nodes, *rules, *compat, *timeouts, PreflightOptions{});
}

// NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3 on every node (the data list shifted by one): NCCL
// takes exactly those four, so its channels run over mlx5_0 (eth0, 25 Gb/s) and never over
// mlx5_4 (ens4np0). Before: "0 errors, 0 warnings: ready to launch", as the management-port
// check ran only with NCCL_IB_HCA unset and the exact list was only checked for devices that
// do not exist.
TEST(PreflightScenarios, ExactHcaListNamingTheManagementPortAndDroppingADataNic) {
  const auto r = RunNodes(CleanWith("NCCL_IB_HCA", "=mlx5_0,mlx5_1,mlx5_2,mlx5_3"));
  EXPECT_EQ(Count(r, Severity::kError, "rdma", "h20-node03",
                  "names mlx5_0 (eth0, the management port's HCA): NCCL will send data over "
                  "mlx5_0:1"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "rdma", "h20-node03",
                  "leaves out the active data port mlx5_4:1 (ens4np0)"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 5u) << Dump(r);
}

// NCCL_SOCKET_IFNAME=ens1np0 on node02, ==ens1np0 elsewhere: the prefix ens1np0 matches only
// ens1np0 on these nodes (ip-addr.json: lo, eth0, ens1np0..ens4np0, docker0), the exact form
// the same. A warning that the spellings differ, not an error. Before: "differs across nodes"
// as an error (exit 1). A value that selects something else is still an error.
TEST(PreflightScenarios, TwoSpellingsOfOneSocketInterfaceAreAWarning) {
  auto r = RunNodes(CleanWith("NCCL_SOCKET_IFNAME", "ens1np0", {1}));
  EXPECT_EQ(r.Count(Severity::kError), 0u) << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "env-divergence", "",
                  "but selects the same interface ens1np0 on every node"),
            1u)
      << Dump(r);
  r = RunNodes(CleanWith("NCCL_SOCKET_IFNAME", "ens2np0", {1}));
  EXPECT_EQ(Count(r, Severity::kError, "env-divergence", "", "NCCL_SOCKET_IFNAME differs"), 1u)
      << Dump(r);
}

// audit52 K9: the clean cluster with GPU 3 of h20-node04 as nvidia-smi prints a GPU whose NVML
// queries fail (the audit's rows, cases5/pf-err and pf-lost, query as in collect --node-state).
// Every field but index, uuid (and name) is the bracketed NVML error string; the parser read them
// as "no value", so the GPU counted as present and clean: "0 errors, 0 warnings: ready to
// launch". NVML_ERROR_RESET_REQUIRED and NVML_ERROR_GPU_IS_LOST mean the GPU cannot be used
// until a reset (resp. a reboot): one error on that node, naming the GPU and the fields. A field
// that fails with "[Unknown Error]" alone was not checked: a warning.
TEST(PreflightScenarios, GpuThatNvidiaSmiCannotQueryIsAnError) {
  const std::string header =
      "index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
      "clocks_throttle_reasons.active, ecc.errors.uncorrected.volatile.total, "
      "retired_pages.pending\n";
  auto with_gpu3 = [&](const std::string& row) {
    std::vector<NodeState> nodes = CleanNodes();
    auto parsed = ParseGpuCsv(header + row, "gpus.csv");
    EXPECT_TRUE(parsed.ok()) << parsed.error().Format();
    EXPECT_EQ(nodes[3].gpus.at(3).index, 3);
    nodes[3].gpus[3] = parsed->at(0);
    return RunNodes(nodes);
  };
  auto r = with_gpu3(
      "3, GPU-043f1a2b7c-0d4e-5f60-7182-93a4b5c6d7e3, NVIDIA H20, [GPU requires reset], [GPU "
      "requires reset], [GPU requires reset], [GPU requires reset], [GPU requires reset], [GPU "
      "requires reset]\n");
  EXPECT_EQ(Count(r, Severity::kError, "gpu-state", "h20-node04",
                  "GPU 3: nvidia-smi lists it but cannot query it ([GPU requires reset] for "
                  "clocks_throttle_reasons.active, ecc.errors.uncorrected.volatile.total, "
                  "memory.total, memory.used, retired_pages.pending, utilization.gpu): NVML says "
                  "the GPU requires a reset"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  r = with_gpu3(
      "3, GPU-043f1a2b7c-0d4e-5f60-7182-93a4b5c6d7e3, [Unknown Error], [GPU is lost], [GPU is "
      "lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost]\n");
  EXPECT_EQ(Count(r, Severity::kError, "gpu-state", "h20-node04",
                  "[GPU is lost] for clocks_throttle_reasons.active, "
                  "ecc.errors.uncorrected.volatile.total, memory.total, memory.used, "
                  "retired_pages.pending, utilization.gpu; [Unknown Error] for name): NVML cannot "
                  "reach the GPU"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  r = with_gpu3(
      "3, GPU-043f1a2b7c-0d4e-5f60-7182-93a4b5c6d7e3, NVIDIA H20, 28 MiB, 97871 MiB, 0 %, "
      "[Unknown Error], 0, No\n");
  EXPECT_EQ(r.Count(Severity::kError), 0u) << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "gpu-state", "h20-node04",
                  "GPU 3: nvidia-smi could not read [Unknown Error] for "
                  "clocks_throttle_reasons.active"),
            1u)
      << Dump(r);
}

// audit52 K1 (cases5/pf-xid): h20-node03 of the clean cluster with two kernel lines, Xid 95
// (uncontained ECC error) and Xid 48 (double-bit ECC error) on PCI 0000:9d:00, and GPU 5 with 2
// uncorrected ECC errors and retired pages pending. Before: four warnings, "0 errors: ready to
// launch". NVIDIA's Xid catalog gives 95 the immediate action RESET_GPU and 48 its DBE workflow
// (a reset retires the page); NVML says pages pending retirement need a reboot to retire: three
// errors. The uncorrected count alone stays a warning (a contained error needs no reset on
// A100 and later), and so does an application Xid such as 13 (RESTART_APP).
TEST(PreflightScenarios, XidsThatNeedAResetAreErrors) {
  std::vector<NodeState> nodes = CleanNodes();
  NodeState& node03 = nodes[2];
  node03.xids = ParseXidLines(
      "[Tue May 12 02:41:17 2026] NVRM: Xid (PCI:0000:9d:00): 95, pid=184213, name=python3, "
      "Uncontained: FBHUB. RST: Yes, D-RST: No\n"
      "[Tue May 12 02:41:17 2026] NVRM: Xid (PCI:0000:9d:00): 48, pid=184213, name=python3, An "
      "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
      "partition 6, subpartition 0.\n"
      "[Tue May 12 02:40:02 2026] NVRM: Xid (PCI:0000:9d:00): 13, pid=184213, name=python3, "
      "Graphics Exception: ESR 0x504648=0x1000e\n");
  ASSERT_EQ(node03.xids.size(), 3u);
  ASSERT_EQ(node03.gpus.at(5).index, 5);
  node03.gpus[5].ecc_uncorrected = 2;
  node03.gpus[5].retired_pages_pending = true;
  const auto r = RunNodes(nodes);
  EXPECT_EQ(Count(r, Severity::kError, "xid", "h20-node03",
                  "Xid 95 on PCI:0000:9d:00: NVIDIA's Xid catalog: the GPU must be reset before "
                  "it is used again (RESET_GPU)"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "xid", "h20-node03",
                  "Xid 48 on PCI:0000:9d:00: an uncorrectable double-bit ECC error (DBE)"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "ecc", "h20-node03", "GPU 5: retired pages pending"), 1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "xid", "h20-node03", "Xid 13 on PCI:0000:9d:00"), 1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "ecc", "h20-node03",
                  "GPU 5: 2 uncorrected ECC errors since the last driver load"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 3u) << Dump(r);
  EXPECT_EQ(r.Count(Severity::kWarning), 2u) << Dump(r);
}

// audit56 Q5 (cases9/pf-xid154): Xid 154 is the driver announcing the recovery action the GPU
// now needs (NVML nvmlDeviceGpuRecoveryAction_t: 1 GPU reset, 2 node reboot); the action stays
// required until done. Before: two warnings, "0 errors: ready to launch". A change back to None
// (0x0) is no action: it stays a warning.
TEST(PreflightScenarios, XidRecoveryActionChangedIsAnError) {
  std::vector<NodeState> nodes = CleanNodes();
  nodes[1].xids = ParseXidLines(
      "[ 8123.456999] NVRM: Xid (PCI:0000:5d:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x2 (Node Reboot Required)\n"
      "[ 8124.100000] NVRM: Xid (PCI:0000:9d:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x1 (GPU Reset Required)\n"
      "[ 9000.000000] NVRM: Xid (PCI:0000:ab:00): 154, GPU recovery action changed from 0x1 (GPU "
      "Reset Required) to 0x0 (None)\n");
  ASSERT_EQ(nodes[1].xids.size(), 3u);
  const auto r = RunNodes(nodes);
  EXPECT_EQ(Count(r, Severity::kError, "xid", "h20-node02", "Xid 154 on PCI:0000:5d:00"), 1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "xid", "h20-node02", "Xid 154 on PCI:0000:9d:00"), 1u);
  EXPECT_EQ(Count(r, Severity::kWarning, "xid", "h20-node02", "Xid 154 on PCI:0000:ab:00"), 1u);
  EXPECT_EQ(r.Count(Severity::kError), 2u) << Dump(r);
}

// audit56 Q6: A100 and later GPUs repair memory by remapping rows (their retired_pages.* read
// [N/A]), so the retired-pages check could never fire on them. NVML nvmlDeviceGetRemappedRows: a
// pending remap needs a GPU reset to take effect; a failed one is an RMA condition (NVIDIA's
// memory error management guide). The driver's recovery action (R575+) other than None is its
// own verdict that the GPU needs work. Each is one error on its node; the clean fixture's
// gpu-repair.csv (No, No, None) gives none.
TEST(PreflightScenarios, PendingOrFailedRowRemapAndRecoveryActionAreErrors) {
  std::vector<NodeState> nodes = CleanNodes();
  ASSERT_EQ(nodes[0].gpus.at(2).remap_pending, false);  // read from gpu-repair.csv
  ASSERT_EQ(nodes[0].gpus.at(2).recovery_action, "None");
  EXPECT_EQ(RunNodes(nodes).findings.size(), 0u);
  nodes[0].gpus[2].remap_pending = true;
  nodes[3].gpus[6].remap_failure = true;
  nodes[4].gpus[1].recovery_action = "Reset";
  const auto r = RunNodes(nodes);
  EXPECT_EQ(Count(r, Severity::kError, "ecc", "h20-node01", "GPU 2: a row remap is pending"), 1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kError, "ecc", "h20-node04", "GPU 6: a row remapping failed"), 1u);
  EXPECT_EQ(Count(r, Severity::kError, "gpu-state", "h20-node05",
                  "GPU 1: the driver's recovery action is \"Reset\""),
            1u);
  EXPECT_EQ(r.Count(Severity::kError), 3u) << Dump(r);
}

// audit56 Q2 (cases9/pf-cvd): CUDA_VISIBLE_DEVICES=0,1,2,3 exported by /etc/bash.bashrc on 8-GPU
// nodes: every job started over ssh/srun sees 4 GPUs, and torchrun's local ranks 4-7 fail with
// "invalid device ordinal", while nvidia-smi lists 8. Before: "ready to launch" (the variable is
// left out of the cross-node comparison on purpose, and nothing else read it). One error per
// node that has it; a full list (0-7) is no finding.
TEST(PreflightScenarios, VisibleDevicesFromAShellFileHidingGpusIsAnError) {
  auto r = RunNodes(CleanWith("CUDA_VISIBLE_DEVICES", "0,1,2,3", {1}));
  EXPECT_EQ(Count(r, Severity::kError, "visible-devices", "h20-node02",
                  "CUDA_VISIBLE_DEVICES=0,1,2,3 (set by /etc/bash.bashrc) shows 4 of the node's "
                  "8 GPUs"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  r = RunNodes(CleanWith("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"));
  EXPECT_EQ(r.Count(Severity::kError), 0u) << Dump(r);
  // "-1" hides every GPU (CUDA stops at the first invalid entry).
  r = RunNodes(CleanWith("CUDA_VISIBLE_DEVICES", "-1", {0}));
  EXPECT_EQ(Count(r, Severity::kError, "visible-devices", "h20-node01", "shows 0 of the node's 8"),
            1u)
      << Dump(r);
}

// audit56 Q8 (cases9/pf-rate): h20-node02's mlx5_3 links at 25 Gb/s (Active, LinkUp) with another
// firmware, the other data ports at 200 Gb/s. NCCL spreads its channels over the four ports, so
// the rings through mlx5_3 run at 25 of 200 Gb/s. Before: ibstat.txt was collected and never
// read: "ready to launch". After: one error for the slow port, one warning for the firmware.
TEST(PreflightScenarios, SlowDataPortAndFirmwareDifferenceFromIbstat) {
  std::vector<NodeState> nodes = CleanNodes();
  ASSERT_EQ(nodes[1].ibstat.size(), 5u);
  IbstatCa& ca = nodes[1].ibstat[3];
  ASSERT_EQ(ca.device, "mlx5_3");
  ca.ports.at(0).rate_gbps = 25;
  ca.firmware = "22.31.1014";
  const auto r = RunNodes(nodes);
  EXPECT_EQ(Count(r, Severity::kError, "rdma", "h20-node02",
                  "mlx5_3:1 runs at 25 Gb/s where the fastest port NCCL uses runs at 200 Gb/s"),
            1u)
      << Dump(r);
  EXPECT_EQ(Count(r, Severity::kWarning, "rdma", "",
                  "run different firmware: 22.31.1014 on h20-node02 mlx5_3; 28.39.2048 on the "
                  "other 19 ports"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  EXPECT_EQ(r.Count(Severity::kWarning), 1u) << Dump(r);
}

// audit56 Q9: NCCL reads $NCCL_CONF_FILE (else ~/.nccl.conf) before /etc/nccl.conf, and the
// environment before both (nccl src/misc/param.cc initEnvFunc; setenv without overwrite). A
// NCCL_IB_DISABLE=1 in the user's file reaches NCCL, so it is the same error as in the
// environment, naming the file; a NCCL_CONF_FILE whose file was not collected is said.
TEST(PreflightScenarios, UserNcclConfFileIsApplied) {
  std::vector<NodeState> nodes = CleanNodes();
  nodes[2].user_nccl_conf = {{"NCCL_IB_DISABLE", "1"}};
  nodes[2].user_nccl_conf_path = "/home/alice/.nccl.conf";
  auto r = RunNodes(nodes);
  EXPECT_EQ(Count(r, Severity::kError, "dangerous-setting", "h20-node03",
                  "NCCL_IB_DISABLE=1 (set by /home/alice/.nccl.conf)"),
            1u)
      << Dump(r);
  r = RunNodes(CleanWith("NCCL_CONF_FILE", "/shared/team/nccl-tuning.conf", {0}));
  EXPECT_EQ(Count(r, Severity::kWarning, "env-file", "h20-node01",
                  "NCCL_CONF_FILE=/shared/team/nccl-tuning.conf (set by /etc/bash.bashrc): the "
                  "file is not in the bundle"),
            1u)
      << Dump(r);
}

// The Xid rules are data with a source each; a code in two rules would make the judgement
// depend on their order, so the loader refuses it.
TEST(PreflightRules, XidRulesLoadWithSources) {
  auto rules = LoadRules();
  ASSERT_TRUE(rules.ok()) << rules.error().Format();
  for (int64_t code : {46, 48, 62, 64, 79, 95, 119, 120}) {
    const XidRule* rule = rules->XidRuleFor(code);
    ASSERT_NE(rule, nullptr) << code;
    EXPECT_EQ(rule->severity, Severity::kError) << code;
    EXPECT_FALSE(rule->source.empty()) << code;
  }
  for (int64_t code : {13, 31, 43, 45, 63, 74, 92, 94}) {
    EXPECT_EQ(rules->XidRuleFor(code), nullptr) << code;
  }
}

// audit52 K4 (cases5/pf-NCCL_NET, pf-NCCL_P2P_LEVEL): the clean cluster with NCCL_NET=Socket,
// resp. NCCL_P2P_LEVEL=LOC, in both shells of every node. NCCL docs (env.html): NCCL_NET's
// internal modules are "IB" and "Socket" (TCP/IP sockets), so Socket is NCCL_IB_DISABLE=1 under
// another name; NCCL_P2P_LEVEL LOC (or 0) is "Never use P2P (always disabled)", i.e.
// NCCL_P2P_DISABLE=1. Both were "0 errors, 0 warnings: ready to launch", and with NCCL_NET=Socket
// the RDMA ports were still listed as NCCL's. Now each is the error its twin is, once, on every
// node, and no RDMA port is NCCL's.
TEST(PreflightScenarios, OtherNamesForNoRdmaAndNoP2pAreErrors) {
  const std::string all = "h20-node01, h20-node02, h20-node03, h20-node04, h20-node05";
  auto r = RunNodes(CleanWith("NCCL_NET", "Socket"));
  EXPECT_EQ(Count(r, Severity::kError, "dangerous-setting", "",
                  "NCCL_NET=Socket (set by /etc/bash.bashrc) on " + all +
                      ": NCCL's socket network module: no RDMA"),
            1u)
      << Dump(r);
  EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  ASSERT_EQ(r.nodes.size(), 5u);
  for (const auto& n : r.nodes) {
    EXPECT_TRUE(n.hca.disabled) << n.host;
    EXPECT_TRUE(n.hca.ports.empty()) << n.host;
  }
  r = RunNodes(CleanWith("NCCL_NET", "socket"));
  EXPECT_EQ(Count(r, Severity::kError, "dangerous-setting", "", "NCCL_NET=socket"), 1u) << Dump(r);
  r = RunNodes(CleanWith("NCCL_NET", "IB"));
  EXPECT_EQ(r.Count(Severity::kError), 0u) << Dump(r);
  for (const char* level : {"LOC", "0"}) {
    r = RunNodes(CleanWith("NCCL_P2P_LEVEL", level));
    EXPECT_EQ(Count(r, Severity::kError, "dangerous-setting", "",
                    std::string("NCCL_P2P_LEVEL=") + level + " (set by /etc/bash.bashrc) on " +
                        all + ": P2P is never used"),
              1u)
        << Dump(r);
    EXPECT_EQ(r.Count(Severity::kError), 1u) << Dump(r);
  }
  r = RunNodes(CleanWith("NCCL_P2P_LEVEL", "NVL"));
  EXPECT_EQ(r.Count(Severity::kError), 0u) << Dump(r);
}

TEST(PreflightCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_preflight", 10); }
TEST(CheckpointCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_checkpoint", 5); }

}  // namespace
}  // namespace strata::preflight
