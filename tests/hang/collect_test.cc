// `strata collect` against a fake /proc tree and tests/fixtures/fake-py-spy on PATH. The fake
// pids are above Linux's largest pid (2^22), so even the CLI's real SIGCONT reaches no process.
#include "strata/hang/collect/collect.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "support/golden.h"

namespace strata::hang {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kHealthy = 9000100;  // rank 0: py-spy prints a dump
constexpr int64_t kHung = 9000200;     // rank 1: py-spy never returns
constexpr int64_t kGone = 9000300;     // rank 2: py-spy finds no process
constexpr int64_t kNotTrainer = 9000400;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string Nul(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += p + '\0';
  return out;
}

class CollectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt_pid("strata-collect-test-");
    fs::remove_all(root_);
    const std::string fr_prefix = (root_ / "fr" / "trace_").string();
    auto trainer = [&](int64_t pid, int rank) {
      const fs::path dir = root_ / "proc" / std::to_string(pid);
      Write(dir / "cmdline", Nul({"/usr/bin/python3", "-u", "train.py", "--ddp_timeout", "7200"}));
      Write(dir / "environ",
            Nul({"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
                 "WORLD_SIZE=4", "NCCL_SOCKET_IFNAME=eth0", "SECRET_TOKEN=x", "HOME=/home/alice",
                 "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=" + fr_prefix}));
      Write(dir / "status", "Name:\tpython3\nState:\tS (sleeping)\nTgid:\t1\n");
    };
    trainer(kHealthy, 0);
    trainer(kHung, 1);
    trainer(kGone, 2);
    Write(root_ / "proc" / std::to_string(kNotTrainer) / "cmdline", Nul({"vim", "notes.txt"}));
    Write(root_ / "proc" / std::to_string(kNotTrainer) / "environ", Nul({"HOME=/root"}));
    Write(root_ / "proc" / "self" / "cmdline", "ignored");
    Write(
        root_ / "dumps" / (std::to_string(kHealthy) + ".txt"),
        "Process 9000100: /usr/bin/python3 -u train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n"
        "Thread 9000100 (active): \"MainThread\"\n"
        "    all_reduce (torch/distributed/distributed_c10d.py:2806)\n    <module> (train.py:9)\n");
    fs::create_directories(root_ / "bin");
    fs::copy_file(testing::TestPath("fixtures/fake-py-spy"), root_ / "bin" / "py-spy");
    Write(root_ / "bin" / "nvidia-smi",
          "#!/bin/sh\necho 'pid, process_name, used_gpu_memory [MiB], gpu_uuid'\n"
          "echo '9000100, /usr/bin/python3, 81214 MiB, GPU-0'\n");
    fs::permissions(root_ / "bin" / "py-spy", fs::perms::owner_all);
    fs::permissions(root_ / "bin" / "nvidia-smi", fs::perms::owner_all);
    Write(fr_prefix + "0", "\x80\x02}q\x00.");
    std::string log;
    for (int i = 0; i < 2000; ++i) log += "[rank0]: step line " + std::to_string(i) + "\n";
    Write(root_ / "logs" / "rank0.log", log);
    ::setenv("FAKE_PYSPY_DIR", (root_ / "dumps").c_str(), 1);
    ::setenv("FAKE_PYSPY_HANG_PID", std::to_string(kHung).c_str(), 1);
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::string fmt_pid(const char* prefix) { return prefix + std::to_string(::getpid()); }

  CollectOptions Options() {
    CollectOptions o;
    o.out_dir = (root_ / "out").string();
    o.host = "node-a";
    o.proc_root = (root_ / "proc").string();
    o.path = (root_ / "bin").string();
    o.logs = {(root_ / "logs" / "rank0.log").string()};
    o.log_tail = Bytes::KiB(1);
    o.pyspy_timeout = Seconds::Ms(500);
    o.time_utc = "2026-01-01T00:00:00Z";
    o.resume = [this](int64_t pid) { resumed_.insert(pid); };
    return o;
  }

  fs::path root_;
  std::multiset<int64_t> resumed_;
};

TEST_F(CollectTest, WritesABundleAndResumesEveryTrainerExactlyOnce) {
  auto result = Collect(Options());
  ASSERT_TRUE(result.ok()) << result.error().Format();
  EXPECT_EQ(result->bundle_dir, (root_ / "out" / "node-a").string());
  const Manifest& m = result->manifest;
  ASSERT_EQ(m.processes.size(), 3u);  // the editor has no RANK: not a trainer
  EXPECT_EQ(m.processes[0].pid, kHealthy);
  EXPECT_EQ(m.processes[0].rank, 0);
  EXPECT_EQ(m.processes[0].world_size, 4);
  EXPECT_EQ(m.processes[0].cmdline, "/usr/bin/python3 -u train.py --ddp_timeout 7200");
  EXPECT_EQ(m.processes[0].state, "S (sleeping)");
  EXPECT_EQ(m.processes[0].env.count("SECRET_TOKEN"), 0u);  // only NCCL/torch/launcher variables
  EXPECT_EQ(m.processes[0].env.count("HOME"),
            0u);  // read for torch's default dump path, not copied
  EXPECT_EQ(m.processes[0].env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(m.processes[0].pyspy_exit_code, 0);
  EXPECT_FALSE(m.processes[0].pyspy_timed_out);
  EXPECT_TRUE(m.processes[1].pyspy_timed_out);   // killed after 500 ms
  EXPECT_EQ(m.processes[2].pyspy_exit_code, 1);  // py-spy's own failure
  EXPECT_EQ(resumed_, (std::multiset<int64_t>{kHealthy, kHung, kGone}));
  ASSERT_EQ(m.processes[0].fr_files.size(), 1u);
  EXPECT_EQ(m.processes[0].fr_files[0], "fr/trace_0");
  EXPECT_EQ(m.nvidia_smi_file, "nvidia-smi.csv");
  ASSERT_EQ(m.logs.size(), 1u);
  EXPECT_TRUE(m.logs[0].truncated);
  EXPECT_EQ(m.logs[0].rank, 0);
  // Nothing else but the bundle is left in --out (the staging directory was renamed).
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(root_ / "out")) entries += e.is_directory() ? 1u : 0u;
  EXPECT_EQ(entries, 1u);

  // The bundle reads back, and the analysis sees the three processes as written.
  auto evidence = LoadEvidence({result->bundle_dir});
  ASSERT_TRUE(evidence.ok());
  const Verdict v = Analyze(*evidence, {});
  EXPECT_EQ(v.dead, std::vector<int64_t>{2});     // "process gone"
  EXPECT_EQ(v.missing, std::vector<int64_t>{3});  // WORLD_SIZE=4, rank 3 on no node
  EXPECT_EQ(v.ranks_seen, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(v.no_stack, std::vector<int64_t>{1});  // its py-spy timed out: an empty file
  EXPECT_EQ(evidence->gpu_apps.size(), 1u);        // the fake nvidia-smi printed one row
}

TEST_F(CollectTest, RefusesToOverwriteAnExistingBundle) {
  ASSERT_TRUE(Collect(Options()).ok());
  auto again = Collect(Options());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().Format(),
            (root_ / "out" / "node-a").string() +
                ": a bundle for this host already exists\n  hint: remove it, or "
                "pass another --out (e.g. one per collection time)");
}

TEST_F(CollectTest, WithoutPySpyTheBundleSaysSo) {
  CollectOptions o = Options();
  o.path = (root_ / "nowhere").string();
  auto result = Collect(o);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(resumed_.empty());  // no py-spy ran, so no trainer was stopped or resumed
  ASSERT_FALSE(result->manifest.notes.empty());
  EXPECT_EQ(result->manifest.notes[0],
            "py-spy not found on PATH: no stacks collected (pip install py-spy)");
}

TEST_F(CollectTest, CliPrintsASummaryAndExitsZero) {
  fs::create_directories(root_ / "cli-out");
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ((root_ / "bin").string() + ":" + old_path).c_str(), 1);
  const auto r =
      testing::RunCli({"collect", "--out", (root_ / "cli-out").string(), "--host", "node-b",
                       "--proc-root", (root_ / "proc").string(), "--timeout", "500ms"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, (root_ / "cli-out" / "node-b").string() +
                       ": 3 trainer processes (ranks 0-2); py-spy: 1 ok, 1 timed out, 1 failed; "
                       "nvidia-smi: yes; flight-recorder dumps: 1; log tails: 0\n");
  ::setenv("PATH", old_path.c_str(), 1);
  const auto bad = testing::RunCli({"collect", "--out", "x", "--timeout", "10"});
  EXPECT_EQ(bad.exit_code, 2);  // a bare number has no unit
}

TEST_F(CollectTest, OutIntoAMissingDirectoryIsAnErrorNotASilentMkdir) {
  CollectOptions o = Options();
  o.out_dir = (root_ / "typo" / "out").string();
  auto result = Collect(o);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().Format(),
            o.out_dir +
                ": the output directory does not exist\n  hint: create it first "
                "(mkdir -p " +
                o.out_dir + "), or pass an existing --out");
  EXPECT_FALSE(fs::exists(root_ / "typo"));
}

TEST_F(CollectTest, AnUnreadableEnvironIsNotBlamedOnPermissionsWhenRunningAsRoot) {
  // A process listed but gone before its environ was read: cmdline without environ.
  Write(root_ / "proc" / "9000500" / "cmdline", Nul({"/usr/bin/python3", "train.py"}));
  auto result = Collect(Options());
  ASSERT_TRUE(result.ok()) << result.error().Format();
  std::string note;
  for (const std::string& n : result->manifest.notes) {
    if (n.find("environ could not be read") != std::string::npos) note = n;
  }
  ASSERT_FALSE(note.empty());
  if (::geteuid() == 0) {
    EXPECT_EQ(note,
              "1 processes' environ could not be read (they exited while being listed, or are "
              "zombies or kernel threads)");
  } else {
    EXPECT_NE(note.find("another user's"), std::string::npos) << note;
  }
}

// Real processes: a trainer stand-in with RANK=7 that forks two children (as DataLoader workers
// are forked), all three carrying RANK=7 and the marker on their command lines. Only the parent
// is collected, into one file; the children are named in a note.
TEST_F(CollectTest, ProcessesSharingARankAreCollectedOnceAsTheirParent) {
  const std::string marker = "strata-shared-rank-" + std::to_string(::getpid());
  const pid_t trainer = ::fork();
  ASSERT_GE(trainer, 0);
  if (trainer == 0) {
    ::setpgid(0, 0);
    ::setenv("RANK", "7", 1);
    ::execl("/bin/sh", "sh", "-c",
            "sh -c 'sleep 30; true' \"$0\" & sh -c 'sleep 30; true' \"$0\" & wait", marker.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (at most 5 s) until both children exist: the parent and its two children carry the
  // marker, seen twice in a row. A process forked but not yet exec'd still shows its parent's
  // command line, so a single scan can count a fourth for a moment (seen under load).
  size_t seen = 0;
  for (int i = 0, stable = 0; i < 500 && stable < 2; ++i) {
    seen = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::ifstream in(e.path() / "cmdline", std::ios::binary);
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find(marker) != std::string::npos) ++seen;
    }
    stable = seen == 3 ? stable + 1 : 0;
    if (stable < 2) ::usleep(10000);
  }
  CollectOptions o = Options();
  o.proc_root = "/proc";
  o.match = marker;
  o.path = (root_ / "nowhere").string();  // no py-spy: nothing is signalled
  o.logs.clear();
  auto result = Collect(o);
  ::kill(-trainer, SIGKILL);
  int status = 0;
  ::waitpid(trainer, &status, 0);
  ASSERT_EQ(seen, 3u) << "the forked children did not start";
  ASSERT_TRUE(result.ok()) << result.error().Format();
  const Manifest& m = result->manifest;
  ASSERT_EQ(m.processes.size(), 1u);
  EXPECT_EQ(m.processes[0].pid, trainer);
  EXPECT_EQ(m.processes[0].rank, 7);
  bool named = false;
  for (const std::string& n : m.notes)
    named = named || n.find("3 processes share RANK=7") != std::string::npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace strata::hang
